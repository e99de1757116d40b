"""Exception hierarchy of the network layer.

Every decoder in ``ssblab.net`` raises a subclass of :class:`NetProtocolError` for bad input from the peer,
and nothing else: the fuzz tests hold each decoder to that. Errors caused by our own misuse of an API
(sending on a stream we already ended) are :class:`LocalProtocolError`, so callers can tell "the peer broke
the protocol" from "this program has a bug".
"""

from __future__ import annotations

from ssblab.core.errors import SsbError, UsageError

__all__ = [
    "AddressError",
    "BoxStreamError",
    "BudgetExceeded",
    "HandshakeError",
    "LocalProtocolError",
    "MuxRpcError",
    "NetProtocolError",
    "PacketStreamError",
    "RemoteCallError",
]


class NetProtocolError(SsbError):
    """The remote peer sent bytes that break a protocol rule."""

    code = "net-protocol"


class HandshakeError(NetProtocolError):
    """Secret handshake (shs1) failed; ``step`` names the message that failed (msg1..msg4)."""

    def __init__(self, step: str, reason: str) -> None:
        super().__init__(f"shs1 {step}: {reason}")
        self.step = step
        self.reason = reason


class BoxStreamError(NetProtocolError):
    """A box-stream header or body failed to authenticate or was malformed."""


class PacketStreamError(NetProtocolError):
    """A packet-stream header was malformed (flags, length) or data followed the goodbye."""


class MuxRpcError(NetProtocolError):
    """A muxrpc packet broke the request/response rules."""


class BudgetExceeded(SsbError):
    """A connection was dropped because the server held too many bytes for its peers, this one the most."""

    code = "memory-budget"

    def __init__(self, held: int, limit: int) -> None:
        super().__init__(f"dropped: the server holds more than its budget of {limit:,} bytes for its peers, "
                         f"{held:,} of them for this one (a partly sent packet or unread stream items)")


class LocalProtocolError(UsageError):
    """This program used a protocol object wrongly (wrote to a stream it already ended, gave a key of the wrong
    length); h11's LocalProtocolError. A `UsageError`, and so a ValueError."""

    code = "net-local"


class AddressError(SsbError, ValueError):
    """A multiserver address string could not be parsed."""


class RemoteCallError(SsbError):
    """The remote answered a call with an error object (JS shape ``{name, message, stack}``)."""

    def __init__(self, name: str, message: str, stack: str = "") -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message
        self.stack = stack
