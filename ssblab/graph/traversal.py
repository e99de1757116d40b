"""Hops on Spark with the numbers of ssb-friends 4.4, from many roots at once, level by level with joins.

Strategy: ssb-friends' answer is the order-free fixpoint of its metric (`ssblab.friends.hops` states the rules and
its tests check the fixpoint with hypothesis), so it can be built by absolute value instead of with a heap. A feed
gets ``+a`` when a feed at ``a - 1`` that expands (``0 <= h < max``) follows it, and ``-a`` when an expanding feed
at ``a - 1`` blocks it or one at ``a - 2`` unfollows it; the smallest ``|value|`` wins and ``+a`` beats ``-a``.
Every candidate for ``|value| = a`` comes from feeds with a smaller, already final, absolute value, so level ``a``
is one join of the level ``a - 1`` and ``a - 2`` frontiers with the edges, minus the feeds already decided, with
``max`` per feed (positive wins the tie). Levels run from 1 to ``max + 1`` (an unfollow by a feed at ``max - 1``).

Where the work happens: the edges (the big side, up to millions of rows) stay in Spark; the decided values (at
most the reached feeds per root) stay on the driver, and each level's frontier is broadcast against the edges.
That is one Spark job per non-empty level: per-job overhead, not data, dominates on small machines, and a
DataFrame-only loop (anti-joins, checkpoints) took several times longer here. On a packed graph
(`ssblab.graph.packed`: numbered feeds, edges as sparse matrices or int32 blocks) there is no join of feed-id
strings: on the driver a traversal takes milliseconds (`ssblab.graph.packed.packed_hops`: 4 ms against 18 s for
three hops on 1,000,000 edges, bench/graph.py), in Spark blocks a level is one shuffle-free job (3 s).

Invariants:
- the result has one row per (root, feed) the traversal reaches, the root itself at 0;
- roots never interact: the answer for many roots is the union of single-root answers (tests rely on this to
  check hundreds of random graphs in one call);
- driver memory grows with roots x reached feeds: ask for many roots on small graphs, few on big ones.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW
from ssblab.graph.packed import PackedGraph, packed_hops, packed_offers

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

def _local_frame(spark: SparkSession, rows: list[tuple[str, str, int]], names: tuple[str, str, str]) -> DataFrame:
    """A small driver-side table as a DataFrame, through Arrow: a list goes through a Python worker, which cost
    about a second per level here; Arrow stays in the JVM."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(names)).astype({names[0]: str, names[1]: str, names[2]: "int32"})
    return spark.createDataFrame(frame, f"{names[0]} string, {names[1]} string, {names[2]} int")


def _offers(edges: DataFrame, frontier: list[tuple[str, str, int]], level: int) -> list[tuple[str, str, int]]:
    """``(root, feed, hops)`` offers for ``|hops| = level`` from the frontier (feeds at ``level - 1``, ``- 2``),
    the best per (root, feed): one Spark job, the frontier broadcast against the edges."""
    from pyspark.sql import functions as F

    front = F.broadcast(_local_frame(edges.sparkSession, frontier, ("root", "feed", "hops")))
    h, w = F.col("hops"), F.col("weight")
    value = (F.when((w == FOLLOW) & (h == level - 1), F.lit(level))
             .when((w == BLOCK) & (h == level - 1), F.lit(-level))
             .when((w == UNFOLLOW) & (h == level - 2), F.lit(-level)))
    offers = (front.join(edges, front["feed"] == edges["src"])
              .select("root", F.col("dst").alias("feed"), value.alias("value")).where(F.col("value").isNotNull())
              .groupBy("root", "feed").agg(F.max("value").alias("value")))  # +level beats -level
    found: Any = offers.toPandas()
    return list(zip(found["root"], found["feed"], found["value"].astype(int).tolist(), strict=True))


def hops_table(edges: DataFrame | PackedGraph, roots: Iterable[str], max_hops: int = 3) -> dict[str, dict[str, int]]:
    """``{root: {feed: hops}}``: what ``friends.hops({start: root, max: max_hops})`` answers, for every root.

    Args:
        edges: ``src, dst, weight`` (`ssblab.graph.frames.weighted_edges`); cache it when calling more than once,
            or pack it (`ssblab.graph.packed.pack_graph`): a level is then numpy work on the driver, or one
            shuffle-free job on numpy blocks for graphs too big for the driver.
        roots: feed ids.
        max_hops: feeds at ``max_hops`` are reported but not expanded (must be >= 0).

    Raises:
        ValueError: ``max_hops`` is negative.
    """
    if max_hops < 0:
        raise ValueError(f"hops: max_hops must be >= 0 (ssb-friends' expand rule), got {max_hops}")
    if isinstance(edges, PackedGraph) and edges.local is not None:
        return {root: packed_hops(edges, root, max_hops) for root in roots}
    offers = packed_offers if isinstance(edges, PackedGraph) else _offers
    decided = {root: {root: 0} for root in roots}
    levels: list[list[tuple[str, str, int]]] = [[(root, root, 0) for root in decided]]
    for level in range(1, max_hops + 2):
        frontier = [row for a in (level - 1, level - 2) if 0 <= a < max_hops for row in levels[a]]
        new = []
        if frontier:
            new = [(root, feed, value) for root, feed, value in offers(edges, frontier, level)  # type: ignore[arg-type]
                   if feed not in decided[root]]
        for root, feed, value in new:
            decided[root][feed] = value
        levels.append([row for row in new if row[2] > 0])
    return decided


def hops_frame(edges: DataFrame | PackedGraph, roots: Iterable[str], max_hops: int = 3, *,
               spark: SparkSession | None = None) -> DataFrame:
    """`hops_table` as a ``root, feed, hops`` frame (``spark``: the session, needed for a driver-packed graph)."""
    rows = [(root, feed, value) for root, found in hops_table(edges, roots, max_hops).items()
            for feed, value in found.items()]
    if spark is None:
        frame = edges.blocks if isinstance(edges, PackedGraph) else edges
        if frame is None:
            raise ValueError("hops_frame: pass spark= for a graph packed on the driver")
        spark = frame.sparkSession
    return _local_frame(spark, rows, ("root", "feed", "hops"))


def hops(edges: DataFrame | PackedGraph, root: str, max_hops: int = 3, *,
         server_max: int | None = None) -> dict[str, int]:
    """`ssblab.friends.hops` computed on Spark: ``{feed: hops}`` for one root.

    Args:
        edges: ``src, dst, weight``, or the packed graph.
        root: the start feed.
        max_hops: the query's ``max``; 0 with ``server_max`` means the server's configured value, as in JS.
        server_max: when ``root`` is the server's own id, its configured ``friends.hops``; a smaller ``max_hops``
            then filters that traversal (see `ssblab.friends.hops`).
    """
    limit = None
    if server_max is not None:
        max_hops = max_hops or server_max
        if max_hops < server_max:
            limit, max_hops = max_hops, server_max
    found = hops_table(edges, [root], max_hops)[root]
    return found if limit is None else {feed: value for feed, value in found.items() if value <= limit}


@dataclass(frozen=True)
class Coverage:
    """One A.6 sample: how much of the root's 2-hop world the chosen peers' replication sets hold."""

    peers: tuple[str, ...]
    friends: int
    friends_covered: int
    friends_of_friends: int
    friends_of_friends_covered: int

    @property
    def friends_ratio(self) -> float:
        return self.friends_covered / self.friends if self.friends else 1.0

    @property
    def friends_of_friends_ratio(self) -> float:
        return self.friends_of_friends_covered / self.friends_of_friends if self.friends_of_friends else 1.0


def coverage(root_hops: Mapping[str, int], peer_sets: Mapping[str, Collection[str]],
             peers: Sequence[str]) -> Coverage:
    """The share of the root's friends (hop 1) and friends of friends (hop 2) that some peer replicates."""
    union: set[str] = set().union(*(peer_sets.get(peer, ()) for peer in peers))
    friends = {feed for feed, value in root_hops.items() if value == 1}
    fof = {feed for feed, value in root_hops.items() if value == 2}
    return Coverage(tuple(peers), len(friends), len(friends & union), len(fof), len(fof & union))


def overlap_experiment(edges: DataFrame | PackedGraph, root: str, *, peers: int, samples: int, rng: random.Random,
                       max_hops: int = 2, candidates: Sequence[str] | None = None) -> list[Coverage]:
    """The paper's A.6 experiment: pick ``peers`` random feeds, replicate ``max_hops`` out from each, and measure
    how much of the root's friends and friends of friends they hold; ``samples`` draws, one Spark traversal.

    Args:
        edges: ``src, dst, weight``, or the packed graph (then ``candidates`` must be given).
        root: whose friends and friends of friends are to be covered.
        peers: how many random peers per sample (the paper: 5).
        samples: how many independent draws.
        rng: the randomness (the caller seeds it).
        max_hops: how far each peer replicates (the paper: 2, friends and friends of friends).
        candidates: feeds to draw from; default `followers_of_someone` but the root.
    """
    if candidates is None:
        if isinstance(edges, PackedGraph):
            raise ValueError("overlap_experiment: pass candidates= with a packed graph")
        candidates = [feed for feed in followers_of_someone(edges) if feed != root]
    draws = [rng.sample(list(candidates), min(peers, len(candidates))) for _ in range(samples)]
    chosen = sorted({peer for draw in draws for peer in draw})
    found = hops_table(edges, [root, *chosen], max_hops)
    sets = {peer: {feed for feed, value in values.items() if 0 <= value <= max_hops} for peer, values in found.items()}
    return [coverage(found[root], sets, draw) for draw in draws]


def followers_of_someone(edges: DataFrame) -> list[str]:
    """Every feed that follows at least one feed, sorted (the A.6 experiment draws its peers from them)."""
    from pyspark.sql import functions as F

    rows = edges.where(F.col("weight") == FOLLOW).select("src").distinct().collect()
    return sorted(row["src"] for row in rows)
