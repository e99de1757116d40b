"""The sources the pipeline reads, one module each, in one table (`READERS`).

Every reader module has the same four names: ``KIND``; ``detect(path)``, the path it reads there, or None;
``plan(path, split_bytes, split_rows)``, the path cut into `Split`s; and ``records(split)``, the split's
`RawRecord`s in log order. `resolve_source` asks the readers in table order and the first that claims a path reads
it. To add a source, write such a module and add it to `READERS` before the readers that would also claim its
paths.

Everything above (facts, verdicts, tables, both engines, ``ssblab import`` and ``ssblab verify``) reads sources only
through `plan_splits` and `iter_split`, so every source gets every feature and the same error places.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from ssblab.core.errors import InvalidMessage, Rule, SsbError
from ssblab.core.message import hmac_key_bytes
from ssblab.pipeline.sources import archive, db2_log, jsonl, log_offset, store
from ssblab.pipeline.splits import SPLIT_BYTES, SPLIT_ROWS, RawRecord, Split
from ssblab.store import db2
from ssblab.store.received import Received
from ssblab.store.sources import parse_record

__all__ = [
    "READERS",
    "Reader",
    "SourceError",
    "blob_folder",
    "held_blobs",
    "iter_split",
    "plan_splits",
    "read_source",
    "received_of",
    "resolve_source",
]


class Reader(Protocol):
    KIND: str

    def detect(self, path: Path) -> Path | None: ...

    def plan(self, path: Path, split_bytes: int, split_rows: int) -> list[Split]: ...

    def records(self, split: Split) -> Iterator[RawRecord]: ...


class SourceError(SsbError):
    """A path that no reader reads (missing, or not a format ssblab knows)."""

    code = "source"


# Asked in this order: a store folder, ssb-db2 data, an archive, a log.offset (or a folder holding
# flume/log.offset), else JSONL.
READERS: dict[str, Reader] = {reader.KIND: reader  # type: ignore[misc]
                              for reader in (store, db2_log, archive, log_offset, jsonl)}


def resolve_source(path: str | Path) -> tuple[str, Path]:
    """``(kind, path to read)`` of a source. The path is made absolute: tasks may run in another working directory.

    Raises:
        SourceError: nothing is at ``path``, or no reader reads it.
    """
    path = Path(path).absolute()
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    for kind, reader in READERS.items():
        found = reader.detect(path)
        if found is not None:
            return kind, found
    raise SourceError(f"{path}: not a source ssblab reads (a store folder, a JSONL file, a log.offset, an "
                      "ssb-fixtures folder, ssb-db2 data or an archive)")


def plan_splits(path: str | Path, *, split_bytes: int = SPLIT_BYTES, split_rows: int = SPLIT_ROWS,
                kind: str | None = None) -> list[Split]:
    """Cut a source into splits at record boundaries (the driver's only pass over the data); ``kind`` reads it
    with that reader, whatever its first bytes look like (a damaged file)."""
    if kind is None:
        kind, where = resolve_source(path)
    else:
        where = READERS[kind].detect(Path(path).absolute()) or Path(path).absolute()
    return READERS[kind].plan(where, split_bytes, split_rows)


def iter_split(split: Split) -> Iterator[RawRecord]:
    """The raw records of one split, in log order (run in a Spark worker, a local process, or anywhere)."""
    return READERS[split.kind].records(split)


def received_of(record: RawRecord, hmac_key: bytes | None = None) -> Received:
    """The record parsed into a message (with its receive time and any strict-JSON finding), a message of a
    newer format verified alone (``hmac_key``: a test network's), a skipped record, or the error naming its
    place."""
    if record.skipped is not None:
        return Received(record.where, skipped=record.skipped)
    if record.native is not None:
        return db2.received_of(record.native, hmac_key)
    if record.raw is None:
        return Received(record.where, error=InvalidMessage(Rule.JSON, record.torn or f"no data at {record.where}"))
    return parse_record(record.raw, record.where, record.received)


def read_source(path: str | Path, *, hmac_key: Any = None, kind: str | None = None) -> Iterator[Received]:
    """Every record of a source as a `Received`, in log order: what ``ssblab import`` appends to a store
    (``kind``: read it with that reader, as `plan_splits`)."""
    key = hmac_key_bytes(hmac_key)
    for split in plan_splits(path, kind=kind):
        for record in iter_split(split):
            yield received_of(record, key)


def blob_folder(source: Path) -> Path | None:
    """The blob folder a source carries: a store's, or an archive's (its Bundles, blocks and dictionaries)."""
    kind, where = resolve_source(source)
    if kind == "store":
        return where / "blobs"
    if kind == "archive":
        from ssblab.archive.folder import open_archive  # the archive modules load numpy and pyarrow: on use only

        return open_archive(where).blobs
    return None


def held_blobs(source: Path) -> list[tuple[str, int | None]]:
    """(blob, size) of the blobs a store or an archive holds (none for other sources)."""
    from ssblab.store.blobs import BlobStore  # tempfile and random: not for `ssblab verify` of one message

    folder = blob_folder(source)
    if folder is None or not (folder / "sha256").exists():
        return []
    store = BlobStore(folder)
    return [(ref, store.size(ref)) for ref in store]
