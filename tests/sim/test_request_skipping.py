"""A.5 request skipping against full vector clocks under power-law activity.

The paper publishes no table here; it states (A.5): the first connection sends the entire clock; afterwards
only feeds that changed are mentioned, "so a great deal less vector clocks elements need be sent than in
append-only gossip, especially when using high poll frequencies", and the saving comes from feeds that
update rarely, which power-law activity makes the majority.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ssblab.sim import SimulationParameterError, paper_table, simulate_request_skipping
from ssblab.sim.request_skipping import RECORD_RULES, activity_rates, skipping_run

SMALL = {"peers": 60, "connections": 5, "rounds": 80}


@pytest.fixture(scope="module")
def by_activity() -> pd.DataFrame:
    return simulate_request_skipping([60.0, 6.0, 0.6], **SMALL, rng=5)


def test_first_connections_send_the_whole_clock() -> None:
    # one round: every connection is new, so skipping sends exactly what full clocks send
    df = simulate_request_skipping([10.0], peers=40, connections=3, rounds=1, rng=0)
    assert df.loc[0, "skipping_elements"] == df.loc[0, "full_elements"] == 2 * 40 * 40


def test_full_clocks_cost_two_whole_clocks_per_sync(by_activity: pd.DataFrame) -> None:
    peers, rounds = SMALL["peers"], SMALL["rounds"]
    assert (by_activity["full_elements"] == 2 * peers * peers * rounds).all()


def test_skipping_sends_a_great_deal_less(by_activity: pd.DataFrame) -> None:
    # never more than full clocks; a fraction of them once a round brings fewer messages than peers
    assert (by_activity["record"] == "explicit").all()  # A.5's footnote is the default
    assert (by_activity["skipping_ratio"] < 1).all()
    assert by_activity["skipping_ratio"].iloc[1] < 0.35
    assert by_activity["skipping_ratio"].iloc[2] < 0.12


def test_the_footnote_rule_costs_more_than_merged_records_and_moves_the_same() -> None:
    explicit = simulate_request_skipping([60.0, 6.0, 0.6], **SMALL, rng=5)
    merged = simulate_request_skipping([60.0, 6.0, 0.6], **SMALL, record="merged", rng=5)
    assert (explicit["messages"] == merged["messages"]).all()  # the same random draws, the same messages
    ratio = explicit["skipping_elements"] / merged["skipping_elements"]
    assert ((ratio > 1.0) & (ratio < 1.5)).all(), ratio


def test_saving_grows_with_poll_frequency(by_activity: pd.DataFrame) -> None:
    # fewer messages per round = more polls per message
    assert by_activity["skipping_ratio"].is_monotonic_decreasing


def test_power_law_activity_saves_more_than_uniform_activity() -> None:
    power = simulate_request_skipping([6.0], **SMALL, exponent=1.0, rng=3)
    uniform = simulate_request_skipping([6.0], **SMALL, exponent=1e-9, rng=3)
    assert power.loc[0, "skipping_ratio"] < uniform.loc[0, "skipping_ratio"]


def test_a_quiet_swarm_sends_only_first_contacts() -> None:
    df = simulate_request_skipping([1e-9], **SMALL, rng=1)
    assert df.loc[0, "published"] == 0
    assert df.loc[0, "skipping_elements"] == df.loc[0, "first_sync_elements"]


def _reference_counts(peers: int, connections: int, rounds: int, rates: np.ndarray, seed: int, record: str) -> int:
    """The A.5 exchange written out with dicts, one connection at a time, on the same random draws: each end keeps
    its own record of the other's clock; ``merged`` sets both to the merged clock, ``explicit`` (the footnote)
    records only what the other end mentioned or answered."""
    rng = np.random.default_rng(seed)
    partners = rng.integers(0, peers - 1, size=(peers, connections))
    partners = partners + (partners >= np.arange(peers)[:, None])
    clocks = [dict.fromkeys(range(peers), 0) for _ in range(peers)]
    heard: dict[tuple[int, int, str], dict[int, int]] = {}  # (initiator, slot, which end) -> record
    sent = 0
    for _ in range(rounds):
        for author, count in enumerate(rng.poisson(rates)):
            clocks[author][author] += int(count)
        slots = rng.integers(0, connections, size=peers)
        start = [dict(c) for c in clocks]
        for i in range(peers):
            j = int(partners[i, slots[i]])
            by_i, by_j = heard.setdefault((i, int(slots[i]), "i"), {}), heard.setdefault((i, int(slots[i]), "j"), {})
            said_i = {f: s for f, s in start[i].items() if by_i.get(f) != s}
            said_j = {f: s for f, s in start[j].items() if by_j.get(f) != s}
            answers = [f for f in said_i if f not in said_j] + [f for f in said_j if f not in said_i]
            sent += len(said_i) + len(said_j) + len(answers)
            merged = {f: max(start[i][f], start[j][f]) for f in range(peers)}
            if record == "merged":
                by_i.update(merged)
                by_j.update(merged)
            else:
                by_i.update({f: start[j][f] for f in [*said_i, *said_j]})
                by_j.update({f: start[i][f] for f in [*said_i, *said_j]})
            for peer in (i, j):
                clocks[peer] = {f: max(clocks[peer][f], merged[f]) for f in range(peers)}
    return sent


@pytest.mark.parametrize("record", RECORD_RULES)
def test_vectorised_counts_equal_the_written_out_exchange(record: str) -> None:
    peers, connections, rounds = 12, 3, 15
    rates = activity_rates(peers, 4.0, 1.0)
    run = skipping_run(peers, connections, rounds, rates, np.random.default_rng(11), record)
    assert run["skipping_elements"] == _reference_counts(peers, connections, rounds, rates, 11, record)


def test_no_paper_table_for_request_skipping() -> None:
    with pytest.raises(SimulationParameterError, match="no published table"):
        paper_table("request_skipping")


@pytest.mark.parametrize(
    "kwargs",
    [{"messages_per_round": [0.0]}, {"peers": 1}, {"connections": 0}, {"rounds": 0}, {"exponent": -1.0},
     {"record": "optimistic"}],
)
def test_bad_parameters_raise_a_typed_error(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"messages_per_round": [1.0], "peers": 10, "rounds": 2, "rng": 0, **kwargs}
    with pytest.raises(SimulationParameterError, match="simulate_request_skipping"):
        simulate_request_skipping(**args)  # type: ignore[arg-type]
