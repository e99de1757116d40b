"""Signed test feeds: the one helper that writes ``count`` valid posts in a row for the tests that need them."""

from __future__ import annotations

from ssblab.core import Keypair, Message, create_message


def signed_posts(keypair: Keypair, count: int, previous: Message | None = None, *, text: str = "post",
                 start: int = 0) -> list[Message]:
    """``count`` signed posts continuing ``previous``: texts ``"{text} {start + i}"``, claimed times
    ``1000 + start + i`` ms (deterministic, so the same call gives the same ids)."""
    out: list[Message] = []
    for i in range(start, start + count):
        previous = create_message(keypair, {"type": "post", "text": f"{text} {i}"}, previous=previous,
                                  timestamp=1_000 + i)
        out.append(previous)
    return out
