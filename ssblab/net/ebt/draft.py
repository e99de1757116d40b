"""A copy-on-write working copy of :class:`EbtState` for one reducer step, plus the rules shared by the handlers.

Strategy: a step reads the input state and writes into fresh dicts, copied the first time each is changed (our
clock, the wanted set, blocks, the queue of appends, and per peer its clock and its ``replicating`` map). Notes
are gathered per peer and flushed as one :class:`SendNotes` per peer at the end of the step, after the other
effects, like the JS stream that writes queued messages before the merged notes.

Cost: a step copies the peers map (O(peers)) and, for each peer it touches, that peer's clock and feed map
(O(feeds)). An append that every peer cares about therefore costs O(peers * feeds); fine for the clocks of a
few thousand feeds, and the place to put a persistent map (HAMT) if that ever shows in a profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace

from ssblab.net.ebt.events import Effect, EndStream, SendNotes
from ssblab.net.ebt.notes import encode_note
from ssblab.net.ebt.state import EbtState, FeedRep, PeerState

__all__ = ["Draft"]


class Draft:
    """Mutable view of one step; :meth:`finish` returns the new state and the effects, leaving the input intact."""

    def __init__(self, state: EbtState) -> None:
        self.timeout = state.timeout
        self.local_id = state.local_id
        self.peers: dict[str, PeerState] = dict(state.peers)
        self.effects: list[Effect] = []
        self.notes: dict[str, dict[str, int]] = {}
        self._state = state
        self._clock: dict[str, int] | None = None
        self._wanted: set[str] | None = None
        self._blocks: dict[str, set[str]] | None = None
        self._queued: dict[str, int] | None = None
        self._clocks: dict[str, dict[str, int]] = {}
        self._reps: dict[str, dict[str, FeedRep]] = {}

    # Each top-level field reads through to the input state until the first change copies it.

    @property
    def clock(self) -> Mapping[str, int]:
        return self._state.clock if self._clock is None else self._clock

    @property
    def wanted(self) -> AbstractSet[str]:
        return self._state.wanted if self._wanted is None else self._wanted

    @property
    def blocks(self) -> Mapping[str, AbstractSet[str]]:
        return self._state.blocks if self._blocks is None else self._blocks

    @property
    def queued(self) -> Mapping[str, int]:
        return self._state.queued if self._queued is None else self._queued

    # -- reading -------------------------------------------------------------------------------------------------

    def local(self, feed: str) -> int:
        return self.clock.get(feed, 0)

    def peer_clock(self, peer_id: str) -> Mapping[str, int]:
        return self._clocks[peer_id] if peer_id in self._clocks else self.peers[peer_id].clock

    def reps(self, peer_id: str) -> Mapping[str, FeedRep]:
        """The peer's feed map (empty while the peer is not ready)."""
        return self._reps[peer_id] if peer_id in self._reps else self.peers[peer_id].replicating or {}

    def rep(self, peer_id: str, feed: str) -> FeedRep | None:
        return self.reps(peer_id).get(feed)

    def is_live(self, peer_id: str) -> bool:
        """Connected, past the client's wait for the server's notes, and not ended by us."""
        peer = self.peers.get(peer_id)
        return peer is not None and peer.replicating is not None and not peer.ended

    def shares(self, feed: str, peer_id: str) -> bool:
        """``feed`` is replicated with ``peer_id``: wanted, not blocked for that peer, its author not blocked by us."""
        if feed not in self.wanted or peer_id in self.blocks.get(feed, ()):
            return False
        return self.local_id is None or feed not in self.blocks.get(self.local_id, ())

    def rx_peer(self, feed: str, exclude: str | None = None) -> str | None:
        """The live peer (other than ``exclude``) we receive ``feed`` from, if any."""
        for peer_id in self.peers:
            if peer_id != exclude and self.is_live(peer_id):
                rep = self.rep(peer_id, feed)
                if rep is not None and rep.rx:
                    return peer_id
        return None

    def claims_more(self, peer_id: str, feed: str) -> bool:
        """The live peer says it has more of ``feed`` than we do, and may give it to us."""
        return (
            self.is_live(peer_id) and self.shares(feed, peer_id)
            and self.peer_clock(peer_id).get(feed, 0) > self.local(feed)
        )

    # -- writing -------------------------------------------------------------------------------------------------

    def set_clock(self, feed: str, seq: int) -> None:
        if self._clock is None:
            self._clock = dict(self._state.clock)
        self._clock[feed] = seq

    def set_wanted(self, feed: str, wanted: bool) -> None:
        if self._wanted is None:
            self._wanted = set(self._state.wanted)
        (self._wanted.add if wanted else self._wanted.discard)(feed)

    def set_blocked(self, feed: str, peer_id: str, blocked: bool) -> None:
        if self._blocks is None:
            self._blocks = {key: set(peers) for key, peers in self._state.blocks.items()}
        peers = self._blocks.setdefault(feed, set())
        (peers.add if blocked else peers.discard)(peer_id)

    def set_queued(self, author: str, seq: int | None) -> None:
        """Record the highest sequence handed to the shell for appending (None: nothing pending)."""
        if self._queued is None:
            self._queued = dict(self._state.queued)
        if seq is None:
            self._queued.pop(author, None)
        else:
            self._queued[author] = seq

    def set_peer_seq(self, peer_id: str, feed: str, seq: int) -> None:
        """Record what we now know the peer has of ``feed`` (its clock is copied on the first change)."""
        if peer_id not in self._clocks:
            self._clocks[peer_id] = dict(self.peers[peer_id].clock)
        self._clocks[peer_id][feed] = seq

    def set_rep(self, peer_id: str, feed: str, rep: FeedRep) -> None:
        if peer_id not in self._reps:
            self._reps[peer_id] = dict(self.peers[peer_id].replicating or {})
        self._reps[peer_id][feed] = rep

    def update_peer(self, peer_id: str, **changes: object) -> None:
        self.peers[peer_id] = replace(self.peers[peer_id], **changes)  # type: ignore[arg-type]

    def touch(self, peer_id: str, now: float) -> None:
        """The peer sent something new (or was given a feed) at ``now``: `update_peer` with ``ts``, built directly
        since it happens once per message received (``replace`` costs several times more)."""
        peer = self.peers[peer_id]
        self.peers[peer_id] = PeerState(role=peer.role, clock=peer.clock, replicating=peer.replicating,
                                        heard=peer.heard, ts=now, ended=peer.ended)

    def set_notes(self, peer_id: str, feed: str, seq: int, rx: bool) -> None:
        """Queue the note ``(seq, rx)`` for ``peer_id``; the feed's ``rx`` mode follows what we told the peer."""
        note = encode_note(seq, rx)
        self.notes.setdefault(peer_id, {})[feed] = note
        rep = self.rep(peer_id, feed)
        if rep is not None:
            self.set_rep(peer_id, feed, replace(rep, rx=note != -1 and rx))

    def end(self, peer_id: str, reason: str) -> None:
        """Close the stream with ``peer_id``; it stays in ``peers`` (ended) until its disconnect arrives."""
        self.update_peer(peer_id, ended=True)
        self.effects.append(EndStream(peer_id, reason))

    def assign_receiver(self, feed: str, origin: str | None, now: float) -> None:
        """Ask the next peer after ``origin`` (round robin, JS ``eachFrom``) that claims more of ``feed`` to send it."""
        order = list(self.peers)
        start = order.index(origin) + 1 if origin in order else 0
        for offset in range(len(order)):
            peer_id = order[(start + offset) % len(order)]
            if peer_id != origin and self.claims_more(peer_id, feed):
                known = self.peer_clock(peer_id).get(feed)
                self.set_rep(peer_id, feed, self.rep(peer_id, feed) or FeedRep(sent=known))
                self.set_notes(peer_id, feed, self.local(feed), True)
                self.touch(peer_id, now)
                return

    # -- result --------------------------------------------------------------------------------------------------

    def finish(self) -> tuple[EbtState, list[Effect]]:
        """The new state and the effects: the handlers' effects in order, then one notes object per live peer."""
        for peer_id in self.peers.keys() & (self._clocks.keys() | self._reps.keys()):
            peer = self.peers[peer_id]
            reps = self._reps.get(peer_id, peer.replicating) if peer.replicating is not None else None
            self.peers[peer_id] = replace(peer, clock=self._clocks.get(peer_id, peer.clock), replicating=reps)
        blocks: Mapping[str, frozenset[str]] = self._state.blocks
        if self._blocks is not None:
            blocks = {feed: frozenset(peers) for feed, peers in self._blocks.items() if peers}
        state = EbtState(
            clock=self.clock,
            timeout=self.timeout,
            local_id=self.local_id,
            wanted=frozenset(self.wanted),
            blocks=blocks,
            peers=self.peers,
            queued=self.queued,
        )
        notes = [
            SendNotes(peer_id, notes)
            for peer_id, notes in self.notes.items()
            if peer_id in self.peers and not self.peers[peer_id].ended
        ]
        return state, [*self.effects, *notes]
