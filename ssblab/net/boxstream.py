"""Box-stream: the encrypted, authenticated framing that carries everything after the secret handshake.

Strategy: an encoder and a decoder, each owning one direction's key and 24-byte nonce. Each packet is a
34-byte header ``secretbox(u16be body_length || body_mac, N)`` followed by the body
``secretbox_detached(plain, N+1)``; the next packet uses N+2 (protocol guide "Box stream"; pull-box-stream).
The goodbye is a header whose plaintext is 18 zero bytes. The nonce is a 192-bit big-endian counter that
wraps.

Invariants: a body never exceeds 4096 bytes (longer writes are split); the decoder authenticates the header
before trusting the length, so a tampered stream raises :class:`BoxStreamError` and never yields bytes;
nothing is returned after the goodbye, and bytes after the goodbye are a protocol error.
"""

from __future__ import annotations

from dataclasses import dataclass

import nacl.bindings as sodium
import nacl.exceptions

from ssblab.net.errors import BoxStreamError, LocalProtocolError

__all__ = [
    "HEADER_LENGTH", "MAC_LENGTH", "MAX_BODY_LENGTH", "BoxStreamDecoder", "BoxStreamEncoder", "BoxStreamGoodbye",
    "increment_nonce",
]

HEADER_LENGTH = 34
MAC_LENGTH = 16
MAX_BODY_LENGTH = 4096
_NONCE_SPACE = 2**192
_GOODBYE_PLAIN = bytes(18)


@dataclass(frozen=True)
class BoxStreamGoodbye:
    """Event: the peer ended the box-stream cleanly."""


def increment_nonce(nonce: bytes, by: int = 1) -> bytes:
    """Add to a 24-byte big-endian counter, wrapping like the JS reference."""
    return ((int.from_bytes(nonce, "big") + by) % _NONCE_SPACE).to_bytes(24, "big")


def _check_key(key: bytes, nonce: bytes) -> None:
    if len(key) != 32 or len(nonce) != 24:
        raise LocalProtocolError(f"box-stream needs a 32-byte key and 24-byte nonce, got {len(key)}, {len(nonce)}")


class BoxStreamEncoder:
    """Encrypts one direction; ``encode`` returns wire bytes for any amount of plaintext."""

    def __init__(self, key: bytes, nonce: bytes) -> None:
        _check_key(key, nonce)
        self._key = key
        self._nonce = nonce
        self.closed = False

    def encode(self, data: bytes) -> bytes:
        """Split ``data`` into bodies of at most 4096 bytes and box each one."""
        if self.closed:
            raise LocalProtocolError("box-stream: cannot write after goodbye")
        chunks = (data[i:i + MAX_BODY_LENGTH] for i in range(0, len(data), MAX_BODY_LENGTH))
        return b"".join(self._packet(chunk) for chunk in chunks)

    def goodbye(self) -> bytes:
        """The final header (18 zero bytes boxed); the encoder refuses data afterwards."""
        if self.closed:
            raise LocalProtocolError("box-stream: goodbye already sent")
        self.closed = True
        return sodium.crypto_secretbox(_GOODBYE_PLAIN, self._nonce, self._key)

    def _packet(self, chunk: bytes) -> bytes:
        body_nonce = increment_nonce(self._nonce)
        boxed_body = sodium.crypto_secretbox(chunk, body_nonce, self._key)
        body_mac, body = boxed_body[:MAC_LENGTH], boxed_body[MAC_LENGTH:]
        header = sodium.crypto_secretbox(len(chunk).to_bytes(2, "big") + body_mac, self._nonce, self._key)
        self._nonce = increment_nonce(body_nonce)
        return header + body


class BoxStreamDecoder:
    """Decrypts one direction: ``receive_data`` buffers, ``next_event`` yields plaintext bodies.

    Examples:
        >>> key, nonce = bytes(32), bytes(24)
        >>> decoder = BoxStreamDecoder(key, nonce)
        >>> encoder = BoxStreamEncoder(key, nonce)
        >>> decoder.receive_data(encoder.encode(b"hello") + encoder.goodbye())
        >>> decoder.next_event(), decoder.next_event(), decoder.next_event()
        (b'hello', BoxStreamGoodbye(), None)
    """

    def __init__(self, key: bytes, nonce: bytes) -> None:
        _check_key(key, nonce)
        self._key = key
        self._nonce = nonce
        self._buffer = bytearray()
        self._header: tuple[int, bytes] | None = None
        self.closed = False

    def receive_data(self, data: bytes) -> None:
        """Buffer ciphertext; raises once the goodbye has been read and more bytes come."""
        if self.closed and data:
            raise BoxStreamError("box-stream: data after goodbye")
        self._buffer += data

    def next_event(self) -> bytes | BoxStreamGoodbye | None:
        """One decrypted body, the goodbye, or None when more bytes are needed."""
        if self.closed:
            if self._buffer:
                raise BoxStreamError("box-stream: data after goodbye")
            return None
        if self._header is None:
            if len(self._buffer) < HEADER_LENGTH:
                return None
            header = self._open_header(bytes(self._buffer[:HEADER_LENGTH]))
            del self._buffer[:HEADER_LENGTH]
            if header is None:
                self.closed = True
                return self.next_event() or BoxStreamGoodbye()
            self._header = header
        return self._read_body(*self._header)

    def _open_header(self, boxed: bytes) -> tuple[int, bytes] | None:
        try:
            plain = sodium.crypto_secretbox_open(boxed, self._nonce, self._key)
        except nacl.exceptions.CryptoError as exc:
            raise BoxStreamError("box-stream: header does not authenticate (tampered or wrong key)") from exc
        if plain == _GOODBYE_PLAIN:
            return None
        length = int.from_bytes(plain[:2], "big")
        if length > MAX_BODY_LENGTH:
            raise BoxStreamError(f"box-stream: body length {length} exceeds {MAX_BODY_LENGTH}")
        return length, plain[2:]

    def _read_body(self, length: int, body_mac: bytes) -> bytes | None:
        if len(self._buffer) < length:
            return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        self._header = None
        body_nonce = increment_nonce(self._nonce)
        try:
            plain = sodium.crypto_secretbox_open(body_mac + body, body_nonce, self._key)
        except nacl.exceptions.CryptoError as exc:
            raise BoxStreamError("box-stream: body does not authenticate (tampered or reordered)") from exc
        self._nonce = increment_nonce(body_nonce)
        return plain
