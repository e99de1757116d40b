"""The follow graph packed for iterative algorithms: numbered feeds, edges as sparse matrices or int32 arrays.

Why: PageRank and hops run a few to ten rounds over the same million edges. As DataFrame joins each round
hashes and shuffles the feed-id strings again, and per-round Spark overhead (planning, shuffles, pickled rows,
a hundred small tasks) dominated: 5 s per PageRank iteration on 1,000,000 edges here. Packed, a round is a sparse
matrix-vector product over numbered edges, in one of two places:
- on the driver (`LocalEdges`), when the graph has at most ``local_limit`` edges (default `LOCAL_EDGES`: 24
  bytes an edge in two sparse matrices, and while packing the edges' id strings, about 1 GB at the default). A
  round then costs milliseconds instead of a Spark job (0.3 to 1 s here, whatever the data), and a hops level
  reads only the frontier's edges when it has few (`EdgeKind.reached`), so a traversal that has reached nearly
  everyone stops after a few products;
- in Spark (``blocks``) when the graph is bigger: every partition's edges are one row of int32 arrays (Arrow
  moves them as a few buffers), one block per core, where the product is a ``bincount``; a hops level is one
  shuffle-free job with the frontier broadcast, a PageRank iteration one such job with the rank shares broadcast
  (a barrier stage adding up the partial vectors with ``allGather`` took longer: its synchronisation costs more
  than a job here).

Invariants: feed numbers are positions in ``PackedGraph.ids`` (sorted); exactly one of ``local`` and ``blocks`` is
set; blocks are cached and materialised once by :func:`pack_graph` (call ``unpersist`` to free them); results are
exact and the same on both paths: the same sums, in another order (PageRank differs in the last bits only);
numpy, pandas and pyspark are imported inside functions, so ``import ssblab.graph`` needs only the core
dependencies.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from pyspark.sql import DataFrame

__all__ = ["LOCAL_EDGES", "EdgeKind", "LocalEdges", "PackedGraph", "pack_graph", "packed_components", "packed_hops",
           "packed_offers", "packed_pagerank", "packed_with_blocks"]

BLOCK_SCHEMA = "src binary, dst binary, weight binary"
LOCAL_EDGES = 5_000_000  # graphs up to this many edges are iterated on the driver
UNREACHED = -(2**31)  # a feed's hops value before the traversal decides it


@dataclass(frozen=True)
class EdgeKind:
    """The edges of one kind (follow, block or unfollow) as two sparse 0/1 matrices (CSR, float64).

    ``by_source[s, t]`` and ``by_target[t, s]`` are 1 for each edge ``s -> t``. Why both: a step from a few feeds
    reads their rows of ``by_source`` (the edges they have, nothing else); a step from many is one product with
    ``by_target``, a C loop over all edges (under a millisecond for a million here, where gathering and masking
    the same edges in numpy took ten times longer).
    """

    by_source: Any
    by_target: Any

    @classmethod
    def of(cls, src: np.ndarray, dst: np.ndarray, feeds: int) -> EdgeKind:
        import numpy as np
        from scipy.sparse import csr_matrix

        by_source = csr_matrix((np.ones(len(src)), (src, dst)), shape=(feeds, feeds))
        by_source.data[:] = 1.0  # a repeated edge is one edge (the constructor adds them up)
        return cls(by_source, by_source.transpose().tocsr())

    def reached(self, marked: np.ndarray) -> np.ndarray:
        """Per feed, whether an edge of this kind comes to it from a ``marked`` feed (booleans)."""
        import numpy as np

        rows = np.flatnonzero(marked)
        starts = self.by_source.indptr
        if 8 * int((starts[rows + 1] - starts[rows]).sum()) < self.by_source.nnz:  # few edges: read them
            hit = np.zeros(len(marked), dtype=bool)
            hit[self.by_source[rows].indices] = True
            return hit
        return self.by_target @ marked.astype(np.float64) > 0  # type: ignore[no-any-return]


@dataclass(frozen=True)
class LocalEdges:
    """The edges on the driver: feed ids as an object array (a fast ``take``) and the edges by kind."""

    names: np.ndarray
    follows: EdgeKind
    blocks: EdgeKind
    unfollows: EdgeKind

    @classmethod
    def from_numbers(cls, names: tuple[str, ...], src: np.ndarray, dst: np.ndarray,
                     weight: np.ndarray) -> LocalEdges:
        import numpy as np

        def kind(code: int) -> EdgeKind:
            chosen = weight == code
            return EdgeKind.of(src[chosen], dst[chosen], len(names))

        return cls(np.array(names, dtype=object), kind(FOLLOW), kind(BLOCK), kind(UNFOLLOW))

    def kinds(self) -> tuple[tuple[int, EdgeKind], ...]:
        """``(weight code, edges)`` for each kind, in `from_numbers`' order."""
        return ((FOLLOW, self.follows), (BLOCK, self.blocks), (UNFOLLOW, self.unfollows))


@dataclass(frozen=True)
class PackedGraph:
    """Feed ids by number and the numbered edges (``src, dst, weight``), on the driver or cached in Spark."""

    ids: tuple[str, ...]
    edges: int
    local: LocalEdges | None = None
    blocks: DataFrame | None = None
    index: dict[str, int] = field(init=False, repr=False)  # feed id -> number

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", _numbers(self.ids))

    def unpersist(self) -> None:
        if self.blocks is not None:
            self.blocks.unpersist()


def _numbers(ids: tuple[str, ...]) -> dict[str, int]:
    return {feed: k for k, feed in enumerate(ids)}


def _arrays(row: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    return tuple(np.frombuffer(row[c], dtype=np.int32) for c in ("src", "dst", "weight"))  # type: ignore[return-value]


def pack_graph(edges: DataFrame, vertices: DataFrame | None = None, *, local_limit: int = LOCAL_EDGES) -> PackedGraph:
    """Number the feeds and pack ``edges`` (``src, dst`` and optionally ``weight``; follows when absent).

    Args:
        edges: the edges; without a ``weight`` column every edge is a follow.
        vertices: ``id`` of feeds to number even without edges (PageRank counts them).
        local_limit: pack on the driver when there are at most this many edges, else in Spark (0: always Spark).
    """
    from pyspark.sql import functions as F

    if "weight" not in edges.columns:
        edges = edges.withColumn("weight", F.lit(FOLLOW))
    edges = edges.select("src", "dst", F.col("weight").cast("int"))
    count = edges.count()
    if count <= local_limit:
        return _pack_local(edges, vertices)
    return _pack_blocks(edges, vertices)


def _pack_local(edges: DataFrame, vertices: DataFrame | None) -> PackedGraph:
    """One Arrow collect of the edges (and vertices); the numbering in pandas, the matrices in scipy."""
    import numpy as np
    import pandas as pd

    table: Any = edges.toPandas()
    names = [table["src"], table["dst"]]
    if vertices is not None:
        names.append(vertices.select("id").toPandas()["id"])
    ids = pd.Index(pd.unique(pd.concat(names, ignore_index=True))).sort_values()
    src = ids.get_indexer(table["src"]).astype(np.int32)
    dst = ids.get_indexer(table["dst"]).astype(np.int32)
    weight = table["weight"].to_numpy(np.int32)
    names_tuple = tuple(ids.tolist())
    local = LocalEdges.from_numbers(names_tuple, src, dst, weight)
    return PackedGraph(names_tuple, len(table), local=local)


def _pack_blocks(edges: DataFrame, vertices: DataFrame | None) -> PackedGraph:
    """The edges as numpy blocks cached in Spark, one per core, for graphs too big for the driver."""
    import numpy as np
    import pandas as pd
    from pyspark.sql import functions as F

    spark = edges.sparkSession
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
    blocks = spread.mapInPandas(pack, BLOCK_SCHEMA).cache()
    count = int(blocks.select(F.sum(F.length("src"))).first()[0] or 0) // 4  # materialises the cache
    lookup.unpersist()
    return PackedGraph(ids, count, blocks=blocks)


def _summed(graph: PackedGraph, per_block: Any, vector: np.ndarray) -> np.ndarray:
    """Run ``per_block(src, dst, weight, vector) -> float64 array`` on every block; the sum of the results."""
    import numpy as np
    import pandas as pd

    assert graph.blocks is not None
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

    On the driver, one sparse matrix-vector product per iteration. In Spark, one shuffle-free job per
    iteration: the driver broadcasts each feed's share (its rank over its follows), every block returns its
    partial flow vector, the driver adds them up.
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

    if graph.local is not None:
        followed_by = graph.local.follows.by_target
        out = np.diff(graph.local.follows.by_source.indptr).astype(np.float64)

        def flow_of(share: np.ndarray) -> np.ndarray:
            return followed_by @ share  # type: ignore[no-any-return]
    else:
        out = _summed(graph, out_degree, np.zeros(0))

        def flow_of(share: np.ndarray) -> np.ndarray:
            return _summed(graph, passed, share)

    follows_nobody = out == 0
    ranks = np.full(n, 1.0 / n)
    for _ in range(iterations):
        share = np.divide(ranks, out, out=np.zeros(n), where=~follows_nobody)
        ranks = damping * (flow_of(share) + ranks[follows_nobody].sum() / n) + (1.0 - damping) / n
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

    assert graph.blocks is not None
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


def packed_hops(graph: PackedGraph, root: str, max_hops: int) -> dict[str, int]:
    """ssb-friends' ``{feed: hops}`` from ``root`` on a graph packed on the driver (`LocalEdges`).

    The rules are `ssblab.graph.traversal`'s, level by level: ``+level`` for a follow by an expanding feed at
    ``level - 1``, ``-level`` for its block or for an unfollow by one at ``level - 2``, positive winning the tie,
    already decided feeds kept. A level is one `EdgeKind.reached` per kind of edge; the traversal stops once
    every feed is decided.
    """
    import numpy as np

    local = _on_driver(graph, "packed_hops")
    start = graph.index.get(root)
    if start is None:
        return {root: 0}
    n = len(graph.ids)
    value = np.full(n, UNREACHED, dtype=np.int32)
    value[start] = 0
    for level in range(1, max_hops + 2):
        unreached = value == UNREACHED
        if not unreached.any():
            break
        positive = np.zeros(n, dtype=bool)
        negative = np.zeros(n, dtype=bool)
        if level - 1 < max_hops:  # feeds at level - 1 expand: their follows and blocks count
            previous = value == level - 1
            positive = local.follows.reached(previous)
            negative |= local.blocks.reached(previous)
        if 0 <= level - 2 < max_hops:  # and the unfollows of feeds at level - 2
            negative |= local.unfollows.reached(value == level - 2)
        value[positive & unreached] = level
        value[negative & ~positive & unreached] = -level
    found = np.flatnonzero(value != UNREACHED)
    return dict(zip(local.names[found].tolist(), value[found].tolist(), strict=True))


def packed_components(graph: PackedGraph, *, strong: bool = False) -> np.ndarray:
    """The component number of every feed (by feed number) in the follow graph, on a driver-packed graph.

    Weakly connected (follows taken as undirected) by default, strongly connected (feeds that reach each other
    along follows) with ``strong``; scipy's linear-time ``csgraph.connected_components``. The numbers only
    group feeds (deterministic for one graph, with no order to them).
    """
    from scipy.sparse.csgraph import connected_components

    local = _on_driver(graph, "packed_components")
    _, labels = connected_components(local.follows.by_source, directed=True,
                                     connection="strong" if strong else "weak")
    return labels  # type: ignore[no-any-return]


def _on_driver(graph: PackedGraph, name: str) -> LocalEdges:
    if graph.local is None:
        raise ValueError(f"{name} needs a graph packed on the driver (pack_graph with local_limit >= edges)")
    return graph.local


def packed_with_blocks(graph: PackedGraph, blocks: Iterable[tuple[str, str]]) -> PackedGraph:
    """A driver-packed graph with each ``(blocker, blocked)`` pair's edge replaced by a block (self-blocks are
    ignored), as `ssblab.graph.moderation.with_blocks` does to the edges; feeds new to the graph are numbered in."""
    import numpy as np

    local = _on_driver(graph, "packed_with_blocks")
    pairs = sorted({(a, b) for a, b in blocks if a != b})
    ids = tuple(sorted(set(graph.ids).union(*pairs)))
    index = _numbers(ids)
    renumber = np.array([index[feed] for feed in graph.ids], dtype=np.int32)
    coo = [(kind.by_source.tocoo(), code) for code, kind in local.kinds()]
    src = np.concatenate([renumber[m.row] for m, _ in coo])
    dst = np.concatenate([renumber[m.col] for m, _ in coo])
    weight = np.concatenate([np.full(m.nnz, code, dtype=np.int32) for m, code in coo])
    blocker = np.array([index[a] for a, _ in pairs], dtype=np.int32)
    blocked = np.array([index[b] for _, b in pairs], dtype=np.int32)
    width = np.int64(len(ids))
    kept = ~np.isin(src * width + dst, blocker * width + blocked)  # the pairs' old edges make way for the blocks
    src, dst = np.concatenate([src[kept], blocker]), np.concatenate([dst[kept], blocked])
    weight = np.concatenate([weight[kept], np.full(len(pairs), BLOCK, dtype=np.int32)])
    return PackedGraph(ids, len(src), local=LocalEdges.from_numbers(ids, src, dst, weight))
