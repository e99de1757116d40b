"""What every widget shares: the error they raise, the offline chart rendering and the boxes their views are made of.

A leaf: it imports no other widget module, so the models and their views (each view sits next to its model) all
depend on it and never on each other. ipywidgets and vl-convert are imported inside the functions: they come with
the ``notebooks`` extra.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ssblab.core.errors import SsbError

__all__ = ["ViewerError", "WidgetError", "box", "chart_svg", "clickable_svg"]


class WidgetError(SsbError, ValueError):
    """A request a widget cannot honour (an unknown feed, a hop limit out of range), naming what was asked."""

    code = "widget"


class ViewerError(WidgetError):
    """A request the thread viewer cannot honour (an unknown thread, order, message or page), naming what was asked."""

    code = "thread-viewer"


def chart_svg(chart: dict[str, Any]) -> str:
    """A Vega-Lite spec as inline SVG, rendered offline (Altair's default renderer would fetch Vega from a CDN),
    so a widget looks the same in JupyterLab, VS Code, an exported page and on a machine without internet."""
    import vl_convert

    return vl_convert.vegalite_to_svg(chart)  # type: ignore[no-any-return]


def box(children: list[Any], css_class: str, vertical: bool = True) -> Any:
    """A VBox (or HBox) with a CSS class, for styling and for the browser test."""
    import ipywidgets as w

    container = w.VBox(children) if vertical else w.HBox(children)
    container.add_class(css_class)
    return container


# The browser side of `clickable_svg`: draw the SVG, and send the ``data-feed`` of a clicked node back to Python.
CLICKABLE_SVG_ESM = """
function render({ model, el }) {
  const draw = () => { el.innerHTML = model.get("svg"); };
  el.addEventListener("click", (event) => {
    const node = event.target.closest("[data-feed]");
    if (node) model.send({ clicked: node.dataset.feed });
  });
  model.on("change:svg", draw);
  draw();
}
export default { render };
"""


@functools.cache
def _clickable_svg_class() -> type:
    import anywidget
    import traitlets

    class ClickableSvg(anywidget.AnyWidget):  # type: ignore[misc]
        _esm = CLICKABLE_SVG_ESM
        svg = traitlets.Unicode("").tag(sync=True)

    return ClickableSvg


def clickable_svg(svg: str, on_click: Callable[[str], None]) -> Any:
    """A widget showing ``svg`` that calls ``on_click(feed)`` when a node with ``data-feed`` is clicked; set its
    ``svg`` to redraw. Needs anywidget (the ``notebooks`` extra), whose front end ships with it: no network."""
    widget = _clickable_svg_class()(svg=svg)
    widget.on_msg(lambda _widget, content, _buffers: on_click(content["clicked"]) if "clicked" in content else None)
    return widget
