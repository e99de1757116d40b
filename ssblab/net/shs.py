"""Secret handshake version 1 (shs1), client and server, as pure state machines.

Strategy: each role is a small table-driven machine. It owns an input buffer; in each waiting state the
table says how many bytes the next handshake message has and which step function consumes it.
``receive_data`` only buffers, ``next_event`` runs at most one step, ``data_to_send`` drains the outgoing
bytes (h11 style). The ephemeral key is a constructor argument, so the machine holds no randomness and is
reproducible in tests.

Wire (protocol guide "Handshake"; K = network key, a/b ephemeral, A/B long-term, curve() = ed25519 → x25519):
    msg1 (client → server, 64)  = hmac(K, a_pub) || a_pub
    msg2 (server → client, 64)  = hmac(K, b_pub) || b_pub
    msg3 (client → server, 112) = secretbox(sig_A(K || B || sha256(ab)) || A, 0, sha256(K || ab || aB))
    msg4 (server → client, 80)  = secretbox(sig_B(K || msg3_plain || sha256(ab)), 0, sha256(K||ab||aB||Ab))
Session: s = sha256(sha256(K || ab || aB || Ab)); encrypt_key = sha256(s || remote_pub),
decrypt_key = sha256(s || local_pub); encrypt_nonce = hmac(K, remote_eph_pub)[:24],
decrypt_nonce = hmac(K, local_eph_pub)[:24]. hmac is HMAC-SHA-512 cut to 32 bytes (libsodium crypto_auth).

Invariants: a failed step raises :class:`HandshakeError` naming msg1..msg4 and leaves the machine in FAILED,
where every later call raises the same error; bytes that arrive after the last handshake message are handed
over in :class:`HandshakeComplete` (they belong to the box-stream).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import nacl.bindings as sodium
import nacl.exceptions
from nacl.public import PrivateKey
from nacl.signing import SigningKey, VerifyKey

from ssblab.net.errors import HandshakeError, LocalProtocolError

__all__ = [
    "CHALLENGE_LENGTH", "CLIENT_AUTH_LENGTH", "MAIN_NETWORK_KEY", "SERVER_ACCEPT_LENGTH", "BoxStreamKeys",
    "ClientHandshake", "HandshakeComplete", "HandshakeResult", "HandshakeState", "ServerHandshake", "curve_public",
    "ephemeral_from_seed", "make_challenge", "network_mac", "open_challenge", "session_keys", "sha256",
    "shared_secret",
]

MAIN_NETWORK_KEY = base64.b64decode("1KHLiKZvAvjbY1ziZEHMXawbCEIM6qwjCDm3VYRan/s=")
"""ssb-caps ``shs``: the network key of the main SSB network (a public constant)."""

CHALLENGE_LENGTH = 64
CLIENT_AUTH_LENGTH = 16 + 64 + 32
SERVER_ACCEPT_LENGTH = 16 + 64
_ZERO_NONCE = bytes(24)
_NaclErrors = (nacl.exceptions.CryptoError, nacl.exceptions.RuntimeError, ValueError, TypeError)


# --- primitives (pure functions; the test-secret-handshake vectors check them step by step) ---


def network_mac(network_key: bytes, data: bytes) -> bytes:
    """libsodium ``crypto_auth``: HMAC-SHA-512 truncated to 32 bytes."""
    return hmac.new(network_key, data, hashlib.sha512).digest()[:32]


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def shared_secret(secret: bytes, public: bytes, step: str) -> bytes:
    """Curve25519 scalar multiplication; a low-order public point is the peer's fault: HandshakeError."""
    try:
        return sodium.crypto_scalarmult(secret, public)
    except _NaclErrors as exc:
        raise HandshakeError(step, f"key agreement failed ({exc})") from exc


def curve_public(ed_public: bytes, step: str) -> bytes:
    """ed25519 public key → x25519; an invalid point is the peer's fault."""
    try:
        return sodium.crypto_sign_ed25519_pk_to_curve25519(ed_public)
    except _NaclErrors as exc:
        raise HandshakeError(step, f"long-term key is not a valid ed25519 point ({exc})") from exc


def ephemeral_from_seed(seed: bytes) -> PrivateKey:
    """The JS reference derives its ephemeral x25519 key from an ed25519 seed; mirrored for the vectors."""
    return SigningKey(seed).to_curve25519_private_key()


def make_challenge(network_key: bytes, ephemeral_public: bytes) -> bytes:
    """msg1 / msg2: proves knowledge of the network key without revealing it."""
    return network_mac(network_key, ephemeral_public) + ephemeral_public


def open_challenge(network_key: bytes, message: bytes, step: str) -> bytes:
    """Check a msg1/msg2 and return the peer's ephemeral public key."""
    mac, ephemeral_public = message[:32], message[32:CHALLENGE_LENGTH]
    if not hmac.compare_digest(mac, network_mac(network_key, ephemeral_public)):
        raise HandshakeError(step, "network key mismatch (hmac of the ephemeral key does not verify)")
    return ephemeral_public


def _open_box(box: bytes, key: bytes, step: str) -> bytes:
    try:
        return sodium.crypto_secretbox_open(box, _ZERO_NONCE, key)
    except _NaclErrors as exc:
        raise HandshakeError(step, "secretbox does not open (wrong server key or tampered message)") from exc


def _verify(public: bytes, signed: bytes, signature: bytes, step: str) -> None:
    try:
        VerifyKey(public).verify(signed, signature)
    except _NaclErrors as exc:
        raise HandshakeError(step, "signature does not verify") from exc


# --- results and events ---


@dataclass(frozen=True)
class BoxStreamKeys:
    """Keys and starting nonces of both box-stream directions."""

    encrypt_key: bytes
    encrypt_nonce: bytes
    decrypt_key: bytes
    decrypt_nonce: bytes


@dataclass(frozen=True)
class HandshakeResult:
    """What a successful handshake yields: the box-stream keys and who is on the other end."""

    keys: BoxStreamKeys
    remote_public_key: bytes
    local_public_key: bytes


@dataclass(frozen=True)
class HandshakeComplete:
    """Event: the handshake succeeded; ``trailing`` holds bytes received after the last handshake message."""

    result: HandshakeResult
    trailing: bytes


class HandshakeState(Enum):
    AWAIT_MSG1 = "await msg1"
    AWAIT_MSG2 = "await msg2"
    AWAIT_MSG3 = "await msg3"
    AWAIT_MSG4 = "await msg4"
    DONE = "done"
    FAILED = "failed"


@dataclass
class _Secrets:
    """Intermediate secrets, filled in as the handshake proceeds."""

    remote_ephemeral: bytes = b""
    ab: bytes = b""
    a_b: bytes = b""  # aB: client ephemeral × server long-term
    secret3: bytes = b""
    hello: bytes = b""  # msg3 plaintext: sig_A || A


def session_keys(network_key: bytes, secrets: _Secrets, local_ephemeral: bytes, local: bytes,
                 remote: bytes) -> BoxStreamKeys:
    """Derive both directions' box-stream keys from the finished handshake."""
    session = sha256(secrets.secret3)
    return BoxStreamKeys(
        encrypt_key=sha256(session + remote),
        encrypt_nonce=network_mac(network_key, secrets.remote_ephemeral)[:24],
        decrypt_key=sha256(session + local),
        decrypt_nonce=network_mac(network_key, local_ephemeral)[:24],
    )


# --- the machines ---


class _Handshake:
    """Shared buffering and table-driven dispatch; subclasses provide ``_steps``."""

    def __init__(self, signing_key: SigningKey, ephemeral: PrivateKey, network_key: bytes,
                 state: HandshakeState) -> None:
        if len(network_key) != 32:
            raise LocalProtocolError(f"network key must be 32 bytes, got {len(network_key)}")
        self.state = state
        self._signing_key = signing_key
        self._public = bytes(signing_key.verify_key)
        self._ephemeral = ephemeral
        self._ephemeral_public = bytes(ephemeral.public_key)
        self._network_key = network_key
        self._secrets = _Secrets()
        self._buffer = bytearray()
        self._outgoing = bytearray()
        self._error: HandshakeError | None = None
        self._remote_public = b""

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes from the peer; nothing is parsed until :meth:`next_event`."""
        self._raise_if_failed()
        if self.state is HandshakeState.DONE:
            raise LocalProtocolError("handshake already complete; later bytes belong to the box-stream")
        self._buffer += data

    def data_to_send(self) -> bytes:
        """Drain the bytes to write to the peer."""
        out = bytes(self._outgoing)
        self._outgoing.clear()
        return out

    def next_event(self) -> HandshakeComplete | None:
        """Run the next step if its message is complete; None means "need more bytes"."""
        self._raise_if_failed()
        step = self._steps().get(self.state)
        if step is None or len(self._buffer) < step[0]:
            return None
        length, handler = step
        message = bytes(self._buffer[:length])
        del self._buffer[:length]
        try:
            handler(message)
        except HandshakeError as exc:
            self.state, self._error = HandshakeState.FAILED, exc
            raise
        if self.state is not HandshakeState.DONE:
            return self.next_event()
        return self._complete()

    def _steps(self) -> dict[HandshakeState, tuple[int, Callable[[bytes], None]]]:
        """The reader table: for each waiting state, the message length and the step that consumes it."""
        raise NotImplementedError

    def _complete(self) -> HandshakeComplete:
        keys = session_keys(self._network_key, self._secrets, self._ephemeral_public, self._public,
                            self._remote_public)
        result = HandshakeResult(keys, remote_public_key=self._remote_public, local_public_key=self._public)
        trailing = bytes(self._buffer)
        self._buffer.clear()
        return HandshakeComplete(result=result, trailing=trailing)

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error


class ClientHandshake(_Handshake):
    """Client role: knows the server's long-term key before connecting.

    Examples:
        >>> server_key, client_key = SigningKey(bytes(32)), SigningKey(bytes([1]) * 32)
        >>> client = ClientHandshake(client_key, bytes(server_key.verify_key), PrivateKey(bytes([2]) * 32))
        >>> server = ServerHandshake(server_key, PrivateKey(bytes([3]) * 32))
        >>> server.receive_data(client.data_to_send()); server.next_event()
        >>> client.receive_data(server.data_to_send()); client.next_event()
        >>> server.receive_data(client.data_to_send()); done_server = server.next_event()
        >>> client.receive_data(server.data_to_send()); done_client = client.next_event()
        >>> done_client.result.keys.encrypt_key == done_server.result.keys.decrypt_key
        True
    """

    def __init__(self, signing_key: SigningKey, server_public_key: bytes, ephemeral: PrivateKey,
                 network_key: bytes = MAIN_NETWORK_KEY) -> None:
        super().__init__(signing_key, ephemeral, network_key, HandshakeState.AWAIT_MSG2)
        if len(server_public_key) != 32:
            raise LocalProtocolError(f"server public key must be 32 bytes, got {len(server_public_key)}")
        self._remote_public = bytes(server_public_key)
        self._outgoing += make_challenge(network_key, self._ephemeral_public)

    def _on_msg2(self, message: bytes) -> None:
        s = self._secrets
        s.remote_ephemeral = open_challenge(self._network_key, message, "msg2")
        s.ab = shared_secret(bytes(self._ephemeral), s.remote_ephemeral, "msg2")
        s.a_b = shared_secret(bytes(self._ephemeral), curve_public(self._remote_public, "msg2"), "msg2")
        signed = self._network_key + self._remote_public + sha256(s.ab)
        s.hello = self._signing_key.sign(signed).signature + self._public
        key = sha256(self._network_key + s.ab + s.a_b)
        self._outgoing += sodium.crypto_secretbox(s.hello, _ZERO_NONCE, key)
        self.state = HandshakeState.AWAIT_MSG4

    def _on_msg4(self, message: bytes) -> None:
        s = self._secrets
        local_curve = bytes(self._signing_key.to_curve25519_private_key())
        b_a = shared_secret(local_curve, s.remote_ephemeral, "msg4")
        s.secret3 = sha256(self._network_key + s.ab + s.a_b + b_a)
        signature = _open_box(message, s.secret3, "msg4")
        _verify(self._remote_public, self._network_key + s.hello + sha256(s.ab), signature, "msg4")
        self.state = HandshakeState.DONE

    def _steps(self) -> dict[HandshakeState, tuple[int, Callable[[bytes], None]]]:
        return {
            HandshakeState.AWAIT_MSG2: (CHALLENGE_LENGTH, self._on_msg2),
            HandshakeState.AWAIT_MSG4: (SERVER_ACCEPT_LENGTH, self._on_msg4),
        }


class ServerHandshake(_Handshake):
    """Server role: learns the client's long-term key from msg3 (``result.remote_public_key``)."""

    def __init__(self, signing_key: SigningKey, ephemeral: PrivateKey,
                 network_key: bytes = MAIN_NETWORK_KEY) -> None:
        super().__init__(signing_key, ephemeral, network_key, HandshakeState.AWAIT_MSG1)

    def _on_msg1(self, message: bytes) -> None:
        s = self._secrets
        s.remote_ephemeral = open_challenge(self._network_key, message, "msg1")
        s.ab = shared_secret(bytes(self._ephemeral), s.remote_ephemeral, "msg1")
        self._outgoing += make_challenge(self._network_key, self._ephemeral_public)
        self.state = HandshakeState.AWAIT_MSG3

    def _on_msg3(self, message: bytes) -> None:
        s = self._secrets
        local_curve = bytes(self._signing_key.to_curve25519_private_key())
        s.a_b = shared_secret(local_curve, s.remote_ephemeral, "msg3")
        s.hello = _open_box(message, sha256(self._network_key + s.ab + s.a_b), "msg3")
        signature, client_public = s.hello[:64], s.hello[64:]
        _verify(client_public, self._network_key + self._public + sha256(s.ab), signature, "msg3")
        self._remote_public = client_public
        b_a = shared_secret(bytes(self._ephemeral), curve_public(client_public, "msg3"), "msg3")
        s.secret3 = sha256(self._network_key + s.ab + s.a_b + b_a)
        accept = self._signing_key.sign(self._network_key + s.hello + sha256(s.ab)).signature
        self._outgoing += sodium.crypto_secretbox(accept, _ZERO_NONCE, s.secret3)
        self.state = HandshakeState.DONE

    def _steps(self) -> dict[HandshakeState, tuple[int, Callable[[bytes], None]]]:
        return {
            HandshakeState.AWAIT_MSG1: (CHALLENGE_LENGTH, self._on_msg1),
            HandshakeState.AWAIT_MSG3: (CLIENT_AUTH_LENGTH, self._on_msg3),
        }
