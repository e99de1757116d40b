"""Creating, signing and verifying messages; keys and secret files; private-box; refs."""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssblab import (
    BoxError,
    InvalidMessage,
    InvalidRef,
    InvalidSecret,
    Keypair,
    blob_id,
    box,
    create_message,
    from_uri,
    is_feed_id,
    is_message_id,
    message_id,
    to_uri,
    unbox,
    validate_feed,
    verify_message,
)
from ssblab.core.message import Message, check_content, check_shape
from ssblab.core.refs import decode_canonical_b64

ALICE = Keypair.generate(bytes(32))
BOB = Keypair.generate(bytes([1]) * 32)
HMAC = "Z0e2zyrmHeit5ydNjaw2bLlrHBwx9UcivTAAGquwQ+Y="


def test_created_messages_verify_with_and_without_hmac() -> None:
    content = {"type": "post", "text": "héllo ’ 😀 \u2028", "n": [1.5, 1e21, 2**60], "1": {"0": []}}
    first = create_message(ALICE, content, timestamp=1_600_000_000_000.5)
    assert verify_message(first.value).id == first.id == message_id(first.value)
    second = create_message(ALICE, {"type": "vote"}, previous=first, timestamp=2, hmac_key=HMAC)
    assert second.value["previous"] == first.id and second.value["sequence"] == 2
    verify_message(second.value, hmac_key=HMAC)
    with pytest.raises(InvalidMessage) as info:
        verify_message(second.value)
    assert info.value.code == "signature" and info.value.sequence == 2 and info.value.author == ALICE.id


def test_tampering_anywhere_breaks_the_signature() -> None:
    msg = create_message(ALICE, {"type": "post", "text": "x"}, timestamp=1)
    for key, new in (("timestamp", 2), ("content", {"type": "post", "text": "y"})):
        with pytest.raises(InvalidMessage, match="signature"):
            verify_message({**msg.value, key: new})


def test_size_limit_counts_utf16_units() -> None:
    base = create_message(ALICE, {"type": "post", "text": ""}, timestamp=1).size
    fits = create_message(ALICE, {"type": "post", "text": "é" * (8192 - base)}, timestamp=1)
    assert fits.size == 8192 and len(fits.encoded) > 8192  # more than 8 KiB of UTF-8, still valid
    with pytest.raises(InvalidMessage) as info:
        create_message(ALICE, {"type": "post", "text": "x" * (8193 - base)}, timestamp=1)
    assert info.value.code == "size"


def test_message_from_json_accepts_indented_and_rejects_bad_json() -> None:
    msg = create_message(ALICE, {"type": "post"}, timestamp=1)
    assert Message.from_json(msg.encoded).id == msg.id
    with pytest.raises(InvalidMessage) as info:
        Message.from_json(b'{"previous": null, "previous": }')
    assert info.value.code == "json"
    assert Message.from_json(b'{"previous": 1, "previous": null}').value == {"previous": None}  # as JSON.parse


def test_keys_secret_file_roundtrip_and_errors(tmp_path) -> None:
    path = tmp_path / "secret"
    ALICE.write_secret_file(path)
    assert Keypair.from_secret_file(path) == ALICE
    assert "your public name: " + ALICE.id in path.read_text()
    obj = ALICE.to_secret_object()
    with pytest.raises(InvalidSecret, match="'id' does not belong"):
        Keypair.from_secret_object({**obj, "id": BOB.id})
    with pytest.raises(InvalidSecret, match="64 bytes"):
        Keypair.from_secret_object({**obj, "private": obj["private"][:20] + ".ed25519"})
    broken = tmp_path / "broken"
    broken.write_text("# only comments\n")
    with pytest.raises(InvalidSecret, match="no JSON object"):
        Keypair.from_secret_file(broken)
    with pytest.raises(InvalidSecret, match="cannot read"):
        Keypair.from_secret_file(tmp_path / "missing")


def test_private_box_roundtrip_and_strangers() -> None:
    content = {"type": "post", "text": "secret ’😀", "recps": [ALICE.id, BOB.id]}
    boxed = box(content, [ALICE.id, BOB.id])
    assert boxed.endswith(".box")
    assert unbox(boxed, ALICE) == content and unbox(boxed, BOB) == content
    assert unbox(boxed, Keypair.generate(bytes([2]) * 32)) is None
    assert unbox("garbage.box", ALICE) is None
    msg = create_message(ALICE, boxed, timestamp=1)
    assert verify_message(msg.value).is_private


def test_private_box_limits() -> None:
    with pytest.raises(BoxError, match="1 to 7"):
        box({"type": "x"}, [ALICE.id] * 8)
    with pytest.raises(BoxError, match="bad recipient"):
        box({"type": "x"}, ["@nope.ed25519"])


def test_private_box_is_deterministic_with_given_randomness() -> None:
    def rng(n: int) -> bytes:
        return bytes(range(n))

    assert box({"type": "x"}, [BOB.id], rng) == box({"type": "x"}, [BOB.id], rng)


def test_refs_and_uris() -> None:
    msg = create_message(ALICE, {"type": "post"}, timestamp=1)
    assert is_feed_id(ALICE.id) and is_message_id(msg.id) and not is_feed_id(msg.id)
    assert not is_feed_id(ALICE.id.replace("=.", "==."))  # non-canonical base64
    blob = blob_id(b"hello")
    for ref in (ALICE.id, msg.id, blob):
        uri = to_uri(ref)
        assert uri.startswith("ssb:") and "/classic/" in uri and from_uri(uri) == ref
    assert from_uri(to_uri(msg.id).replace("/classic/", "/sha256/")) == msg.id
    for bad in ("http://x", "ssb:feed/classic/AAAA", "ssb:thing/classic/xx"):
        with pytest.raises(InvalidRef):
            from_uri(bad)


BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


@given(st.binary(min_size=32, max_size=32), st.sampled_from(BASE64_ALPHABET))
def test_canonical_regex_agrees_with_decoding(key: bytes, last: str) -> None:
    for text in (base64.b64encode(key).decode(), base64.b64encode(key).decode()[:-2] + last + "="):
        try:
            decode_canonical_b64(text, 32)
            decodes = True
        except InvalidRef:
            decodes = False
        assert is_feed_id(f"@{text}.ed25519") == decodes


@pytest.mark.parametrize("field", ["author", "previous", "signature", "sequence", "timestamp", "hash", "content"])
@pytest.mark.parametrize("odd", [[], {}, None, True, 1.5, "x"])
def test_any_field_of_any_type_gets_a_rule_not_a_crash(field: str, odd: object) -> None:
    msg = create_message(ALICE, {"type": "post"}, timestamp=1)
    if msg.value[field] == odd:
        return  # the first message's previous is null already: nothing changed
    with pytest.raises(InvalidMessage) as info:
        verify_message({**msg.value, field: odd})
    assert info.value.code in {field, "previous", "content-type", "box", "signature-format", "signature",
                               "author", "sequence", "timestamp", "hash", "content"}


@pytest.mark.parametrize("depth", [300, 500, 950, 2000, 5000])
def test_deep_nesting_gets_a_rule_not_a_crash(depth: int) -> None:
    """orjson stops at 254 levels and Python's recursion near 490: beyond, a `json` rule, never a crash."""
    nested: object = 1.0
    for _ in range(depth):
        nested = [nested]
    raw = (b'{"previous":null,"author":"%s","sequence":1,"timestamp":1,"hash":"sha256","content":{"type":"deep",'
           b'"x":%s1.0%s},"signature":"%s==.sig.ed25519"}') % (ALICE.id.encode(), b"[" * depth, b"]" * depth,
                                                               b"A" * 86)
    report = validate_feed([raw])
    assert report.invalid == 1 and report.errors[0].code in {"json", "size"}  # indentation grows fast
    with pytest.raises(InvalidMessage) as info:
        create_message(ALICE, {"type": "deep", "x": nested}, timestamp=1)
    assert info.value.code in {"json", "size"}


_B64ISH = st.text(st.sampled_from("AQgwBz09+/=.éx"), max_size=14)


@given(_B64ISH, st.sampled_from([".box", ".box2", ".bo", "", ".box.x", "..box"]))
def test_boxed_content_fast_check_is_the_regex_rule(body: str, suffix: str) -> None:
    content = body + suffix
    match = re.match(r"([0-9A-Za-z/+]+={0,2})\.box", content)
    try:
        expected = bool(match) and decode_canonical_b64(match.group(1)) is not None  # type: ignore[union-attr]
    except InvalidRef:
        expected = False
    try:
        check_content(content)
        accepted = True
    except InvalidMessage as exc:
        assert exc.code == "box"
        accepted = False
    assert accepted == expected


def test_sequence_and_shape_edge_cases() -> None:
    msg = create_message(ALICE, {"type": "post"}, timestamp=1)
    for seq, ok in ((1.0, True), (2**31 - 1, True), (2**31, False), (-(2**31), True), (True, False),
                    (float("nan"), False), (float("inf"), False), (1.5, False), ("1", False)):
        value = {**msg.value, "sequence": seq}
        try:
            check_shape(Message(value, msg.encoded, msg.id))
            assert ok, seq
        except InvalidMessage as exc:
            assert not ok and exc.code == "sequence", seq
