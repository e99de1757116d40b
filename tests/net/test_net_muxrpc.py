"""muxrpc machine: two endpoints in memory exchanging calls, streams, ends, aborts and errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.net.errors import LocalProtocolError, NetProtocolError
from ssblab.net.muxrpc import (
    CallFailed,
    CallRejected,
    CallResponse,
    CallType,
    ConnectionClosed,
    ErrorBody,
    IncomingCall,
    MuxRpcConnection,
    StreamData,
    StreamEnded,
    decode_body,
)
from ssblab.net.packetstream import BodyType, Packet, PacketStreamDecoder, encode_packet
from tests.net.net_pairs import ConnectionPair, drain

MANIFEST = {
    "whoami": CallType.ASYNC,
    "createHistoryStream": CallType.SOURCE,
    "blobs.add": CallType.SINK,
    "gossip.ping": CallType.DUPLEX,
}
SPLITS = [None, 1]


def make_pair(split: int | None) -> ConnectionPair:
    return ConnectionPair(manifest_a={}, manifest_b=MANIFEST, split=split)


@pytest.mark.parametrize("split", SPLITS)
def test_async_call_and_answer(split: int | None) -> None:
    pair = make_pair(split)
    request = pair.a.call("whoami", [], CallType.ASYNC)
    assert request == 1
    (incoming,) = pair.deliver(pair.a)
    assert incoming == IncomingCall(-1, ("whoami",), [], CallType.ASYNC)
    pair.b.respond(incoming.request, {"id": "@me"})
    (response,) = pair.deliver(pair.b)
    assert isinstance(response, CallResponse) and response.request == 1
    assert response.value() == {"id": "@me"}
    assert pair.a.open_requests() == pair.b.open_requests() == ()


def test_request_numbers_increase_and_replies_use_the_negative() -> None:
    pair = make_pair(None)
    assert [pair.a.call("whoami", [], CallType.ASYNC) for _ in range(3)] == [1, 2, 3]
    decoder = PacketStreamDecoder()
    pair.b.receive_data(wire := pair.a.data_to_send())
    assert [p.request for p in drain(decoder, wire, None)] == [1, 2, 3]
    calls = [pair.b.next_event() for _ in range(3)]
    pair.b.respond(calls[1].request, "second")
    (packet,) = drain(PacketStreamDecoder(), pair.b.data_to_send(), None)
    assert (packet.request, packet.stream, packet.end, packet.body_type) == (-2, False, False, BodyType.UTF8)


def test_async_error_answer_has_js_shape() -> None:
    pair = make_pair(None)
    pair.a.call("whoami", [], CallType.ASYNC)
    (incoming,) = pair.deliver(pair.a)
    pair.b.respond_error(incoming.request, "nope")
    (failed,) = pair.deliver(pair.b)
    assert failed == CallFailed(1, ErrorBody("Error", "nope", "Error: nope"))
    assert str(failed.error.exception()) == "Error: nope"


@pytest.mark.parametrize("call_type", list(CallType))
def test_unknown_method_is_answered_with_an_error(call_type: CallType) -> None:
    pair = make_pair(None)
    request = pair.a.call(["no", "such"], [1], call_type)
    assert pair.deliver(pair.a) == [CallRejected(-request, ("no", "such"))]  # answered already: only counted
    raw = pair.b.data_to_send()
    (packet,) = drain(PacketStreamDecoder(), raw, None)
    body = json.loads(packet.body)
    assert set(body) == {"name", "message", "stack"}
    assert body["message"] == "method:no,such is not in list of allowed methods"
    assert packet.end and packet.stream == (call_type is not CallType.ASYNC)
    events = drain(pair.a, raw, None)
    if call_type is CallType.ASYNC:
        assert events == [CallFailed(request, ErrorBody.parse(packet))]
    else:
        assert events == [StreamEnded(request, ErrorBody.parse(packet))]
        pair.deliver(pair.a)  # a's automatic end answer is swallowed by b
    assert pair.is_quiet()
    assert pair.a.open_requests() == pair.b.open_requests() == ()


def test_a_call_with_the_wrong_type_is_refused() -> None:
    pair = make_pair(None)
    pair.a.call("whoami", [], CallType.SOURCE)
    assert pair.deliver(pair.a) == [CallRejected(-1, ("whoami",))]
    assert isinstance(pair.deliver(pair.b)[0], StreamEnded)


@pytest.mark.parametrize("split", SPLITS)
def test_source_stream_to_its_end(split: int | None) -> None:
    pair = make_pair(split)
    request = pair.a.call("createHistoryStream", [{"id": "@x"}], CallType.SOURCE)
    (incoming,) = pair.deliver(pair.a)
    assert incoming.call_type is CallType.SOURCE and incoming.args == [{"id": "@x"}]
    for seq in (1, 2):
        pair.b.send(incoming.request, {"sequence": seq})
    pair.b.end(incoming.request)
    events = pair.deliver(pair.b)
    assert [e.value() for e in events[:2]] == [{"sequence": 1}, {"sequence": 2}]
    assert events[2] == StreamEnded(request, None)
    assert pair.a.is_ended(request)
    # a answered the end with its own, so b learns the stream is closed and forgets it
    assert pair.deliver(pair.a) == [StreamEnded(incoming.request, None)]
    assert pair.a.open_requests() == pair.b.open_requests() == ()
    assert pair.is_quiet()


def test_caller_aborts_a_source() -> None:
    pair = make_pair(None)
    request = pair.a.call("createHistoryStream", [], CallType.SOURCE)
    (incoming,) = pair.deliver(pair.a)
    pair.b.send(incoming.request, 1)
    pair.a.end(request)
    assert pair.deliver(pair.a) == [StreamEnded(incoming.request, None)]
    assert pair.b.is_ended(incoming.request)
    assert pair.deliver(pair.b) == [StreamEnded(request, None)]  # the in-flight item is dropped
    with pytest.raises(LocalProtocolError):
        pair.a.send(request, "late")
    assert pair.a.open_requests() == pair.b.open_requests() == ()


def test_stream_error_in_both_directions() -> None:
    pair = make_pair(None)
    request = pair.a.call("gossip.ping", [], CallType.DUPLEX)
    (incoming,) = pair.deliver(pair.a)
    pair.b.end(incoming.request, "boom")
    (ended,) = pair.deliver(pair.b)
    assert ended.request == request and ended.error is not None and ended.error.message == "boom"
    pair.deliver(pair.a)
    request2 = pair.a.call("gossip.ping", [], CallType.DUPLEX)
    (incoming2,) = pair.deliver(pair.a)
    pair.a.end(request2, "client failed")
    (ended2,) = pair.deliver(pair.a)
    assert ended2 == StreamEnded(incoming2.request, ErrorBody("Error", "client failed", "client failed"))


@pytest.mark.parametrize("split", SPLITS)
def test_duplex_both_ways_then_sink(split: int | None) -> None:
    pair = make_pair(split)
    request = pair.a.call("gossip.ping", [{"timeout": 1}], CallType.DUPLEX)
    pair.a.send(request, 100)
    incoming, data = pair.deliver(pair.a)
    assert data == StreamData(incoming.request, b"100", BodyType.JSON)
    pair.b.send(incoming.request, 200)
    assert [e.value() for e in pair.deliver(pair.b)] == [200]
    sink = pair.a.call("blobs.add", [], CallType.SINK)
    pair.a.send(sink, b"\x00\x01")
    pair.a.end(sink)
    events = pair.deliver(pair.a)
    assert [type(e) for e in events] == [IncomingCall, StreamData, StreamEnded]
    assert events[1].value() == b"\x00\x01"
    assert pair.deliver(pair.b) == [StreamEnded(sink, None)]


def test_goodbye_closes_everything() -> None:
    pair = make_pair(None)
    pair.a.call("whoami", [], CallType.ASYNC)
    source = pair.a.call("createHistoryStream", [], CallType.SOURCE)
    pair.deliver(pair.a)
    pair.b.close()
    assert pair.deliver(pair.b) == [ConnectionClosed((1, source))]
    with pytest.raises(LocalProtocolError):
        pair.b.call("whoami", [], CallType.ASYNC)


def test_late_and_stray_packets_are_ignored() -> None:
    conn = MuxRpcConnection(MANIFEST)
    stray = [Packet(-7, b"1"), Packet(-8, b"true", stream=True, end=True), Packet(0, b"{}"),
             Packet(9, b"true", stream=True, end=True)]
    assert drain(conn, b"".join(encode_packet(p) for p in stray), None) == []
    assert conn.data_to_send() == b""


@pytest.mark.parametrize("body", [b"[1]", b'{"name": 5}', b'{"name": ["whoami"], "args": 3}', b"\xff"])
def test_malformed_requests_get_an_error_answer(body: bytes) -> None:
    conn = MuxRpcConnection(MANIFEST)
    assert drain(conn, encode_packet(Packet(1, body)), None) == [CallRejected(-1, ())]
    (answer,) = drain(PacketStreamDecoder(), conn.data_to_send(), None)
    assert answer.request == -1 and answer.end and "muxrpc" in json.loads(answer.body)["message"]


def test_replying_twice_is_a_local_error() -> None:
    pair = make_pair(None)
    pair.a.call("whoami", [], CallType.ASYNC)
    (incoming,) = pair.deliver(pair.a)
    pair.b.respond(incoming.request, 1)
    with pytest.raises(LocalProtocolError):
        pair.b.respond(incoming.request, 2)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_receiver_parses_or_raises_protocol_error(data: bytes) -> None:
    conn = MuxRpcConnection(MANIFEST)
    try:
        drain(conn, data, None)
    except NetProtocolError:
        return


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(Packet, request=st.integers(-3, 3), body=st.sampled_from(
    [b"true", b"{}", b"{\"name\":[\"gossip\",\"ping\"],\"args\":[],\"type\":\"duplex\"}",
     b"{\"name\":[\"whoami\"],\"args\":[]}", b"\xff", b"1"]),
    body_type=st.sampled_from(BodyType), stream=st.booleans(), end=st.booleans()), max_size=12))
def test_fuzz_packet_sequences_never_crash(packets: list[Packet]) -> None:
    conn = MuxRpcConnection(MANIFEST)
    drain(conn, b"".join(encode_packet(p) for p in packets), None)
    conn.data_to_send()


@pytest.mark.parametrize("body", [
    b'{"author":"@a","sequence":3,"content":{"type":"post","text":"caf\\u00e9 \xc3\xa9"}}',
    b"[-0, -0.0, 0.1, 1e-7, 2.5e300]",
    b'{"a":1,"a":2}', b"18446744073709551616", b"-9223372036854775809", b"[123456789012345678, 1.5]",
    b'"1234567890123456789"', b"[NaN, Infinity]", b"1e400", b'"\\ud800"', b" \t[1]\n",
])
def test_json_bodies_read_as_json_reads_them(body: bytes) -> None:
    """orjson takes the bodies it reads as ``json`` does, ``json`` the rest (integers past 64 bits, which orjson
    would make floats, NaN, lone surrogates): the same values, of the same types."""
    assert repr(decode_body(body, BodyType.JSON)) == repr(json.loads(body.decode()))


@pytest.mark.parametrize("body", [b"{", b"[1,]", b"\xff", b'"\x01"', b"1 2"])
def test_bad_json_bodies_are_muxrpc_errors(body: bytes) -> None:
    with pytest.raises(NetProtocolError, match="not valid JSON"):
        decode_body(body, BodyType.JSON)
