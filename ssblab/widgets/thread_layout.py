"""How the thread viewer lays out and draws a tangle: causal order, lanes, depths, heads, suspicious clocks, and
the text and HTML renderings of those rows. Pure functions, no widgets (the model and view are in
`ssblab.widgets.thread_viewer`, whose docstring explains the lanes and the claimed-time rule).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from ssblab.tangles.thread import Tangle, TangleReport, causal_sort, check_tangle, heads, lamport_depths
from ssblab.widgets.common import ViewerError

__all__ = ["LANE_COLORS", "ORDERS", "ThreadLayout", "ThreadRow", "claimed_time", "layout", "render_html",
           "render_text", "short_message_id"]

ORDERS = ("causal", "claimed")
LANE_COLORS = ("#3b6ea8", "#e07b39", "#4f9d69", "#c8504d", "#8a6bb1", "#9c7a55", "#d17fb4", "#7a7a7a")
TEXT_PREVIEW = 90


@dataclass(frozen=True)
class ThreadRow:
    """One message as the viewer shows it.

    Attributes:
        id: the message id.
        lane: the branch column it is drawn in (0: the root's lane).
        depth: Lamport depth (root 0), or None when its ancestry reaches a missing message.
        timestamp: the claimed time (ms), as the author wrote it.
        parents: the present messages it links to; ``missing``: the linked ids that are absent.
        is_root, is_head: the tangle's root; linked by no present message (several heads = concurrent).
        contradicts: an ancestor that claims a later time than this message (so this claim is false), or None.
        branches_from: when the message opens a new lane, the parent it branches from (it replied to a message
            that already had a reply: a concurrent branch).
        alive: the lanes drawn at this row in causal order (branches passing by, starting or ending here).
    """

    id: str
    lane: int
    depth: int | None
    timestamp: float
    parents: tuple[str, ...]
    missing: tuple[str, ...]
    is_root: bool
    is_head: bool
    contradicts: str | None
    branches_from: str | None = None
    alive: frozenset[int] = frozenset()


@dataclass(frozen=True)
class ThreadLayout:
    """A tangle laid out for display: rows in causal order, lanes, and its trDAG report."""

    tangle: Tangle
    rows: tuple[ThreadRow, ...]
    lanes: int
    report: TangleReport

    @property
    def heads(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rows if r.is_head)

    @property
    def contradictions(self) -> tuple[ThreadRow, ...]:
        return tuple(r for r in self.rows if r.contradicts is not None)

    def ordered(self, order: str) -> tuple[ThreadRow, ...]:
        """The rows in causal order, or by claimed time (then id) to show what that order gets wrong."""
        if order not in ORDERS:
            raise ViewerError(f"thread viewer: unknown order {order!r} (use {', '.join(ORDERS)})")
        return self.rows if order == "causal" else tuple(sorted(self.rows, key=lambda r: (r.timestamp, r.id)))


@dataclass(frozen=True)
class _Lanes:
    lane: dict[str, int]  # message -> its lane
    alive: dict[str, frozenset[int]]  # message -> lanes drawn at its row (open above or below it)
    forks: dict[str, str]  # message that opens a new branch -> the parent it branches from


def _lanes(tangle: Tangle, order: list[str]) -> _Lanes:
    """Lanes as the module docstring says; a lane is freed once its tip has no children left to place."""
    pending = dict.fromkeys(order, 0)
    for m in order:
        for p in set(tangle.parents.get(m, ())):
            if p in pending:
                pending[p] += 1
    tips: dict[int, str] = {}
    found = _Lanes({}, {}, {})
    for m in order:
        parents = [p for p in dict.fromkeys(tangle.parents.get(m, ())) if p in pending]
        for p in parents:
            pending[p] -= 1
        own = sorted(lane for lane, tip in tips.items() if tip in parents)
        lane = own[0] if own else next(i for i in range(len(tips) + 1) if i not in tips)
        if not own and parents:
            found.forks[m] = parents[0]
        found.alive[m] = frozenset(tips) | {lane}
        for merged in own[1:]:
            del tips[merged]
        tips[lane] = m
        for done in [lane for lane, tip in tips.items() if pending[tip] == 0]:
            del tips[done]
        found.lane[m] = lane
    return found


def _contradictions(tangle: Tangle, order: list[str]) -> dict[str, str]:
    """Message -> an ancestor claiming a later time than it does (the latest-claiming one), for flagged messages."""
    ts = tangle.timestamps
    latest: dict[str, str | None] = {}  # the ancestor with the latest claimed time, per message
    flagged: dict[str, str] = {}
    for m in order:
        candidates = [c for p in tangle.parents.get(m, ()) if p in latest for c in (p, latest[p]) if c is not None]
        best = max(candidates, key=lambda c: (ts[c], c), default=None)
        latest[m] = best
        if best is not None and ts[m] < ts[best]:
            flagged[m] = best
    return flagged


def layout(tangle: Tangle) -> ThreadLayout:
    """Lay out ``tangle``: causal order, lanes, depths, heads and clock contradictions."""
    order = causal_sort(tangle)
    lanes, depths, flagged = _lanes(tangle, order), lamport_depths(tangle), _contradictions(tangle, order)
    head_set = set(heads(tangle))
    present = tangle.timestamps
    rows = tuple(
        ThreadRow(
            id=m, lane=lanes.lane[m], depth=depths.get(m), timestamp=present[m],
            parents=tuple(p for p in tangle.parents.get(m, ()) if p in present),
            missing=tuple(p for p in tangle.parents.get(m, ()) if p not in present),
            is_root=m == tangle.root, is_head=m in head_set, contradicts=flagged.get(m),
            branches_from=lanes.forks.get(m), alive=lanes.alive[m],
        )
        for m in order
    )
    return ThreadLayout(tangle, rows, 1 + max(lanes.lane.values(), default=-1), check_tangle(tangle))


def claimed_time(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def short_message_id(message_id: str, length: int = 8) -> str:
    """``%AbCdEfGh…``: enough of an id to tell messages of one thread apart."""
    return message_id[: length + 1] + "…"


def _gutter(row: ThreadRow, width: int, order: str) -> str:
    """Lane glyphs: the message's dot, and the branches passing by (causal order only)."""
    alive = row.alive if order == "causal" else frozenset()
    return "".join("●" if lane == row.lane else ("│" if lane in alive else " ") for lane in range(width))


def _marks(row: ThreadRow) -> list[str]:
    marks = ["root"] if row.is_root else []
    if row.branches_from is not None:
        marks.append(f"branches from {short_message_id(row.branches_from)}")
    if row.is_head:
        marks.append("head")
    if row.missing:
        marks.append(f"links {len(row.missing)} missing")
    if row.contradicts is not None:
        marks.append(f"claims to be older than its ancestor {short_message_id(row.contradicts)}")
    return marks


def render_text(view: ThreadLayout, order: str = "causal", *, authors: Mapping[str, str] | None = None) -> str:
    """The thread as plain text lines (depth, lanes, claimed time, author, id, marks), for terminals and tests."""
    names = authors or {}
    lines = []
    for row in view.ordered(order):
        depth = "?" if row.depth is None else str(row.depth)
        marks = "  [" + "; ".join(_marks(row)) + "]" if _marks(row) else ""
        lines.append(f"{depth:>3} {_gutter(row, view.lanes, order)} {claimed_time(row.timestamp)} "
                     f"{names.get(row.id, ''):<12.12} {short_message_id(row.id)}{marks}")
    return "\n".join(lines)


GUTTER_STYLE = "".join(
    f".ssblab-thread .l{i}{{display:inline-block;width:12px;text-align:center;color:{color}}}"
    for i, color in enumerate(LANE_COLORS))


def render_html(view: ThreadLayout, order: str = "causal", *, authors: Mapping[str, str] | None = None,
                texts: Mapping[str, str] | None = None, selected: str | None = None,
                rows: slice = slice(None)) -> str:
    """The thread (or the ``rows`` slice of it, a page) as an HTML fragment: one row per message, indented by
    lane, coloured by lane, marks as badges."""
    out = [f'<style>{GUTTER_STYLE}</style>'
           '<div class="ssblab-thread" style="font:13px DejaVu Sans,Helvetica,Arial,sans-serif;color:#222">']
    for row in view.ordered(order)[rows]:
        out.append(_html_row(row, _gutter(row, view.lanes, order), (authors or {}).get(row.id, ""),
                             (texts or {}).get(row.id, ""), row.id == selected))
    out.append("</div>")
    return "".join(out)


def _html_row(row: ThreadRow, gutter: str, author: str, text: str, selected: bool) -> str:
    cells = "".join(f'<span class="l{lane % len(LANE_COLORS)}">{glyph.strip()}</span>'
                    for lane, glyph in enumerate(gutter))
    badges = "".join(
        f'<span style="margin-left:6px;padding:0 5px;border-radius:3px;font-size:11px;white-space:nowrap;'
        f'background:{"#fbe3e2" if "older" in mark else "#e8eef6"}">{html.escape(mark)}</span>'
        for mark in _marks(row))
    depth = "?" if row.depth is None else str(row.depth)
    preview = text if len(text) <= TEXT_PREVIEW else text[: TEXT_PREVIEW - 1] + "…"
    background = "background:#fff6d6;" if selected else ""
    return (f'<div style="display:flex;align-items:baseline;gap:8px;padding:1px 4px;{background}'
            f'border-left:3px solid {LANE_COLORS[row.lane % len(LANE_COLORS)]}" title="{html.escape(row.id)}">'
            f'<span style="min-width:22px;text-align:right;color:#666">{depth}</span>'
            f'<span style="white-space:nowrap">{cells}</span>'
            f'<span style="color:#666;white-space:nowrap">{claimed_time(row.timestamp)}</span>'
            f'<b style="white-space:nowrap">{html.escape(author)}</b>'
            f'<span>{html.escape(preview)}</span>{badges}</div>')
