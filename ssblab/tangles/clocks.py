"""Vector clocks at feed checkpoints: the build side of :mod:`ssblab.tangles.causal`.

The clock of message ``(f, s)`` (feed ``f``, sequence ``s``) maps each *other* feed ``h`` to the highest sequence
of ``h`` that the message depends on, through any chain of references. Since every feed is a chain (``previous``),
depending on ``(h, t)`` means depending on all of ``h`` up to ``t``, so the clock describes the ancestor set
exactly. The index keeps the clocks of *checkpoints* only (a feed's first message and every sequence divisible by
``every``), each stored as the entries that rose since the feed's previous checkpoint.

Strategy: messages are admitted in a causal order. A new message's clock is its predecessor's clock merged
(element-wise max) with each referenced message's clock and position. Merging needs dense clocks (one int32 per
feed) of older messages: each feed's latest one is kept, the last ``window`` ones too; an older one (rare:
references mostly point at recent messages) is rebuilt from its checkpoint and the references made since.

Invariants: an own-feed entry is never stored (same-feed order is the sequence); a stored row is never mutated.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ssblab.core.errors import SsbError

__all__ = [
    "FEED_BITS",
    "MAX_FEEDS",
    "MAX_SEQUENCE",
    "SEQ_BITS",
    "CausalError",
    "CausalMessage",
    "ClockBuilder",
    "Log",
    "Row",
    "Rows",
    "StoredCheckpoint",
    "causal_order",
    "checkpoint_at",
]

# Bit layout of the sorted search key: feed (21 bits) | other feed (21 bits) | sequence (21 bits).
FEED_BITS = 21
SEQ_BITS = 21
MAX_FEEDS = 2**FEED_BITS
MAX_SEQUENCE = 2**SEQ_BITS - 1

Row = np.ndarray  # a dense clock: int32, one entry per feed number
# ``(feed, checkpoint sequence, width) -> row``: a checkpoint clock admitted before the current builder started.
StoredCheckpoint = Callable[[int, int, int], Row]


class CausalError(SsbError):
    """Input the causal index cannot take: a fork, a repeated id, a sequence out of range, a late message."""

    code = "causal"


@dataclass(frozen=True, slots=True)
class CausalMessage:
    """What causal order needs of a message: its place in its feed and the message ids it names.

    ``references`` are content links and tangle edges; ``previous`` is implied by ``author`` and ``sequence``.
    """

    id: str
    author: str
    sequence: int
    references: tuple[str, ...] = ()


def checkpoint_at(first: int, sequence: int, every: int) -> int:
    """The latest checkpoint of a feed at or before ``sequence`` (``first``: the feed's first indexed sequence)."""
    return max(first, sequence - sequence % every)


def causal_order(messages: Mapping[str, CausalMessage], last_seq: Mapping[str, int]) -> tuple[list[str], set[str]]:
    """Ids of ``messages`` in an order where predecessors and references come first, and the ids that wait.

    Among the messages that are ready, the one given first goes first, so input that is already in a causal
    order (a log) keeps its order, and with it the locality the builder's window relies on. A message waits
    (is left out) while its feed predecessor is in neither ``messages`` nor the index (whose highest sequence
    per feed is ``last_seq``; a feed new to the index starts at its lowest sequence in ``messages``), or when
    it sits on a reference cycle (fake data only). References to ids
    outside ``messages`` are not waited for: the caller resolves or reports them.
    """
    rank = {message_id: i for i, message_id in enumerate(messages)}
    by_place = {(m.author, m.sequence): m.id for m in messages.values()}
    start = {author: seq + 1 for author, seq in last_seq.items()}  # where each feed continues
    for m in messages.values():
        if m.author not in last_seq:  # a feed new to the index starts at its lowest sequence here
            start[m.author] = min(start.get(m.author, m.sequence), m.sequence)
    needs: dict[str, int] = {}
    waiting_on: dict[str, list[str]] = {}
    for m in messages.values():
        deps = {r for r in m.references if r in messages and r != m.id}
        before = by_place.get((m.author, m.sequence - 1))
        if before is not None:
            deps.add(before)
        elif m.sequence != start[m.author]:
            continue  # a gap before it: not admitted in this batch
        needs[m.id] = len(deps)
        for dep in deps:
            waiting_on.setdefault(dep, []).append(m.id)
    ready = [rank[i] for i, n in needs.items() if n == 0]
    heapq.heapify(ready)
    ids = list(messages)
    order: list[str] = []
    while ready:
        current = ids[heapq.heappop(ready)]
        order.append(current)
        for child in waiting_on.get(current, ()):
            if child in needs:
                needs[child] -= 1
                if needs[child] == 0:
                    heapq.heappush(ready, rank[child])
    return order, set(messages) - set(order)


@dataclass(frozen=True)
class Log:
    """The admitted messages by position (a causal order), as plain lists for fast scalar access.

    Append-only: indexes of different sizes may share one log, each reading only its first positions.
    """

    feed: list[int]
    sequence: list[int]
    ref_start: list[int]  # references of position p: ref_pos[ref_start[p] : ref_start[p + 1]]
    ref_pos: list[int]
    feed_positions: dict[int, list[int]]  # feed -> positions of its messages, in sequence order
    first: dict[int, int]  # feed -> its first indexed sequence

    def position(self, feed: int, sequence: int) -> int:
        return self.feed_positions[feed][sequence - self.first[feed]]

    def references(self, position: int) -> list[int]:
        return self.ref_pos[self.ref_start[position] : self.ref_start[position + 1]]


@dataclass(frozen=True)
class Rows:
    """Dense clocks kept from one build to the next: each feed's latest message (with its position) and latest
    checkpoint, and the last ``window`` messages by position."""

    latest: Mapping[int, tuple[int, Row]] = field(default_factory=dict)
    marks: Mapping[int, Row] = field(default_factory=dict)
    recent: Mapping[int, Row] = field(default_factory=dict)


class ClockBuilder:
    """Scratch state of one build or extension: computes clocks in causal order, hands out checkpoint deltas."""

    def __init__(self, log: Log, width: int, rows: Rows, stored: StoredCheckpoint, every: int, window: int) -> None:
        self.log, self.width, self.every, self.window = log, width, every, window
        # Rows made before feeds were added are narrower: they are widened on use.
        self.current = dict(rows.latest)
        self.marks = dict(rows.marks)
        self.recent = dict(rows.recent)
        self.recent_order = deque(sorted(self.recent))
        self.stored = stored
        self.checkpoints: dict[tuple[int, int], Row] = {}
        self.deltas: list[tuple[np.ndarray, Row]] = []  # per checkpoint: (search keys, values) of its rises

    def rows(self) -> Rows:
        """What to keep for the next extension."""
        return Rows(self.current, self.marks, self.recent)

    def admit(self, position: int) -> None:
        """Compute the clock of the message at ``position``; its predecessor and references come before it."""
        log = self.log
        feed, seq = log.feed[position], log.sequence[position]
        latest = self.current.get(feed)
        merged = _widen(latest[1], self.width).copy() if latest else np.zeros(self.width, dtype=np.int32)
        for ref in log.references(position):
            self._merge(merged, ref)
        merged[feed] = 0
        merged.flags.writeable = False
        self.current[feed] = (position, merged)
        self._remember(position, merged)
        if seq == log.first[feed] or seq % self.every == 0:
            before = self.marks.get(feed)  # the feed's previous checkpoint
            before = np.zeros(self.width, dtype=np.int32) if before is None else _widen(before, self.width)
            changed = np.flatnonzero(merged != before)
            keys = (changed << SEQ_BITS) | ((feed << (FEED_BITS + SEQ_BITS)) | seq)
            self.deltas.append((keys.astype(np.int64), merged[changed]))
            self.checkpoints[(feed, seq)] = merged
            self.marks[feed] = merged

    def _merge(self, into: Row, position: int, rows: Mapping[int, Row] | None = None) -> None:
        other = self.log.feed[position]
        np.maximum(into, self.row(position) if rows is None else rows[position], out=into)
        into[other] = max(int(into[other]), self.log.sequence[position])

    def checkpoint_row(self, feed: int, sequence: int) -> Row:
        row = self.checkpoints.get((feed, sequence))
        return row if row is not None else self.stored(feed, sequence, self.width)

    def _kept(self, position: int) -> Row | None:
        hit = self.recent.get(position)
        if hit is not None:
            return _widen(hit, self.width)  # kept before feeds were added: narrower
        latest = self.current.get(self.log.feed[position])
        return _widen(latest[1], self.width) if latest is not None and latest[0] == position else None

    def _since_checkpoint(self, position: int) -> tuple[int, list[int]]:
        """The checkpoint sequence below a message, and the references made after it up to the message."""
        log = self.log
        feed, seq = log.feed[position], log.sequence[position]
        start = checkpoint_at(log.first[feed], seq, self.every)
        return start, [r for s in range(start + 1, seq + 1) for r in log.references(log.position(feed, s))]

    def row(self, position: int) -> Row:
        """The dense clock of an admitted message: kept, or rebuilt from checkpoints (depth-first, no recursion)."""
        found = self._kept(position)
        if found is not None:
            return found
        rows: dict[int, Row] = {}
        stack = [position]
        while stack:
            current = stack[-1]
            if current in rows:
                stack.pop()
                continue
            start, refs = self._since_checkpoint(current)
            for ref in refs:
                kept = self._kept(ref)
                if kept is not None:
                    rows[ref] = kept
            missing = [r for r in refs if r not in rows]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            feed = self.log.feed[current]
            row = _widen(self.checkpoint_row(feed, start), self.width).copy()
            for ref in refs:
                self._merge(row, ref, rows)
            row[feed] = 0
            row.flags.writeable = False
            rows[current] = row
            self._remember(current, row)
        return rows[position]

    def _remember(self, position: int, row: Row) -> None:
        self.recent[position] = row
        self.recent_order.append(position)
        if len(self.recent_order) > self.window:
            self.recent.pop(self.recent_order.popleft(), None)


def _widen(row: Row, width: int) -> Row:
    """A row padded with zeros for feeds added since it was made."""
    if len(row) >= width:
        return row
    return np.concatenate([row, np.zeros(width - len(row), dtype=np.int32)])
