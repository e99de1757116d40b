"""Tangles as trDAGs: the seed-001 checks, Lamport depths, the ssb-sort order and heads (pure)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ssblab.generate import generate_network
from ssblab.tangles.thread import (
    Tangle,
    causal_sort,
    check_tangle,
    heads,
    lamport_depths,
    tangle_from_edges,
)
from tests.tangles.edges import random_thread, tangle_rows


def _row(message_id: str, parent: str | None, ts: float, root: str = "%r", tangle: str = "thread") -> dict:
    return {"id": message_id, "author": "@x", "timestamp": ts, "tangle": tangle, "root": root, "parent": parent}


# r <- a <- c ; r <- b <- c  (a diamond closed by c; a and b concurrent), then d on c: a proper trDAG.
DIAMOND = [_row("%a", None, 2), _row("%b", "%r", 2), _row("%c", "%a", 4), _row("%c", "%b", 4), _row("%d", "%c", 5)]


def test_a_proper_trdag_passes_every_check() -> None:
    tangle = tangle_from_edges(DIAMOND, "%r", root_timestamp=1)
    report = check_tangle(tangle)
    assert report.is_trdag, report
    assert lamport_depths(tangle) == {"%r": 0, "%a": 1, "%b": 1, "%c": 2, "%d": 3}
    assert causal_sort(tangle) == ["%r", "%b", "%a", "%c", "%d"]  # equal times: the greater id first
    assert heads(tangle) == ["%d"]
    assert tangle.parents["%a"] == ("%r",)  # no parent: the root alone


def test_missing_messages_are_reported_not_guessed() -> None:
    rows = [*DIAMOND, _row("%e", "%gone", 6), _row("%f", "%e", 7)]
    tangle = tangle_from_edges(rows, "%r")  # and the root itself is absent
    report = check_tangle(tangle)
    assert not report.root_present and not report.is_trdag
    assert report.missing == {"%gone": ("%e",), "%r": ("%a", "%b")}
    assert lamport_depths(tangle) == {}  # every depth hangs off the missing root
    with_root = tangle_from_edges(rows, "%r", root_timestamp=1)
    depths = lamport_depths(with_root)
    assert "%e" not in depths and "%f" not in depths and depths["%d"] == 3
    assert causal_sort(with_root)[:2] == ["%r", "%b"] and set(causal_sort(with_root)) == set(with_root.timestamps)


def test_links_that_are_not_the_transitive_reduction_are_reported() -> None:
    rows = [*DIAMOND, _row("%e", "%d", 6), _row("%e", "%a", 6)]  # a is already an ancestor of d
    report = check_tangle(tangle_from_edges(rows, "%r", root_timestamp=1))
    assert report.redundant == (("%e", "%a"),)


def test_a_reply_that_ignores_a_known_head_is_reported() -> None:
    rows = [_row("%a", None, 2), _row("%b", None, 3), _row("%c", "%b", 9)]  # c (t=9) ignores head a (t=2)
    report = check_tangle(tangle_from_edges(rows, "%r", root_timestamp=1))
    assert report.missed_heads == {"%b": ("%a",), "%c": ("%a",)}
    assert heads(tangle_from_edges(rows, "%r", root_timestamp=1)) == ["%a", "%c"]


def test_a_link_cycle_leaves_its_messages_unplaced() -> None:
    rows = [_row("%a", None, 2), _row("%x", "%y", 3), _row("%y", "%x", 4)]
    tangle = tangle_from_edges(rows, "%r", root_timestamp=1)
    assert check_tangle(tangle).unplaced == ("%x", "%y")
    assert causal_sort(tangle) == ["%r", "%a"]


def test_ties_follow_ssb_sort_received_then_claimed_time_then_id_descending() -> None:
    t = Tangle("thread", "%r", {"%a": ("%r",), "%b": ("%r",), "%c": ("%r",)},
               {"%r": 1, "%a": 5, "%b": 5, "%c": 4})
    assert causal_sort(t) == ["%r", "%c", "%b", "%a"]
    received = Tangle(t.name, t.root, t.parents, t.timestamps, {"%r": 1, "%a": 2, "%b": 3, "%c": 9})
    assert causal_sort(received) == ["%r", "%a", "%b", "%c"]


def test_other_tangles_come_from_the_tangles_field() -> None:
    rows = [_row("%a", None, 2, tangle="gathering"), _row("%b", "%a", 3, tangle="gathering"), _row("%z", None, 4)]
    tangle = tangle_from_edges(rows, "%r", name="gathering", root_timestamp=1)
    assert causal_sort(tangle) == ["%r", "%a", "%b"]


@pytest.mark.parametrize("seed", range(20))
def test_order_is_topological_and_equals_the_tie_break_sort_when_times_agree(seed: int) -> None:
    thread = random_thread(random.Random(seed), 40)
    rows = tangle_rows_from_values(thread)
    tangle = tangle_from_edges(rows, thread[0]["key"], root_timestamp=thread[0]["value"]["timestamp"])
    order = causal_sort(tangle)
    place = {m: i for i, m in enumerate(order)}
    assert all(place[p] < place[m] for m in order for p in tangle.parents.get(m, ()))
    by_key = sorted(order, key=lambda m: (tangle.timestamps[m], [-ord(c) for c in m]))
    assert order == by_key
    depths = lamport_depths(tangle)
    assert all(depths[m] == 1 + max(depths[p] for p in tangle.parents[m]) for m in order if m != tangle.root)


def tangle_rows_from_values(thread: list[dict]) -> list[dict]:
    """tangle_edges rows for a thread of ``{key, value}`` records (not signed messages)."""
    rows = []
    for record in thread[1:]:
        content = record["value"]["content"]
        branch = content["branch"] if isinstance(content["branch"], list) else [content["branch"]]
        for parent in branch:
            rows.append(_row(record["key"], parent, record["value"]["timestamp"], root=content["root"]))
    return rows


def test_threads_of_a_generated_network() -> None:
    messages = list(generate_network(30, 1500, 7))
    rows = tangle_rows(messages)
    stamps = {m.id: m.value["timestamp"] for m in messages}
    roots = Counter(r["root"] for r in rows if r["tangle"] == "thread")
    checked = 0
    for root, _ in roots.most_common(10):
        tangle = tangle_from_edges(rows, root, root_timestamp=stamps.get(root))
        report = check_tangle(tangle)
        assert report.root_present and not report.missing and not report.unplaced
        order = causal_sort(tangle)
        assert order[0] == root and sorted(order) == sorted(tangle.timestamps)
        # The generator's clock only moves forward, so the causal order is the order of claimed time.
        assert order == sorted(order, key=stamps.__getitem__)
        assert set(lamport_depths(tangle)) == set(order)
        checked += 1
    assert checked == 10


def test_public_names_resolve_to_their_modules() -> None:
    import ssblab.tangles as tangles

    assert sorted(tangles.__all__) == sorted(tangles._HOME)
    for name in tangles.__all__:
        assert getattr(tangles, name).__module__.startswith("ssblab.tangles."), name
