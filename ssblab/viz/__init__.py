"""Figures: Vega-Lite charts with one look, shown in notebooks and saved offline as PNG, SVG and HTML.

Needs the ``viz`` extra (altair, vl-convert-python, pandas); importing this package loads none of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ssblab.core.errors import UsageError
from ssblab.viz.charts import (
    NODE_STATES,
    PALETTE,
    THEME,
    bars,
    coverage_samples,
    degree_distribution,
    dissemination_curve,
    follow_network,
    message_types_over_time,
    ranking,
    replication_growth,
    series_lines,
    side_by_side,
    size_comparison,
    spec,
)
from ssblab.viz.render import mimebundle, use_static_renderer

__all__ = [
    "NODE_STATES",
    "PALETTE",
    "THEME",
    "as_altair",
    "bars",
    "coverage_samples",
    "degree_distribution",
    "dissemination_curve",
    "follow_network",
    "message_types_over_time",
    "mimebundle",
    "ranking",
    "replication_growth",
    "save",
    "series_lines",
    "side_by_side",
    "size_comparison",
    "spec",
    "use_static_renderer",
]

FORMATS = ("png", "svg", "html")


def _as_dict(chart: Any) -> dict[str, Any]:
    return chart if isinstance(chart, dict) else chart.to_dict()


def save(chart: Any, path: str | Path, formats: Iterable[str] = FORMATS, *, scale: float = 2.0) -> list[Path]:
    """Write ``chart`` (a Vega-Lite dict or an Altair chart) next to ``path`` in each format, offline.

    ``path``'s suffix is replaced by each format's (``out/types`` → ``out/types.png``, ``.svg``, ``.html``). The
    HTML embeds the Vega libraries, so it opens without a network. Returns the written paths.
    """
    import vl_convert

    spec_dict, base = _as_dict(chart), Path(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        target = base.with_suffix(f".{fmt}")
        if fmt == "png":
            target.write_bytes(vl_convert.vegalite_to_png(spec_dict, scale=scale))
        elif fmt == "svg":
            target.write_text(vl_convert.vegalite_to_svg(spec_dict), encoding="utf-8")
        elif fmt == "html":
            target.write_text(vl_convert.vegalite_to_html(spec_dict, bundle=True), encoding="utf-8")
        else:
            raise UsageError(f"unknown figure format {fmt!r} (use {', '.join(FORMATS)})")
        written.append(target)
    return written


def as_altair(chart: dict[str, Any]) -> Any:
    """The spec as an Altair chart, for display in a notebook.

    It shows through `use_static_renderer`: interactive in JupyterLab with no network, a static SVG on GitHub,
    nbviewer and in the docs.
    """
    import altair as alt

    use_static_renderer()
    return (alt.HConcatChart if "hconcat" in chart else alt.Chart).from_dict(chart)
