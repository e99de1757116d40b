"""ssblab's charts as Vega-Lite specifications: plain dicts, one look.

Every chart function takes a pandas DataFrame (a Spark result's ``toPandas()``, or a simulation table) and
returns a Vega-Lite dict with the data inlined, so that a test can check its fields, `save` can render it
offline, and a notebook shows it through `as_altair`. Altair is imported only there.
"""

from __future__ import annotations

from typing import Any

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
PALETTE = ["#3b6ea8", "#e07b39", "#4f9d69", "#c8504d", "#8a6bb1", "#9c7a55", "#d17fb4", "#7a7a7a"]

THEME: dict[str, Any] = {
    "background": "white",
    "padding": 12,
    "font": "DejaVu Sans, Helvetica, Arial, sans-serif",
    "title": {"fontSize": 15, "fontWeight": 600, "anchor": "start", "color": "#222", "subtitleColor": "#666",
              "subtitleFontSize": 11, "offset": 10},
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "titleFontWeight": 500, "gridColor": "#eee",
             "domainColor": "#999", "tickColor": "#999", "labelColor": "#444", "titleColor": "#333"},
    "legend": {"labelFontSize": 11, "titleFontSize": 12, "orient": "right"},
    "range": {"category": PALETTE},
    "view": {"stroke": None},
    "line": {"strokeWidth": 2},
    "bar": {"cornerRadiusEnd": 2},
}


def _records(frame: Any, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of ``frame`` as JSON-ready dicts (NaN becomes null)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the data lacks columns {missing}; it has {list(frame.columns)}")
    subset = frame[columns].astype(object).where(frame[columns].notna(), None)
    return subset.to_dict(orient="records")  # type: ignore[no-any-return]


def spec(frame: Any, columns: list[str], *, title: str, subtitle: str = "", width: int = 560,
         height: int = 300, **body: Any) -> dict[str, Any]:
    """A themed Vega-Lite spec over the given columns of ``frame``; ``body`` holds mark, encoding, …"""
    heading: dict[str, Any] = {"text": title}
    if subtitle:
        heading["subtitle"] = subtitle
    return {"$schema": VEGA_LITE_SCHEMA, "config": THEME, "title": heading, "width": width, "height": height,
            "data": {"values": _records(frame, columns)}, **body}


DAY_MS = 86_400_000


def message_types_over_time(messages: Any, *, top: int = 6) -> dict[str, Any]:
    """Messages per day (per week beyond 60 days), stacked by content type; needs ``timestamp``, ``type``."""
    frame = messages.assign(type=messages["type"].fillna("private"))
    keep = frame["type"].value_counts().index[:top]
    frame = frame.assign(type=frame["type"].where(frame["type"].isin(keep), "other"))
    span_days = (frame["timestamp"].max() - frame["timestamp"].min()) / DAY_MS
    unit, width, time_unit = ("week", 7 * DAY_MS, "yearweek") if span_days > 60 else ("day", DAY_MS, "yearmonthdate")
    frame = frame.assign(period=frame["timestamp"] // width * width)
    counts = frame.groupby(["period", "type"]).size().reset_index(name="messages")
    return spec(counts, ["period", "type", "messages"], title=f"Messages per {unit}", subtitle="by content type",
                mark={"type": "bar", "opacity": 0.95, "width": {"band": 0.85}},
                encoding={"x": {"field": "period", "type": "temporal", "title": None, "timeUnit": time_unit,
                                "axis": {"format": "%b %d"}},
                          "y": {"field": "messages", "type": "quantitative", "stack": "zero", "title": "messages"},
                          "color": {"field": "type", "type": "nominal", "title": "type"}})


def degree_distribution(degrees: Any) -> dict[str, Any]:
    """How many feeds have each in/out degree, on log scales; needs ``degree``, ``direction``, ``feeds``."""
    return spec(degrees, ["degree", "direction", "feeds"], title="Degree distribution of the follow graph",
                subtitle="feeds per number of follows, log-log",
                mark={"type": "point", "filled": True, "size": 40, "opacity": 0.8},
                encoding={"x": {"field": "degree", "type": "quantitative", "scale": {"type": "symlog"},
                                "title": "degree"},
                          "y": {"field": "feeds", "type": "quantitative", "scale": {"type": "log"},
                                "title": "feeds"},
                          "color": {"field": "direction", "type": "nominal", "title": None}})


def replication_growth(by_hops: Any) -> dict[str, Any]:
    """The replication set as hops grow; needs ``hops`` and ``feeds`` (cumulative)."""
    return spec(by_hops, ["hops", "feeds"], title="Replication set by hops", subtitle="feeds within N hops",
                height=260, mark={"type": "bar", "width": {"band": 0.7}},
                encoding={"x": {"field": "hops", "type": "ordinal", "title": "hops", "axis": {"labelAngle": 0}},
                          "y": {"field": "feeds", "type": "quantitative", "title": "feeds replicated"}})


def dissemination_curve(rounds: Any, *, series: str = "series") -> dict[str, Any]:
    """Share of peers reached per round; needs ``round``, ``reached`` (0..1) and a ``series`` column."""
    return spec(rounds, ["round", "reached", series], title="Dissemination", subtitle="share of peers reached",
                mark={"type": "line", "point": True},
                encoding={"x": {"field": "round", "type": "quantitative", "title": "round"},
                          "y": {"field": "reached", "type": "quantitative", "title": "reached",
                                "axis": {"format": "%"}},
                          "color": {"field": series, "type": "nominal", "title": None}})


def size_comparison(sizes: Any, *, title: str = "Dataset size by format") -> dict[str, Any]:
    """Bytes per format (archives against JSONL, zstd, Parquet); needs ``format`` and ``bytes``."""
    return spec(sizes, ["format", "bytes"], title=title, height=220,
                mark={"type": "bar"},
                encoding={"y": {"field": "format", "type": "nominal", "sort": "-x", "title": None},
                          "x": {"field": "bytes", "type": "quantitative", "title": "bytes", "axis": {"format": "~s"}},
                          "color": {"field": "format", "type": "nominal", "legend": None}})
