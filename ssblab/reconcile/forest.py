"""The replication forest over depth buckets (seed 001, "Tree Structure").

Strategy. Depths ``1 .. m`` (the root, depth 0, is agreed in advance) are split into one perfect binary tree
per set bit of ``m``, largest first: ``m = 23 = 10111b`` gives trees over depths 1-16, 17-20, 21-22 and 23.
Every tree node is a :class:`Span` of depths ``[lo, lo + size)`` with ``size`` a power of two, its children
are the two halves, a leaf is one depth. Smaller trees cover the newest depths, where differences are
likely, so the search reaches them in fewer rounds; there are at most ``log2(m) + 1`` trees and the tallest
has ``log2(m) + 1`` levels.

:class:`DepthIndex` holds one side's keyed hashes per depth and prefix sums of the aggregates, so any span's
aggregate costs O(1) after an O(n) build.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssblab.reconcile.aggregate import Aggregate, SessionKey, aggregate_of
from ssblab.reconcile.dag import Node, TrDag

__all__ = ["DepthIndex", "Span", "forest_roots"]


@dataclass(frozen=True, order=True)
class Span:
    """The tree node over depths ``[lo, lo + size)``."""

    lo: int
    size: int

    @property
    def is_leaf(self) -> bool:
        return self.size == 1

    def children(self) -> tuple[Span, Span]:
        half = self.size // 2
        return Span(self.lo, half), Span(self.lo + half, half)


def forest_roots(m: int) -> tuple[Span, ...]:
    """The roots of the replication forest over depths ``1 .. m``, one per set bit of ``m``, largest first."""
    roots, lo = [], 1
    for bit in reversed(range(m.bit_length())):
        if m >> bit & 1:
            roots.append(Span(lo, 1 << bit))
            lo += 1 << bit
    return tuple(roots)


@dataclass(frozen=True)
class DepthIndex:
    """One side's messages under the session key, grouped by depth."""

    hashes: dict[int, tuple[bytes, ...]]  # depth -> sorted keyed hashes
    by_hash: dict[bytes, Node]
    prefix: tuple[Aggregate, ...]  # prefix[d] = aggregate of depths 1 .. d

    @classmethod
    def build(cls, dag: TrDag, key: SessionKey) -> DepthIndex:
        by_hash: dict[bytes, Node] = {}
        grouped: dict[int, list[bytes]] = {}
        for depth, nodes in dag.by_depth().items():
            if depth == 0:
                continue
            hs = [key.digest(n.id) for n in nodes]
            by_hash.update(zip(hs, nodes, strict=True))
            grouped[depth] = sorted(hs)
        prefix = [Aggregate(0, 0)]
        for depth in range(1, dag.max_depth + 1):
            prefix.append(prefix[-1].union(aggregate_of(grouped.get(depth, ()))))
        return cls({d: tuple(hs) for d, hs in grouped.items()}, by_hash, tuple(prefix))

    @property
    def max_depth(self) -> int:
        return len(self.prefix) - 1

    def span(self, span: Span) -> Aggregate:
        """The aggregate of the depths in ``span`` (depths beyond this side's maximum are empty)."""
        top = min(span.lo + span.size - 1, self.max_depth)
        lo = min(span.lo - 1, top)
        return self.prefix[top].minus(self.prefix[lo])

    def above(self, depth: int) -> Aggregate:
        """The aggregate of every depth greater than ``depth``: phase 1's tail."""
        return self.prefix[-1].minus(self.prefix[min(depth, self.max_depth)])

    def at(self, depth: int) -> tuple[bytes, ...]:
        return self.hashes.get(depth, ())
