"""Epidemic Broadcast Trees (``ebt.replicate`` version 3) as a pure reducer, for a replication shell to drive.

Strategy: :func:`step` takes an :class:`EbtState` and one event and returns the new state and a list of effects;
the shell (``ssblab.replicate``) turns socket traffic, store results and a timer into events, and effects into
writes, store reads and appends. No I/O, clock or randomness lives here. The rules and the deviations from the JS
reference are listed in :mod:`ssblab.net.ebt.reducer`; the wire format of notes is :mod:`ssblab.net.ebt.notes`.

Driving it (one connection where we are the server, then our own new message):

>>> from ssblab.net.ebt import EbtState, PeerConnected, NotesReceived, Appended, Replicate, step, encode_note
>>> state = EbtState.initial({"@me": 2})
>>> state, _ = step(state, Replicate("@me", True))
>>> state, effects = step(state, PeerConnected("@bob", {}, now=0.0, role="server"))
>>> effects                                  # the server speaks first: our seq for @me, please send more
[SendNotes(peer='@bob', notes={'@me': 4})]
>>> state, effects = step(state, NotesReceived("@bob", {"@me": encode_note(0, True)}, now=0.1))
>>> effects                                  # bob has nothing and asks for it: the shell sends 1..2
[SendMessages(peer='@bob', author='@me', from_sequence=1, to_sequence=2)]
>>> msg3 = {"author": "@me", "sequence": 3, "content": {"type": "post"}}
>>> state, effects = step(state, Appended("@me", 3, msg3, now=0.2))
>>> effects                                  # bob is eager for @me and has 2: forward at once
[SendMessage(peer='@bob', message={'author': '@me', 'sequence': 3, 'content': {'type': 'post'}})]
>>> is_caught_up(state, "@bob")
True
"""

from ssblab.net.ebt.events import (
    Append,
    Appended,
    AppendFailed,
    Block,
    EbtRole,
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
    SendNotes,
    Tick,
)
from ssblab.net.ebt.notes import (
    DO_NOT_REPLICATE,
    MAX_SEQUENCE,
    Note,
    NoteRangeError,
    decode_note,
    encode_note,
    is_message_value,
    notes_from_value,
)
from ssblab.net.ebt.reducer import step, step_all
from ssblab.net.ebt.state import EbtState, FeedRep, PeerState, is_caught_up, receiving_peer

__all__ = [
    "DO_NOT_REPLICATE",
    "MAX_SEQUENCE",
    "Append",
    "AppendFailed",
    "Appended",
    "Block",
    "EbtRole",
    "EbtState",
    "Effect",
    "EndStream",
    "Event",
    "FeedRep",
    "MessageReceived",
    "Note",
    "NoteRangeError",
    "NotesReceived",
    "PeerConnected",
    "PeerDisconnected",
    "PeerState",
    "PersistClock",
    "Replicate",
    "SendMessage",
    "SendMessages",
    "SendNotes",
    "Tick",
    "decode_note",
    "encode_note",
    "is_caught_up",
    "is_message_value",
    "notes_from_value",
    "receiving_peer",
    "step",
    "step_all",
]
