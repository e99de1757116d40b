"""The signing encoding and id of a classic message, fast and bit-exact.

Strategy: orjson writes ``JSON.stringify(v, null, 2)`` byte for byte *except* for a few number forms (integral
floats such as ``1.0`` or ``1e+16``, ``-0.0``, some values below 1e-4, integers beyond 2**53) and it keeps keys
in insertion order where V8 moves array-index keys first. `is_plain` proves, by one walk, that a value holds none
of those; such values are encoded by orjson, all others by the exact `v8_json.stringify`. The hypothesis tests in
tests/core/test_encoding.py check that both routes agree.

For received text the fast route also needs the text itself to be plain: when orjson's compact or indented
re-encoding equals the received bytes, the text held no duplicate keys, no ``-0`` and nothing else the strict
parser rejects, so the orjson parse is the strict parse. Anything else goes through `strict_json.parse_json_js`:
the verification path reads what JS reads (lone surrogates, duplicate keys, ``-0``, overflowing numbers) and
`decode` returns the strict rule the text broke as a finding for the caller to report.
`decode_encoded` returns the indented encoding with the value, and skips the compact one when the text already
is the indented form (an archive's or a store's signed encodings). (Scanning the bytes with regular expressions
for non-plain numbers and keys instead of walking the value was measured slower: ~5 µs for even one simple
pattern against ~2 µs for the whole walk on a typical message.) Where the compiled `_speedups` is built,
`_speedups.v8_indent` does that proof and writes the indented encoding in one pass over the received text, with
no walk and no re-encoding; the value still comes from orjson.

Ids hash the encoding *with* the signature through Node's ``Buffer.from(str, "binary")``: the low byte of each
UTF-16 code unit (ssb-keys test/weird.js). For ASCII text that is the UTF-8 bytes themselves, and for text up to
U+00FF its latin-1 encoding; `_speedups.message_id` takes the low bytes straight from the UTF-8 and hashes
them with its own SHA-256 (ssblab/_c/sha256.c), since a hashlib call costs as much as the hashing.
"""

from __future__ import annotations

import re
from binascii import b2a_base64
from collections.abc import Iterable
from hashlib import sha256 as _sha256
from types import ModuleType
from typing import Any

import orjson

from ssblab.core import v8_json
from ssblab.core.compiled import SWITCH, Route, route
from ssblab.core.errors import InvalidJson
from ssblab.core.strict_json import parse_json_js

__all__ = [
    "decode",
    "decode_encoded",
    "encode",
    "encode_compact",
    "has_lone_surrogate",
    "is_plain",
    "latin1_hash",
    "message_id_of",
    "strip_signature",
    "utf16_length",
    "well_formed",
]

_MAX_SAFE_INTEGER = 2**53
_DIGITS = frozenset("0123456789")
_INDENT_2 = orjson.OPT_INDENT_2
_JSON_SPACE = b" \t\n\r"
_SIGNATURE_ENTRY = b',\n  "signature": '


def is_plain(value: Any) -> bool:
    """True when orjson encodes ``value`` exactly as V8 would (see the module docstring)."""
    try:
        return _is_plain_list((value,))
    except RecursionError:
        return False  # nested past Python's limit: the exact encoder reports the depth


# Why two mutually recursive loops rather than one walk with a stack: every value is classified inline, and
# the common leaves (strings) cost one type check; measured 30 % faster than the stack walk on typical messages.
def _is_plain_dict(obj: dict[Any, Any]) -> bool:
    try:
        # Keys that may be array indices (which V8 moves first) start with a digit; when the least key starts
        # above "9", none does (one C-level pass instead of a check per key).
        if obj and min(obj)[:1] <= "9" and any(key[:1] in _DIGITS for key in obj):
            return False
    except TypeError:
        return False  # a key that is not a string
    return _is_plain_list(obj.values())


def _is_plain_list(items: Iterable[Any]) -> bool:
    for item in items:
        kind = type(item)
        if kind is str:
            continue
        if kind is dict:
            if not _is_plain_dict(item):
                return False
        elif kind is list:
            if not _is_plain_list(item):
                return False
        elif kind is int:
            if not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
                return False
        elif kind is float:
            if item.is_integer() or not 1e-4 <= abs(item) < 1e15:
                return False
        elif not (item is None or kind is bool):
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
            return orjson.dumps(value, option=_INDENT_2)
        except orjson.JSONEncodeError:
            pass  # a lone surrogate, which V8 escapes and orjson refuses, or nesting past orjson's 254 levels
    return _exact(value, indent=2)


def _exact(value: Any, indent: int) -> bytes:
    try:
        return v8_json.stringify(value, indent=indent).encode("utf-8", "surrogatepass")
    except RecursionError:
        raise InvalidJson("the value is nested too deeply to serialize", code="json-depth") from None


def encode_compact(value: Any, *, plain: bool | None = None) -> bytes:
    """``JSON.stringify(value)`` as UTF-8 bytes (the transport form, and private-box plaintext); ``plain`` skips
    the walk when the caller already knows (as `encode`)."""
    if plain or (plain is None and is_plain(value)):
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            pass
    return _exact(value, indent=0)


def decode(raw: bytes | str, *, compiled: Route = SWITCH) -> tuple[Any, bool, InvalidJson | None]:
    """Parse received JSON as JS does; also say whether the value is plain (so `encode` may skip its walk) and
    which strict rule, if any, the text breaks (a finding, not an error: JS peers accept such text).

    Raises:
        InvalidJson: text that JavaScript rejects too.
    """
    data = _stripped(raw)
    value, _ = _plain_parse(data, indent=False, compiled=route(compiled))
    if value is _NOT_PLAIN:
        value, finding = parse_json_js(data)
        return value, False, finding
    return value, True, None


def decode_encoded(raw: bytes | str, *, compiled: Route = SWITCH) -> tuple[Any, bytes]:
    """`decode` and `encode` in one: the value and its ``JSON.stringify(value, null, 2)`` bytes.

    When the received text already is that encoding (an archive, a store of signed encodings), equality with it
    is the strictness proof and the compact re-encoding is skipped. Text the strict rules refuse and JS reads
    (a lone surrogate, say) is read as JS reads it.

    Raises:
        InvalidJson: text that JavaScript rejects too.
    """
    data = _stripped(raw)
    value, encoded = _plain_parse(data, indent=True, compiled=route(compiled))
    if value is _NOT_PLAIN:
        value, _ = parse_json_js(data)
        return value, encode(value)
    return value, encoded


_NOT_PLAIN = object()


def _stripped(raw: bytes | str) -> bytes:
    data = raw if type(raw) is bytes else raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    return data.strip(_JSON_SPACE)  # bytes.strip() would also drop \x0b and \x0c, which JSON does not allow


def _plain_parse(data: bytes, *, indent: bool, compiled: ModuleType | None) -> tuple[Any, bytes]:
    """(orjson's value of ``data``, its indented encoding if asked for) when that value provably is the strict
    parse and plain; ``_NOT_PLAIN`` in place of the value otherwise.

    orjson accepts duplicate keys (keeping the last) and ``-0``; when one of its own re-encodings of the value
    equals the text, the text held neither. The compiled pass proves the same of the text itself.
    """
    if compiled is not None:
        encoded = compiled.v8_indent(data)
        if encoded is None:
            return _NOT_PLAIN, b""
        try:
            return orjson.loads(data), encoded
        except orjson.JSONDecodeError:  # cannot happen for text the pass proved strict; the strict path decides
            return _NOT_PLAIN, b""
    try:
        value = orjson.loads(data)
        if not (_is_plain_dict(value) if type(value) is dict else _is_plain_list((value,))):
            return _NOT_PLAIN, b""
        encoded = orjson.dumps(value, option=_INDENT_2) if indent else b""
        if encoded == data or orjson.dumps(value) == data:
            return value, encoded
    except (orjson.JSONDecodeError, orjson.JSONEncodeError, RecursionError):
        pass  # not JSON, or nested past orjson's 254 levels or Python's recursion: the strict path decides
    return _NOT_PLAIN, b""


_ESCAPED_SURROGATE = re.compile(rb"(?<!\\)(?:\\\\)*\\ud[89a-f]")  # V8 escapes a lone surrogate as \udxxx


def has_lone_surrogate(encoded: bytes) -> bool:
    """Whether an encoding (`encode`'s output) holds a string with a lone surrogate: V8 escapes those, and
    only those, as ``\\ud800``-``\\udfff`` (an escaped backslash before ``ud…`` is text)."""
    return b"\\ud" in encoded and _ESCAPED_SURROGATE.search(encoded) is not None


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as JavaScript's ``toWellFormed`` (and Node, when it
    writes a string as UTF-8): what an Arrow or Parquet string column can hold."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf16_length(encoded: bytes) -> int:
    """``str.length`` in JavaScript of the UTF-8 text ``encoded``."""
    if encoded.isascii():
        return len(encoded)
    return len(encoded.decode("utf-8", "surrogatepass").encode("utf-16-le", "surrogatepass")) // 2


def latin1_hash(encoded: bytes, *, compiled: Route = SWITCH) -> bytes:
    """sha256 over ``Buffer.from(text, "binary")``: the low byte of each UTF-16 code unit of the text.

    ASCII text is its own latin1 form, and text up to U+00FF encodes to latin-1 directly (one unit, one byte).
    """
    ext = route(compiled)
    if ext is not None:
        return ext.binary_sha256(encoded)  # type: ignore[no-any-return]
    if not encoded.isascii():
        text = encoded.decode("utf-8", "surrogatepass")
        try:
            encoded = text.encode("latin-1")
        except UnicodeEncodeError:
            encoded = text.encode("utf-16-le", "surrogatepass")[0::2]
    return _sha256(encoded).digest()


def message_id_of(encoded: bytes, *, compiled: Route = SWITCH) -> str:
    """The ``%….sha256`` id of a message from its encoding with the signature."""
    ext = route(compiled)
    if ext is not None:
        return ext.message_id(encoded)  # type: ignore[no-any-return]
    return f"%{b2a_base64(latin1_hash(encoded, compiled=None), newline=False).decode()}.sha256"


def strip_signature(encoded: bytes) -> bytes | None:
    """The signing bytes: the encoding without its last entry, when that entry is the top-level signature.

    Inside strings a newline is always escaped, so ``,\\n  "signature": `` (two spaces) can only be the
    top-level key; nested keys are indented further.
    """
    at = encoded.rfind(_SIGNATURE_ENTRY)
    if at < 0 or encoded.find(b"\n", at + len(_SIGNATURE_ENTRY)) != len(encoded) - 2:
        return None
    return encoded[:at] + b"\n}"
