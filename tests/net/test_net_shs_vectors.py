"""Reproduce every record of the test-secret-handshake vectors (auditdrivencrypto, v1.0.2).

The JS reference mutates its state object in place, so each record's ``args`` already holds the fields the
step wrote; each check recomputes those fields from the inputs the step had. Steps that send a message are
also run through the real ClientHandshake/ServerHandshake machines, and failing verify steps must make the
machine raise HandshakeError naming the right message.
"""

from __future__ import annotations

from typing import Any

import nacl.bindings as sodium
import pytest
from nacl.public import PrivateKey
from nacl.signing import SigningKey

from ssblab.net.errors import HandshakeError
from ssblab.net.shs import (
    ClientHandshake,
    HandshakeComplete,
    ServerHandshake,
    curve_public,
    ephemeral_from_seed,
    make_challenge,
    network_mac,
    open_challenge,
    sha256,
    shared_secret,
)

Record = dict[str, Any]


def h(value: str) -> bytes:
    return bytes.fromhex(value)


def signing_key(side: dict[str, str]) -> SigningKey:
    return SigningKey(h(side["secretKey"])[:32])


def client_machine(state: Record) -> ClientHandshake:
    local, remote = state["local"], state["remote"]
    machine = ClientHandshake(signing_key(local), h(remote["publicKey"]), PrivateKey(h(local["kx_sk"])),
                              h(state["app_key"]))
    assert machine.data_to_send() == h(local["app_mac"]) + h(local["kx_pk"])
    return machine


def server_machine(state: Record) -> ServerHandshake:
    local = state["local"]
    return ServerHandshake(signing_key(local), PrivateKey(h(local["kx_sk"])), h(state["app_key"]))


def msg2_of(state: Record) -> bytes:
    return h(state["remote"]["app_mac"]) + h(state["remote"]["kx_pk"])


def check_initialize(state: Record, result: Record) -> None:
    if state.get("seed"):
        assert bytes(signing_key(result["local"]).verify_key) == h(result["local"]["publicKey"])
    ephemeral = ephemeral_from_seed(h(state["random"]))
    assert bytes(ephemeral) == h(result["local"]["kx_sk"])
    assert bytes(ephemeral.public_key) == h(result["local"]["kx_pk"])
    assert network_mac(h(state["app_key"]), bytes(ephemeral.public_key)) == h(result["local"]["app_mac"])


def check_create_challenge(state: Record, result: str) -> None:
    assert make_challenge(h(state["app_key"]), h(state["local"]["kx_pk"])) == h(result)


def check_verify_challenge(state: Record, packet: str, result: Record | None) -> None:
    key = h(state["app_key"])
    if result is None:
        with pytest.raises(HandshakeError, match="msg1"):
            open_challenge(key, h(packet), "msg1")
        machine = server_machine(state)
        machine.receive_data(h(packet))
        with pytest.raises(HandshakeError) as info:
            machine.next_event()
        assert info.value.step == "msg1"
        return
    remote_ephemeral = open_challenge(key, h(packet), "msg1")
    assert remote_ephemeral == h(result["remote"]["kx_pk"])
    secret = shared_secret(h(state["local"]["kx_sk"]), remote_ephemeral, "msg1")
    assert secret == h(result["secret"]) and sha256(secret) == h(result["shash"])


def check_client_verify_challenge(state: Record, packet: str, result: Record | None) -> None:
    if result is None:
        machine = client_machine(state)
        machine.receive_data(h(packet))
        with pytest.raises(HandshakeError) as info:
            machine.next_event()
        assert info.value.step == "msg2"
        return
    key, local, remote = h(state["app_key"]), result["local"], result["remote"]
    check_verify_challenge(state, packet, result)
    a_bob = shared_secret(h(local["kx_sk"]), curve_public(h(remote["publicKey"]), "msg2"), "msg2")
    assert a_bob == h(result["a_bob"])
    assert sha256(key + h(result["secret"]) + a_bob) == h(result["secret2"])
    signed = key + h(remote["publicKey"]) + h(result["shash"])
    assert signing_key(local).sign(signed).signature + h(local["publicKey"]) == h(local["hello"])


def check_client_create_auth(state: Record, result: str) -> None:
    assert sodium.crypto_secretbox(h(state["local"]["hello"]), bytes(24), h(state["secret2"])) == h(result)
    machine = client_machine(state)
    machine.receive_data(msg2_of(state))
    assert machine.next_event() is None
    assert machine.data_to_send() == h(result)


def check_server_verify_auth(state: Record, packet: str, result: Record | None) -> None:
    machine = server_machine(state)
    machine.receive_data(msg2_of(state))  # the client's msg1, as the server saw it
    machine.next_event()
    machine.receive_data(h(packet))
    if result is None:
        with pytest.raises(HandshakeError) as info:
            machine.next_event()
        assert info.value.step == "msg3"
        return
    event = machine.next_event()
    assert isinstance(event, HandshakeComplete)
    assert event.result.remote_public_key == h(result["remote"]["publicKey"])
    local_curve = bytes(signing_key(state["local"]).to_curve25519_private_key())
    a_bob = shared_secret(local_curve, h(state["remote"]["kx_pk"]), "msg3")
    client_curve = curve_public(h(result["remote"]["publicKey"]), "msg3")
    b_alice = shared_secret(h(state["local"]["kx_sk"]), client_curve, "msg3")
    assert (a_bob, b_alice) == (h(result["a_bob"]), h(result["b_alice"]))
    secret3 = sha256(h(state["app_key"]) + h(result["secret"]) + a_bob + b_alice)
    assert secret3 == h(result["secret3"])


def check_server_create_accept(state: Record, result: str) -> None:
    machine = server_machine(state)
    machine.receive_data(msg2_of(state))
    machine.next_event()
    machine.data_to_send()
    msg3 = sodium.crypto_secretbox(h(state["remote"]["hello"]), bytes(24), h(state["secret2"]))
    machine.receive_data(msg3)
    assert isinstance(machine.next_event(), HandshakeComplete)
    assert machine.data_to_send() == h(result)


def check_client_verify_accept(state: Record, packet: str, result: Record | None) -> None:
    assert result is not None, "the vectors hold no failing msg4"
    machine = client_machine(state)
    machine.receive_data(msg2_of(state))
    machine.next_event()
    machine.receive_data(h(packet))
    event = machine.next_event()
    assert isinstance(event, HandshakeComplete) and event.trailing == b""
    session = sha256(h(result["secret3"]))
    assert event.result.keys.encrypt_key == sha256(session + h(state["remote"]["publicKey"]))
    assert event.result.keys.decrypt_key == sha256(session + h(state["local"]["publicKey"]))
    assert event.result.keys.encrypt_nonce == h(state["remote"]["app_mac"])[:24]
    assert event.result.keys.decrypt_nonce == h(state["local"]["app_mac"])[:24]


def check_clean(state: Record, result: Record) -> None:
    session = h(result["secret"])
    assert sha256(session + h(state["remote"]["publicKey"])) == h(result["encryptKey"])
    assert sha256(session + h(state["local"]["publicKey"])) == h(result["decryptKey"])


def check_to_keys(seed: str, result: Record) -> None:
    key = SigningKey(h(seed))
    assert bytes(key.verify_key) == h(result["publicKey"])
    assert bytes(key) + bytes(key.verify_key) == h(result["secretKey"])


def check_record(record: Record) -> None:
    name, args, result = record["name"], record["args"], record["result"]
    if name == "toKeys":
        if isinstance(args[0], str):
            check_to_keys(args[0], result)
        else:
            assert result == args[0]  # an existing keypair passes through unchanged
        return
    with_packet = {
        "verifyChallenge": check_verify_challenge,
        "clientVerifyChallenge": check_client_verify_challenge,
        "serverVerifyAuth": check_server_verify_auth,
        "clientVerifyAccept": check_client_verify_accept,
    }
    without_packet = {
        "initialize": check_initialize,
        "createChallenge": check_create_challenge,
        "clientCreateAuth": check_client_create_auth,
        "serverCreateAccept": check_server_create_accept,
        "clean": check_clean,
    }
    if name in with_packet:
        with_packet[name](args[0], args[1], result)
    else:
        without_packet[name](args[0], result)


def test_every_vector_record(shs_vectors: list[Record]) -> None:
    assert len(shs_vectors) == 159
    failures = []
    for index, record in enumerate(shs_vectors):
        try:
            check_record(record)
        except (AssertionError, HandshakeError, pytest.fail.Exception) as exc:
            failures.append(f"record {index} ({record['name']}): {exc!r}"[:300])
    assert not failures, "\n".join(failures)


def test_vectors_cover_every_step(shs_vectors: list[Record]) -> None:
    names = {record["name"] for record in shs_vectors}
    assert names == {"initialize", "createChallenge", "verifyChallenge", "clientVerifyChallenge",
                     "clientCreateAuth", "serverVerifyAuth", "serverCreateAccept", "clientVerifyAccept",
                     "clean", "toKeys"}
    assert sum(record["result"] is None for record in shs_vectors) >= 3
