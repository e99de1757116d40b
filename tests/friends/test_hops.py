"""Each rule of ssb-friends 4.4's hops (dynamic-dijkstra simple.js) on a hand-made graph."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.friends import BLOCK, FOLLOW, UNFOLLOW, explain, hops, replication_set, traverse
from ssblab.friends.metric import build_graph, expands, js_add, js_min

F, B, U = FOLLOW, BLOCK, UNFOLLOW


def graph(*triples: tuple[str, str, int]) -> dict[tuple[str, str], int]:
    return {(s, d): w for s, d, w in triples}


def test_follow_chain_is_cut_after_max() -> None:
    edges = graph(("me", "a", F), ("a", "b", F), ("b", "c", F), ("c", "d", F))
    assert hops(edges, "me") == {"me": 0, "a": 1, "b": 2, "c": 3}
    assert hops(edges, "me", 1) == {"me": 0, "a": 1}
    assert hops(edges, "me", 4)["d"] == 4


def test_shortest_follow_path_wins() -> None:
    edges = graph(("me", "a", F), ("a", "b", F), ("b", "c", F), ("me", "c", F))
    assert hops(edges, "me") == {"me": 0, "a": 1, "b": 2, "c": 1}


def test_root_block_beats_every_follow() -> None:
    edges = graph(("me", "a", F), ("a", "x", F), ("me", "x", B))
    assert hops(edges, "me")["x"] == -1


def test_blocked_feed_is_not_expanded() -> None:
    edges = graph(("me", "x", B), ("x", "y", F), ("x", "z", B))
    assert hops(edges, "me") == {"me": 0, "x": -1}


def test_root_unfollow_is_minus_two_and_loses_to_a_friends_follow() -> None:
    assert hops(graph(("me", "x", U)), "me")["x"] == -2
    assert hops(graph(("me", "x", U), ("me", "a", F), ("a", "x", F)), "me")["x"] == 2


def test_friends_block_ties_with_another_friends_follow_and_the_follow_wins() -> None:
    edges = graph(("me", "a", F), ("me", "b", F), ("a", "x", B), ("b", "x", F))
    assert hops(edges, "me")["x"] == 2


def test_friends_block_beats_a_friend_of_friends_follow() -> None:
    edges = graph(("me", "a", F), ("me", "b", F), ("b", "c", F), ("a", "x", B), ("c", "x", F))
    assert hops(edges, "me")["x"] == -2


def test_negative_values_count_the_blockers_distance() -> None:
    edges = graph(("me", "a", F), ("a", "b", F), ("a", "x", U), ("b", "y", B), ("b", "z", U))
    assert hops(edges, "me") == {"me": 0, "a": 1, "b": 2, "x": -3, "y": -3, "z": -4}


def test_feeds_at_max_report_nothing_they_block() -> None:
    edges = graph(("me", "a", F), ("a", "b", F), ("b", "c", F), ("c", "d", B))
    assert "d" not in hops(edges, "me", 3)
    assert hops(edges, "me", 4)["d"] == -4


def test_root_stays_zero() -> None:
    edges = graph(("me", "a", F), ("a", "me", B), ("me", "me", B), ("a", "a", B), ("a", "b", F))
    assert hops(edges, "me") == {"me": 0, "a": 1, "b": 2}


def test_unknown_root_is_alone() -> None:
    assert hops(graph(("a", "b", F)), "me") == {"me": 0}


def test_server_max_filters_its_stored_traversal_for_a_smaller_max() -> None:
    """max < configured: layered-graph filters the stored traversal, so deeper negatives survive."""
    edges = graph(("me", "a", F), ("a", "b", F), ("a", "x", U), ("b", "y", B))
    assert hops(edges, "me", 1) == {"me": 0, "a": 1}
    assert hops(edges, "me", 1, server_max=2) == {"me": 0, "a": 1, "x": -3}
    assert hops(edges, "me", 0, server_max=2) == hops(edges, "me", 2)  # max 0 means the configured one
    assert hops(edges, "me", 3, server_max=2) == hops(edges, "me", 3)


def test_replication_set_keeps_zero_to_max() -> None:
    edges = graph(("me", "a", F), ("a", "b", F), ("b", "c", F), ("me", "x", B), ("a", "y", U))
    assert replication_set(edges, "me") == {"me", "a", "b"}
    assert replication_set(edges, "me", 3) == {"me", "a", "b", "c"}


def test_explain_follow_path_block_and_out_of_reach() -> None:
    edges = graph(("me", "a", F), ("a", "b", F), ("b", "c", F), ("a", "x", B))
    assert explain(edges, "me", "b") == ["me follows a: hop 1", "a follows b: hop 2, replicated"]
    assert explain(edges, "me", "x") == [
        "me follows a: hop 1",
        "a blocks x: hops -2, excluded (a block at hop 1)",
    ]
    assert explain(edges, "me", "me") == ["me is the root (hop 0)"]
    assert explain(edges, "me", "c")[0].startswith("c is not reached within 2 hops of me")
    assert explain(edges, "me", "c", 3)[-1] == "b follows c: hop 3, replicated"
    assert explain(graph(("me", "y", U)), "me", "y") == ["me unfollowed (or unblocked) y: hops -2, not replicated"]


def test_metric_primitives() -> None:
    assert (js_add(2, F), js_add(2, B), js_add(2, U), js_add(-1, F)) == (3, -3, -4, None)
    assert (js_min(2, -2), js_min(-2, 3), js_min(None, -1), js_min(3, None)) == (2, -2, -1, 3)
    assert (expands(2, 3), expands(3, 3), expands(-1, 3), expands(None, 3)) == (True, False, False, False)


def fixpoint(edges: dict[tuple[str, str], int], root: str, max_hops: int) -> dict[str, int]:
    """An order-free reference: every value is the min of what the *final* values of its sources give."""
    values = {root: 0}
    for _ in range(len(edges) + 2):
        new = {root: 0}
        for (source, dest), weight in edges.items():
            if dest != root and expands(values.get(source), max_hops):
                best = js_min(new.get(dest), js_add(values[source], weight))
                if best is not None:
                    new[dest] = best
        if new == values:
            return values
        values = new
    raise AssertionError("no fixpoint")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.sampled_from([F, B, U])), max_size=40),
       st.integers(1, 5))
def test_traversal_is_the_order_free_fixpoint(triples: list[tuple[int, int, int]], max_hops: int) -> None:
    """A feed is expanded only after everything that could lower its value: the heap order does not matter."""
    edges = {(f"f{s}", f"f{d}"): w for s, d, w in triples}
    assert hops(edges, "f0", max_hops) == fixpoint(edges, "f0", max_hops)


def test_traversal_ignores_edge_order_up_to_three_hops() -> None:
    rng = random.Random(7)
    triples = [(f"f{rng.randrange(30)}", f"f{rng.randrange(30)}", rng.choice([F, F, F, B, U])) for _ in range(150)]
    edges = graph(*triples)
    shuffled = list(edges.items())
    rng.shuffle(shuffled)
    assert traverse(build_graph(dict(shuffled)), "f0", 3) == hops(edges, "f0", 3)
