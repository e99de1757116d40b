"""How a chart shows up in a notebook: a static picture and the Vega-Lite spec in one output bundle.

Altair's default renderer emits HTML that loads Vega from a CDN, so nothing renders offline, on GitHub, on
nbviewer or in a static site. This renderer puts three forms of the chart into each output instead, and each
front end picks the richest it can draw:

- ``application/vnd.vegalite.v5+json``: JupyterLab draws it interactively (tooltips) with the Vega it bundles;
- ``image/svg+xml`` (rendered offline by vl-convert): GitHub, nbviewer, the docs and anything without Vega;
- ``text/plain``: the chart's title, for a terminal.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RENDERER", "VEGA_LITE_MIMETYPE", "mimebundle", "use_static_renderer"]

VEGA_LITE_MIMETYPE = "application/vnd.vegalite.v5+json"
RENDERER = "ssblab"


def _title(spec: dict[str, Any]) -> str:
    title = spec.get("title")
    text = title.get("text", "") if isinstance(title, dict) else title or ""
    return str(text or "chart")


def mimebundle(spec: dict[str, Any], **_metadata: Any) -> dict[str, Any]:
    """The output bundle of a Vega-Lite spec: the spec, its SVG and its title (an Altair renderer's signature)."""
    import vl_convert

    return {VEGA_LITE_MIMETYPE: spec, "image/svg+xml": vl_convert.vegalite_to_svg(spec),
            "text/plain": f"<{_title(spec)}: a Vega-Lite chart>"}


def use_static_renderer() -> None:
    """Register this renderer with Altair and enable it, unless the user has already chosen another one.

    Altair's own ``default`` is the one replaced: a renderer someone enabled by name stays in force.
    """
    import altair as alt

    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, mimebundle)
    if alt.renderers.active == "default":
        alt.renderers.enable(RENDERER)
