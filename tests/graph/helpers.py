"""Random follow graphs for the graph tests: many small disjoint graphs, so one Spark job checks them all."""

from __future__ import annotations

import random

from ssblab.friends import BLOCK, FOLLOW, UNFOLLOW

Edges = dict[tuple[str, str], int]


def random_graph(rng: random.Random, name: str, max_feeds: int = 12) -> tuple[str, Edges]:
    """A root and a random graph of follows (mostly), blocks and unfollows; feed names start with ``name``."""
    feeds = [f"{name}:{i}" for i in range(rng.randint(1, max_feeds))]
    edges: Edges = {}
    for _ in range(rng.randint(0, 3 * len(feeds))):
        edges[(rng.choice(feeds), rng.choice(feeds))] = rng.choice([FOLLOW, FOLLOW, FOLLOW, BLOCK, UNFOLLOW])
    return feeds[0], edges


def random_graphs(seed: int, count: int) -> list[tuple[str, Edges]]:
    rng = random.Random(seed)
    return [random_graph(rng, f"g{i}") for i in range(count)]


def feed_id(i: int) -> str:
    """A well-formed, made-up feed id (ssb-ref's isFeed accepts it)."""
    return "@" + f"{i:043d}".replace("0", "A") + "=.ed25519"
