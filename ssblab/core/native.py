"""Messages of the feed formats after classic (bendy butt, buttwoo): one shape for all, and their feed chain.

Why: the format modules (`bendybutt`, `buttwoo`) decide whether one message is well formed and signed, from its
native bytes; what follows from its place in a feed (first message, next sequence, previous id, a fork) is the
same rule for every format and lives here, so `validate.FeedValidator` can hold feeds of any format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ssblab.core.errors import InvalidMessage, Rule

if TYPE_CHECKING:
    from ssblab.core.validate import FeedState

__all__ = ["NativeMessage", "check_chain"]


class NativeMessage(NamedTuple):
    """One verified message of a non-classic format: what the chain needs, and its native bytes."""

    format: str
    id: str
    author: str  # the feed id (``ssb:feed/FORMAT/…``)
    sequence: int
    previous: str | None
    timestamp: float
    native: bytes

    @property
    def value(self) -> dict[str, Any]:
        """The fields a feed validator reads (``author``, ``sequence``)."""
        return {"author": self.author, "sequence": self.sequence}


def check_chain(head: FeedState | None, msg: NativeMessage) -> None:
    """``msg`` is the feed's next message after ``head`` (None: the feed's first).

    Raises:
        InvalidMessage: first-message, sequence-order (not fatal) or fork.
    """
    if head is None:
        if msg.sequence != 1 or msg.previous is not None:
            raise InvalidMessage(Rule.FIRST_MESSAGE, f"the first {msg.format} message must have sequence 1 and no "
                                 f"previous, got {msg.sequence}", author=msg.author, sequence=msg.sequence)
        return
    if msg.sequence == head.sequence + 1 and msg.previous == head.id:
        return
    if msg.sequence in (head.sequence, head.sequence + 1):
        raise InvalidMessage(Rule.FORK, f"{msg.id} conflicts with the feed's {head.id}", author=msg.author,
                             sequence=msg.sequence)
    raise InvalidMessage(Rule.SEQUENCE_ORDER, f"expected sequence {head.sequence + 1}, got {msg.sequence}",
                         author=msg.author, sequence=msg.sequence, fatal=False)
