"""SSB binary field encodings (ssb-bfe 3): the typed byte strings inside bendy-butt and buttwoo messages.

Strategy (ssb-bfe-spec; npm ``ssb-bfe`` 3.7 is the reference): a value is two bytes, type and format, then data.
`encode` maps what a JS message value holds to BFE as ``BFE.encode`` does: ``ssb:`` URIs of a known type, the
classic sigil forms (``@….ed25519``, ``%….sha256``, ``&….sha256``, ``….sig.ed25519``, ``….box``), other strings,
booleans, null and bytes; integers pass through, lists and dicts recurse. `decode` is the inverse
(``BFE.decode``), giving classic sigil forms where a format has them and ``ssb:TYPE/FORMAT/DATA`` URIs (base64url
data) otherwise.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ssblab.core.errors import SsbError

__all__ = ["BOOL", "BYTES", "NIL", "STRING", "TYPES", "BfeError", "decode", "encode", "type_format"]

# type code -> (type name, {format code: (format name, sigil, suffix, data length or 0)})
TYPES: dict[int, tuple[str, dict[int, tuple[str, str, str, int]]]] = {
    0: ("feed", {0: ("classic", "@", ".ed25519", 32), 1: ("gabbygrove-v1", "", "", 32), 2: ("bamboo", "", "", 32),
                 3: ("bendybutt-v1", "", "", 32), 4: ("buttwoo-v1", "", "", 32), 5: ("indexed-v1", "", "", 32)}),
    1: ("message", {0: ("classic", "%", ".sha256", 32), 1: ("gabbygrove-v1", "", "", 32),
                    2: ("cloaked", "%", ".cloaked", 32), 3: ("bamboo", "", "", 64), 4: ("bendybutt-v1", "", "", 32),
                    5: ("buttwoo-v1", "", "", 32), 6: ("indexed-v1", "", "", 32)}),
    2: ("blob", {0: ("classic", "&", ".sha256", 32)}),
    3: ("encryption-key", {0: ("box2-dm-dh", "", "", 32), 1: ("box2-pobox-dh", "", "", 32)}),
    4: ("signature", {0: ("msg-ed25519", "", ".sig.ed25519", 64)}),
    5: ("encrypted", {0: ("box1", "", ".box", 0), 1: ("box2", "", ".box2", 0)}),
    6: ("generic", {0: ("string-UTF8", "", "", 0), 1: ("boolean", "", "", 0), 2: ("nil", "", "", 0),
                    3: ("any-bytes", "", "", 0)}),
    7: ("identity", {0: ("po-box", "", "", 32), 1: ("group", "", "", 32)}),
}
_BY_NAME = {name: (code, {f[0]: (fc, *f[1:]) for fc, f in formats.items()}) for code, (name, formats) in TYPES.items()}
STRING, BOOL, NIL, BYTES = b"\x06\x00", b"\x06\x01", b"\x06\x02", b"\x06\x03"
_B64 = r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
# (pattern, type code, format code): the sigil forms ssb-bfe recognises, canonical base64 of the right length
_SIGIL_FORMS = [(re.compile(rf"{re.escape(sigil)}({_B64}){re.escape(suffix)}"), tc, fc, length)
                for tc, (_, formats) in TYPES.items() for fc, (_, sigil, suffix, length) in formats.items()
                if sigil or suffix]


class BfeError(SsbError):
    """A value BFE cannot encode or bytes it cannot decode."""

    code = "bfe"


def type_format(data: bytes) -> tuple[str, str] | None:
    """(type name, format name) of a BFE value, or None when its two bytes name nothing known."""
    kind = TYPES.get(data[0]) if len(data) >= 2 else None
    fmt = kind[1].get(data[1]) if kind else None
    return (kind[0], fmt[0]) if kind and fmt else None


def encode(value: Any) -> Any:
    """``BFE.encode(value)``: strings, booleans, null and bytes become BFE bytes; ints, lists, dicts stay."""
    if isinstance(value, bool):
        return BOOL + (b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None:
        return NIL
    if isinstance(value, bytes):
        return BYTES + value
    if isinstance(value, str):
        return _encode_string(value)
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    raise BfeError(f"BFE has no encoding for {value!r:.60}")


def _encode_string(text: str) -> bytes:
    if text.startswith("ssb:"):
        return _encode_uri(text)
    for pattern, tc, fc, length in _SIGIL_FORMS:
        match = pattern.fullmatch(text)
        if match:
            data = base64.b64decode(match.group(1))
            if not length or len(data) == length:
                return bytes([tc, fc]) + data
    return STRING + text.encode("utf-8", "surrogatepass")


def _encode_uri(uri: str) -> bytes:
    """``ssb:TYPE/FORMAT/DATA`` of a known type; other URIs (addresses, experimental, unknown types) are text."""
    parts = uri[4:].split("/")
    known = _BY_NAME.get(parts[0]) if len(parts) == 3 and parts[0] not in ("address", "experimental") else None
    if known is None:
        return STRING + uri.encode("utf-8", "surrogatepass")
    code, formats = known
    if parts[1] not in formats:
        raise BfeError(f"BFE has no format {parts[1]!r} for type {parts[0]!r} ({uri})")
    format_code, *_, length = formats[parts[1]]
    try:
        data = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
    except (binascii.Error, ValueError) as exc:
        raise BfeError(f"BFE: the data of {uri} is not base64") from exc
    if length and len(data) != length:
        raise BfeError(f"BFE: expected {length} bytes of data in {uri}, found {len(data)}")
    return bytes([code, format_code]) + data


def decode(value: Any) -> Any:
    """``BFE.decode(value)``: the inverse of `encode`."""
    if isinstance(value, bytes):
        return _decode_bytes(value)
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        return {key: decode(item) for key, item in value.items()}
    return value


def _decode_bytes(data: bytes) -> Any:
    if len(data) < 2:
        raise BfeError(f"BFE value {data.hex()} lacks its type and format bytes")
    head, body = data[:2], data[2:]
    if head == NIL:
        return None
    if head == STRING:
        return body.decode("utf-8", "replace")
    if head == BOOL:
        if body not in (b"\x00", b"\x01"):
            raise BfeError(f"invalid boolean BFE {data.hex()}")
        return body == b"\x01"
    if head == BYTES:
        return body
    kind = TYPES.get(data[0])
    fmt = kind[1].get(data[1]) if kind else None
    if kind is None or fmt is None:
        raise BfeError(f"BFE type {data[0]} format {data[1]} is unknown")
    name, sigil, suffix, _ = fmt
    if sigil or suffix:
        return f"{sigil}{base64.b64encode(body).decode()}{suffix}"
    return f"ssb:{kind[0]}/{name}/{base64.urlsafe_b64encode(body).decode()}"
