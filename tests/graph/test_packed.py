"""The packed graph (numbered feeds, numpy blocks in Spark) against NetworkX's PageRank on a random graph."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from ssblab.graph import pagerank
from ssblab.graph.frames import edges_frame
from ssblab.graph.packed import pack_graph, packed_pagerank

nx = pytest.importorskip("networkx", reason="networkx is the reference: pip install networkx")
np = pytest.importorskip("numpy")

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_pagerank_equals_networkx_with_dangling_and_isolated_feeds(spark: SparkSession) -> None:
    rng = random.Random(4)
    feeds = [f"@{i}" for i in range(300)]
    edges = {(rng.choice(feeds[:250]), rng.choice(feeds)): rng.choice([1, 1, 1, -1, -2]) for _ in range(2000)}
    edges = {pair: weight for pair, weight in edges.items() if pair[0] != pair[1]}
    frame = edges_frame(spark, edges)
    isolated = spark.createDataFrame([("@alone",)], "id string")
    vertices = frame.selectExpr("src AS id").union(frame.selectExpr("dst AS id")).union(isolated).distinct()
    graph = nx.DiGraph()
    graph.add_nodes_from(["@alone", *(f for pair in edges for f in pair)])
    graph.add_edges_from(pair for pair, weight in edges.items() if weight == 1)
    order = list(graph)
    google = nx.google_matrix(graph, alpha=0.85, nodelist=order)  # NetworkX's definition, dangling feeds included
    x = np.full(len(order), 1.0 / len(order))
    for _ in range(10):
        x = x @ google
    reference = dict(zip(order, np.asarray(x).ravel().tolist(), strict=True))
    ranks = {r["id"]: r["pagerank"] for r in pagerank(vertices, frame.where("weight = 1"), 10).collect()}
    assert ranks.keys() == reference.keys()
    assert max(abs(ranks[f] - reference[f]) for f in ranks) < 1e-12
    for local_limit in (len(edges), 0):  # on the driver, then in Spark blocks
        packed = pack_graph(frame, vertices, local_limit=local_limit)  # blocks and unfollows are packed, not followed
        assert (packed.local is None) == (local_limit == 0) and (packed.blocks is None) == (local_limit > 0)
        assert packed.edges == len(edges) and "@alone" in packed.index
        ten = packed_pagerank(packed, 10)
        packed.unpersist()
        assert abs(ten.sum() - 1.0) < 1e-12 and max(abs(ten[packed.index[f]] - ranks[f]) for f in ranks) < 1e-15
