"""ssblab: a Jupyter-centred data-analysis and interop kit for Secure Scuttlebutt.

The top level is the thin waist (`ssblab.core`), plus the entry points of the data tools, which load on first use:
``import ssblab`` loads nothing heavier than the core. `open_dataset` opens any SSB data as tables and analyses
on the local engine or on Spark; `verify` checks any source; `export_dataset` writes a Parquet dataset. The other
layers are subpackages imported by name: `ssblab.store`, `ssblab.net`, `ssblab.generate`, `ssblab.graph`, …
"""

from __future__ import annotations

import importlib
from typing import Any

from ssblab import core
from ssblab.core import *  # noqa: F403  (the core's public names are the top-level API, listed once there)

__version__ = "0.1.0"

# The data tools' entry points: name -> the module that defines it (imported on first use).
_HOME = {
    "Dataset": "ssblab.dataset",
    "DatasetError": "ssblab.dataset",
    "open_dataset": "ssblab.dataset",
    "export_dataset": "ssblab.pipeline.export",
    "verify": "ssblab.pipeline.verify",
}

__all__ = [*core.__all__, *_HOME, "__version__"]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'ssblab' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
