"""The SSB thin waist: refs, keys, strict JSON, classic messages, feed validation, private-box.

Pure: no network, no asyncio, no Spark, no clock (timestamps and randomness are parameters). Names resolve on first
use (`ssblab.core.lazy`): ``ssblab verify`` of one message loads no signing keys, no box and no PyNaCl bindings.
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

_HOME = {
    **dict.fromkeys(["BoxError", "InvalidJson", "InvalidMessage", "InvalidRef", "InvalidSecret", "Rule", "SsbError",
                     "UsageError"], "errors"),
    "Keypair": "keys",
    **dict.fromkeys(["Message", "create_message", "message_id", "signing_encoding", "verify_message"], "message"),
    **dict.fromkeys(["box", "unbox"], "private_box"),
    **dict.fromkeys(["blob_id", "from_uri", "is_blob_id", "is_feed_id", "is_message_id", "to_uri"], "refs"),
    "parse_json": "strict_json",
    **dict.fromkeys(["FeedState", "FeedValidator", "Fork", "ValidationReport", "validate_feed", "validate_next"],
                    "validate"),
}

__all__ = sorted(_HOME)

__getattr__, __dir__ = lazy_names(__name__, _HOME)
