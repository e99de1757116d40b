"""What the derived tables take out of a message's content: pure Python, no Spark (the archive decoder and the
analyses reuse it).

Strategy: one function per table, from a parsed content object to plain rows (tuples in the table's column order
after the message key, see `ssblab.pipeline.schema`). Content is untrusted: every field is type-checked, a field
of the wrong type becomes null, and a row whose required field is missing is left out; nothing raises.

Conventions follow the JS stack: ``branch`` may be a string or a list; a vote is ``{vote: {link, value,
expression}}``; ``about.image`` is a blob id or ``{link}``; a channel may carry a leading ``#``; a tangle is
``tangles.NAME = {root, previous: [ids]}`` (ssb-tangle), the thread tangle also being ``root``/``branch``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ssblab.core.refs import is_blob_id, is_feed_id, is_message_id
from ssblab.friends.contacts import js_truthy

__all__ = ["about_row", "contact_row", "links", "post_row", "ref_kind", "tangle_edges", "vote_row"]

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SIGILS = {"@": ("feed", is_feed_id), "%": ("message", is_message_id), "&": ("blob", is_blob_id)}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if type(value) is int and -(2**63) <= value < 2**63:
        return value
    if type(value) is float and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return None


def _strings(value: Any) -> list[str] | None:
    """A string or a list of strings as a list (other items dropped); None when neither."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return None


def _link(value: Any) -> str | None:
    """A ref given as a string or as an object's ``link``."""
    if isinstance(value, dict):
        value = value.get("link")
    return _str(value)


def post_row(content: dict[str, Any]) -> tuple[Any, ...]:
    """(text, root, branch, channel, mentions)."""
    channel = _str(content.get("channel"))
    mentions = content.get("mentions")
    links = [link for m in mentions if (link := _link(m))] if isinstance(mentions, list) else None
    return (_str(content.get("text")), _str(content.get("root")), _strings(content.get("branch")),
            channel[1:] if channel and channel.startswith("#") else channel, links)


def vote_row(content: dict[str, Any]) -> tuple[Any, ...]:
    """(link, value, expression)."""
    vote = content.get("vote")
    vote = vote if isinstance(vote, dict) else {}
    return _str(vote.get("link")), _int(vote.get("value")), _str(vote.get("expression"))


def contact_row(content: dict[str, Any]) -> tuple[Any, ...] | None:
    """(contact, following, blocking), or None without a contact.

    Read as ssb-friends reads them: following only when exactly ``true``; blocking when ``blocking`` or
    ``flagged`` is JavaScript-truthy. A state the message does not mention stays null.
    """
    contact = _str(content.get("contact"))
    if contact is None:
        return None
    following = content.get("following") is True if "following" in content else None
    mentions_block = "blocking" in content or "flagged" in content
    blocking = js_truthy(content.get("blocking")) or js_truthy(content.get("flagged")) if mentions_block else None
    return contact, following, blocking


def about_row(content: dict[str, Any]) -> tuple[Any, ...] | None:
    """(about, name, image, description), or None without an ``about``."""
    about = _str(content.get("about"))
    if about is None:
        return None
    return about, _str(content.get("name")), _link(content.get("image")), _str(content.get("description"))


def _step(path: str, key: str) -> str:
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{escaped}']"


def ref_kind(value: str) -> str | None:
    """"feed", "message" or "blob" for an SSB ref, else None (cheap sigil test first)."""
    found = _SIGILS.get(value[:1])
    return found[0] if found and found[1](value) else None


def links(content: Any, path: str = "$") -> Iterator[tuple[str, str, str]]:
    """Every ``@``, ``%`` and ``&`` ref anywhere in the content: (target, kind, JSON path), in document order.

    Examples:
        >>> list(links({"type": "vote", "vote": {"link": "%" + "A" * 43 + "=.sha256"}}))[0][1:]
        ('message', '$.vote.link')
    """
    if isinstance(content, str):
        kind = ref_kind(content)
        if kind:
            yield content, kind, path
    elif isinstance(content, dict):
        for key, value in content.items():
            yield from links(value, _step(path, key))
    elif isinstance(content, list):
        for i, value in enumerate(content):
            yield from links(value, f"{path}[{i}]")


def tangle_edges(content: dict[str, Any]) -> Iterator[tuple[str, str, str | None]]:
    """(tangle, root, parent) edges: the thread from ``root``/``branch``, others from ``tangles``.

    A message that names a root but no usable parent gives one edge with a null parent (it hangs off the root).
    """
    root = content.get("root")
    if is_message_id(root):
        yield from _edges("thread", root, content.get("branch"))
    tangles = content.get("tangles")
    if isinstance(tangles, dict):
        for name, tangle in tangles.items():
            if isinstance(tangle, dict) and is_message_id(tangle.get("root")):
                yield from _edges(name, tangle["root"], tangle.get("previous"))


def _edges(name: str, root: str, parents: Any) -> Iterator[tuple[str, str, str | None]]:
    found = [p for p in _strings(parents) or [] if is_message_id(p)]
    if not found:
        yield name, root, None
    for parent in found:
        yield name, root, parent
