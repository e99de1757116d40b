"""Secret handshake machines against each other: every split of the bytes, tampering, and fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.public import PrivateKey

from ssblab.net.errors import HandshakeError, LocalProtocolError
from ssblab.net.shs import (
    CLIENT_AUTH_LENGTH,
    MAIN_NETWORK_KEY,
    ClientHandshake,
    HandshakeState,
    ServerHandshake,
)
from tests.net.net_pairs import drain, handshake_pair, keys, run_handshake


@pytest.mark.parametrize("split", [None, 1, 7])
def test_both_sides_agree_on_keys(split: int | None) -> None:
    client_done, server_done = run_handshake(split)
    ck, sk = client_done.result.keys, server_done.result.keys
    assert (ck.encrypt_key, ck.encrypt_nonce) == (sk.decrypt_key, sk.decrypt_nonce)
    assert (ck.decrypt_key, ck.decrypt_nonce) == (sk.encrypt_key, sk.encrypt_nonce)
    assert ck.encrypt_key != ck.decrypt_key
    assert server_done.result.remote_public_key == bytes(keys(1).verify_key)
    assert client_done.result.remote_public_key == bytes(keys(2).verify_key)
    assert client_done.trailing == server_done.trailing == b""


def test_states_follow_the_message_order() -> None:
    client, server = handshake_pair()
    assert (client.state, server.state) == (HandshakeState.AWAIT_MSG2, HandshakeState.AWAIT_MSG1)
    drain(server, client.data_to_send(), None)
    assert server.state is HandshakeState.AWAIT_MSG3
    drain(client, server.data_to_send(), None)
    assert client.state is HandshakeState.AWAIT_MSG4
    drain(server, client.data_to_send(), None)
    drain(client, server.data_to_send(), None)
    assert (client.state, server.state) == (HandshakeState.DONE, HandshakeState.DONE)


def test_bytes_after_the_last_message_are_handed_over() -> None:
    client, server = handshake_pair()
    drain(server, client.data_to_send(), None)
    drain(client, server.data_to_send(), None)
    (server_done,) = drain(server, client.data_to_send() + b"early box", None)
    (client_done,) = drain(client, server.data_to_send() + b"box-stream bytes", None)
    assert server_done.trailing == b"early box"
    assert client_done.trailing == b"box-stream bytes"
    with pytest.raises(LocalProtocolError):
        client.receive_data(b"more")


def test_wrong_network_key_fails_at_msg1() -> None:
    client = ClientHandshake(keys(1), bytes(keys(2).verify_key), PrivateKey(bytes([3]) * 32), bytes(32))
    server = ServerHandshake(keys(2), PrivateKey(bytes([4]) * 32), MAIN_NETWORK_KEY)
    server.receive_data(client.data_to_send())
    with pytest.raises(HandshakeError) as info:
        server.next_event()
    assert info.value.step == "msg1" and "network key" in str(info.value)
    assert server.state is HandshakeState.FAILED
    with pytest.raises(HandshakeError):  # stays failed
        server.next_event()


def test_client_expecting_another_server_fails_at_msg3() -> None:
    client = ClientHandshake(keys(1), bytes(keys(9).verify_key), PrivateKey(bytes([3]) * 32))
    server = ServerHandshake(keys(2), PrivateKey(bytes([4]) * 32))
    drain(server, client.data_to_send(), None)
    drain(client, server.data_to_send(), None)
    with pytest.raises(HandshakeError) as info:
        drain(server, client.data_to_send(), None)
    assert info.value.step == "msg3"


@pytest.mark.parametrize("position", [0, 20, 79])
def test_tampered_msg4_fails(position: int) -> None:
    client, server = handshake_pair()
    drain(server, client.data_to_send(), None)
    drain(client, server.data_to_send(), None)
    drain(server, client.data_to_send(), None)
    msg4 = bytearray(server.data_to_send())
    msg4[position] ^= 1
    with pytest.raises(HandshakeError) as info:
        drain(client, bytes(msg4), None)
    assert info.value.step == "msg4"


def test_network_key_length_is_checked() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        ServerHandshake(keys(2), PrivateKey(bytes([4]) * 32), b"short")


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_server_fuzz_parses_or_raises_handshake_error(data: bytes) -> None:
    _, server = handshake_pair()
    try:
        drain(server, data, None)
    except HandshakeError:
        return


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=CLIENT_AUTH_LENGTH, max_size=CLIENT_AUTH_LENGTH))
def test_server_fuzz_msg3_after_valid_msg1(msg3: bytes) -> None:
    client, server = handshake_pair()
    drain(server, client.data_to_send(), None)
    with pytest.raises(HandshakeError):
        drain(server, msg3, None)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_client_fuzz_parses_or_raises_handshake_error(data: bytes) -> None:
    client, _ = handshake_pair()
    try:
        drain(client, data, None)
    except HandshakeError:
        return
