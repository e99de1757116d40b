"""Tangles on Spark against the pure functions, on one small generated network (few, small tests)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ssblab.generate import generate_network
from ssblab.pipeline.schema import TABLES, ddl
from ssblab.tangles.causal import happened_before
from ssblab.tangles.spark import dangling_links, local_causal_index, tangle_depths, tangle_heads
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
