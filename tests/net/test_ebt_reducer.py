"""EBT reducer scenarios: event sequences with the full state and the effects asserted after each step.

Ported in intent from epidemic-broadcast-trees ``test/index.js``, ``block.js``, ``timeout.js``, ``multiple.js``
and ``client.js`` (names in the test docstrings); ``partial.js`` runs in the simulator (``ebt_sim.py``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ssblab.net.ebt import (
    Append,
    Appended,
    AppendFailed,
    Block,
    EbtState,
    Effect,
    EndStream,
    Event,
    FeedRep,
    MessageReceived,
    NotesReceived,
    PeerConnected,
    PeerDisconnected,
    PeerState,
    PersistClock,
    Replicate,
    SendMessage,
    SendMessages,
    SendNotes,
    Tick,
    encode_note,
    is_caught_up,
    receiving_peer,
    step,
    step_all,
)
from ssblab.net.errors import LocalProtocolError

R = FeedRep


def n(seq: int, rx: bool) -> int:
    return encode_note(seq, rx)


def msg(author: str, seq: int) -> dict[str, Any]:
    return {"author": author, "sequence": seq, "content": {"type": "test"}}


def run(state: EbtState, event: Event) -> tuple[EbtState, list[Effect]]:
    """``step``, checking on the way that the input state is left exactly as it was."""
    before = copy.deepcopy(state)
    new, effects = step(state, event)
    assert state == before, "step mutated its input state"
    return new, effects


def server(clock: dict[str, int] | None = None, reps: dict[str, FeedRep] | None = None, **kw: Any) -> PeerState:
    return PeerState(role="server", clock=clock or {}, replicating=reps if reps is not None else {}, **kw)


def with_wanted(clock: dict[str, int], feeds: list[str], **kw: Any) -> EbtState:
    state = EbtState.initial(clock, **kw)
    for feed in feeds:
        state, _ = run(state, Replicate(feed, True))
    return state


def test_connect_follow_notes_receive_append() -> None:
    """index.js 'initialize, connect to new peer'."""
    s, fx = run(EbtState.initial({}), PeerConnected("alice", {}, 0.0, "server"))
    assert fx == [SendNotes("alice", {})]  # the first notes are always sent, even empty
    assert s == EbtState(clock={}, peers={"alice": server()})

    s, fx = run(s, Replicate("alice", True))
    assert fx == [SendNotes("alice", {"alice": n(0, True)})]
    assert s == EbtState(clock={}, wanted=frozenset({"alice"}), peers={"alice": server(reps={"alice": R(rx=True)})})

    s, fx = run(s, NotesReceived("alice", {"alice": n(2, True)}, 0.1))
    assert fx == []
    peer = server({"alice": 2}, {"alice": R(rx=True, tx=True, sent=2)}, heard=True)
    assert s == EbtState(clock={}, wanted=frozenset({"alice"}), peers={"alice": peer})

    s, fx = run(s, MessageReceived("alice", "alice", 1, msg("alice", 1), 0.2))
    assert fx == [Append("alice", msg("alice", 1))]
    peer = server({"alice": 2}, {"alice": R(rx=True, tx=True, sent=2)}, heard=True, ts=0.2)
    assert s == EbtState(clock={}, wanted=frozenset({"alice"}), peers={"alice": peer}, queued={"alice": 1})

    s, fx = run(s, Appended("alice", 1, msg("alice", 1), 0.3))
    assert fx == []
    assert s == EbtState(clock={"alice": 1}, wanted=frozenset({"alice"}), peers={"alice": peer})

    for seq in (2, 3):
        s, fx = run(s, MessageReceived("alice", "alice", seq, msg("alice", seq), 0.4))
        assert fx == [Append("alice", msg("alice", seq))]
        s, fx = run(s, Appended("alice", seq, msg("alice", seq), 0.5))
        assert fx == []
    peer = server({"alice": 3}, {"alice": R(rx=True, tx=True, sent=3)}, heard=True, ts=0.4)
    assert s == EbtState(clock={"alice": 3}, wanted=frozenset({"alice"}), peers={"alice": peer})
    assert is_caught_up(s, "alice")


def test_append_sends_to_eager_peer_and_notes_lazy_peer() -> None:
    """index.js 'connect to two peers, append message one send, one note'."""
    s = EbtState(
        clock={"alice": 1},
        wanted=frozenset({"alice"}),
        peers={
            "bob": server({"alice": 1}, {"alice": R(rx=True, tx=True, sent=1)}),
            "charles": server({"alice": 1}, {"alice": R(rx=False, tx=False, sent=1)}),
        },
    )
    s, fx = run(s, Appended("alice", 2, msg("alice", 2), 1.0))
    assert fx == [SendMessage("bob", msg("alice", 2)), SendNotes("charles", {"alice": n(2, False)})]
    assert s == EbtState(
        clock={"alice": 2},
        wanted=frozenset({"alice"}),
        peers={
            "bob": server({"alice": 1}, {"alice": R(rx=True, tx=True, sent=2)}),
            "charles": server({"alice": 1}, {"alice": R(rx=False, tx=False, sent=1)}),
        },
    )


@pytest.mark.parametrize("follow_first", [False, True])
def test_feed_we_do_not_have_is_always_requested(follow_first: bool) -> None:
    """index.js 'replicate a hops=2 peer that my hops=1 friend still doesnt have' (1) and (2)."""
    s = EbtState.initial({})
    connect = PeerConnected("alice", {"alice": 0, "bob": 0}, 0.0, "server")
    events: list[Event] = [Replicate("alice", True), Replicate("bob", True)]
    events = [*events, connect] if follow_first else [connect, *events]
    sent: dict[str, int] = {}
    for event in events:
        s, fx = run(s, event)
        for effect in fx:
            assert isinstance(effect, SendNotes)
            sent.update(effect.notes)
    assert sent == {"alice": n(0, True), "bob": n(0, True)}
    known = None if follow_first else 0  # opened from the stored clock, or followed with the clock known
    assert s.peers["alice"].replicating == {"alice": R(rx=True, sent=known), "bob": R(rx=True, sent=known)}


def test_reply_to_any_clock_they_send() -> None:
    """index.js 'reply to any clock they send, 1' and '2' (request skipping on the stored clock)."""
    s = with_wanted({"alice": 3, "bob": 2, "charles": 3}, ["alice", "bob", "charles"])
    s, fx = run(s, PeerConnected("bob", {"alice": 3, "charles": 1}, 0.0, "server"))
    assert fx == [SendNotes("bob", {"bob": n(2, True), "charles": n(3, True)})]  # alice: unchanged, skipped
    assert s.peers["bob"] == server(
        {"alice": 3, "charles": 1}, {"bob": R(rx=True), "charles": R(rx=True)}
    )

    s, fx = run(s, NotesReceived("bob", {"alice": n(3, True), "darlene": n(4, True)}, 0.1))
    assert fx == [SendNotes("bob", {"alice": n(3, False), "darlene": -1})]
    assert s.peers["bob"] == server(
        {"alice": 3, "charles": 1, "darlene": 4},
        {
            "bob": R(rx=True),
            "charles": R(rx=True),
            "alice": R(rx=False, tx=True, sent=3),
            "darlene": R(rx=False, tx=False, sent=-1),
        },
        heard=True,
    )

    s, fx = run(s, Replicate("darlene", True))  # peer has 4 of it, we have none: ask (rx)
    assert fx == [SendNotes("bob", {"darlene": n(0, True)})]
    assert s.peers["bob"].replicating["darlene"] == R(rx=True, sent=4)  # type: ignore[index]


def test_append_when_not_in_tx_mode() -> None:
    """index.js 'append when not in TX mode': lazy notes, then they ask and we send."""
    s = with_wanted({"alice": 3, "bob": 2}, ["alice", "bob"])
    s, fx = run(s, PeerConnected("bob", {"alice": 3, "charles": 1}, 0.0, "server"))
    assert fx == [SendNotes("bob", {"bob": n(2, True)})]

    s, fx = run(s, NotesReceived("bob", {"alice": n(3, False)}, 0.1))
    assert fx == [SendNotes("bob", {"alice": n(3, False)})]
    assert s.peers["bob"].replicating == {"bob": R(rx=True), "alice": R(rx=False, tx=False, sent=3)}

    s, fx = run(s, Appended("alice", 4, msg("alice", 4), 0.2))
    assert fx == [SendNotes("bob", {"alice": n(4, False)})]
    assert s.peers["bob"].replicating == {"bob": R(rx=True), "alice": R(rx=False, tx=False, sent=3)}

    s, fx = run(s, NotesReceived("bob", {"alice": n(3, True)}, 0.3))
    assert fx == [SendMessages("bob", "alice", 4, 4)]
    assert s.peers["bob"].replicating == {"bob": R(rx=True), "alice": R(rx=False, tx=True, sent=4)}
    assert s.clock == {"alice": 4, "bob": 2}


def test_lazy_peer_ahead_is_switched_to_eager() -> None:
    """index.js 'note when not in RX mode'."""
    s = EbtState(
        clock={"alice": 3, "bob": 2},
        wanted=frozenset({"alice", "bob"}),
        peers={"bob": server({"alice": 3, "bob": 2}, {"alice": R(rx=False, tx=False, sent=3)})},
    )
    s, fx = run(s, NotesReceived("bob", {"alice": n(5, False)}, 7.0))
    assert fx == [SendNotes("bob", {"alice": n(3, True)})]
    assert s.peers["bob"] == server(
        {"alice": 5, "bob": 2}, {"alice": R(rx=True, tx=False, sent=5)}, heard=True, ts=7.0
    )


def test_non_integer_note_counts_as_do_not_replicate() -> None:
    """index.js 'note when value is not integer'."""
    s = with_wanted({"alice": 3, "bob": 2}, ["alice", "bob"])
    s, fx = run(s, PeerConnected("bob", {}, 0.0, "server"))
    assert fx == [SendNotes("bob", {"alice": n(3, True), "bob": n(2, True)})]
    s, fx = run(s, NotesReceived("bob", {"alice": True, "bob": 4.5}, 0.1))  # type: ignore[dict-item]
    assert fx == []
    assert s.peers["bob"].clock == {"alice": -1, "bob": -1}
    assert s.peers["bob"].replicating == {"alice": R(rx=True, sent=-1), "bob": R(rx=True, sent=-1)}


def test_in_sync_sends_empty_clock_then_notes_new_message() -> None:
    """index.js 'test sends empty clock if nothing needed' and 'connects in sync then another message'."""
    s = with_wanted({"alice": 3, "bob": 2}, ["alice", "bob"])
    s, fx = run(s, PeerConnected("bob", {"alice": 3, "bob": 2}, 0.0, "server"))
    assert fx == [SendNotes("bob", {})]
    s, fx = run(s, NotesReceived("bob", {}, 0.1))
    assert fx == []
    assert s.peers["bob"] == server({"alice": 3, "bob": 2}, heard=True)
    assert is_caught_up(s, "bob")

    s, fx = run(s, Appended("alice", 4, msg("alice", 4), 0.2))
    assert fx == [SendNotes("bob", {"alice": n(4, False)})]
    assert s.peers["bob"] == server({"alice": 3, "bob": 2}, heard=True)


def test_unfollowed_feeds_are_answered_with_minus_one() -> None:
    """index.js 'unfollow' and 'remember clock of unfollow', plus an unfollow of a wanted feed."""
    s, fx = run(EbtState.initial({"alice": 3, "bob": 2}), PeerConnected("bob", {}, 0.0, "server"))
    assert fx == [SendNotes("bob", {})]
    s, fx = run(s, NotesReceived("bob", {"alice": n(3, True), "bob": n(2, True)}, 0.1))
    assert fx == [SendNotes("bob", {"alice": -1, "bob": -1})]
    s, fx = run(s, Replicate("alice", False))
    assert fx == []
    s, fx = run(s, NotesReceived("bob", {"charles": -1}, 0.2))
    assert fx == [SendNotes("bob", {"charles": -1})]
    s, fx = run(s, NotesReceived("bob", {"charles": -1}, 0.3))
    assert fx == []  # already answered

    s = with_wanted({"alice": 3, "bob": 2}, ["alice"])
    s, fx = run(s, PeerConnected("bob", {"alice": -1}, 0.0, "server"))
    assert fx == [SendNotes("bob", {})]  # the peer does not replicate alice: skip it
    assert s.peers["bob"].clock == {"alice": -1}

    s = with_wanted({"alice": 3}, ["alice"])
    s, _ = run(s, PeerConnected("bob", {}, 0.0, "server"))
    s, fx = run(s, Replicate("alice", False))
    assert fx == [SendNotes("bob", {"alice": -1})]
    assert s.wanted == frozenset()
    assert s.peers["bob"].replicating == {"alice": R(rx=False)}


def test_notes_wrapped_in_clock_object() -> None:
    """index.js 'notes can be passed inside {clock:{}} object'."""
    s = with_wanted({"alice": 3, "bob": 2}, ["alice"])
    s, _ = run(s, PeerConnected("bob", {"alice": -1}, 0.0, "server"))
    s, _ = run(s, NotesReceived("bob", {"clock": {"bob": n(4, True)}}, 0.1))  # type: ignore[dict-item]
    assert s.peers["bob"].clock == {"alice": -1, "bob": 4}


def test_client_waits_for_server_notes() -> None:
    """client.js: the client sends nothing until the server's notes, then always answers (even with {})."""
    s = with_wanted({"alice": 3}, ["alice"])
    s, fx = run(s, PeerConnected("srv", {"alice": 3}, 0.0, "client"))
    assert fx == []
    assert s.peers["srv"] == PeerState(role="client", clock={"alice": 3}, replicating=None)
    assert not is_caught_up(s, "srv")
    s, fx = run(s, Appended("alice", 4, msg("alice", 4), 0.1))
    assert fx == []  # still waiting: nothing goes to the server yet
    s, fx = run(s, NotesReceived("srv", {}, 0.2))
    assert fx == [SendNotes("srv", {"alice": n(4, True)})]
    assert s.peers["srv"] == PeerState(
        role="client", clock={"alice": 3}, replicating={"alice": R(rx=True)}, heard=True
    )

    s = with_wanted({"alice": 3}, ["alice"])
    s, _ = run(s, PeerConnected("srv", {"alice": 3}, 0.0, "client"))
    s, fx = run(s, NotesReceived("srv", {}, 0.2))
    assert fx == [SendNotes("srv", {})]


def test_blocks() -> None:
    """block.js 'blocks' and index.js 'test blocks while connected'."""
    s = with_wanted({"alice": 3, "charles": 3, "dawn": 3}, ["alice", "charles", "dawn"], local_id="alice")
    s, _ = run(s, Block("alice", "bob"))
    assert s.blocks == {"alice": frozenset({"bob"})}
    s, _ = run(s, Block("alice", "bob", blocked=False))
    assert s.blocks == {}
    s, _ = run(s, Block("alice", "bob"))
    s, _ = run(s, Block("charles", "dawn"))

    s, fx = run(s, PeerConnected("bob", {}, 0.0, "server"))
    assert fx == [EndStream("bob", "blocked")]  # we block bob: no replication with him at all
    assert s.peers == {}

    s, fx = run(s, PeerConnected("dawn", {}, 0.0, "server"))
    assert fx == [SendNotes("dawn", {"alice": n(3, True), "dawn": n(3, True)})]  # charles blocked dawn
    s, fx = run(s, NotesReceived("dawn", {"alice": n(2, True), "dawn": n(2, True), "charles": n(1, True)}, 0.1))
    assert fx == [
        SendMessages("dawn", "alice", 3, 3),
        SendMessages("dawn", "dawn", 3, 3),
        SendNotes("dawn", {"charles": -1}),
    ]
    assert s.peers["dawn"].replicating == {
        "alice": R(rx=True, tx=True, sent=3),
        "dawn": R(rx=True, tx=True, sent=3),
        "charles": R(rx=False, tx=False, sent=-1),
    }

    s, fx = run(s, Block("alice", "dawn"))  # now we block dawn herself while connected
    assert fx == [EndStream("dawn", "blocked")]
    assert s.peers["dawn"].ended
    s, fx = run(s, MessageReceived("dawn", "dawn", 4, msg("dawn", 4), 0.2))
    assert fx == []  # nothing more is taken from an ended stream
    s, fx = run(s, PeerDisconnected("dawn", 0.3))
    assert fx == [PersistClock("dawn", {"alice": 2, "dawn": 2, "charles": 1})]
    assert s.peers == {}


def _three_peer_stall(our_bob: int) -> EbtState:
    return EbtState(
        clock={"bob": our_bob, "charles": 6, "dawn": 3},
        timeout=1.0,
        local_id="alice",
        wanted=frozenset({"bob"}),
        peers={
            "bob": server({"bob": 7}, {"bob": R(rx=True, sent=-1)}, ts=3.0),
            "charles": server({"bob": 10}, {"bob": R(rx=False, sent=-1)}),
            "dawn": server({"bob": 9}, {"bob": R(rx=False, sent=-1)}),
        },
    )


def test_timeout_switches_round_robin() -> None:
    """timeout.js 'switch peers if timeout exceeded'."""
    s = _three_peer_stall(5)
    s, fx = run(s, Tick(5.0))
    assert fx == [SendNotes("bob", {"bob": n(5, False)}), SendNotes("charles", {"bob": n(5, True)})]
    assert s.peers["charles"] == server({"bob": 10}, {"bob": R(rx=True, sent=-1)}, ts=5.0)
    assert s.peers["bob"] == server({"bob": 7}, {"bob": R(rx=False, sent=-1)}, ts=3.0)
    s, _ = run(s, Tick(5.5))
    assert receiving_peer(s, "bob") == "charles"  # not silent for long enough yet
    s, _ = run(s, Tick(10.0))
    assert receiving_peer(s, "bob") == "dawn"
    s, _ = run(s, Tick(15.0))
    assert receiving_peer(s, "bob") == "bob"


def test_timeout_skips_peers_that_claim_nothing_new() -> None:
    """timeout.js 'if up to latest message by peer, switch if another peer claims newer'.

    The JS compares ``peer.clock[feed] || 0 > ...`` (a precedence slip that accepts any peer); here the next
    receiver must claim more than we have, so bob (at our 7) is passed over for charles.
    """
    s = _three_peer_stall(7)
    s, _ = run(s, Tick(5.0))
    assert receiving_peer(s, "bob") == "charles"
    s, _ = run(s, Tick(10.0))
    assert receiving_peer(s, "bob") == "dawn"
    s, _ = run(s, Tick(15.0))
    assert receiving_peer(s, "bob") == "charles"


def test_only_one_peer_receives_each_feed() -> None:
    """multiple.js 'if connects to multiple peers, should replicate a feed from only one'."""
    s = with_wanted({"alice": 3, "bob": 2, "charles": 5}, ["alice", "bob", "charles"], local_id="alice")
    sent: dict[str, dict[str, int]] = {"bob": {}, "charles": {}}
    for event in [
        PeerConnected("bob", {"alice": 2, "bob": 2, "charles": 5}, 0.0, "server"),
        PeerConnected("charles", {"alice": 2, "bob": 2, "charles": 5}, 0.0, "server"),
        NotesReceived("bob", {"alice": n(3, True), "bob": n(5, True), "charles": n(9, True)}, 0.1),
        NotesReceived("charles", {"alice": n(3, True), "bob": n(4, True), "charles": n(9, True)}, 0.2),
    ]:
        s, fx = run(s, event)
        for effect in fx:
            assert isinstance(effect, SendNotes)
            sent[effect.peer].update(effect.notes)
    receivers: dict[str, int] = {}
    for peer_id, notes in sent.items():
        for feed, note in notes.items():
            rep = s.peers[peer_id].replicating[feed]  # type: ignore[index]
            assert rep.rx == (note % 2 == 0)  # what we told the peer is what we recorded
            receivers[feed] = receivers.get(feed, 0) + rep.rx
    assert receivers == {"alice": 1, "bob": 1, "charles": 1}
    assert {f: receiving_peer(s, f) for f in receivers} == {"alice": "bob", "bob": "bob", "charles": "bob"}


def test_appended_jump_and_stale_appended() -> None:
    """The store may report a message twice, or several at once: the clock follows the store, never goes back."""
    s = EbtState(
        clock={"alice": 3},
        wanted=frozenset({"alice"}),
        peers={"bob": server({"alice": 3}, {"alice": R(rx=False, tx=True, sent=3)})},
        queued={"alice": 4},
    )
    s, fx = run(s, Appended("alice", 3, msg("alice", 3), 1.0))
    assert fx == []
    assert s.clock == {"alice": 3} and s.queued == {"alice": 4}
    s, fx = run(s, Appended("alice", 6, msg("alice", 6), 1.1))
    assert fx == [SendMessages("bob", "alice", 4, 6)]
    assert s == EbtState(
        clock={"alice": 6},
        wanted=frozenset({"alice"}),
        peers={"bob": server({"alice": 3}, {"alice": R(rx=False, tx=True, sent=6)})},
    )


def test_duplicate_message_makes_peer_lazy() -> None:
    s = EbtState(
        clock={"alice": 3},
        wanted=frozenset({"alice"}),
        peers={"bob": server({"alice": 2}, {"alice": R(rx=True, tx=False, sent=2)})},
    )
    s, fx = run(s, MessageReceived("bob", "alice", 3, msg("alice", 3), 1.0))
    assert fx == [SendNotes("bob", {"alice": n(3, False)})]
    assert s.peers["bob"] == server({"alice": 3}, {"alice": R(rx=False, tx=False, sent=3)})


def test_message_on_its_way_to_the_store_is_not_appended_twice() -> None:
    s = EbtState(
        clock={"alice": 3},
        wanted=frozenset({"alice"}),
        peers={
            "bob": server({"alice": 5}, {"alice": R(rx=True, sent=5)}),
            "carl": server({"alice": 5}, {"alice": R(rx=False, tx=False, sent=5)}),
        },
    )
    s, fx = run(s, MessageReceived("bob", "alice", 4, msg("alice", 4), 1.0))
    assert fx == [Append("bob", msg("alice", 4))]
    s, fx = run(s, MessageReceived("carl", "alice", 4, msg("alice", 4), 1.1))
    assert fx == []
    s, fx = run(s, MessageReceived("bob", "alice", 6, msg("alice", 6), 1.2))
    assert fx == []  # 5 is missing: 6 cannot validate
    assert s.queued == {"alice": 4}


def test_write_error_blocks_feed_from_that_peer_and_tick_finds_another() -> None:
    s = EbtState(
        clock={"alice": 3},
        wanted=frozenset({"alice"}),
        peers={
            "bob": server({"alice": 6}, {"alice": R(rx=True, sent=6)}, ts=0.0),
            "carl": server({"alice": 6}, {"alice": R(rx=False, sent=6)}, ts=0.0),
        },
    )
    s, fx = run(s, MessageReceived("bob", "alice", 4, msg("alice", 4), 1.0))
    assert fx == [Append("bob", msg("alice", 4))]
    s, fx = run(s, AppendFailed("bob", "alice", "invalid signature"))
    assert fx == [SendNotes("bob", {"alice": -1})]
    assert s.blocks == {"alice": frozenset({"bob"})}
    assert s.queued == {}
    assert receiving_peer(s, "alice") is None
    s, fx = run(s, Tick(1.5))  # nobody sends alice while carl claims 6: carl becomes the receiver
    assert fx == [SendNotes("carl", {"alice": n(3, True)})]
    assert receiving_peer(s, "alice") == "carl"
    s, fx = run(s, NotesReceived("bob", {"alice": n(6, False)}, 2.0))
    assert receiving_peer(s, "alice") == "carl"  # bob is blocked for alice: never eager again


def test_disconnect_persists_clock_and_hands_feeds_over() -> None:
    s = EbtState(
        clock={"alice": 3},
        wanted=frozenset({"alice"}),
        peers={
            "bob": server({"alice": 6}, {"alice": R(rx=True, sent=6)}),
            "carl": server({"alice": 5}, {"alice": R(rx=False, sent=5)}),
        },
    )
    s, fx = run(s, PeerDisconnected("bob", 4.0))
    assert fx == [PersistClock("bob", {"alice": 6}), SendNotes("carl", {"alice": n(3, True)})]
    assert s.peers == {"carl": server({"alice": 5}, {"alice": R(rx=True, sent=5)}, ts=4.0)}
    s, fx = run(s, PeerDisconnected("nobody", 4.0))
    assert fx == []


def test_caught_up_needs_both_directions() -> None:
    s = with_wanted({"alice": 3}, ["alice"])
    s, _ = run(s, PeerConnected("bob", {}, 0.0, "server"))
    s, fx = run(s, NotesReceived("bob", {"alice": n(1, True)}, 0.1))
    assert fx == [SendMessages("bob", "alice", 2, 3)]
    assert is_caught_up(s, "bob")  # everything he asked for is on its way
    s, _ = run(s, NotesReceived("bob", {"alice": n(5, False)}, 0.2))
    assert not is_caught_up(s, "bob")  # he has more than we do
    assert not is_caught_up(s, "nobody")


def test_shell_misuse_raises() -> None:
    s, _ = run(EbtState.initial({}), PeerConnected("bob", {}, 0.0, "server"))
    with pytest.raises(LocalProtocolError, match="already connected"):
        step(s, PeerConnected("bob", {}, 1.0, "server"))
    with pytest.raises(LocalProtocolError, match="role"):
        step(s, PeerConnected("carl", {}, 1.0, "leader"))  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="not an EBT event"):
        step(s, "hello")  # type: ignore[arg-type]


def test_events_from_unknown_peers_are_ignored() -> None:
    s = with_wanted({"alice": 1}, ["alice"])
    for event in [
        NotesReceived("ghost", {"alice": 2}, 0.0),
        MessageReceived("ghost", "alice", 2, msg("alice", 2), 0.0),
        AppendFailed("ghost", "alice", "x"),
    ]:
        s2, fx = run(s, event)
        assert [e for e in fx if not isinstance(e, SendNotes)] == []
        assert s2.peers == {}


def test_step_all_reaches_the_state_of_one_step_at_a_time() -> None:
    """A burst (the client's first notes from the server, 30 messages of 3 feeds, their Appended answers, a
    duplicate) in one step: the same state, the same effects but the notes, which come merged at the end."""
    feeds = ["@a", "@b", "@c"]
    start = with_wanted({"@c": 2}, feeds)
    start, _ = run(start, PeerConnected("srv", {}, 0.0, "client"))
    events: list[Event] = [NotesReceived("srv", {f: n(10, True) for f in feeds}, 0.1)]
    for seq in range(1, 11):
        events += [MessageReceived("srv", f, seq, msg(f, seq), 0.2) for f in feeds]
        events += [Appended(f, seq, msg(f, seq), 0.3) for f in feeds]
    events.append(MessageReceived("srv", "@a", 3, msg("@a", 3), 0.4))
    one_by_one, effects = start, []
    for event in events:
        one_by_one, fx = run(one_by_one, event)
        effects += fx
    before = copy.deepcopy(start)
    batched, batched_fx = step_all(start, events)
    assert start == before and batched == one_by_one and is_caught_up(batched, "srv")
    others = [e for e in effects if not isinstance(e, SendNotes)]
    assert [e for e in batched_fx if not isinstance(e, SendNotes)] == others
    merged: dict[str, int] = {}
    for e in effects:
        if isinstance(e, SendNotes):
            merged.update(e.notes)
    assert [e for e in batched_fx if isinstance(e, SendNotes)] == [SendNotes("srv", merged)]
