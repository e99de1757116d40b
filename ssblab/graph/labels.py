"""How a feed is shown to a person: its self-chosen name and the start of its key (names are not unique)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["SHORT_ID", "feed_label", "short_id"]

SHORT_ID = 6  # characters of the key shown next to a name: enough to tell namesakes apart on screen


def short_id(feed: str) -> str:
    """``@AbCdE…`` for display."""
    return feed[: SHORT_ID + 1] + "…"


def feed_label(feed: str, names: Mapping[str, str]) -> str:
    """``Name (@AbCdE…)``, or the short key alone for a feed without a name."""
    name = names.get(feed)
    return f"{name} ({short_id(feed)})" if name else short_id(feed)
