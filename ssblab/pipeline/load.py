"""Readers of SSB data (a store, JSONL, a ``log.offset``, an archive) into Spark, in log order.

Strategy: the driver only cuts the source into *splits* (byte ranges at line or frame boundaries, ranges of
a store's log, or runs of an archive's blocks: `ssblab.pipeline.archives`), which is cheap (counting newlines,
hopping frame headers, reading Bundles); each Spark task then reads its own split straight from the file in a
Python worker. Raw bytes therefore never pass through the driver or the JVM
before they are parsed, and the parse runs in parallel. `raw_messages` is the plain reader; the verifier fuses the
same `iter_split` with its per-message checks in one task.

Invariants:
- ``pos`` orders records as `ssblab.store.read_source` yields them (the line number of a JSONL file, the byte
  offset of a log.offset frame, the local seq of a store), and ``where`` is exactly the place that
  ``read_source`` names (``path:line``, ``path@offset``, ``store#seq``), so error messages match the
  single-process verifier's word for word; archives number their messages feed by feed, block by block;
- splits cover the source exactly once; a torn last log.offset frame ends the source, as in ``read_log_offset``;
- workers read the source path themselves: on a multi-machine cluster it must be on a shared file system.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ssblab.store.db import open_database
from ssblab.store.sources import is_log_offset

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_FRAME = struct.Struct(">I")
SPLIT_BYTES = 16 * 2**20  # a task per 16 MiB of source keeps two cores busy and each task's memory small
SPLIT_ROWS = 25_000  # the same for a store, counted in messages
SPLIT_DDL = "kind string, path string, start long, end long, first long, prefix string, block string"
RAW_DDL = "pos long, `where` string, raw binary, received double, torn string"


@dataclass(frozen=True, slots=True)
class Split:
    """One task's share of a source: ``[start, end)`` in bytes (files), in local seq (stores) or in ``pos``
    (archives)."""

    kind: str  # "jsonl", "log.offset", "store" or "archive"
    path: str  # the file, the store folder, or an archive's blob folder
    start: int
    end: int
    first: int  # the line number of the first line (jsonl); unused otherwise
    prefix: str  # what `where` starts with
    block: str = ""  # archives: the blocks to read, as JSON (`archives.pieces_of`)


@dataclass(frozen=True, slots=True)
class RawRecord:
    pos: int
    where: str
    raw: bytes | None  # None for a torn frame
    received: float | None = None  # a store's receive time; records carry their own
    torn: str | None = None  # why the source ends here (a torn log.offset frame)


def resolve_source(path: str | Path) -> tuple[str, Path]:
    """(kind, path) of a source, following `read_source` and `verify_path` (a store folder, an ssb-fixtures
    folder with ``flume/log.offset``, a log.offset file, else JSONL), and archives (an ``archive.json``, a folder
    written by ``ssblab archive build``, or a blob folder holding Bundles: `is_archive`). The path is made
    absolute: tasks may run in another working directory, and SQLite opens a store by ``file:`` URI."""
    path = Path(path).absolute()
    if (path / "ssblab.sqlite3").exists():
        return "store", path
    if path.is_dir() and (path / "flume" / "log.offset").exists():
        path = path / "flume" / "log.offset"
    elif is_archive(path):
        return "archive", path
    return ("log.offset" if is_log_offset(path) else "jsonl"), path


def is_archive_file(path: Path) -> bool:
    """A small ``*.json`` file holding an ``archive`` message content (``archive.json``)."""
    if path.suffix != ".json" or not path.is_file() or path.stat().st_size > 2**20:
        return False
    try:
        content = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return False
    return isinstance(content, dict) and content.get("type") == "archive"


def is_archive(path: str | Path) -> bool:
    """An archive as `ssblab.archive.folder.open_archive` reads it: an ``archive*.json`` file, a folder holding
    such files or a ``blobs`` folder, or a blob folder itself (``sha256/``). Checked without the archive extra."""
    path = Path(path)
    if path.is_file():
        return is_archive_file(path)
    return path.is_dir() and ((path / "sha256").is_dir() or (path / "blobs" / "sha256").is_dir()
                              or any(map(is_archive_file, path.glob("archive*.json"))))


def _archive_reader() -> Any:
    try:
        from ssblab.pipeline import archives
    except ImportError as exc:
        raise ImportError(f"reading archives needs the archive extra: pip install 'ssblab[archive]' ({exc})") from exc
    return archives


def plan_splits(path: str | Path, *, split_bytes: int = SPLIT_BYTES, split_rows: int = SPLIT_ROWS) -> list[Split]:
    """Cut a source into splits at record boundaries (the driver's only pass over the data)."""
    kind, where = resolve_source(path)
    if kind == "archive":
        return _archive_reader().archive_splits(where, split_rows)  # type: ignore[no-any-return]
    if kind == "store":
        return _store_splits(where, split_rows)
    if kind == "log.offset":
        return _frame_splits(where, split_bytes)
    return _line_splits(where, split_bytes)


def _line_splits(path: Path, split_bytes: int) -> list[Split]:
    if path.stat().st_size == 0:
        return []
    splits, start, line = [], 0, 1
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        while start < size:
            cut = data.find(b"\n", min(start + split_bytes, size) - 1)
            end = size if cut < 0 else cut + 1
            splits.append(Split("jsonl", str(path), start, end, line, str(path)))
            line += data[start:end].count(b"\n")
            start = end
    return splits


def _frame_splits(path: Path, split_bytes: int) -> list[Split]:
    """Hop frame headers; a frame that does not fit is left to the worker, which reports it as torn."""
    splits, start, offset = [], 0, 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        while offset + 4 <= size:
            end = offset + 4 + _FRAME.unpack_from(data, offset)[0] + 8
            if end > size:
                break
            offset = end
            if offset - start >= split_bytes:
                splits.append(Split("log.offset", str(path), start, offset, 0, str(path)))
                start = offset
    if start < size:
        splits.append(Split("log.offset", str(path), start, size, 0, str(path)))
    return splits


def _store_splits(path: Path, split_rows: int) -> list[Split]:
    with closing(open_database(path, read_only=True)) as db:
        low, high = db.execute("SELECT min(seq), max(seq) FROM messages").fetchone()
    if low is None:
        return []
    return [Split("store", str(path), s, min(s + split_rows, high + 1), 0, str(path))
            for s in range(low, high + 1, split_rows)]


def iter_split(split: Split) -> Iterator[RawRecord]:
    """The raw records of one split, in log order (run in a Spark worker, or anywhere)."""
    if split.kind == "archive":
        return _archive_reader().archive_records(split)  # type: ignore[no-any-return]
    if split.kind == "store":
        return _store_records(split)
    if split.kind == "log.offset":
        return _frame_records(split)
    return _line_records(split)


def _line_records(split: Split) -> Iterator[RawRecord]:
    with open(split.path, "rb") as f:
        f.seek(split.start)
        data = f.read(split.end - split.start)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the split ends with a newline: no line after it
    for number, line in enumerate(lines, split.first):
        if line.strip():
            yield RawRecord(number, f"{split.prefix}:{number}", line)


def _frame_records(split: Split) -> Iterator[RawRecord]:
    """`read_log_offset`'s framing rules, over absolute offsets within the split."""
    with open(split.path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        offset, size = split.start, len(data)
        while offset < split.end:
            where = f"{split.prefix}@{offset}"
            if offset + 4 > size:
                yield _torn(offset, where, "a frame header")
                return
            (length,) = _FRAME.unpack_from(data, offset)
            end = offset + 4 + length
            if end + 8 > size:
                yield _torn(offset, where, f"a frame of {length} bytes")
                return
            if _FRAME.unpack_from(data, end)[0] != length or _FRAME.unpack_from(data, end + 4)[0] != end + 8:
                yield _torn(offset, where, "a consistent frame (its lengths disagree: the file is corrupt)")
                return
            yield RawRecord(offset, where, data[offset + 4 : end])
            offset = end + 8


def _torn(offset: int, where: str, what: str) -> RawRecord:
    return RawRecord(offset, where, None, torn=f"log.offset ends without {what} at {where}")


def _store_records(split: Split) -> Iterator[RawRecord]:
    with closing(open_database(Path(split.path), read_only=True)) as db:
        rows = db.execute("SELECT seq, value, received FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq",
                          (split.start, split.end)).fetchall()
    for seq, value, received in rows:
        yield RawRecord(seq, f"{split.prefix}#{seq}", bytes(value), received)


def splits_frame(spark: SparkSession, splits: list[Split]) -> DataFrame:
    """A DataFrame with one split per partition (so one task reads one split)."""
    rows = [tuple(asdict(s).values()) for s in splits]
    rdd = spark.sparkContext.parallelize(rows, max(1, len(rows)))
    return spark.createDataFrame(rdd, SPLIT_DDL)


def splits_of(batch: Any) -> Iterator[Split]:
    """The `Split`s in an Arrow record batch of `splits_frame` rows."""
    for row in batch.to_pylist():
        yield Split(**row)


def raw_messages(spark: SparkSession, path: str | Path, *, split_bytes: int = SPLIT_BYTES) -> DataFrame:
    """The records of a source as rows ``(pos, where, raw, received, torn)``, unparsed, in ``pos`` order.

    Examples:
        >>> raw_messages(spark, "feeds.jsonl").count()  # doctest: +SKIP
    """
    import pyarrow as pa

    schema = _arrow_schema(RAW_DDL)

    def read(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for split in splits_of(batch):
                records = [asdict(r) for r in iter_split(split)]
                yield pa.RecordBatch.from_pylist(records, schema=schema)

    return splits_frame(spark, plan_splits(path, split_bytes=split_bytes)).mapInArrow(read, RAW_DDL)


_ARROW = {"long": "int64", "string": "string", "double": "float64", "boolean": "bool", "binary": "binary"}


def _arrow_schema(ddl: str) -> Any:
    """The ``pyarrow.Schema`` of a flat DDL string of ours (PySpark 3.5 has no ``StructType.fromDDL``)."""
    import pyarrow as pa

    fields = (part.replace("`", "").split() for part in ddl.split(", "))
    return pa.schema([pa.field(name, pa.type_for_alias(_ARROW[kind])) for name, kind in fields])
