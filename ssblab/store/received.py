"""What every reader of SSB data yields: one message as read from a source, or why there is none."""

from __future__ import annotations

from dataclasses import dataclass

from ssblab.core.errors import InvalidMessage
from ssblab.core.message import Message
from ssblab.core.native import NativeMessage

__all__ = ["Received"]


@dataclass(frozen=True, slots=True)
class Received:
    """One message as read from a source: parsed, or the error that stopped it, with where it was."""

    where: str
    message: Message | None = None
    received: float | None = None  # the source's own receive time (ms), when it records one
    error: InvalidMessage | None = None
    skipped: str | None = None  # a record that holds no message, and why ("deleted")
    finding: str | None = None  # a strict JSON rule the text broke that JS accepts ("json-surrogate", …)
    native: NativeMessage | None = None  # a message of a newer feed format (bendy butt, buttwoo), verified alone
    proven: bool = False  # its signature verified already (`ssblab.core.message.prove_signatures`): not checked again
    plain: bool | None = None  # its value is plain (`ssblab.core.encoding.is_plain`) or not; None: not known
