"""BIPF against the bipf-spec fixtures (npm ``bipf-spec``, else ../shared/vectors) and against npm ``bipf`` on
generated values; every malformed input is a `BipfError` naming its offset, whichever way it is fed."""

from __future__ import annotations

import contextlib
import json
import math
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssblab.core import bipf
from ssblab.core.bipf import BipfError
from tests.jsref import requires_node, run_js_json
from tests.vectors import optional_json

FIXTURES = optional_json("bipf-spec/fixtures.json", "bipf-spec/fixtures.json") or []


@pytest.mark.parametrize("case", FIXTURES, ids=[c["name"] for c in FIXTURES])
def test_spec_fixtures_decode_and_encode_exactly(case: dict[str, str]) -> None:
    value = json.loads(bytes.fromhex(case["json"]))
    binary = bytes.fromhex(case["binary"])
    decoded = bipf.decode(binary)
    assert decoded == value or (math.isnan(value) if isinstance(value, float) else False)
    assert bipf.encode(value) == binary


def test_the_spec_fixtures_are_there() -> None:
    if not FIXTURES:
        pytest.skip("bipf-spec not installed (`make setup` installs interop/) and ../shared/vectors absent")
    assert len(FIXTURES) >= 18


def generated_values(count: int, seed: int = 5) -> list[Any]:
    """JSON-like values of every BIPF type boundary: ints around ±2**31, integral and fractional doubles,
    digit keys (V8 puts them first), unicode, nesting."""
    rng = random.Random(seed)
    leaves = [None, True, False, 0, 1, -1, 2**31 - 1, -(2**31 - 1), -(2**31), 2**31, 2**53, 0.5, -1.25, 1e300,
              5e-324, 2.0, "", "é", "💩 ok", "a" * 200, "\n\t\u0000"]

    def one(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.5:
            return rng.choice(leaves) if rng.random() < 0.7 else rng.uniform(-1e9, 1e9)
        if roll < 0.75:
            return [one(depth + 1) for _ in range(rng.randrange(4))]
        keys = ["b", "a", "10", "2", "x y", "ü", "0", "01"]
        return {rng.choice(keys): one(depth + 1) for _ in range(rng.randrange(5))}

    return [one(0) for _ in range(count)]


@requires_node
def test_encode_agrees_with_npm_bipf() -> None:
    """One node run over 300 generated values: the same bytes (V8 key order, the int/double choice), and
    decoding gives what JSON.parse(JSON.stringify(value)) gives."""
    values = generated_values(300)
    js = run_js_json("bipf.js", input=values)
    for value, expected in zip(values, js, strict=True):
        assert bipf.encode(value).hex() == expected, value
        assert bipf.decode(bytes.fromhex(expected)) == json.loads(json.dumps(value))


@pytest.mark.parametrize(("hexdata", "where"), [
    ("", "offset 0"),  # nothing at all
    ("28686568", "offset 0"),  # a 5-byte string with 3 bytes
    ("07", "reserved type 7"),
    ("1d0a61620e01", "not a string"),  # an object whose key is a buffer
    ("0e05", "boolnull"),
    ("1a000000", "not 4"),  # an int of 3 bytes
    ("ffffffffff7f", "longer than 5 bytes"),
    ("242264000000", "offset 1"),  # an array of 4 bytes holding an int of 5
])
def test_malformed_bipf_names_the_offset(hexdata: str, where: str) -> None:
    with pytest.raises(BipfError, match=where):
        bipf.decode(bytes.fromhex(hexdata))


@given(st.binary(max_size=64))
def test_any_bytes_decode_or_raise_bipf_error(data: bytes) -> None:
    with contextlib.suppress(BipfError):
        bipf.decode(data)


def test_node_specifics() -> None:
    assert bipf.decode(bipf.encode({"b": 1, "2": 2, "a": None})) == {"2": 2, "b": 1, "a": None}  # V8 key order
    assert bipf.decode(bytes.fromhex("25" + "0861" + "0e02")) == {}  # {a: undefined}: JSON.stringify drops it
    assert bipf.decode(bytes.fromhex("14" + "0e02")) == [None]
    assert bipf.decode(bytes.fromhex("08ff")) == "\ufffd"  # invalid UTF-8, as Node decodes it
    assert bipf.encode(2**31 - 1)[0] == 0x22 and bipf.encode(-(2**31))[0] == 0x43  # -2**31 is a double in bipf
