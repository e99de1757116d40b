"""One tangle (a thread, or a ``content.tangles`` entry): its trDAG checks, Lamport depths and causal order.

A tangle is built from rows of the ``tangle_edges`` table (:mod:`ssblab.core.schema`): a message's parents
are the ``parent`` values of its rows, or the root alone when it has none (a reply with ``root`` and no
``branch``). Seed 001 defines a trDAG: one root without outgoing edges; every new message links to the heads
(messages nobody links to yet) it knows, so its links are the transitive reduction of the DAG at that time; no
link points outside the DAG. :func:`check_tangle` reports each way a tangle breaks that, naming the messages.

Strategy: everything is computed over the messages that are present. A link to a missing message is reported
(``TangleReport.missing``), never guessed: the messages that depend on it get no depth (their Lamport timestamp
is unknown), and the order leaves the link out. Ancestor sets are Python ints used as bitsets over a
topological numbering, so the checks stay quadratic at worst in the thread's size, with small constants.

Two orders. :func:`causal_sort` is a topological sort that takes, of the messages whose parents are all placed,
the one with the smallest receive time, then claimed time, then the *greatest* id (ssb-sort sorts ids
descending). :func:`ssb_sort` is exactly what ssb-sort 1.1 returns: ``Array.prototype.sort`` (V8's TimSort,
:mod:`ssblab.tangles.jssort`) with its comparator (ancestry first, then receive time, claimed time, id
descending). The two agree whenever that comparator is a total order, which holds when times agree with the
links and in many contradicting cases too (a reply claiming an earlier time than its parent with nothing
claimed in between). Otherwise (say a reply older than its parent, and a concurrent message claimed between
them) the comparator is not transitive, ssb-sort's answer depends on the input order and may put a reply
before its parent (it did so for two thirds of random threads with random times); :func:`ssb_sort` reproduces
it for interop, :func:`causal_sort` stays causal.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ssblab.tangles.jssort import js_sort

__all__ = [
    "Tangle",
    "TangleReport",
    "causal_sort",
    "check_tangle",
    "heads",
    "lamport_depths",
    "ssb_sort",
    "tangle_from_edges",
]


@dataclass(frozen=True)
class Tangle:
    """The present messages of one tangle and their links.

    Attributes:
        name: ``thread`` for root/branch, else the key under ``content.tangles``.
        root: the root's id (present or not).
        parents: every member but the root -> the ids it links to (possibly missing ones).
        timestamps: claimed time of each present message (the root's only when it is present).
        received: receive time of present messages, when the source has it (ssb-sort orders by it first).
    """

    name: str
    root: str
    parents: Mapping[str, tuple[str, ...]]
    timestamps: Mapping[str, float]
    received: Mapping[str, float] = field(default_factory=dict)

    @property
    def has_root(self) -> bool:
        return self.root in self.timestamps


def tangle_from_edges(
    rows: Iterable[Mapping[str, Any]],
    root: str,
    *,
    name: str = "thread",
    root_timestamp: float | None = None,
    received: Mapping[str, float] | None = None,
) -> Tangle:
    """The tangle ``(name, root)`` from ``tangle_edges`` rows (other tangles' rows are skipped).

    Args:
        rows: mappings with the table's columns ``id``, ``timestamp``, ``tangle``, ``root``, ``parent``.
        root: the root message's id.
        name: the tangle's name.
        root_timestamp: the root's claimed time; None when the root message is not in the data.
        received: receive times by id, when known.
    """
    parents: dict[str, list[str]] = {}
    timestamps: dict[str, float] = {} if root_timestamp is None else {root: float(root_timestamp)}
    for row in rows:
        if row["tangle"] != name or row["root"] != root or row["id"] == root:
            continue
        links = parents.setdefault(row["id"], [])
        if row["parent"] is not None and row["parent"] not in links:
            links.append(row["parent"])
        timestamps[row["id"]] = float(row["timestamp"])
    frozen = {m: tuple(links) or (root,) for m, links in parents.items()}
    seen = {m: received[m] for m in timestamps if m in received} if received else {}
    return Tangle(name, root, frozen, timestamps, seen)


@dataclass(frozen=True)
class TangleReport:
    """How a tangle meets the trDAG rules of seed 001 (empty fields: the rule holds).

    Attributes:
        root_present: the root message is in the data.
        missing: a linked message that is not present -> the present messages linking to it.
        unplaced: present messages on a link cycle (impossible with real hashes: forged or broken data).
        redundant: ``(message, parent)`` links to a parent that another parent already descends from (not
            the transitive reduction).
        missed_heads: message -> heads of the messages claimed to be older that it does not descend from
            (it did not link to all the heads "known at the time"; concurrent replies do this legitimately).
    """

    root_present: bool
    missing: Mapping[str, tuple[str, ...]]
    unplaced: tuple[str, ...]
    redundant: tuple[tuple[str, str], ...]
    missed_heads: Mapping[str, tuple[str, ...]]

    @property
    def is_trdag(self) -> bool:
        """True when every rule holds."""
        return self.root_present and not (self.missing or self.unplaced or self.redundant or self.missed_heads)


def _topological(tangle: Tangle) -> list[str]:
    """Present messages in causal order (ssb-sort's tie-breaks); links to missing messages are left out."""
    present = tangle.timestamps
    children: dict[str, list[str]] = {}
    waiting: dict[str, int] = {}
    for m in present:
        known = {p for p in tangle.parents.get(m, ()) if p in present and p != m}
        waiting[m] = len(known)
        for p in known:
            children.setdefault(p, []).append(m)
    use_received = bool(present) and all(m in tangle.received for m in present)

    def key(m: str) -> tuple[float, float, _Descending]:
        return (tangle.received[m] if use_received else 0.0, present[m], _Descending(m))

    ready = [key(m) for m, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        m = heapq.heappop(ready)[2].id
        order.append(m)
        for child in children.get(m, ()):
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, key(child))
    return order


@dataclass(frozen=True, order=False)
class _Descending:
    """An id that sorts backwards, as ssb-sort's last tie-break does."""

    id: str

    def __lt__(self, other: _Descending) -> bool:
        return self.id > other.id


def causal_sort(tangle: Tangle) -> list[str]:
    """The present messages, each after everything it links to; ties broken as ssb-sort does.

    Messages on a link cycle cannot be placed and are left out (:func:`check_tangle` lists them).

    Examples:
        >>> t = Tangle("thread", "%r", {"%a": ("%r",), "%b": ("%r",)}, {"%r": 1.0, "%a": 2.0, "%b": 2.0})
        >>> causal_sort(t)
        ['%r', '%b', '%a']
    """
    return _topological(tangle)


def _reachable(tangle: Tangle) -> dict[str, set[str]]:
    """Each present message's present ancestors along links (cycles allowed: forged data is still answered)."""
    present = tangle.timestamps
    found: dict[str, set[str]] = {}
    for m in present:
        seen: set[str] = set()
        stack = [p for p in tangle.parents.get(m, ()) if p in present]
        while stack:
            p = stack.pop()
            if p not in seen:
                seen.add(p)
                stack.extend(q for q in tangle.parents.get(p, ()) if q in present)
        found[m] = seen
    return found


def ssb_sort(tangle: Tangle, order: Sequence[str] | None = None) -> list[str]:
    """The present messages exactly as ssb-sort 1.1 orders them, given the array it gets (``order``).

    Args:
        tangle: the thread.
        order: the input array's order (present ids); default the order of ``tangle.timestamps``. It matters
            only when the comparator is not a total order (see the module docstring).

    Examples:
        >>> t = Tangle("thread", "%r", {"%a": ("%r",), "%b": ("%a",)}, {"%r": 5.0, "%a": 9.0, "%b": 1.0})
        >>> ssb_sort(t), causal_sort(t)
        (['%r', '%a', '%b'], ['%r', '%a', '%b'])
    """
    ids = list(tangle.timestamps) if order is None else [m for m in order if m in tangle.timestamps]
    ancestors = _reachable(tangle)
    stamps, received = tangle.timestamps, tangle.received

    def compare(a: str, b: str) -> float:
        if b in ancestors[a]:
            return 1
        if a in ancestors[b]:
            return -1
        if a in received and b in received and received[a] != received[b]:
            return received[a] - received[b]  # JS: undefined - undefined is NaN, which falls through
        if stamps[a] != stamps[b]:
            return stamps[a] - stamps[b]
        return -1 if a > b else 1 if a < b else 0

    return js_sort(ids, compare)


def _ancestors(tangle: Tangle, order: list[str]) -> dict[str, int]:
    """Each placed message's ancestors (present ones), as a bitset over positions in ``order``."""
    bit = {m: 1 << i for i, m in enumerate(order)}
    found: dict[str, int] = {}
    for m in order:
        mask = 0
        for p in tangle.parents.get(m, ()):
            if p in bit:
                mask |= bit[p] | found[p]
        found[m] = mask
    return found


def lamport_depths(tangle: Tangle) -> dict[str, int]:
    """Depth of each message whose ancestry is all present: 0 for the root, else 1 + its parents' maximum.

    A message that links (directly or not) to a missing one has no depth here: it is unknown, not guessed.
    """
    depths: dict[str, int] = {}
    if tangle.has_root:
        depths[tangle.root] = 0
    for m in _topological(tangle):
        if m == tangle.root:
            continue
        links = tangle.parents.get(m, ())
        if links and all(p in depths for p in links):
            depths[m] = 1 + max(depths[p] for p in links)
    return depths


def heads(tangle: Tangle) -> list[str]:
    """Present messages that no present message links to, sorted (ssb-sort's ``heads``); several = concurrent."""
    linked = {p for m in tangle.timestamps for p in tangle.parents.get(m, ())}
    return sorted(m for m in tangle.timestamps if m not in linked)


def check_tangle(tangle: Tangle) -> TangleReport:
    """Check the trDAG rules of seed 001 and say which messages break which."""
    present = tangle.timestamps
    missing: dict[str, list[str]] = {}
    for m in present:
        for p in tangle.parents.get(m, ()):
            if p not in present:
                missing.setdefault(p, []).append(m)
    order = _topological(tangle)
    placed = set(order)
    ancestors = _ancestors(tangle, order)
    bit = {m: 1 << i for i, m in enumerate(order)}
    redundant = [
        (m, p)
        for m in order
        for p in tangle.parents.get(m, ())
        if p in bit and any(q != p and q in bit and ancestors[q] & bit[p] for q in tangle.parents.get(m, ()))
    ]
    return TangleReport(
        root_present=tangle.has_root,
        missing={p: tuple(sorted(ms)) for p, ms in sorted(missing.items())},
        unplaced=tuple(sorted(m for m in present if m not in placed)),
        redundant=tuple(redundant),
        missed_heads=_missed_heads(tangle, order, ancestors, bit),
    )


def _missed_heads(
    tangle: Tangle, order: list[str], ancestors: Mapping[str, int], bit: Mapping[str, int]
) -> dict[str, tuple[str, ...]]:
    """For each message, the heads among messages claimed older than it that it does not descend from."""
    by_time = sorted(order, key=lambda m: (tangle.timestamps[m], m))
    open_heads: set[str] = set()
    missed: dict[str, tuple[str, ...]] = {}
    for m in by_time:
        skipped = sorted(h for h in open_heads if not ancestors[m] & bit[h] and tangle.timestamps[h] <
                         tangle.timestamps[m])
        if skipped:
            missed[m] = tuple(skipped)
        open_heads -= {p for p in tangle.parents.get(m, ())}
        open_heads.add(m)
    return missed
