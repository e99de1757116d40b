"""The follow graph packed for iterative algorithms: numbered feeds, edges as numpy blocks cached in Spark.

Why: PageRank and hops run a few to ten rounds over the same million edges. As DataFrame joins each round
hashes and shuffles the feed-id strings again, and per-round Spark overhead (planning, shuffles, pickled rows,
a hundred small tasks) dominated: 5 s per PageRank iteration on 1,000,000 edges here. Packed, every
partition's edges are one row of int32 arrays (Arrow moves them as a few buffers) and each partition does its
share with numpy (a sparse matrix-vector product is a ``bincount``). A hops level is one shuffle-free job with
the frontier broadcast, and a PageRank iteration one such job with the rank shares broadcast (a barrier stage
adding up the partial vectors with ``allGather`` took longer: its synchronisation costs more than a job here).

Invariants: feed numbers are positions in ``PackedGraph.ids`` (sorted); one block per core (Spark's default
parallelism), each holding one partition's edges; the packed frame is cached and materialised once by
:func:`pack_graph` (call ``unpersist`` to free it); results are exact: the same sums as the DataFrame versions,
in another order (PageRank differs in the last bits only); numpy, pandas and pyspark are imported inside
functions, so ``import ssblab.graph`` needs only the core dependencies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from pyspark.sql import DataFrame

__all__ = ["PackedGraph", "pack_graph", "packed_offers", "packed_pagerank"]

BLOCK_SCHEMA = "src binary, dst binary, weight binary"


@dataclass(frozen=True)
class PackedGraph:
    """Feed ids by number and the cached blocks of numbered edges (``src, dst, weight`` as int32 arrays)."""

    ids: tuple[str, ...]
    index: dict[str, int]
    blocks: DataFrame
    edges: int

    def unpersist(self) -> None:
        self.blocks.unpersist()


def _arrays(row: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    return tuple(np.frombuffer(row[c], dtype=np.int32) for c in ("src", "dst", "weight"))  # type: ignore[return-value]


def pack_graph(edges: DataFrame, vertices: DataFrame | None = None) -> PackedGraph:
    """Number the feeds and pack ``edges`` (``src, dst`` and optionally ``weight``; follows when absent).

    Args:
        edges: the edges; without a ``weight`` column every edge is a follow.
        vertices: ``id`` of feeds to number even without edges (PageRank counts them).
    """
    import numpy as np
    import pandas as pd
    from pyspark.sql import functions as F

    spark = edges.sparkSession
    if "weight" not in edges.columns:
        edges = edges.withColumn("weight", F.lit(FOLLOW))
    named = edges.select(F.col("src").alias("id")).union(edges.select(F.col("dst").alias("id")))
    if vertices is not None:
        named = named.union(vertices.select("id"))
    ids = tuple(sorted(row["id"] for row in named.distinct().collect()))
    lookup = spark.sparkContext.broadcast(pd.Index(ids))

    def pack(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        parts = [(lookup.value.get_indexer(b["src"]), lookup.value.get_indexer(b["dst"]), b["weight"].to_numpy())
                 for b in batches]
        if parts:
            src, dst, weight = (np.concatenate([p[i] for p in parts]).astype(np.int32) for i in range(3))
            yield pd.DataFrame({"src": [src.tobytes()], "dst": [dst.tobytes()], "weight": [weight.tobytes()]})

    # One block per core: every round is then one task per core (a frame made from pandas can have a hundred
    # small partitions, and each task costs a Python worker round trip).
    spread = edges.coalesce(spark.sparkContext.defaultParallelism)
    blocks = spread.select("src", "dst", F.col("weight").cast("int")).mapInPandas(pack, BLOCK_SCHEMA).cache()
    count = int(blocks.select(F.sum(F.length("src"))).first()[0] or 0) // 4  # materialises the cache
    lookup.unpersist()
    return PackedGraph(ids, {feed: k for k, feed in enumerate(ids)}, blocks, count)


def _summed(graph: PackedGraph, per_block: Any, vector: np.ndarray) -> np.ndarray:
    """Run ``per_block(src, dst, weight, vector) -> float64 array`` on every block; the sum of the results."""
    import numpy as np
    import pandas as pd

    shared = graph.blocks.sparkSession.sparkContext.broadcast(vector)

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            for row in batch.itertuples(index=False):
                out = per_block(*_arrays(row._asdict()), shared.value)
                yield pd.DataFrame({"part": [out.tobytes()]})

    parts = graph.blocks.mapInPandas(run, "part binary").collect()
    shared.destroy()
    total = np.zeros(len(graph.ids))
    for part in parts:
        total += np.frombuffer(part["part"])
    return total


def packed_pagerank(graph: PackedGraph, iterations: int = 10, damping: float = 0.85) -> np.ndarray:
    """PageRank by feed number, NetworkX's definition (see `ssblab.graph.analytics.pagerank`), follows only.

    One shuffle-free job per iteration: the driver broadcasts each feed's share (its rank over its follows),
    every block returns its partial flow vector, the driver adds them up.
    """
    import numpy as np
    n = len(graph.ids)
    if n == 0:
        return np.zeros(0)

    def out_degree(src: np.ndarray, _dst: np.ndarray, weight: np.ndarray, _: np.ndarray) -> np.ndarray:
        return np.bincount(src[weight == FOLLOW], minlength=n).astype(np.float64)

    def passed(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, share: np.ndarray) -> np.ndarray:
        follow = weight == FOLLOW
        return np.bincount(dst[follow], weights=share[src[follow]], minlength=n)

    out = _summed(graph, out_degree, np.zeros(0))
    follows_nobody = out == 0
    ranks = np.full(n, 1.0 / n)
    for _ in range(iterations):
        share = np.divide(ranks, out, out=np.zeros(n), where=~follows_nobody)
        flow = _summed(graph, passed, share)
        ranks = damping * (flow + ranks[follows_nobody].sum() / n) + (1.0 - damping) / n
    return ranks


def packed_offers(graph: PackedGraph, frontier: list[tuple[str, str, int]], level: int) -> list[tuple[str, str, int]]:
    """`ssblab.graph.traversal`'s offers for ``|hops| = level`` from ``frontier``, on the packed graph.

    The frontier's feeds go to every block as one array per column; each block keeps its edges from frontier
    feeds, values them by ssb-friends' rules and returns the best value per (root, feed) as a dense-free list.
    """
    import numpy as np
    known = [(r, f, h) for r, f, h in frontier if f in graph.index]
    if not known:
        return []
    roots = sorted({r for r, _, _ in known})
    root_number = {r: k for k, r in enumerate(roots)}
    front = np.array([(root_number[r], graph.index[f], h) for r, f, h in known], dtype=np.int64).ravel()
    best = _best_offers(graph, front, level)
    width = len(graph.ids)
    return [(roots[key // width], graph.ids[key % width], int(value)) for key, value in best.items()]


def _best_offers(graph: PackedGraph, front: np.ndarray, level: int) -> dict[int, int]:
    """``{root * feeds + feed: value}``, the best offer per pair over every block."""
    import numpy as np
    import pandas as pd

    width = len(graph.ids)
    shared = graph.blocks.sparkSession.sparkContext.broadcast(front)

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        table = shared.value.reshape(-1, 3)
        frame = pd.DataFrame({"root": table[:, 0], "src": table[:, 1], "hops": table[:, 2]})
        for batch in batches:
            for row in batch.itertuples(index=False):
                src, dst, weight = _arrays(row._asdict())
                mask = np.isin(src, frame["src"].to_numpy())
                found = frame.merge(pd.DataFrame({"src": src[mask], "dst": dst[mask], "w": weight[mask]}), on="src")
                h, w = found["hops"].to_numpy(), found["w"].to_numpy()
                value = np.select([(w == FOLLOW) & (h == level - 1), (w == BLOCK) & (h == level - 1),
                                   (w == UNFOLLOW) & (h == level - 2)], [level, -level, -level], 0)
                keys = found["root"].to_numpy() * width + found["dst"].to_numpy()
                offers = pd.Series(value, index=keys)[value != 0]
                offers = offers.groupby(level=0).max()  # +level beats -level
                yield pd.DataFrame({"key": offers.index.to_numpy(np.int64), "value": offers.to_numpy(np.int64)})

    rows: Any = graph.blocks.mapInPandas(run, "key long, value long").toPandas()
    shared.destroy()
    best = rows.groupby("key")["value"].max()
    return dict(zip(best.index.tolist(), best.tolist(), strict=True))
