"""An incremental follow graph for the replication scheduler: feed it messages as they arrive, ask for hops.

Strategy: keep the edges (in first-seen order, as `contact_edges` does) and cache each answered
``(root, max_hops, server_max)``; a message that changes an edge's weight clears the cache, one that does not
(a repeated follow, a post) keeps it. Answers are always a full `traverse` of the current edges, so they equal
`hops(contact_edges(all messages so far), ...)`: the numbers ssb-server gives after a restart. (The live server's
incremental ``dynamic-dijkstra.update`` is not ported; see `ssblab.friends.metric`.)
"""

from __future__ import annotations

from collections.abc import Iterable

from ssblab.friends.contacts import ContactState, MessageLike, contact_of
from ssblab.friends.metric import Hops, explain, hops, replication_set

__all__ = ["FollowGraph"]


class FollowGraph:
    """Contact edges that grow message by message, with cached hop answers.

    Examples:
        >>> a, b = "@" + "A" * 43 + "=.ed25519", "@" + "Q" * 43 + "=.ed25519"
        >>> graph = FollowGraph()
        >>> graph.add({"author": a, "content": {"type": "contact", "contact": b, "following": True}})
        True
        >>> graph.hops(a)[b]
        1
    """

    def __init__(self, messages: Iterable[MessageLike] = ()) -> None:
        self._edges: dict[tuple[str, str], ContactState] = {}
        self._cache: dict[tuple[str, int, int | None], Hops] = {}
        self.extend(messages)

    @property
    def edges(self) -> dict[tuple[str, str], ContactState]:
        """A copy of the current edges (latest state per pair, first-seen order)."""
        return dict(self._edges)

    def add(self, message: MessageLike) -> bool:
        """Take one message in log order; True when it changed an edge's weight (hops may have changed)."""
        contact = contact_of(message)
        if contact is None:
            return False
        source, dest, state = contact
        old = self._edges.get((source, dest))
        self._edges[(source, dest)] = state
        if old is not None and old.weight == state.weight:
            return False
        self._cache.clear()
        return True

    def extend(self, messages: Iterable[MessageLike]) -> bool:
        """`add` each message; True when any of them changed an edge."""
        changed = False
        for message in messages:
            changed = self.add(message) or changed
        return changed

    def hops(self, root: str, max_hops: int = 3, *, server_max: int | None = None) -> Hops:
        """`ssblab.friends.metric` of the current edges (cached until an edge changes; do not mutate the answer)."""
        key = (root, max_hops, server_max)
        if key not in self._cache:
            self._cache[key] = hops(self._edges, root, max_hops, server_max=server_max)
        return self._cache[key]

    def replication_set(self, root: str, max_hops: int = 2) -> set[str]:
        """`ssblab.friends.replication_set` of the current edges."""
        return replication_set(self._edges, root, max_hops)

    def explain(self, root: str, feed: str, max_hops: int = 2) -> list[str]:
        """`ssblab.friends.explain` of the current edges."""
        return explain(self._edges, root, feed, max_hops)
