"""Moderation scenarios on every engine: what-if blocks, shared moderation (§6.3), resource-attack cliques (§8.6)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from ssblab.friends import BLOCK, FOLLOW, hops
from ssblab.graph import FollowNetwork, rank_cliques
from ssblab.graph.errors import DatasetError
from ssblab.graph.moderation import changes, is_replicated

F, B = FOLLOW, BLOCK
NETWORK = {("me", "a"): F, ("me", "b"): F, ("a", "c"): F, ("b", "c"): F, ("a", "d"): F, ("d", "e"): F,
           ("b", "t"): F, ("t", "u"): F}


def test_changes_and_replication_rule() -> None:
    assert changes({"me": 0, "a": 1, "x": 2}, {"me": 0, "a": -1, "y": 2}) == {
        "a": (1, -1), "x": (2, None), "y": (None, 2)}
    assert [is_replicated(v, 2) for v in (None, -1, 0, 2, 3)] == [False, False, True, True, False]


def test_whatif_blocks_by_the_root_and_by_others(engine: Any) -> None:
    net = FollowNetwork.from_edges(NETWORK, engine=engine)
    blocks = [("me", "a"), ("b", "c")]
    after = {**NETWORK, ("me", "a"): B, ("b", "c"): B}
    result = net.whatif("me", blocks, feed="c")
    assert result.changes == changes(hops(NETWORK, "me", 2), hops(after, "me", 2))
    assert result.leaving == ["a", "c", "d"]
    # Whose view of c changes, among the feeds the root replicated: the root's and b's (b now blocks it).
    assert result.views == {"me": (2, -2), "b": (1, -1)}
    # A block of a feed the graph lacks numbers it in.
    new = net.whatif("me", [("a", "zz"), ("me", "b")], feed="zz")
    assert new.changes["b"] == (1, -1) and "zz" in new.changes
    assert new.changes == changes(hops(NETWORK, "me", 2), hops({**NETWORK, ("a", "zz"): B, ("me", "b"): B}, "me", 2))


def test_shared_moderation_adopts_blocks_of_trusted_peers_only(engine: Any) -> None:
    network = {("me", "a"): F, ("me", "b"): F, ("me", "t"): F, ("a", "b"): F, ("t", "b"): F, ("b", "t"): F,
               ("t", "x"): F, ("b", "x"): B, ("a", "y"): B, ("b", "a"): B, ("b", "me"): B}
    found = FollowNetwork.from_edges(network, engine=engine).shared_moderation("me", min_friends=2)
    # b is followed by me and by two of my friends (a, t); t only by b; a by nobody.
    assert found.trusted == ("b",)
    # b's block of a is not adopted (my own follow stands), nor b's block of me.
    assert found.adopted == (("b", "x"),)
    assert found.effect.leaving == ["x"] and found.effect.changes["x"] == (2, -1)


def test_rank_cliques_finds_dense_groups_with_big_logs_first() -> None:
    pairs = [("s1", "s2"), ("s2", "s3"), ("s1", "s3"), ("k1", "k2"), ("k2", "k3"), ("k3", "k1"), ("k3", "k4"),
             ("p1", "p2"), ("p2", "p3"), ("q1", "q2")]
    activity = {"s1": (5000, 10.0), "s2": (4000, 12.0), "s3": (10, 11.0), "k1": (1, 1.0), "k2": (1, 2.0)}
    found = rank_cliques(pairs, activity, min_size=3, min_density=0.6)
    assert [(c.feeds, c.messages, c.first_seen) for c in found] == [
        (("s1", "s2", "s3"), 9010, 12.0), (("k1", "k2", "k3", "k4"), 2, 2.0), (("p1", "p2", "p3"), 0, 0.0)]
    assert [c.density for c in found] == pytest.approx([1.0, 4 / 6, 2 / 3])
    assert [c.feeds for c in rank_cliques(pairs, activity, min_density=0.9)] == [("s1", "s2", "s3")]


def test_resource_attack_cliques_in_the_two_hop_neighbourhood(engine: Any) -> None:
    clique = [(x, y) for x in ("s1", "s2", "s3") for y in ("s1", "s2", "s3") if x != y]
    old = [(x, y) for x in ("o1", "o2", "o3") for y in ("o1", "o2", "o3") if x != y]
    far = [(x, y) for x in ("f1", "f2", "f3") for y in ("f1", "f2", "f3") if x != y]
    follows = [("me", "a"), ("a", "s1"), ("a", "s2"), ("a", "s3"), ("a", "o1"), ("a", "o2"), ("a", "o3"),
               ("s1", "f1"), *clique, *old, *far]
    rows = [(f, 100.0 if f.startswith("o") else 5000.0 + i) for i, f in enumerate(
        ["me", "a", "o1", "o2", "o3", "s1", "s2", "s3", "f1", "f2", "f3"] + ["s1"] * 50 + ["s2"] * 20)]
    messages = pa.table({"author": [a for a, _ in rows], "timestamp": [t for _, t in rows]})
    net = FollowNetwork.from_edges(dict.fromkeys(follows, FOLLOW), engine=engine, messages=messages)
    found = net.resource_attack_cliques("me", since=1000.0)
    assert [(c.feeds, c.messages, c.density) for c in found] == [(("s1", "s2", "s3"), 73, 1.0)]
    assert found[0].first_seen == pytest.approx(5007.0)
    with pytest.raises(DatasetError, match="no messages table"):
        FollowNetwork.from_edges(NETWORK, engine=engine).resource_attack_cliques("me", since=0.0)
