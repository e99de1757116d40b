"""What every widget shares: the error they raise, the offline chart rendering and the boxes their views are made of.

A leaf: it imports no other widget module, so the models and their views (each view sits next to its model) all
depend on it and never on each other. ipywidgets and vl-convert are imported inside the functions: they come with
the ``notebooks`` extra.
"""

from __future__ import annotations

from typing import Any

from ssblab.core.errors import SsbError

__all__ = ["ViewerError", "WidgetError", "box", "chart_svg"]


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
