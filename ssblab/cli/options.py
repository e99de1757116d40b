"""Options several verbs share, in a module light enough for any verb to import at start-up."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["SOURCES", "data_arguments", "dataset_of", "engine_arguments", "engine_of"]

# What every verb that reads messages accepts, named once for their help.
SOURCES = "a JSONL file, log.offset, ssb-fixtures folder, ssb-db2 folder or log.bipf, store or archive"


def data_arguments(parser: argparse.ArgumentParser) -> None:
    """``--data`` (a Parquet dataset, or any source, verified on the way in) and the engine, for the analysis
    verbs."""
    parser.add_argument("--data", type=Path, required=True,
                        help=f"a Parquet dataset, or {SOURCES} (verified on the way in, and kept in "
                             "~/.cache/ssblab for the next verb on the same bytes)")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="verify a source in memory and keep nothing")
    engine_arguments(parser)


def dataset_of(args: argparse.Namespace) -> Any:
    """The `ssblab.Dataset` that `data_arguments` name."""
    from ssblab.dataset import open_dataset

    return open_dataset(args.data, engine=engine_of(args), cache=args.cache)


def engine_arguments(parser: argparse.ArgumentParser, default: str = "local") -> None:
    """``--engine`` and ``--master``, for every verb that analyses or exports data."""
    other = "spark" if default == "local" else "local"
    what = {"local": "local: DuckDB, Arrow and scipy in this process, no Java", "spark": "spark: Spark and GraphFrames"}
    parser.add_argument("--engine", choices=["local", "spark"], default=None,
                        help=f"{what[default]} (the default); {what[other]}. Both give the same output.")
    parser.add_argument("--master", help="a Spark master URL (spark://HOST:7077); implies --engine spark")
    parser.set_defaults(default_engine=default)


def engine_of(args: argparse.Namespace) -> Any:
    """The engine the arguments ask for (`ssblab.pipeline.engines.resolve_engine`)."""
    from ssblab.pipeline.engines import EngineError, resolve_engine

    default = None if args.master else args.default_engine
    try:
        return resolve_engine(args.engine or default, master=args.master)
    except EngineError as exc:
        if args.engine or args.master:
            raise
        # Spark was only this verb's default (export): the local engine does the same work without Java.
        raise EngineError(f"{exc}; or add --engine local, which needs no Java") from exc
