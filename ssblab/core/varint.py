"""Unsigned LEB128 varints: seven bits a byte, low bits first, the high bit set on every byte but the last."""

from __future__ import annotations

from ssblab.core.errors import UsageError

__all__ = ["encode_uvarint"]


def encode_uvarint(n: int) -> bytes:
    """The LEB128 bytes of ``n`` (>= 0); callers bound ``n`` to what their format allows.

    Raises:
        UsageError: ``n`` is negative.

    Examples:
        >>> encode_uvarint(0), encode_uvarint(300)
        (b'\\x00', b'\\xac\\x02')
    """
    if n < 0:
        raise UsageError(f"a uvarint is not negative, got {n}")
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
