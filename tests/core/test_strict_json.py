"""The strict parser: each rejection has its code; accepted values keep key order and JavaScript numbers."""

from __future__ import annotations

import pytest

from ssblab import InvalidJson, parse_json


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a": 1, "b": {"c": 1, "c": 2}}', "json-duplicate-key"),
        ('"\\ud800"', "json-surrogate"),
        ('["x\\udc00"]', "json-surrogate"),
        ('{"\\ud83d": 1}', "json-surrogate"),
        ("1e400", "json-number"),
        ("-1e400", "json-number"),
        ("-0", "json-number"),
        ("-0.0", "json-number"),
        ("-1e-400", "json-number"),
        ("NaN", "json-number"),
        ("[Infinity]", "json-number"),
        ("[1,]", "json-syntax"),
        ("{'a': 1}", "json-syntax"),
        ('"tab\there"', "json-syntax"),
        ("", "json-syntax"),
        ("[1] [2]", "json-syntax"),
        (b"\xff", "json-syntax"),
        ("[" * 100_000, "json-syntax"),
    ],
)
def test_rejections_name_the_rule(text: str | bytes, code: str) -> None:
    with pytest.raises(InvalidJson) as info:
        parse_json(text)
    assert info.value.code == code


def test_key_order_and_numbers_follow_javascript() -> None:
    value = parse_json('{"z": 1, "2": 0, "a": [1.5, 12345678901234567890, 9007199254740993, 0]}')
    assert list(value) == ["z", "2", "a"]
    assert value["a"][0] == 1.5
    assert value["a"][1] == float(12345678901234567890)  # beyond 2**53 a number is a double
    assert isinstance(value["a"][2], float)
    assert value["a"][3] == 0 and isinstance(value["a"][3], int)


def test_paired_surrogates_are_fine() -> None:
    assert parse_json('"\\ud83d\\ude00"') == "😀"
