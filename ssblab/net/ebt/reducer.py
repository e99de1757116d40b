"""The EBT v3 reducer: ``step(state, event) -> (state, effects)``, ported in behaviour from epidemic-broadcast-trees.

Rules (JS ``events.js`` at v9; the shell's side of the contract is in :mod:`ssblab.net.ebt.events`):

1. Server first. A server sends its notes on connect; a client sends nothing until the server's first notes
   arrive. The first notes on a connection are always sent, even ``{}``.
2. Request skipping (paper A.5). Those first notes name only the wanted feeds whose sequence in the clock we
   persisted for that peer differs from ours (a feed we have nothing of is always named; one the peer marked -1
   never is). Either side naming a feed makes the other answer with its own sequence, so a change is not missed.
3. Eager/lazy. A note's receive flag asks the peer to send (``tx`` on their side); we ask only one peer per feed
   (``rx``), the others stay lazy and just tell us how far they are. A lazy peer that claims more than we have
   is switched to eager when no other peer is, or when it is further ahead than the current one. A peer's
   latest note is its clock, even when lower than before (it may have lost data; JS v9 ``fixSeq``).
4. Already-seen. A message we already have switches that peer to lazy for the feed.
5. Timeouts. On :class:`Tick`, a receiving peer silent for ``timeout`` seconds while another claims more is
   made lazy and the next such peer (round robin) eager. A feed that nobody sends while some peer claims more
   also gets a receiver there.
6. Blocks. A blocked feed is answered with -1 and never sent to that peer; a write error blocks the feed for the
   peer that sent it; blocking a peer itself (``Block(local_id, peer)``) ends its stream and stops its feed.

Deviations from the JS (each a fix of behaviour the JS leaves stuck or wrong): disconnecting a receiving peer
moves its feeds to another peer at once; the Tick gap-fill of rule 5; an unfollow tells peers -1 (the JS skips
it); the round-robin test compares clocks as intended (``(a || 0) > b``); messages already handed to the shell
for appending are not appended twice, and messages that skip a sequence are dropped instead of appended;
an ``Appended`` further ahead than ``clock + 1`` is taken as the truth (the store has validated up to there),
where the JS ignores it and would keep asking for what is already stored.
Unblocking only changes the state: it takes effect with the peer's next notes or connection.

Cost: the Tick gap-fill looks at every wanted feed (O(feeds * peers) per tick); see :mod:`.draft` for the copying.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from ssblab.net.ebt.draft import Draft
from ssblab.net.ebt.events import (
    Append,
    Appended,
    AppendFailed,
    Block,
    Effect,
    EndStream,
    Event,
    MessageReceived,
    NotesReceived,
    PeerConnected,
    PeerDisconnected,
    PersistClock,
    Replicate,
    SendMessage,
    SendMessages,
    Tick,
)
from ssblab.net.ebt.notes import Note, decode_note, notes_from_value
from ssblab.net.ebt.state import EbtState, FeedRep, PeerState
from ssblab.net.errors import LocalProtocolError

__all__ = ["step", "step_all"]


def step(state: EbtState, event: Event) -> tuple[EbtState, list[Effect]]:
    """Apply one event; return the new state and the effects for the shell, in order. ``state`` is not changed.

    Raises:
        LocalProtocolError: the shell broke the contract (a second ``PeerConnected`` for a connected peer, an
            unknown role, an object that is not an event). Bad input from a peer never raises.
    """
    return step_all(state, (event,))


def step_all(state: EbtState, events: Iterable[Event]) -> tuple[EbtState, list[Effect]]:
    """Apply ``events`` in order as one step: the state `step` would reach one event at a time, and the same
    effects, except that each peer's notes come once, merged, after the others (as the JS stream merges the
    notes it has queued). One working copy for the lot: a burst of messages costs one copy of the clocks, not
    one per message.

    Raises:
        LocalProtocolError: as `step`; the events before the bad one are lost with the step.
    """
    draft = Draft(state)
    for event in events:
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise LocalProtocolError(f"ebt step: {type(event).__name__} is not an EBT event")
        handler(draft, event)
    return draft.finish()


def _clean_clock(clock: object) -> dict[str, int]:
    """A persisted clock with only integer sequences >= -1 (storage may hand back anything)."""
    if not isinstance(clock, dict):
        return {}
    return {
        feed: seq for feed, seq in clock.items()
        if isinstance(feed, str) and isinstance(seq, int) and not isinstance(seq, bool) and seq >= -1
    }


def _on_connected(d: Draft, ev: PeerConnected) -> None:
    if ev.peer in d.peers:
        raise LocalProtocolError(f"ebt PeerConnected: {ev.peer} is already connected (disconnect it first)")
    if ev.role not in ("client", "server"):
        raise LocalProtocolError(f"ebt PeerConnected: role must be 'client' or 'server', got {ev.role!r}")
    if d.local_id is not None and ev.peer in d.blocks.get(d.local_id, ()):
        d.effects.append(EndStream(ev.peer, "blocked"))
        return
    d.peers[ev.peer] = PeerState(role=ev.role, clock=_clean_clock(ev.remote_clock), ts=ev.now)
    if ev.role == "server":
        _open(d, ev.peer)


def _open(d: Draft, peer_id: str) -> None:
    """Rules 1 and 2: the first notes (always sent), naming the wanted feeds that changed since last time."""
    d.update_peer(peer_id, replicating={})
    d.notes.setdefault(peer_id, {})
    for feed in sorted(d.wanted):
        if d.shares(feed, peer_id) and _is_news(d, peer_id, feed):
            rx = d.rx_peer(feed, exclude=peer_id) is None
            d.set_rep(peer_id, feed, FeedRep(rx=rx, sent=None))
            d.set_notes(peer_id, feed, d.local(feed), rx)


def _is_news(d: Draft, peer_id: str, feed: str) -> bool:
    """Request skipping: mention ``feed`` unless the peer's known sequence equals ours or it does not replicate it.

    A feed we have nothing of is always mentioned (JS v9: the peer may get it later, from someone else).
    """
    known = d.peer_clock(peer_id).get(feed, 0)
    return known != -1 and (feed not in d.clock or known != d.clock[feed])


def _on_notes(d: Draft, ev: NotesReceived) -> None:
    peer = d.peers.get(ev.peer)
    if peer is None or peer.ended:
        return
    clock = notes_from_value(ev.notes)
    if clock is None:
        d.end(ev.peer, "ebt: notes must be a JSON object")
        return
    if peer.replicating is None:
        _open(d, ev.peer)  # we are the client and these are the server's first notes
    d.update_peer(ev.peer, heard=True)
    for feed, raw in clock.items():
        _on_note(d, ev.peer, feed, decode_note(raw), ev.now)


def _on_note(d: Draft, peer_id: str, feed: str, note: Note, now: float) -> None:
    seq = note.sequence  # the latest note wins, lower or -1 included (JS v9 fixSeq)
    d.set_peer_seq(peer_id, feed, seq)
    local = d.local(feed)
    rep = d.rep(peer_id, feed)
    if not d.shares(feed, peer_id):
        if rep is None:
            d.set_notes(peer_id, feed, -1, False)
        d.set_rep(peer_id, feed, FeedRep(rx=False, tx=False, sent=-1))
        return
    other = d.rx_peer(feed, exclude=peer_id)
    if rep is None:
        d.set_rep(peer_id, feed, FeedRep(rx=False, tx=True, sent=seq))
        d.set_notes(peer_id, feed, local, local < seq and other is None)
    elif not rep.rx and seq > local and (other is None or seq > d.peer_clock(other).get(feed, 0)):
        d.touch(peer_id, now)
        d.set_notes(peer_id, feed, local, True)
        if other is not None:
            d.set_notes(other, feed, local, False)  # the new peer is further ahead: it takes over
    rep = replace(d.rep(peer_id, feed) or FeedRep(), tx=note.receive, sent=seq)
    d.set_rep(peer_id, feed, rep)
    if local > seq:
        if note.receive:
            _send_range(d, peer_id, feed, seq + 1, local)
        elif note.replicate:
            d.set_notes(peer_id, feed, local, rep.rx)


def _send_range(d: Draft, peer_id: str, feed: str, first: int, last: int) -> None:
    d.effects.append(SendMessages(peer_id, feed, first, last))
    rep = d.rep(peer_id, feed)
    d.set_rep(peer_id, feed, replace(rep or FeedRep(tx=True), sent=last))


def _on_message(d: Draft, ev: MessageReceived) -> None:
    seq = ev.sequence
    if not isinstance(ev.author, str) or isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        return  # not a message (the shell's is_message_value should not have let it through)
    rep = d.rep(ev.peer, ev.author) if d.is_live(ev.peer) else None
    if rep is None:
        return  # not a feed we talk about with this peer (the JS ignores these too)
    known = d.peer_clock(ev.peer).get(ev.author)
    d.set_peer_seq(ev.peer, ev.author, seq if known is None else max(known, seq))
    d.set_rep(ev.peer, ev.author, FeedRep(rep.rx, rep.tx, seq if rep.sent is None else max(rep.sent, seq)))
    local = d.local(ev.author)
    if seq <= local:
        if rep.rx:
            d.set_notes(ev.peer, ev.author, local, False)  # rule 4: a duplicate, this peer need not send it
        return
    pending = max(local, d.queued.get(ev.author, local))
    if seq != pending + 1 or not d.shares(ev.author, ev.peer):
        return  # on its way to the store already, or a gap the shell could not validate
    d.touch(ev.peer, ev.now)
    d.set_queued(ev.author, seq)
    d.effects.append(Append(ev.peer, ev.message))


def _on_appended(d: Draft, ev: Appended) -> None:
    author, seq = ev.author, ev.sequence
    current = d.clock.get(author, 0)
    if author in d.queued and d.queued[author] <= max(current, seq):
        d.set_queued(author, None)  # nothing of ours is still on its way to the store
    if seq <= current:
        return  # stale: we already count it (the store may learn of a message twice)
    d.set_clock(author, seq)
    for peer_id in list(d.peers):
        if d.is_live(peer_id) and d.shares(author, peer_id):
            _offer(d, peer_id, author, seq, ev.message)


def _offer(d: Draft, peer_id: str, author: str, seq: int, message: object) -> None:
    """Push a new message to a peer that wants it next, or tell a lazy peer we are ahead."""
    known = d.peer_clock(peer_id).get(author)
    rep = d.rep(peer_id, author)
    if rep is not None and rep.tx and rep.sent is not None and rep.sent < seq and known is not None and seq > known:
        if rep.sent == seq - 1:
            d.effects.append(SendMessage(peer_id, message))
            d.set_rep(peer_id, author, FeedRep(rep.rx, rep.tx, seq))  # not replace(): once per message
        else:  # our clock jumped (see Appended): send the whole gap from the store
            _send_range(d, peer_id, author, rep.sent + 1, seq)
        return
    ahead = known is None or (known != -1 and seq > known)
    interested = (not rep.tx and rep.sent is not None) if rep is not None else author in d.wanted
    if ahead and interested:
        d.set_notes(peer_id, author, seq, False)


def _on_append_failed(d: Draft, ev: AppendFailed) -> None:
    """The JS shell blocks the feed for the peer that sent a message failing validation."""
    d.set_queued(ev.author, None)
    _block_feed(d, ev.author, ev.peer)


def _block_feed(d: Draft, feed: str, peer_id: str) -> None:
    d.set_blocked(feed, peer_id, True)
    if d.is_live(peer_id) and d.rep(peer_id, feed) is not None:
        d.set_notes(peer_id, feed, -1, False)


def _on_block(d: Draft, ev: Block) -> None:
    if not ev.blocked:
        d.set_blocked(ev.feed, ev.peer, False)  # takes effect with the next notes or connection
        return
    _block_feed(d, ev.feed, ev.peer)
    if d.local_id is None or ev.feed != d.local_id:
        return
    # we block the peer itself: end its stream, and its feed is replicated with nobody
    if ev.peer in d.peers and not d.peers[ev.peer].ended:
        d.end(ev.peer, "blocked")
    for peer_id in list(d.peers):
        if d.is_live(peer_id) and d.rep(peer_id, ev.peer) is not None:
            d.set_notes(peer_id, ev.peer, -1, False)


def _on_replicate(d: Draft, ev: Replicate) -> None:
    if (ev.feed in d.wanted) == ev.wanted:
        return
    d.set_wanted(ev.feed, ev.wanted)
    for peer_id in list(d.peers):
        if not d.is_live(peer_id):
            continue
        if d.peer_clock(peer_id).get(ev.feed) == -1 or peer_id in d.blocks.get(ev.feed, ()):
            continue
        if not ev.wanted:
            if d.rep(peer_id, ev.feed) is not None:
                d.set_notes(peer_id, ev.feed, -1, False)
        elif d.shares(ev.feed, peer_id) and _is_news(d, peer_id, ev.feed):
            rx = d.rx_peer(ev.feed) is None
            d.set_rep(peer_id, ev.feed, FeedRep(rx=rx, sent=d.peer_clock(peer_id).get(ev.feed)))
            d.set_notes(peer_id, ev.feed, d.local(ev.feed), rx)


def _on_disconnected(d: Draft, ev: PeerDisconnected) -> None:
    if ev.peer not in d.peers:
        return
    clock = dict(d.peer_clock(ev.peer))
    receiving = [feed for feed, rep in d.reps(ev.peer).items() if rep.rx]
    del d.peers[ev.peer]
    d.effects.append(PersistClock(ev.peer, clock))
    for feed in receiving:
        d.assign_receiver(feed, None, ev.now)


def _on_tick(d: Draft, ev: Tick) -> None:
    """Rule 5: move feeds away from silent receiving peers, and find a receiver for feeds nobody sends."""
    moves: dict[str, str | None] = {}
    for peer_id, peer in list(d.peers.items()):
        if not d.is_live(peer_id) or peer.ts + d.timeout >= ev.now:
            continue
        for feed, rep in list(d.reps(peer_id).items()):
            if rep.rx and any(d.claims_more(other, feed) for other in d.peers if other != peer_id):
                moves[feed] = peer_id
                d.set_notes(peer_id, feed, d.local(feed), False)
    for feed in sorted(d.wanted):
        if feed not in moves and d.rx_peer(feed) is None and any(d.claims_more(p, feed) for p in d.peers):
            moves[feed] = None
    for feed, origin in moves.items():
        d.assign_receiver(feed, origin, ev.now)


_HANDLERS: dict[type, Callable[[Draft, Any], None]] = {
    PeerConnected: _on_connected,
    NotesReceived: _on_notes,
    MessageReceived: _on_message,
    Appended: _on_appended,
    AppendFailed: _on_append_failed,
    Block: _on_block,
    Replicate: _on_replicate,
    PeerDisconnected: _on_disconnected,
    Tick: _on_tick,
}
