"""Property tests: whatever a peer sends (notes of any shape, messages in any order), the reducer never raises,
never mutates its input, keeps one receiving peer per feed and only emits well-formed effects."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.net.ebt import (
    Appended,
    AppendFailed,
    Block,
    EbtState,
    Event,
    MessageReceived,
    NotesReceived,
    PeerConnected,
    PeerDisconnected,
    Replicate,
    SendMessages,
    SendNotes,
    Tick,
    decode_note,
    step,
)
from tests.net.ebt_sim import check_single_receiver

FEEDS = ["@a", "@b", "@c", "@d"]
PEERS = ["p1", "p2", "p3"]

note_values = st.one_of(
    st.integers(min_value=-(2**40), max_value=2**40),
    st.integers(min_value=-2, max_value=40),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
)
feed_keys = st.one_of(st.sampled_from(FEEDS), st.text(max_size=4))
notes_dicts = st.one_of(
    st.dictionaries(feed_keys, note_values, max_size=6),
    st.dictionaries(st.just("clock"), st.dictionaries(feed_keys, note_values, max_size=4), max_size=1),
)
times = st.floats(min_value=0, max_value=100, allow_nan=False)
sequences = st.integers(min_value=-3, max_value=12)

ops = st.one_of(
    st.tuples(st.just("connect"), st.sampled_from(PEERS), st.sampled_from(["client", "server"]),
              st.dictionaries(st.sampled_from(FEEDS), st.integers(-1, 12), max_size=4)),
    st.tuples(st.just("notes"), st.sampled_from(PEERS), notes_dicts),
    st.tuples(st.just("message"), st.sampled_from(PEERS), st.one_of(st.sampled_from(FEEDS), st.just([1])), sequences),
    st.tuples(st.just("appended"), st.sampled_from(FEEDS), st.integers(1, 12)),
    st.tuples(st.just("failed"), st.sampled_from(PEERS), st.sampled_from(FEEDS)),
    st.tuples(st.just("disconnect"), st.sampled_from(PEERS)),
    st.tuples(st.just("tick")),
    st.tuples(st.just("replicate"), st.sampled_from(FEEDS), st.booleans()),
    st.tuples(st.just("block"), st.sampled_from([*FEEDS, "me"]), st.sampled_from(PEERS), st.booleans()),
)


def _event(op: tuple[Any, ...], now: float, connected: set[str]) -> Event:
    kind = op[0]
    if kind == "connect" and op[1] in connected:
        return PeerDisconnected(op[1], now)
    events: dict[str, Any] = {
        "connect": lambda: PeerConnected(op[1], op[3], now, op[2]),
        "notes": lambda: NotesReceived(op[1], op[2], now),
        "message": lambda: MessageReceived(op[1], op[2], op[3], {"author": op[2], "sequence": op[3]}, now),
        "appended": lambda: Appended(op[1], op[2], {"author": op[1], "sequence": op[2]}, now),
        "failed": lambda: AppendFailed(op[1], op[2], "bad"),
        "disconnect": lambda: PeerDisconnected(op[1], now),
        "tick": lambda: Tick(now),
        "replicate": lambda: Replicate(op[1], op[2]),
        "block": lambda: Block(op[1], op[2], op[3]),
    }
    return events[kind]()  # type: ignore[no-any-return]


@settings(max_examples=300, deadline=None)
@given(
    clock=st.dictionaries(st.sampled_from(FEEDS), st.integers(0, 10), max_size=4),
    wanted=st.lists(st.sampled_from(FEEDS), max_size=4),
    script=st.lists(st.tuples(ops, times), max_size=30),
)
def test_reducer_never_crashes(clock: dict[str, int], wanted: list[str], script: list[tuple[Any, float]]) -> None:
    state = EbtState.initial(clock, timeout=1.0, local_id="me")
    for feed in wanted:
        state, _ = step(state, Replicate(feed, True))
    connected: set[str] = set()
    for op, now in script:
        event = _event(op, now, connected)
        before = copy.deepcopy(state)
        new, effects = step(state, event)
        assert state == before
        state = new
        connected = set(state.peers)
        check_single_receiver(state)
        for effect in effects:
            if isinstance(effect, SendNotes):
                assert all(decode_note(v).replicate or v == -1 for v in effect.notes.values())
            if isinstance(effect, SendMessages):
                assert 1 <= effect.from_sequence <= effect.to_sequence


@settings(max_examples=300, deadline=None)
@given(value=note_values)
def test_decode_note_total(value: object) -> None:
    note = decode_note(value)
    assert note.replicate == (note.sequence >= 0)
    assert note.sequence < 2**30
