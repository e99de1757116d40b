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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ssblab.core import ed25519
from ssblab.core.compiled import SWITCH, Route, route, speedups
from ssblab.core.encoding import (
    decode,
    decode_encoded,
    encode,
    message_id_of,
    strip_signature,
    utf16_length,
    well_formed,
)
from ssblab.core.errors import InvalidJson, InvalidMessage, InvalidRef, Rule
from ssblab.core.refs import (
    CANONICAL_SIGNATURE,
    b64,
    decode_canonical_b64,
    is_feed_id,
    is_message_id,
    parse_feed_id,
)

if TYPE_CHECKING:
    from ssblab.core.keys import Keypair  # signing only: verifying loads no PyNaCl signing keys

__all__ = [
    "SIZE_LIMIT", "Message", "check_content", "check_shape", "check_signature", "check_signature_format",
    "create_message", "decode_message_json", "hmac_key_bytes", "message_id", "prove_signatures", "signing_encoding",
    "type_column", "verify_message",
]

SIZE_LIMIT = 8192  # UTF-16 code units of the encoding with signature ("not bytes": ssb-validate isInvalidShape)
_INT32 = 2**31  # ssb-validate's isInteger is ~~n === n: an int32
_BOXED = re.compile(r"([0-9A-Za-z/+]+={0,2})\.box")  # prefix match: ".box2" and later versions pass
_SIG_SUFFIX = ".sig.ed25519"
_ORDERS = (
    ("previous", "author", "sequence", "timestamp", "hash", "content", "signature"),
    ("previous", "sequence", "author", "timestamp", "hash", "content", "signature"),
)


_new_tuple = tuple.__new__


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
        compiled = speedups()  # the switch read once for the parse and the id
        try:
            value, encoded = decode_encoded(raw, compiled=compiled)
        except InvalidJson as exc:
            raise InvalidMessage(Rule.JSON, str(exc)) from exc
        if type(value) is not dict:
            raise InvalidMessage(Rule.NOT_OBJECT, f"a message is a JSON object, got {_kind(value)}")
        # the named tuple's __new__, minus a call
        return _new_tuple(cls, (value, encoded, message_id_of(encoded, compiled=compiled)))

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


def decode_message_json(raw: bytes | str) -> tuple[Any, bool, InvalidJson | None]:
    """`encoding.decode` (value, plain, the strict rule broken), with a JSON error as the message rule ``json``."""
    try:
        return decode(raw)
    except InvalidJson as exc:
        raise InvalidMessage(Rule.JSON, str(exc)) from exc


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _js_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def check_shape(msg: Message, *, compiled: Route = SWITCH) -> None:
    """Every rule that looks at one message alone, except the signature.

    Raises:
        InvalidMessage: placed at the message's author and sequence.
    """
    value, encoded = msg.value, msg.encoded
    ext = route(compiled)
    if ext is not None and len(encoded) <= SIZE_LIMIT and ext.classic_shape_ok(value):
        return  # the compiled common case proved every rule below
    try:
        _check_fields(value)
        # A UTF-16 unit takes at least one UTF-8 byte: only long encodings need counting.
        if len(encoded) > SIZE_LIMIT and (size := utf16_length(encoded)) > SIZE_LIMIT:
            raise InvalidMessage(Rule.SIZE, f"encoded message is {size} UTF-16 units, over {SIZE_LIMIT}")
    except InvalidMessage as exc:
        raise exc.at(_printable(value.get("author")), value.get("sequence")) from None


def _printable(author: Any) -> str | None:
    return author if isinstance(author, str) else None


def _check_fields(value: dict[str, Any]) -> None:
    """The field rules in ssb-validate's order; each test is the cheap common case first, the full rule after."""
    if tuple(value) not in _ORDERS:
        raise InvalidMessage(Rule.ORDER, f"keys must be {', '.join(_ORDERS[0])} in order, got {list(value)}")
    previous, author, seq, ts = value["previous"], value["author"], value["sequence"], value["timestamp"]
    if previous is not None and not is_message_id(previous):
        raise InvalidMessage(Rule.PREVIOUS, f"previous must be null or a message id, got {previous!r}")
    if not (type(author) is str and author in _AUTHOR_KEYS) and not _remember_author(author):
        raise InvalidMessage(Rule.AUTHOR, f"author must be @<canonical base64 of 32 bytes>.ed25519: {author!r}")
    if not (type(seq) is int and -_INT32 <= seq < _INT32) and not _is_int32(seq):
        raise InvalidMessage(Rule.SEQUENCE, f"sequence must be an integer, got {seq!r}")
    if type(ts) is not int and type(ts) is not float:
        raise InvalidMessage(Rule.TIMESTAMP, f"timestamp must be a number, got {ts!r}")
    if value["hash"] != "sha256":
        raise InvalidMessage(Rule.HASH, f"hash must be 'sha256', got {value['hash']!r}")
    content = value["content"]
    kind = content.get("type") if type(content) is dict else None
    if not (type(kind) is str and 3 <= len(kind) <= 52 and kind.isascii()):
        check_content(content)
    signature = value["signature"]
    if type(signature) is not str or CANONICAL_SIGNATURE.fullmatch(signature) is None:
        check_signature_format(signature)


def _is_int32(x: Any) -> bool:
    """ssb-validate's isInteger (``~~n === n``) for numbers that are not a Python int, such as ``2.0``."""
    if type(x) is float and x.is_integer():  # False for NaN and ±Infinity
        x = int(x)
    return type(x) is int and -_INT32 <= x < _INT32


_AUTHOR_KEYS: dict[str, bytes] = {}  # feed id -> public key, for ids already proved well formed


def _remember_author(author: Any) -> bool:
    """Feeds write many messages: check each author id once (a bounded cache; ids are 53 characters)."""
    if not is_feed_id(author):
        return False
    if len(_AUTHOR_KEYS) > 1_000_000:
        _AUTHOR_KEYS.clear()
    _AUTHOR_KEYS[author] = binascii.a2b_base64(author[1:-8])
    return True


def _is_ref(parse: Any, ref: Any) -> bool:
    try:
        parse(ref)
    except (InvalidRef, TypeError):
        return False
    return True


def type_column(content: Any) -> str | None:
    """The content's ``type`` as a table or index column holds it: None for boxed content or a type that is no
    string, and each lone surrogate (valid in JS) as U+FFFD, which UTF-8 columns can hold."""
    kind = content.get("type") if isinstance(content, dict) else None
    return well_formed(kind) if isinstance(kind, str) else None


def check_content(content: Any) -> None:
    """Content is an object with a type of 3 to 52 UTF-16 units, or a boxed string ``<base64>.box…``."""
    if isinstance(content, str):
        if _is_canonical_box(content):
            return
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


def _is_canonical_box(content: str) -> bool:
    """``_BOXED`` and the canonical-base64 test at once, without the regex (slow on long ciphertexts).

    The base64 alphabet has no ``.``, so the first dot ends the base64; the text before it is canonical exactly
    when decoding and re-encoding gives it back (which also rules out stray ``=`` and other characters).
    """
    dot = content.find(".")
    if dot <= 0 or not content.startswith(".box", dot):
        return False
    body = content[:dot]
    try:
        return binascii.b2a_base64(binascii.a2b_base64(body), newline=False) == body.encode("ascii")
    except (binascii.Error, ValueError):  # ValueError: non-ASCII text
        return False


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
    except InvalidRef:  # its message quotes the key, a network's secret
        raise InvalidMessage(Rule.HMAC_KEY, "the HMAC key must be 32 bytes of canonical base64 (not shown)") from None


def _signed_bytes(data: bytes, hmac_key: bytes | None) -> bytes:
    """ssb-keys signs HMAC-SHA-512-256(key, bytes) on test networks (libsodium crypto_auth)."""
    return data if hmac_key is None else _hmac.new(hmac_key, data, "sha512").digest()[:32]


def check_signature(msg: Message, hmac_key: bytes | None = None, *, compiled: Route = SWITCH) -> None:
    """The author's signature over the signing bytes.

    Call after `check_shape`, which proved the author and signature well formed; this only decodes them.
    """
    value = msg.value
    author = value["author"]
    valid = None  # the compiled check's verdict; None where it cannot tell (an HMAC key, no extension, odd input)
    ext = route(compiled) if hmac_key is None else None
    if ext is not None:
        valid = ext.verify_signature(ed25519.verify_address(), msg.encoded, author, value["signature"])
    if valid is None:
        public_key = _AUTHOR_KEYS.get(author) or parse_feed_id(author)
        signature = binascii.a2b_base64(value["signature"][: -len(_SIG_SUFFIX)])
        signed = msg.signing_bytes() if hmac_key is None else _signed_bytes(msg.signing_bytes(), hmac_key)
        valid = ed25519.verify(public_key, signed, signature)
    if not valid:
        raise InvalidMessage(Rule.SIGNATURE, "signature does not verify", author=author, sequence=value["sequence"])


def prove_signatures(messages: Sequence[Message]) -> list[bool]:
    """For each message, True when its signature verifies as `check_signature` finds it on the main network
    (no HMAC key); False where that is not proven: a bad signature, a message that is not well formed, no
    extension. A False decides nothing: `check_signature` judges those messages as ever.

    Why: libsodium checks the whole batch with the GIL released, so a worker thread can prove a batch while the
    event loop goes on reading; a validator told of the proof (``FeedValidator.push``) skips the same check.
    """
    ext = speedups()
    address = ed25519.verify_address() if ext is not None else 0
    if not address:
        return [False] * len(messages)
    items = [(msg.encoded, msg.value.get("author"), msg.value.get("signature")) for msg in messages]
    return [verdict is True for verdict in ext.verify_signatures(address, items)]  # type: ignore[union-attr]


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
