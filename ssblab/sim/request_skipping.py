"""Request skipping against full vector clocks under power-law activity (paper A.4, A.5).

The paper states the effect without a table: with power-law activity most feeds do not change between two
connections, so re-sending the whole vector clock is mostly waste; request skipping sends, after the first
connection, only the feeds whose sequence differs from the stored copy of the remote clock, "a great deal
less ... especially when using high poll frequencies" (A.5). This module measures that on a swarm.

Model:

* ``peers`` peers, each authoring one feed and replicating every feed (the A.1 random swarm).
* Activity: feed ``f`` (by rank) gets ``Poisson(rate_f)`` new messages per round with
  ``rate_f ∝ (f + 1) ** -exponent`` scaled so the swarm publishes ``messages_per_round`` in total; fewer
  messages per round means a higher poll frequency relative to activity.
* Connections: each peer opens ``connections`` random connections once (its fixed peer set, A.5's
  ``peers_connected_to``) and every round syncs over one of its connections chosen at random. Syncs of a
  round use the clocks from the start of the round (synchronous rounds), so a peer that syncs twice in a
  round merges both.
* Full clocks (A.3.3): each sync sends both whole clocks, ``2 * peers`` elements.
* Request skipping (A.5): per connection both ends keep the clock they agreed on last time (initially
  "never", so the first sync sends everything). Each end mentions the feeds where its clock differs from
  that record, and answers each feed the other mentioned and it did not. Afterwards both records hold the
  merged clock, which is the paper's "if peers A and B are consistent with respect to feed X, neither will
  mention X the next time they connect".

Both schemes move the same messages over the same connections; only the header counts differ, so one run
measures both.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ssblab.sim._graph import check_fractions, check_positive, coerce_rng

__all__ = ["activity_rates", "simulate_request_skipping", "skipping_run"]

_NEVER_SYNCED = -1


def activity_rates(peers: int, messages_per_round: float, exponent: float) -> np.ndarray:
    """Mean new messages per round for each feed, a power law in the feed's rank."""
    weights = (np.arange(peers) + 1.0) ** -exponent
    rates: np.ndarray = messages_per_round * weights / weights.sum()
    return rates


def _peer_connections(peers: int, connections: int, rng: np.random.Generator) -> np.ndarray:
    """Each peer's fixed connections: ``[peers, connections]`` partner ids, never the peer itself."""
    partners = rng.integers(0, peers - 1, size=(peers, connections))
    return partners + (partners >= np.arange(peers)[:, None])


def skipping_run(
    peers: int, connections: int, rounds: int, rates: np.ndarray, rng: np.random.Generator
) -> dict[str, float]:
    """One swarm over ``rounds`` rounds: messages moved and clock elements sent under both schemes."""
    partners = _peer_connections(peers, connections, rng)
    agreed = np.full((peers, connections, peers), _NEVER_SYNCED, dtype=np.int64)
    clocks = np.zeros((peers, peers), dtype=np.int64)
    own = np.arange(peers)
    moved = skipping = published = 0
    for _ in range(rounds):
        new = rng.poisson(rates)
        clocks[own, own] += new
        published += int(new.sum())
        slot = rng.integers(0, connections, size=peers)
        remote = partners[own, slot]
        mine, theirs, record = clocks, clocks[remote], agreed[own, slot]
        said_mine, said_theirs = mine != record, theirs != record
        skipping += int(said_mine.sum() + said_theirs.sum() + (said_mine ^ said_theirs).sum())
        moved += int(np.abs(mine - theirs).sum())
        merged = np.maximum(mine, theirs)
        agreed[own, slot] = merged
        after = clocks.copy()
        np.maximum.at(after, own, merged)
        np.maximum.at(after, remote, merged)
        clocks = after
    syncs = rounds * peers
    return {
        "published": published,
        "messages": moved,
        "full_elements": 2 * peers * syncs,
        "skipping_elements": skipping,
        "first_sync_elements": 2 * peers * int((agreed[:, :, 0] != _NEVER_SYNCED).sum()),
    }


def simulate_request_skipping(
    messages_per_round: Iterable[float] = (100.0, 10.0, 1.0),
    *,
    peers: int = 200,
    connections: int = 5,
    rounds: int = 200,
    exponent: float = 1.0,
    rng: np.random.Generator | int,
) -> pd.DataFrame:
    """Vector clock elements sent with and without request skipping, per swarm-wide activity level.

    Args:
        messages_per_round: swarm-wide new messages per round (one row each); lower is a higher poll
            frequency relative to activity.
        peers: swarm size; each peer authors one feed and replicates all.
        connections: connections per peer (the paper suggests 5 to 10, A.5).
        rounds: sync rounds; each peer syncs once per round.
        exponent: power-law exponent of activity by feed rank (1 is Zipf).
        rng: a ``numpy.random.Generator`` or an integer seed.

    Returns:
        One row per activity level: ``messages_per_round, published, messages, full_elements,
        skipping_elements, first_sync_elements, skipping_ratio`` (skipping over full), and
        ``elements_per_message`` for both schemes.

    Raises:
        SimulationParameterError: for non-positive sizes, counts or rates, or fewer than 2 peers.

    Examples:
        >>> df = simulate_request_skipping([5.0], peers=30, rounds=40, rng=0)
        >>> bool(df.loc[0, "skipping_ratio"] < 0.5)
        True
    """
    where = "simulate_request_skipping"
    levels = check_fractions(where, "messages_per_round", messages_per_round)
    check_positive(where, peers=peers - 1, connections=connections, rounds=rounds, exponent=exponent)
    gen = coerce_rng(rng, where)
    rows = []
    for level in levels:
        run = skipping_run(peers, connections, rounds, activity_rates(peers, level, exponent), gen)
        rows.append({"messages_per_round": level, **run})
    df = pd.DataFrame(rows)
    df["skipping_ratio"] = df["skipping_elements"] / df["full_elements"]
    df["full_per_message"] = df["full_elements"] / df["messages"]
    df["skipping_per_message"] = df["skipping_elements"] / df["messages"]
    return df
