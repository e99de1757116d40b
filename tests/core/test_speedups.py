"""The compiled fast paths (ssblab.core._speedups) prove only what the pure-Python rules decide the same way."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ssblab import InvalidJson, InvalidMessage, Keypair, create_message
from ssblab.core import compiled, ed25519
from ssblab.core.encoding import is_plain
from ssblab.core.message import _check_fields, check_shape, check_signature, prove_signatures
from ssblab.core.strict_json import parse_json
from ssblab.core.v8_json import stringify
from ssblab.core.validate import FeedValidator
from tests.core.test_encoding import json_values, texts

speedups: Any = compiled.built()  # the extension itself, called directly here
needs_speedups = pytest.mark.skipif(speedups is None, reason="ssblab.core._speedups is not built")


def _exact_route(text: bytes) -> bytes | None:
    """What the strict parser and the exact encoder make of ``text`` (None: SSB rejects it)."""
    try:
        return stringify(parse_json(text)).encode("utf-8", "surrogatepass")
    except InvalidJson:
        return None


def _check_v8_indent(text: bytes) -> bytes | None:
    fast = speedups.v8_indent(text)
    if fast is not None:
        assert fast == _exact_route(text)
        assert orjson.loads(text) == parse_json(text)  # so the caller may take orjson's value
    return fast


@needs_speedups
@given(json_values)
@settings(max_examples=400)
def test_v8_indent_is_the_exact_route_or_declines(value: object) -> None:
    compact = stringify(value, indent=0).encode("utf-8", "surrogatepass")
    indented = stringify(value).encode("utf-8", "surrogatepass")
    for text in (compact, indented):
        fast = _check_v8_indent(text)
        try:
            orjson.dumps(value)
        except orjson.JSONEncodeError:
            continue  # a lone surrogate: declined, and the exact route escapes it
        if is_plain(value):
            assert fast == indented  # the common case is taken, not declined


@needs_speedups
@given(st.binary(max_size=40) | st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")))
@example(b'{"a":1,"a":2}')
@example(b'{"a":-0}')
@example(b'["\\ud800"]')
@example(b'["\\udc00\\ud800"]')
@example(b"[1.50]")
@example(b"[1e2]")
@example(b"[9007199254740993]")
@example(b'{"1":1}')
@example(b"[1]\x0c")
@example(b'"\xed\xa0\x80"')
@example(b'"\xc0\xaf"')
@example(b'"\x1f"')
@example(b"[1,]")
@example(b'["\\u00e9\\/\\"\\b\\f\\n\\r\\t\\u001f\\u007f"]')
def test_v8_indent_on_arbitrary_bytes(text: bytes) -> None:
    _check_v8_indent(text)


@needs_speedups
@given(json_values, st.lists(st.sampled_from([b" ", b"\n", b"\t", b"\r", b"\x0b", b"x", b",", b'"', b"\\"])),
       st.data())
@settings(max_examples=300)
def test_v8_indent_on_damaged_text(value: object, inserts: list[bytes], data: st.DataObject) -> None:
    text = stringify(value, indent=0).encode("utf-8", "surrogatepass")
    for insert in inserts:
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + insert + text[at:]
    _check_v8_indent(text)


def test_v8_indent_declines_past_its_limits() -> None:
    if speedups is None:
        pytest.skip("ssblab.core._speedups is not built")
    deep = b"[" * 201 + b"]" * 201  # 200 levels below the top
    assert speedups.v8_indent(deep) == _exact_route(deep)
    deeper = b"[" + deep + b"]"
    assert speedups.v8_indent(deeper) is None and _exact_route(deeper) is not None
    wide = orjson.dumps({f"k{i}": i for i in range(256)})
    assert speedups.v8_indent(wide) == _exact_route(wide)
    wider = orjson.dumps({f"k{i}": i for i in range(257)})
    assert speedups.v8_indent(wider) is None and _exact_route(wider) is not None


@needs_speedups
@given(texts | st.text(max_size=40) | st.text(min_size=60, max_size=300))
@example("\ud800")
@example("a\udfff\U0001f600\u00e9\u4e2d")
@example("x" * 55)  # sha256's padding takes a second block from 56 bytes
@example("x" * 56)
@example("x" * 64)
@example("é" * 9000)
def test_ids_hash_the_low_byte_of_each_utf16_unit(text: str) -> None:
    encoded = text.encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(text.encode("utf-16-le", "surrogatepass")[0::2]).digest()
    assert speedups.binary_sha256(encoded) == digest
    assert speedups.message_id(encoded) == f"%{base64.b64encode(digest).decode()}.sha256"


def test_binary_sha256_refuses_what_is_not_utf8() -> None:
    if speedups is None:
        pytest.skip("ssblab.core._speedups is not built")
    with pytest.raises(ValueError, match="not UTF-8 at byte 1"):
        speedups.binary_sha256(b"a\xff")
    with pytest.raises(ValueError, match="not UTF-8 at byte 0"):
        speedups.message_id(b"\xc0\xaf")


KEYPAIR = Keypair.generate(bytes(range(32)))
FIRST = create_message(KEYPAIR, {"type": "post", "text": "hello"}, timestamp=1_600_000_000_000)
SECOND = create_message(KEYPAIR, "c2VjcmV0.box", previous=FIRST, timestamp=1_600_000_000_001.5)

# Replacements for one field at a time: every rule's edge, on both sides.
ODD_VALUES: list[Any] = [
    None, True, 0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 1.5, 2.0, float("nan"), "", "sha256", "sha512",
    "post", {}, [], {"type": "ab"}, {"type": "abc"}, {"type": "x" * 52}, {"type": "x" * 53}, {"type": "é" * 5},
    {"type": 5}, "YQ==.box", "YR==.box", "YQ==.box2", ".box", "YQ=.box", "YQ==.bo", FIRST.id, FIRST.id[:-1],
    FIRST.id.replace("%", "&"), KEYPAIR.id, KEYPAIR.id.replace("=.", "A.", 1), KEYPAIR.id.replace("@", "%"),
    FIRST.value["signature"], FIRST.value["signature"].replace("==.sig", "Ab.sig"),
    FIRST.value["signature"].replace(".sig.ed25519", ".sig.ed"), FIRST.value["signature"][1:],
    "%" + base64.b64encode(bytes(31)).decode() + ".sha256",
]


def _python_accepts(value: dict[str, Any]) -> bool:
    try:
        _check_fields(value)
    except (InvalidMessage, KeyError):
        return False
    return True


@needs_speedups
@given(st.sampled_from([FIRST, SECOND]), st.sampled_from(list(FIRST.value)), st.sampled_from(ODD_VALUES))
@settings(max_examples=600)
def test_classic_shape_ok_only_accepts_what_the_rules_accept(msg: Any, field: str, odd: Any) -> None:
    value = {**msg.value, field: odd}
    if speedups.classic_shape_ok(value):
        assert _python_accepts(value)


@needs_speedups
@given(st.permutations(list(FIRST.value)), st.sampled_from([None, "extra", "hash"]))
def test_classic_shape_ok_holds_to_the_key_order(order: list[str], drop_or_add: str | None) -> None:
    value = {key: FIRST.value[key] for key in order}
    if drop_or_add == "extra":
        value["extra"] = 1
    elif drop_or_add == "hash":
        del value["hash"]
    if speedups.classic_shape_ok(value):
        assert _python_accepts(value)


def test_classic_shape_ok_takes_the_common_messages() -> None:
    if speedups is None:
        pytest.skip("ssblab.core._speedups is not built")
    assert speedups.classic_shape_ok(FIRST.value) and speedups.classic_shape_ok(SECOND.value)
    check_shape(FIRST)


def test_verify_signature_agrees_with_libsodium() -> None:
    if speedups is None:
        pytest.skip("ssblab.core._speedups is not built")
    address, value = ed25519.verify_address(), FIRST.value
    assert speedups.verify_signature(address, FIRST.encoded, value["author"], value["signature"]) is True
    forged = value["signature"].replace(value["signature"][:4], "AAAA", 1)
    forged_encoded = FIRST.encoded.replace(value["signature"].encode(), forged.encode())
    assert speedups.verify_signature(address, forged_encoded, value["author"], forged) is False
    tampered = FIRST.encoded.replace(b"hello", b"hellO")
    assert speedups.verify_signature(address, tampered, value["author"], value["signature"]) is False
    # Not the shape it proves: the caller's Python rules decide.
    assert speedups.verify_signature(address, FIRST.encoded + b" ", value["author"], value["signature"]) is None
    assert speedups.verify_signature(address, FIRST.encoded, "@x.ed25519", value["signature"]) is None
    assert speedups.verify_signature(0, FIRST.encoded, value["author"], value["signature"]) is None


def test_libsodium_is_found_in_pynacls_distribution_and_both_checks_agree() -> None:
    """The address comes from the library PyNaCl installs (importlib.metadata, ctypes); its verdicts are those
    of PyNaCl's public crypto_sign_open."""
    assert ed25519.verify_address() != 0
    public_key = base64.b64decode(FIRST.value["author"][1:-8])
    signature = base64.b64decode(FIRST.value["signature"][:-12])
    signed = FIRST.signing_bytes()
    assert ed25519.verify(public_key, signed, signature)
    assert not ed25519.verify(public_key, signed.replace(b"hello", b"hellO"), signature)
    assert not ed25519.verify(public_key, signed, bytes(64))


def test_signature_errors_are_the_same_on_both_routes(route: str) -> None:
    value = dict(FIRST.value)
    value["content"] = {"type": "post", "text": "hellO"}
    forged = type(FIRST).from_value(value)
    check_shape(forged)
    with pytest.raises(InvalidMessage, match="signature does not verify") as info:
        check_signature(forged)
    assert (info.value.code, info.value.author, info.value.sequence) == ("signature", KEYPAIR.id, 1)


def test_verify_signatures_is_verify_signature_over_a_batch() -> None:
    if speedups is None:
        pytest.skip("ssblab.core._speedups is not built")
    address, value = ed25519.verify_address(), FIRST.value
    tampered = FIRST.encoded.replace(b"hello", b"hellO")
    calls = [(FIRST.encoded, value["author"], value["signature"]), (tampered, value["author"], value["signature"]),
             (SECOND.encoded, SECOND.value["author"], SECOND.value["signature"]),
             (FIRST.encoded + b" ", value["author"], value["signature"]), (FIRST.encoded, None, value["signature"])]
    expected = [speedups.verify_signature(address, *call) for call in calls]
    assert expected == [True, False, True, None, None]
    assert speedups.verify_signatures(address, calls) == expected
    assert speedups.verify_signatures(address, [*calls, "not a tuple", (1, 2)]) == [*expected, None, None]
    assert speedups.verify_signatures(0, calls) == [None] * len(calls)
    assert speedups.verify_signatures(address, []) == []


def test_prove_signatures_proves_only_what_check_signature_accepts(route: str) -> None:
    forged = type(FIRST).from_value({**FIRST.value, "content": {"type": "post", "text": "hellO"}})
    unsigned = type(FIRST).from_value({key: v for key, v in FIRST.value.items() if key != "signature"})
    proofs = prove_signatures([FIRST, forged, SECOND, unsigned])
    assert proofs == ([True, False, True, False] if route == "compiled" else [False] * 4)
    check_signature(FIRST)
    check_signature(SECOND)
    with pytest.raises(InvalidMessage, match="signature does not verify"):
        check_signature(forged)


def test_a_proof_skips_the_check_on_the_main_network_only() -> None:
    forged = type(FIRST).from_value({**FIRST.value, "content": {"type": "post", "text": "hellO"}})
    assert FeedValidator().push(forged, proven=True)  # the caller's proof is taken: it skips the same check
    assert not FeedValidator().push(forged)
    key = base64.b64encode(bytes(32)).decode()
    signed = create_message(KEYPAIR, {"type": "post", "text": "hello"}, timestamp=1, hmac_key=key)
    tampered = type(signed).from_value({**signed.value, "content": {"type": "post", "text": "hellO"}})
    validator = FeedValidator(key)
    assert not validator.push(tampered, proven=True)  # a proof is of a main-network signature: checked anyway
    assert validator.report.errors[0].code == "signature"
