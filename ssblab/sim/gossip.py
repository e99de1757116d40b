"""Dissemination of one message by append-only gossip, round by round (paper A.3.3).

Model (the paper's A.3.3 table): ``peers`` peers, peer 0 holds a new message. In each round every peer, in
index order ``0..peers-1``, connects to one peer drawn uniformly from the swarm; if exactly one of the two
holds the message, both hold it afterwards. Connections within a round are *sequential*: a peer that
received the message earlier in the same round already passes it on. That is why the paper's first round
reaches 9 peers rather than 1 or 2.

Vectorisation: with ``j[i]`` the peer that ``i`` calls in the round, let ``t[v]`` be the step (``i``) at which
``v`` got the message, ``-1`` if it held it when the round began. Then

    t[v] = min( -1 if v held it,  v if t[j[v]] < v,  min{ i : j[i] = v and t[i] < i } )

Every term depends only on times strictly smaller than itself, so the system has one solution, and
iterating ``t <- min(t, F(t))`` from ``+inf`` reaches it after as many sweeps as the longest chain of
hand-overs within the round (a handful). Each sweep is a few numpy operations on ``peers`` elements.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ssblab.sim._graph import SimulationParameterError, check_positive, coerce_rng

__all__ = ["gossip_round", "simulate_gossip"]

_NEVER = np.iinfo(np.int64).max


def gossip_round(has: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Who holds the message after one round in which peer ``i`` calls ``calls[i]``, in index order.

    Pure: ``has`` (bool per peer) is not modified.

    Examples:
        >>> import numpy as np
        >>> # peer 1 calls 0 and receives; then peer 2 calls 1, which now holds it
        >>> gossip_round(np.array([True, False, False]), np.array([0, 0, 1])).tolist()
        [True, True, True]
    """
    steps = np.arange(has.size)
    t = np.where(has, -1, _NEVER)
    while True:
        pulled = np.where(t[calls] < steps, steps, _NEVER)  # v = i pulls from j[i]
        pushing = t < steps  # i already holds it at its own step: it pushes to j[i]
        pushed = np.full(has.size, _NEVER)
        np.minimum.at(pushed, calls[pushing], steps[pushing])
        updated = np.minimum(t, np.minimum(pulled, pushed))
        if np.array_equal(updated, t):
            reached: np.ndarray = t != _NEVER
            return reached
        t = updated


def simulate_gossip(*, peers: int = 10_000, rng: np.random.Generator | int, max_rounds: int = 1000) -> pd.DataFrame:
    """Reproduce the A.3.3 table: peers newly reached (``dR``) and reached in total (``dT``) per round.

    Args:
        peers: swarm size (the paper: 10,000).
        rng: a ``numpy.random.Generator`` or an integer seed.
        max_rounds: give up (raise) after this many rounds; with ``peers >= 2`` dissemination ends with
            probability 1, so this only guards against absurd inputs.

    Returns:
        Columns ``round, dR, dT``; round 1 is the first round, the last row has ``dT == peers``.

    Raises:
        SimulationParameterError: for ``peers < 2`` or when ``max_rounds`` is exhausted.

    Examples:
        >>> simulate_gossip(peers=50, rng=3)["dT"].iloc[-1]
        np.int64(50)
    """
    where = "simulate_gossip"
    check_positive(where, max_rounds=max_rounds)
    if peers < 2:
        raise SimulationParameterError(where, f"peers must be >= 2, got {peers!r}")
    gen = coerce_rng(rng, where)
    has = np.zeros(peers, dtype=bool)
    has[0] = True
    rows = []
    for round_no in range(1, max_rounds + 1):
        after = gossip_round(has, gen.integers(0, peers, size=peers))
        rows.append((round_no, int(after.sum() - has.sum()), int(after.sum())))
        has = after
        if has.all():
            return pd.DataFrame(rows, columns=["round", "dR", "dT"]).astype("int64")
    raise SimulationParameterError(where, f"not disseminated after max_rounds={max_rounds}")
