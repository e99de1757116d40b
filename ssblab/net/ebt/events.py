"""Events the EBT reducer consumes and effects it asks the shell to carry out (all frozen dataclasses).

Strategy: the shell (``ssblab.replicate``) turns what happens (a connection, a JSON packet, a finished append, a
timer) into one event, calls :func:`ssblab.net.ebt.step`, and executes the returned effects in order. Nothing
here does I/O; ``now`` is the shell's clock in seconds (any monotonic float).

Shell contract:
- effects for one peer are carried out in the order returned (a per-peer outbound queue): a
  :class:`SendMessages` range is written before any later :class:`SendMessage` for the same feed;
- :class:`Append` effects are validated and stored in the order returned, and each one is answered with exactly
  one :class:`Appended` or :class:`AppendFailed` event;
- :class:`Appended` is also sent for messages we publish ourselves, so peers learn of them;
- a stream item for which :func:`~ssblab.net.ebt.notes.is_message_value` holds is a :class:`MessageReceived`,
  any other JSON value a :class:`NotesReceived` (pass it raw: the reducer unwraps ``{"clock": ...}`` and ends the
  stream on a non-object);
- consecutive :class:`SendNotes` for one peer may be merged before writing (later values win), as the JS batches
  notes; :class:`Tick` about once a second is enough (the default timeout is 3 s);
- :func:`~ssblab.net.ebt.state.is_caught_up` can stay False for ever if a peer claims messages it never sends and
  no other peer has them, so a "until caught up" session also needs an overall stall timeout in the shell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Append", "AppendFailed", "Appended", "Block", "EbtRole", "Effect", "EndStream", "Event", "MessageReceived",
    "NotesReceived", "PeerConnected", "PeerDisconnected", "PersistClock", "Replicate", "SendMessage",
    "SendMessages", "SendNotes", "Tick",
]

#: Our side of the connection: the handshake "client" opened ``ebt.replicate`` and waits for the notes of the
#: "server" (the responder), which always speaks first.
EbtRole = Literal["client", "server"]


@dataclass(frozen=True)
class PeerConnected:
    """An ``ebt.replicate`` stream opened; ``remote_clock`` is the clock we persisted for ``peer`` (``{}`` if none).

    ``role`` is *our* role; a ``"server"`` sends its notes at once, a ``"client"`` waits for the server's.
    """

    peer: str
    remote_clock: dict[str, int]
    now: float
    role: EbtRole


@dataclass(frozen=True)
class NotesReceived:
    """``peer`` sent a notes object ``{feed: encoded note}`` (raw values: invalid ones count as -1)."""

    peer: str
    notes: dict[str, int]
    now: float


@dataclass(frozen=True)
class MessageReceived:
    """``peer`` sent a feed message; ``message`` is the value, unvalidated (the shell validates on :class:`Append`)."""

    peer: str
    author: str
    sequence: int
    message: object
    now: float


@dataclass(frozen=True)
class Appended:
    """A message was validated and stored, from any source (a peer, another protocol, local publishing)."""

    author: str
    sequence: int
    message: object
    now: float


@dataclass(frozen=True)
class AppendFailed:
    """The shell rejected a message ``peer`` sent us; that feed is no longer taken from (nor sent to) ``peer``."""

    peer: str
    author: str
    error: str


@dataclass(frozen=True)
class PeerDisconnected:
    """The stream with ``peer`` closed, for any reason."""

    peer: str
    now: float


@dataclass(frozen=True)
class Tick:
    """Timer: lets the reducer move a feed away from a peer that claims more but has sent nothing for a while."""

    now: float


@dataclass(frozen=True)
class Replicate:
    """The scheduler starts (``wanted``) or stops replicating ``feed``."""

    feed: str
    wanted: bool


@dataclass(frozen=True)
class Block:
    """``feed`` is never sent to ``peer`` (``blocked=False`` lifts it).

    When ``feed`` is our own id (``EbtState.initial(local_id=...)``) we block ``peer`` itself: its stream is ended
    and its feed is never replicated.
    """

    feed: str
    peer: str
    blocked: bool = True


Event = (
    PeerConnected | NotesReceived | MessageReceived | Appended | AppendFailed | PeerDisconnected | Tick | Replicate
    | Block
)


@dataclass(frozen=True)
class SendNotes:
    """Write one notes object to ``peer``."""

    peer: str
    notes: dict[str, int]


@dataclass(frozen=True)
class SendMessages:
    """Read ``author``'s messages ``from_sequence..to_sequence`` (inclusive) from the store and send them in order."""

    peer: str
    author: str
    from_sequence: int
    to_sequence: int


@dataclass(frozen=True)
class SendMessage:
    """Forward one message that was just appended (the next one ``peer`` needs)."""

    peer: str
    message: object


@dataclass(frozen=True)
class Append:
    """Validate and store ``message`` received from ``peer``; answer with :class:`Appended` or :class:`AppendFailed`."""

    peer: str
    message: object


@dataclass(frozen=True)
class PersistClock:
    """Store ``clock`` (the sequences we know ``peer`` has) for request skipping on the next connection."""

    peer: str
    clock: dict[str, int]


@dataclass(frozen=True)
class EndStream:
    """Close the ``ebt.replicate`` stream with ``peer`` (we blocked it); a :class:`PeerDisconnected` follows."""

    peer: str
    reason: str


Effect = SendNotes | SendMessages | SendMessage | Append | PersistClock | EndStream
