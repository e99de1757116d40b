"""The replica store: SQLite in WAL mode, one transaction per batch of appends.

Invariants, each kept by a single transaction: a message row exists only if it validated against the feed's head
at the time; the ``feeds`` row of an author is always the last message stored for it; a fork's evidence and the
stop it causes are written together. A ``kill -9`` at any moment therefore leaves either the whole batch or none
of it, and reopening needs no repair. Messages are kept as the compact JSON of their value (the transport form JS
peers send: key order and numbers exactly as signed), next to their id, author, sequence and receive time.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from ssblab.core.encoding import encode_compact
from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, type_column
from ssblab.core.validate import FeedState, FeedValidator, Fork, ValidationReport
from ssblab.store.blobs import BlobStore
from ssblab.store.db import StoreError, open_database
from ssblab.store.received import Received

__all__ = ["BATCH", "Store", "StoreStats"]

BATCH = 2000


@dataclass(frozen=True)
class StoreStats:
    feeds: int
    messages: int
    types: dict[str, int]
    private: int
    forks: int
    blobs: int
    first_timestamp: float | None
    last_timestamp: float | None


class Store:
    """An SSB replica in a folder: ``ssblab.sqlite3`` and ``blobs/``.

    Examples:
        >>> import tempfile
        >>> from ssblab import Keypair, create_message
        >>> me = Keypair.generate(bytes(32))
        >>> with Store(tempfile.mkdtemp()) as store:
        ...     report = store.append([create_message(me, {"type": "post", "text": "hi"}, timestamp=1)])
        ...     (report.valid, store.head(me.id).sequence)
        (1, 1)
    """

    def __init__(self, path: str | Path, *, hmac_key: Any = None, strict: bool = False, create: bool = True,
                 read_only: bool = False) -> None:
        """Open (or, with ``create``, make) the store in folder ``path``.

        ``read_only`` opens an existing store for reading only (verify, export): nothing is written, so a store on
        a read-only disk works; `append` then fails with ``store-read-only``. ``strict`` refuses messages that
        break a strict JSON rule JS accepts (`ssblab.core.validate.Finding`).

        Raises:
            StoreError: the store is missing (``read_only`` or not ``create``), damaged, of another schema
                version, or not writable (`ssblab.store.db.open_database`).
        """
        self.path = Path(path)
        self.hmac_key = hmac_key
        self.strict = strict  # refuse messages that break a strict JSON rule JS accepts (`validate.Finding`)
        self.read_only = read_only
        self.db = open_database(self.path, read_only=read_only, create=create)
        try:
            self.validator = self._new_validator()
        except (sqlite3.DatabaseError, TypeError) as exc:
            self.db.close()
            raise StoreError(f"{self.path}: the feeds or forks table is damaged ({exc})", code="store-corrupt"
                             ) from None
        self.blobs = BlobStore(self.path / "blobs", create=not read_only)
        self.native = FeedValidator(hmac_key)  # bendy-butt and buttwoo feeds: verified and counted, not stored

    def _new_validator(self) -> FeedValidator:
        """Validator state rebuilt from what is committed (at open, and after a failed batch)."""
        heads = [FeedState(*row) for row in self.db.execute("SELECT author, sequence, id, timestamp FROM feeds")]
        stopped = {
            author: InvalidMessage(Rule.FORK, f"forked at sequence {seq}", author=author, sequence=seq)
            for author, seq in self.db.execute("SELECT author, min(sequence) FROM forks GROUP BY author")
        }
        return FeedValidator(self.hmac_key, heads, history=self._id_at, stopped=stopped, strict=self.strict)

    def _id_at(self, author: str, sequence: int) -> str | None:
        row = self.db.execute(
            "SELECT id FROM messages WHERE author = ? AND sequence = ?", (author, sequence)
        ).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------------------------

    def append(
        self,
        messages: Iterable[Message | Received],
        *,
        on_batch: Callable[[int], None] | None = None,
    ) -> ValidationReport:
        """Validate and store messages in log order, a transaction per batch.

        Returns the report of this call: valid (stored), duplicates, invalid messages with their rules, forks.
        A feed stops at its first invalid message; other feeds go on. Messages of the newer feed formats are
        verified in their feeds' order and counted (``report.formats``), but not stored: the store holds
        classic feeds.
        """
        if self.read_only:
            raise StoreError(f"{self.path} was opened read-only: nothing can be appended", code="store-read-only")
        self.validator.report = ValidationReport(heads=self.validator.report.heads)
        self.native.report = ValidationReport(heads=self.native.report.heads)
        items = iter(messages)
        while batch := list(islice(items, BATCH)):
            try:
                self._append_batch(batch)
            except sqlite3.DatabaseError as exc:  # a disk gone read-only or full: the batch rolled back
                self.validator = self._new_validator()
                raise _write_error(self.path, exc) from None
            except BaseException:
                self.validator = self._new_validator()  # the batch rolled back: forget what it advanced
                raise
            if on_batch:
                on_batch(len(batch))
        report, native = self.validator.report, self.native.report
        report.checked += native.checked
        report.errors += native.errors
        report.duplicates += native.duplicates
        report.formats = native.formats
        report.findings += native.findings
        return report

    def _append_batch(self, batch: list[Message | Received]) -> None:
        validator, now = self.validator, time.time() * 1000
        rows, forks_before = [], len(validator.report.forks)
        touched: dict[str, FeedState] = {}
        for item in batch:
            received = item if isinstance(item, Received) else Received("", item)
            if received.error is not None:
                validator.reject(received.error)
                continue
            if received.skipped is not None:
                validator.skip(received.skipped)
                continue
            if received.native is not None:
                self.native.push(received.native)
                continue
            msg = received.message
            assert msg is not None
            if validator.push(msg, received.finding, proven=received.proven):
                rows.append(_row(msg, received.received or now, received.plain))
                touched[msg.author] = validator.report.heads[msg.author]
        new_forks = validator.report.forks[forks_before:]
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("INSERT INTO messages (id, author, sequence, received, type, value) "
                                "VALUES (?, ?, ?, ?, ?, ?)", rows)
            self.db.executemany("INSERT OR REPLACE INTO feeds VALUES (?, ?, ?, ?)",
                                [(h.author, h.sequence, h.id, h.timestamp) for h in touched.values()])
            self.db.executemany("INSERT OR IGNORE INTO forks VALUES (?, ?, ?, ?, ?, ?)",
                                [_fork_row(f, now) for f in new_forks])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    # -- reading ------------------------------------------------------------------------------------------------

    def head(self, author: str) -> FeedState | None:
        return self.validator.report.heads.get(author)

    def heads(self) -> dict[str, FeedState]:
        return dict(self.validator.report.heads)

    def get(self, msg_id: str) -> Message | None:
        row = self.db.execute("SELECT value FROM messages WHERE id = ?", (msg_id,)).fetchone()
        return Message.from_json(row[0]) if row else None

    def feed(self, author: str, since: int = 0, limit: int | None = None) -> Iterator[Message]:
        """The messages of one feed with sequence > ``since``, in order (createHistoryStream)."""
        for (value,) in self.db.execute(
            "SELECT value FROM messages WHERE author = ? AND sequence > ? ORDER BY sequence LIMIT ?",
            (author, since, -1 if limit is None else limit),
        ):
            yield Message.from_json(value)

    def log(self, since: int = 0) -> Iterator[tuple[int, bytes, float]]:
        """``(local_seq, compact_value_json, received_ms)`` in local log order."""
        yield from self.db.execute(
            "SELECT seq, value, received FROM messages WHERE seq > ? ORDER BY seq", (since,)
        )

    def rows(self) -> Iterator[tuple[int, str, str, int, bytes, float]]:
        """``(local_seq, id, author, sequence, compact_value_json, received_ms)`` in local log order."""
        yield from self.db.execute("SELECT seq, id, author, sequence, value, received FROM messages ORDER BY seq")

    def forks(self) -> list[Fork]:
        return [
            Fork(author, seq, known, Message.from_json(value))
            for author, seq, known, value in self.db.execute(
                "SELECT author, sequence, known_id, conflicting_value FROM forks ORDER BY found"
            )
        ]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM messages").fetchone()[0])

    def stats(self) -> StoreStats:
        types = Counter(dict(self.db.execute(
            "SELECT type, count(*) FROM messages WHERE type IS NOT NULL GROUP BY type")))
        private, first, last = self.db.execute(
            "SELECT sum(type IS NULL), min(json_extract(value, '$.timestamp')), "
            "max(json_extract(value, '$.timestamp')) FROM messages").fetchone()
        return StoreStats(
            feeds=len(self.validator.report.heads),
            messages=self.count(),
            types=dict(types.most_common()),
            private=int(private or 0),
            forks=int(self.db.execute("SELECT count(*) FROM forks").fetchone()[0]),
            blobs=sum(1 for _ in self.blobs),
            first_timestamp=first,
            last_timestamp=last,
        )


def _write_error(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    code = "store-read-only" if "readonly" in str(exc) else "store-write"
    return StoreError(f"{path}: cannot write the store ({exc}); nothing of this batch was stored", code=code)


def _row(msg: Message, received: float, plain: bool | None) -> tuple[Any, ...]:
    # The type column is an index: a lone surrogate (valid in JS) becomes U+FFFD there; the value keeps it.
    return (msg.id, msg.author, int(msg.sequence), received, type_column(msg.content),
            encode_compact(msg.value, plain=plain))


def _fork_row(fork: Fork, now: float) -> tuple[Any, ...]:
    return (fork.author, fork.sequence, fork.known_id, fork.conflicting.id,
            encode_compact(fork.conflicting.value), now)
