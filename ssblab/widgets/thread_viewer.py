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
from typing import Any

from ssblab.tangles.thread import Tangle, heads, tangle_from_edges
from ssblab.widgets.common import ViewerError
from ssblab.widgets.thread_layout import (
    ORDERS,
    ThreadLayout,
    ThreadRow,
    claimed_time,
    layout,
    render_html,
    render_text,
    short_message_id,
)

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

PAGE_SIZE = 50


class ThreadViewer:
    """The viewer's state: the threads it can show, the current one, the order and the selected message.

    Args:
        tangles: the threads (or other tangles), each keyed by its root.
        authors: message id -> display name of its author (optional).
        texts: message id -> text to preview (optional).

        page_size: how many messages a page of the thread shows (a 300-message thread is six pages, not one
            megabyte of HTML).

    Raises:
        ViewerError: no tangles, or a page size below 1.

    Examples:
        >>> t = Tangle("thread", "%r", {"%a": ("%r",), "%b": ("%r",)}, {"%r": 1.0, "%a": 3.0, "%b": 2.0})
        >>> viewer = ThreadViewer([t])
        >>> [(row.id, row.depth, row.is_head, row.branches_from) for row in viewer.rows()]
        [('%r', 0, False, None), ('%b', 1, True, None), ('%a', 1, True, '%r')]
    """

    def __init__(self, tangles: Iterable[Tangle], *, authors: Mapping[str, str] | None = None,
                 texts: Mapping[str, str] | None = None, page_size: int = PAGE_SIZE) -> None:
        by_root = {t.root: t for t in tangles}
        if not by_root:
            raise ViewerError("thread viewer: no tangles to show")
        if page_size < 1:
            raise ViewerError(f"thread viewer: page_size must be at least 1, got {page_size}")
        self.page_size, self.page = page_size, 0
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
        self.root, self.selected, self.page = root, None, 0

    def set_order(self, order: str) -> None:
        if order not in ORDERS:
            raise ViewerError(f"thread viewer: unknown order {order!r} (use {', '.join(ORDERS)})")
        self.order = order
        self._follow_selection()

    def select(self, message_id: str | None) -> None:
        """Select a message (None: none) and turn to the page that shows it."""
        if message_id is not None and message_id not in self.tangle.timestamps:
            raise ViewerError(f"thread viewer: {message_id} is not in the thread {self.root}")
        self.selected = message_id
        self._follow_selection()

    def go(self, page: int) -> None:
        if not 0 <= page < self.page_count:
            raise ViewerError(f"thread viewer: no page {page} (the thread has {self.page_count})")
        self.page = page

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.tangle.timestamps) // self.page_size))

    def _follow_selection(self) -> None:
        ids = [row.id for row in self.rows()]
        if self.selected in ids:
            self.page = ids.index(self.selected) // self.page_size

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
        text = self.texts.get(root, short_message_id(root))
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
        return {"id": row.id, "author": self.authors.get(row.id, ""), "claimed": claimed_time(row.timestamp),
                "depth": row.depth, "lane": row.lane, "parents": list(row.parents), "children": children,
                "missing": list(row.missing), "head": row.is_head, "contradicts": row.contradicts}

    def text(self) -> str:
        return render_text(self.layout, self.order, authors=self.authors)

    def html(self) -> str:
        s = self.summary()
        verdict = "a trDAG" if s["is_trdag"] else "not a strict trDAG (see the report)"
        first = self.page * self.page_size
        shown = slice(first, first + self.page_size)
        pages = (f" Page {self.page + 1} of {self.page_count} (messages {first + 1}-"
                 f"{min(first + self.page_size, s['messages'])})." if self.page_count > 1 else "")
        header = (f'<div style="font:13px DejaVu Sans,Helvetica,Arial,sans-serif;margin:4px 0 8px">'
                  f'<b>{s["messages"]} messages</b>, {s["heads"]} head(s), {s["lanes"]} lane(s), '
                  f'deepest depth {s["max_depth"]}, {verdict}; {s["missing"]} missing, '
                  f'{s["contradictions"]} claimed time(s) contradicting the links. Order: {self.order}.{pages}</div>')
        return header + render_html(self.layout, self.order, authors=self.authors, texts=self.texts,
                                    selected=self.selected, rows=shown)

    def widget(self) -> Any:
        """The ipywidgets view: a thread picker, the order, a message picker, the thread and its details."""
        import ipywidgets as w  # type: ignore[import-untyped]

        pick = w.Dropdown(options=[(self.label(r), r) for r in self.roots], value=self.root, description="thread",
                          layout=w.Layout(width="640px"))
        order = w.ToggleButtons(options=[("causal order", "causal"), ("claimed time", "claimed")], value=self.order)
        message = w.Dropdown(description="message", layout=w.Layout(width="640px"))
        back, forth = w.Button(description="◀ previous"), w.Button(description="next ▶")
        body, info = w.HTML(), w.HTML()

        def update() -> None:
            body.value, info.value = self.html(), self._details_html()
            back.disabled, forth.disabled = self.page == 0, self.page >= self.page_count - 1

        def refresh() -> None:
            message.options = [("(none)", None)] + [(self._row_label(r), r.id) for r in self.rows()]
            message.value = self.selected
            update()

        def on_thread(change: dict[str, Any]) -> None:
            self.show(change["new"])
            refresh()

        def on_order(change: dict[str, Any]) -> None:
            self.set_order(change["new"])
            refresh()

        def on_message(change: dict[str, Any]) -> None:
            self.select(change["new"])
            update()

        pick.observe(on_thread, names="value")
        order.observe(on_order, names="value")
        message.observe(on_message, names="value")
        def turn(step: int) -> None:
            self.go(self.page + step)
            update()

        back.on_click(lambda _: turn(-1))
        forth.on_click(lambda _: turn(1))
        refresh()
        return w.VBox([pick, order, message, w.HBox([back, forth]), info, body])

    def _row_label(self, row: ThreadRow) -> str:
        depth = "?" if row.depth is None else row.depth
        return f"{depth:>2}  {self.authors.get(row.id, '')}  {short_message_id(row.id)}"

    def _details_html(self) -> str:
        if self.selected is None:
            return ""
        d = self.details()
        lines = [f"<b>{html.escape(d['id'])}</b> by {html.escape(d['author'])}, claimed {d['claimed']}, "
                 f"depth {d['depth']}", f"links to: {', '.join(map(short_message_id, d['parents'])) or '(root)'}",
                 f"linked from: {', '.join(map(short_message_id, d['children'])) or 'nobody (a head)'}"]
        if d["contradicts"]:
            lines.append(f"its claimed time is earlier than its ancestor {short_message_id(d['contradicts'])}'s")
        return '<div style="font:12px DejaVu Sans,Helvetica,Arial,sans-serif">' + "<br>".join(lines) + "</div>"
