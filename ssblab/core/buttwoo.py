"""Buttwoo: BIPF messages ``[encodedValue, signature, content]`` with blake3 ids (npm ``ssb-buttwoo`` 0.3).

Strategy: as ssb-buttwoo's ``validateSync``: the native message is a BIPF array of three buffers; the encoded
value is ``[author, parent, sequence, timestamp, previous, tag, contentLength, contentHash]`` (BFE author and
previous, a one-byte tag 0-2, the content's length and ``0x00 + blake3(content)``); the author's ed25519
signature (HMAC'd on test networks) covers the encoded value; the id is ``blake3(encodedValue + signature)`` as
``ssb:message/buttwoo-v1/…``. ssb-db2 keeps the JS value (``fromNativeMsg``: decoded content, buffers for the
tag, hash and signature); `to_native` rebuilds the bytes as ``toNativeMsg`` does. blake3 comes from the
``blake3`` package (``pip install 'ssblab[formats]'``); without it `verify` raises `InvalidMessage` (``format``).
"""

from __future__ import annotations

import base64
import hmac
from typing import Any

from ssblab.core import bfe, bipf, ed25519
from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.native import NativeMessage

__all__ = ["FORMAT", "SIZE_LIMIT", "blake3", "to_native", "verify"]

FORMAT = "buttwoo-v1"
SIZE_LIMIT = 16384  # bytes of the native message (ssb-buttwoo _validateSize)
_AUTHOR = b"\x00\x04"
_MESSAGE = b"\x01\x05"


def blake3(data: bytes) -> bytes:
    try:
        from blake3 import blake3 as hasher
    except ImportError:
        raise InvalidMessage(Rule.FORMAT, "buttwoo needs blake3: pip install 'ssblab[formats]'") from None
    digest: bytes = hasher(data).digest()
    return digest


def verify(native: bytes, hmac_key: bytes | None = None) -> NativeMessage:
    """Check one native message alone (shape, size, fields, content hash, signature).

    Raises:
        InvalidMessage: naming the rule that failed.
    """
    if len(native) > SIZE_LIMIT:
        raise InvalidMessage(Rule.SIZE, f"buttwoo message is {len(native)} bytes, over {SIZE_LIMIT}")
    try:
        parts = bipf.decode(native)
        fields = bipf.decode(parts[0]) if isinstance(parts, list) and len(parts) == 3 and \
            all(isinstance(p, bytes) for p in parts) else None
    except bipf.BipfError as exc:
        raise InvalidMessage(Rule.JSON, f"buttwoo message is not BIPF: {exc}") from exc
    if not (isinstance(fields, list) and len(fields) == 8):
        raise InvalidMessage(Rule.ORDER, "buttwoo message must be [encodedValue, signature, content] with an "
                             "8-field value")
    encoded, signature, content = parts
    author, parent, sequence, timestamp, previous, tag, length, content_hash = fields
    if not (isinstance(author, bytes) and author[:2] == _AUTHOR and len(author) == 34):
        raise InvalidMessage(Rule.AUTHOR, "buttwoo author must be a buttwoo-v1 feed")
    if not (parent == bfe.NIL or (isinstance(parent, bytes) and parent[:2] == _MESSAGE and len(parent) == 34)):
        raise InvalidMessage(Rule.AUTHOR, "buttwoo parent must be nil or a buttwoo-v1 message")
    if not (isinstance(tag, bytes) and len(tag) == 1 and tag[0] <= 2):
        raise InvalidMessage(Rule.CONTENT, f"buttwoo tag must be one byte 0, 1 or 2, got {tag!r}")
    if not (isinstance(sequence, int) and sequence >= 1 and isinstance(timestamp, int | float) and timestamp >= 0):
        raise InvalidMessage(Rule.SEQUENCE, f"bad sequence {sequence!r} or timestamp {timestamp!r}")
    if length != len(content) or content_hash != b"\x00" + blake3(content):
        raise InvalidMessage(Rule.HASH, "buttwoo contentSize or contentHash does not match the content")
    first = sequence == 1
    if not ((first and previous == bfe.NIL) or (not first and isinstance(previous, bytes)
                                                and previous[:2] == _MESSAGE and len(previous) == 34)):
        raise InvalidMessage(Rule.PREVIOUS, "previous must be nil at sequence 1, a buttwoo-v1 message id after")
    signed = encoded if hmac_key is None else hmac.new(hmac_key, encoded, "sha512").digest()[:32]
    if len(signature) != 64 or not ed25519.verify(author[2:], signed, signature):
        raise InvalidMessage(Rule.SIGNATURE, "signature does not verify")
    feed = bfe.decode(author) + ("" if parent == bfe.NIL else "/" + bfe.decode(parent).rsplit("/", 1)[1].rstrip("="))
    msg_id = f"ssb:message/{FORMAT}/{base64.urlsafe_b64encode(blake3(encoded + signature)).decode()}"
    return NativeMessage(FORMAT, msg_id, feed, sequence, bfe.decode(previous), timestamp, native)


def to_native(value: dict[str, Any]) -> bytes:
    """``toNativeMsg(msgVal, 'js')``: re-encode the content, then the value, then the three parts.

    Raises:
        InvalidMessage: the value cannot be encoded (rule ``json``).
    """
    try:
        content = bipf.encode(value.get("content"))
        fields = [bfe.encode(value.get("author")), bfe.encode(value.get("parent")), value.get("sequence"),
                  value.get("timestamp"), bfe.encode(value.get("previous")), value.get("tag"), len(content),
                  value.get("contentHash")]
        return bipf.encode([bipf.encode(fields), value.get("signature"), content])
    except (bfe.BfeError, bipf.BipfError) as exc:
        raise InvalidMessage(Rule.JSON, f"buttwoo value cannot be encoded: {exc}") from exc
