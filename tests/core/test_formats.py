"""Bendy butt and buttwoo from their native bytes: the bendy-butt-spec vectors (../shared/vectors), and every rule
a bad message breaks. Bit-exactness against the JS packages on real data is tests/store/test_db2.py's (ssb-db2@8
writes the messages, ssblab rebuilds and verifies each one with the id JS gave it)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from nacl.signing import SigningKey

from ssblab.core import bendybutt, bfe, bipf, buttwoo
from ssblab.core.errors import InvalidMessage
from ssblab.core.native import NativeMessage
from ssblab.core.validate import FeedValidator
from tests.vectors import load_json

KEY = SigningKey(bytes([7]) * 32)
AUTHOR = bytes(KEY.verify_key)


def test_spec_vectors_encodings_ids_and_signatures() -> None:
    """Every vector's bytes decode and re-encode exactly and its id is sha256 of them. Their signatures predate
    the spec's final signing rule: ssb-bendy-butt 1.0 rejects them ("must correctly sign the payload", and the
    first one for its zero previous), and so does ssblab."""
    data = load_json(None, "bendy-butt-spec/testvector-metafeed-managment.json")
    for entry in data["Entries"]:
        native = bytes.fromhex(entry["EncodedData"])
        top = bendybutt.bdecode(native)
        assert bendybutt.bencode(top) == native
        digest = base64.b64decode(entry["Key"][1:].split(".")[0])
        assert bendybutt.message_id(native) == f"ssb:message/bendybutt-v1/{base64.urlsafe_b64encode(digest).decode()}"
        assert top[1].hex() == entry["Signature"] and top[0][1] == entry["Sequence"]
        with pytest.raises(InvalidMessage, match=r"previous|signature"):
            bendybutt.verify(native)


def bendy(sequence: int = 1, previous: str | None = None, content: Any = None, key: SigningKey = KEY) -> bytes:
    author = f"ssb:feed/bendybutt-v1/{base64.urlsafe_b64encode(bytes(key.verify_key)).decode()}"
    content = content or {"type": "metafeed/add/existing", "feedpurpose": "main", "nonce": b"\x01" * 32}
    signature = key.sign(b"bendybutt" + bendybutt.bencode(bfe.encode(content))).signature
    payload = bfe.encode([author, sequence, previous, 1000 + sequence, [content, b""]])
    payload[4][1] = b"\x04\x00" + signature
    return bendybutt.bencode([payload, b"\x04\x00" + key.sign(bendybutt.bencode(payload)).signature])


def test_a_bendy_butt_feed_validates_and_forks_are_caught() -> None:
    first = bendybutt.verify(bendy())
    second = bendybutt.verify(bendy(2, first.id))
    assert second.previous == first.id and first.author.startswith("ssb:feed/bendybutt-v1/")
    validator = FeedValidator()
    assert validator.push(first) and validator.push(second) and not validator.push(second)
    assert validator.report.duplicates == 1 and validator.report.formats == {"bendybutt-v1": 2}
    other = bendybutt.verify(bendy(2, first.id, {"type": "other", "x": 1}))
    assert not validator.push(other) and validator.report.errors[0].code == "fork"


@pytest.mark.parametrize(("change", "code"), [
    (lambda b: b[:-3] + bytes([b[-3] ^ 1]) + b[-2:], "signature"),  # a flipped signature bit
    (lambda b: b.replace(b"34:\x00\x03", b"34:\x00\x00", 1), "author"),  # a classic author
    (lambda b: b"l" + b[1:-1] + b"i1ee", "order"),  # a third element
    (lambda b: b[:-1], "json"),  # cut short
])
def test_bad_bendy_butt_messages_name_the_rule(change: Any, code: str) -> None:
    with pytest.raises(InvalidMessage) as caught:
        bendybutt.verify(change(bendy()))
    assert caught.value.code == code


def test_bendy_butt_size_limit() -> None:
    with pytest.raises(InvalidMessage, match="over 8192"):
        bendybutt.verify(bendy(content={"type": "big", "text": "x" * 9000}))


def woo(content: Any = None, tag: bytes = b"\x00", sequence: int = 1, previous: bytes = bfe.NIL) -> bytes:
    body = bipf.encode(content or {"type": "post", "text": "hi"})
    fields = [b"\x00\x04" + AUTHOR, bfe.NIL, sequence, 1000, previous, tag, len(body),
              b"\x00" + buttwoo.blake3(body)]
    encoded = bipf.encode(fields)
    return bipf.encode([encoded, KEY.sign(encoded).signature, body])


def test_buttwoo_messages_and_their_rules() -> None:
    pytest.importorskip("blake3")
    msg = buttwoo.verify(woo())
    assert isinstance(msg, NativeMessage) and msg.id.startswith("ssb:message/buttwoo-v1/") and msg.sequence == 1
    assert buttwoo.to_native({"author": msg.author, "parent": None, "sequence": 1, "timestamp": 1000,
                              "previous": None, "tag": b"\x00", "content": {"type": "post", "text": "hi"},
                              "contentHash": b"\x00" + buttwoo.blake3(bipf.encode({"type": "post", "text": "hi"})),
                              "signature": bipf.decode(woo())[1]}) == woo()
    bad = bipf.decode(woo())
    for native, code in [(bipf.encode([bad[0], bad[1], bipf.encode({"type": "post", "text": "ho"})]), "hash"),
                         (woo(tag=b"\x07"), "content"), (bipf.encode([bad[0], bytes(64), bad[2]]), "signature"),
                         (woo(sequence=2), "previous"), (b"\x07", "json")]:
        with pytest.raises(InvalidMessage) as caught:
            buttwoo.verify(native)
        assert caught.value.code == code, native
