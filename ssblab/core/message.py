"""Classic (ed25519) SSB messages: the shape rules of ssb-validate, signing, ids and signature checks.

A `Message` keeps the parsed value next to the exact encoding that its id hashes (style rule 12: raw bytes beside
the parsed view). Checks go cheap to expensive: shape (`check_shape`), then the feed's state
(``validate.validate_next``), then the signature (`check_signature`), which can be deferred. Rules and their
order are those of ssb-validate 4 (``isValidOrder``, ``isInvalidShape``, ``isInvalidContent``) with the
stricter checks of ssb-validation-dataset (canonical base64 everywhere, ``.box`` content).
"""

from __future__ import annotations

import binascii
import hmac as _hmac
import re
from typing import Any, NamedTuple

from ssblab.core import ed25519
from ssblab.core.encoding import decode, encode, message_id_of, strip_signature, utf16_length
from ssblab.core.errors import InvalidJson, InvalidMessage, InvalidRef, Rule
from ssblab.core.keys import Keypair
from ssblab.core.refs import (
    CANONICAL_SIGNATURE,
    b64,
    decode_canonical_b64,
    is_feed_id,
    is_message_id,
    parse_feed_id,
)

SIZE_LIMIT = 8192  # UTF-16 code units of the encoding with signature ("not bytes": ssb-validate isInvalidShape)
_INT32 = 2**31  # ssb-validate's isInteger is ~~n === n: an int32
_BOXED = re.compile(r"([0-9A-Za-z/+]+={0,2})\.box")  # prefix match: ".box2" and later versions pass
_SIG_SUFFIX = ".sig.ed25519"
_ORDERS = (
    ("previous", "author", "sequence", "timestamp", "hash", "content", "signature"),
    ("previous", "sequence", "author", "timestamp", "hash", "content", "signature"),
)


class Message(NamedTuple):
    """A message value with the encoding its id and signature cover.

    A named tuple rather than a frozen dataclass: validation builds one per message, and tuples are built in
    half the time.
    """

    value: dict[str, Any]
    encoded: bytes  # JSON.stringify(value, null, 2) as UTF-8, signature included
    id: str

    @classmethod
    def from_value(cls, value: Any, *, plain: bool | None = None) -> Message:
        """A message from its parsed value (``plain``: see `encoding.decode`)."""
        if not isinstance(value, dict):
            raise InvalidMessage(Rule.NOT_OBJECT, f"a message is a JSON object, got {_kind(value)}")
        encoded = _encode(value, plain)
        return cls(value, encoded, message_id_of(encoded))

    @classmethod
    def from_json(cls, raw: bytes | str) -> Message:
        """Parse a message value from received JSON (compact or indented), strictly."""
        try:
            value, plain = decode(raw)
        except InvalidJson as exc:
            raise InvalidMessage(Rule.JSON, str(exc)) from exc
        if type(value) is not dict:
            raise InvalidMessage(Rule.NOT_OBJECT, f"a message is a JSON object, got {_kind(value)}")
        encoded = _encode(value, plain)
        return cls(value, encoded, message_id_of(encoded))

    @property
    def author(self) -> Any:
        return self.value.get("author")

    @property
    def sequence(self) -> Any:
        return self.value.get("sequence")

    @property
    def previous(self) -> Any:
        return self.value.get("previous")

    @property
    def timestamp(self) -> Any:
        return self.value.get("timestamp")

    @property
    def content(self) -> Any:
        return self.value.get("content")

    @property
    def is_private(self) -> bool:
        return isinstance(self.content, str)

    @property
    def size(self) -> int:
        """JavaScript ``JSON.stringify(msg, null, 2).length``: what the 8192 limit counts."""
        return utf16_length(self.encoded)

    def signing_bytes(self) -> bytes:
        """What the author signed: the encoding without the signature entry."""
        unsigned = strip_signature(self.encoded)
        if unsigned is None:
            raise InvalidMessage(Rule.ORDER, "the signature must be the last key")
        return unsigned

    def to_kvt(self, received: float) -> dict[str, Any]:
        """The ``{key, value, timestamp}`` record that ssb-db and createHistoryStream(keys) use."""
        return {"key": self.id, "value": self.value, "timestamp": received}


def _encode(value: Any, plain: bool | None = None) -> bytes:
    """`encoding.encode`, with a value it cannot serialize reported as the message rule ``json``."""
    try:
        return encode(value, plain=plain)
    except InvalidJson as exc:
        raise InvalidMessage(Rule.JSON, str(exc)) from exc


def decode_message_json(raw: bytes | str) -> tuple[Any, bool]:
    """`encoding.decode`, with a JSON error reported as the message rule ``json``."""
    try:
        return decode(raw)
    except InvalidJson as exc:
        raise InvalidMessage(Rule.JSON, str(exc)) from exc


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _is_number(x: Any) -> bool:
    return type(x) is int or type(x) is float


def _js_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def check_shape(msg: Message) -> None:
    """Every rule that looks at one message alone, except the signature.

    Raises:
        InvalidMessage: placed at the message's author and sequence.
    """
    try:
        _check_fields(msg.value)
        if msg.size > SIZE_LIMIT:
            raise InvalidMessage(Rule.SIZE, f"encoded message is {msg.size} UTF-16 units, over {SIZE_LIMIT}")
    except InvalidMessage as exc:
        raise exc.at(_printable(msg.author), msg.sequence) from None


def _printable(author: Any) -> str | None:
    return author if isinstance(author, str) else None


def _check_fields(value: dict[str, Any]) -> None:
    if tuple(value) not in _ORDERS:
        raise InvalidMessage(Rule.ORDER, f"keys must be {', '.join(_ORDERS[0])} in order, got {list(value)}")
    previous, author, seq, ts = value["previous"], value["author"], value["sequence"], value["timestamp"]
    if previous is not None and not is_message_id(previous):
        raise InvalidMessage(Rule.PREVIOUS, f"previous must be null or a message id, got {previous!r}")
    if not (type(author) is str and author in _KNOWN_AUTHORS) and not _remember_author(author):
        raise InvalidMessage(Rule.AUTHOR, f"author must be @<canonical base64 of 32 bytes>.ed25519: {author!r}")
    if not _is_number(seq) or seq != int(seq) or not -_INT32 <= seq < _INT32:
        raise InvalidMessage(Rule.SEQUENCE, f"sequence must be an integer, got {seq!r}")
    if not _is_number(ts):
        raise InvalidMessage(Rule.TIMESTAMP, f"timestamp must be a number, got {ts!r}")
    if value["hash"] != "sha256":
        raise InvalidMessage(Rule.HASH, f"hash must be 'sha256', got {value['hash']!r}")
    check_content(value["content"])
    check_signature_format(value["signature"])


_KNOWN_AUTHORS: set[str] = set()


def _remember_author(author: Any) -> bool:
    """Feeds write many messages: check each author id once (a bounded cache; ids are 53 characters)."""
    if not is_feed_id(author):
        return False
    if len(_KNOWN_AUTHORS) > 1_000_000:
        _KNOWN_AUTHORS.clear()
    _KNOWN_AUTHORS.add(author)
    return True


def _is_ref(parse: Any, ref: Any) -> bool:
    try:
        parse(ref)
    except (InvalidRef, TypeError):
        return False
    return True


def check_content(content: Any) -> None:
    """Content is an object with a type of 3 to 52 UTF-16 units, or a boxed string ``<base64>.box…``."""
    if isinstance(content, str):
        match = _BOXED.match(content)
        if not match:
            raise InvalidMessage(Rule.BOX, "string content must be <base64>.box (a private message)")
        if not _is_ref(decode_canonical_b64, match.group(1)):
            raise InvalidMessage(Rule.BOX, "the base64 of boxed content must be canonical")
        return
    if not isinstance(content, dict):
        raise InvalidMessage(Rule.CONTENT, f"content must be an object or a boxed string, got {_kind(content)}")
    kind = content.get("type")
    if not isinstance(kind, str):
        raise InvalidMessage(Rule.CONTENT_TYPE, f"content type must be a string, got {kind!r}")
    if not 3 <= _js_length(kind) <= 52:
        raise InvalidMessage(Rule.CONTENT_TYPE, f"content type must be 3 to 52 characters long: {kind!r}")


def check_signature_format(signature: Any) -> bytes:
    """``<canonical base64 of 64 bytes>.sig.ed25519``; returns the 64 signature bytes."""
    if not isinstance(signature, str) or not signature.endswith(_SIG_SUFFIX):
        raise InvalidMessage(Rule.SIGNATURE_FORMAT, "signature must be <base64>.sig.ed25519")
    if CANONICAL_SIGNATURE.fullmatch(signature) is None:
        raise InvalidMessage(Rule.SIGNATURE_FORMAT, f"signature is not 64 bytes of canonical base64: {signature!r}")
    return binascii.a2b_base64(signature[: -len(_SIG_SUFFIX)])


def hmac_key_bytes(key: Any) -> bytes | None:
    """Normalize a test network's HMAC key (32 bytes, canonical base64 when given as text)."""
    if key is None or (isinstance(key, bytes) and len(key) == 32):
        return key
    if not isinstance(key, str):
        raise InvalidMessage(Rule.HMAC_KEY, "the HMAC key must be a base64 string")
    try:
        return decode_canonical_b64(key, 32)
    except InvalidRef as exc:
        raise InvalidMessage(Rule.HMAC_KEY, f"the HMAC key must be 32 bytes of canonical base64: {exc}") from None


def _signed_bytes(data: bytes, hmac_key: bytes | None) -> bytes:
    """ssb-keys signs HMAC-SHA-512-256(key, bytes) on test networks (libsodium crypto_auth)."""
    return data if hmac_key is None else _hmac.new(hmac_key, data, "sha512").digest()[:32]


def check_signature(msg: Message, hmac_key: bytes | None = None) -> None:
    """The author's signature over the signing bytes.

    Call after `check_shape`, which proved the author and signature well formed; this only decodes them.
    """
    signature = binascii.a2b_base64(msg.value["signature"][: -len(_SIG_SUFFIX)])
    if not ed25519.verify(parse_feed_id(msg.author), _signed_bytes(msg.signing_bytes(), hmac_key), signature):
        raise InvalidMessage(Rule.SIGNATURE, "signature does not verify", author=msg.author, sequence=msg.sequence)


def verify_message(value: Any, hmac_key: Any = None) -> Message:
    """Check one message alone (shape, size, signature); no feed state.

    Raises:
        InvalidMessage: naming the rule, the author and the sequence.
    """
    key = hmac_key_bytes(hmac_key)
    msg = value if isinstance(value, Message) else _as_message(value)
    check_shape(msg)
    check_signature(msg, key)
    return msg


def _as_message(value: Any) -> Message:
    if isinstance(value, bytes | str):
        return Message.from_json(value)
    return Message.from_value(value)


def message_id(value: Any) -> str:
    """The id of a message value (``%….sha256``), as ssb-validate computes it."""
    return _as_message(value).id


def signing_encoding(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``: the text SSB signs (without the signature) and hashes (with it)."""
    return encode(value).decode("utf-8", "surrogatepass")


def create_message(
    keypair: Keypair,
    content: Any,
    *,
    previous: Message | None = None,
    timestamp: float,
    hmac_key: Any = None,
) -> Message:
    """Sign the next message of ``keypair``'s feed.

    Args:
        keypair: the author.
        content: an object with a ``type``, or a private-box string (`box`).
        previous: the feed's latest message, or None for its first message.
        timestamp: the claimed time in ms since the epoch (a parameter: the core has no clock).
        hmac_key: a test network's HMAC key, or None for the main network.

    Raises:
        InvalidMessage: the content or the result breaks a rule (it would not validate anywhere).
    """
    key = hmac_key_bytes(hmac_key)
    if previous is not None and previous.author != keypair.id:
        raise InvalidMessage(Rule.PREVIOUS, "previous belongs to another feed", author=keypair.id)
    value: dict[str, Any] = {
        "previous": previous.id if previous else None,
        "sequence": previous.sequence + 1 if previous else 1,
        "author": keypair.id,
        "timestamp": timestamp,
        "hash": "sha256",
        "content": content,
    }
    signature = keypair.sign(_signed_bytes(_encode(value), key))
    value["signature"] = b64(signature) + _SIG_SUFFIX
    msg = Message.from_value(value)
    check_shape(msg)
    return msg
