"""The SSB thin waist: refs, keys, strict JSON, classic messages, feed validation, private-box.

Pure: no network, no asyncio, no Spark, no clock (timestamps and randomness are parameters).
"""

from ssblab.core.errors import (
    BoxError,
    InvalidJson,
    InvalidMessage,
    InvalidRef,
    InvalidSecret,
    Rule,
    SsbError,
    UsageError,
)
from ssblab.core.keys import Keypair
from ssblab.core.message import (
    Message,
    create_message,
    message_id,
    signing_encoding,
    verify_message,
)
from ssblab.core.private_box import box, unbox
from ssblab.core.refs import (
    blob_id,
    from_uri,
    is_blob_id,
    is_feed_id,
    is_message_id,
    to_uri,
)
from ssblab.core.strict_json import parse_json
from ssblab.core.validate import (
    FeedState,
    FeedValidator,
    Fork,
    ValidationReport,
    validate_feed,
    validate_next,
)

__all__ = [
    "BoxError",
    "FeedState",
    "FeedValidator",
    "Fork",
    "InvalidJson",
    "InvalidMessage",
    "InvalidRef",
    "InvalidSecret",
    "Keypair",
    "Message",
    "Rule",
    "SsbError",
    "UsageError",
    "ValidationReport",
    "blob_id",
    "box",
    "create_message",
    "from_uri",
    "is_blob_id",
    "is_feed_id",
    "is_message_id",
    "message_id",
    "parse_json",
    "signing_encoding",
    "to_uri",
    "unbox",
    "validate_feed",
    "validate_next",
    "verify_message",
]
