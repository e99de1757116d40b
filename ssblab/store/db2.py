"""ssb-db2's ``db2/log.bipf``: the async-append-only-log block layout and its BIPF ``{key, value, timestamp}``
records, read in log order, every format told apart.

Layout (async-append-only-log 4, as ssb-db2 8 writes it): the file is blocks of `BLOCK_SIZE` bytes; a block
holds records ``length:u16le | data`` from its start, never across its end, and a length of 0 ends the block
(the rest is zero). A deleted record keeps its length and has its data zeroed. The data is the BIPF record
``{key, value, timestamp[, feed, ooo]}`` (``value`` is the message as JS holds it, ``timestamp`` when it was
received).

Strategy, for the pipeline as for `read_db2`: `plan` cuts the file at block boundaries (blocks are independent),
and `records` reads one such range. Damage is named by its byte offset and never stops the read: a record whose
length runs past its block ends that block (the next block is read), a record that is not a BIPF record is
reported and the next one read, and a torn last block (a writer killed mid-block) ends the file. Every record
before the damage is kept.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ssblab.core import bendybutt, bipf, buttwoo
from ssblab.core.encoding import encode_compact
from ssblab.core.errors import InvalidJson, InvalidMessage, Rule
from ssblab.core.message import Message
from ssblab.core.native import NativeMessage
from ssblab.store.received import Received

__all__ = ["BLOCK_SIZE", "FORMATS", "Db2Record", "is_db2", "locate", "plan", "read_db2", "received_of", "records"]

BLOCK_SIZE = 65536
_LENGTH = struct.Struct("<H")
FORMATS = {"ssb:feed/bendybutt-v1/": bendybutt, "ssb:feed/buttwoo-v1/": buttwoo}


class Db2Record(NamedTuple):
    """One record of log.bipf: a message (``value``), a deleted record, or damage (``error``, with the offset).

    ``format`` is ``classic``, ``bendybutt-v1``, ``buttwoo-v1``, or, for an author of another kind, its prefix
    (``ssb:feed/gabbygrove-v1/``, say). ``raw`` is the compact JSON of a classic value when asked for.
    """

    offset: int
    where: str
    value: Any = None
    key: str | None = None
    received: float | None = None
    format: str = "classic"
    error: str | None = None
    deleted: bool = False
    raw: bytes | None = None


def locate(path: str | Path) -> Path:
    """The log.bipf of ``path``: the folder holding ``db2/``, ``db2/`` itself, or the file."""
    path = Path(path)
    for candidate in (path / "db2" / "log.bipf", path / "log.bipf"):
        if candidate.is_file():
            return candidate
    return path


def is_db2(path: str | Path) -> bool:
    """Cheap: a log.bipf by name, or a file whose first record is a non-empty BIPF object."""
    log = locate(path)
    if not log.is_file():
        return False
    if log.name == "log.bipf":
        return True
    with open(log, "rb") as f:
        head = f.read(3)
    return len(head) == 3 and _LENGTH.unpack_from(head)[0] > 0 and head[2] & 7 == bipf.OBJECT


def plan(path: str | Path, split_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of whole blocks, about ``split_bytes`` each, covering the file once."""
    size = locate(path).stat().st_size
    step = max(1, split_bytes // BLOCK_SIZE) * BLOCK_SIZE
    return [(start, min(start + step, size)) for start in range(0, size, step)] or [(0, 0)]


def records(path: str | Path, start: int = 0, end: int | None = None, *, json: bool = False
            ) -> Iterator[Db2Record]:
    """The records of the blocks in ``[start, end)`` (``start`` a block boundary), in log order.

    With ``json``, classic records carry ``raw``, the compact JSON of their value (what the pipeline parses).
    """
    log = locate(path)
    with open(log, "rb") as f:
        f.seek(start)
        data = f.read(None if end is None else end - start)
    for block in range(0, len(data), BLOCK_SIZE):
        yield from _block(data[block:block + BLOCK_SIZE], start + block, str(log), json)


def _block(block: bytes, base: int, log: str, json: bool) -> Iterator[Db2Record]:
    at = 0
    torn = len(block) < BLOCK_SIZE
    while at + 2 <= len(block):
        (length,) = _LENGTH.unpack_from(block, at)
        if length == 0:
            return  # the end of this block
        where, stop = f"{log}@{base + at}", at + 2 + length
        if stop > len(block):
            what = "the file ends (a torn last block)" if torn else f"its block ends at {base + BLOCK_SIZE}"
            yield Db2Record(base + at, where, error=f"log.bipf record at offset {base + at} has {length} bytes, "
                            f"but {what}")
            return
        data = block[at + 2:stop]
        yield _record(data, base + at, where, json) if any(data) else Db2Record(base + at, where, deleted=True)
        at = stop
    if torn and at < len(block):
        yield Db2Record(base + at, f"{log}@{base + at}", error=f"log.bipf ends inside a record header at offset "
                        f"{base + at} (a torn last block)")


def _record(data: bytes, offset: int, where: str, json: bool) -> Db2Record:
    try:
        record = bipf.decode(data)
    except bipf.BipfError as exc:
        return Db2Record(offset, where, error=f"log.bipf record at offset {offset} is not BIPF: {exc}")
    value = record.get("value") if isinstance(record, dict) else None
    if not isinstance(value, dict) or not isinstance(record.get("key"), str):
        return Db2Record(offset, where, error=f"log.bipf record at offset {offset} is not a {{key, value, "
                         "timestamp}} record")
    stamp = record.get("timestamp")
    received = float(stamp) if type(stamp) in (int, float) else None
    author = value.get("author")
    kind = next((fmt.FORMAT for prefix, fmt in FORMATS.items() if isinstance(author, str)
                 and author.startswith(prefix)), None)
    if kind is None and isinstance(author, str) and author.startswith("ssb:feed/"):
        kind = author[:author.index("/", 9) + 1] if "/" in author[9:] else author
    try:
        raw = encode_compact(value) if json and kind is None else None
    except InvalidJson as exc:  # BIPF can hold what JSON cannot (a buffer, say): no signed message holds it
        return Db2Record(offset, where, error=f"log.bipf record at offset {offset} holds a value JSON cannot: {exc}")
    return Db2Record(offset, where, value, record["key"], received, kind or "classic", raw=raw)


def received_of(record: Db2Record, hmac_key: bytes | None = None) -> Received:
    """The record as an import or a verification takes it (a deleted record is ``skipped``).

    A classic value becomes a `Message` whose id must be the record's key; a bendy-butt or buttwoo value is
    rebuilt into its native bytes and verified alone (`NativeMessage`), its id again the key; an unknown format
    is an error of rule ``format`` (counted, never dropped).
    """
    if record.deleted:
        return Received(record.where, skipped="deleted")
    if record.error is not None:
        return Received(record.where, error=InvalidMessage(Rule.JSON, record.error))
    try:
        msg: Message | NativeMessage
        if record.format == "classic":
            msg = Message.from_value(record.value)
        elif (fmt := FORMATS.get(f"ssb:feed/{record.format}/")) is not None:
            msg = fmt.verify(fmt.to_native(record.value), hmac_key)
        else:
            raise InvalidMessage(Rule.FORMAT, f"feed format {record.format!r} is not one ssblab verifies",
                                 fatal=False)
        if msg.id != record.key:
            raise InvalidMessage(Rule.HASH, f"record key {record.key} is not the message's id {msg.id}")
    except InvalidMessage as exc:
        author = record.value.get("author") if isinstance(record.value.get("author"), str) else None
        return Received(record.where, error=InvalidMessage(exc.rule, f"{exc.detail} at {record.where}",
                                                           author=author, sequence=record.value.get("sequence"),
                                                           fatal=exc.fatal))
    if isinstance(msg, NativeMessage):
        return Received(record.where, received=record.received, native=msg)
    return Received(record.where, msg, record.received)


def read_db2(path: str | Path, hmac_key: bytes | None = None) -> Iterator[Received]:
    """Every record of an ssb-db2 log as `Received`, in log order."""
    for record in records(path):
        yield received_of(record, hmac_key)
