"""The follow-graph explorer: pick a root and a hop limit, see its replication set in the network and per hop.

Strategy: a plain model (`GraphExplorer`: which root, how many hops) over a `GraphSnapshot`, answering with the
pure ssb-friends traversal and caching one traversal per (root, hops); pure functions turn the answer into counts,
node states, a drawing and HTML. The ipywidgets view (`graph_explorer_view`, below) only forwards the
picker and the slider to the model and shows what it renders.

Invariants: `replication_set` is ``{feed: 0 <= hops <= max_hops}`` of ``friends.hops({start: root, max})``, the
same set as `ssblab.graph.FollowNetwork.replication_set`; `counts` add up to every feed of the graph.
"""

from __future__ import annotations

import html
from typing import Any

from ssblab.graph.labels import short_id
from ssblab.widgets.common import WidgetError, box, clickable_svg
from ssblab.widgets.drawing import drawing_frames, network_svg, node_states, radial_layout
from ssblab.widgets.snapshot import GraphSnapshot

__all__ = ["MAX_HOPS", "GraphExplorer", "graph_explorer_view", "hop_counts"]


MAX_HOPS = 6  # the slider's end: ssb-friends configurations in use stay at 1..3; 6 covers "everything reachable"


def hop_counts(values: dict[str, int], feeds: list[str], max_hops: int) -> list[tuple[str, int]]:
    """``[(bucket, feeds)]``: hop 0..max_hops, then ``blocked`` (negative), ``beyond`` (reached, not replicated)
    and ``unreached``."""
    buckets = {str(h): 0 for h in range(max_hops + 1)} | {"blocked": 0, "beyond": 0, "unreached": 0}
    for feed in set(feeds) | set(values):
        value = values.get(feed)
        if value is None:
            buckets["unreached"] += 1
        elif value < 0:
            buckets["blocked"] += 1
        elif value > max_hops:
            buckets["beyond"] += 1
        else:
            buckets[str(value)] += 1
    return list(buckets.items())


class GraphExplorer:
    """Which root, which hop limit; the replication set, counts per hop and a drawing for them.

    Examples:
        >>> snap = GraphSnapshot({("me", "a"): 1, ("a", "b"): 1, ("b", "c"): 1, ("me", "x"): -1})
        >>> explorer = GraphExplorer(snap, "me", max_hops=1)
        >>> sorted(explorer.replication_set)
        ['a', 'me']
        >>> explorer.set_max_hops(2).counts[:3]
        [('0', 1), ('1', 1), ('2', 1)]
    """

    def __init__(self, snapshot: GraphSnapshot, root: str | None = None, max_hops: int = 2, *,
                 max_nodes: int = 400) -> None:
        self.snapshot = snapshot
        self.max_nodes = max_nodes
        self._feeds = snapshot.feeds
        self._cache: dict[tuple[str, int], dict[str, int]] = {}
        if not self._feeds:
            raise WidgetError("graph explorer: the graph has no contacts, so there is no root to pick")
        self.root = self._known(root) if root is not None else self.roots()[0]
        self.max_hops = self._hop_limit(max_hops)

    def _known(self, feed: str) -> str:
        if feed not in self._feeds:
            raise WidgetError(f"graph explorer: {feed!r} is not a feed of this graph (no contact names it)")
        return feed

    @staticmethod
    def _hop_limit(max_hops: int) -> int:
        if not 0 <= max_hops <= MAX_HOPS:
            raise WidgetError(f"graph explorer: hops must be within 0..{MAX_HOPS}, got {max_hops}")
        return max_hops

    def roots(self) -> list[str]:
        """The feeds to pick from, those following the most feeds first (then by id)."""
        out = {feed: 0 for feed in self._feeds}
        for source, _ in self.snapshot.follows():
            out[source] += 1
        return sorted(self._feeds, key=lambda f: (-out[f], f))

    def set_root(self, root: str) -> GraphExplorer:
        self.root = self._known(root)
        return self

    def set_max_hops(self, max_hops: int) -> GraphExplorer:
        self.max_hops = self._hop_limit(max_hops)
        return self

    @property
    def hops(self) -> dict[str, int]:
        """``{feed: hops}`` from the root (cached per root and limit)."""
        key = (self.root, self.max_hops)
        if key not in self._cache:
            self._cache[key] = self.snapshot.hops(*key)
        return self._cache[key]

    @property
    def replication_set(self) -> set[str]:
        return {feed for feed, value in self.hops.items() if 0 <= value <= self.max_hops}

    @property
    def counts(self) -> list[tuple[str, int]]:
        return hop_counts(self.hops, self._feeds, self.max_hops)

    def growth(self) -> Any:
        """``hops, feeds``: the replication set within 0..N hops for every N up to the limit (pandas)."""
        import pandas as pd

        per_hop = dict(self.counts)
        totals = [sum(per_hop[str(h)] for h in range(n + 1)) for n in range(self.max_hops + 1)]
        return pd.DataFrame({"hops": list(range(self.max_hops + 1)), "feeds": totals})

    def click(self, feed: str) -> GraphExplorer:
        """What a click on a drawn feed does: that feed becomes the root (a feed outside the graph is refused)."""
        return self.set_root(feed)

    @property
    def title(self) -> str:
        return f"Replication set of {self.snapshot.label(self.root)}"

    def svg(self) -> str:
        """The drawing the widget shows: hop rings around the root, names, tooltips, clickable feeds."""
        follows = self.snapshot.follows()
        positions = radial_layout(self._feeds, self.hops, follows, self.max_hops, max_nodes=self.max_nodes)
        labels = {feed: self.snapshot.label(feed) for feed in positions}
        names = {feed: self.snapshot.names.get(feed) or short_id(feed) for feed in positions}
        return network_svg(positions, node_states(self.hops, self.root, self.max_hops), self.hops, labels, names,
                           follows, self.replication_set, max_hops=self.max_hops, title=self.title)

    def chart(self) -> dict[str, Any]:
        """The network around the root, the replication set highlighted (`ssblab.viz.follow_network`)."""
        from ssblab.viz.charts import follow_network

        follows = self.snapshot.follows()
        positions = radial_layout(self._feeds, self.hops, follows, self.max_hops, max_nodes=self.max_nodes)
        labels = {feed: self.snapshot.label(feed) for feed in positions}
        nodes, edges = drawing_frames(positions, node_states(self.hops, self.root, self.max_hops), self.hops,
                                      labels, follows, self.replication_set)
        return follow_network(nodes, edges, title=self.title,
                              subtitle=f"friends.hops = {self.max_hops}: {len(self.replication_set)} of "
                                       f"{len(self._feeds)} feeds replicated")

    def summary_html(self) -> str:
        """The counts per hop as a small table."""
        cells = "".join(f"<tr><td>{html.escape(bucket)}</td><td style='text-align:right'>{count}</td></tr>"
                        for bucket, count in self.counts)
        return (f"<div class='ssblab-summary'><b>{len(self.replication_set)}</b> feeds replicated within "
                f"{self.max_hops} hops<table><tr><th>hops</th><th>feeds</th></tr>{cells}</table></div>")

    def widget(self) -> Any:
        """The ipywidgets view (needs the ``notebooks`` extra)."""
        return graph_explorer_view(self)


def graph_explorer_view(model: GraphExplorer) -> Any:
    """Root picker and hops slider over `GraphExplorer.svg` (click a feed: it becomes the root) and its counts."""
    import ipywidgets as w

    label = model.snapshot.label
    picker = w.Dropdown(options=[(label(f), f) for f in model.roots()], value=model.root, description="root")
    slider = w.IntSlider(value=model.max_hops, min=0, max=MAX_HOPS, description="hops", continuous_update=False)
    counts = w.HTML()

    def render(*_: Any) -> None:
        drawing.svg = model.svg()
        counts.value = model.summary_html()

    def clicked(feed: str) -> None:
        model.click(feed)
        picker.value = feed  # the picker follows; its observer renders

    def picked(change: dict[str, Any]) -> None:
        model.set_root(change["new"])
        render()

    def slid(change: dict[str, Any]) -> None:
        model.set_max_hops(change["new"])
        render()

    drawing = clickable_svg(model.svg(), clicked)
    picker.observe(picked, names="value")
    slider.observe(slid, names="value")
    render()
    return box([box([picker, slider], "ssblab-controls", vertical=False),
                box([drawing, counts], "ssblab-body", vertical=False)], "ssblab-graph-explorer")
