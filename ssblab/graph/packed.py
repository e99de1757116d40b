"""The follow graph packed for iterative algorithms: numbered feeds, edges by kind as sparse matrices.

Why: PageRank and hops run a few to ten rounds over the same million edges. As joins, each round hashes and
shuffles the feed-id strings again, and per-round engine overhead dominated (5 s per PageRank iteration on
1,000,000 edges as Spark joins here). Packed, a round is a sparse matrix-vector product over numbered edges:
milliseconds on one machine (`LocalEdges`, about 24 bytes an edge). Both engines answer on a packed graph: the
local engine packs from Arrow (`pack_arrays`), the Spark engine collects the edges (up to
`ssblab.graph.spark.LOCAL_EDGES`) or keeps them in Spark as numpy blocks beyond (`Remote`), where a round is one
shuffle-free job. A level of hops reads only the frontier's edges when it has few (`EdgeKind.reached`), so a
traversal that has reached nearly everyone stops after a few products.

Invariants: feed numbers are positions in ``PackedGraph.ids`` (sorted, so smaller numbers are smaller ids);
exactly one of ``local`` and ``remote`` is set; results are exact and the same on both: the same sums (PageRank
over remote blocks adds partial vectors in another order: the last bits may differ); numpy and scipy are imported
inside functions, so ``import ssblab.graph`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW
from ssblab.graph.errors import GraphError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EdgeKind", "LocalEdges", "PackedGraph", "Remote", "canonical_components", "pack_arrays",
           "packed_components", "packed_hops", "packed_motifs", "packed_offers", "packed_pagerank", "packed_path",
           "packed_triangles", "packed_with_blocks"]

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
        starts = self.by_source.indptr[rows]
        lengths = self.by_source.indptr[rows + 1] - starts
        total = int(lengths.sum())
        if 8 * total < self.by_source.nnz:  # few edges: read them, straight from the CSR arrays
            hit = np.zeros(len(marked), dtype=bool)
            offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
            hit[self.by_source.indices[offsets]] = True
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


class Remote(Protocol):
    """Edges kept where the engine holds them (Spark blocks): the three per-round operations the algorithms need,
    each one job, by feed number."""

    def out_degrees(self) -> np.ndarray:
        """Each feed's follow count (float64)."""
        ...

    def flow(self, share: np.ndarray) -> np.ndarray:
        """Per feed, the sum of ``share`` over the feeds that follow it (float64)."""
        ...

    def offers(self, front: np.ndarray, level: int) -> dict[int, int]:
        """``{root * feeds + feed: value}``: hops' best offer per pair for ``|hops| = level`` from a frontier of
        ``(root, feed, hops)`` rows (int64, flattened)."""
        ...

    def release(self) -> None:
        """Free what the engine holds."""
        ...


@dataclass(frozen=True)
class PackedGraph:
    """Feed ids by number and the numbered edges (``src, dst, weight``), here or in the engine."""

    ids: tuple[str, ...]
    edges: int
    local: LocalEdges | None = None
    remote: Remote | None = None
    index: dict[str, int] = field(init=False, repr=False)  # feed id -> number

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", _numbers(self.ids))

    def release(self) -> None:
        if self.remote is not None:
            self.remote.release()


def _numbers(ids: tuple[str, ...]) -> dict[str, int]:
    return {feed: k for k, feed in enumerate(ids)}


def pack_arrays(src: Sequence[str] | Any, dst: Sequence[str] | Any, weight: Sequence[int] | Any,
                feeds: Sequence[str] | Any = ()) -> PackedGraph:
    """Number the feeds (those of the edges and ``feeds``, sorted) and pack the edges here.

    Args:
        src, dst: the edges' ends (lists, numpy or Arrow string arrays).
        weight: each edge's ssb-friends weight (1 follow, -1 block, -2 cleared).
        feeds: more feeds to number, with or without edges (PageRank counts them).
    """
    import numpy as np
    import pandas as pd

    src, dst = pd.Series(np.asarray(src, dtype=object)), pd.Series(np.asarray(dst, dtype=object))
    named = pd.concat([src, dst, pd.Series(np.asarray(feeds, dtype=object))], ignore_index=True)
    ids = pd.Index(pd.unique(named)).sort_values()
    numbers = tuple(ids.tolist())
    local = LocalEdges.from_numbers(numbers, ids.get_indexer(src).astype(np.int32),
                                    ids.get_indexer(dst).astype(np.int32), np.asarray(weight, dtype=np.int32))
    return PackedGraph(numbers, len(src), local=local)


def packed_pagerank(graph: PackedGraph, iterations: int = 10, damping: float = 0.85) -> np.ndarray:
    """PageRank by feed number, NetworkX's definition, over the follows only.

    Each feed passes ``damping`` of its rank to the feeds it follows, in equal shares; the rank of feeds who follow
    nobody is spread over all feeds; the values sum to 1 after every iteration. Here one sparse matrix-vector
    product per iteration; remote, one shuffle-free job (`Remote.flow`).
    """
    import numpy as np

    n = len(graph.ids)
    if n == 0:
        return np.zeros(0)
    if graph.local is not None:
        followed_by = graph.local.follows.by_target
        out = np.diff(graph.local.follows.by_source.indptr).astype(np.float64)

        def flow_of(share: np.ndarray) -> np.ndarray:
            return followed_by @ share  # type: ignore[no-any-return]
    else:
        remote = _remote(graph)
        out, flow_of = remote.out_degrees(), remote.flow
    follows_nobody = out == 0
    ranks = np.full(n, 1.0 / n)
    for _ in range(iterations):
        share = np.divide(ranks, out, out=np.zeros(n), where=~follows_nobody)
        ranks = damping * (flow_of(share) + ranks[follows_nobody].sum() / n) + (1.0 - damping) / n
    return ranks


def _remote(graph: PackedGraph) -> Remote:
    assert graph.remote is not None  # exactly one of local and remote is set
    return graph.remote


def packed_offers(graph: PackedGraph, frontier: list[tuple[str, str, int]], level: int) -> list[tuple[str, str, int]]:
    """Hops' offers for ``|hops| = level`` from ``frontier`` (``root, feed, hops`` rows) on remote edges: the best
    value per (root, feed) (`ssblab.graph.traversal` states the rules)."""
    import numpy as np

    known = [(r, f, h) for r, f, h in frontier if f in graph.index]
    if not known:
        return []
    roots = sorted({r for r, _, _ in known})
    root_number = {r: k for k, r in enumerate(roots)}
    front = np.array([(root_number[r], graph.index[f], h) for r, f, h in known], dtype=np.int64).ravel()
    best = _remote(graph).offers(front, level)
    width = len(graph.ids)
    return [(roots[key // width], graph.ids[key % width], int(value)) for key, value in best.items()]


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
    along follows) with ``strong``, by scipy's linear-time ``csgraph.connected_components``. The numbers only
    group feeds (deterministic for one graph, with no order to them).

    Weak components start with the giant one, as a follow graph usually has one: a breadth-first sweep from the
    best-connected feed, along follows both ways, that stops when every feed with an edge to another is reached
    (NetworkX stops so too; scipy would first build the symmetric matrix, half again the edges). The feeds it
    leaves have no edge to it, so scipy numbers them on their own subgraph.
    """
    import numpy as np
    from scipy.sparse.csgraph import connected_components

    follows = _on_driver(graph, "packed_components").follows
    if strong:
        return connected_components(follows.by_source, directed=True, connection="strong")[1]  # type: ignore[no-any-return]
    reverse = EdgeKind(follows.by_target, follows.by_source)
    out, into = np.diff(follows.by_source.indptr), np.diff(follows.by_target.indptr)
    if not follows.by_source.nnz:
        return np.arange(len(out))
    first = follows.by_source.indices[np.minimum(follows.by_source.indptr[:-1], follows.by_source.nnz - 1)]
    follows_itself_only = (out == 1) & (into == 1) & (first == np.arange(len(out)))
    seen = np.zeros(len(out), dtype=bool)
    seen[int(np.argmax(out + into))] = True
    frontier, left = seen.copy(), int(np.count_nonzero((out + into > 0) & ~follows_itself_only)) - 1
    while left > 0 and frontier.any():
        frontier = (follows.reached(frontier) | reverse.reached(frontier)) & ~seen
        seen |= frontier
        left -= int(np.count_nonzero(frontier))
    labels = np.zeros(len(seen), dtype=np.int64)
    rest = np.flatnonzero(~seen)
    if len(rest):
        inside = follows.by_source[rest][:, rest]
        labels[rest] = 1 + connected_components(inside, directed=True, connection="weak")[1]
    return labels


def _on_driver(graph: PackedGraph, name: str) -> LocalEdges:
    if graph.local is None:
        raise GraphError(f"{name} needs a graph packed here, not one kept in Spark blocks")
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


def packed_path(graph: PackedGraph, source: str, target: str, max_length: int) -> list[str] | None:
    """The lexicographically smallest of the shortest chains of follows from ``source`` to ``target`` (at most
    ``max_length`` follows), or None. The smallest, so that every engine names the same chain.

    One breadth-first search back from ``target`` gives each feed's distance to it; the chain then steps, from
    ``source``, to the smallest-numbered (smallest-id) feed one step closer.
    """
    import numpy as np
    from scipy.sparse.csgraph import shortest_path

    if source == target:
        return [source]
    local = _on_driver(graph, "packed_path")
    if source not in graph.index or target not in graph.index:
        return None
    to_target = shortest_path(local.follows.by_target, unweighted=True, indices=graph.index[target])
    here = graph.index[source]
    if not np.isfinite(to_target[here]) or to_target[here] > max_length:
        return None
    chain = [here]
    while chain[-1] != graph.index[target]:
        step = local.follows.by_source[chain[-1]].indices
        chain.append(int(step[to_target[step] == to_target[chain[-1]] - 1].min()))
    return [graph.ids[k] for k in chain]


def canonical_components(labels: np.ndarray) -> np.ndarray:
    """Component labels renumbered 0, 1, … in the order of each component's smallest feed number, so that every
    engine (and every run) labels the same components alike."""
    import numpy as np

    _, first = np.unique(labels, return_index=True)
    order = np.argsort(first)
    renumber = np.empty(len(order), dtype=np.int64)
    renumber[order] = np.arange(len(order))
    return renumber[np.unique(labels, return_inverse=True)[1]]


def _follow_matrix(graph: PackedGraph, name: str) -> Any:
    """The follows as a 0/1 CSR matrix without self-follows."""
    follows = _on_driver(graph, name).follows.by_source.copy()
    follows.setdiag(0)
    follows.eliminate_zeros()
    return follows


def packed_triangles(graph: PackedGraph) -> np.ndarray:
    """How many triangles of the undirected follow graph each feed is in."""
    import numpy as np

    follows = _follow_matrix(graph, "packed_triangles")
    both = ((follows + follows.T) > 0).astype(np.float64).tocsr()
    return np.asarray((both @ both).multiply(both).sum(axis=1)).ravel().astype(np.int64) // 2


def packed_motifs(graph: PackedGraph) -> dict[str, int]:
    """Counts of the directed motifs of `ssblab.graph.spark.MOTIFS`, each instance once: ``mutual_pairs`` (two
    feeds following each other), ``follow_cycles`` (a -> b -> c -> a) and ``feed_forward`` (a follows b and c, b
    follows c)."""
    follows = _follow_matrix(graph, "packed_motifs")
    two_steps = follows @ follows
    return {
        "mutual_pairs": int(follows.multiply(follows.T).sum()) // 2,
        "follow_cycles": int((two_steps @ follows).diagonal().sum()) // 3,
        "feed_forward": int(two_steps.multiply(follows).sum()),
    }
