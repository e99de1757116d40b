"""An ssblab store folder as a source: its local log (``messages`` ordered by ``seq``), read-only (a store that is
not one of ours, or is damaged, is refused by `ssblab.store.db.open_database` with the fault named).

Splits are ranges of local seq; ``pos`` is the seq and ``where`` is ``store#seq``. Every stored value is checked
again from scratch (nothing is trusted from the store's tables), with its receive time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from ssblab.pipeline.splits import RawRecord, Split
from ssblab.store.db import is_store, open_database

__all__ = ["KIND", "detect", "plan", "records"]

KIND = "store"


def detect(path: Path) -> Path | None:
    return path if is_store(path) else None


def plan(path: Path, split_bytes: int, split_rows: int) -> list[Split]:
    with closing(open_database(path, read_only=True)) as db:
        low, high = db.execute("SELECT min(seq), max(seq) FROM messages").fetchone()
    if low is None:
        return []
    return [Split(KIND, str(path), s, min(s + split_rows, high + 1), 0, str(path))
            for s in range(low, high + 1, split_rows)]


def records(split: Split) -> Iterator[RawRecord]:
    with closing(open_database(Path(split.path), read_only=True)) as db:
        rows = db.execute("SELECT seq, value, received FROM messages WHERE seq >= ? AND seq < ? ORDER BY seq",
                          (split.start, split.end)).fetchall()
    for seq, value, received in rows:
        yield RawRecord(seq, f"{split.prefix}#{seq}", bytes(value), received)
