"""Box-stream framing: round trips in every split, the 4096-byte limit, goodbye, tampering and fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.net.boxstream import (
    HEADER_LENGTH,
    MAX_BODY_LENGTH,
    BoxStreamDecoder,
    BoxStreamEncoder,
    BoxStreamGoodbye,
    increment_nonce,
)
from ssblab.net.errors import BoxStreamError, LocalProtocolError
from tests.net.net_pairs import drain, run_handshake

KEY, NONCE = bytes(range(32)), bytes(range(24))


def pair() -> tuple[BoxStreamEncoder, BoxStreamDecoder]:
    return BoxStreamEncoder(KEY, NONCE), BoxStreamDecoder(KEY, NONCE)


def test_nonce_is_a_big_endian_counter_that_wraps() -> None:
    assert increment_nonce(bytes(24)) == bytes(23) + b"\x01"
    assert increment_nonce(bytes(23) + b"\xff") == bytes(22) + b"\x01\x00"
    assert increment_nonce(b"\xff" * 24) == bytes(24)
    assert increment_nonce(bytes(24), 2) == bytes(23) + b"\x02"


@pytest.mark.parametrize("split", [None, 1, 33])
@pytest.mark.parametrize("size", [1, 100, MAX_BODY_LENGTH, MAX_BODY_LENGTH + 1, 3 * MAX_BODY_LENGTH + 5])
def test_round_trip(split: int | None, size: int) -> None:
    encoder, decoder = pair()
    payload = bytes(i % 251 for i in range(size))
    wire = encoder.encode(payload)
    packets = -(-size // MAX_BODY_LENGTH)
    assert len(wire) == size + packets * HEADER_LENGTH
    if split == 1 and size > MAX_BODY_LENGTH:
        split = 97  # byte-at-a-time over 12 KB is slow without adding coverage
    bodies = drain(decoder, wire, split)
    assert all(len(body) <= MAX_BODY_LENGTH for body in bodies)
    assert b"".join(bodies) == payload


def test_trailing_bytes_wait_for_the_rest() -> None:
    encoder, decoder = pair()
    first, second = encoder.encode(b"one"), encoder.encode(b"two")
    assert drain(decoder, first + second[:10], None) == [b"one"]
    assert drain(decoder, second[10:], None) == [b"two"]


def test_goodbye_ends_the_stream() -> None:
    encoder, decoder = pair()
    wire = encoder.encode(b"last") + encoder.goodbye()
    assert drain(decoder, wire, 1) == [b"last", BoxStreamGoodbye()]
    assert decoder.closed
    with pytest.raises(BoxStreamError, match="after goodbye"):
        decoder.receive_data(b"x")
    with pytest.raises(LocalProtocolError):
        encoder.encode(b"late")


def test_bytes_after_goodbye_in_the_same_buffer_are_rejected() -> None:
    encoder, decoder = pair()
    decoder.receive_data(encoder.goodbye() + b"junk")
    with pytest.raises(BoxStreamError, match="after goodbye"):
        decoder.next_event()


@pytest.mark.parametrize("position", [0, 17, HEADER_LENGTH - 1, HEADER_LENGTH, HEADER_LENGTH + 4])
def test_tampering_is_detected(position: int) -> None:
    encoder, decoder = pair()
    wire = bytearray(encoder.encode(b"hello"))
    wire[position] ^= 0x80
    with pytest.raises(BoxStreamError, match="does not authenticate"):
        drain(decoder, bytes(wire), None)


def test_reordered_packets_are_detected() -> None:
    encoder, decoder = pair()
    first, second = encoder.encode(b"a"), encoder.encode(b"b")
    with pytest.raises(BoxStreamError):
        drain(decoder, second + first, None)


def test_handshake_keys_carry_a_box_stream_both_ways() -> None:
    client_done, server_done = run_handshake()
    ck, sk = client_done.result.keys, server_done.result.keys
    to_server = BoxStreamEncoder(ck.encrypt_key, ck.encrypt_nonce).encode(b"ping")
    assert drain(BoxStreamDecoder(sk.decrypt_key, sk.decrypt_nonce), to_server, None) == [b"ping"]
    to_client = BoxStreamEncoder(sk.encrypt_key, sk.encrypt_nonce).encode(b"pong")
    assert drain(BoxStreamDecoder(ck.decrypt_key, ck.decrypt_nonce), to_client, None) == [b"pong"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_decoder_parses_or_raises_box_stream_error(data: bytes) -> None:
    try:
        drain(BoxStreamDecoder(KEY, NONCE), data, None)
    except BoxStreamError:
        return


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=5000), max_size=4), st.integers(min_value=1, max_value=5000))
def test_property_round_trip_any_writes_any_split(writes: list[bytes], split: int) -> None:
    encoder, decoder = pair()
    wire = b"".join(encoder.encode(write) for write in writes) + encoder.goodbye()
    events = drain(decoder, wire, split)
    assert events[-1] == BoxStreamGoodbye()
    assert b"".join(events[:-1]) == b"".join(writes)
