"""The generic line and bar charts the tutorial notebooks use (paper against ours, protocol costs)."""

from __future__ import annotations

import pandas as pd
import pytest

from ssblab.viz.charts import THEME, bars, series_lines


def test_series_lines_names_fields_and_log_scales() -> None:
    frame = pd.DataFrame({"d": [1, 10, 1, 10], "bytes": [100, 900, 3200, 3200], "method": ["srt", "srt", "ids", "ids"]})
    chart = series_lines(frame, x="d", y="bytes", series="method", title="Cost", log_x=True, log_y=True,
                         y_format="~s")
    assert chart["config"] == THEME and chart["title"] == {"text": "Cost"}
    assert chart["encoding"]["x"] == {"field": "d", "type": "quantitative", "title": "d", "scale": {"type": "log"}}
    assert chart["encoding"]["y"]["axis"] == {"format": "~s"} and chart["encoding"]["y"]["scale"]["type"] == "log"
    assert chart["encoding"]["color"]["field"] == "method"
    assert [r["bytes"] for r in chart["data"]["values"]] == [100, 900, 3200, 3200]
    linear = series_lines(frame, x="d", y="bytes", series="method", title="Cost")
    assert "scale" not in linear["encoding"]["x"] and "axis" not in linear["encoding"]["y"]


def test_bars_stack_by_an_optional_colour() -> None:
    frame = pd.DataFrame({"mode": ["ebt", "ebt", "history"], "bytes": [10, 90, 120], "way": ["up", "down", "up"]})
    stacked = bars(frame, x="mode", y="bytes", color="way", title="Bytes", subtitle="each way")
    assert stacked["encoding"]["color"]["field"] == "way" and stacked["title"]["subtitle"] == "each way"
    assert "color" not in stacked["mark"]
    plain = bars(frame, x="mode", y="bytes", title="Bytes")
    assert "color" not in plain["encoding"] and plain["mark"]["color"]
    assert len(plain["data"]["values"][0]) == 2


def test_a_missing_column_is_named() -> None:
    with pytest.raises(ValueError, match=r"lacks columns \['series'\]"):
        series_lines(pd.DataFrame({"x": [1], "y": [2]}), x="x", y="y", series="series", title="t")
