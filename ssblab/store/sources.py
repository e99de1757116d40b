"""What a store takes in: `Received` items, each a message parsed from one record (or the error that stopped it,
with its place), and what it writes for JS peers (`write_log_offset`).

The readers of the files SSB data comes in live in `ssblab.pipeline.sources` (one module per format, shared by
``ssblab import``, ``ssblab verify`` and both engines; ssb-db2's block layout is `ssblab.store.db2`); they parse
each record with `parse_record`, as JS reads it. A record that is not a message becomes a `Received` carrying its
`InvalidMessage` (rule ``json``) with the place, so an import keeps every good message and reports the rest.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, decode_message_json
from ssblab.store.received import Received

__all__ = ["parse_record", "write_log_offset"]

_FRAME = struct.Struct(">I")


def parse_record(data: bytes, where: str, received: float | None = None) -> Received:
    """A message value or a ``{key, value, timestamp}`` record (its key must be the value's id), read as JS
    reads it; text that breaks a strict JSON rule JS does not have carries that rule as ``finding``. ``received``
    is the receive time the source keeps beside the record (a store's), for a record that has none of its own."""
    try:
        item, plain, finding = decode_message_json(data)
        broke = None if finding is None else finding.code
        if isinstance(item, dict) and "value" in item and "key" in item:
            msg = Message.from_value(item["value"], plain=plain)
            if item["key"] != msg.id:
                raise InvalidMessage(Rule.JSON, f"record key {item['key']} is not the value's id {msg.id}")
            stamp = item.get("timestamp")
            return Received(where, msg, stamp if type(stamp) in (int, float) else received, finding=broke,
                            plain=plain or None)  # decode proves plain text; False is only "not proved"
        return Received(where, Message.from_value(item, plain=plain), received, finding=broke, plain=plain or None)
    except InvalidMessage as exc:
        return Received(where, error=InvalidMessage(exc.rule, f"{exc.detail} at {where}", fatal=exc.fatal))


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
