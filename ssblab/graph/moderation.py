"""Moderation scenarios over the follow graph: what-if blocks, shared moderation (§6.3), resource attacks (§8.6).

Strategy: a scenario is a change to the weighted edges (``src, dst, weight``), so every answer is "hops before"
against "hops after", computed by `ssblab.graph.traversal.hops_table` on the two packed graphs for all the viewers
in one traversal each. The comparisons and the clique ranking are pure functions of those answers and of rows the
engine's queries return (`ssblab.graph.queries`), the same on both engines.

Invariants: a new block replaces the pair's state whole, as a block message does in ssb-friends; blocks can only
shrink a replication set (a feed's positive value never improves), so ``leaving`` lists everything that changes
membership; the root's own contact decisions are never overridden by adopted blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ssblab.graph.packed import PackedGraph
from ssblab.graph.traversal import hops_table

__all__ = ["Change", "Clique", "SharedModeration", "WhatIf", "changes", "is_replicated", "rank_cliques", "whatif"]

Change = tuple[int | None, int | None]  # (before, after); None: not reached


def is_replicated(value: int | None, max_hops: int) -> bool:
    """glue/replicate.js: a feed is replicated when ``0 <= hops <= max``."""
    return value is not None and 0 <= value <= max_hops


def changes(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, Change]:
    """``{feed: (before, after)}`` for every feed whose hop value differs."""
    return {feed: (before.get(feed), after.get(feed)) for feed in sorted(before.keys() | after.keys())
            if before.get(feed) != after.get(feed)}


@dataclass(frozen=True)
class WhatIf:
    """What a set of new blocks does to the root's replication and to other viewers' view of one feed."""

    root: str
    max_hops: int
    changes: dict[str, Change]  # the root's hop values that change
    views: dict[str, Change]  # viewer -> its hop value of `feed`, for viewers whose value changes

    @property
    def leaving(self) -> list[str]:
        """Feeds the root replicates now and would not after the blocks."""
        return [feed for feed, (old, new) in self.changes.items()
                if is_replicated(old, self.max_hops) and not is_replicated(new, self.max_hops)]


def whatif(before: PackedGraph, after: PackedGraph, root: str, *, max_hops: int = 2, feed: str | None = None,
           viewers: Sequence[str] | None = None) -> WhatIf:
    """Hops before and after new blocks (``after``: the graph with them, `ssblab.graph.packed.packed_with_blocks`).

    Args:
        before, after: the packed graph without and with the blocks.
        root: whose replication set to compare.
        max_hops: the viewers' ``friends.hops``.
        feed: when given, also report which viewers' hop value of this feed changes.
        viewers: whose view of ``feed`` to compare; default the root and every feed it replicates before.
    """
    old = hops_table(before, [root], max_hops)[root]
    views: dict[str, Change] = {}
    if feed is None:
        return WhatIf(root, max_hops, changes(old, hops_table(after, [root], max_hops)[root]), views)
    if viewers is None:
        viewers = [f for f, value in old.items() if is_replicated(value, max_hops)]
    everyone = sorted({root, *viewers})
    seen_before, seen_after = hops_table(before, everyone, max_hops), hops_table(after, everyone, max_hops)
    for viewer in sorted(viewers):
        if seen_before[viewer].get(feed) != seen_after[viewer].get(feed):
            views[viewer] = (seen_before[viewer].get(feed), seen_after[viewer].get(feed))
    return WhatIf(root, max_hops, changes(seen_before[root], seen_after[root]), views)


@dataclass(frozen=True)
class SharedModeration:
    """The blocks the root would adopt from its trusted peers, and what adopting them changes."""

    trusted: tuple[str, ...]
    adopted: tuple[tuple[str, str], ...]  # (trusted peer, feed it blocks)
    effect: WhatIf


@dataclass(frozen=True)
class Clique:
    """A group of recently created feeds that follow each other, with their logs' sizes (§8.6)."""

    feeds: tuple[str, ...]
    density: float  # mutual pairs / possible pairs
    messages: int  # the group's messages in all
    first_seen: float  # the newest member's first message (ms)


def rank_cliques(pairs: Iterable[tuple[str, str]], activity: Mapping[str, tuple[int, float]], *,
                 min_size: int = 3, min_density: float = 0.8) -> list[Clique]:
    """Groups of mutually following feeds (connected by mutual follows), densest-and-largest-logs first.

    Args:
        pairs: mutual follows among the candidate feeds.
        activity: ``{feed: (messages, first message time)}``.
        min_size: smallest group reported.
        min_density: smallest share of the possible mutual pairs the group must have.
    """
    parent: dict[str, str] = {}

    def find(feed: str) -> str:
        while parent.setdefault(feed, feed) != feed:
            parent[feed] = parent[parent[feed]]
            feed = parent[feed]
        return feed

    edges = [(a, b) for a, b in {tuple(sorted(p)) for p in pairs} if a != b]
    for a, b in edges:
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for feed in parent:
        groups.setdefault(find(feed), []).append(feed)
    inside = {root: 0 for root in groups}
    for a, _ in edges:
        inside[find(a)] += 1
    found = []
    for root, members in groups.items():
        n = len(members)
        density = inside[root] / (n * (n - 1) / 2) if n > 1 else 0.0
        if n >= min_size and density >= min_density:
            found.append(Clique(tuple(sorted(members)), density,
                                sum(activity.get(f, (0, 0.0))[0] for f in members),
                                max(activity.get(f, (0, 0.0))[1] for f in members)))
    return sorted(found, key=lambda c: (-c.messages, -c.density, c.feeds))
