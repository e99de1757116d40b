"""How a feed publishes its Merkle diamonds, so that certificates are checked against something the author signed.

Why: two certificates that agree with each other prove nothing on their own: an attacker can build a whole tree
over forged ids that keeps a genuine certificate's small diamonds (a genuine c1 with a c6 from the attacker's
tree). A verifier must trust the top diamond, and the only thing in SSB it can trust is a message the author
signed. So the author publishes one:

``{"type": "merkle-anchor", "leaves": 2**J, "diamonds": ["<base64 D_0>", …, "<base64 D_J>"]}``

``diamonds`` are the roots of the complete trees over the feed's first 1, 2, 4, … ``2**J`` messages (leaves as in
`ssblab.certs.merkle`: message ids in sequence order), each 32 bytes in canonical base64; ``leaves`` repeats their
count. The anchor comes later in the feed than every message it covers (sequence above ``leaves``), and ``J + 1``
hashes fit easily in one message (21 for a feed of a million). A feed may publish a new anchor as it grows; any
one that covers a certificate's height will do. `read_anchor` checks the message (signature included) and the
content; `merkle.verify_order` then requires every diamond of both certificates to be the anchor's.
"""

from __future__ import annotations

from typing import Any

from ssblab.certs.merkle import HASH_BYTES, Anchor, CertificateError, CertRule, FeedTree
from ssblab.core.errors import InvalidMessage, InvalidRef
from ssblab.core.message import verify_message
from ssblab.core.refs import b64, decode_canonical_b64

__all__ = ["ANCHOR_TYPE", "anchor_content", "read_anchor"]

ANCHOR_TYPE = "merkle-anchor"
_MAX_HEIGHT = 40  # 2**40 messages: more than any feed will hold


def anchor_content(tree: FeedTree, height: int | None = None) -> dict[str, Any]:
    """The content of an anchor message for the first ``2**height`` messages of ``tree`` (default: the largest
    complete diamond the tree has).

    Examples:
        >>> tree = FeedTree.from_ids([f"%m{i}" for i in range(5)])
        >>> content = anchor_content(tree)
        >>> content["type"], content["leaves"], len(content["diamonds"])
        ('merkle-anchor', 4, 3)
    """
    if height is None:
        height = tree.length.bit_length() - 1
    diamonds = [tree.diamond(h) for h in range(height + 1)]
    return {"type": ANCHOR_TYPE, "leaves": 1 << height, "diamonds": [b64(d) for d in diamonds]}


def read_anchor(value: Any, *, feed: str | None = None, hmac_key: Any = None) -> Anchor:
    """The anchor in a message value: the message must be valid on its own (signature included), of ``feed``
    when given, with an anchor content that comes after the messages it covers.

    Raises:
        CertificateError: rule ``anchor``, naming what is wrong.
    """
    try:
        msg = verify_message(value, hmac_key)
    except InvalidMessage as exc:
        raise CertificateError(CertRule.ANCHOR, f"the anchor is not a valid message: {exc}") from None
    if feed is not None and msg.author != feed:
        raise CertificateError(CertRule.ANCHOR, f"the anchor is a message of {msg.author}, not of {feed}")
    diamonds = _diamonds(msg.content)
    if msg.sequence <= 1 << (len(diamonds) - 1):
        raise CertificateError(CertRule.ANCHOR, f"the anchor at sequence {msg.sequence} cannot cover the "
                                                f"{1 << (len(diamonds) - 1)} messages it names")
    return Anchor(msg.author, msg.sequence, msg.id, diamonds)


def _diamonds(content: Any) -> tuple[bytes, ...]:
    if not isinstance(content, dict) or content.get("type") != ANCHOR_TYPE:
        raise CertificateError(CertRule.ANCHOR, f"not a {ANCHOR_TYPE} message")
    listed, leaves = content.get("diamonds"), content.get("leaves")
    if not isinstance(listed, list) or not 1 <= len(listed) <= _MAX_HEIGHT + 1:
        raise CertificateError(CertRule.ANCHOR, f"'diamonds' must list 1 to {_MAX_HEIGHT + 1} hashes")
    if type(leaves) is not int or leaves != 1 << (len(listed) - 1):
        raise CertificateError(CertRule.ANCHOR, f"'leaves' must be {1 << (len(listed) - 1)} for "
                                                f"{len(listed)} diamonds, got {leaves!r:.20}")
    diamonds = []
    for i, text in enumerate(listed):
        try:
            diamonds.append(decode_canonical_b64(text, HASH_BYTES) if isinstance(text, str) else b"")
        except InvalidRef:
            diamonds.append(b"")
        if not diamonds[-1]:
            raise CertificateError(CertRule.ANCHOR, f"diamond {i} is not a 32-byte hash in canonical base64")
    return tuple(diamonds)
