"""Differential: ssblab's single-message verdicts and ids against JS ssb-validate 4 on generated odd messages.

Each case is a first message (``--independent``: a fresh state each) written as JSON text, as a peer would send
it: odd strings (lone surrogates, escapes, astral characters), odd numbers (``-0``, overflowing to Infinity,
beyond 2**53, integral floats), duplicate keys, odd shapes and fields, sizes around the 8192-unit limit, and
odd signatures. Most are correctly signed over what JS reads (JSON.parse, then JSON.stringify), so the verdict
turns on the rule under test, not on a bad signature. ssblab reads the same text through `parse_record` and one
`FeedValidator`: the verdict must be JS's, and the id too wherever JS gives one.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest

from ssblab.core.encoding import encode
from ssblab.core.keys import Keypair
from ssblab.core.validate import FeedValidator
from ssblab.store.sources import parse_record
from tests.jsref import requires_node, run_js

pytestmark = [requires_node, pytest.mark.interop]
KEYS = Keypair.generate(bytes([77]) * 32)
CASES = 400
ORDER = ("previous", "author", "sequence", "timestamp", "hash", "content", "signature")

# Text-level oddities: a placeholder string in the value becomes this raw JSON text, which JS reads as ``js``.
RAW_NUMBERS = {"-0": 0, "1e400": float("inf"), "-1e400": float("-inf"), "1.0": 1, "1e0": 1, "123456789012345678901":
               123456789012345678901, "5e-324": 5e-324, "0.1e1": 1, "1E21": 1e21}
STRINGS = ["\ud800", "a\udfffb", "\udbff\udfff", "💩", "\u2028\u2029", "\\ud800", "\\\ud800", "\x00\x1f", "é" * 3,
           "’", "\ufeff", "\U0010ffff", ""]


def sign(value: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Add a signature over what JS will read, or a broken one now and then."""
    signature = base64.b64encode(KEYS.sign(encode(value))).decode()
    roll = rng.random()
    if roll < 0.05:
        signature = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]  # does not verify
    elif roll < 0.08:
        signature = signature[:-3] + ("B" if signature[-3] != "B" else "C") + signature[-2:]  # non-canonical
    elif roll < 0.10:
        return {**value, "signature": signature + ".sig.ed25518"}
    return {**value, "signature": signature + ".sig.ed25519"}


def odd_content(rng: random.Random, raw: dict[str, str]) -> tuple[Any, Any]:
    """(content as JS reads it, content as written, with placeholders for raw number text)."""
    kind = rng.choice(["strings", "numbers", "shape", "size", "plain"])
    if kind == "strings":
        text = "".join(rng.choice(STRINGS) for _ in range(rng.randrange(1, 4)))
        content: dict[str, Any] = {"type": rng.choice(["post", "\ud800ab", "ab", "x" * 53, "é" * 52]), "text": text}
        return content, content
    if kind == "numbers":
        token = rng.choice(list(RAW_NUMBERS))
        placeholder = f"__raw{len(raw)}__"
        raw[placeholder] = token
        js = {"type": "post", "n": RAW_NUMBERS[token], "m": rng.choice([2**53 + 1, 1e21, 1.5, -(2**31), 0.1])}
        return js, {**js, "n": placeholder}
    if kind == "shape":
        return rng.choice([(None, None), ([1], [1]), ("not a box", "not a box"), ({"type": 5}, {"type": 5}),
                           ({"tipe": "post"}, {"tipe": "post"}),
                           ("YWJj.box", "YWJj.box"), ("YWJj.box2", "YWJj.box2"), ("YWJ=.box", "YWJ=.box")])
    if kind == "size":
        unit = rng.choice(["x", "é", "💩", "\ud800"])
        content = {"type": "post", "text": unit * (8192 // (2 if unit == "💩" else 1) - rng.randrange(380, 420))}
        return content, content
    content = {"type": "post", "text": "plain"}
    return content, content


def case(rng: random.Random) -> str:
    raw: dict[str, str] = {}
    js_content, written_content = odd_content(rng, raw)
    timestamp: Any = rng.choice([1_600_000_000_000, 1.5, 2**53 + 2])
    value = {"previous": None, "author": KEYS.id, "sequence": 1, "timestamp": timestamp, "hash": "sha256",
             "content": js_content}
    roll = rng.random()
    if roll < 0.05:
        value = {k: value[k] for k in ("previous", "sequence", "author", "timestamp", "hash", "content")}  # allowed
    elif roll < 0.08:
        value = {k: value[k] for k in ("author", "previous", "sequence", "timestamp", "hash", "content")}  # not
    elif roll < 0.10:
        value["sequence"] = 2
    elif roll < 0.12:
        value["author"] = KEYS.id[:-8] + ".ed25518"
    signed = sign(value, rng)
    written = {**signed, "content": written_content}
    text = json.dumps(written, ensure_ascii=False, separators=(",", ":"))
    if rng.random() < 0.5 or any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # a lone surrogate is not UTF-8
        text = json.dumps(written, separators=(",", ":"))  # \u escapes: lone surrogates arrive as JS sees them
    for placeholder, token in raw.items():
        text = text.replace(f'"{placeholder}"', token)
    if rng.random() < 0.1:  # a duplicate key JS reads as its last value, at its first position
        text = text.replace('"hash":"sha256"', '"hash":"sha1","hash":"sha256"', 1)
    elif rng.random() < 0.05:
        text = text.replace('"hash":"sha256"', '"hash":"sha256","hash":"sha1"', 1)
    return text


def test_single_message_verdicts_and_ids_agree_with_ssb_validate() -> None:
    rng = random.Random(20260)
    lines = [case(rng) for _ in range(CASES)]
    out = run_js("validate.js", ["--independent"], "".join(line + "\n" for line in lines), timeout=120)
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == len(lines)
    disagreements, findings = [], 0
    for line, js in zip(lines, results, strict=True):
        received = parse_record(line.encode(), "case")
        validator = FeedValidator()
        ours = received.error is None and validator.push(received.message, received.finding)  # type: ignore[arg-type]
        findings += len(validator.report.findings)
        if ours != js["valid"] or (received.message is not None and js["id"] and received.message.id != js["id"]):
            disagreements.append((line[:300], js, validator.report.errors[:1] or received.error))
    assert not disagreements, disagreements[:5]
    assert sum(r["valid"] for r in results) > CASES // 4 and findings > 10  # the odd cases really were accepted
