"""FollowGraph, fed message by message, answers what the batch functions answer on the same prefix."""

from __future__ import annotations

from ssblab.friends import FollowGraph, contact_edges, explain, hops, replication_set
from ssblab.generate import generate_network

A, B, C = ("@" + x * 43 + "=.ed25519" for x in "AQg")


def contact(author: str, dest: str, **fields: object) -> dict[str, object]:
    return {"author": author, "content": {"type": "contact", "contact": dest, **fields}}


def test_add_reports_weight_changes_only() -> None:
    graph = FollowGraph()
    assert graph.add(contact(A, B, following=True))
    assert not graph.add(contact(A, B, following=True))  # same weight: hops cannot change
    assert not graph.add({"author": A, "content": {"type": "post", "text": "hi"}})
    assert graph.hops(A) == {A: 0, B: 1}
    assert graph.add(contact(A, B, blocking=True))
    assert graph.hops(A) == {A: 0, B: -1}  # the cached answer was dropped
    assert graph.add(contact(B, C, following=True))
    assert graph.hops(B) == {B: 0, C: 1}


def test_incremental_equals_batch_on_every_prefix() -> None:
    messages = list(generate_network(30, 1500, seed=3))
    root = messages[0].author
    graph = FollowGraph()
    checked = 0
    for i, message in enumerate(messages, 1):
        if graph.add(message) and i % 10 == 0:
            edges = contact_edges(messages[:i])
            assert graph.edges == edges
            assert graph.hops(root) == hops(edges, root)
            assert graph.hops(root, 1, server_max=2) == hops(edges, root, 1, server_max=2)
            assert graph.replication_set(root) == replication_set(edges, root)
            checked += 1
    assert checked > 5
    assert any(value < 0 for value in graph.hops(root).values())
    feed = max(graph.hops(root), key=lambda f: graph.hops(root)[f])
    assert graph.explain(root, feed, 3) == explain(contact_edges(messages), root, feed, 3)
