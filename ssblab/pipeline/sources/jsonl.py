"""JSONL as a source: one message value, or one ``{key, value, timestamp}`` record, per line.

Splits end at newlines, so every line is read by exactly one task; ``pos`` and ``where`` are the line number, as
every error names it (``path:line``). Blank lines are skipped.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path

from ssblab.pipeline.splits import RawRecord, Split

__all__ = ["KIND", "detect", "plan", "records"]

KIND = "jsonl"


def detect(path: Path) -> Path | None:
    """Any other file: JSONL is what the other readers do not claim."""
    return path if path.is_file() else None


def plan(path: Path, split_bytes: int, split_rows: int) -> list[Split]:
    if path.stat().st_size == 0:
        return []
    splits, start, line = [], 0, 1
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        while start < size:
            cut = data.find(b"\n", min(start + split_bytes, size) - 1)
            end = size if cut < 0 else cut + 1
            splits.append(Split(KIND, str(path), start, end, line, str(path)))
            line += data[start:end].count(b"\n")
            start = end
    return splits


def records(split: Split) -> Iterator[RawRecord]:
    with open(split.path, "rb") as f:
        f.seek(split.start)
        data = f.read(split.end - split.start)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the split ends with a newline: no line after it
    for number, line in enumerate(lines, split.first):
        if line.strip():
            yield RawRecord(number, f"{split.prefix}:{number}", line)
