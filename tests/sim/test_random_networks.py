"""A.5 random-network table: P(connected), mean and stdev of the rounds to cover 1,000 peers, 100 networks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ssblab.sim import SimulationParameterError, paper_table, simulate_random_networks
from tests.sim.tolerance import assert_close, se_mean, se_proportion, se_stdev

# Paper, appendix A.5 table "edges, P(connected), average, stdev" (1,000 peers, 100 networks per row).
PAPER_A5 = [
    (1.0, 0.05, 57.26, 19.385365614297818),
    (1.1, 0.46, 23.33, 2.549725475418886),
    (1.2, 0.69, 18.1, 1.6763054614240047),
    (1.3, 0.7, 15.08, 1.188949115816149),
    (1.4, 0.8, 13.52, 1.2765578717786399),
    (1.5, 0.91, 12.33, 0.8130805618141443),
    (1.6, 0.9, 11.45, 0.82915619758885),
    (1.7, 0.96, 10.59, 0.8011866199581761),
    (1.8, 0.97, 9.83, 0.6333245613427602),
    (1.9, 0.99, 9.29, 0.4958830507287036),
    (2.0, 1.0, 8.72, 0.5306599664568481),
    (3.0, 1.0, 6.91, 0.2861817604250792),
    (5.0, 1.0, 5.39, 0.48774993593029137),
    (10.0, 1.0, 4.59, 0.4918333050943186),
    (20.0, 1.0, 4.0, 0.0),
]
PAPER_TRIALS = 100
SEED = 20190514  # the paper's date; any fixed seed works


@pytest.fixture(scope="module")
def reproduced() -> pd.DataFrame:
    return simulate_random_networks([row[0] for row in PAPER_A5], peers=1000, trials=500, rng=SEED)


def test_paper_table_matches_the_constants() -> None:
    expected = pd.DataFrame(PAPER_A5, columns=["edges", "p_connected", "mean", "stdev"])
    pd.testing.assert_frame_equal(paper_table("random_networks"), expected)


@pytest.mark.parametrize(("edges", "p_connected", "mean", "stdev"), PAPER_A5)
def test_row_within_sampling_error(
    reproduced: pd.DataFrame, edges: float, p_connected: float, mean: float, stdev: float
) -> None:
    row = reproduced.set_index("edges").loc[edges]
    rounds = row["rounds"]
    n = int(row["trials"])
    se_p = se_proportion(p_connected, PAPER_TRIALS, row["p_connected"], n)
    assert_close(f"P(connected) at {edges}", p_connected, row["p_connected"], se_p)
    assert_close(f"mean at {edges}", mean, row["mean"], se_mean(rounds, PAPER_TRIALS))
    assert_close(f"stdev at {edges}", stdev, row["stdev"], se_stdev(rounds, PAPER_TRIALS))


def test_same_seed_same_table() -> None:
    first = simulate_random_networks([1.5], peers=300, trials=10, rng=7)
    second = simulate_random_networks([1.5], peers=300, trials=10, rng=np.random.default_rng(7))
    pd.testing.assert_frame_equal(first.drop(columns="rounds"), second.drop(columns="rounds"))


def test_a_whole_number_of_edges_is_exact_and_never_isolates_a_peer() -> None:
    # with m >= 1 every peer opens at least one connection, so no peer is isolated; with m = 20 and
    # 1,000 peers every network is connected and covered in 3 hops (+1 empty round)
    df = simulate_random_networks([20], peers=1000, trials=5, rng=1)
    assert df.loc[0, "p_connected"] == 1.0
    assert list(df.loc[0, "rounds"]) == [4] * 5


@pytest.mark.parametrize(
    "kwargs",
    [{"edges": [0]}, {"edges": []}, {"peers": 0}, {"trials": -1}, {"rng": None}, {"rng": 1.5}],
)
def test_bad_parameters_raise_a_typed_error(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"edges": [1.0], "peers": 10, "trials": 1, "rng": 0, **kwargs}
    with pytest.raises(SimulationParameterError, match="simulate_random_networks"):
        simulate_random_networks(**args)  # type: ignore[arg-type]
