"""One error hierarchy for ssblab.

Every error carries a stable, machine-readable ``code`` (what scripts and the ``--json`` output key on) and a
message for people that names the rule and, for messages, the author and the sequence. Functions either return
a value or raise one of these; nothing returns "error-or-False" (the style of ssb-validate's three error styles
is what this replaces).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["BoxError", "InvalidJson", "InvalidMessage", "InvalidRef", "InvalidSecret", "Rule", "SsbError", "UsageError"]


class SsbError(Exception):
    """Base class of every error ssblab raises on purpose."""

    code: str = "ssb-error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class UsageError(SsbError, ValueError):
    """A caller passed what an API cannot take (a negative varint, a key of the wrong length): a bug in the calling
    program, not bad input from a peer or a file. Also a ValueError, which is what these were before."""

    code = "usage"


class InvalidJson(SsbError):
    """Text that SSB's JSON rules reject (duplicate keys, lone surrogates, ±Infinity or -0, NaN, bad syntax), or a
    value that JSON cannot hold (a set, a boolean where a number must be)."""

    code = "json"


class InvalidRef(SsbError):
    """A feed, message or blob reference (or ``ssb:`` URI) that is not well formed."""

    code = "ref"


class InvalidSecret(SsbError):
    """An ssb-keys secret (file or object) that cannot be used as a keypair."""

    code = "secret"


class BoxError(SsbError):
    """private-box input that cannot be boxed (too many recipients, bad recipient id, malformed box)."""

    code = "box"


class Rule(StrEnum):
    """The rules a classic message can break; the value is the stable error ``code``."""

    JSON = "json"  # the message text is not SSB JSON at all
    NOT_OBJECT = "not-object"
    ORDER = "order"  # exactly the seven keys, in the allowed order
    PREVIOUS = "previous"  # null or a message id
    AUTHOR = "author"
    SEQUENCE = "sequence"
    TIMESTAMP = "timestamp"
    HASH = "hash"
    CONTENT = "content"  # an object or a boxed string (not null, not an array)
    CONTENT_TYPE = "content-type"
    BOX = "box"  # a boxed content string: canonical base64 then ".box"
    SIGNATURE_FORMAT = "signature-format"
    SIZE = "size"  # at most 8192 UTF-16 code units
    HMAC_KEY = "hmac-key"
    SIGNATURE = "signature"
    FIRST_MESSAGE = "first-message"  # the first message of a feed: previous null, sequence 1
    SEQUENCE_ORDER = "sequence-order"  # not the next sequence of the feed (a gap, or one we cannot place)
    FORK = "fork"  # two different signed messages claim the same place in the feed
    FEED_STOPPED = "feed-stopped"  # the feed stopped at an earlier invalid message or fork
    FORMAT = "format"  # a feed format ssblab cannot verify (unknown, or its hash function is not installed)


class InvalidMessage(SsbError):
    """A message that breaks one of the classic message rules.

    ``fatal`` follows ssb-validate: a fatal error (fork, bad signature, bad shape) stops the feed, a non-fatal one
    (an out-of-order sequence) only rejects this message.
    """

    def __init__(
        self,
        rule: Rule,
        detail: str,
        *,
        author: str | None = None,
        sequence: object = None,
        fatal: bool = True,
    ) -> None:
        self.rule = rule
        self.detail = detail
        self.author = author
        self.sequence = sequence
        self.fatal = fatal
        where = f" (author {author}, sequence {sequence})" if author is not None else ""
        super().__init__(f"{rule.value}: {detail}{where}", code=rule.value)

    def at(self, author: str | None, sequence: object) -> InvalidMessage:
        """The same error, placed at a message (shape checks raise before they know where they are)."""
        return InvalidMessage(self.rule, self.detail, author=author, sequence=sequence, fatal=self.fatal)

    def to_json(self) -> dict[str, object]:
        return {"author": self.author, "sequence": self.sequence, "code": self.code, "message": str(self)}
