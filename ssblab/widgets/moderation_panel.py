"""The moderation what-if panel: toggle blocks (by the root or by anyone), see who leaves the root's replication set
and whose view of a watched feed changes.

Strategy: a plain model (`ModerationPanel`: the root, the toggled blocks, the watched feed) over a `GraphSnapshot`.
A scenario is the snapshot with the blocks applied (`GraphSnapshot.with_blocks`, the rule of
`ssblab.graph.with_blocks`), and the answer is a `ssblab.graph.WhatIf` built with the library's own comparison
(`ssblab.graph.moderation.changes`), so the panel and `FollowNetwork.whatif` answer the same question the same way;
the tests check that they agree. The ipywidgets view (`moderation_panel_view`, below) only forwards
toggles to the model and shows what it renders.

Invariants: the blocks are a set (toggling twice restores the graph); self-blocks are refused; with no blocks the
answer is "nothing changes"; the viewers whose view is compared are the feeds the root replicates before the blocks
(as `ssblab.graph.whatif` does by default).
"""

from __future__ import annotations

import html
from typing import Any

from ssblab.graph.moderation import WhatIf, changes, is_replicated
from ssblab.widgets.common import WidgetError, box, chart_svg
from ssblab.widgets.drawing import drawing_frames, node_states, radial_layout
from ssblab.widgets.snapshot import GraphSnapshot

__all__ = ["ModerationPanel", "moderation_panel_view", "scenario"]


NO_FEED = "(none)"


def scenario(snapshot: GraphSnapshot, root: str, blocks: frozenset[tuple[str, str]], max_hops: int,
             feed: str | None) -> WhatIf:
    """`ssblab.graph.whatif` on a snapshot: the root's changes and, for ``feed``, the viewers whose value changes."""
    after = snapshot.with_blocks(blocks)
    before_root = snapshot.hops(root, max_hops)
    views: dict[str, tuple[int | None, int | None]] = {}
    if feed is not None:
        for viewer in sorted(f for f, value in before_root.items() if is_replicated(value, max_hops)):
            old, new = snapshot.hops(viewer, max_hops).get(feed), after.hops(viewer, max_hops).get(feed)
            if old != new:
                views[viewer] = (old, new)
    return WhatIf(root, max_hops, changes(before_root, after.hops(root, max_hops)), views)


class ModerationPanel:
    """The root, the blocks toggled on, the watched feed; the `WhatIf` they make.

    Examples:
        >>> snap = GraphSnapshot({("me", "a"): 1, ("a", "b"): 1, ("me", "c"): 1})
        >>> panel = ModerationPanel(snap, "me").toggle("me", "a")
        >>> panel.result().leaving
        ['a', 'b']
        >>> panel.toggle("me", "a").result().leaving
        []
    """

    def __init__(self, snapshot: GraphSnapshot, root: str, max_hops: int = 2, *, watch: str | None = None,
                 max_nodes: int = 400) -> None:
        self.snapshot = snapshot
        self._feeds = set(snapshot.feeds)
        self.root = self._known(root)
        self.max_hops = max_hops
        self.max_nodes = max_nodes
        self.blocks: frozenset[tuple[str, str]] = frozenset()
        self.watch = None if watch is None else self._known(watch)
        self._result: WhatIf | None = None

    def _known(self, feed: str) -> str:
        if feed not in self._feeds:
            raise WidgetError(f"moderation panel: {feed!r} is not a feed of this graph (no contact names it)")
        return feed

    def toggle(self, blocker: str, blocked: str) -> ModerationPanel:
        """Add the block ``blocker -> blocked``, or remove it when it is on."""
        if blocker == blocked:
            raise WidgetError(f"moderation panel: {blocker!r} cannot block itself (ssb-friends ignores self-contacts)")
        pair = (self._known(blocker), self._known(blocked))
        self.blocks = self.blocks - {pair} if pair in self.blocks else self.blocks | {pair}
        self._result = None
        return self

    def clear(self) -> ModerationPanel:
        self.blocks, self._result = frozenset(), None
        return self

    def set_watch(self, feed: str | None) -> ModerationPanel:
        """Which feed's view to compare across viewers (None: none)."""
        self.watch, self._result = (None if feed is None else self._known(feed)), None
        return self

    def candidates(self) -> list[str]:
        """Feeds worth blocking or watching: what the root replicates now (the root excluded), by label."""
        replicated = self.snapshot.replication_set(self.root, self.max_hops) - {self.root}
        return sorted(replicated, key=lambda f: (self.snapshot.label(f).lower(), f))

    def result(self) -> WhatIf:
        """What the toggled blocks change (cached until the next toggle)."""
        if self._result is None:
            self._result = scenario(self.snapshot, self.root, self.blocks, self.max_hops, self.watch)
        return self._result

    def states(self) -> dict[str, str]:
        """Node states after the blocks, with the feeds that leave the replication set marked ``leaving``."""
        after = self.snapshot.with_blocks(self.blocks).hops(self.root, self.max_hops)
        states = node_states(after, self.root, self.max_hops)
        return states | dict.fromkeys(self.result().leaving, "leaving")

    def chart(self) -> dict[str, Any]:
        """The network after the blocks, leavers highlighted (`ssblab.viz.follow_network`)."""
        from ssblab.viz.charts import follow_network

        before = self.snapshot.hops(self.root, self.max_hops)
        after = self.snapshot.with_blocks(self.blocks)
        follows = after.follows()
        positions = radial_layout(self._feeds, before, follows, self.max_hops, max_nodes=self.max_nodes)
        labels = {feed: self.snapshot.label(feed) for feed in positions}
        kept = after.replication_set(self.root, self.max_hops)
        nodes, edges = drawing_frames(positions, self.states(), after.hops(self.root, self.max_hops), labels,
                                      follows, kept)
        leaving = len(self.result().leaving)
        return follow_network(nodes, edges, title=f"What if: {len(self.blocks)} new block(s)",
                              subtitle=f"{leaving} feed(s) leave the replication set of "
                                       f"{self.snapshot.label(self.root)}")

    def summary_html(self) -> str:
        """The blocks, who leaves, whose value changes, and whose view of the watched feed changes."""
        label, result = self.snapshot.label, self.result()

        def items(lines: list[str]) -> str:
            return "<ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>" if lines else " none"

        blocks = [f"{html.escape(label(a))} blocks {html.escape(label(b))}" for a, b in sorted(self.blocks)]
        leaving = [html.escape(label(f)) for f in result.leaving]
        moved = [f"{html.escape(label(f))}: {_hop(old)} → {_hop(new)}" for f, (old, new) in result.changes.items()]
        parts = [f"<div class='ssblab-summary'><b>Blocks</b>{items(blocks)}", f"<b>Leaving</b>{items(leaving)}",
                 f"<b>Hop values that change</b>{items(moved)}"]
        if self.watch is not None:
            views = [f"{html.escape(label(v))}: {_hop(old)} → {_hop(new)}" for v, (old, new) in result.views.items()]
            parts.append(f"<b>Whose view of {html.escape(label(self.watch))} changes</b>{items(views)}")
        return "".join(parts) + "</div>"

    def widget(self) -> Any:
        """The ipywidgets view (needs the ``notebooks`` extra)."""
        return moderation_panel_view(self)


def _hop(value: int | None) -> str:
    return "unreached" if value is None else str(value)


def moderation_panel_view(model: ModerationPanel) -> Any:
    """Blocker, blocked and watched-feed pickers and a toggle over `ModerationPanel.chart` and its summary."""
    import ipywidgets as w

    label = model.snapshot.label
    feeds = [(label(f), f) for f in model.candidates()]
    blocker = w.Dropdown(options=[(f"{label(model.root)} (root)", model.root), *feeds], value=model.root,
                         description="blocker")
    blocked = w.Dropdown(options=feeds, description="blocks")
    watch = w.Dropdown(options=[(NO_FEED, None), *feeds], value=model.watch, description="watch")
    toggle, clear = w.Button(description="toggle block"), w.Button(description="clear all")
    drawing, summary = w.HTML(), w.HTML()

    def render(*_: Any) -> None:
        drawing.value = chart_svg(model.chart())
        summary.value = model.summary_html()

    def flip(_: Any) -> None:
        if blocked.value is not None and blocker.value != blocked.value:
            model.toggle(blocker.value, blocked.value)
            render()

    toggle.on_click(flip)
    clear.on_click(lambda _: (model.clear(), render()))
    watch.observe(lambda change: (model.set_watch(change["new"]), render()), names="value")
    render()
    controls = box([box([blocker, blocked, toggle, clear], "ssblab-row", vertical=False), watch],
                    "ssblab-controls")
    return box([controls, box([drawing, summary], "ssblab-body", vertical=False)], "ssblab-moderation-panel")
