"""Connectivity and spread of random networks against the mean number of edges each peer opens (paper A.5).

Model (the paper's A.5 table, from the simulation that accompanies Tarr's notes): each of ``peers`` peers
opens ``floor(m) + Bernoulli(frac(m))`` connections to peers drawn uniformly from the whole swarm (itself
included, a harmless self-loop), so ``m`` is the mean number of edges a peer opens and need not be whole.
A message starts at peer 0 and spreads one hop per round.

Metrics per ``m``, over ``trials`` independent networks:

* ``p_connected``: the fraction of networks in which every peer is reachable from peer 0;
* ``mean`` / ``stdev``: the number of breadth-first rounds from peer 0 until a round reaches no new peer,
  which is the eccentricity of peer 0 (within its component) plus one. That final, empty round is counted
  because the paper's table counts it (its row for ``m = 20`` reads 4 where peer 0's eccentricity is 3).
  ``stdev`` is the population standard deviation (``ddof=0``), as in the paper (its ``m = 10`` row,
  0.4918, is exactly ``sqrt(0.59 * 0.41)`` for a mean of 4.59).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ssblab.sim._graph import adjacency, bfs_distances, check_fractions, check_positive, coerce_rng

__all__ = ["PAPER_EDGES", "random_network_trial", "random_network_trials", "simulate_random_networks"]

#: The mean edges per peer of the rows of the paper's A.5 table.
PAPER_EDGES: tuple[float, ...] = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 3.0, 5.0, 10.0, 20.0)


def _random_edges(peers: int, mean_edges: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Edge endpoints: peer ``i`` opens ``floor(m)`` connections, one more with probability ``frac(m)``."""
    whole = int(np.floor(mean_edges))
    counts = whole + (rng.random(peers) < mean_edges - whole)
    src = np.repeat(np.arange(peers), counts)
    dst = rng.integers(0, peers, size=src.size)
    return src, dst


def random_network_trials(
    peers: int, mean_edges: float, trials: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``trials`` networks at once: whether each is connected, and its breadth-first rounds from peer 0.

    The networks are laid side by side as blocks of one graph, plus a virtual source joined to each
    block's peer 0; one breadth-first search from it gives every block's distances shifted by one hop,
    since no shortest path from the source re-enters it.
    """
    src, dst = zip(*(_random_edges(peers, mean_edges, rng) for _ in range(trials)), strict=True)
    offsets = [np.full(s.size, t * peers) for t, s in enumerate(src)]
    origins = np.arange(trials) * peers
    source = trials * peers
    all_src = np.concatenate([*src, np.full(trials, source)]) + np.concatenate([*offsets, np.zeros(trials, int)])
    all_dst = np.concatenate([*dst, np.zeros(trials, int)]) + np.concatenate([*offsets, origins])
    dist = bfs_distances(adjacency(source + 1, all_src, all_dst), source)[:source].reshape(trials, peers)
    return (dist > 0).all(axis=1), dist.max(axis=1)  # max(dist) - 1 + 1: eccentricity + the empty round


def random_network_trial(peers: int, mean_edges: float, rng: np.random.Generator) -> tuple[bool, int]:
    """One network: whether it is connected, and the breadth-first rounds from peer 0 (eccentricity + 1)."""
    connected, rounds = random_network_trials(peers, mean_edges, 1, rng)
    return bool(connected[0]), int(rounds[0])


def simulate_random_networks(
    edges: Iterable[float] = PAPER_EDGES,
    *,
    peers: int = 1000,
    trials: int = 100,
    rng: np.random.Generator | int,
) -> pd.DataFrame:
    """Reproduce the A.5 table: P(connected) and the rounds to cover the network, per mean edges per peer.

    Args:
        edges: mean number of connections each peer opens (one row each); the paper's values by default.
        peers: swarm size (the paper: 1,000).
        trials: independent networks per row (the paper: 100).
        rng: a ``numpy.random.Generator`` or an integer seed.

    Returns:
        One row per ``edges`` value with columns ``edges, p_connected, mean, stdev, trials`` and, for
        tests that need the sampling distribution, ``rounds`` (the per-trial values, an int array).

    Raises:
        SimulationParameterError: for non-positive sizes, counts or edge means.

    Examples:
        >>> df = simulate_random_networks([20], peers=200, trials=5, rng=1)
        >>> float(df.loc[0, "p_connected"])
        1.0
    """
    where = "simulate_random_networks"
    values = check_fractions(where, "edges", edges)
    check_positive(where, peers=peers, trials=trials)
    gen = coerce_rng(rng, where)
    rows = []
    for m in values:
        # batches of about a million connections keep memory flat at any ``edges`` and ``trials``
        batch = max(1, min(trials, 1_000_000 // (peers * (int(m) + 1))))
        parts = [random_network_trials(peers, m, min(batch, trials - t), gen) for t in range(0, trials, batch)]
        connected = np.concatenate([c for c, _ in parts])
        rounds = np.concatenate([r for _, r in parts]).astype(np.int64)
        rows.append(
            {
                "edges": m,
                "p_connected": float(connected.mean()),
                "mean": float(rounds.mean()),
                "stdev": float(rounds.std(ddof=0)),
                "trials": trials,
                "rounds": rounds,
            }
        )
    return pd.DataFrame(rows)
