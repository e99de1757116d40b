"""The data pipeline: sources -> splits -> facts -> verdicts -> tables, on the local engine or on Spark.

`ssblab.pipeline.sources` reads every format (one module each, in its ``READERS`` table); `splits` is the leaf they
share; `facts` checks each message alone, `verdicts` each feed's chain, `tables` declares every table of a dataset.
`local` and `spark` run those steps on their engine (`engines` picks one), and `verify` and `export` are the jobs
users run; `cache` keeps each source's verified dataset for the next analysis of the same bytes. Importing this
package imports neither pyspark nor its submodules: names resolve on first use, so ``python -m
ssblab.pipeline.graphframes_jar`` runs that module once, as ``__main__``.
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

_HOME = {
    **dict.fromkeys(["Engine", "EngineError", "LocalEngine", "SparkEngine", "resolve_engine"], "engines"),
    **dict.fromkeys(["ExportError", "ExportSummary", "export_dataset", "export_parquet"], "export"),
    **dict.fromkeys(["verify", "verify_local", "verify_path", "verify_spark"], "verify"),
    **dict.fromkeys(["SourceError", "plan_splits", "read_source", "resolve_source"], "sources"),
    **dict.fromkeys(["archive_messages", "raw_messages"], "spark"),
    **dict.fromkeys(["GraphFramesUnavailable", "connected_components", "graphframe", "spark_session"], "session"),
    **dict.fromkeys(["JarFetchError", "cached_jar", "ensure_jar"], "graphframes_jar"),
    "job_progress": "progress",
    **dict.fromkeys(["source_digest", "verified_dataset"], "cache"),
}

__all__ = sorted(_HOME)

__getattr__, __dir__ = lazy_names(__name__, _HOME)
