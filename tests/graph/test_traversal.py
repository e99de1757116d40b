"""Spark hops equal ssb-friends' (`ssblab.friends.hops`, itself checked against ssb-server) on random graphs.

Hundreds of disjoint random graphs are unioned and traversed from all their roots in one `hops_frame` call, so
two Spark runs cover every rule (blocks, unfollows, ties, the max cut-off); roots never interact (a documented
invariant of `hops_frame`), and the test would catch it if they did.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from ssblab.friends import contact_edges, hops
from ssblab.generate import generate_network
from ssblab.graph import FollowNetwork, coverage, hops_frame, hops_table, overlap_experiment
from ssblab.graph.frames import edges_frame
from ssblab.graph.packed import pack_graph
from tests.graph.helpers import random_graphs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.mark.parametrize("max_hops", [1, 3])
def test_spark_hops_equal_ssb_friends_on_random_graphs(spark: SparkSession, max_hops: int) -> None:
    graphs = random_graphs(seed=max_hops, count=300)
    union = {edge: weight for _, edges in graphs for edge, weight in edges.items()}
    found: dict[str, dict[str, int]] = {}
    for row in hops_frame(edges_frame(spark, union), [root for root, _ in graphs], max_hops).collect():
        found.setdefault(row["root"], {})[row["feed"]] = row["hops"]
    wrong = [root for root, edges in graphs if found.get(root) != hops(edges, root, max_hops)]
    assert wrong == []
    assert sum(value < 0 for answer in found.values() for value in answer.values()) > 50  # blocks were exercised


@pytest.mark.parametrize("where", ["driver", "blocks"])
def test_packed_hops_equal_ssb_friends_on_random_graphs(spark: SparkSession, where: str) -> None:
    graphs = random_graphs(seed=5, count=300)
    union = {edge: weight for _, edges in graphs for edge, weight in edges.items()}
    packed = pack_graph(edges_frame(spark, union), local_limit=len(union) if where == "driver" else 0)
    assert (packed.local is not None) == (where == "driver")
    roots = [root for root, _ in graphs] + ["@not-in-the-graph"]
    found = {max_hops: hops_table(packed, roots, max_hops) for max_hops in (0, 1, 2, 3)}
    packed.unpersist()
    assert [(root, max_hops) for root, edges in graphs for max_hops in found
            if found[max_hops][root] != hops(edges, root, max_hops)] == []
    assert found[3]["@not-in-the-graph"] == {"@not-in-the-graph": 0}
    assert sum(value < 0 for answer in found[3].values() for value in answer.values()) > 50


def test_generated_network_contact_state_and_server_max(spark: SparkSession) -> None:
    messages = list(generate_network(30, 1500, seed=3))
    edges = contact_edges(messages)
    net = FollowNetwork.from_messages(spark, messages)
    state = {(r["src"], r["dst"]): r["weight"] for r in net.state.collect()}
    assert state == {pair: s.weight for pair, s in edges.items()}
    root = messages[0].value["author"]
    # The server's own id with friends.hops = 2, asked for max 1: the stored traversal, filtered (negatives stay).
    assert net.hops(root, 1, server_max=2) == hops(edges, root, 1, server_max=2)
    samples = overlap_experiment(net.edges, root, peers=3, samples=2, rng=random.Random(7))
    assert [len(s.peers) for s in samples] == [3, 3] and all(s.friends > 0 for s in samples)
    # The network's methods run on its packed graph: the same draws and answers as on the edges.
    assert net.overlap_experiment(root, peers=3, samples=2, rng=random.Random(7)) == samples
    viewers = sorted(net.packed.ids)[:5]
    assert sorted(net.hops_frame(viewers, 2).collect()) == sorted(hops_frame(net.edges, viewers, 2).collect())


def test_coverage_counts_friends_and_friends_of_friends() -> None:
    root_hops = {"me": 0, "a": 1, "b": 1, "c": 2, "d": 2, "e": 2, "x": -1}
    found = coverage(root_hops, {"p": {"a", "c", "x"}, "q": {"b", "me"}, "r": {"d"}}, ["p", "q"])
    assert (found.friends, found.friends_covered, found.friends_of_friends, found.friends_of_friends_covered) == (
        2, 2, 3, 1)
    assert found.friends_ratio == 1.0 and found.friends_of_friends_ratio == pytest.approx(1 / 3)
    assert coverage({"me": 0}, {}, []).friends_ratio == 1.0
