"""The local engine's longest paths: tangle depths and causal depths on Arrow, numpy and scipy.

Strategy: both are longest paths in a DAG, computed by one topological pass (`longest_paths`): Kahn's algorithm
a level at a time, vectorised, where a node's level is the longest chain of dependencies below it. Messages are
numbered once (Arrow's ``index_in``), the links become a sparse matrix, and each level is one row slice of it.
What a pass cannot place is on a cycle, or depends on one: forged data, which raises `CausalError`.

Invariants: the answers equal the Spark transforms' of `ssblab.tangles.spark` row for row (tests/tangles run both
on the same data): a tangle's depths are its longest paths from its root over the members reachable from it; a
message's causal depth is its longest chain of references (its run's predecessor included), and it is complete
when nothing below it is ``lost``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ssblab.tangles.clocks import CausalError

__all__ = ["causal_depths", "longest_paths", "tangle_depths"]

_SEP = "\x00"  # joins a tangle's name, its root and a message id into one key (none of them holds it)


def longest_paths(count: int, parents: np.ndarray, children: np.ndarray,
                  flags: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Depths of ``count`` nodes under ``parents[i] -> children[i]`` links: 0 for a node without parents, else
    1 + its parents' largest; and ``flags`` or-ed down the links (a flag reaches everything that depends on it).

    Returns the depths (-1 for a node on a cycle, or below one) and the propagated flags.
    """
    from scipy.sparse import csr_matrix

    below = csr_matrix((np.ones(len(parents), dtype=bool), (parents, children)), shape=(count, count))
    below.sum_duplicates()
    waiting = np.bincount(below.indices, minlength=count)
    flagged = np.zeros(count, dtype=bool) if flags is None else flags.copy()
    depths = np.full(count, -1, dtype=np.int64)
    level, ready = 0, np.flatnonzero(waiting == 0)
    while ready.size:
        depths[ready] = level
        reached = below[ready]
        flagged[below[ready[flagged[ready]]].indices] = True
        np.subtract.at(waiting, reached.indices, 1)
        candidates = np.unique(reached.indices)
        ready = candidates[waiting[candidates] == 0]
        level += 1
    return depths, flagged


def _keys(*columns: Any) -> Any:
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(*columns, _SEP)


def _place(values: Any, among: Any) -> np.ndarray:
    import pyarrow.compute as pc

    return pc.index_in(values, value_set=among).to_numpy(zero_copy_only=False)


def tangle_depths(links: Any) -> Any:
    """``tangle, root, id, depth`` for every root and every member reachable from it, over ``links`` (``tangle,
    root, id, parent``, `ssblab.tangles.queries.links_sql`), as an Arrow table.

    Raises:
        CausalError: a cycle reachable from a root (forged data).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    tangle, root, child, parent = (links[c].combine_chunks() for c in ("tangle", "root", "id", "parent"))
    groups = pa.concat_arrays([tangle, tangle, tangle]), pa.concat_arrays([root, root, root])
    members = pa.concat_arrays([child, parent, root])
    keys = _keys(groups[0], groups[1], members)
    nodes = pc.unique(keys)
    count = len(nodes)
    # One more node above every root: what a breadth-first search from it reaches is what has a depth.
    tops = np.unique(_place(_keys(tangle, root, root), nodes))
    sources = np.concatenate([_place(_keys(tangle, root, parent), nodes), np.full(len(tops), count)])
    targets = np.concatenate([_place(_keys(tangle, root, child), nodes), tops])
    graph = csr_matrix((np.ones(len(sources), dtype=bool), (sources, targets)), shape=(count + 1, count + 1))
    reached = np.zeros(count + 1, dtype=bool)
    reached[breadth_first_order(graph, count, directed=True, return_predecessors=False)] = True
    kept = reached[sources[: len(child)]]
    depths, _ = longest_paths(count, sources[: len(child)][kept], targets[: len(child)][kept])
    inside = np.flatnonzero(reached[:count])
    if (depths[inside] < 0).any():
        raise CausalError(f"tangle depths: a cycle of links below the root of {_cyclic(nodes, inside, depths)}")
    first = _place(nodes, keys)[inside]
    return pa.table({"tangle": groups[0].take(first), "root": groups[1].take(first), "id": members.take(first),
                     "depth": pa.array(depths[inside], pa.int64())})


def _cyclic(nodes: Any, inside: np.ndarray, depths: np.ndarray) -> str:
    """The tangle (name and root) of the first node left without a depth."""
    name, root, _ = nodes[int(inside[depths[inside] < 0][0])].as_py().split(_SEP)
    return f"tangle {name!r} {root} (forged data)"


def causal_depths(positions: Any, references: Any) -> Any:
    """``id, author, sequence, depth, complete`` of every message of ``positions`` (`positions_sql`), along
    ``references`` (``id, ref``, both present: `present_references_sql`), as an Arrow table.

    Raises:
        CausalError: a reference cycle (forged data).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = positions["id"].combine_chunks()
    after = pc.is_valid(positions["prev"])
    parents = np.concatenate([_place(references["ref"], ids), _place(positions["prev"].filter(after), ids)])
    children = np.concatenate([_place(references["id"], ids), np.flatnonzero(after.to_numpy(zero_copy_only=False))])
    lost = positions["lost"].to_numpy(zero_copy_only=False).astype(bool)
    depths, incomplete = longest_paths(positions.num_rows, parents, children, lost)
    if (depths < 0).any():
        stuck = sorted(ids.take(np.flatnonzero(depths < 0)).to_pylist())
        raise CausalError(f"causal depths: {len(stuck)} messages are on a reference cycle or below one (forged "
                          f"data), such as {', '.join(stuck[:3])}")
    return pa.table({"id": ids, "author": positions["author"], "sequence": positions["sequence"],
                     "depth": pa.array(depths, pa.int64()), "complete": pa.array(~incomplete)})
