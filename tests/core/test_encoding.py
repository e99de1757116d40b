"""The fast (orjson) and exact (v8_json) encoders agree on every value, and decode() is the strict parser."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssblab import InvalidJson, parse_json
from ssblab.core.encoding import (
    decode,
    decode_encoded,
    encode,
    encode_compact,
    is_plain,
    latin1_hash,
    utf16_length,
)
from ssblab.core.v8_json import number_to_string, stringify

# Numbers across every formatting regime of Number::toString, including the ones orjson writes differently.
numbers = st.one_of(
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.0, -0.0, 1e16, 1e21, 1.5e-6, 1e-6, 1e-7, 5e-324, 2.0**53, 0.1 + 0.2]),
)
texts = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["\u2028", "\x7f", "\x00\x1f", '"\\', "😀", "0", "10", "4294967295", "4294967294", "01", "1a"]
)
# The route fixture (conftest.py) stays the same through a test's examples.
ROUTE_FIXTURE = [HealthCheck.function_scoped_fixture]
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=400)
def test_fast_and_exact_encoders_agree(value: object) -> None:
    exact = stringify(value).encode("utf-8", "surrogatepass")
    assert encode(value) == exact
    assert encode_compact(value) == stringify(value, indent=0).encode("utf-8", "surrogatepass")


@given(value=json_values)
@settings(max_examples=200, suppress_health_check=ROUTE_FIXTURE)
def test_decode_roundtrips_compact_and_indented_text(value: object, route: str) -> None:
    compact = stringify(value, indent=0).encode()
    for text in (compact, stringify(value).encode(), b"  " + compact + b"\n"):
        parsed, plain, finding = decode(text)
        assert encode(parsed, plain=plain) == stringify(value).encode() and finding is None


@pytest.mark.parametrize(
    ("x", "js"),
    [(1e21, "1e+21"), (1e-7, "1e-7"), (1e-6, "0.000001"), (123e-20, "1.23e-18"), (-0.0, "0"), (1.0, "1"),
     (12345678901234567890, "12345678901234567000"), (2**53 + 1, "9007199254740992"), (0.1, "0.1"),
     (1.7976931348623157e308, "1.7976931348623157e+308"), (5e-324, "5e-324"), (100.0, "100"),
     (float("nan"), "null")],
)
def test_number_to_string_matches_v8(x: float, js: str) -> None:
    assert number_to_string(x) == js


def test_decode_falls_back_on_what_orjson_would_accept_wrongly(route: str) -> None:
    # orjson keeps the last duplicate and turns "-0" into 0; the strict parser must see the original text, and
    # name the rule the text breaks while reading it as JSON.parse does (JS peers accept it).
    for text, js, code in ((b'{"a":1,"b":0,"a":2}', {"a": 2, "b": 0}, "json-duplicate-key"),
                           (b"[-0]", [0], "json-number"), (b'["\\ud800"]', ["\ud800"], "json-surrogate")):
        value, plain, finding = decode(text)
        assert (value, plain, finding and finding.code) == (js, False, code)
    with pytest.raises(InvalidJson):
        decode(b"[NaN]")  # JSON.parse refuses it too
    value, plain, _ = decode(b'{"b":1,"1":[1.0,1e16]}')
    assert not plain
    assert encode(value) == b'{\n  "1": [\n    1,\n    10000000000000000\n  ],\n  "b": 1\n}'


def test_is_plain_rejects_what_orjson_formats_differently() -> None:
    assert is_plain({"a": [1, "x", 0.5, None, True]})
    for value in ({"1": 0}, 1.0, -0.0, 1e16, 2**54, 1.5e-6, (1, 2), {1: 2}):
        assert not is_plain(value)


def test_latin1_hash_and_length_follow_javascript(route: str) -> None:
    text = '{"t": "’😀"}'.encode()
    assert utf16_length(text) == 12  # 10 characters; 😀 is two UTF-16 units
    units = '{"t": "’😀"}'.encode("utf-16-le")[0::2]
    assert latin1_hash(text) == hashlib.sha256(units).digest()
    assert parse_json(text) == {"t": "’😀"}


@given(value=json_values)
@settings(max_examples=200, suppress_health_check=ROUTE_FIXTURE)
def test_decode_encoded_is_decode_then_encode(value: object, route: str) -> None:
    for text in (stringify(value, indent=0).encode(), stringify(value).encode(), b" " + stringify(value).encode()):
        parsed, encoded = decode_encoded(text)
        assert encoded == stringify(value).encode() == encode(decode(text)[0])
        assert parsed == decode(text)[0]


def test_decode_encoded_reads_what_decode_reads(route: str) -> None:
    for text in (b'{"a":1,"a":2}', b"[-0]", b'["\\ud800"]', b'{\n  "a": 1,\n  "a": 2\n}'):
        value, encoded = decode_encoded(text)
        assert value == decode(text)[0] and encoded == stringify(value).encode("utf-8", "surrogatepass")
    with pytest.raises(InvalidJson):
        decode_encoded(b"[1,]")
    for depth in (200, 300):  # within orjson's 254 levels (the fast route), and past them (the exact one)
        deep = b"[" * depth + b"]" * depth
        assert decode_encoded(deep)[1] == stringify(parse_json(deep)).encode()


@given(text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8))
@settings(suppress_health_check=ROUTE_FIXTURE)
def test_latin1_hash_fast_routes_equal_the_utf16_rule(text: str, route: str) -> None:
    data = text.encode()
    assert latin1_hash(data) == hashlib.sha256(text.encode("utf-16-le", "surrogatepass")[0::2]).digest()
