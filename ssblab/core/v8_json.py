"""``JSON.stringify`` exactly as V8 writes it: the bytes that SSB signs and hashes.

Three things differ from Python's ``json``: number formatting (ECMAScript Number::toString: shortest round-trip
digits, plain notation for 1e-6 <= |x| < 1e21, ``1e+21``/``1.5e-7`` otherwise, ``-0`` as ``0``), object key order
(V8 puts array-index keys, ``"0"`` or ``[1-9][0-9]*`` below 2**32-1, first in ascending order), and unpaired
surrogates, which V8 escapes as ``\\udxxx``. String escaping is otherwise the same as Python's C
``encode_basestring`` (only ``"``, ``\\``, ``\\b\\f\\n\\r\\t`` and lowercase ``\\u00xx`` below 0x20), which this
module reuses. ``signing.py`` uses orjson for speed where it provably agrees with this module.
"""

from __future__ import annotations

import math
import re
from json.encoder import encode_basestring
from typing import Any

from ssblab.core.errors import InvalidJson

__all__ = ["is_array_index", "number_to_string", "quote", "stringify", "v8_key_order"]

_MAX_SAFE_INTEGER = 2**53
_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_ARRAY_INDEX_LIMIT = 2**32 - 1
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def is_array_index(key: str) -> bool:
    """True for keys that V8 orders before all others (ECMAScript array indices)."""
    return bool(_ARRAY_INDEX.match(key)) and int(key) < _ARRAY_INDEX_LIMIT


def v8_key_order(keys: list[str]) -> list[str]:
    """Keys in the order V8 enumerates them: array indices ascending, then the rest in insertion order."""
    indices = [k for k in keys if is_array_index(k)]
    if not indices:
        return keys
    return sorted(indices, key=int) + [k for k in keys if not is_array_index(k)]


def number_to_string(x: int | float) -> str:
    """ECMAScript Number::toString(x) for a double (ints beyond 2**53 are rounded to a double first)."""
    if type(x) is int or isinstance(x, bool):
        if isinstance(x, bool):
            raise InvalidJson("booleans are not numbers", code="json-value")
        if -_MAX_SAFE_INTEGER <= x <= _MAX_SAFE_INTEGER:
            return str(x)
        x = float(x)
    if math.isnan(x) or math.isinf(x):
        return "null"  # what JSON.stringify writes for NaN and ±Infinity
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    intpart, _, frac = mantissa.partition(".")
    exponent, leading_zeros = int(exp or 0), len(frac) - len(frac.lstrip("0"))
    # n as ECMAScript names it: x = 0.d1…dk × 10**n
    n = exponent - leading_zeros if intpart == "0" else len(intpart) + exponent
    digits = (intpart + frac).lstrip("0").rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    return f"{sign}{digits[0]}{'.' + digits[1:] if k > 1 else ''}e{'+' if e >= 0 else '-'}{abs(e)}"


def quote(text: str) -> str:
    """QuoteJSONString as V8 applies it (well-formed JSON.stringify: lone surrogates escaped)."""
    quoted: str = encode_basestring(text)
    if _LONE_SURROGATE.search(quoted):
        quoted = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return quoted


def stringify(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``; ``indent=0`` gives the compact form.

    Examples:
        >>> print(stringify({"b": [1e21, 0.1, -0.0], "2": {}, "1": "é"}))
        {
          "1": "é",
          "2": {},
          "b": [
            1e+21,
            0.1,
            0
          ]
        }
    """
    out: list[str] = []
    _write(value, out, "\n", " " * indent if indent else "")
    return "".join(out)


def _write(value: Any, out: list[str], newline: str, step: str) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float):
        out.append(number_to_string(value))
    elif isinstance(value, dict):
        _write_container(list(value.items()), "{}", out, newline, step)
    elif isinstance(value, list | tuple):
        _write_container([(None, v) for v in value], "[]", out, newline, step)
    else:
        raise InvalidJson(f"not a JSON value: {type(value).__name__}", code="json-value")


def _write_container(
    items: list[tuple[str | None, Any]], brackets: str, out: list[str], newline: str, step: str
) -> None:
    if brackets == "{}" and any(k[:1].isdigit() for k, _ in items if k):
        order = v8_key_order([k for k, _ in items if k is not None])
        lookup = dict(items)
        items = [(k, lookup[k]) for k in order]
    if not items:
        out.append(brackets)
        return
    inner = newline + step if step else ""
    out.append(brackets[0])
    for i, (key, item) in enumerate(items):
        out.append(("," if i else "") + inner)
        if key is not None:
            out.append(quote(key) + (": " if step else ":"))
        _write(item, out, inner or newline, step)
    out.append((newline if step else "") + brackets[1])
