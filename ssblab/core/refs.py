"""SSB references: feed ids ``@….ed25519``, message ids ``%….sha256``, blob ids ``&….sha256``, and ``ssb:`` URIs.

A sigil ref is valid only when its base64 is canonical (the one encoding of its bytes), so that two spellings
can never name the same key or hash. ``ssb:`` URIs follow ssb-uri2: ``ssb:feed/classic/…``,
``ssb:message/classic/…``, ``ssb:blob/classic/…`` with URL-safe base64 (the older ``ed25519``/``sha256`` format
names are accepted on input).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from functools import lru_cache

from ssblab.core.errors import InvalidRef

__all__ = [
    "CANONICAL_SIGNATURE", "b64", "blob_id", "decode_canonical_b64", "feed_id", "from_uri", "is_blob_id",
    "is_feed_id", "is_message_id", "message_ref", "parse_blob_id", "parse_feed_id", "parse_message_id", "ref_kind",
    "to_uri",
]

_SIGILS = {"feed": ("@", ".ed25519"), "message": ("%", ".sha256"), "blob": ("&", ".sha256")}
_URI_FORMATS = {"feed": ("classic", "ed25519"), "message": ("classic", "sha256"), "blob": ("classic", "sha256")}


def _canonical_pattern(size: int) -> str:
    """A regex for the canonical base64 of ``size`` bytes: padding, and zero bits under the padding.

    With one byte in the last group only ``AQgw`` can precede ``==``; with two, only every fourth letter
    can precede ``=``. This spares a decode and re-encode per id on the validation hot path.
    """
    full, rest = divmod(size, 3)
    body = f"[A-Za-z0-9+/]{{{4 * full}}}"
    if rest == 1:
        return body + "[A-Za-z0-9+/][AQgw]=="
    if rest == 2:
        return body + "[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]="
    return body


_B64_32 = _canonical_pattern(32)
_SIGIL_RE = {
    "feed": re.compile(rf"@{_B64_32}\.ed25519"),
    "message": re.compile(rf"%{_B64_32}\.sha256"),
    "blob": re.compile(rf"&{_B64_32}\.sha256"),
}
CANONICAL_SIGNATURE = re.compile(rf"{_canonical_pattern(64)}\.sig\.ed25519")


def decode_canonical_b64(text: str, size: int | None = None) -> bytes:
    """Decode standard base64 and insist it is the canonical spelling (and ``size`` bytes long, if given)."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidRef(f"not base64: {text!r}") from exc
    if base64.b64encode(raw).decode() != text:
        raise InvalidRef(f"base64 is not canonical: {text!r}")
    if size is not None and len(raw) != size:
        raise InvalidRef(f"base64 must decode to {size} bytes, got {len(raw)}: {text!r}")
    return raw


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@lru_cache(maxsize=65536)
def _parse(kind: str, ref: str) -> bytes:
    sigil, suffix = _SIGILS[kind]
    if not isinstance(ref, str) or not ref.startswith(sigil) or not ref.endswith(suffix):
        raise InvalidRef(f"a {kind} id looks like {sigil}<base64>{suffix}, got {ref!r}")
    return decode_canonical_b64(ref[1 : -len(suffix)], 32)


def parse_feed_id(ref: str) -> bytes:
    """The 32-byte ed25519 public key of ``@….ed25519``."""
    return _parse("feed", ref)


def parse_message_id(ref: str) -> bytes:
    """The 32-byte sha256 of ``%….sha256``."""
    return _parse("message", ref)


def parse_blob_id(ref: str) -> bytes:
    """The 32-byte sha256 of ``&….sha256``."""
    return _parse("blob", ref)


def _is(kind: str, ref: object) -> bool:
    return isinstance(ref, str) and _SIGIL_RE[kind].fullmatch(ref) is not None


def is_feed_id(ref: object) -> bool:
    return _is("feed", ref)


def is_message_id(ref: object) -> bool:
    return _is("message", ref)


def is_blob_id(ref: object) -> bool:
    return _is("blob", ref)


def feed_id(public_key: bytes) -> str:
    return f"@{b64(public_key)}.ed25519"


def message_ref(digest: bytes) -> str:
    return f"%{b64(digest)}.sha256"


def blob_id(data: bytes) -> str:
    """The id of a blob: the sha256 of its bytes."""
    return f"&{b64(hashlib.sha256(data).digest())}.sha256"


def ref_kind(ref: str) -> str:
    """``"feed"``, ``"message"`` or ``"blob"`` for a valid sigil ref; raises `InvalidRef` otherwise."""
    for kind in _SIGILS:
        if _is(kind, ref):
            return kind
    raise InvalidRef(f"not an SSB ref: {ref!r}")


def to_uri(ref: str) -> str:
    """``@….ed25519`` → ``ssb:feed/classic/…`` (URL-safe base64), and likewise for messages and blobs."""
    kind = ref_kind(ref)
    raw = _parse(kind, ref)
    return f"ssb:{kind}/{_URI_FORMATS[kind][0]}/{base64.urlsafe_b64encode(raw).decode()}"


def from_uri(uri: str) -> str:
    """The sigil ref of an ``ssb:`` feed, message or blob URI."""
    if not uri.startswith("ssb:"):
        raise InvalidRef(f"an SSB URI starts with 'ssb:', got {uri!r}")
    parts = uri[4:].lstrip("/").split("/")
    if len(parts) != 3 or parts[0] not in _URI_FORMATS or parts[1] not in _URI_FORMATS[parts[0]]:
        raise InvalidRef(f"unsupported SSB URI {uri!r} (expected ssb:feed|message|blob/classic/<base64url>)")
    kind, _, data = parts
    try:
        raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidRef(f"bad base64url in {uri!r}") from exc
    if len(raw) != 32:
        raise InvalidRef(f"{uri!r} must carry 32 bytes, got {len(raw)}")
    sigil, suffix = _SIGILS[kind]
    return f"{sigil}{b64(raw)}{suffix}"
