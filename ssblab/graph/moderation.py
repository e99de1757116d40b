"""Moderation scenarios over the follow graph: what-if blocks, shared moderation (§6.3), resource attacks (§8.6).

Strategy: a scenario is a change to the weighted edges (``src, dst, weight``), so every answer is "hops before"
against "hops after", computed by `ssblab.graph.traversal.hops_frame` for all the viewers in one traversal each. The
comparisons and the clique ranking are pure functions over collected rows, tested without Spark.

Invariants: a new block replaces the pair's state whole, as a block message does in ssb-friends; blocks can only
shrink a replication set (a feed's positive value never improves), so ``leaving`` lists everything that changes
membership; the root's own contact decisions are never overridden by adopted blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ssblab.friends.contacts import BLOCK, FOLLOW
from ssblab.graph.packed import PackedGraph, packed_with_blocks
from ssblab.graph.traversal import hops_frame, hops_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

Change = tuple[int | None, int | None]  # (before, after); None: not reached


def with_blocks(edges: DataFrame, blocks: Iterable[tuple[str, str]]) -> DataFrame:
    """``edges`` with each ``(blocker, blocked)`` pair's state replaced by a block (self-blocks are ignored)."""
    rows = sorted({(a, b, BLOCK) for a, b in blocks if a != b})
    new = edges.sparkSession.createDataFrame(rows, "src string, dst string, weight int")
    return edges.join(new.select("src", "dst"), ["src", "dst"], "left_anti").unionByName(new)


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


def whatif(edges: DataFrame | PackedGraph, root: str, blocks: Iterable[tuple[str, str]], *, max_hops: int = 2,
           feed: str | None = None, viewers: Sequence[str] | None = None) -> WhatIf:
    """Hops before and after adding ``blocks`` (``(blocker, blocked)`` pairs, by the root or by anyone).

    Args:
        edges: ``src, dst, weight``, or a graph packed on the driver (both traversals then take milliseconds).
        root: whose replication set to compare.
        blocks: the new blocks.
        max_hops: the viewers' ``friends.hops``.
        feed: when given, also report which viewers' hop value of this feed changes.
        viewers: whose view of ``feed`` to compare; default the root and every feed it replicates before.
    """
    changed = packed_with_blocks(edges, blocks) if isinstance(edges, PackedGraph) else with_blocks(edges, blocks)
    before = hops_table(edges, [root], max_hops)[root]
    views: dict[str, Change] = {}
    if feed is None:
        return WhatIf(root, max_hops, changes(before, hops_table(changed, [root], max_hops)[root]), views)
    if viewers is None:
        viewers = [f for f, value in before.items() if is_replicated(value, max_hops)]
    everyone = sorted({root, *viewers})
    old, new = hops_table(edges, everyone, max_hops), hops_table(changed, everyone, max_hops)
    for viewer in sorted(viewers):
        if old[viewer].get(feed) != new[viewer].get(feed):
            views[viewer] = (old[viewer].get(feed), new[viewer].get(feed))
    return WhatIf(root, max_hops, changes(old[root], new[root]), views)


def trusted_peers(edges: DataFrame, root: str, min_friends: int) -> list[str]:
    """Feeds the root follows that at least ``min_friends`` of the root's other friends follow too (§6.3)."""
    from pyspark.sql import functions as F

    follows = edges.where(F.col("weight") == FOLLOW)
    friends = follows.where(F.col("src") == root).select(F.col("dst").alias("friend"))
    vouches = (follows.join(friends, follows["src"] == friends["friend"])
               .join(friends.withColumnRenamed("friend", "peer"), F.col("dst") == F.col("peer"))
               .where(F.col("src") != F.col("dst")).groupBy("peer").count())
    return sorted(row["peer"] for row in vouches.where(F.col("count") >= min_friends).collect())


@dataclass(frozen=True)
class SharedModeration:
    """The blocks the root would adopt from its trusted peers, and what adopting them changes."""

    trusted: tuple[str, ...]
    adopted: tuple[tuple[str, str], ...]  # (trusted peer, feed it blocks)
    effect: WhatIf


def shared_moderation(edges: DataFrame, root: str, *, min_friends: int, max_hops: int = 2,
                      packed: PackedGraph | None = None) -> SharedModeration:
    """Adopt the blocks of the peers `trusted_peers` picks, as if the root had published them (``packed``: the
    same edges packed on the driver, for the what-if)."""
    from pyspark.sql import functions as F

    trusted = trusted_peers(edges, root, min_friends)
    mine = edges.where(F.col("src") == root).select(F.col("dst").alias("own"))
    blocks = (edges.where((F.col("weight") == BLOCK) & F.col("src").isin(trusted) & (F.col("dst") != root))
              .join(mine, F.col("dst") == F.col("own"), "left_anti").select("src", "dst").collect())
    adopted = tuple(sorted((row["src"], row["dst"]) for row in blocks))
    effect = whatif(packed or edges, root, [(root, blocked) for _, blocked in adopted], max_hops=max_hops)
    return SharedModeration(tuple(trusted), adopted, effect)


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


def feed_activity(messages: DataFrame) -> DataFrame:
    """``author, messages, first_seen`` from the ``messages`` table (log size and creation time per feed)."""
    from pyspark.sql import functions as F

    return messages.groupBy("author").agg(F.count("*").alias("messages"), F.min("timestamp").alias("first_seen"))


def resource_attack_cliques(edges: DataFrame, activity: DataFrame, root: str, *, since: float,
                            max_hops: int = 2, min_size: int = 3, min_density: float = 0.8) -> list[Clique]:
    """Dense groups of feeds first seen at or after ``since`` (ms) within the root's ``max_hops`` reach (§8.6)."""
    from pyspark.sql import functions as F

    near = hops_frame(edges, [root], max_hops).where((F.col("hops") > 0) & (F.col("hops") <= max_hops))
    recent = (activity.join(near, activity["author"] == near["feed"]).where(F.col("first_seen") >= since)
              .select("author", "messages", "first_seen")).cache()
    ids = recent.select(F.col("author").alias("id"))
    follows = (edges.where(F.col("weight") == FOLLOW).join(ids, F.col("src") == F.col("id")).drop("id")
               .join(ids, F.col("dst") == F.col("id")).select("src", "dst"))
    back = follows.select(F.col("dst").alias("src"), F.col("src").alias("dst"))
    pairs = [(row["src"], row["dst"]) for row in follows.join(back, ["src", "dst"]).collect()]
    stats = {row["author"]: (row["messages"], row["first_seen"]) for row in recent.collect()}
    recent.unpersist()
    return rank_cliques(pairs, stats, min_size=min_size, min_density=min_density)
