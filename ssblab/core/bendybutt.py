"""Bendy Butt (meta feeds): bencode messages ``[[author, sequence, previous, timestamp, contentSection], sig]``.

Strategy (bendy-butt-spec; npm ``ssb-bendy-butt`` 1.0 is the reference): a message is verified from its native
bytes, as ssb-bendy-butt's ``validate`` does: the shape, at most 8192 bytes, a ``bendybutt-v1`` author, a
content section ``[content dict, content signature]`` (or an encrypted BFE string), and the author's ed25519
signature (with the network's HMAC key, if any) over the bencoded payload. Its id is the sha256 of the native
bytes, ``ssb:message/bendybutt-v1/…``. ssb-db2 keeps the JS value (``fromNativeMsg``); `to_native` rebuilds the
bytes from it as ``toNativeMsg`` does, so a stored value is verified bit-exact. The feed chain (sequence,
previous) is `native.validate_chain`'s.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from ssblab.core import bfe, ed25519
from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.native import NativeMessage

__all__ = ["FORMAT", "SIZE_LIMIT", "bdecode", "bencode", "message_id", "to_native", "verify"]

FORMAT = "bendybutt-v1"
SIZE_LIMIT = 8192  # bytes of the native message
_SIGNATURE = b"\x04\x00"
_AUTHOR = b"\x00\x03"
_PREVIOUS = b"\x01\x04"


def bencode(value: Any) -> bytes:
    """bencode (npm ``bencode`` 2): dict keys sorted, ``None`` entries skipped, bools as integers."""
    out: list[bytes] = []
    _bencode(value, out)
    return b"".join(out)


def _bencode(value: Any, out: list[bytes]) -> None:
    if isinstance(value, bytes):
        out += [b"%d:" % len(value), value]
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        out += [b"%d:" % len(data), data]
    elif isinstance(value, bool | int):
        out.append(b"i%de" % int(value))
    elif isinstance(value, list):
        out.append(b"l")
        for item in value:
            _bencode(item, out)
        out.append(b"e")
    elif isinstance(value, dict):
        out.append(b"d")
        for key in sorted(value):  # JS sorts by UTF-16 units; keys here are the ASCII names of message fields
            if value[key] is not None:
                _bencode(key, out)
                _bencode(value[key], out)
        out.append(b"e")
    elif value is not None:
        raise InvalidMessage(Rule.JSON, f"bencode has no encoding for {value!r:.60}")


def bdecode(data: bytes) -> Any:
    """Strict bencode: the whole input is one value; dict keys are text, byte strings stay bytes."""
    value, end = _bdecode(data, 0)
    if end != len(data):
        raise InvalidMessage(Rule.JSON, f"bencode: {len(data) - end} bytes after the value at offset {end}")
    return value


def _bdecode(data: bytes, at: int) -> tuple[Any, int]:
    if at >= len(data):
        raise InvalidMessage(Rule.JSON, f"bencode ends early at offset {at}")
    head = data[at:at + 1]
    if head == b"i":
        end = data.find(b"e", at)
        try:
            return int(data[at + 1:end]), end + 1
        except ValueError:
            raise InvalidMessage(Rule.JSON, f"bencode: bad integer at offset {at}") from None
    if head in (b"l", b"d"):
        items, pos = [], at + 1
        while data[pos:pos + 1] != b"e":
            item, pos = _bdecode(data, pos)
            items.append(item)
        if head == b"l":
            return items, pos + 1
        keys = items[0::2]
        if len(items) % 2 or not all(isinstance(k, bytes) for k in keys):
            raise InvalidMessage(Rule.JSON, f"bencode: bad dictionary at offset {at}")
        return {k.decode("utf-8", "replace"): v for k, v in zip(keys, items[1::2], strict=True)}, pos + 1
    colon = data.find(b":", at)
    if colon < 0 or not data[at:colon].isdigit():
        raise InvalidMessage(Rule.JSON, f"bencode: no value at offset {at}")
    end = colon + 1 + int(data[at:colon])
    if end > len(data):
        raise InvalidMessage(Rule.JSON, f"bencode: a string at offset {at} runs past the end")
    return data[colon + 1:end], end


def message_id(native: bytes) -> str:
    return f"ssb:message/{FORMAT}/{base64.urlsafe_b64encode(hashlib.sha256(native).digest()).decode()}"


def verify(native: bytes, hmac_key: bytes | None = None) -> NativeMessage:
    """Check one native message alone (shape, size, author, content section, signature).

    Raises:
        InvalidMessage: naming the rule that failed.
    """
    if len(native) > SIZE_LIMIT:
        raise InvalidMessage(Rule.SIZE, f"bendy-butt message is {len(native)} bytes, over {SIZE_LIMIT}")
    top = bdecode(native)
    if not (isinstance(top, list) and len(top) == 2 and isinstance(top[0], list) and len(top[0]) == 5):
        raise InvalidMessage(Rule.ORDER, "bendy-butt message must be [[author, sequence, previous, timestamp, "
                             "contentSection], signature]")
    (author, sequence, previous, timestamp, section), signature = top
    if not (isinstance(author, bytes) and author[:2] == _AUTHOR and len(author) == 34):
        raise InvalidMessage(Rule.AUTHOR, "bendy-butt author must be a bendybutt-v1 feed")
    if not (isinstance(sequence, int) and sequence >= 1 and isinstance(timestamp, int) and timestamp >= 0):
        raise InvalidMessage(Rule.SEQUENCE, f"bad sequence {sequence!r} or timestamp {timestamp!r}")
    if not (previous == bfe.NIL or (isinstance(previous, bytes) and previous[:2] == _PREVIOUS and len(previous) == 34)):
        raise InvalidMessage(Rule.PREVIOUS, "previous must be nil or a bendybutt-v1 message id")
    _check_section(section)
    if not (isinstance(signature, bytes) and signature[:2] == _SIGNATURE and len(signature) == 66):
        raise InvalidMessage(Rule.SIGNATURE_FORMAT, "signature must be a BFE ed25519 signature")
    signed = _hmac(bencode(top[0]), hmac_key)
    if not ed25519.verify(author[2:], signed, signature[2:]):
        raise InvalidMessage(Rule.SIGNATURE, "signature does not verify")
    value = bfe.decode(top[0])
    return NativeMessage(FORMAT, message_id(native), value[0], sequence, value[2], timestamp, native)


def _check_section(section: Any) -> None:
    if isinstance(section, bytes) and section[:1] == b"\x05":
        return  # encrypted: nothing to check until it is decrypted
    if not (isinstance(section, list) and len(section) == 2 and isinstance(section[0], dict)):
        raise InvalidMessage(Rule.CONTENT, "contentSection must be [content, contentSignature] or encrypted")
    if not (isinstance(section[1], bytes) and section[1][:2] == _SIGNATURE and len(section[1]) == 66):
        raise InvalidMessage(Rule.SIGNATURE_FORMAT, "contentSignature must be a BFE ed25519 signature")


def _hmac(data: bytes, hmac_key: bytes | None) -> bytes:
    return data if hmac_key is None else hmac.new(hmac_key, data, "sha512").digest()[:32]


def to_native(value: dict[str, Any]) -> bytes:
    """``toNativeMsg``: the native bytes of a JS message value (as ssb-db2 stores it).

    Raises:
        InvalidMessage: the value cannot be encoded (rule ``json``).
    """
    try:
        section = [value.get("content"), value.get("contentSignature")]  # as JS builds it, encrypted or not
        payload = [value.get("author"), value.get("sequence"), value.get("previous"), value.get("timestamp"), section]
        return bencode(bfe.encode([payload, value.get("signature")]))
    except bfe.BfeError as exc:
        raise InvalidMessage(Rule.JSON, f"bendy-butt value cannot be encoded: {exc}") from exc
