"""Time each appendix-A simulation table at the paper's parameters and print it next to the paper's figures.

Usage: ``python bench/sim_tables.py [--seed N]``. Each table should take well under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from ssblab.sim import (
    paper_table,
    simulate_ebt,
    simulate_flooding,
    simulate_gossip,
    simulate_random_networks,
    simulate_request_skipping,
)


def _timed(name: str, build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    start = time.perf_counter()
    df = build()
    print(f"\n== {name}: {time.perf_counter() - start:.2f} s")
    return df


def _side_by_side(ours: pd.DataFrame, name: str, key: str) -> pd.DataFrame:
    paper = paper_table(name).set_index(key).drop(columns="peers", errors="ignore")
    mine = ours.set_index(key)[paper.columns]
    return mine.merge(paper, left_index=True, right_index=True, suffixes=("", "_paper"))


def main(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.float_format", "{:.3f}".format)

    df = _timed("A.5 random networks (1,000 peers, 100 networks per row)", lambda: simulate_random_networks(rng=rng))
    print(_side_by_side(df, "random_networks", "edges").round(3).to_string())

    df = _timed("A.3.3 append-only gossip (10,000 peers, one run)", lambda: simulate_gossip(rng=rng))
    print(_side_by_side(df, "gossip", "round").to_string())

    df = _timed("A.8 flooding (1,000 peers, one network per K)", lambda: simulate_flooding(rng=rng))
    print(_side_by_side(df, "flooding", "K").round(3).to_string())

    df = _timed("A.9 EBT vs flooding (1,000 peers, 10 networks per K)", lambda: simulate_ebt(rng=rng))
    print(df.drop(columns=["trial", "peers"]).groupby("K").mean().round(3).T.to_string())

    df = _timed(
        "A.5 request skipping (200 peers, 5 connections, 200 rounds, Zipf activity)",
        lambda: simulate_request_skipping(rng=rng),
    )
    print(df.round(3).to_string(index=False))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=2019)
    main(parser.parse_args().seed)
