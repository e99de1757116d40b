"""The EBT replication state: our clock, the feeds we want, blocks, and per-peer, per-feed eager/lazy modes.

Strategy (epidemic-broadcast-trees ``events.js``): for every connected peer and every feed both of us have
mentioned, a :class:`FeedRep` records whether we asked that peer to send the feed (``rx``: eager towards us),
whether it asked us (``tx``), and how far we have sent it (``sent``). ``PeerState.clock`` is what we *know* the
peer has (its notes and the messages it sent); it is persisted on disconnect for request skipping.

Invariants (checked by the tests after every step):
- at most one connected peer has ``rx`` for a feed (vector-clock partitioning), so each message arrives once;
- states are immutable: the reducer builds new dicts for what it changes and never touches its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ssblab.net.ebt.events import EbtRole

__all__ = ["EbtState", "FeedRep", "PeerState", "is_caught_up", "receiving_peer"]

@dataclass(frozen=True)
class FeedRep:
    """One feed on one connection: ``rx`` we asked them to send, ``tx`` they asked us, ``sent`` their known seq.

    ``sent`` is None until the peer has told us its sequence for the feed (then we may send it lazy notes).
    """

    rx: bool = False
    tx: bool = False
    sent: int | None = None


@dataclass(frozen=True)
class PeerState:
    """One connected peer.

    ``replicating`` is None while we are the client and the server's first notes have not arrived; ``heard`` is
    True once any notes came from the peer; ``ts`` is when it last sent us something new (or was given a feed to
    send); ``ended`` marks a stream we closed (blocked peer) whose disconnect has not arrived yet.
    """

    role: EbtRole
    clock: Mapping[str, int] = field(default_factory=dict)
    replicating: Mapping[str, FeedRep] | None = None
    heard: bool = False
    ts: float = 0.0
    ended: bool = False


@dataclass(frozen=True)
class EbtState:
    """The whole reducer state; build it with :meth:`initial` and advance it with :func:`ssblab.net.ebt.step`.

    ``queued`` holds, per author, the highest sequence handed to the shell in an :class:`Append` and not yet
    confirmed, so a message that is already on its way to the store is not appended twice.
    """

    clock: Mapping[str, int]
    timeout: float = 3.0
    local_id: str | None = None
    wanted: frozenset[str] = frozenset()
    blocks: Mapping[str, frozenset[str]] = field(default_factory=dict)
    peers: Mapping[str, PeerState] = field(default_factory=dict)
    queued: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def initial(cls, local_clock: Mapping[str, int], timeout: float = 3.0, local_id: str | None = None) -> EbtState:
        """A state with our stored clock ``{feed: latest sequence}`` and no peers or wanted feeds yet.

        ``timeout`` (seconds) is how long a receiving peer may stay silent before the feed moves to another peer
        that claims more; ``local_id`` (our feed id) lets ``Block(local_id, peer)`` mean "we block this peer".

        Examples:
            >>> EbtState.initial({"@a": 2}).clock
            {'@a': 2}
        """
        return cls(clock=dict(local_clock), timeout=timeout, local_id=local_id)


def receiving_peer(state: EbtState, feed: str) -> str | None:
    """The connected peer we currently receive ``feed`` from eagerly, if any."""
    for peer_id, peer in state.peers.items():
        rep = (peer.replicating or {}).get(feed)
        if rep is not None and rep.rx and not peer.ended:
            return peer_id
    return None


def _shares(state: EbtState, feed: str, peer_id: str) -> bool:
    """True if ``feed`` is replicated with ``peer_id`` at all (wanted, not blocked for it, not blocked by us)."""
    if feed not in state.wanted or peer_id in state.blocks.get(feed, ()):
        return False
    return state.local_id is None or feed not in state.blocks.get(state.local_id, ())


def is_caught_up(state: EbtState, peer_id: str) -> bool:
    """True when a "replicate until caught up" session with ``peer_id`` may end.

    That is: the peer's notes have arrived, it claims nothing newer than we have for any feed we replicate with
    it, nothing is waiting to be appended, and every feed it asked for has been sent up to our sequence.
    Unknown peers are not caught up.
    """
    peer = state.peers.get(peer_id)
    if peer is None or peer.replicating is None or not peer.heard:
        return False
    if any(seq > state.clock.get(author, 0) for author, seq in state.queued.items()):
        return False
    for feed, rep in peer.replicating.items():
        if not _shares(state, feed, peer_id):
            continue
        local = state.clock.get(feed, 0)
        if peer.clock.get(feed, 0) > local or (rep.tx and (rep.sent or 0) < local):
            return False
    return True
