"""A.9 epidemic broadcast trees against flooding: the three-peer example and invariants at scale."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ssblab.sim import SimulationParameterError, paper_table, simulate_ebt, simulate_flooding
from ssblab.sim.ebt import ebt_trial

# Paper, appendix A.8/A.9 worked example: three peers A, B, C all connected, A broadcasts.
PAPER_TRIANGLE_FLOOD_MSGS = 4  # "the message is sent twice by A and once each by B and C ... bandwidth is 4"
PAPER_TRIANGLE_NECESSARY = 2  # "only the transmissions to B and C are necessary"
PAPER_REPAIR_ROUND_TRIPS = 1  # "re-establishing an active connection takes just one round-trip"
# Paper A.8 prose: "With K=2, nearly 3 times as many messages as necessary ... with K=5, nearly 9 times".
PAPER_FLOOD_INEFFICIENCY = {2: 3, 5: 9}

TRIANGLE = (np.array([0, 0, 1]), np.array([1, 2, 2]))


@pytest.fixture(scope="module")
def reproduced() -> pd.DataFrame:
    return simulate_ebt([2, 3, 5, 10], peers=1000, trials=5, rng=9)


def test_triangle_example() -> None:
    result = ebt_trial(3, *TRIANGLE, np.random.default_rng(0))
    assert result["flood_msgs"] == PAPER_TRIANGLE_FLOOD_MSGS
    assert result["ebt_msgs"] == PAPER_TRIANGLE_NECESSARY
    assert result["ebt_notes"] == 2  # B and C tell each other they have it
    assert result["cut_off_tree"] == 1 and result["cut_off_ebt"] == 0
    assert result["repairs"] == 1
    assert result["repair_round_trips_max"] == PAPER_REPAIR_ROUND_TRIPS


def test_paper_table_states_the_example() -> None:
    row = paper_table("ebt").iloc[0]
    assert (row["flood_msgs"], row["ebt_msgs"], row["repair_round_trips_max"]) == (4, 2, 1)


def test_tree_sends_exactly_the_necessary_messages(reproduced: pd.DataFrame) -> None:
    assert (reproduced["ebt_msgs"] == reproduced["peers"] - 1).all()
    assert (reproduced["ebt_notes"] == reproduced["flood_msgs"] - (reproduced["peers"] - 1)).all()


def test_tree_keeps_flooding_latency(reproduced: pd.DataFrame) -> None:
    # a breadth-first tree keeps every shortest path: pruning costs no latency
    assert (reproduced["ebt_latency"] == reproduced["flood_latency"]).all()
    assert np.allclose(reproduced["ebt_avg"], reproduced["flood_avg"])


def test_tree_saves_bandwidth_more_as_k_grows(reproduced: pd.DataFrame) -> None:
    ratio = reproduced.groupby("K")["bandwidth_ratio"].mean()
    assert (ratio < 1).all()
    assert ratio.is_monotonic_decreasing


def test_lazy_edges_repair_what_a_pure_tree_cuts_off(reproduced: pd.DataFrame) -> None:
    assert (reproduced["cut_off_tree"] > 0).all()  # a pure spanning tree loses the branch
    assert (reproduced["cut_off_ebt"] == 0).all()  # EBT's lazy edges reach every peer again
    assert (reproduced["repairs"] >= 1).all()
    # each repaired peer waits a note round trip more than flooding needs on that edge
    assert (reproduced["repair_delay_max"] >= 3).all()


def test_flooding_inefficiency_matches_the_prose() -> None:
    df = simulate_flooding([2, 5], peers=1000, trials=3, rng=2)
    for k, nearly in PAPER_FLOOD_INEFFICIENCY.items():
        mean = df[df["K"] == k]["inefficiency"].mean()
        assert nearly - 0.2 < mean < nearly


@pytest.mark.parametrize("kwargs", [{"ks": [-1]}, {"peers": 1}, {"trials": 0}, {"rng": 2.0}])
def test_bad_parameters_raise_a_typed_error(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"ks": [2], "peers": 10, "trials": 1, "rng": 0, **kwargs}
    with pytest.raises(SimulationParameterError, match="simulate_ebt"):
        simulate_ebt(**args)  # type: ignore[arg-type]
