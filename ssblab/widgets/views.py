"""The thin ipywidgets views of the feed browser, the graph explorer and the moderation panel.

Strategy: a view owns no state and computes nothing: each control forwards its value to the model, then the view
re-renders the model's HTML and chart. Charts are rendered to SVG here with vl-convert, offline, so the widgets
look the same in JupyterLab, in VS Code, in an exported HTML page and on a machine without internet (Altair's
default renderer fetches the Vega libraries from a CDN). Each container carries a CSS class
(``ssblab-feed-browser``, ``ssblab-graph-explorer``, ``ssblab-moderation-panel``) for styling and for the
browser test.

ipywidgets and vl-convert are imported inside the functions: they come with the ``notebooks`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ssblab.widgets.feed_browser import FeedBrowser
    from ssblab.widgets.graph_explorer import GraphExplorer
    from ssblab.widgets.moderation_panel import ModerationPanel

NO_FEED = "(none)"


def chart_svg(chart: dict[str, Any]) -> str:
    """A Vega-Lite spec as inline SVG (offline)."""
    import vl_convert

    return vl_convert.vegalite_to_svg(chart)  # type: ignore[no-any-return]


def _box(children: list[Any], css_class: str, vertical: bool = True) -> Any:
    import ipywidgets as w

    box = w.VBox(children) if vertical else w.HBox(children)
    box.add_class(css_class)
    return box


def feed_browser_view(model: FeedBrowser) -> Any:
    """Feed picker, type filter and pager over `FeedBrowser.page_html`."""
    import ipywidgets as w

    summaries = model.feeds()
    picker = w.Dropdown(options=[(f"{model.label(s.feed)} · {s.messages} msgs"
                                  + (f" · {s.invalid} invalid" if s.invalid else ""), s.feed) for s in summaries],
                        value=model.feed, description="feed")
    types = sorted({t for s in summaries for t, _ in s.types})
    kinds = w.SelectMultiple(options=types, value=tuple(sorted(model.types)), description="types", rows=4)
    back, forth = w.Button(description="◀ previous"), w.Button(description="next ▶")
    page = w.HTML()

    def render(*_: Any) -> None:
        page.value = model.page_html()
        back.disabled, forth.disabled = model.page == 0, model.page >= model.page_count - 1

    picker.observe(lambda change: (model.select(change["new"]), render()), names="value")
    kinds.observe(lambda change: (model.filter_types(change["new"]), render()), names="value")
    back.on_click(lambda _: (model.go(model.page - 1), render()))
    forth.on_click(lambda _: (model.go(model.page + 1), render()))
    render()
    controls = _box([picker, kinds, _box([back, forth], "ssblab-pager", vertical=False)], "ssblab-controls")
    return _box([controls, page], "ssblab-feed-browser")


def graph_explorer_view(model: GraphExplorer) -> Any:
    """Root picker and hops slider over `GraphExplorer.chart` and its counts per hop."""
    import ipywidgets as w

    from ssblab.widgets.graph_explorer import MAX_HOPS

    label = model.snapshot.label
    picker = w.Dropdown(options=[(label(f), f) for f in model.roots()], value=model.root, description="root")
    slider = w.IntSlider(value=model.max_hops, min=0, max=MAX_HOPS, description="hops", continuous_update=False)
    drawing, counts = w.HTML(), w.HTML()

    def render(*_: Any) -> None:
        drawing.value = chart_svg(model.chart())
        counts.value = model.summary_html()

    picker.observe(lambda change: (model.set_root(change["new"]), render()), names="value")
    slider.observe(lambda change: (model.set_max_hops(change["new"]), render()), names="value")
    render()
    return _box([_box([picker, slider], "ssblab-controls", vertical=False),
                 _box([drawing, counts], "ssblab-body", vertical=False)], "ssblab-graph-explorer")


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
    controls = _box([_box([blocker, blocked, toggle, clear], "ssblab-row", vertical=False), watch],
                    "ssblab-controls")
    return _box([controls, _box([drawing, summary], "ssblab-body", vertical=False)], "ssblab-moderation-panel")
