"""A self-contained HTML report: sections of facts, tables and figures in one file that opens offline.

Strategy: the report is plain data (`Report` of `Section`s) rendered by one function, so what the main job
found can be tested without parsing HTML, and the page itself needs no script and no network: figures are
inlined as SVG (rendered by vl-convert), everything else is escaped text.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Report", "Section", "Table", "render"]

STYLE = """
body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; color: #222; margin: 2rem auto; max-width: 980px;
       line-height: 1.45; padding: 0 1rem; }
h1 { font-weight: 600; margin-bottom: 0.2rem; }
h2 { font-weight: 600; margin-top: 2.4rem; border-bottom: 1px solid #ddd; }
.lead { color: #555; } .facts { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1.2rem; }
.facts dt { color: #666; } .facts dd { margin: 0; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.25rem 0.7rem; border-bottom: 1px solid #eee; }
th { color: #555; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.provenance { font-size: 0.85rem; margin-top: 0.6rem; }
code { font-size: 0.85rem; color: #3b6ea8; } figure { margin: 1.2rem 0; } footer { color: #888; margin-top: 3rem; }
"""


@dataclass(frozen=True)
class Table:
    """Rows of values under a header; numbers are right-aligned."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str = ""


@dataclass(frozen=True)
class Section:
    """One analysis: what it shows (``lead``), its key numbers, tables and Vega-Lite figures by name."""

    title: str
    lead: str = ""
    facts: Sequence[tuple[str, Any]] = ()
    tables: Sequence[Table] = ()
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    """The page: a title, a subtitle, where it came from (``provenance``: the data, seed, versions, date)."""

    title: str
    subtitle: str
    sections: Sequence[Section]
    footer: str = ""
    provenance: Sequence[tuple[str, Any]] = ()


def _value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return html.escape(str(value))


def _table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{_value(v)}</td>' if isinstance(v, int | float) and not isinstance(v, bool)
                         else f"<td>{_value(v)}</td>" for v in row) + "</tr>"
        for row in table.rows)
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _facts(facts: Sequence[tuple[str, Any]], css: str = "facts") -> str:
    return f'<dl class="{css}">' + "".join(f"<dt>{html.escape(k)}</dt><dd>{_value(v)}</dd>" for k, v in facts) + "</dl>"


def _section(section: Section, svg: Callable[[dict[str, Any]], str]) -> str:
    parts = [f"<h2>{html.escape(section.title)}</h2>"]
    if section.lead:
        parts.append(f'<p class="lead">{html.escape(section.lead)}</p>')
    if section.facts:
        parts.append(_facts(section.facts))
    parts.extend(_table(t) for t in section.tables if t.rows)
    parts.extend(f'<figure id="{html.escape(name)}">{svg(chart)}</figure>' for name, chart in section.figures.items())
    return "\n".join(parts)


def render(report: Report, svg: Callable[[dict[str, Any]], str] | None = None) -> str:
    """The report as one HTML page; ``svg`` renders a Vega-Lite spec (default: vl-convert, offline)."""
    if svg is None:
        import vl_convert

        svg = vl_convert.vegalite_to_svg
    body = "\n".join(_section(s, svg) for s in report.sections)
    provenance = _facts(report.provenance, "facts provenance") if report.provenance else ""
    footer = f"<footer>{html.escape(report.footer)}</footer>" if report.footer else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(report.title)}</title>'
            f"<style>{STYLE}</style></head><body><h1>{html.escape(report.title)}</h1>"
            f'<p class="lead">{html.escape(report.subtitle)}</p>\n{provenance}\n{body}\n{footer}</body></html>\n')
