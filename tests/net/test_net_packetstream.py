"""Packet-stream codec: header layout, every flag combination, splits, limits and fuzzing."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.net.errors import PacketStreamError
from ssblab.net.packetstream import (
    GOODBYE,
    BodyType,
    Packet,
    PacketStreamDecoder,
    PacketStreamGoodbye,
    encode_packet,
)
from tests.net.net_pairs import drain

packets = st.builds(
    Packet,
    request=st.integers(min_value=-(2**31), max_value=2**31 - 1).filter(lambda n: n != 0),
    body=st.binary(max_size=300),
    body_type=st.sampled_from(BodyType),
    stream=st.booleans(),
    end=st.booleans(),
)


def test_header_layout() -> None:
    wire = encode_packet(Packet(request=-3, body=b'{"a":1}', body_type=BodyType.JSON, stream=True, end=False))
    assert wire[0] == 0b1010  # stream flag + JSON
    assert wire[1:5] == (7).to_bytes(4, "big")
    assert wire[5:9] == (-3).to_bytes(4, "big", signed=True)
    assert wire[9:] == b'{"a":1}'
    assert bytes(9) == GOODBYE


@pytest.mark.parametrize(("stream", "end", "body_type"),
                         list(itertools.product([False, True], [False, True], list(BodyType))))
@pytest.mark.parametrize("split", [None, 1])
def test_every_flag_combination_round_trips(stream: bool, end: bool, body_type: BodyType,
                                            split: int | None) -> None:
    packet = Packet(request=2**31 - 1, body=b"body", body_type=body_type, stream=stream, end=end)
    assert drain(PacketStreamDecoder(), encode_packet(packet), split) == [packet]


def test_trailing_bytes_and_goodbye() -> None:
    first, second = Packet(1, b"x"), Packet(-1, b"", BodyType.BINARY)
    wire = encode_packet(first) + encode_packet(second) + GOODBYE
    decoder = PacketStreamDecoder()
    assert drain(decoder, wire[:12], None) == [first]
    assert drain(decoder, wire[12:], None) == [second, PacketStreamGoodbye()]
    with pytest.raises(PacketStreamError, match="after goodbye"):
        decoder.receive_data(b"\x00")


@pytest.mark.parametrize(("flags", "message"), [(0x10, "unknown flag"), (0x03, "body type 3")])
def test_bad_flags_are_rejected(flags: int, message: str) -> None:
    decoder = PacketStreamDecoder()
    decoder.receive_data(bytes([flags]) + (0).to_bytes(4, "big") + (1).to_bytes(4, "big"))
    with pytest.raises(PacketStreamError, match=message):
        decoder.next_event()


def test_length_limit_is_checked_before_buffering() -> None:
    decoder = PacketStreamDecoder(max_body_length=10)
    decoder.receive_data(bytes([2]) + (11).to_bytes(4, "big") + (1).to_bytes(4, "big"))
    with pytest.raises(PacketStreamError, match="exceeds"):
        decoder.next_event()


@settings(max_examples=100, deadline=None)
@given(st.lists(packets, max_size=5), st.integers(min_value=1, max_value=50))
def test_property_round_trip(sent: list[Packet], split: int) -> None:
    wire = b"".join(encode_packet(packet) for packet in sent)
    assert drain(PacketStreamDecoder(), wire, split) == sent


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_decoder_parses_or_raises_packet_stream_error(data: bytes) -> None:
    try:
        events = drain(PacketStreamDecoder(), data, None)
    except PacketStreamError:
        return
    assert all(isinstance(event, Packet | PacketStreamGoodbye) for event in events)
