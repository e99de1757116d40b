"""Epidemic broadcast trees against flooding: bandwidth, latency, repair of a failed tree edge (paper A.9).

The paper gives no table for A.9, only the mechanism and a three-peer example (A.8/A.9): flooding a triangle
costs 4 transmissions where 2 are necessary, and a broken tree edge is repaired in one round trip. This
module measures the same quantities on the A.8 networks (:func:`~ssblab.sim.flooding.join_order_network`).

Model, in hop units (every transmission takes one unit):

* Tree formation. With equal link latencies a peer first hears a message from a neighbour one hop closer
  to the origin, so the eager edges EBT keeps form a breadth-first spanning tree; among equally close
  neighbours the first arrival is a coin toss (``rng``). Every other connection is lazy.
* Steady state. A message travels the tree (``peers - 1`` full transmissions, the same arrival times as
  flooding); each peer, on receiving it, sends a *note* on each lazy connection (2 per lazy connection),
  so ``notes = flood_msgs - (peers - 1)``. Bytes use the paper's sizes (A.11): 660 per message, 60 per note.
* Failure. The tree edge from the origin to its largest subtree breaks (the worst case the paper names:
  "close to the root"). A pure tree cuts that subtree off. In EBT a cut-off peer hears a note from a lazy
  neighbour that has the message, asks for it and receives it: 3 units after that neighbour got it
  (note, request, message: one round trip more than flooding would take on that edge). Arrival times are
  shortest paths with eager tree edges weighing 1 and lazy edges 3 (``scipy`` Dijkstra).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from ssblab.sim._graph import adjacency, bfs_distances, check_positive, coerce_rng
from ssblab.sim.flooding import join_order_network

__all__ = ["LAZY_REPAIR_COST", "MESSAGE_BYTES", "NOTE_BYTES", "ebt_trial", "simulate_ebt"]

#: Average message size in bytes (paper A.11).
MESSAGE_BYTES = 660
#: Vector clock element ("note") size in bytes (paper A.11).
NOTE_BYTES = 60
#: Hop units from a lazy neighbour having the message to the peer having it: note, request, message.
LAZY_REPAIR_COST = 3


def _bfs_tree(lo: np.ndarray, hi: np.ndarray, dist: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Parent of each peer in a breadth-first tree (``-1`` for the origin), ties broken at random."""
    src = np.concatenate([lo, hi])
    dst = np.concatenate([hi, lo])
    closer = dist[src] == dist[dst] - 1
    src, dst = src[closer], dst[closer]
    order = np.lexsort((rng.random(dst.size), dst))
    first = np.ones(order.size, dtype=bool)
    first[1:] = dst[order][1:] != dst[order][:-1]
    parent = np.full(dist.size, -1, dtype=np.int64)
    parent[dst[order][first]] = src[order][first]
    return parent


def _top_branch(parent: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """For each peer, its ancestor one hop from the origin (the origin maps to itself)."""
    top = np.arange(parent.size)
    for level in range(2, int(dist.max()) + 1):
        at = np.flatnonzero(dist == level)
        top[at] = top[parent[at]]
    return top


def _without_edge(lo: np.ndarray, hi: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The edge list minus the connection ``a -- b``."""
    keep = ~(((lo == a) & (hi == b)) | ((lo == b) & (hi == a)))
    return lo[keep], hi[keep]


def _ebt_arrival(peers: int, lo: np.ndarray, hi: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """EBT arrival times and Dijkstra predecessors: eager tree edges cost 1, lazy ones a note round trip."""
    src = np.concatenate([lo, hi])
    dst = np.concatenate([hi, lo])
    eager = parent[dst] == src
    weight = np.where(eager, 1, LAZY_REPAIR_COST).astype(float)
    graph = coo_matrix((weight, (src, dst)), shape=(peers, peers)).tocsr()
    arrival, pred = dijkstra(graph, directed=True, indices=0, return_predecessors=True)
    return np.asarray(arrival), np.asarray(pred)


def ebt_trial(peers: int, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> dict[str, float]:
    """Flooding and EBT on one connected network of distinct edges ``lo < hi``, origin peer 0."""
    dist = bfs_distances(adjacency(peers, lo, hi), 0)
    parent = _bfs_tree(lo, hi, dist, rng)
    tree = np.flatnonzero(parent >= 0)
    tree_dist = bfs_distances(adjacency(peers, parent[tree], tree), 0)
    flood_msgs = 2 * lo.size - (peers - 1)
    notes = 2 * (lo.size - tree.size)
    top = _top_branch(parent, dist)
    branch_sizes = np.bincount(top[tree], minlength=peers)
    broken = int(np.argmax(branch_sizes))
    left_lo, left_hi = _without_edge(lo, hi, int(parent[broken]), broken)
    arrival, pred = _ebt_arrival(peers, left_lo, left_hi, parent)
    flood_after = bfs_distances(adjacency(peers, left_lo, left_hi), 0)
    cut = top == broken
    cut[0] = False
    reached = np.isfinite(arrival)
    delay = arrival[cut & reached] - dist[cut & reached]
    extra_round_trips = (arrival[cut & reached] - flood_after[cut & reached]) / 2
    return {
        "flood_msgs": flood_msgs,
        "ebt_msgs": tree.size,
        "ebt_notes": notes,
        "flood_bytes": flood_msgs * MESSAGE_BYTES,
        "ebt_bytes": tree.size * MESSAGE_BYTES + notes * NOTE_BYTES,
        "flood_latency": int(dist.max()),
        "ebt_latency": int(tree_dist.max()),
        "flood_avg": float(dist[1:].mean()),
        "ebt_avg": float(tree_dist[1:].mean()),
        "cut_off_tree": int(cut.sum()),
        "cut_off_ebt": int((~reached).sum()),
        "repairs": int((cut & reached & (pred != parent)).sum()),
        "repair_delay_max": float(delay.max()) if delay.size else 0.0,
        "repair_delay_mean": float(delay.mean()) if delay.size else 0.0,
        "repair_round_trips_max": float(extra_round_trips.max()) if delay.size else 0.0,
    }


def simulate_ebt(
    ks: Iterable[int] = (2, 3, 5, 10, 20),
    *,
    peers: int = 1000,
    trials: int = 10,
    rng: np.random.Generator | int,
) -> pd.DataFrame:
    """EBT spanning trees against flooding on the A.8 networks, per connections per peer ``K``.

    Args:
        ks: connections opened per peer (the A.8 model); ``K = 1`` is already a tree and has no lazy edge.
        peers: network size (A.8 uses 1,000).
        trials: independent networks per ``K``.
        rng: a ``numpy.random.Generator`` or an integer seed.

    Returns:
        One row per (``K``, trial) with the columns of :func:`ebt_trial` plus ``K, peers, trial`` and
        ``bandwidth_ratio = ebt_bytes / flood_bytes``. Latencies are in hops (time of the last arrival).

    Raises:
        SimulationParameterError: for non-positive sizes or counts.

    Examples:
        >>> row = simulate_ebt([3], peers=200, trials=1, rng=0).iloc[0]
        >>> bool(row["ebt_latency"] == row["flood_latency"]), int(row["ebt_msgs"])
        (True, 199)
    """
    where = "simulate_ebt"
    ks = tuple(int(k) for k in ks)
    check_positive(where, peers=peers - 1, trials=trials)
    for k in ks:
        check_positive(where, K=k)
    gen = coerce_rng(rng, where)
    rows = []
    for k in ks:
        for t in range(trials):
            lo, hi = join_order_network(peers, k, gen)
            rows.append({"K": k, "peers": peers, "trial": t, **ebt_trial(peers, lo, hi, gen)})
    df = pd.DataFrame(rows)
    df["bandwidth_ratio"] = df["ebt_bytes"] / df["flood_bytes"]
    return df
