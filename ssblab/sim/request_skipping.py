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
* Request skipping (A.5): per connection each end keeps a record of the other's clock (initially "never", so
  the first sync sends everything). Each end mentions the feeds where its clock differs from its record, and
  answers each feed the other mentioned and it did not. What the records hold afterwards is the ``record`` rule:

  - ``"explicit"`` (the default, A.5's footnote): "only update our record of the remote clock with data they
    have explicitly sent us, and not based on the messages we have sent them" (a connection may fail before the
    peer gets them). Each end records the values the other mentioned or answered; a feed that moved during the
    sync is mentioned once more next time, and answered, before both records agree.
  - ``"merged"``: both records hold the merged clock, the paper's "if peers A and B are consistent with respect
    to feed X, neither will mention X the next time they connect" read as if every message sent arrived. It
    sends fewer elements (the footnote rule sends 1.1 to 1.2 times as many on notebook 07's swarm), and is
    unsafe on real links.

Both schemes move the same messages over the same connections; only the header counts differ, so one run
measures both.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ssblab.sim._graph import SimulationParameterError, check_fractions, check_positive, coerce_rng

__all__ = ["RECORD_RULES", "activity_rates", "simulate_request_skipping", "skipping_run"]

_NEVER_SYNCED = -1
RECORD_RULES = ("explicit", "merged")


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
    peers: int, connections: int, rounds: int, rates: np.ndarray, rng: np.random.Generator,
    record: str = "explicit",
) -> dict[str, float]:
    """One swarm over ``rounds`` rounds: messages moved and clock elements sent under both schemes, request
    skipping keeping its records by the ``record`` rule (module docstring)."""
    partners = _peer_connections(peers, connections, rng)
    # per connection (the initiator's slot): what the initiator heard from its partner, and the partner from it
    heard_by_us = np.full((peers, connections, peers), _NEVER_SYNCED, dtype=np.int64)
    heard_by_them = np.full((peers, connections, peers), _NEVER_SYNCED, dtype=np.int64)
    clocks = np.zeros((peers, peers), dtype=np.int64)
    own = np.arange(peers)
    moved = skipping = published = 0
    for _ in range(rounds):
        new = rng.poisson(rates)
        clocks[own, own] += new
        published += int(new.sum())
        slot = rng.integers(0, connections, size=peers)
        remote = partners[own, slot]
        mine, theirs = clocks, clocks[remote]
        said_mine, said_theirs = mine != heard_by_us[own, slot], theirs != heard_by_them[own, slot]
        skipping += int(said_mine.sum() + said_theirs.sum() + (said_mine ^ said_theirs).sum())
        moved += int(np.abs(mine - theirs).sum())
        merged = np.maximum(mine, theirs)
        if record == "merged":
            heard_by_us[own, slot] = heard_by_them[own, slot] = merged
        else:  # each end records what the other mentioned or answered: every feed either one mentioned
            stated = said_mine | said_theirs
            heard_by_us[own, slot] = np.where(stated, theirs, heard_by_us[own, slot])
            heard_by_them[own, slot] = np.where(stated, mine, heard_by_them[own, slot])
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
        "first_sync_elements": 2 * peers * int((heard_by_us[:, :, 0] != _NEVER_SYNCED).sum()),
    }


def simulate_request_skipping(
    messages_per_round: Iterable[float] = (100.0, 10.0, 1.0),
    *,
    peers: int = 200,
    connections: int = 5,
    rounds: int = 200,
    exponent: float = 1.0,
    record: str = "explicit",
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
        record: how request skipping keeps its record of the other end's clock: ``"explicit"`` (A.5's footnote:
            only what the other end sent) or ``"merged"`` (the merged clock); see the module docstring.
        rng: a ``numpy.random.Generator`` or an integer seed.

    Returns:
        One row per activity level: ``messages_per_round, record, published, messages, full_elements,
        skipping_elements, first_sync_elements, skipping_ratio`` (skipping over full), and
        ``elements_per_message`` for both schemes.

    Raises:
        SimulationParameterError: for non-positive sizes, counts or rates, fewer than 2 peers, or an unknown
            ``record`` rule.

    Examples:
        >>> footnote = simulate_request_skipping([5.0], peers=30, rounds=40, rng=0)
        >>> merged = simulate_request_skipping([5.0], peers=30, rounds=40, record="merged", rng=0)
        >>> round(float(footnote.loc[0, "skipping_ratio"]), 2), round(float(merged.loc[0, "skipping_ratio"]), 2)
        (0.52, 0.45)
    """
    where = "simulate_request_skipping"
    levels = check_fractions(where, "messages_per_round", messages_per_round)
    check_positive(where, peers=peers - 1, connections=connections, rounds=rounds, exponent=exponent)
    if record not in RECORD_RULES:
        raise SimulationParameterError(where, f"record must be one of {RECORD_RULES}, got {record!r}")
    gen = coerce_rng(rng, where)
    rows = []
    for level in levels:
        run = skipping_run(peers, connections, rounds, activity_rates(peers, level, exponent), gen, record)
        rows.append({"messages_per_round": level, "record": record, **run})
    df = pd.DataFrame(rows)
    df["skipping_ratio"] = df["skipping_elements"] / df["full_elements"]
    df["full_per_message"] = df["full_elements"] / df["messages"]
    df["skipping_per_message"] = df["skipping_elements"] / df["messages"]
    return df
