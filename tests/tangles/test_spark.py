"""Tangles on Spark against the pure functions, on one small generated network (few, small tests)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ssblab.core.schema import TABLES, ddl
from ssblab.generate import generate_network
from ssblab.tangles.causal import CausalMessage, build_index, happened_before
from ssblab.tangles.spark import (
    causal_depths,
    dangling_links,
    dangling_references,
    local_causal_index,
    tangle_depths,
    tangle_heads,
)
from ssblab.tangles.synthetic import message_dag
from ssblab.tangles.thread import heads, lamport_depths, tangle_from_edges
from tests.tangles.edges import causal_messages, closure, tangle_rows

pytest.importorskip("pyspark")


@pytest.fixture(scope="module")
def network():
    return list(generate_network(15, 400, 5))


def _tables(spark, messages, *, drop: bool = True):
    rows = tangle_rows(messages)
    # Drop one root so that dangling links show up.
    dropped = Counter(r["root"] for r in rows).most_common(2)[1][0] if drop else None
    kept = [m for m in messages if m.id != dropped]
    message_rows = [(m.id, m.value["author"], m.value["sequence"], float(m.value["timestamp"])) for m in kept]
    msgs = spark.createDataFrame(message_rows, "id string, author string, sequence bigint, timestamp double")
    columns = [c.name for c in TABLES["tangle_edges"]]
    edges = spark.createDataFrame([tuple(r[c] for c in columns) for r in rows], ddl("tangle_edges"))
    return msgs, edges, rows, dropped, kept


@pytest.mark.slow  # one round of joins per thread level (8 here): 20-50 s on two busy cores
def test_depths_heads_and_dangling_links_match_the_pure_functions(spark, network) -> None:
    msgs, edges, rows, dropped, _ = _tables(spark, network)
    stamps = {m.id: m.value["timestamp"] for m in network}
    got = {(r["root"], r["id"]): r["depth"] for r in tangle_depths(edges).collect()}
    found_heads = {r["root"]: (r["heads"], r["concurrent"]) for r in tangle_heads(edges).collect()}
    for root in {r["root"] for r in rows}:
        tangle = tangle_from_edges(rows, root, root_timestamp=stamps[root])
        assert {i: d for (r, i), d in got.items() if r == root} == lamport_depths(tangle)
        assert found_heads[root] == (heads(tangle), len(heads(tangle)) > 1)
    dangling = dangling_links(edges, msgs).collect()
    assert dangling and {r["parent"] for r in dangling} == {dropped}


def test_local_index_from_the_tables(spark, network) -> None:
    msgs, edges, _, _, kept = _tables(spark, network, drop=False)  # a dropped message would leave a feed gap
    link_rows = [(m.id, m.value["author"], float(m.value["timestamp"]), ref, "message", "$")
                 for m in kept for ref in causal_messages([m])[0].references]
    links = spark.createDataFrame(link_rows, ddl("links"))
    index = local_causal_index(msgs, links, edges, every=4)
    causal = causal_messages(kept)
    ancestors = closure(causal)
    assert len(index) == len(kept)
    rng = random.Random(3)
    for _ in range(2000):
        a, b = rng.choice(causal).id, rng.choice(causal).id
        assert happened_before(index, a, b) == (a in ancestors[b])


def _brute_depths(messages: list[CausalMessage]) -> dict[str, tuple[int, bool]]:
    """Longest reference chain (``previous`` included) over present messages, and whether all ancestry is there."""
    by_id = {m.id: m for m in messages}
    by_place = {(m.author, m.sequence): m.id for m in messages}
    found: dict[str, tuple[int, bool]] = {}
    for m in messages:  # any order: a stack settles the ancestors first
        stack = [m.id]
        while stack:
            current = by_id[stack[-1]]
            before = by_place.get((current.author, current.sequence - 1))
            parents = [r for r in current.references if r in by_id and r != current.id]
            parents += [before] if before else []
            todo = [p for p in parents if p not in found]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            lost = (before is None and current.sequence > 1) or any(r not in by_id for r in current.references)
            depth = max((found[p][0] + 1 for p in parents), default=0)
            found[current.id] = (depth, not lost and all(found[p][1] for p in parents))
    return found


def _causal_tables(spark, messages: list[CausalMessage]):
    msgs = spark.createDataFrame([(m.id, m.author, m.sequence, 0.0) for m in messages],
                                 "id string, author string, sequence bigint, timestamp double")
    links = spark.createDataFrame([(m.id, m.author, 0.0, r, "message", "$.link") for m in messages
                                   for r in m.references], ddl("links"))
    edges = spark.createDataFrame([], ddl("tangle_edges"))
    return msgs, links, edges


def _spark_depths(spark, messages: list[CausalMessage]) -> dict[str, tuple[int, bool]]:
    rows = causal_depths(*_causal_tables(spark, messages)).collect()
    return {r["id"]: (r["depth"], r["complete"]) for r in rows}


def test_causal_depths_match_brute_force_on_random_dags(spark) -> None:
    rng = random.Random(1)  # four rounds: each costs a few Spark jobs
    messages = [*message_dag(rng, 150, 6, reference_rate=0.6, mean_age=20.0),
                *message_dag(rng, 60, 3, reference_rate=0.9, mean_age=5.0, seed_tag=1)]
    want = _brute_depths(messages)
    assert _spark_depths(spark, messages) == want
    assert max(d for d, _ in want.values()) > 40 and all(ok for _, ok in want.values())
    index, ancestors = build_index(messages), closure(messages)
    depths = {i: d for i, (d, _) in want.items()}  # depths are a linear extension of happened-before
    for _ in range(500):
        a, b = rng.choice(messages).id, rng.choice(messages).id
        if happened_before(index, a, b):
            assert depths[a] < depths[b] and a in ancestors[b]


def test_causal_depths_report_missing_messages_instead_of_guessing(spark) -> None:
    messages = list(message_dag(random.Random(12), 120, 4, reference_rate=0.7, mean_age=10.0))
    dropped = {messages[30].id, messages[71].id}  # makes dangling references and feed gaps
    kept = [m for m in messages if m.id not in dropped]
    want = _brute_depths(kept)
    assert _spark_depths(spark, kept) == want
    assert 0 < sum(not ok for _, ok in want.values()) < len(kept)
    msgs, links, edges = _causal_tables(spark, kept)
    dangling = {(r["id"], r["ref"]) for r in dangling_references(msgs, links, edges).collect()}
    assert dangling == {(m.id, r) for m in kept for r in m.references if r in dropped}


def test_causal_depths_on_a_generated_network(spark, network) -> None:
    msgs, edges, rows, _, kept = _tables(spark, network, drop=False)
    causal = causal_messages(kept)
    link_rows = [(m.id, m.author, 0.0, ref, "message", "$") for m in causal for ref in m.references]
    links = spark.createDataFrame(link_rows, ddl("links"))
    tangled = {(r["id"], r["parent"] or r["root"]) for r in rows}
    refs = {m.id: tuple(dict.fromkeys([*m.references, *(p for i, p in tangled if i == m.id)])) for m in causal}
    want = _brute_depths([CausalMessage(m.id, m.author, m.sequence, refs[m.id]) for m in causal])
    got = {r["id"]: (r["depth"], r["complete"]) for r in causal_depths(msgs, links, edges).collect()}
    assert got == want
