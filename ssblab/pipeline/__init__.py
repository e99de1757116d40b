"""The Spark pipeline: one session factory and the GraphFrames entry point.

Importing this package imports neither pyspark (the ``spark`` extra) nor its submodules: names resolve on
first use, so ``python -m ssblab.pipeline.graphframes_jar`` runs that module once, as ``__main__``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "GraphFramesUnavailable",
    "JarFetchError",
    "archive_messages",
    "cached_jar",
    "connected_components",
    "ensure_jar",
    "export_parquet",
    "graphframe",
    "job_progress",
    "raw_messages",
    "spark_session",
    "verify_records",
    "verify_spark",
]

_HOME = {
    "GraphFramesUnavailable": "session",
    "connected_components": "session",
    "graphframe": "session",
    "spark_session": "session",
    "JarFetchError": "graphframes_jar",
    "cached_jar": "graphframes_jar",
    "ensure_jar": "graphframes_jar",
    "archive_messages": "archives",
    "export_parquet": "export",
    "job_progress": "progress",
    "raw_messages": "load",
    "verify_records": "verify",
    "verify_spark": "verify",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
