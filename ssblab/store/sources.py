"""Readers for the files SSB data comes in: JSONL (values or ``{key, value, timestamp}`` records),
flumelog-offset ``log.offset`` (what ssb-server/ssb-db and ssb-fixtures write) and, through `ssblab.store.db2`,
ssb-db2's ``log.bipf``.

Readers yield `Received` items and never stop at a bad record: a record that is not JSON becomes an item carrying
its `InvalidMessage` (rule ``json``) with the place (line or byte offset), so an import keeps every good message
and reports the rest. A log.offset frame is ``len:u32be | data | len:u32be | next_offset:u32be``; a torn last
frame (a writer killed mid-append) is reported and ends the stream.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, decode_message_json, hmac_key_bytes
from ssblab.store import db2
from ssblab.store.received import Received

_FRAME = struct.Struct(">I")


def parse_record(data: bytes, where: str) -> Received:
    """A message value or a ``{key, value, timestamp}`` record (its key must be the value's id), read as JS
    reads it; text that breaks a strict JSON rule JS does not have carries that rule as ``finding``."""
    try:
        item, plain, finding = decode_message_json(data)
        broke = None if finding is None else finding.code
        if isinstance(item, dict) and "value" in item and "key" in item:
            msg = Message.from_value(item["value"], plain=plain)
            if item["key"] != msg.id:
                raise InvalidMessage(Rule.JSON, f"record key {item['key']} is not the value's id {msg.id}")
            stamp = item.get("timestamp")
            return Received(where, msg, stamp if type(stamp) in (int, float) else None, finding=broke)
        return Received(where, Message.from_value(item, plain=plain), finding=broke)
    except InvalidMessage as exc:
        return Received(where, error=InvalidMessage(exc.rule, f"{exc.detail} at {where}", fatal=exc.fatal))


def read_jsonl(path: str | Path) -> Iterator[Received]:
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                yield parse_record(line, f"{path}:{number}")


def read_log_offset(path: str | Path) -> Iterator[Received]:
    with open(path, "rb") as log:
        data = log.read()
    offset = 0
    while offset < len(data):
        where = f"{path}@{offset}"
        if offset + 4 > len(data):
            yield _torn(where, "a frame header")
            return
        (length,) = _FRAME.unpack_from(data, offset)
        end = offset + 4 + length
        if end + 8 > len(data):
            yield _torn(where, f"a frame of {length} bytes")
            return
        (trailer,) = _FRAME.unpack_from(data, end)
        (next_offset,) = _FRAME.unpack_from(data, end + 4)
        if trailer != length or next_offset != end + 8:
            yield _torn(where, "a consistent frame (its lengths disagree: the file is corrupt)")
            return
        yield parse_record(data[offset + 4 : end], where)
        offset = end + 8


def _torn(where: str, what: str) -> Received:
    return Received(where, error=InvalidMessage(Rule.JSON, f"log.offset ends without {what} at {where}"))


def write_log_offset(records: Iterator[dict[str, Any]], path: str | Path) -> int:
    """Write ``{key, value, timestamp}`` records as a flumelog-offset file (for ssb-server); returns the count."""
    count = 0
    with open(path, "wb") as out:
        offset = 0
        for record in records:
            data = orjson.dumps(record)
            end = offset + 4 + len(data)
            out.write(_FRAME.pack(len(data)) + data + _FRAME.pack(len(data)) + _FRAME.pack(end + 8))
            offset = end + 8
            count += 1
    return count


def is_log_offset(path: str | Path) -> bool:
    """A flumelog-offset file starts with a big-endian length followed by a JSON object."""
    with open(path, "rb") as f:
        head = f.read(5)
    return len(head) == 5 and head[4:5] == b"{" and head[:1] == b"\x00"


def read_source(path: str | Path, *, hmac_key: Any = None) -> Iterator[Received]:
    """Messages of a JSONL file, a log.offset (or the ssb-fixtures folder holding it) or an ssb-db2 log (the
    folder holding ``db2/``, ``db2/`` or ``log.bipf``), whichever ``path`` is. ``hmac_key`` is for the formats
    whose signature is checked as they are read (bendy butt, buttwoo); classic messages are checked later."""
    path = Path(path)
    if path.is_dir() and (path / "flume" / "log.offset").exists():
        path = path / "flume" / "log.offset"
    if db2.is_db2(path):
        return db2.read_db2(path, hmac_key_bytes(hmac_key))
    return read_log_offset(path) if is_log_offset(path) else read_jsonl(path)
