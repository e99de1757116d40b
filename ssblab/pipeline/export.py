"""``ssblab export --format parquet``: a source verified and written as a Parquet dataset, on either engine.

Strategy: the engine builds the tables (`ssblab.pipeline.local.build_tables`, or the Spark transforms of
`ssblab.pipeline.spark`: ``messages`` written first, every other table derived from the written ``messages``, so
verification runs once) and writes each with the layout its queries want (`tables.LAYOUT`). Everything is written
into a hidden sibling folder; Spark's bookkeeping files (``_SUCCESS``, ``.crc``) are removed, so each table folder
holds only Parquet files (pandas and Polars open it directly); only when every table and the manifest
(``_ssblab_dataset.json``: version, row counts, columns) are complete is the folder renamed to the destination.

Invariants:
- atomic: a crashed export leaves the previous dataset (or nothing) at the destination, plus at most a hidden
  ``.NAME.tmp-*`` folder; a folder without the manifest is never a complete dataset;
- idempotent: exporting the same source again yields the same rows in the same order within each table;
- the same on both engines: the same tables, columns and rows (tests/pipeline/test_local.py);
- never deletes what it did not write: an existing destination is replaced only if it holds our manifest or is
  empty; it is never the source or inside it.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab import __version__
from ssblab.core.errors import SsbError
from ssblab.core.message import hmac_key_bytes
from ssblab.core.schema import DATASET_VERSION, TABLES
from ssblab.pipeline import local
from ssblab.pipeline.engines import Engine, SparkEngine, resolve_engine
from ssblab.pipeline.sources import held_blobs, resolve_source
from ssblab.pipeline.splits import SPLIT_BYTES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["MANIFEST", "ExportError", "ExportSummary", "export_dataset", "export_parquet", "local_tables",
           "write_tables"]

MANIFEST = "_ssblab_dataset.json"
_SPARK_LEFTOVERS = ("_SUCCESS", "._SUCCESS.crc")


class ExportError(SsbError):
    code = "export"


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    rows: dict[str, int]
    bytes: int
    engine: str


def export_dataset(source: str | Path, out: str | Path, *, engine: str | Engine | None = None,
                   spark: SparkSession | None = None, master: str | None = None, hmac_key: Any = None,
                   strict: bool = False, split_bytes: int | None = None, progress: bool | None = None,
                   on_records: Callable[[int], None] | None = None) -> ExportSummary:
    """Verify ``source`` and write its dataset to ``out`` atomically, on the local engine or on Spark.

    Args:
        source: a JSONL file, a log.offset (or ssb-fixtures folder), a store folder, or an archive (an
            ``archive.json``, a folder written by ``ssblab archive build``, or a blob folder holding Bundles).
        out: the dataset folder (replaced if it holds an earlier dataset).
        engine: ``"local"`` or ``"spark"`` (default: Spark when ``spark`` or ``master`` is given).
        spark: a SparkSession to run on; master: a Spark master URL to start one on.
        hmac_key: a test network's HMAC key.
        strict: a message that breaks a strict JSON rule JS accepts (`ssblab.core.validate.Finding`) is invalid.
        split_bytes: bytes of source per task (default: Spark's 16 MiB; locally, as many splits as suit the
            cores, and none for a small source).
        progress: Spark's progress bar (None: when stderr is a terminal, or in a notebook).
        on_records: the local engine calls it with the records of each split as they are checked.

    Raises:
        ExportError: ``out`` exists and is not an ssblab dataset, or is the source or inside it.
        SourceError: ``source`` is nothing ssblab reads.

    Examples:
        >>> export_dataset("feeds.jsonl", "dataset").rows["messages"]  # doctest: +SKIP
        6000
    """
    where = resolve_source(source)[1]
    out = Path(out).absolute()
    _check_destination(out, where)
    chosen = resolve_engine(engine, spark=spark, master=master)
    if isinstance(chosen, SparkEngine):
        session = chosen.spark
        return _staged(out, source, chosen.name, lambda staging: _write_spark(
            session, where, staging, hmac_key, strict, split_bytes or SPLIT_BYTES, progress))
    found = local_tables(where, hmac_key=hmac_key, strict=strict, workers=chosen.workers, split_bytes=split_bytes,
                         on_records=on_records)
    return write_tables(found, out, source)


def local_tables(source: Path, *, hmac_key: Any = None, strict: bool = False, workers: int | None = None,
                 split_bytes: int | None = None, on_records: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Every table of a source, verified on the local engine, with the sizes of the blobs it holds
    (`export_dataset` says what the arguments mean)."""
    return local.build_tables(source, hmac_key=hmac_key_bytes(hmac_key), strict=strict, workers=workers,
                              held=held_blobs(source), split_bytes=split_bytes, on_records=on_records)


def write_tables(found: dict[str, Any], out: str | Path, source: str | Path) -> ExportSummary:
    """Write the local engine's tables of ``source`` (`local_tables`) as a dataset at ``out``, atomically.

    Raises:
        ExportError: as `export_dataset`.
    """
    import pyarrow.parquet as pq

    out = Path(out).absolute()
    _check_destination(out, resolve_source(source)[1])

    def write(staging: Path) -> dict[str, int]:
        for name, table in found.items():
            (staging / name).mkdir(parents=True)
            pq.write_table(local.sorted_table(name, table), staging / name / "part-00000.parquet",
                           compression="zstd")
        return {name: table.num_rows for name, table in found.items()}

    return _staged(out, source, "local", write)


def _staged(out: Path, source: str | Path, engine: str, write: Callable[[Path], dict[str, int]]) -> ExportSummary:
    """Run ``write`` into a hidden sibling of ``out`` (it returns the row counts), add the manifest, and rename
    the whole into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        counts = write(staging)
        _tidy(staging)
        manifest = {"format": "ssblab-dataset", "version": DATASET_VERSION, "ssblab": __version__,
                    "source": str(source), "engine": engine,
                    "tables": {name: {"rows": counts[name], "columns": [c.name for c in TABLES[name]]}
                               for name in TABLES}}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        _swap_in(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportSummary(out, counts, _folder_bytes(out), engine)


def export_parquet(spark: SparkSession, source: str | Path, out: str | Path, *, hmac_key: Any = None,
                   split_bytes: int | None = None, progress: bool | None = None) -> ExportSummary:
    """`export_dataset` on Spark (the pipeline's scale-out route)."""
    return export_dataset(source, out, engine=SparkEngine(spark), hmac_key=hmac_key, split_bytes=split_bytes,
                          progress=progress)


def _check_destination(out: Path, source: Path) -> None:
    if out == source or source in out.parents or out in source.parents:
        raise ExportError(f"{out}: the dataset cannot be written over or inside its source {source}")
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} exists and is not a folder: refusing to replace it")
    if out.exists() and not (out / MANIFEST).exists() and any(out.iterdir()):
        raise ExportError(f"{out} exists and is not an ssblab dataset: refusing to replace it")


def _tidy(staging: Path) -> None:
    """Remove what Hadoop's committers write beside the Parquet files (``_SUCCESS``, ``.*.crc``)."""
    for path in staging.rglob("*"):
        if path.name in _SPARK_LEFTOVERS or (path.name.startswith(".") and path.name.endswith(".crc")):
            path.unlink()


def _swap_in(staging: Path, out: Path) -> None:
    """Replace ``out`` by ``staging`` with renames (atomic on one file system)."""
    old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
    if out.exists():
        os.replace(out, old)
    os.replace(staging, out)
    shutil.rmtree(old, ignore_errors=True)


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


def _write_spark(spark: SparkSession, source: Path, staging: Path, hmac_key: Any, strict: bool, split_bytes: int,
                 progress: bool | None) -> dict[str, int]:
    from ssblab.pipeline import spark as frames
    from ssblab.pipeline import tables as catalog
    from ssblab.pipeline.progress import job_progress
    from ssblab.pipeline.session import sql_conf

    files = int(spark.conf.get("spark.sql.shuffle.partitions") or 2)

    def read(table: str) -> DataFrame:
        return spark.read.parquet(str(staging / table))

    # Spark writes timestamps as INT96 by default, which other readers see as nanoseconds without a zone.
    with sql_conf(spark, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}), \
            job_progress(spark, "exporting", enabled=progress) as rows_done:
        rows = frames.verdicts_of(spark, source, hmac_key=hmac_key, carry=catalog.CARRY, strict=strict,
                                  split_bytes=split_bytes, rows_done=rows_done)
        frames.write_table(frames.messages_table(rows), "messages", staging, files)
        for name in catalog.DERIVED:
            frames.write_table(frames.derived(read("messages"), name), name, staging, files)
        held = held_blobs(source)
        sizes = spark.createDataFrame(held, "blob string, size long") if held else None
        frames.write_table(frames.blobs(read("links"), sizes), "blobs", staging, files)
        frames.write_table(frames.follows(read("contacts")), "follows", staging, files)
        frames.write_table(frames.names(read("abouts")), "names", staging, files)
        return {name: read(name).count() for name in TABLES}
