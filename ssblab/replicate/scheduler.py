"""Which feeds to ask a peer for, and why: a list from a file, or the follow graph's hops from a root.

Strategy: the hops come from ``ssblab.friends`` (the ssb-friends 4.4 rules) over the stored contact messages;
since replicating feeds reveals more contacts, `wanted_by_hops` is called again after each round until the set
stops growing (the caller's loop). Invariants: a feed blocked by the root is never wanted; the root is always wanted;
every `Want` carries the reason the ``--explain`` output prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssblab.core.refs import is_feed_id
from ssblab.friends import contact_edges, hops
from ssblab.friends import explain as friends_explain
from ssblab.replicate.errors import ReplicationError
from ssblab.replicate.hub import LiveStore, load_value

__all__ = ["Want", "contact_messages", "feeds_from_file", "wanted_by_hops"]


@dataclass(frozen=True, order=True)
class Want:
    """A feed to replicate: ``hops`` from the root (None when it came from a list) and why."""

    feed: str
    hops: int | None
    why: str


def feeds_from_file(path: str | Path) -> list[Want]:
    """Feed ids from a file: one per line, a JSON list, or an ssb-fixtures ``follow-graph.json`` (its keys)."""
    text = Path(path).read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    ids = list(data) if isinstance(data, dict | list) else []
    bad = [feed for feed in ids if not is_feed_id(feed)]
    if bad or not ids:
        raise ReplicationError(f"{path}: expected feed ids, found {bad[:1] or 'none'}", code="feeds-file")
    return [Want(feed, None, f"listed in {path}") for feed in dict.fromkeys(ids)]


def contact_messages(live: LiveStore) -> Iterator[dict[str, Any]]:
    """The stored contact message values, in local log order (the order ssb-friends reads them)."""
    for (value,) in live.store.db.execute("SELECT value FROM messages WHERE type = 'contact' ORDER BY seq"):
        yield load_value(value)


def wanted_by_hops(live: LiveStore, root: str, max_hops: int, *, explain: bool = False) -> list[Want]:
    """Feeds ``0 <= hops <= max_hops`` from ``root`` by the ssb-friends rules, nearest first.

    With ``explain`` each `Want` says which follows bring it in (``ssblab.friends.explain``); otherwise only its hop.
    """
    edges = contact_edges(contact_messages(live))
    values = hops(edges, root, max_hops)
    wanted = sorted((value, feed) for feed, value in values.items() if 0 <= value <= max_hops)
    return [Want(feed, value, "; ".join(friends_explain(edges, root, feed, max_hops)) if explain
                 else f"hop {value} from {root}") for value, feed in wanted]
