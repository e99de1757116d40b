"""Charts are Vega-Lite specs with the right fields, and save() renders them offline."""

from __future__ import annotations

import pandas as pd
import pytest

from ssblab.viz import (
    THEME,
    degree_distribution,
    dissemination_curve,
    message_types_over_time,
    replication_growth,
    save,
    size_comparison,
)

DAY = 86_400_000


def _messages(days: int) -> pd.DataFrame:
    kinds = ["post", "vote", None, "contact"]
    return pd.DataFrame({"timestamp": [i * DAY / 3 for i in range(days * 3)],
                         "type": [kinds[i % 4] for i in range(days * 3)]})


def test_message_types_over_time_bins_by_day_or_week() -> None:
    short = message_types_over_time(_messages(10))
    assert short["title"]["text"] == "Messages per day" and short["config"] == THEME
    assert short["encoding"]["x"]["timeUnit"] == "yearmonthdate"
    assert {r["type"] for r in short["data"]["values"]} == {"post", "vote", "private", "contact"}
    assert sum(r["messages"] for r in short["data"]["values"]) == 30
    long = message_types_over_time(_messages(200))
    assert long["title"]["text"] == "Messages per week" and long["encoding"]["x"]["timeUnit"] == "yearweek"


def test_other_charts_name_their_fields() -> None:
    degrees = degree_distribution(pd.DataFrame({"degree": [1, 2], "direction": ["in", "out"], "feeds": [5, 3]}))
    assert degrees["encoding"]["y"]["scale"]["type"] == "log"
    growth = replication_growth(pd.DataFrame({"hops": [0, 1, 2], "feeds": [1, 12, 80]}))
    assert [r["feeds"] for r in growth["data"]["values"]] == [1, 12, 80]
    curve = dissemination_curve(pd.DataFrame({"round": [1, 2], "reached": [0.1, 1.0], "series": ["a", "a"]}))
    assert curve["encoding"]["y"]["axis"]["format"] == "%"
    sizes = size_comparison(pd.DataFrame({"format": ["jsonl", "archive"], "bytes": [100, 30]}))
    assert sizes["encoding"]["x"]["field"] == "bytes"
    with pytest.raises(ValueError, match="lacks columns"):
        replication_growth(pd.DataFrame({"hops": [1]}))


def test_save_writes_png_svg_html_offline(tmp_path) -> None:
    from PIL import Image

    paths = save(message_types_over_time(_messages(20)), tmp_path / "figs" / "types")
    assert [p.suffix for p in paths] == [".png", ".svg", ".html"]
    image = Image.open(paths[0]).convert("L")
    low, high = image.getextrema()
    assert image.width > 600 and high - low > 100  # drawn, not blank
    assert "<svg" in paths[1].read_text()[:200]
    html = paths[2].read_text()
    assert "vega" in html and "cdn.jsdelivr" not in html  # the libraries are embedded


def test_degree_chart_leaves_out_zero_and_labels_powers() -> None:
    frame = pd.DataFrame({"degree": [0, 1, 2, 3, 7, 40], "direction": ["in"] * 6, "feeds": [4, 9, 5, 3, 2, 1]})
    chart = degree_distribution(frame)
    assert [r["degree"] for r in chart["data"]["values"]] == [1, 2, 3, 7, 40]
    assert "4 with none left out" in chart["title"]["subtitle"]
    assert chart["encoding"]["x"]["axis"]["values"] == [1, 2, 5, 10, 20]
    assert chart["encoding"]["y"]["axis"]["values"] == [1, 2, 5]


def test_a_chart_output_carries_the_spec_and_a_static_svg() -> None:
    import altair as alt

    from ssblab.viz import as_altair
    from ssblab.viz.render import RENDERER, VEGA_LITE_MIMETYPE

    chart = replication_growth(pd.DataFrame({"hops": [0, 1], "feeds": [1, 9]}))
    saved = alt.renderers.active
    try:
        alt.renderers.enable("default")
        bundle = as_altair(chart)._repr_mimebundle_()
        bundle = bundle[0] if isinstance(bundle, tuple) else bundle
        assert alt.renderers.active == RENDERER
        assert bundle[VEGA_LITE_MIMETYPE]["title"]["text"] == "Replication set by hops"
        assert bundle["image/svg+xml"].lstrip().startswith("<svg") and "text/html" not in bundle
        alt.renderers.enable("json")  # a renderer the user chose stays
        as_altair(chart)
        assert alt.renderers.active == "json"
    finally:
        alt.renderers.enable(saved)
