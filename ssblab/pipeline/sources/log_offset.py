"""flumelog-offset ``log.offset`` as a source: what ssb-server (ssb-db) and ssb-fixtures write.

A frame is ``len:u32be | data | len:u32be | next_offset:u32be``. Splits end at frame boundaries; ``pos`` is a
frame's byte offset and ``where`` is ``path@offset``. A torn or inconsistent frame (a writer killed mid-append, a
damaged file) becomes one record without data, naming the offset, and ends the source: nothing after it can be
framed with confidence.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from pathlib import Path

from ssblab.pipeline.splits import RawRecord, Split

__all__ = ["KIND", "detect", "is_log_offset", "plan", "records"]

KIND = "log.offset"
_FRAME = struct.Struct(">I")


def is_log_offset(path: Path) -> bool:
    """A flumelog-offset file starts with a big-endian length followed by a JSON object."""
    with open(path, "rb") as f:
        head = f.read(5)
    return len(head) == 5 and head[4:5] == b"{" and head[:1] == b"\x00"


def detect(path: Path) -> Path | None:
    """A log.offset file, or an ssb-fixtures / ssb-server folder holding ``flume/log.offset``."""
    if path.is_dir() and (path / "flume" / "log.offset").is_file():
        return path / "flume" / "log.offset"
    return path if path.is_file() and is_log_offset(path) else None


def plan(path: Path, split_bytes: int, split_rows: int) -> list[Split]:
    """Hop frame headers; a frame that does not fit is left to the reader, which reports it as torn."""
    splits, start, offset = [], 0, 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        while offset + 4 <= size:
            end = offset + 4 + _FRAME.unpack_from(data, offset)[0] + 8
            if end > size:
                break
            offset = end
            if offset - start >= split_bytes:
                splits.append(Split(KIND, str(path), start, offset, 0, str(path)))
                start = offset
    if start < size:
        splits.append(Split(KIND, str(path), start, size, 0, str(path)))
    return splits


def records(split: Split) -> Iterator[RawRecord]:
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
