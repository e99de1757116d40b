"""Remote EBT clocks, persisted per peer in the store folder (``replication.sqlite3``, our own file).

Why: EBT request skipping (the first notes name only feeds whose sequence changed since the last session with that
peer) needs what each peer last told us, across restarts. Invariant: a peer's clock is replaced whole in one
transaction, so a crash leaves the previous clock or the new one, never a mix (a stale clock only costs a few
extra notes, never a missed feed: the core mentions every feed whose sequence differs).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["FILE", "ClockStore"]

FILE = "replication.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS clocks (
    peer TEXT NOT NULL,
    feed TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    PRIMARY KEY (peer, feed)
);
"""


class ClockStore:
    """``{peer: {feed: sequence}}`` on disk."""

    def __init__(self, folder: str | Path) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(Path(folder) / FILE, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(_SCHEMA)

    def load(self, peer: str) -> dict[str, int]:
        return dict(self.db.execute("SELECT feed, sequence FROM clocks WHERE peer = ?", (peer,)).fetchall())

    def save(self, peer: str, clock: dict[str, int]) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("DELETE FROM clocks WHERE peer = ?", (peer,))
            self.db.executemany("INSERT INTO clocks VALUES (?, ?, ?)",
                                [(peer, feed, int(seq)) for feed, seq in clock.items()])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.db.close()
