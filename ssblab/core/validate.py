"""Feed validation with ssb-validate semantics, as a pure function of (feed state, message).

`validate_next` is the reducer: it takes the head of a feed (or None) and the next message and returns the new
head or raises `InvalidMessage`. Its rules, in ssb-validate's order: shape; then the first message must have
``previous: null`` and ``sequence: 1``; later ones must have the next sequence and the head's id as previous;
then the signature. A message at the next sequence whose previous is another id, or one at the head's sequence
with another id, is a *fork* once its signature verifies (an unsigned claim proves nothing): fatal, and kept
as `Fork` evidence. A copy of the head itself is a duplicate, not an error.

`FeedValidator` is the thin bookkeeping shell over many feeds that the store, the CLI and `validate_feed` share:
heads per author, feeds stopped at their first invalid message, fork evidence, and counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ssblab.core.compiled import SWITCH, Route, route
from ssblab.core.encoding import has_lone_surrogate
from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, check_shape, check_signature, hmac_key_bytes
from ssblab.core.native import NativeMessage, check_chain

__all__ = [
    "Duplicate", "FeedState", "FeedValidator", "Finding", "Fork", "ForkFound", "History", "ValidationReport",
    "as_message", "iter_messages", "strict_error", "validate_feed", "validate_next",
]


class FeedState(NamedTuple):
    """The head of a feed: what the next message must follow (a tuple: one is built per validated message)."""

    author: str
    sequence: int
    id: str
    timestamp: float

    @classmethod
    def of(cls, msg: Message) -> FeedState:
        return cls(msg.author, int(msg.sequence), msg.id, msg.timestamp)


@dataclass(frozen=True, slots=True)
class Fork:
    """Evidence that an author signed two different messages for one place in its feed."""

    author: str
    sequence: int
    known_id: str  # the id we hold at `sequence` (or at sequence - 1, for a conflicting previous)
    conflicting: Message

    def to_json(self) -> dict[str, Any]:
        return {"author": self.author, "sequence": self.sequence, "known": self.known_id,
                "conflicting": self.conflicting.id}


@dataclass(frozen=True, slots=True)
class Finding:
    """A valid message that breaks a strict JSON rule of the data model which JS peers do not have (a lone
    surrogate, a duplicate key, ``-0`` or an overflowing number): JS accepts it, so ssblab does too, and says so.
    ``--strict`` makes it an error."""

    code: str  # the strict rule: "json-surrogate", "json-duplicate-key" or "json-number"
    author: str | None
    sequence: Any
    id: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "author": self.author, "sequence": self.sequence, "id": self.id}


def strict_error(finding: str, author: str | None, sequence: Any) -> InvalidMessage:
    """The error ``--strict`` makes of a `Finding` (rule ``json``, fatal for the feed)."""
    return InvalidMessage(Rule.JSON, f"{finding}: the text breaks a strict JSON rule that JS peers accept (--strict)",
                          author=author, sequence=sequence)


class Duplicate(Exception):
    """The message is the feed's head again: nothing to do (not an error)."""


class ForkFound(InvalidMessage):
    """A fork: fatal for the feed, with the evidence attached."""

    def __init__(self, fork: Fork) -> None:
        super().__init__(
            Rule.FORK,
            f"signed message {fork.conflicting.id} conflicts with {fork.known_id}",
            author=fork.author,
            sequence=fork.sequence,
        )
        self.fork = fork


def validate_next(
    state: FeedState | None,
    msg: Message | NativeMessage,
    hmac_key: bytes | None = None,
    *,
    check_sig: bool = True,
    compiled: Route = SWITCH,
) -> FeedState:
    """The feed's new head after ``msg``, or an `InvalidMessage`; raises `Duplicate` for a copy of the head.

    A `NativeMessage` (bendy butt, buttwoo) was checked alone when it was read; only its chain is checked here.
    """
    if isinstance(msg, NativeMessage):
        if state is not None and msg.id == state.id:
            raise Duplicate(msg.id)
        check_chain(state, msg)
        return FeedState(msg.author, msg.sequence, msg.id, msg.timestamp)
    compiled = route(compiled)
    check_shape(msg, compiled=compiled)
    value = msg.value
    seq = value["sequence"]
    if type(seq) is not int:
        seq = int(seq)  # an integral float such as 2.0, which check_shape let through as ssb-validate does
    if state is None:
        if value["previous"] is not None or seq != 1:
            raise InvalidMessage(
                Rule.FIRST_MESSAGE, f"the first message must have previous null and sequence 1, got "
                f"previous {value['previous']!r}, sequence {seq}", author=value["author"], sequence=seq)
    else:
        head_seq = state.sequence
        if seq == head_seq + 1 and value["previous"] == state.id:
            pass  # the common case: the next message
        elif seq == head_seq and msg.id == state.id:
            raise Duplicate(msg.id)
        elif seq == head_seq or seq == head_seq + 1:
            if check_sig:
                check_signature(msg, hmac_key, compiled=compiled)
            raise ForkFound(Fork(value["author"], seq, state.id, msg))
        else:
            raise InvalidMessage(
                Rule.SEQUENCE_ORDER, f"expected sequence {head_seq + 1}, got {seq}",
                author=value["author"], sequence=seq, fatal=False)
    if check_sig:
        check_signature(msg, hmac_key, compiled=compiled)
    return FeedState(value["author"], seq, msg.id, value["timestamp"])


@dataclass
class ValidationReport:
    """What a validation run found; `to_json` is the ``ssblab verify --json`` contract."""

    checked: int = 0
    valid: int = 0
    duplicates: int = 0
    errors: list[InvalidMessage] = field(default_factory=list)
    forks: list[Fork] = field(default_factory=list)
    heads: dict[str, FeedState] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)  # valid messages of formats other than classic
    findings: list[Finding] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # records not messages: "deleted" (ssb-db2), …

    @property
    def invalid(self) -> int:
        return len(self.errors)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def feeds(self) -> int:
        return len({*self.heads, *(e.author for e in self.errors if e.author)})

    def to_json(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "valid": self.valid,
            "invalid": self.invalid,
            "feeds": self.feeds,
            "forks": len(self.forks),
            "formats": dict(self.formats),
            "findings": [f.to_json() for f in self.findings],
            "skipped": dict(self.skipped),
            "errors": [e.to_json() for e in self.errors],
        }


History = Callable[[str, int], str | None]


class FeedValidator:
    """Validates interleaved messages of many feeds; a feed stops at its first fatal error.

    Fatal (ssb-validate's flag) is every error but an out-of-order sequence, which only rejects that message.

    ``history(author, sequence)`` (from a store) gives the id held at an older sequence, so that a message below
    the head is recognised as a duplicate or as a fork; without it such a message is out of order.

    A message that breaks a strict JSON rule JS does not have (`Finding`) is judged as JS judges it and reported
    in ``report.findings``; with ``strict`` it is invalid instead (rule ``json``, fatal).
    """

    def __init__(
        self,
        hmac_key: Any = None,
        heads: Iterable[FeedState] = (),
        *,
        history: History | None = None,
        stopped: Mapping[str, InvalidMessage] | None = None,
        strict: bool = False,
        compiled: Route = SWITCH,
    ) -> None:
        self.hmac_key = hmac_key_bytes(hmac_key)
        self.strict = strict
        self.compiled = route(compiled)  # the route of every message this validator checks: read once, here
        self.report = ValidationReport(heads={h.author: h for h in heads})
        self.stopped: dict[str, InvalidMessage] = dict(stopped or {})
        self.history = history

    def push(self, msg: Message | NativeMessage, finding: str | None = None, *, proven: bool = False) -> bool:
        """Validate one message; True when it is new and valid (the caller may store it).

        ``finding`` is the strict JSON rule its text broke, when the caller parsed text (a lone surrogate is also
        found in the encoding). ``proven``: `ssblab.core.message.prove_signatures` found its signature valid, so
        the check is not made twice (on the main network only: with an HMAC key it is always made).
        """
        report = self.report
        report.checked += 1
        author = msg.value.get("author")
        if type(author) is not str:
            author = None
        if finding is None and isinstance(msg, Message) and has_lone_surrogate(msg.encoded):
            finding = "json-surrogate"
        try:
            if finding is not None and self.strict:
                raise strict_error(finding, author, msg.sequence)
            if author in self.stopped:
                first = self.stopped[author]
                raise InvalidMessage(Rule.FEED_STOPPED, f"the feed stopped at sequence {first.sequence}: "
                                     f"{first.rule.value}", author=author, sequence=msg.sequence)
            head = report.heads.get(author) if author else None
            if head is not None and self.history is not None and isinstance(msg, Message):
                self._check_history(head, msg)
            head = validate_next(head, msg, self.hmac_key, check_sig=not (proven and self.hmac_key is None),
                                 compiled=self.compiled)
        except Duplicate:
            report.duplicates += 1
            return False
        except InvalidMessage as exc:
            report.errors.append(exc)
            if isinstance(exc, ForkFound):
                report.forks.append(exc.fork)
            if exc.fatal and author and author not in self.stopped:
                self.stopped[author] = exc
            return False
        report.heads[author] = head  # type: ignore[index]
        report.valid += 1
        if finding is not None:
            report.findings.append(Finding(finding, author, msg.sequence, msg.id))
        if isinstance(msg, NativeMessage):
            report.formats[msg.format] = report.formats.get(msg.format, 0) + 1
        return True

    def skip(self, reason: str) -> None:
        """Count a record that holds no message (a deleted one), without checking it."""
        self.report.skipped[reason] = self.report.skipped.get(reason, 0) + 1

    def _check_history(self, head: FeedState, msg: Message) -> None:
        seq = msg.sequence
        if type(seq) is not int or not 1 <= seq < head.sequence:
            return
        known = self.history(head.author, seq)  # type: ignore[misc]
        if known is None:
            return
        if known == msg.id:
            raise Duplicate(msg.id)
        check_shape(msg, compiled=self.compiled)
        check_signature(msg, self.hmac_key, compiled=self.compiled)
        raise ForkFound(Fork(head.author, seq, known, msg))

    def reject(self, error: InvalidMessage) -> None:
        """Count a message that could not even be parsed."""
        self.report.checked += 1
        self.report.errors.append(error)


def as_message(item: Any) -> Message:
    """A `Message` from a value, raw JSON, or a ``{key, value, timestamp}`` record."""
    if isinstance(item, Message):
        return item
    if isinstance(item, bytes | str):
        return Message.from_json(item)
    if isinstance(item, dict) and "value" in item and "key" in item:
        item = item["value"]
    return Message.from_value(item)


def iter_messages(items: Iterable[Any], validator: FeedValidator) -> Iterator[Message]:
    """Parse items into messages, counting the unparseable ones as rejected."""
    for item in items:
        try:
            yield as_message(item)
        except InvalidMessage as exc:
            validator.reject(exc)


def validate_feed(
    values: Iterable[Any], previous: Any = None, hmac_key: Any = None
) -> ValidationReport:
    """Validate messages of one or more feeds in log order.

    Args:
        values: message values, raw JSON texts, or ``{key, value, timestamp}`` records.
        previous: a trusted message (or `FeedState`) to continue from, for checking the tail of a feed.
        hmac_key: a test network's HMAC key.

    Returns:
        The `ValidationReport`; ``report.ok`` is True when every message is valid.

    Raises:
        InvalidMessage: only for an unusable ``hmac_key`` or ``previous``.
    """
    heads = [] if previous is None else [
        previous if isinstance(previous, FeedState) else FeedState.of(as_message(previous))
    ]
    validator = FeedValidator(hmac_key, heads)
    for msg in iter_messages(values, validator):
        validator.push(msg)
    return validator.report
