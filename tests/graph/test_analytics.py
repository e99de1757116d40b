"""Follow-graph analytics on every engine against NetworkX on one generated network (NetworkX is the reference)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from ssblab.friends import BLOCK, FOLLOW, UNFOLLOW, contact_edges
from ssblab.generate import generate_network
from ssblab.graph import FollowNetwork

nx = pytest.importorskip("networkx", reason="networkx is the reference: pip install networkx")
np = pytest.importorskip("numpy")

MESSAGES = list(generate_network(40, 2500, seed=8))


@pytest.fixture(scope="module")
def reference() -> Any:
    edges = contact_edges(MESSAGES)
    graph = nx.DiGraph()
    graph.add_nodes_from({feed for pair in edges for feed in pair})
    graph.add_edges_from(pair for pair, state in edges.items() if state.weight == FOLLOW and pair[0] != pair[1])
    return graph


def groups(table: Any) -> set[frozenset[str]]:
    found: dict[Any, set[str]] = {}
    for row in table.to_pylist():
        found.setdefault(row["component"], set()).add(row["id"])
    return {frozenset(members) for members in found.values()}


def google_pagerank(graph: Any, iterations: int = 10) -> dict[str, float]:
    """NetworkX's Google matrix (dangling rows spread uniformly), power iterations from the uniform vector."""
    order = list(graph)
    google = nx.google_matrix(graph, alpha=0.85, nodelist=order)
    x = np.full(len(order), 1.0 / len(order))
    for _ in range(iterations):
        x = x @ google
    return dict(zip(order, np.asarray(x).ravel().tolist(), strict=True))


def test_degrees_mutual_follows_and_pagerank(engine: Any, reference: Any) -> None:
    net = FollowNetwork.from_messages(MESSAGES, engine=engine)
    degrees = {r["id"]: (r["in_degree"], r["out_degree"]) for r in net.degrees().to_pylist()}
    assert degrees == {feed: (reference.in_degree(feed), reference.out_degree(feed)) for feed in reference}
    mutual = {(r["a"], r["b"]) for r in net.mutual_follows().to_pylist()}
    assert mutual == {tuple(sorted((a, b))) for a, b in reference.edges if reference.has_edge(b, a)}
    ranks = {r["id"]: r["pagerank"] for r in net.pagerank(10).to_pylist()}
    expected = google_pagerank(reference)
    assert ranks.keys() == expected.keys()
    assert max(abs(ranks[f] - expected[f]) for f in ranks) < 1e-12


def test_components_triangles_and_motifs(engine: Any, reference: Any) -> None:
    net = FollowNetwork.from_messages(MESSAGES, engine=engine)
    assert groups(net.components()) == set(map(frozenset, nx.weakly_connected_components(reference)))
    assert groups(net.components(strong=True)) == set(map(frozenset, nx.strongly_connected_components(reference)))
    # Numbered by their smallest feed: the same labels on every engine.
    labels = net.components(strong=True).to_pylist()
    firsts = [min(r["id"] for r in labels if r["component"] == c) for c in range(len(groups(net.components(
        strong=True))))]
    assert firsts == sorted(firsts)
    triangles = {r["id"]: r["triangles"] for r in net.triangles().to_pylist()}
    assert triangles == nx.triangles(reference.to_undirected())
    edges = set(reference.edges)
    cycles = sum((b, c) in edges and (c, a) in edges for a, b in edges for c in reference.successors(b) if c != a)
    forward = sum((a, c) in edges for a, b in edges for c in reference.successors(b) if c not in (a, b))
    assert net.motif_counts() == {"mutual_pairs": sum((b, a) in edges for a, b in edges) // 2,
                                  "follow_cycles": cycles // 3, "feed_forward": forward}


def test_follow_paths_are_the_smallest_shortest_chains(engine: Any, reference: Any) -> None:
    net = FollowNetwork.from_messages(MESSAGES, engine=engine)
    source = max(reference, key=reference.out_degree)
    reachable = nx.single_source_shortest_path_length(reference, source)
    targets = sorted(reachable, key=lambda feed: (-reachable[feed], feed))[:3]
    for target in targets:
        path = net.path(source, target)
        assert path == min(nx.all_shortest_paths(reference, source, target))
        assert all(reference.has_edge(a, b) for a, b in itertools.pairwise(path))
    unreachable = sorted(set(reference) - set(reachable))
    if unreachable:
        assert net.path(source, unreachable[0]) is None
    assert net.path(source, source) == [source]
    assert net.path(source, targets[0], max_length=reachable[targets[0]] - 1) is None


def test_pagerank_counts_dangling_isolated_and_blocked_feeds(engine: Any) -> None:
    rng = random.Random(4)
    feeds = [f"@{i}" for i in range(300)]
    edges = {(rng.choice(feeds[:250]), rng.choice(feeds)): rng.choice([1, 1, 1, -1, -2]) for _ in range(2000)}
    edges = {pair: weight for pair, weight in edges.items() if pair[0] != pair[1]}
    edges[("@alone", "@alone")] = 1  # a self-follow: the feed counts, the follow does not
    graph = nx.DiGraph()
    graph.add_nodes_from(["@alone", *(f for pair in edges for f in pair)])
    graph.add_edges_from(pair for pair, weight in edges.items() if weight == 1 and pair[0] != pair[1])
    net = FollowNetwork.from_edges(edges, engine=engine)
    ranks = {r["id"]: r["pagerank"] for r in net.pagerank(10).to_pylist()}
    expected = google_pagerank(graph)
    assert ranks.keys() == expected.keys() and "@alone" in ranks
    assert max(abs(ranks[f] - expected[f]) for f in ranks) < 1e-12
    assert abs(sum(ranks.values()) - 1.0) < 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_weak_components_of_awkward_graphs(seed: int) -> None:
    """The local sweep from the giant component, then scipy on what it leaves: feeds with no follow (only blocks
    or unfollows), feeds that follow only themselves, pairs, and a giant that is not the first feed's."""
    rng = random.Random(seed)
    feeds = [f"@{k:03d}" for k in range(60)]
    edges = {}
    giant = feeds[20:50]
    for _ in range(120):
        edges[rng.choice(giant), rng.choice(giant)] = FOLLOW
    edges.update({(feeds[0], feeds[1]): FOLLOW, (feeds[2], feeds[2]): FOLLOW, (feeds[3], feeds[4]): BLOCK,
                  (feeds[5], feeds[6]): UNFOLLOW, (feeds[7], feeds[8]): FOLLOW, (feeds[9], feeds[8]): FOLLOW})
    for _ in range(rng.randrange(8)):
        edges[rng.choice(feeds[50:]), rng.choice(feeds)] = FOLLOW
    reference = nx.DiGraph()
    reference.add_nodes_from({feed for pair in edges for feed in pair})
    reference.add_edges_from(pair for pair, weight in edges.items() if weight == FOLLOW)
    net = FollowNetwork.from_edges(edges, engine="local")
    assert groups(net.components()) == set(map(frozenset, nx.weakly_connected_components(reference)))
