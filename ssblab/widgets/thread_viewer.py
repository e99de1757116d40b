"""A thread viewer: one tangle in causal order, concurrent branches in lanes, heads and suspicious clocks marked.

Strategy: a plain model (:class:`ThreadViewer`: which thread, which order, which message is selected) over pure
functions of a :class:`~ssblab.tangles.thread.Tangle` (:func:`layout`, :func:`render_text`, :func:`render_html`),
and a thin ipywidgets view (:meth:`ThreadViewer.widget`) that only forwards clicks to the model and shows its
HTML. ipywidgets is imported inside that method, so the model and its tests need no browser and no Jupyter.

Lanes, as a version-control graph draws them: messages are placed in causal order; a message continues the lane of
its lowest-numbered parent that is still a lane's tip, closes the lanes of its other parents (a merge), and opens
the lowest free lane when every parent's lane has moved on (a concurrent branch: someone replied to an older
message). Each open lane at the end ends in a head, so several lanes at the bottom are the concurrent heads.

Claimed times (seed 000 §6.4): a message's ``timestamp`` is whatever its author wrote. A message that claims to be
older than one of its (transitive) ancestors is flagged, naming that ancestor: the links prove it is newer, so its
clock is wrong or lying. Only links order messages; the claimed-time order is offered to show what it gets wrong.

Invariants: every present message of the tangle gets exactly one row; in causal order every row comes after the
rows of its present parents; depths and the trDAG report are those of :mod:`ssblab.tangles.thread`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ssblab.tangles.thread import (
    Tangle,
    TangleReport,
    causal_sort,
    check_tangle,
    heads,
    lamport_depths,
    tangle_from_edges,
)
from ssblab.widgets.common import WidgetError

__all__ = [
    "ORDERS",
    "ThreadLayout",
    "ThreadRow",
    "ThreadViewer",
    "ViewerError",
    "layout",
    "render_html",
    "render_text",
]

ORDERS = ("causal", "claimed")
LANE_COLORS = ("#3b6ea8", "#e07b39", "#4f9d69", "#c8504d", "#8a6bb1", "#9c7a55", "#d17fb4", "#7a7a7a")
TEXT_PREVIEW = 90


class ViewerError(WidgetError):
    """A request the viewer cannot honour (an unknown thread, order or message), naming what was asked."""

    code = "thread-viewer"


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


def _when(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _short(message_id: str, length: int = 8) -> str:
    """``%AbCdEfGh…``: enough of an id to tell messages of one thread apart."""
    return message_id[: length + 1] + "…"


def _gutter(row: ThreadRow, width: int, order: str) -> str:
    """Lane glyphs: the message's dot, and the branches passing by (causal order only)."""
    alive = row.alive if order == "causal" else frozenset()
    return "".join("●" if lane == row.lane else ("│" if lane in alive else " ") for lane in range(width))


def _marks(row: ThreadRow) -> list[str]:
    marks = ["root"] if row.is_root else []
    if row.branches_from is not None:
        marks.append(f"branches from {_short(row.branches_from)}")
    if row.is_head:
        marks.append("head")
    if row.missing:
        marks.append(f"links {len(row.missing)} missing")
    if row.contradicts is not None:
        marks.append(f"claims to be older than its ancestor {_short(row.contradicts)}")
    return marks


def render_text(view: ThreadLayout, order: str = "causal", *, authors: Mapping[str, str] | None = None) -> str:
    """The thread as plain text lines (depth, lanes, claimed time, author, id, marks), for terminals and tests."""
    names = authors or {}
    lines = []
    for row in view.ordered(order):
        depth = "?" if row.depth is None else str(row.depth)
        marks = "  [" + "; ".join(_marks(row)) + "]" if _marks(row) else ""
        lines.append(f"{depth:>3} {_gutter(row, view.lanes, order)} {_when(row.timestamp)} "
                     f"{names.get(row.id, ''):<12.12} {_short(row.id)}{marks}")
    return "\n".join(lines)


def render_html(view: ThreadLayout, order: str = "causal", *, authors: Mapping[str, str] | None = None,
                texts: Mapping[str, str] | None = None, selected: str | None = None) -> str:
    """The thread as an HTML fragment: one row per message, indented by lane, coloured by lane, marks as badges."""
    out = ['<div class="ssblab-thread" style="font:13px DejaVu Sans,Helvetica,Arial,sans-serif;color:#222">']
    for row in view.ordered(order):
        out.append(_html_row(row, _gutter(row, view.lanes, order), (authors or {}).get(row.id, ""),
                             (texts or {}).get(row.id, ""), row.id == selected))
    out.append("</div>")
    return "".join(out)


def _html_row(row: ThreadRow, gutter: str, author: str, text: str, selected: bool) -> str:
    cells = "".join(
        f'<span style="display:inline-block;width:12px;text-align:center;'
        f'color:{LANE_COLORS[lane % len(LANE_COLORS)]}">{html.escape(glyph.strip())}</span>'
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
            f'<span style="color:#666;white-space:nowrap">{_when(row.timestamp)}</span>'
            f'<b style="white-space:nowrap">{html.escape(author)}</b>'
            f'<span>{html.escape(preview)}</span>{badges}</div>')


class ThreadViewer:
    """The viewer's state: the threads it can show, the current one, the order and the selected message.

    Args:
        tangles: the threads (or other tangles), each keyed by its root.
        authors: message id -> display name of its author (optional).
        texts: message id -> text to preview (optional).

    Raises:
        ViewerError: no tangles.

    Examples:
        >>> t = Tangle("thread", "%r", {"%a": ("%r",), "%b": ("%r",)}, {"%r": 1.0, "%a": 3.0, "%b": 2.0})
        >>> viewer = ThreadViewer([t])
        >>> [(row.id, row.depth, row.is_head, row.branches_from) for row in viewer.rows()]
        [('%r', 0, False, None), ('%b', 1, True, None), ('%a', 1, True, '%r')]
    """

    def __init__(self, tangles: Iterable[Tangle], *, authors: Mapping[str, str] | None = None,
                 texts: Mapping[str, str] | None = None) -> None:
        by_root = {t.root: t for t in tangles}
        if not by_root:
            raise ViewerError("thread viewer: no tangles to show")
        # Biggest threads first: they are the interesting ones to open.
        self.roots = sorted(by_root, key=lambda r: (-len(by_root[r].timestamps), r))
        self.tangles, self.authors, self.texts = by_root, dict(authors or {}), dict(texts or {})
        self.root, self.order = self.roots[0], "causal"
        self.selected: str | None = None
        self._layouts: dict[str, ThreadLayout] = {}

    @classmethod
    def from_rows(cls, edges: Iterable[Mapping[str, Any]], messages: Iterable[Mapping[str, Any]], *,
                  name: str = "thread", min_messages: int = 1, texts: Mapping[str, str] | None = None,
                  names: Mapping[str, str] | None = None) -> ThreadViewer:
        """Every tangle ``name`` in ``tangle_edges`` rows, with roots' times and authors from ``messages`` rows.

        Args:
            edges: rows of the ``tangle_edges`` table; messages: rows with ``id``, ``author``, ``timestamp``.
            min_messages: leave out smaller tangles (counting the root).
            texts: message id -> text; names: feed id -> display name (else a short feed id).
        """
        by_root: dict[str, list[Mapping[str, Any]]] = {}
        for row in edges:
            if row["tangle"] == name:
                by_root.setdefault(row["root"], []).append(row)
        info = {m["id"]: (m["author"], m["timestamp"]) for m in messages}
        tangles = [tangle_from_edges(rows, root, name=name, root_timestamp=info[root][1] if root in info else None)
                   for root, rows in by_root.items()]
        kept = [t for t in tangles if len(t.timestamps) >= min_messages]
        feeds = {r["id"]: r["author"] for rows in by_root.values() for r in rows}
        feeds |= {i: author for i, (author, _) in info.items()}
        authors = {i: (names or {}).get(feed) or feed[:8] for i, feed in feeds.items()}
        return cls(kept, authors=authors, texts=texts)

    # --- state changes (what the widget's controls call) ----------------------------------------------------

    def show(self, root: str) -> None:
        if root not in self.tangles:
            raise ViewerError(f"thread viewer: no thread with root {root}")
        self.root, self.selected = root, None

    def set_order(self, order: str) -> None:
        if order not in ORDERS:
            raise ViewerError(f"thread viewer: unknown order {order!r} (use {', '.join(ORDERS)})")
        self.order = order

    def select(self, message_id: str | None) -> None:
        if message_id is not None and message_id not in self.tangle.timestamps:
            raise ViewerError(f"thread viewer: {message_id} is not in the thread {self.root}")
        self.selected = message_id

    # --- what to show --------------------------------------------------------------------------------------

    @property
    def tangle(self) -> Tangle:
        return self.tangles[self.root]

    @property
    def layout(self) -> ThreadLayout:
        if self.root not in self._layouts:
            self._layouts[self.root] = layout(self.tangle)
        return self._layouts[self.root]

    def rows(self) -> tuple[ThreadRow, ...]:
        return self.layout.ordered(self.order)

    def label(self, root: str) -> str:
        """How a thread is listed: size, heads, and the start of the root's text."""
        tangle = self.tangles[root]
        count, head_count = len(tangle.timestamps), len(heads(tangle))
        text = self.texts.get(root, _short(root))
        return f"{count} messages, {head_count} head{'s' if head_count != 1 else ''}: {text[:50]}"

    def summary(self) -> dict[str, Any]:
        """Counts for the header: messages, lanes, heads, deepest depth, trDAG verdict, missing, contradictions."""
        view = self.layout
        depths = [r.depth for r in view.rows if r.depth is not None]
        return {"messages": len(view.rows), "lanes": view.lanes, "heads": len(view.heads),
                "max_depth": max(depths, default=None), "is_trdag": view.report.is_trdag,
                "missing": len(view.report.missing), "contradictions": len(view.contradictions)}

    def details(self, message_id: str | None = None) -> dict[str, Any]:
        """What the viewer knows of one message (default: the selected one): links both ways and marks."""
        target = message_id or self.selected
        row = next((r for r in self.layout.rows if r.id == target), None)
        if row is None:
            raise ViewerError(f"thread viewer: {target} is not in the thread {self.root}")
        children = [r.id for r in self.layout.rows if target in r.parents]
        return {"id": row.id, "author": self.authors.get(row.id, ""), "claimed": _when(row.timestamp),
                "depth": row.depth, "lane": row.lane, "parents": list(row.parents), "children": children,
                "missing": list(row.missing), "head": row.is_head, "contradicts": row.contradicts}

    def text(self) -> str:
        return render_text(self.layout, self.order, authors=self.authors)

    def html(self) -> str:
        s = self.summary()
        verdict = "a trDAG" if s["is_trdag"] else "not a strict trDAG (see the report)"
        header = (f'<div style="font:13px DejaVu Sans,Helvetica,Arial,sans-serif;margin:4px 0 8px">'
                  f'<b>{s["messages"]} messages</b>, {s["heads"]} head(s), {s["lanes"]} lane(s), '
                  f'deepest depth {s["max_depth"]}, {verdict}; {s["missing"]} missing, '
                  f'{s["contradictions"]} claimed time(s) contradicting the links. Order: {self.order}.</div>')
        return header + render_html(self.layout, self.order, authors=self.authors, texts=self.texts,
                                    selected=self.selected)

    def widget(self) -> Any:
        """The ipywidgets view: a thread picker, the order, a message picker, the thread and its details."""
        import ipywidgets as w  # type: ignore[import-untyped]

        pick = w.Dropdown(options=[(self.label(r), r) for r in self.roots], value=self.root, description="thread",
                          layout=w.Layout(width="640px"))
        order = w.ToggleButtons(options=[("causal order", "causal"), ("claimed time", "claimed")], value=self.order)
        message = w.Dropdown(description="message", layout=w.Layout(width="640px"))
        body, info = w.HTML(), w.HTML()

        def refresh() -> None:
            message.options = [("(none)", None)] + [(self._row_label(r), r.id) for r in self.rows()]
            message.value = self.selected
            self._update(body, info)

        def on_thread(change: dict[str, Any]) -> None:
            self.show(change["new"])
            refresh()

        def on_order(change: dict[str, Any]) -> None:
            self.set_order(change["new"])
            refresh()

        def on_message(change: dict[str, Any]) -> None:
            self.select(change["new"])
            self._update(body, info)

        pick.observe(on_thread, names="value")
        order.observe(on_order, names="value")
        message.observe(on_message, names="value")
        refresh()
        return w.VBox([pick, order, message, info, body])

    def _update(self, body: Any, info: Any) -> None:
        body.value, info.value = self.html(), self._details_html()

    def _row_label(self, row: ThreadRow) -> str:
        return f"{'?' if row.depth is None else row.depth:>2}  {self.authors.get(row.id, '')}  {_short(row.id)}"

    def _details_html(self) -> str:
        if self.selected is None:
            return ""
        d = self.details()
        lines = [f"<b>{html.escape(d['id'])}</b> by {html.escape(d['author'])}, claimed {d['claimed']}, "
                 f"depth {d['depth']}", f"links to: {', '.join(map(_short, d['parents'])) or '(root)'}",
                 f"linked from: {', '.join(map(_short, d['children'])) or 'nobody (a head)'}"]
        if d["contradicts"]:
            lines.append(f"its claimed time is earlier than its ancestor {_short(d['contradicts'])}'s")
        return '<div style="font:12px DejaVu Sans,Helvetica,Arial,sans-serif">' + "<br>".join(lines) + "</div>"
