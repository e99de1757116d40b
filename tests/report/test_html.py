"""The report page: escaped text, number formatting, inline figures, nothing fetched."""

from __future__ import annotations

from typing import Any

from ssblab.report import Report, Section, Table, render


def _svg(chart: dict[str, Any]) -> str:
    return f"<svg data-title='{chart['title']}'></svg>"


def test_text_is_escaped_and_numbers_are_grouped() -> None:
    section = Section("Threads <&>", "a lead with <b>", [("messages", 12345), ("share", 0.12345), ("who", None)],
                      [Table(["feed", "n"], [("@a<b", 3)], "caption")], {"fig": {"title": "T"}})
    page = render(Report("R", "sub", [section], footer="end"), svg=_svg)
    assert "<h2>Threads &lt;&amp;&gt;</h2>" in page and "a lead with &lt;b&gt;" in page
    assert "<dd>12,345</dd>" in page and "<dd>0.1235</dd>" in page and "<dd>—</dd>" in page
    assert '<td>@a&lt;b</td><td class="num">3</td>' in page
    assert "<figure id=\"fig\"><svg data-title='T'></svg></figure>" in page
    assert "<script" not in page and "http" not in page.replace("https://", "")


def test_an_empty_table_is_left_out() -> None:
    page = render(Report("R", "", [Section("S", tables=[Table(["a"], [], "nothing here")])]), svg=_svg)
    assert "nothing here" not in page


def test_real_figures_render_offline() -> None:
    chart = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "title": "x",
             "data": {"values": [{"a": 1}]}, "mark": "bar", "encoding": {"x": {"field": "a", "type": "quantitative"}}}
    page = render(Report("R", "", [Section("S", figures={"f": chart})]))
    assert "<svg" in page and "</svg></figure>" in page


def test_provenance_is_stated_and_the_footer_is_plain_text() -> None:
    report = Report("R", "sub", [], footer="Made by ssblab demo.",
                    provenance=[("seed", "2026"), ("ssblab", "0.1.0"), ("made", "2026-01-02 03:04 UTC")])
    page = render(report, svg=_svg)
    assert '<dl class="facts provenance"><dt>seed</dt><dd>2026</dd>' in page and "<dd>0.1.0</dd>" in page
    assert "`" not in page
