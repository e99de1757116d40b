"""``ssblab export --format parquet``: the verified messages and the derived tables as a Parquet dataset.

Strategy: verify with the content carried along (`verify.verdicts_of`; for an archive, `archives.archive_verdicts`,
which decodes the blocks straight to Arrow in the workers), write ``messages``, then derive every
other table from the written ``messages`` (so the expensive verification runs once) and write each with the
layout its queries want (`LAYOUT`). Everything is written into a hidden sibling folder; only when every table
and the manifest (``_ssblab_dataset.json``, with each table's row count) are complete is that folder renamed
to the destination.

Invariants:
- atomic: a crashed export leaves the previous dataset (or nothing) at the destination, plus at most a hidden
  ``.NAME.tmp-*`` folder; a folder without the manifest is never a complete dataset;
- idempotent: exporting the same source again yields the same rows in the same order within each table;
- never deletes what it did not write: an existing destination is replaced only if it holds our manifest or
  is empty.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.errors import SsbError
from ssblab.pipeline import tables
from ssblab.pipeline.load import SPLIT_BYTES, resolve_source
from ssblab.pipeline.progress import job_progress
from ssblab.pipeline.schema import TABLES
from ssblab.pipeline.verify import verdicts_of
from ssblab.store.blobs import BlobStore

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MANIFEST = "_ssblab_dataset.json"
DATASET_VERSION = 1
# How each table is laid out: hash-partitioned by a key into files and sorted within them, or globally sorted
# (range-partitioned, so Parquet row-group statistics prune range and key lookups).
LAYOUT: dict[str, tuple[str, tuple[str, ...]]] = {
    "messages": ("hash:author", ("author", "sequence")),  # feed scans and per-author joins
    "posts": ("sort", ("timestamp", "id")),  # activity over time
    "votes": ("sort", ("link", "timestamp", "id")),  # votes of a message
    "contacts": ("sort", ("author", "sequence", "contact")),  # follow graph replay, in feed order
    "abouts": ("sort", ("about", "timestamp", "id")),  # the latest name of a feed
    "links": ("sort", ("target", "id", "path")),  # backlinks of a ref
    "tangle_edges": ("sort", ("root", "timestamp", "id", "parent")),  # a thread's edges
    "blobs": ("sort", ("blob",)),
}


class ExportError(SsbError):
    code = "export"


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    rows: dict[str, int]
    bytes: int


def _laid_out(df: DataFrame, table: str, files: int) -> DataFrame:
    how, keys = LAYOUT[table]
    if how.startswith("hash:"):
        return df.repartition(files, how.split(":", 1)[1]).sortWithinPartitions(*keys)
    return df.orderBy(*keys)


def _write(df: DataFrame, table: str, folder: Path, files: int) -> None:
    _laid_out(df.select(*[c.name for c in TABLES[table]]), table, files).write.option(
        "compression", "zstd").parquet(str(folder / table))


def _blob_folder(source: Path) -> Path | None:
    """The blob folder a source carries: a store's, or an archive's (its Bundles, blocks and dictionaries)."""
    kind, where = resolve_source(source)
    if kind == "store":
        return where / "blobs"
    if kind == "archive":
        from ssblab.archive.folder import open_archive

        return open_archive(where).blobs
    return None


def blob_sizes(spark: SparkSession, source: Path) -> DataFrame | None:
    """(blob, size) of the blobs a store or an archive holds; None for other sources."""
    folder = _blob_folder(source)
    if folder is None or not (folder / "sha256").exists():
        return None
    store = BlobStore(folder)
    rows = [(ref, store.size(ref)) for ref in store]
    return spark.createDataFrame(rows, "blob string, size long")


def _check_destination(out: Path) -> None:
    if out.exists() and not (out / MANIFEST).exists() and any(out.iterdir()):
        raise ExportError(f"{out} exists and is not an ssblab dataset: refusing to replace it")


def _swap_in(staging: Path, out: Path) -> None:
    """Replace ``out`` by ``staging`` with renames (atomic on one file system)."""
    old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
    if out.exists():
        os.replace(out, old)
    os.replace(staging, out)
    shutil.rmtree(old, ignore_errors=True)


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


def _verdicts(spark: SparkSession, source: str | Path, hmac_key: Any, split_bytes: int, rows_done: Any) -> DataFrame:
    """The verdicts with the messages table's columns carried along, from whichever reader fits the source."""
    if resolve_source(source)[0] == "archive":
        from ssblab.pipeline.archives import archive_verdicts

        return archive_verdicts(spark, source, hmac_key=hmac_key, carry=tables.CARRY, rows_done=rows_done)
    return verdicts_of(spark, source, hmac_key=hmac_key, carry=tables.CARRY, split_bytes=split_bytes,
                       rows_done=rows_done)


def export_parquet(spark: SparkSession, source: str | Path, out: str | Path, *, hmac_key: Any = None,
                   files: int | None = None, split_bytes: int = SPLIT_BYTES,
                   progress: bool | None = None) -> ExportSummary:
    """Verify ``source`` and write the dataset to ``out`` atomically.

    Args:
        spark: the session.
        source: a JSONL file, a log.offset (or ssb-fixtures folder), a store folder, or an archive (an
            ``archive.json``, a folder written by ``ssblab archive build``, or a blob folder holding Bundles).
        out: the dataset folder (replaced if it holds an earlier dataset).
        hmac_key: a test network's HMAC key.
        files: files of the ``messages`` table (default: the session's shuffle partitions).
        split_bytes: bytes of source per verification task (archives: whole blocks, `load.SPLIT_ROWS` messages).
        progress: show a progress bar (None: when stderr is a terminal, or in a notebook).

    Raises:
        ExportError: ``out`` exists and is not an ssblab dataset.
    """
    out = Path(out).absolute()
    _check_destination(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    files = files or int(spark.conf.get("spark.sql.shuffle.partitions") or 2)
    try:
        with job_progress(spark, "exporting", enabled=progress) as rows_done:
            rows = _verdicts(spark, source, hmac_key, split_bytes, rows_done)
            _write(tables.messages_table(rows), "messages", staging, files)
            messages = spark.read.parquet(str(staging / "messages"))
            for name, derive in tables.DERIVED.items():
                _write(derive(messages), name, staging, files)
            links = spark.read.parquet(str(staging / "links"))
            _write(tables.blobs(links, blob_sizes(spark, Path(source))), "blobs", staging, files)
            counts = {name: spark.read.parquet(str(staging / name)).count() for name in TABLES}
        manifest = {"format": "ssblab-dataset", "version": DATASET_VERSION, "source": str(source),
                    "tables": {name: {"rows": counts[name], "columns": [c.name for c in TABLES[name]]}
                               for name in TABLES}}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        _swap_in(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportSummary(out, counts, _folder_bytes(out))
