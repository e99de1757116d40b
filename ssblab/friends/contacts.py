"""Contact messages as ssb-friends 4.4 reads them: the latest message per (author, contact) pair sets one edge.

Strategy: mirror ``ssb-friends/contacts.js`` (its flumeview-reduce ``contacts2`` view, INDEX_VERSION 10) rule for
rule, so the edges here are the graph that ssb-server 16 traverses.

Rules (each checked against the JS source):

* Any message whose ``content.contact`` is a feed id counts, whatever its ``type``; both the author and the
  contact must pass ssb-ref 2.16's ``isFeed`` (``^@[a-zA-Z0-9/+]{42}[AEIMQUYcgkosw048]=.(?:sha256|ed25519)$``,
  with its unescaped ``.``, copied as is).
* Weight: ``-1`` when ``content.blocking`` or ``content.flagged`` is truthy (JavaScript truthiness), else ``1``
  when ``content.following === true``, else ``-2``. So the latest message replaces the pair's state whole: an
  unblock ``{blocking: false}`` also drops an earlier follow, and ``{following: "yes"}`` is an unfollow.
* Boxed (private) content is a string, so it has no ``contact`` and is skipped. NB: ssb-server decrypts messages
  addressed to its own key before its views see them, so a private contact the server can read does count there;
  pass the decrypted message to get that behaviour.
* Self-contacts are kept, as the JS graph keeps them; they never change a hop value (the traversal's ``min`` keeps
  the node's own value) but they keep the edge order identical.

Invariant: `contact_edges` is ordered by each pair's first contact message (Python dicts, like JavaScript objects
with non-numeric keys, keep insertion order), which is the order ssb-friends' graph iterates in.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from ssblab.core.message import Message

__all__ = [
    "BLOCK",
    "FOLLOW",
    "UNFOLLOW",
    "ContactState",
    "MessageLike",
    "contact_edges",
    "contact_of",
    "is_feed",
    "js_truthy",
]

# ssb-ref 2.16 feedIdRegex, including its unescaped "." (any character but a JavaScript line terminator).
_FEED_ID = re.compile(r"@[a-zA-Z0-9/+]{42}[AEIMQUYcgkosw048]=[^\n\r\u2028\u2029](?:sha256|ed25519)")

FOLLOW = 1
BLOCK = -1
UNFOLLOW = -2  # also unblock: any contact message that neither blocks nor follows


def is_feed(ref: object) -> TypeGuard[str]:
    """ssb-ref 2.16 ``isFeed``: what ssb-friends accepts as an edge's source or destination."""
    return isinstance(ref, str) and _FEED_ID.fullmatch(ref) is not None


def js_truthy(x: object) -> bool:
    """JavaScript truthiness (``[]`` and ``{}`` are true, ``NaN`` is false)."""
    if x is None or isinstance(x, bool):
        return bool(x)
    if isinstance(x, int | float):
        return x != 0 and not math.isnan(x)
    if isinstance(x, str):
        return x != ""
    return True


@dataclass(frozen=True, slots=True)
class ContactState:
    """What the latest contact message of a pair says; `weight` is the edge ssb-friends traverses."""

    following: bool
    blocking: bool

    @property
    def weight(self) -> int:
        """``-1`` block, ``1`` follow, ``-2`` neither (unfollow or unblock)."""
        if self.blocking:
            return BLOCK
        return FOLLOW if self.following else UNFOLLOW

    @classmethod
    def from_weight(cls, weight: int) -> ContactState:
        """The state that a hand-made edge of this weight stands for."""
        return cls(following=weight == FOLLOW, blocking=weight == BLOCK)


MessageLike = Message | Mapping[str, Any]


def contact_of(message: MessageLike) -> tuple[str, str, ContactState] | None:
    """``(source, dest, state)`` when ssb-friends reads ``message`` as a contact, else None.

    Args:
        message: a `Message` or a message value (a mapping with ``author`` and ``content``).

    Examples:
        >>> a, b = "@" + "A" * 43 + "=.ed25519", "@" + "Q" * 43 + "=.ed25519"
        >>> contact_of({"author": a, "content": {"type": "contact", "contact": b, "following": True}})[2]
        ContactState(following=True, blocking=False)
        >>> contact_of({"author": a, "content": "c2VjcmV0.box"}) is None
        True
    """
    value = message.value if isinstance(message, Message) else message
    content = value.get("content")
    if not isinstance(content, Mapping):
        return None
    source, dest = value.get("author"), content.get("contact")
    if is_feed(source) and is_feed(dest):
        blocking = js_truthy(content.get("blocking")) or js_truthy(content.get("flagged"))
        return source, dest, ContactState(following=content.get("following") is True, blocking=blocking)
    return None


def contact_edges(messages: Iterable[MessageLike]) -> dict[tuple[str, str], ContactState]:
    """The follow graph of ``messages`` (in log order): the latest contact message per pair wins.

    Examples:
        >>> a, b = "@" + "A" * 43 + "=.ed25519", "@" + "Q" * 43 + "=.ed25519"
        >>> follow = {"author": a, "content": {"type": "contact", "contact": b, "following": True}}
        >>> unblock = {"author": a, "content": {"type": "contact", "contact": b, "blocking": False}}
        >>> contact_edges([follow, unblock])[(a, b)].weight
        -2
    """
    edges: dict[tuple[str, str], ContactState] = {}
    for message in messages:
        contact = contact_of(message)
        if contact is not None:
            source, dest, state = contact
            edges[(source, dest)] = state
    return edges
