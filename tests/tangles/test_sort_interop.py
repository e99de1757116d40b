"""Our thread order and heads against ssb-sort 1.1 from npm (interop/js/sort.js), on the same threads."""

from __future__ import annotations

import base64
import random
from collections import Counter
from typing import Any

import pytest

from ssblab.generate import generate_network
from ssblab.tangles.thread import Tangle, causal_sort, heads, ssb_sort, tangle_from_edges
from tests.jsref import requires_node, run_js_json
from tests.tangles.edges import random_thread, tangle_rows
from tests.tangles.test_thread import tangle_rows_from_values

pytestmark = [pytest.mark.interop, requires_node]


def _js_sort(threads: list[list[dict[str, Any]]]) -> list[dict[str, list[str]]]:
    return run_js_json("sort.js", input=threads)


def test_random_threads_with_many_equal_timestamps() -> None:
    threads = [random_thread(random.Random(seed), size) for seed, size in enumerate([2, 3, 5, 10, 30, 60] * 5)]
    for thread in threads:
        random.Random(len(thread)).shuffle(thread)  # ssb-sort gets them in no particular order
    answers = _js_sort(threads)
    for thread, answer in zip(threads, answers, strict=True):
        root = next(r for r in thread if "root" not in r["value"]["content"])
        tangle = tangle_from_edges(tangle_rows_from_values([root, *(r for r in thread if r is not root)]),
                                   root["key"], root_timestamp=root["value"]["timestamp"])
        assert causal_sort(tangle) == answer["order"]
        assert heads(tangle) == answer["heads"]


def test_threads_of_a_generated_network() -> None:
    messages = list(generate_network(30, 2000, 3))
    rows = tangle_rows(messages)
    by_id = {m.id: m for m in messages}
    biggest = [root for root, _ in Counter(r["root"] for r in rows if r["tangle"] == "thread").most_common(12)]
    threads, tangles = [], []
    for root in biggest:
        members = [root, *dict.fromkeys(r["id"] for r in rows if r["root"] == root)]
        # Without `previous`: ssb-sort counts it as a link (two replies in a row by one author would then
        # not both be heads), while a tangle's links are root/branch only.
        values = [{k: v for k, v in by_id[m].value.items() if k != "previous"} for m in members]
        threads.append([{"key": m, "value": v} for m, v in zip(members, values, strict=True)])
        tangles.append(tangle_from_edges(rows, root, root_timestamp=by_id[root].value["timestamp"]))
    answers = _js_sort(threads)
    assert sum(len(t) for t in threads) > 60
    for tangle, answer in zip(tangles, answers, strict=True):
        assert causal_sort(tangle) == answer["order"]
        assert heads(tangle) == answer["heads"]


def _tangle_of(thread: list[dict[str, Any]]) -> Tangle:
    root = next(r for r in thread if "root" not in r["value"]["content"])
    received = {r["key"]: r["timestamp"] for r in thread if "timestamp" in r}
    return tangle_from_edges(tangle_rows_from_values([root, *(r for r in thread if r is not root)]), root["key"],
                             root_timestamp=root["value"]["timestamp"], received=received)


def _is_total_order(tangle: Tangle, order: list[str]) -> bool:
    """Whether ssb-sort's comparator is transitive on this thread: then any sort gives one answer."""
    rank = {m: i for i, m in enumerate(ssb_sort(tangle, order))}
    before = {(a, b) for a in order for b in order if rank[a] < rank[b]}
    return all(ssb_sort(tangle, [a, b]) == [a, b] for a, b in before)


def test_contradicting_timestamps_give_exactly_the_order_of_ssb_sort() -> None:
    rng = random.Random(7)
    sizes = [2, 3, 4, 6, 10, 20, 40, 63, 64, 65, 100, 130, 300]
    threads = [random_thread(rng, size, contradict=True) for size in sizes * 6]
    for thread in threads:
        rng.shuffle(thread)
    answers = _js_sort(threads)
    consistent = 0
    for thread, answer in zip(threads, answers, strict=True):
        tangle, given = _tangle_of(thread), [r["key"] for r in thread]
        assert ssb_sort(tangle, given) == answer["order"]
        assert heads(tangle) == answer["heads"]
        mine = causal_sort(tangle)
        assert _is_causal(mine, tangle)
        if len(thread) <= 40 and _is_total_order(tangle, given):
            consistent += 1
            assert mine == answer["order"]
    assert 10 < consistent < len(threads)
    assert any(not _is_causal(a["order"], t) for a, t in zip(answers, map(_tangle_of, threads), strict=True))


def _is_causal(order: list[str], tangle: Tangle) -> bool:
    place = {m: i for i, m in enumerate(order)}
    return all(place[p] < place[m] for m in order for p in tangle.parents.get(m, ()) if p in place)


def test_a_reply_claiming_to_be_older_than_its_parent() -> None:
    root, a, b, c = ("%" + base64.b64encode(bytes([i]) * 32).decode() + ".sha256" for i in range(4))

    def record(key: str, stamp: int, parent: str | None = None) -> dict[str, Any]:
        content = {"type": "post"} if parent is None else {"type": "post", "root": root, "branch": parent}
        return {"key": key, "value": {"author": "@a", "timestamp": stamp, "content": content}}

    cases = [
        [record(root, 10), record(a, 5, root), record(b, 1, a)],  # replies older than their parents
        [record(b, 10, a), record(a, 10, root), record(root, 10)],  # all equal: ancestry, then ids descending
        [record(root, 10), record(a, 2**42, root), record(b, 20, a), record(c, 15, root)],  # a in the future
    ]
    answers = _js_sort(cases)
    for thread, answer in zip(cases, answers, strict=True):
        tangle = _tangle_of(thread)
        assert ssb_sort(tangle, [r["key"] for r in thread]) == answer["order"] == causal_sort(tangle)
