"""BIPF (binary in-place format), the record encoding of ssb-db2's ``log.bipf`` and of buttwoo messages.

Strategy (bipf-spec; npm ``bipf`` 1.9 is the reference): every value is ``varint(length << 3 | type)`` then
``length`` bytes; types are string (UTF-8), buffer, int (int32 LE), double (float64 LE), array, object
(alternating string keys and values), boolnull (no byte: null; one byte 0/1: false/true; 2: undefined) and 7,
reserved. `encode` picks types as JS does: an integer within ±(2**31 - 1) is an int, any other finite number a
double, and objects keep their key order.

Invariants: `decode` never reads past the end of what it was given and raises `BipfError` naming the offset for
anything it cannot read (a length past the end, the reserved type, a non-string key, a bad boolnull); decoding
gives what ``JSON.parse(JSON.stringify(bipf.decode(b)))`` would, except that buffers stay ``bytes``: an
``undefined`` is dropped from objects and is null in arrays, invalid UTF-8 becomes U+FFFD as in Node, and an
integral double (JS has one number type) is an ``int``, so ``1600000000000`` takes the fast encoding routes.
"""

from __future__ import annotations

import struct
from typing import Any

from ssblab.core.errors import SsbError
from ssblab.core.v8_json import v8_key_order

__all__ = [
    "ARRAY",
    "BOOLNULL",
    "BUFFER",
    "DOUBLE",
    "INT",
    "OBJECT",
    "RESERVED",
    "STRING",
    "BipfError",
    "decode",
    "encode",
    "read_tag",
]

STRING, BUFFER, INT, DOUBLE, ARRAY, OBJECT, BOOLNULL, RESERVED = range(8)
_INT32 = struct.Struct("<i")
_DOUBLE = struct.Struct("<d")
_INT_LIMIT = 2**31 - 1  # bipf's getType: Math.abs(value) <= 2147483647
_SAFE = 2**53
_UNDEFINED = object()


class BipfError(SsbError):
    """Bytes that are not BIPF; the message names the offset."""

    code = "bipf"


def read_tag(data: bytes, at: int, end: int) -> tuple[int, int, int]:
    """(type, length, offset of the value) of the tag at ``at``; the value must end by ``end``."""
    tag = shift = 0
    pos = at
    while True:
        if pos >= end:
            raise BipfError(f"BIPF tag at offset {at} runs past the end ({end})")
        byte = data[pos]
        pos += 1
        tag |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
        if shift > 28:
            raise BipfError(f"BIPF tag at offset {at} is longer than 5 bytes")
    length = tag >> 3
    if pos + length > end:
        raise BipfError(f"BIPF value at offset {at} has length {length}, past the end ({end})")
    return tag & 7, length, pos


def decode(data: bytes, start: int = 0, end: int | None = None) -> Any:
    """The value encoded at ``start`` (it must fit before ``end``, default the end of ``data``).

    Examples:
        >>> decode(bytes.fromhex("3518666f6f0e01"))
        {'foo': True}
    """
    value = _value(data, start, len(data) if end is None else end)
    return None if value is _UNDEFINED else value


def _value(data: bytes, at: int, end: int) -> Any:
    kind, length, pos = read_tag(data, at, end)
    stop = pos + length
    if kind == STRING:
        return data[pos:stop].decode("utf-8", "replace")
    if kind == OBJECT:
        return _object(data, pos, stop)
    if kind == INT:
        if length != 4:
            raise BipfError(f"BIPF int at offset {at} has {length} bytes, not 4")
        return _INT32.unpack_from(data, pos)[0]
    if kind == ARRAY:
        items = []
        while pos < stop:
            item = _value(data, pos, stop)
            items.append(None if item is _UNDEFINED else item)
            pos = _next(data, pos, stop)
        return items
    if kind == DOUBLE:
        if length != 8:
            raise BipfError(f"BIPF double at offset {at} has {length} bytes, not 8")
        number: float = _DOUBLE.unpack_from(data, pos)[0]
        return int(number) if number.is_integer() and -_SAFE <= number <= _SAFE else number
    if kind == BUFFER:
        return data[pos:stop]
    if kind == BOOLNULL:
        if length == 0:
            return None
        if length > 1 or data[pos] > 2:
            raise BipfError(f"BIPF boolnull at offset {at} is not null, false, true or undefined")
        return (False, True, _UNDEFINED)[data[pos]]
    raise BipfError(f"BIPF value at offset {at} has the reserved type 7")


def _next(data: bytes, at: int, end: int) -> int:
    _, length, pos = read_tag(data, at, end)
    return pos + length


def _object(data: bytes, pos: int, stop: int) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    while pos < stop:
        kind, length, key_at = read_tag(data, pos, stop)
        if kind != STRING:
            raise BipfError(f"BIPF object key at offset {pos} is not a string (type {kind})")
        key = data[key_at:key_at + length].decode("utf-8", "replace")
        pos = key_at + length
        value = _value(data, pos, stop)
        if value is _UNDEFINED:
            obj.pop(key, None)  # JSON.stringify drops an undefined property
        else:
            obj[key] = value
        pos = _next(data, pos, stop)
    return obj


def encode(value: Any) -> bytes:
    """``bipf.allocAndEncode(value)`` for JSON-like values (and ``bytes`` as buffers).

    Examples:
        >>> encode({"foo": True}).hex()
        '3518666f6f0e01'
    """
    out = bytearray()
    _write(value, out)
    return bytes(out)


def _write(value: Any, out: bytearray) -> None:
    if isinstance(value, str):
        _put(out, STRING, value.encode("utf-8", "replace"))  # Node writes U+FFFD for a lone surrogate
    elif isinstance(value, bytes | bytearray | memoryview):
        _put(out, BUFFER, bytes(value))
    elif value is None or isinstance(value, bool):
        _put(out, BOOLNULL, b"" if value is None else bytes([value]))
    elif isinstance(value, int) and -_INT_LIMIT <= value <= _INT_LIMIT:
        _put(out, INT, _INT32.pack(value))
    elif isinstance(value, float) and value.is_integer() and -_INT_LIMIT <= value <= _INT_LIMIT:
        _put(out, INT, _INT32.pack(int(value)))  # JS has one number type: 2.0 is the integer 2
    elif isinstance(value, int | float):
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            raise BipfError(f"BIPF cannot encode {value!r} (bipf throws 'unknown type')")
        _put(out, DOUBLE, _DOUBLE.pack(number))
    elif isinstance(value, list | tuple):
        body = bytearray()
        for item in value:
            _write(item, body)
        _put(out, ARRAY, body)
    elif isinstance(value, dict):
        body = bytearray()
        for key in v8_key_order(list(value)):  # ``for (k in o)``: array-index keys first, as V8 enumerates
            _put(body, STRING, str(key).encode("utf-8", "replace"))
            _write(value[key], body)
        _put(out, OBJECT, body)
    else:
        raise BipfError(f"BIPF cannot encode a {type(value).__name__}")


def _put(out: bytearray, kind: int, body: bytes | bytearray) -> None:
    tag = len(body) << 3 | kind
    while tag >= 0x80:
        out.append(tag & 0x7F | 0x80)
        tag >>= 7
    out.append(tag)
    out += body
