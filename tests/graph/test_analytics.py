"""Follow-graph analytics against NetworkX on one generated network (NetworkX is the reference)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ssblab.friends import FOLLOW, contact_edges
from ssblab.generate import generate_network
from ssblab.graph import (
    FollowNetwork,
    connected_components,
    motif_counts,
    mutual_follows,
    strongly_connected_components,
    triangles,
)

nx = pytest.importorskip("networkx", reason="networkx is the reference: pip install networkx")
np = pytest.importorskip("numpy")

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow  # about a dozen Spark jobs (GraphX components, motif joins)


@pytest.fixture(scope="module")
def network(spark: SparkSession) -> Iterator[tuple[FollowNetwork, Any]]:
    messages = list(generate_network(40, 2500, seed=8))
    edges = contact_edges(messages)
    reference = nx.DiGraph()
    reference.add_nodes_from({feed for pair in edges for feed in pair})
    reference.add_edges_from(pair for pair, state in edges.items() if state.weight == FOLLOW and pair[0] != pair[1])
    yield FollowNetwork.from_messages(spark, messages), reference


def groups(rows: list[Any]) -> set[frozenset[str]]:
    found: dict[Any, set[str]] = {}
    for row in rows:
        found.setdefault(row["component"], set()).add(row["id"])
    return {frozenset(members) for members in found.values()}


def test_degrees_mutual_follows_and_pagerank(network: tuple[FollowNetwork, Any]) -> None:
    net, ref = network
    degrees = {r["id"]: (r["in_degree"], r["out_degree"]) for r in net.degrees().collect()}
    assert degrees == {feed: (ref.in_degree(feed), ref.out_degree(feed)) for feed in ref}
    mutual = {(r["a"], r["b"]) for r in mutual_follows(net.follows).collect()}
    assert mutual == {tuple(sorted((a, b))) for a, b in ref.edges if ref.has_edge(b, a)}
    # NetworkX's Google matrix (dangling rows spread uniformly), ten power iterations from the uniform vector.
    order = sorted(ref)
    google = nx.google_matrix(ref, alpha=0.85, nodelist=order)
    x = np.full(len(order), 1 / len(order))
    for _ in range(10):
        x = x @ google
    ranks = {r["id"]: r["pagerank"] for r in net.pagerank(10).collect()}
    assert [ranks[feed] for feed in order] == pytest.approx(list(np.asarray(x).ravel()), abs=1e-12)


def test_components_and_triangles(network: tuple[FollowNetwork, Any]) -> None:
    net, ref = network
    assert groups(connected_components(net.graph).collect()) == set(map(frozenset, nx.weakly_connected_components(ref)))
    strong = groups(strongly_connected_components(net.graph).collect())
    assert strong == set(map(frozenset, nx.strongly_connected_components(ref)))
    assert groups(net.components().collect()) == set(map(frozenset, nx.weakly_connected_components(ref)))
    assert groups(net.components(strong=True).collect()) == strong  # on the packed graph, the same groups
    found = {r["id"]: r["triangles"] for r in triangles(net.graph).collect()}
    assert found == nx.triangles(ref.to_undirected())


def test_motifs_and_follow_paths(network: tuple[FollowNetwork, Any]) -> None:
    net, ref = network
    edges = set(ref.edges)
    cycles = sum((b, c) in edges and (c, a) in edges for a, b in edges for c in ref.successors(b) if c != a) // 3
    forward = sum((a, c) in edges for a, b in edges for c in ref.successors(b) if c not in (a, b))
    assert motif_counts(net.graph) == {"mutual_pairs": sum((b, a) in edges for a, b in edges) // 2,
                                       "follow_cycles": cycles, "feed_forward": forward}
    source = max(ref, key=ref.out_degree)
    reachable = nx.single_source_shortest_path_length(ref, source)
    target = max(reachable, key=lambda feed: (reachable[feed], feed))
    path = net.path(source, target)
    assert path is not None and len(path) - 1 == reachable[target]
    assert all(ref.has_edge(a, b) for a, b in itertools.pairwise(path))
    unreachable = sorted(set(ref) - set(reachable))
    if unreachable:
        assert net.path(source, unreachable[0]) is None
    assert net.path(source, source) == [source]
