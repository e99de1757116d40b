"""Our thread order and heads against ssb-sort 1.1 from npm (interop/js/sort.js), on the same threads."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from ssblab.generate import generate_network
from ssblab.tangles.thread import causal_sort, heads, tangle_from_edges
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
