"""ssb-db2's ``log.bipf`` as a source: the log most SSB apps of recent years keep (`ssblab.store.db2` reads its
block layout and BIPF records).

Splits are runs of whole 64 KiB blocks (blocks are independent); ``pos`` is a record's byte offset and ``where``
is ``log.bipf@offset``. A classic message becomes a record whose raw bytes are its ``{key, value, timestamp}``
JSON, so the key is checked against the message's id like any record's; a message of a newer format (bendy butt,
buttwoo) travels decoded (`RawRecord.native`) and is verified from its native bytes; a deleted record is skipped
and counted; damage is one record without data that names the offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from ssblab.pipeline.splits import RawRecord, Split
from ssblab.store import db2

__all__ = ["KIND", "detect", "plan", "records"]

KIND = "ssb-db2"


def detect(path: Path) -> Path | None:
    """ssb-db2 data: the folder holding ``db2/``, ``db2/`` itself, or the ``log.bipf`` file."""
    return db2.locate(path) if db2.is_db2(path) else None


def plan(path: Path, split_bytes: int, split_rows: int) -> list[Split]:
    return [Split(KIND, str(path), start, end, 0, str(path)) for start, end in db2.plan(path, split_bytes)]


def records(split: Split) -> Iterator[RawRecord]:
    for record in db2.records(split.path, split.start, split.end, json=True):
        if record.deleted:
            yield RawRecord(record.offset, record.where, None, skipped="deleted")
        elif record.error is not None:
            yield RawRecord(record.offset, record.where, None, torn=record.error)
        elif record.raw is None:
            yield RawRecord(record.offset, record.where, None, record.received, native=record)
        else:
            stamp = b"null" if record.received is None else orjson.dumps(record.received)
            raw = b'{"key":' + orjson.dumps(record.key) + b',"value":' + record.raw + b',"timestamp":' + stamp + b"}"
            yield RawRecord(record.offset, record.where, raw, record.received)
