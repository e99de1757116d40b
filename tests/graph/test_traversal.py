"""Hops on every engine equal ssb-friends' (`ssblab.friends.metric`, itself checked against ssb-server) on random
graphs.

Hundreds of disjoint random graphs are unioned and traversed from all their roots in one `hops_table` call, so one
run per engine covers every rule (blocks, unfollows, ties, the max cut-off); roots never interact (a documented
invariant of the traversal), and the test would catch it if they did.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from ssblab.friends import contact_edges, hops
from ssblab.generate import generate_network
from ssblab.graph import FollowNetwork
from ssblab.graph.errors import GraphError
from ssblab.graph.local import LocalGraphEngine
from ssblab.graph.traversal import coverage
from tests.graph.helpers import random_graphs


def test_hops_equal_ssb_friends_on_random_graphs(engine: Any) -> None:
    graphs = random_graphs(seed=5, count=300)
    union = {edge: weight for _, edges in graphs for edge, weight in edges.items()}
    net = FollowNetwork.from_edges(union, engine=engine)
    roots = [root for root, _ in graphs] + ["@not-in-the-graph"]
    found: dict[int, dict[str, dict[str, int]]] = {m: {} for m in (0, 1, 2, 3)}
    for max_hops, answers in found.items():
        for row in net.hops_table(roots, max_hops).to_pylist():
            answers.setdefault(row["root"], {})[row["feed"]] = row["hops"]
    assert [(root, m) for root, edges in graphs for m in found if found[m][root] != hops(edges, root, m)] == []
    assert found[3]["@not-in-the-graph"] == {"@not-in-the-graph": 0}
    assert sum(value < 0 for answer in found[3].values() for value in answer.values()) > 50  # blocks exercised
    with pytest.raises(GraphError, match="max_hops must be >= 0"):
        net.hops(roots[0], -1)


def test_generated_network_contact_state_and_server_max(engine: Any) -> None:
    messages = list(generate_network(30, 1500, seed=3))
    edges = contact_edges(messages)
    net = FollowNetwork.from_messages(messages, engine=engine)
    state = {(r["src"], r["dst"]): r["weight"] for r in net.edges().to_pylist()}
    assert state == {pair: s.weight for pair, s in edges.items() if pair[0] != pair[1]}
    root = messages[0].value["author"]
    # The server's own id with friends.hops = 2, asked for max 1: the stored traversal, filtered (negatives stay).
    assert net.hops(root, 1, server_max=2) == hops(edges, root, 1, server_max=2)
    samples = net.overlap_experiment(root, peers=3, samples=2, rng=random.Random(7))
    assert [len(s.peers) for s in samples] == [3, 3] and all(s.friends > 0 for s in samples)
    local = FollowNetwork.from_messages(messages, engine=LocalGraphEngine())
    assert samples == local.overlap_experiment(root, peers=3, samples=2, rng=random.Random(7))
    assert net.replication_set(root) == {f for f, v in hops(edges, root, 2).items() if 0 <= v <= 2}


def test_coverage_counts_friends_and_friends_of_friends() -> None:
    root_hops = {"me": 0, "a": 1, "b": 1, "c": 2, "d": 2, "e": 2, "x": -1}
    found = coverage(root_hops, {"p": {"a", "c", "x"}, "q": {"b", "me"}, "r": {"d"}}, ["p", "q"])
    assert (found.friends, found.friends_covered, found.friends_of_friends, found.friends_of_friends_covered) == (
        2, 2, 3, 1)
    assert found.friends_ratio == 1.0 and found.friends_of_friends_ratio == pytest.approx(1 / 3)
    assert coverage({"me": 0}, {}, []).friends_ratio == 1.0
