"""Hops with the exact numbers of ssb-friends 4.4.10 in ssb-server 16 (layered-graph 1.2 + dynamic-dijkstra 1.0.2).

Strategy: a line-for-line port of ``dynamic-dijkstra``'s ``traverse`` with its ``simple.js`` metric, including
its heap (npm ``heap`` 0.2.7, Python's heapq algorithm ordered by the *current* hop value of each queued feed, so
stale entries sit where the JS ones do) and its iteration order (edges in first-seen order). The order turns out
not to matter: the answer is the order-free fixpoint "each feed's value is ``min`` over ``add(value of source,
weight)`` for its sources that expand" (`tests/friends/test_hops.py` checks this with hypothesis up to max 5), so a
level-by-level (Spark) version can compute the same numbers without the heap.

The metric (``dynamic-dijkstra/simple.js``), with ``h`` the hop value of the edge's source:

* edge weights: follow ``1``, block ``-1``, unfollow/unblock ``-2`` (see `contacts`);
* ``add(h, w)``: nothing when ``h < 0`` (a blocked feed's edges are never followed); ``h + w`` for a follow;
  ``-h + w`` for a block or unfollow, i.e. ``-(h + 1)`` blocked, ``-(h + 2)`` unfollowed. So the root's block is
  -1, the root's unfollow -2, a friend's block -2, a friend's unfollow -3, a friend-of-friend's block -3, ...;
* ``min(a, b)``: the smaller absolute value; on a tie the positive one. A block by the root (-1) beats every
  follow (>= 2) by others; a friend's block (-2) ties with another friend's follow (2) and the follow wins, but
  beats a friend-of-friend's follow (3); an unfollow by the root (-2) loses to a friend's follow (2);
* ``expand(h, max)``: a feed's edges are followed only when ``0 <= h < max``: feeds at ``max`` are reported but
  not expanded, and negatives are reported for blocks/unfollows made by feeds at ``h < max`` (down to
  ``-(max + 1)``);
* the root starts at 0 and stays 0: nothing has a smaller absolute value, and a self-edge adds at least 1.

Which traversal the server answers (layered-graph ``getHops``): the server keeps one traversal from its own id at
its configured ``friends.hops`` (ssb-config 3.4.6 default: 2). ``friends.hops({start, max})`` (``max`` 0 or absent
meaning the configured one) returns that stored traversal when start is its id and max is equal; *filters* it to
values ``<= max`` when max is smaller (negatives all pass, so ``max: 1`` can show a -3 that ``max: 3`` does not);
and traverses afresh for a larger max or another start. `hops` with ``server_max`` reproduces that rule.

The live server updates its stored traversal incrementally (``dynamic-dijkstra.update``) as contacts arrive; that
path is not ported: these numbers are the server's after a (re)start, i.e. from the full log.
"""

from __future__ import annotations

from collections.abc import Mapping

from ssblab.friends.contacts import BLOCK, FOLLOW, ContactState

__all__ = [
    "DEFAULT_SERVER_MAX",
    "Graph",
    "Hops",
    "build_graph",
    "expands",
    "explain",
    "hops",
    "js_add",
    "js_min",
    "replication_set",
    "traverse",
]

Graph = dict[str, dict[str, int]]
Hops = dict[str, int]

DEFAULT_SERVER_MAX = 2  # ssb-config 3.4.6 defaults friends.hops to 2 (ssb-friends' own fallback, 3, never applies)


def js_add(h: int | None, weight: int | None) -> int | None:
    """``simple.add``: the value an edge of ``weight`` gives its destination from a source at ``h``."""
    if h is None or h < 0 or weight is None:
        return None
    # simple.js turns a 0 weight into 0.1; contact edges are never 0, so that branch is not ported.
    if weight >= 0:
        return h + weight
    return -h + weight


def js_min(a: int | None, b: int | None) -> int | None:
    """``simple.min``: the smaller absolute value, the positive one on a tie; None means unset."""
    if a is None:
        return b
    if b is None:
        return a
    if abs(a) == abs(b):
        return max(a, b)
    return a if abs(a) < abs(b) else b


def expands(h: int | None, max_hops: int) -> bool:
    """``simple.expand``: whether a feed at ``h`` passes its edges on."""
    return h is not None and 0 <= h < max_hops


class _JsHeap:
    """npm ``heap`` 0.2.7 as dynamic-dijkstra uses it: feeds ordered by their hop value *at comparison time*."""

    def __init__(self, hops: Hops) -> None:
        self._hops = hops
        self._nodes: list[str] = []

    def _less(self, a: str, b: str) -> bool:
        return self._hops[a] < self._hops[b]

    def __bool__(self) -> bool:
        return bool(self._nodes)

    def push(self, item: str) -> None:
        self._nodes.append(item)
        self._sift_down(0, len(self._nodes) - 1)

    def pop(self) -> str:
        nodes = self._nodes
        last = nodes.pop()
        if not nodes:
            return last
        top, nodes[0] = nodes[0], last
        self._sift_up(0)
        return top

    def _sift_down(self, start: int, pos: int) -> None:
        nodes, item = self._nodes, self._nodes[pos]
        while pos > start:
            parent = (pos - 1) >> 1
            if not self._less(item, nodes[parent]):
                break
            nodes[pos] = nodes[parent]
            pos = parent
        nodes[pos] = item

    def _sift_up(self, pos: int) -> None:
        nodes, start, item = self._nodes, pos, self._nodes[pos]
        child = 2 * pos + 1
        while child < len(nodes):
            right = child + 1
            if right < len(nodes) and not self._less(nodes[child], nodes[right]):
                child = right
            nodes[pos] = nodes[child]
            pos = child
            child = 2 * pos + 1
        nodes[pos] = item
        self._sift_down(start, pos)


def traverse(graph: Graph, root: str, max_hops: int, parents: dict[str, str] | None = None) -> Hops:
    """dynamic-dijkstra ``traverse(g, _g, max, start)`` over a weighted graph.

    Args:
        graph: ``{source: {dest: weight}}`` in first-seen order (`build_graph`).
        root: the start feed (hop 0).
        max_hops: feeds at ``max_hops`` or beyond are not expanded.
        parents: when given, filled with the feed whose edge last set each value (for `explain`).
    """
    hops: Hops = {root: 0}
    queue = _JsHeap(hops)
    queue.push(root)
    while queue:
        source = queue.pop()
        if not expands(hops[source], max_hops):
            continue
        for dest, weight in graph.get(source, {}).items():
            value = js_min(hops.get(dest), js_add(hops[source], weight))
            if value is not None and value != hops.get(dest):
                hops[dest] = value
                if parents is not None:
                    parents[dest] = source
                queue.push(dest)
    return hops


def build_graph(edges: Mapping[tuple[str, str], ContactState | int]) -> Graph:
    """``{source: {dest: weight}}`` from `contact_edges` (or hand-made integer weights), keeping their order."""
    graph: Graph = {}
    for (source, dest), state in edges.items():
        graph.setdefault(source, {})[dest] = state if isinstance(state, int) else state.weight
    return graph


def hops(
    edges: Mapping[tuple[str, str], ContactState | int],
    root: str,
    max_hops: int = 3,
    *,
    server_max: int | None = None,
) -> Hops:
    """What ssb-server 16 answers to ``friends.hops({start: root, max: max_hops})``.

    Args:
        edges: `contact_edges` of the log (or ``{(source, dest): weight}``).
        root: the start feed.
        max_hops: the query's ``max`` (0 means the server's configured value, as in JS).
        server_max: when ``root`` is the server's own id, its configured ``friends.hops`` (ssb-server 16 with
            default config: 2); a smaller ``max_hops`` then filters that traversal instead of traversing afresh.
            None: answer as for any other start (a fresh traversal).

    Returns:
        ``{feed: value}``: 0 for the root, 1..max for followed feeds, negative for blocked or unfollowed ones.

    Examples:
        >>> hops({("@me", "@friend"): 1, ("@friend", "@troll"): 1, ("@me", "@troll"): -1}, "@me")
        {'@me': 0, '@friend': 1, '@troll': -1}
    """
    graph = build_graph(edges)
    if server_max is not None:
        max_hops = max_hops or server_max
        if max_hops < server_max:
            stored = traverse(graph, root, server_max)
            return {feed: value for feed, value in stored.items() if value <= max_hops}
    return traverse(graph, root, max_hops)


def replication_set(edges: Mapping[tuple[str, str], ContactState | int], root: str, max_hops: int = 2) -> set[str]:
    """The feeds a peer with ``friends.hops = max_hops`` replicates: ``0 <= hops <= max_hops`` (glue/replicate.js)."""
    return {feed for feed, value in hops(edges, root, max_hops).items() if 0 <= value <= max_hops}


def explain(edges: Mapping[tuple[str, str], ContactState | int], root: str, feed: str, max_hops: int = 2) -> list[str]:
    """Why ``feed`` is (or is not) replicated by ``root``: the follows that bring it in range, or what excludes it.

    Returns:
        One line per edge of the deciding path, ending with the follow, block or unfollow that set ``feed``'s
        value; or one line saying it is out of reach.
    """
    graph = build_graph(edges)
    parents: dict[str, str] = {}
    values = traverse(graph, root, max_hops, parents)
    if feed not in values:
        return [f"{feed} is not reached within {max_hops} hops of {root}: no contact from a feed at hop < {max_hops}"]
    if feed == root:
        return [f"{root} is the root (hop 0)"]
    lines = _follow_path(graph, values, parents, parents[feed])
    value, parent = values[feed], parents[feed]
    weight = graph[parent][feed]
    if weight == FOLLOW:
        lines.append(f"{parent} follows {feed}: hop {value}, replicated")
    elif weight == BLOCK:
        lines.append(f"{parent} blocks {feed}: hops {value}, excluded (a block at hop {values[parent]})")
    else:
        lines.append(f"{parent} unfollowed (or unblocked) {feed}: hops {value}, not replicated")
    return lines


def _follow_path(graph: Graph, values: Hops, parents: dict[str, str], feed: str) -> list[str]:
    """The follow edges from the root to ``feed`` (a feed with a positive value) along the recorded parents."""
    path: list[str] = []
    seen = {feed}
    while feed in parents:
        parent = parents[feed]
        path.append(f"{parent} follows {feed}: hop {values[feed]}")
        if parent in seen:  # cannot happen with positive values; guards against a malformed parent map
            break
        seen.add(parent)
        feed = parent
    path.reverse()
    return path
