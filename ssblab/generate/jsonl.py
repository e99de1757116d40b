"""Writing generated messages as JSONL: one compact message value per line, and a summary of what was written.

Compact ``JSON.stringify(value)`` is the transport form; `ssblab.core.Message.from_json` reads a line back
into the same message (the signing encoding, and so the id, are rebuilt from the value). The summary is
counted while writing, so a million-message file is summarized without a second pass.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ssblab.core.encoding import encode_compact
from ssblab.core.message import Message

__all__ = ["PRIVATE", "Summary", "message_kind", "write_jsonl"]

PRIVATE = "private"


def message_kind(msg: Message) -> str:
    """The content type, or ``"private"`` for boxed content."""
    content = msg.content
    return PRIVATE if isinstance(content, str) else str(content.get("type"))


@dataclass(frozen=True)
class Summary:
    """Counts of a written network: messages, feeds that wrote, messages per kind, bytes."""

    messages: int
    feeds: int
    bytes: int
    by_kind: dict[str, int] = field(default_factory=dict)

    def shares(self) -> dict[str, float]:
        """Each kind's share of the messages, largest first."""
        return {k: n / self.messages for k, n in sorted(self.by_kind.items(), key=lambda kv: -kv[1])}


def write_jsonl(messages: Iterable[Message], path: str | os.PathLike[str]) -> Summary:
    """Write one compact message value per line to ``path`` (replacing it) and count what was written."""
    kinds: Counter[str] = Counter()
    feeds: set[str] = set()
    size = 0
    with Path(path).open("wb") as out:
        for msg in messages:
            line = encode_compact(msg.value) + b"\n"
            out.write(line)
            size += len(line)
            kinds[message_kind(msg)] += 1
            feeds.add(msg.author)
    return Summary(sum(kinds.values()), len(feeds), size, dict(kinds))
