"""The signing encoding and id of a classic message, fast and bit-exact.

Strategy: orjson writes ``JSON.stringify(v, null, 2)`` byte for byte *except* for a few number forms (integral
floats such as ``1.0`` or ``1e+16``, ``-0.0``, some values below 1e-4, integers beyond 2**53) and it keeps keys
in insertion order where V8 moves array-index keys first. `is_plain` proves, by one walk, that a value holds none
of those; such values are encoded by orjson, all others by the exact `v8_json.stringify`. The hypothesis tests in
tests/core/test_encoding.py check that both routes agree.

For received text the fast route also needs the text itself to be plain: when orjson's compact re-encoding equals
the received bytes, the text held no duplicate keys, no ``-0`` and nothing else the strict parser rejects, so the
orjson parse is the strict parse. Anything else goes through `strict_json.parse_json`. (Scanning the bytes for the
patterns of non-plain numbers and keys instead of walking the value was measured slower: ~8 µs against 2.5 µs for
the walk on a typical message.)

Ids hash the encoding *with* the signature through Node's ``Buffer.from(str, "binary")``: the low byte of each
UTF-16 code unit (ssb-keys test/weird.js). For ASCII text that is the UTF-8 bytes themselves.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson

from ssblab.core import v8_json
from ssblab.core.errors import InvalidJson
from ssblab.core.strict_json import parse_json

_MAX_SAFE_INTEGER = 2**53
_SIGNATURE_ENTRY = b',\n  "signature": '


def is_plain(value: Any) -> bool:
    """True when orjson encodes ``value`` exactly as V8 would (see the module docstring)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str or key[:1].isdigit():
                    return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int:
            if not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
                return False
        elif kind is float:
            if item.is_integer() or not 1e-4 <= abs(item) < 1e15:
                return False
        else:
            return False
    return True


def encode(value: Any, *, plain: bool | None = None) -> bytes:
    """``JSON.stringify(value, null, 2)`` as UTF-8 bytes; ``plain`` skips the walk when `decode` proved it.

    Raises:
        InvalidJson: the value nests deeper than Python's recursion allows (~490 levels; V8 goes further, but no
            real message comes near it: a message has at most 8192 characters).
    """
    if plain or (plain is None and is_plain(value)):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2)
        except orjson.JSONEncodeError:
            pass  # a lone surrogate, which V8 escapes and orjson refuses, or nesting past orjson's 254 levels
    return _exact(value, indent=2)


def _exact(value: Any, indent: int) -> bytes:
    try:
        return v8_json.stringify(value, indent=indent).encode("utf-8", "surrogatepass")
    except RecursionError:
        raise InvalidJson("the value is nested too deeply to serialize", code="json-depth") from None


def encode_compact(value: Any) -> bytes:
    """``JSON.stringify(value)`` as UTF-8 bytes (the transport form, and private-box plaintext)."""
    if is_plain(value):
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            pass
    return _exact(value, indent=0)


def decode(raw: bytes | str) -> tuple[Any, bool]:
    """Parse received JSON strictly; also say whether the value is plain (so `encode` may skip its walk).

    Raises:
        InvalidJson: the text breaks SSB's JSON rules.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw if type(raw) is bytes else bytes(raw)
    data = data.strip()
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        try:
            if orjson.dumps(value) == data and is_plain(value):
                return value, True
        except orjson.JSONEncodeError:
            pass  # nested past orjson's 254 levels: the strict path decides
    return parse_json(data), False


def utf16_length(encoded: bytes) -> int:
    """``str.length`` in JavaScript of the UTF-8 text ``encoded``."""
    if encoded.isascii():
        return len(encoded)
    return len(encoded.decode("utf-8", "surrogatepass").encode("utf-16-le", "surrogatepass")) // 2


def latin1_hash(encoded: bytes) -> bytes:
    """sha256 over ``Buffer.from(text, "binary")``: the low byte of each UTF-16 code unit of the text."""
    if encoded.isascii():
        return hashlib.sha256(encoded).digest()
    units = encoded.decode("utf-8", "surrogatepass").encode("utf-16-le", "surrogatepass")
    return hashlib.sha256(units[0::2]).digest()


def message_id_of(encoded: bytes) -> str:
    """The ``%….sha256`` id of a message from its encoding with the signature."""
    return "%" + base64.b64encode(latin1_hash(encoded)).decode() + ".sha256"


def strip_signature(encoded: bytes) -> bytes | None:
    """The signing bytes: the encoding without its last entry, when that entry is the top-level signature.

    Inside strings a newline is always escaped, so ``,\\n  "signature": `` (two spaces) can only be the
    top-level key; nested keys are indented further.
    """
    at = encoded.rfind(_SIGNATURE_ENTRY)
    if at < 0 or encoded.find(b"\n", at + len(_SIGNATURE_ENTRY)) != len(encoded) - 2:
        return None
    return encoded[:at] + b"\n}"
