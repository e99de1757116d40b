"""The feed browser: pick a feed, read its messages page by page, filtered by type, with each one's verdict.

Strategy: a plain model (`FeedBrowser`: which feed, which types, which page) over a table with the columns of the
Parquet ``messages`` table (``id, author, sequence, timestamp, type, content, valid, error``), held as a pandas
frame. It comes from a dataset (`from_dataset`, a read of its columns) or straight from messages
(`from_messages`, which validates them with the core's `FeedValidator`, so verdicts are the same as the
pipeline's). Pure functions render
a page as HTML; the ipywidgets view (`feed_browser_view`, below) only forwards clicks.

Invariants: a page lists one feed's messages in sequence order; the page index always lies within the pages of the
current selection (changing feed or filter returns to the first page); private messages have the type
``private`` and show their ciphertext, unread.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ssblab.core.errors import InvalidMessage
from ssblab.core.validate import FeedValidator, as_message
from ssblab.graph.labels import feed_label
from ssblab.widgets.common import WidgetError, box

if TYPE_CHECKING:
    from ssblab.dataset import Dataset

__all__ = ["FeedBrowser", "FeedSummary", "feed_browser_view"]


COLUMNS = ["id", "author", "sequence", "timestamp", "type", "content", "valid", "error"]
PRIVATE = "private"  # the type shown for encrypted content, which has none in the clear
CONTENT_PREVIEW = 600  # characters of pretty-printed content per message


@dataclass(frozen=True)
class FeedSummary:
    """One feed as the picker lists it."""

    feed: str
    messages: int
    invalid: int
    types: tuple[tuple[str, int], ...]  # (type, count), most frequent first


def _type_column(frame: Any) -> Any:
    return frame["type"].fillna(PRIVATE)


def _record(msg: Any, position: int, ok: bool, error: InvalidMessage | None) -> dict[str, Any]:
    value = msg.value
    content = value.get("content")
    kind = content.get("type") if isinstance(content, dict) else None
    return {"id": msg.id, "author": value.get("author"), "sequence": value.get("sequence", position),
            "timestamp": float(value.get("timestamp") or 0.0), "type": kind if isinstance(kind, str) else None,
            "content": orjson.dumps(content).decode(), "valid": ok,
            "error": None if error is None else error.rule.value}


class FeedBrowser:
    """Which feed, which message types, which page; the rows of that page.

    Examples:
        >>> from ssblab.generate import generate_network
        >>> browser = FeedBrowser.from_messages(generate_network(authors=3, messages=30, seed=1), page_size=5)
        >>> len(browser.page_rows()), browser.page
        (5, 0)
    """

    def __init__(self, messages: Any, *, page_size: int = 20, names: dict[str, str] | None = None) -> None:
        missing = [c for c in COLUMNS if c not in messages.columns]
        if missing:
            raise WidgetError(f"feed browser: the messages table lacks columns {missing}")
        if page_size < 1:
            raise WidgetError(f"feed browser: page_size must be at least 1, got {page_size}")
        frame = messages[COLUMNS].assign(type=lambda f: _type_column(f))
        self.messages = frame.sort_values(["author", "sequence"], kind="stable").reset_index(drop=True)
        self.names = names or {}
        self.page_size = page_size
        feeds = self.feeds()
        if not feeds:
            raise WidgetError("feed browser: there are no messages to browse")
        self.feed, self.types, self.page = feeds[0].feed, frozenset[str](), 0

    @classmethod
    def from_dataset(cls, data: str | Path | Dataset, *, authors: Sequence[str] | None = None,
                     **options: Any) -> FeedBrowser:
        """From a dataset's ``messages`` table (a path is opened on the local engine); ``authors`` limits what is
        read."""
        import pyarrow.compute as pc

        from ssblab.dataset import Dataset, open_dataset

        ds = data if isinstance(data, Dataset) else open_dataset(data)
        table = ds.table("messages", COLUMNS)
        if authors is not None:
            table = table.filter(pc.is_in(table["author"], pc.array(list(authors))))  # type: ignore[attr-defined]
        return cls(table.to_pandas(), **options)

    @classmethod
    def from_messages(cls, items: Iterable[Any], **options: Any) -> FeedBrowser:
        """From message values (or `Message` objects, or raw JSON) in log order, each checked by the validator."""
        import pandas as pd

        validator, rows = FeedValidator(), []
        for position, item in enumerate(items, start=1):
            try:
                msg = as_message(item)
            except InvalidMessage:
                continue  # unparseable: it has no author or sequence to file it under
            errors = len(validator.report.errors)
            ok = validator.push(msg)
            error = validator.report.errors[-1] if len(validator.report.errors) > errors else None
            rows.append(_record(msg, position, ok, error))
        return cls(pd.DataFrame(rows, columns=COLUMNS), **options)

    def feeds(self) -> list[FeedSummary]:
        """Every feed, the longest first (then by id)."""
        summaries = []
        for feed, rows in self.messages.groupby("author", sort=True):
            types = rows["type"].value_counts()
            summaries.append(FeedSummary(str(feed), len(rows), int((~rows["valid"].astype(bool)).sum()),
                                         tuple((str(t), int(n)) for t, n in types.items())))
        return sorted(summaries, key=lambda s: (-s.messages, s.feed))

    def label(self, feed: str) -> str:
        return feed_label(feed, self.names)

    def select(self, feed: str) -> FeedBrowser:
        if not (self.messages["author"] == feed).any():
            raise WidgetError(f"feed browser: no messages by {feed!r}")
        self.feed, self.page = feed, 0
        return self

    def filter_types(self, types: Iterable[str]) -> FeedBrowser:
        """Show only these types (``private`` for encrypted messages); empty shows everything."""
        self.types, self.page = frozenset(types), 0
        return self

    def selection(self) -> Any:
        """The current feed's messages that pass the type filter, in sequence order."""
        rows = self.messages[self.messages["author"] == self.feed]
        return rows[rows["type"].isin(self.types)] if self.types else rows

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.selection()) // self.page_size))

    def go(self, page: int) -> FeedBrowser:
        """Jump to ``page`` (clamped to the first and last page)."""
        self.page = min(max(page, 0), self.page_count - 1)
        return self

    def page_rows(self) -> list[dict[str, Any]]:
        """The rows of the current page, as plain dicts."""
        start = self.page * self.page_size
        return self.selection().iloc[start:start + self.page_size].to_dict(orient="records")  # type: ignore[no-any-return]

    def page_html(self) -> str:
        """The current page as an HTML table."""
        rows = "".join(_row_html(row) for row in self.page_rows()) or "<tr><td colspan=4>no messages</td></tr>"
        head = (f"<div class='ssblab-feed'><b>{html.escape(self.label(self.feed))}</b> — page {self.page + 1} of "
                f"{self.page_count} ({len(self.selection())} messages)")
        return (f"{head}<table><tr><th>seq</th><th>when</th><th>type</th><th>content</th></tr>{rows}</table>"
                "</div>")

    def widget(self) -> Any:
        """The ipywidgets view (needs the ``notebooks`` extra)."""
        return feed_browser_view(self)


def _pretty(content: str) -> str:
    try:
        text = orjson.dumps(orjson.loads(content), option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONDecodeError:
        text = content
    return text if len(text) <= CONTENT_PREVIEW else text[:CONTENT_PREVIEW] + " …"


def _row_html(row: dict[str, Any]) -> str:
    when = datetime.fromtimestamp(row["timestamp"] / 1000, UTC).strftime("%Y-%m-%d %H:%M")
    verdict = ("" if row["valid"] else
               f"<br><span style='color:#c8504d'>invalid: {html.escape(str(row['error']))}</span>")
    return (f"<tr><td>{row['sequence']}</td><td style='white-space:nowrap'>{when}</td>"
            f"<td>{html.escape(row['type'])}{verdict}</td>"
            f"<td><pre style='margin:0;white-space:pre-wrap;word-break:break-all'>"
            f"{html.escape(_pretty(row['content']))}</pre></td></tr>")


def feed_browser_view(model: FeedBrowser) -> Any:
    """Feed picker, type filter and pager over `FeedBrowser.page_html`."""
    import ipywidgets as w

    summaries = model.feeds()
    picker = w.Dropdown(options=[(f"{model.label(s.feed)} · {s.messages} msgs"
                                  + (f" · {s.invalid} invalid" if s.invalid else ""), s.feed) for s in summaries],
                        value=model.feed, description="feed")
    types = sorted({t for s in summaries for t, _ in s.types})
    kinds = w.SelectMultiple(options=types, value=tuple(sorted(model.types)), description="types", rows=4)
    back, forth = w.Button(description="◀ previous"), w.Button(description="next ▶")
    page = w.HTML()

    def render(*_: Any) -> None:
        page.value = model.page_html()
        back.disabled, forth.disabled = model.page == 0, model.page >= model.page_count - 1

    picker.observe(lambda change: (model.select(change["new"]), render()), names="value")
    kinds.observe(lambda change: (model.filter_types(change["new"]), render()), names="value")
    back.on_click(lambda _: (model.go(model.page - 1), render()))
    forth.on_click(lambda _: (model.go(model.page + 1), render()))
    render()
    controls = box([picker, kinds, box([back, forth], "ssblab-pager", vertical=False)], "ssblab-controls")
    return box([controls, page], "ssblab-feed-browser")
