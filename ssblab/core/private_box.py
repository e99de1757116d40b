"""private-box, as ssb-keys ``box``/``unbox`` use it for private messages.

Layout (auditdrivencrypto/private-box): ``nonce(24) | ephemeral_pk(32) | n slots | body``. Each slot is
``secretbox(u8 n ‖ body_key(32), nonce, scalarmult(ephemeral_sk, recipient_curve_pk))``: 1 + 32 bytes plus a
16-byte MAC, 49 bytes. The body is ``secretbox(plaintext, nonce, body_key)`` and starts at ``56 + 49·n``. A
recipient tries each slot with its own key until one opens (at most 7). The plaintext is the compact
``JSON.stringify(content)``; the message content is ``base64(box) + ".box"``.

Randomness is a parameter (``random_bytes``) so that seeded generators produce identical datasets.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable, Sequence
from typing import Any

import nacl.bindings
import nacl.exceptions

from ssblab.core.encoding import encode_compact
from ssblab.core.errors import BoxError, InvalidJson, InvalidRef
from ssblab.core.keys import Keypair, curve25519_public
from ssblab.core.strict_json import parse_json

__all__ = ["MAX_RECIPIENTS", "box", "unbox"]

MAX_RECIPIENTS = 7
_NONCE, _KEY, _MAC = 24, 32, 16
_SLOT = 1 + _KEY + _MAC
_HEADER = _NONCE + 32


def box(content: Any, recipient_ids: Sequence[str], random_bytes: Callable[[int], bytes] = os.urandom) -> str:
    """Encrypt ``content`` for up to 7 feeds; returns the ``<base64>.box`` string for a message's content.

    Raises:
        BoxError: no recipients, more than 7, or a recipient that is not a valid feed id.
    """
    if not 1 <= len(recipient_ids) <= MAX_RECIPIENTS:
        raise BoxError(f"private-box takes 1 to {MAX_RECIPIENTS} recipients, got {len(recipient_ids)}")
    try:
        curve_keys = [curve25519_public(r) for r in recipient_ids]
    except InvalidRef as exc:
        raise BoxError(f"bad recipient: {exc}") from exc
    nonce, body_key = random_bytes(_NONCE), random_bytes(_KEY)
    eph_sk = random_bytes(32)
    eph_pk = nacl.bindings.crypto_scalarmult_base(eph_sk)
    header = bytes([len(curve_keys)]) + body_key
    slots = b"".join(
        nacl.bindings.crypto_secretbox(header, nonce, nacl.bindings.crypto_scalarmult(eph_sk, pk))
        for pk in curve_keys
    )
    body = nacl.bindings.crypto_secretbox(encode_compact(content), nonce, body_key)
    return base64.b64encode(nonce + eph_pk + slots + body).decode() + ".box"


def unbox(boxed: str, keypair: Keypair) -> Any:
    """Decrypt a private message's content with one's own key; None when it is not for this key.

    Raises:
        BoxError: the box opened but its plaintext is not JSON (a malformed box from a buggy or hostile author).
    """
    data = _decode(boxed)
    if data is None or len(data) < _HEADER + _SLOT + _MAC:
        return None
    nonce, eph_pk = data[:_NONCE], data[_NONCE:_HEADER]
    try:
        shared = nacl.bindings.crypto_scalarmult(keypair.curve25519_secret(), eph_pk)
    except nacl.exceptions.RuntimeError:
        return None
    for i in range(MAX_RECIPIENTS):
        start = _HEADER + _SLOT * i
        if start + _SLOT > len(data):
            return None
        try:
            header = nacl.bindings.crypto_secretbox_open(data[start : start + _SLOT], nonce, shared)
        except nacl.exceptions.CryptoError:
            continue
        return _open_body(data[_HEADER + _SLOT * header[0] :], nonce, header[1:])
    return None


def _decode(boxed: str) -> bytes | None:
    if not isinstance(boxed, str) or ".box" not in boxed:
        return None
    try:
        return base64.b64decode(boxed[: boxed.index(".box")], validate=True)
    except (binascii.Error, ValueError):
        return None


def _open_body(body: bytes, nonce: bytes, key: bytes) -> Any:
    try:
        plaintext = nacl.bindings.crypto_secretbox_open(body, nonce, key)
    except nacl.exceptions.CryptoError:
        return None
    try:
        return parse_json(plaintext)
    except InvalidJson as exc:
        raise BoxError(f"the box opened but holds no JSON: {exc}") from exc
