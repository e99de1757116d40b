"""A JSON parser that rejects what SSB rejects, keeping key order; and the parse JavaScript does.

Python's ``json`` is already strict about syntax (no trailing commas, no raw control characters); on top of it
this module rejects, as the legacy-value-testdata ``duplicate``/``surrogate``/``number`` folders require:
duplicate object keys, escapes that leave an unpaired UTF-16 surrogate, numbers that round to ±Infinity or to -0,
and the ``NaN``/``Infinity`` literals. Numbers follow JavaScript: every number is a double, so integers beyond
2**53 become floats (held as Python ``int`` while exact, so that values read naturally).

`parse_json_js` is ``JSON.parse``: what JS peers accept and validate (a duplicate key's last value at its first
position, lone surrogates, ``-0``, numbers that overflow to ±Infinity), with the strict rule the text breaks, so
verification can follow JS and still name the finding (`JS_ACCEPTS` are those rules).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ssblab.core.errors import InvalidJson

__all__ = ["JS_ACCEPTS", "MAX_SAFE_INTEGER", "parse_json", "parse_json_js"]

MAX_SAFE_INTEGER = 2**53
_SAFE_DIGITS = len(str(MAX_SAFE_INTEGER))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise InvalidJson(f"duplicate key {dup!r} in an object", code="json-duplicate-key")
    return obj


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InvalidJson(f"number {_shown(text)} rounds to infinity", code="json-number")
    if value == 0 and text.startswith("-"):
        raise InvalidJson(f"number {_shown(text)} rounds to -0", code="json-number")
    return value


def _shown(text: str, limit: int = 40) -> str:
    """A number's text for an error message: a 5,000-digit one is cut, with its length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _int(text: str) -> int | float:
    if len(text.lstrip("-")) > _SAFE_DIGITS:  # past 2**53, so a double; int() would refuse past 4300 digits
        return _float(text)
    value = int(text)
    if value == 0 and text.startswith("-"):
        raise InvalidJson("number -0 is not allowed", code="json-number")
    return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else _float(text)


def _constant(name: str) -> Any:
    raise InvalidJson(f"{name} is not JSON", code="json-number")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_float=_float, parse_int=_int, parse_constant=_constant
)
JS_ACCEPTS = frozenset({"json-surrogate", "json-duplicate-key", "json-number"})


def _js_int(text: str) -> int | float:
    """JS has doubles only; Python's int() also refuses more than 4300 digits, which JS reads as ±Infinity."""
    return int(text) if len(text) <= 17 else float(text)


_JS_DECODER = json.JSONDecoder(parse_int=_js_int, parse_constant=_constant)  # dict(pairs): JSON.parse's dedup


def _check_surrogates(value: Any) -> None:
    """Walk a parsed value for strings holding an unpaired surrogate (Python decodes ``\\ud800`` alone)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                raise InvalidJson(f"unpaired UTF-16 surrogate in string {item!r}", code="json-surrogate")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def parse_json(data: str | bytes | bytearray | memoryview) -> Any:
    """Parse SSB JSON text strictly.

    Args:
        data: UTF-8 bytes or text.

    Returns:
        The value, with objects as ``dict`` in their received key order.

    Raises:
        InvalidJson: with ``code`` ``json-syntax``, ``json-duplicate-key``, ``json-surrogate`` or ``json-number``.

    Examples:
        >>> parse_json('{"b": 1, "a": [1.5, "x"]}')
        {'b': 1, 'a': [1.5, 'x']}
        >>> parse_json('{"a": 1, "a": 2}')
        Traceback (most recent call last):
        ...
        ssblab.core.errors.InvalidJson: duplicate key 'a' in an object
    """
    if not isinstance(data, str):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidJson(f"not UTF-8 at byte {exc.start}", code="json-syntax") from exc
    try:
        value = _DECODER.decode(data)
    except json.JSONDecodeError as exc:
        raise InvalidJson(f"{exc.msg} at line {exc.lineno} column {exc.colno}", code="json-syntax") from exc
    except RecursionError as exc:
        raise InvalidJson("nesting too deep", code="json-syntax") from exc
    if _SURROGATE_ESCAPE.search(data):
        _check_surrogates(value)
    return value


def parse_json_js(data: str | bytes | bytearray | memoryview) -> tuple[Any, InvalidJson | None]:
    """``JSON.parse``: the value a JS peer reads, and the strict rule (`parse_json`) the text breaks, if any.

    Raises:
        InvalidJson: text that JavaScript rejects too (bad syntax, NaN, not UTF-8).

    Examples:
        >>> parse_json_js('{"a": 1, "a": 2}')
        ({'a': 2}, InvalidJson("duplicate key 'a' in an object"))
    """
    try:
        return parse_json(data), None
    except InvalidJson as exc:
        if exc.code not in JS_ACCEPTS:
            raise
        finding = exc
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    try:
        return _JS_DECODER.decode(text), finding
    except json.JSONDecodeError as exc:  # the strict parser stopped at a number before a syntax error
        raise InvalidJson(f"{exc.msg} at line {exc.lineno} column {exc.colno}", code="json-syntax") from exc
    except RecursionError as exc:
        raise InvalidJson("nesting too deep", code="json-syntax") from exc
