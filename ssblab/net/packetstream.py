"""Packet-stream codec: the framing muxrpc uses inside the box-stream.

Strategy: a 9-byte header ``flags(u8) | body_length(u32be) | request(i32be)`` then the body (protocol guide
"RPC protocol"; packet-stream-codec). Flags: bit 3 = stream, bit 2 = end/error, bits 0-1 = body type (0
binary, 1 UTF-8 string, 2 JSON). Nine zero bytes are the goodbye. The decoder is a buffer plus
``next_event``; it returns None until a whole packet is there, so the bytes can arrive in any split.

Invariants: unknown flag bits, body type 3, a body over ``max_body_length`` and bytes after the goodbye
raise :class:`PacketStreamError`; the decoder never yields a partial packet.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from ssblab.net.errors import PacketStreamError

__all__ = [
    "DEFAULT_MAX_BODY_LENGTH", "GOODBYE", "HEADER_LENGTH", "BodyType", "Packet", "PacketStreamDecoder",
    "PacketStreamGoodbye", "encode_packet",
]

HEADER_LENGTH = 9
GOODBYE = bytes(HEADER_LENGTH)
DEFAULT_MAX_BODY_LENGTH = 2**24
_HEADER = struct.Struct(">BIi")
_STREAM_FLAG = 0b1000
_END_FLAG = 0b0100
_TYPE_MASK = 0b0011


class BodyType(IntEnum):
    BINARY = 0
    UTF8 = 1
    JSON = 2


@dataclass(frozen=True)
class Packet:
    """One packet-stream frame; ``body`` stays raw so signed JSON can be checked byte for byte."""

    request: int
    body: bytes
    body_type: BodyType = BodyType.JSON
    stream: bool = False
    end: bool = False


@dataclass(frozen=True)
class PacketStreamGoodbye:
    """Event: the peer sent the 9-zero-byte goodbye header."""


def encode_packet(packet: Packet) -> bytes:
    """Header and body of one packet.

    Examples:
        >>> encode_packet(Packet(request=1, body=b"true", stream=True, end=True)).hex()
        '0e000000040000000174727565'
    """
    flags = (_STREAM_FLAG if packet.stream else 0) | (_END_FLAG if packet.end else 0) | packet.body_type
    return _HEADER.pack(flags, len(packet.body), packet.request) + packet.body


class PacketStreamDecoder:
    """Buffers bytes and cuts them into packets."""

    def __init__(self, max_body_length: int = DEFAULT_MAX_BODY_LENGTH) -> None:
        self._buffer = bytearray()
        self._max_body_length = max_body_length
        self.closed = False

    @property
    def buffered(self) -> int:
        """Bytes received and not yet cut into packets (a partly sent packet): what a shell budgets."""
        return len(self._buffer)

    def discard(self) -> None:
        """Drop whatever is buffered (the connection is gone): a half-sent 16 MiB packet is freed at once rather
        than when the garbage collector reaches the connection's reference cycles."""
        self._buffer = bytearray()
        self.closed = True

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes; nothing is parsed until :meth:`next_event`."""
        if self.closed and data:
            raise PacketStreamError("packet-stream: data after goodbye")
        self._buffer += data

    def next_event(self) -> Packet | PacketStreamGoodbye | None:
        """The next packet, the goodbye, or None when more bytes are needed."""
        if self.closed:
            if self._buffer:
                raise PacketStreamError("packet-stream: data after goodbye")
            return None
        if len(self._buffer) < HEADER_LENGTH:
            return None
        flags, length, request = _HEADER.unpack_from(self._buffer)
        if flags == 0 and length == 0 and request == 0:
            del self._buffer[:HEADER_LENGTH]
            self.closed = True
            return self.next_event() or PacketStreamGoodbye()
        body_type = self._check_header(flags, length)
        if len(self._buffer) < HEADER_LENGTH + length:
            return None
        body = bytes(self._buffer[HEADER_LENGTH:HEADER_LENGTH + length])
        del self._buffer[:HEADER_LENGTH + length]
        return Packet(request=request, body=body, body_type=body_type,
                      stream=bool(flags & _STREAM_FLAG), end=bool(flags & _END_FLAG))

    def _check_header(self, flags: int, length: int) -> BodyType:
        if flags & ~(_STREAM_FLAG | _END_FLAG | _TYPE_MASK):
            raise PacketStreamError(f"packet-stream: unknown flag bits in {flags:#04x}")
        if flags & _TYPE_MASK == 3:
            raise PacketStreamError("packet-stream: body type 3 is undefined (0 binary, 1 utf8, 2 json)")
        if length > self._max_body_length:
            raise PacketStreamError(f"packet-stream: body length {length} exceeds {self._max_body_length}")
        return BodyType(flags & _TYPE_MASK)
