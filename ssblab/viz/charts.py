"""ssblab's charts as Vega-Lite specifications: plain dicts, one look.

Every chart function takes a pandas DataFrame (a Spark result's ``toPandas()``, or a simulation table) and
returns a Vega-Lite dict with the data inlined, so that a test can check its fields, `save` can render it
offline, and a notebook shows it through `as_altair`. Altair is imported only there.
"""

from __future__ import annotations

from typing import Any

from ssblab.core.errors import UsageError

__all__ = [
    "DAY_MS",
    "NODE_STATES",
    "PALETTE",
    "THEME",
    "VEGA_LITE_SCHEMA",
    "bars",
    "coverage_samples",
    "degree_distribution",
    "dissemination_curve",
    "follow_network",
    "log_ticks",
    "message_types_over_time",
    "ranking",
    "replication_growth",
    "series_lines",
    "side_by_side",
    "size_comparison",
    "spec",
]

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
        raise UsageError(f"the data lacks columns {missing}; it has {list(frame.columns)}")
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


def side_by_side(*charts: dict[str, Any]) -> dict[str, Any]:
    """Charts next to each other, each with its own title, under one look (a Vega-Lite ``hconcat``).

    Examples:
        >>> import pandas as pd
        >>> one = spec(pd.DataFrame({"x": [1]}), ["x"], title="a", mark="point")
        >>> both = side_by_side(one, spec(pd.DataFrame({"x": [2]}), ["x"], title="b", mark="point"))
        >>> [part["title"]["text"] for part in both["hconcat"]], "config" in both["hconcat"][0]
        (['a', 'b'], False)
    """
    parts = [{key: value for key, value in chart.items() if key not in ("$schema", "config")} for chart in charts]
    return {"$schema": VEGA_LITE_SCHEMA, "config": THEME, "hconcat": parts}


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


def log_ticks(largest: float) -> list[int]:
    """1, 2, 5, 10, 20, 50, … up to ``largest``: a log axis's labels, few enough never to crowd."""
    ticks, step = [], 1
    while step <= max(largest, 1):
        ticks += [t for t in (step, 2 * step, 5 * step) if t <= max(largest, 1)]
        step *= 10
    return ticks


def degree_distribution(degrees: Any) -> dict[str, Any]:
    """How many feeds have each in/out degree, on log scales; needs ``degree``, ``direction``, ``feeds``.

    A log axis has no place for 0: feeds without followers (or follows) are left out, and the subtitle says how
    many.
    """
    positive = degrees[degrees["degree"] > 0]
    zero = int(degrees.loc[degrees["degree"] <= 0, "feeds"].sum())
    subtitle = "feeds per number of follows, log-log" + (f"; {zero} with none left out" if zero else "")

    def axis(field: str, title: str, largest: float) -> dict[str, Any]:
        return {"field": field, "type": "quantitative", "title": title, "scale": {"type": "log"},
                "axis": {"values": log_ticks(largest), "format": "d", "labelOverlap": True}}

    return spec(positive, ["degree", "direction", "feeds"], title="Degree distribution of the follow graph",
                subtitle=subtitle, mark={"type": "point", "filled": True, "size": 40, "opacity": 0.8},
                encoding={"x": axis("degree", "degree", positive["degree"].max() if len(positive) else 1),
                          "y": axis("feeds", "feeds", positive["feeds"].max() if len(positive) else 1),
                          "color": {"field": "direction", "type": "nominal", "title": None},
                          "tooltip": [{"field": "direction"}, {"field": "degree"}, {"field": "feeds"}]})


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


# Node states of the network drawings (graph explorer, moderation panel): fixed colours, so a state looks the same
# in every figure and widget.
NODE_STATES = {"root": "#c8504d", "replicated": PALETTE[0], "leaving": PALETTE[1], "blocked": PALETTE[4],
               "not replicated": "#c9c9c9"}


def follow_network(nodes: Any, edges: Any, *, title: str = "Follow graph", subtitle: str = "",
                   size: int = 460) -> dict[str, Any]:
    """A drawn network: follows as lines under feeds as dots coloured by state (`NODE_STATES`).

    Args:
        nodes: ``x, y, label, state, hops`` (positions from a layout, e.g. `ssblab.widgets.radial_layout`).
        edges: ``x, y, x2, y2, inside`` (``inside``: both ends are in the highlighted set).
        title: the chart title; ``subtitle`` a line under it.
        size: width and height in pixels (the layout is square).
    """
    node_rows, edge_rows = _records(nodes, ["x", "y", "label", "state", "hops"]), _records(
        edges, ["x", "y", "x2", "y2", "inside"])
    hidden = {"axis": None, "scale": {"zero": False, "nice": False}}
    states = [state for state in NODE_STATES if any(row["state"] == state for row in node_rows)]
    heading: dict[str, Any] = {"text": title, **({"subtitle": subtitle} if subtitle else {})}
    return {"$schema": VEGA_LITE_SCHEMA, "config": THEME, "title": heading, "width": size, "height": size,
            "layer": [
                {"data": {"values": edge_rows}, "mark": {"type": "rule", "strokeWidth": 0.7},
                 "encoding": {"x": {"field": "x", "type": "quantitative", **hidden},
                              "y": {"field": "y", "type": "quantitative", **hidden},
                              "x2": {"field": "x2"}, "y2": {"field": "y2"},
                              "color": {"value": "#8a9bb0"},
                              "opacity": {"condition": {"test": "datum.inside", "value": 0.45}, "value": 0.12}}},
                {"data": {"values": node_rows}, "mark": {"type": "circle", "stroke": "white", "strokeWidth": 0.8},
                 "encoding": {"x": {"field": "x", "type": "quantitative", **hidden},
                              "y": {"field": "y", "type": "quantitative", **hidden},
                              "size": {"condition": {"test": "datum.state === 'root'", "value": 260}, "value": 90},
                              "color": {"field": "state", "type": "nominal", "title": None,
                                        "scale": {"domain": states, "range": [NODE_STATES[s] for s in states]}},
                              "opacity": {"value": 0.95},
                              "tooltip": [{"field": "label", "title": "feed"}, {"field": "hops", "title": "hops"},
                                          {"field": "state", "title": "state"}]}},
            ]}


def ranking(frame: Any, *, value: str, label: str = "label", title: str, subtitle: str = "",
            value_format: str = ".3f") -> dict[str, Any]:
    """Horizontal bars, largest first (top PageRank feeds, log sizes); needs ``label`` and ``value`` columns."""
    return spec(frame, [label, value], title=title, subtitle=subtitle, height=max(120, 22 * len(frame)),
                mark={"type": "bar", "color": PALETTE[0]},
                encoding={"y": {"field": label, "type": "nominal", "sort": "-x", "title": None},
                          "x": {"field": value, "type": "quantitative", "title": value,
                                "axis": {"format": value_format}},
                          "tooltip": [{"field": label}, {"field": value, "format": value_format}]})


def coverage_samples(samples: Any) -> dict[str, Any]:
    """The A.6 experiment: per sample, the share of friends and of friends of friends the random peers hold;
    needs ``sample``, ``circle`` (``friends`` / ``friends of friends``) and ``covered`` (0..1)."""
    return spec(samples, ["sample", "circle", "covered"], title="What a few random peers already hold",
                subtitle="share of the root's friends and friends of friends in their 2-hop replication sets",
                height=240, mark={"type": "tick", "thickness": 3, "size": 28},
                encoding={"y": {"field": "circle", "type": "nominal", "title": None},
                          "x": {"field": "covered", "type": "quantitative", "title": "covered",
                                "scale": {"domain": [0, 1]}, "axis": {"format": "%"}},
                          "color": {"field": "circle", "type": "nominal", "legend": None},
                          "tooltip": [{"field": "sample"}, {"field": "covered", "format": ".0%"}]})


def _scale(log: bool) -> dict[str, Any]:
    return {"scale": {"type": "log"}} if log else {}


def series_lines(frame: Any, *, x: str, y: str, series: str, title: str, subtitle: str = "",
                 x_title: str | None = None, y_title: str | None = None, log_x: bool = False, log_y: bool = False,
                 y_format: str | None = None) -> dict[str, Any]:
    """Lines with points, one per ``series`` (ours against the paper's, a protocol against a baseline).

    Needs the ``x``, ``y`` and ``series`` columns; log scales for costs that span orders of magnitude.
    """
    y_axis: dict[str, Any] = {"format": y_format} if y_format else {}
    return spec(frame, [x, y, series], title=title, subtitle=subtitle,
                mark={"type": "line", "point": True},
                encoding={"x": {"field": x, "type": "quantitative", "title": x_title or x, **_scale(log_x)},
                          "y": {"field": y, "type": "quantitative", "title": y_title or y, **_scale(log_y),
                                **({"axis": y_axis} if y_axis else {})},
                          "color": {"field": series, "type": "nominal", "title": None},
                          "tooltip": [{"field": series}, {"field": x}, {"field": y}]})


def bars(frame: Any, *, x: str, y: str, title: str, subtitle: str = "", color: str | None = None,
         x_title: str | None = None, y_title: str | None = None, y_format: str = "~s") -> dict[str, Any]:
    """Vertical bars of ``y`` per ``x`` (a Lamport-depth histogram, bytes per protocol), stacked by ``color``."""
    columns = [x, y] + ([color] if color else [])
    encoding: dict[str, Any] = {
        "x": {"field": x, "type": "ordinal", "title": x_title or x, "axis": {"labelAngle": 0}},
        "y": {"field": y, "type": "quantitative", "title": y_title or y, "axis": {"format": y_format}},
        "tooltip": [{"field": c} for c in columns]}
    if color:
        encoding["color"] = {"field": color, "type": "nominal", "title": None}
    return spec(frame, columns, title=title, subtitle=subtitle, height=260,
                mark={"type": "bar", "width": {"band": 0.75}, **({} if color else {"color": PALETTE[0]})},
                encoding=encoding)
