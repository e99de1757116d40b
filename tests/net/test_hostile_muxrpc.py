"""muxrpc against hostile bytes (issue 19): any header and body either parse or raise `NetProtocolError`, a flood
of calls to methods not served leaves bounded bookkeeping, and the budget ledger keeps its sums."""

from __future__ import annotations

import json
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.net.budget import BufferBudget
from ssblab.net.errors import NetProtocolError
from ssblab.net.muxrpc import REJECTED_MEMORY, CallRejected, CallType, IncomingCall, MuxRpcConnection
from ssblab.net.packetstream import BodyType, Packet, PacketStreamDecoder, encode_packet
from tests.net.net_pairs import drain

MANIFEST = {"whoami": CallType.ASYNC, "createHistoryStream": CallType.SOURCE, "ebt.replicate": CallType.DUPLEX}


def _call(number: int, name: object, kind: str | None = "duplex", args: object = ()) -> bytes:
    body = {"name": name, "args": list(args) if isinstance(args, tuple) else args, "type": kind}
    return encode_packet(Packet(number, json.dumps(body).encode(), stream=kind is not None))


def test_a_flood_of_rejected_streams_leaves_bounded_bookkeeping() -> None:
    conn = MuxRpcConnection(MANIFEST)

    def flood(start: int, count: int) -> None:
        data = b"".join(_call(n, ["no", "such"]) for n in range(start, start + count))
        assert all(isinstance(e, CallRejected) for e in drain(conn, data, 65536))  # as the shell reads
        conn.data_to_send()

    flood(1, 3_000)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    flood(3_001, 3_000)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 256 * 1024, grown  # 3,000 more rejected calls; remembering each took ~700 KB
    assert conn.open_requests() == ()
    # The newest rejected streams are remembered: the peer's items on them are dropped without an answer ...
    assert drain(conn, encode_packet(Packet(6_000, b"1", stream=True)), None) == []
    assert conn.data_to_send() == b""
    # ... the oldest are forgotten: an item there reads as a new (malformed) call and gets an error answer.
    old = 6_000 - REJECTED_MEMORY
    assert drain(conn, encode_packet(Packet(old, b"1", stream=True)), None) == [CallRejected(-old, ())]
    (answer,) = drain(PacketStreamDecoder(), conn.data_to_send(), None)
    assert answer.end and answer.request == -old


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
NAMES = st.sampled_from([["whoami"], ["createHistoryStream"], ["ebt", "replicate"], "ebt.replicate", ["no"], [],
                         [1], "", None]) | JSON


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), NAMES, st.sampled_from([None, "source", "sink",
                                                                                   "duplex", "async", 3]),
                          JSON), max_size=8),
       st.integers(1, 64))
def test_fuzz_request_bodies_parse_or_raise(calls: list[tuple[int, object, object, object]], split: int) -> None:
    """Requests of every shape, any request number, delivered in pieces of ``split`` bytes: events or a
    `NetProtocolError`, and every announced call is one the manifest serves with that type."""
    conn = MuxRpcConnection(MANIFEST)
    data = b"".join(_call(n, name, kind if isinstance(kind, str) else None, args) for n, name, kind, args in calls)
    try:
        events = drain(conn, data, split)
    except NetProtocolError:
        return
    for event in events:
        if isinstance(event, IncomingCall):
            assert MANIFEST[".".join(event.name)] is event.call_type


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 255), st.integers(0, 2**32 - 1), st.integers(-(2**31), 2**31 - 1), st.binary(max_size=64))
def test_fuzz_headers_parse_or_raise_and_hold_only_what_came(flags: int, length: int, request: int,
                                                             body: bytes) -> None:
    """Any 9-byte header (flags, length, request) with any body bytes: a packet, a wait for more, or a
    `NetProtocolError`; what the connection holds is never more than what it received."""
    conn = MuxRpcConnection(MANIFEST)
    data = bytes([flags]) + length.to_bytes(4, "big") + request.to_bytes(4, "big", signed=True) + body
    try:
        drain(conn, data, None)
    except NetProtocolError:
        return
    assert conn.buffered <= len(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 1000)), max_size=40), st.integers(1, 3000))
def test_budget_ledger_sums(steps: list[tuple[str, int]], limit: int) -> None:
    budget: BufferBudget[str] = BufferBudget(limit)
    held: dict[str, int] = {}
    for holder, size in steps:
        if size % 7 == 0:
            budget.release(holder)
            held.pop(holder, None)
            continue
        victim = budget.hold(holder, size)
        held[holder] = size
        assert budget.total == sum(held.values())
        assert (victim is None) == (budget.total <= limit)
        assert victim is None or budget.held(victim) == max(held.values())


def test_partly_sent_packets_are_counted_until_whole() -> None:
    conn = MuxRpcConnection(MANIFEST)
    packet = encode_packet(Packet(1, json.dumps({"name": ["whoami"], "args": []}).encode(), BodyType.JSON))
    conn.receive_data(packet[:-3])
    assert conn.next_event() is None and conn.buffered == len(packet) - 3
    conn.receive_data(packet[-3:])
    assert isinstance(conn.next_event(), IncomingCall) and conn.buffered == 0
