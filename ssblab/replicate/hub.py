"""The store as a replication peer sees it: appends that wake live readers, and reads in the wire shapes.

Strategy: one `LiveStore` per process wraps the synchronous `Store`. Writers from many streams hand batches to
`append`, which validates and commits them in one transaction (the store's own rule: a message row exists only if it
validated) and then wakes every reader waiting for a feed to grow. Reads are paged (``PAGE`` rows at a time) so no
SQLite cursor stays open across an ``await``.

Invariants: everything runs on the event loop's thread (SQLite objects are not shared between threads); a reader
waiting on `wait_beyond` is woken by every successful append and re-checks its feed's head, so no wake-up is lost.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from ssblab.core.message import Message
from ssblab.core.validate import ValidationReport
from ssblab.friends import contact_edges
from ssblab.store import Store
from ssblab.store.received import Received

__all__ = ["BLOB_REF", "PAGE", "LiveStore", "load_value", "wire_record"]

PAGE = 500
BLOB_REF = re.compile(rb"&[A-Za-z0-9+/]{43}=\.sha256")


class LiveStore:
    """A `Store` plus wake-ups for live history streams."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._changed = asyncio.Event()
        self.listeners: list[Callable[[list[Message]], None]] = []

    def append(self, items: Iterable[Message | Received]) -> ValidationReport:
        """`Store.append`, then wake live readers and tell listeners which messages the feeds now hold."""
        entries = list(items)
        report = self.store.append(entries)
        if report.valid:
            self._changed.set()
            self._changed = asyncio.Event()
            failed = {(e.author, e.sequence) for e in report.errors}
            messages = (entry.message if isinstance(entry, Received) else entry for entry in entries)
            held = [m for m in messages if m is not None and (m.author, m.sequence) not in failed
                    and self.sequence(m.author) >= m.sequence]
            for listener in self.listeners:
                listener(held)
        return report

    def sequence(self, author: str) -> int:
        head = self.store.head(author)
        return head.sequence if head else 0

    async def wait_beyond(self, author: str, sequence: int) -> None:
        """Return once ``author``'s feed is longer than ``sequence``."""
        while self.sequence(author) <= sequence:
            await self._changed.wait()

    def history(self, author: str, since: int, limit: int | None = None) -> Iterator[tuple[bytes, float, int, str]]:
        """``(compact value JSON, received ms, sequence, id)`` of ``author`` after ``since``, a page at a time."""
        left = -1 if limit is None else limit
        while left != 0:
            page = min(PAGE, left) if left > 0 else PAGE
            rows = self.store.db.execute(
                "SELECT value, received, sequence, id FROM messages WHERE author = ? AND sequence > ? "
                "ORDER BY sequence LIMIT ?", (author, since, page)).fetchall()
            yield from rows
            if len(rows) < page:
                return
            since, left = rows[-1][2], (left - len(rows) if left > 0 else -1)

    def log_page(self, after: int) -> list[tuple[int, bytes, float, str]]:
        return self.store.db.execute(
            "SELECT seq, value, received, id FROM messages WHERE seq > ? ORDER BY seq LIMIT ?", (after, PAGE),
        ).fetchall()

    def contacts(self, author: str) -> dict[str, str]:
        """``author``'s latest stance per contact: ``follow``, ``block`` or ``none`` (ssb-friends' reading)."""
        values = (load_value(value) for (value,) in self.store.db.execute(
            "SELECT value FROM messages WHERE author = ? AND type = 'contact' ORDER BY sequence", (author,)))
        return {dest: "block" if state.blocking else "follow" if state.following else "none"
                for (_, dest), state in contact_edges(values).items()}

    def blob_refs(self) -> set[str]:
        """Every ``&…sha256`` id mentioned in the content of a stored public message."""
        refs: set[str] = set()
        for (value,) in self.store.db.execute("SELECT value FROM messages WHERE type IS NOT NULL"):
            refs.update(ref.decode() for ref in BLOB_REF.findall(value))
        return refs


def load_value(value: bytes) -> Any:
    """A stored value (its compact V8 JSON); orjson refuses the one thing it may hold that orjson cannot
    read, a lone surrogate (which JS peers accept and ssblab stores as they do), so that goes to ``json``."""
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return json.loads(value)


def wire_record(value: bytes, received: float, msg_id: str, keys: bool) -> Any:
    """What createHistoryStream sends: the value, or ``{key, value, timestamp}`` with ``keys``."""
    parsed = load_value(value)
    return {"key": msg_id, "value": parsed, "timestamp": received} if keys else parsed
