"""An ssblab store folder as a source: its local log (``messages`` ordered by ``seq``), read-only.

Splits are ranges of local seq; ``pos`` is the seq and ``where`` is ``store#seq``. Every stored value is checked
again from scratch (nothing is trusted from the store's tables), with its receive time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from ssblab.pipeline.splits import RawRecord, Split

__all__ = ["KIND", "detect", "plan", "records"]

KIND = "store"
DATABASE = "ssblab.sqlite3"


def detect(path: Path) -> Path | None:
    return path if (path / DATABASE).is_file() else None


def _connect(folder: str | Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{(Path(folder) / DATABASE).as_uri()}?mode=ro", uri=True)


def plan(path: Path, split_bytes: int, split_rows: int) -> list[Split]:
    with _connect(path) as db:
        low, high = db.execute("SELECT min(seq), max(seq) FROM messages").fetchone()
    if low is None:
        return []
    return [Split(KIND, str(path), s, min(s + split_rows, high + 1), 0, str(path))
            for s in range(low, high + 1, split_rows)]


def records(split: Split) -> Iterator[RawRecord]:
    with _connect(split.path) as db:
        rows = db.execute("SELECT seq, value, received FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq",
                          (split.start, split.end)).fetchall()
    for seq, value, received in rows:
        yield RawRecord(seq, f"{split.prefix}#{seq}", bytes(value), received)
