"""Conformance: ssb-validation-dataset, legacy-value-testdata, the ssb-keys latin1 vector, the protocol guide."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssblab import FeedState, InvalidJson, InvalidMessage, message_id, parse_json, verify_message
from ssblab.core.encoding import decode, decode_encoded, encode, latin1_hash, utf16_length
from ssblab.core.message import Message, hmac_key_bytes
from ssblab.core.v8_json import stringify
from ssblab.core.validate import validate_next
from tests.vectors import SHARED_VECTORS, load_json, optional_json

# The dataset's error texts come from a finer-grained validator than ssb-validate; each maps to one of our rules.
DATASET_RULES = {
    "Message must have a valid order": "order",
    "Message content must be a string or an object": "content",
    "Message content must not be null": "content",
    "Message content must not be an array": "content",
    "Message content type must be a string": "content-type",
    "Message content type length must not be greater than 52": "content-type",
    "Message content type length must not be less than 3": "content-type",
    "Message content string must contain '.box'": "box",
    "Message content string base64 must be canonical": "box",
    "Message timestamp must be a number": "timestamp",
    "Message must decode a value with fewer than 8192 bytes (latin1)": "size",
    "Message hash must be 'sha256'": "hash",
    "Signature base64 must be canonical": "signature-format",
    "Message signature must end with '.sig.ed25519'": "signature-format",
    "Signature must decode to a value with 64 bytes": "signature-format",
    "HMAC key must be canonical base64": "hmac-key",
    "HMAC key must decode to a value with 32 bytes": "hmac-key",
    "HMAC key must be a string": "hmac-key",
    "Message must not be null": "not-object",
    "Message must be an object": "not-object",
    "Message author must end with '.ed25519'": "author",
    "Message author must be a string": "author",
    "Author must decode to a value with 32 bytes": "author",
    "Message sequence must be a number": "sequence",
    "Message previous must be the previous message ID": "first-message",
    "Signature value must verify the unsigned message bytes": "signature",
}
# One case's author is "@…===.ed25519": the dataset's validator reached the signature first, ours rejects the
# non-canonical author before any crypto (ssb-ref isFeedId rejects it too).
RULE_OVERRIDES = {"%vt73GeQ0NaJOhaOPLX3mviscFU8hKKVKdruSCNfUKac=.sha256": "author"}

DATASET = optional_json("ssb-validation-dataset/data.json", "ssb-validation-dataset/data.json") or []


def _decide(case: dict, *, from_text: bool = False) -> str | None:
    """None when valid, else the rule code we reject the message with (``from_text``: received as JSON text)."""
    try:
        key = hmac_key_bytes(case["hmacKey"])
        value = case["message"]
        msg = Message.from_json(stringify(value, indent=0)) if from_text else Message.from_value(value)
        state = case["state"]
        head = FeedState(msg.author, state["sequence"], state["id"], state.get("timestamp", 0)) if state else None
        validate_next(head, msg, key)
    except InvalidMessage as exc:
        return exc.code
    return None


@pytest.mark.parametrize("case", DATASET, ids=[f"{i}-{c['error'] or 'valid'}" for i, c in enumerate(DATASET)])
def test_validation_dataset(case: dict, route: str) -> None:
    expected = None if case["valid"] else RULE_OVERRIDES.get(case["id"], DATASET_RULES[case["error"]])
    assert _decide(case) == expected
    assert _decide(case, from_text=True) == expected
    if case["id"] and isinstance(case["message"], dict):
        assert message_id(case["message"]) == case["id"]


def test_dataset_is_complete() -> None:
    if not DATASET:
        pytest.skip("ssb-validation-dataset not found; `make test` installs it under interop/")
    assert len(DATASET) == 126
    assert sum(c["valid"] for c in DATASET) == 27


def _legacy(folder: str) -> list[Path]:
    root = SHARED_VECTORS / "legacy-value-testdata" / folder
    return sorted(p for p in root.iterdir() if "." not in p.name) if root.exists() else []


def test_legacy_yay_signing_length_hash(route: str) -> None:
    cases = _legacy("yay")
    if not cases:
        pytest.skip("../shared/vectors/legacy-value-testdata is absent")
    for path in cases:
        value = parse_json(path.read_bytes())
        expected = path.with_name(path.name + ".json_signing").read_bytes()
        assert encode(value) == expected, path.name
        assert decode_encoded(path.read_bytes())[1] == expected, path.name
        assert stringify(value).encode("utf-8", "surrogatepass") == expected, path.name
        assert utf16_length(expected) == int(path.with_name(path.name + ".length").read_text())
        assert latin1_hash(expected) == path.with_name(path.name + ".sha256").read_bytes(), path.name


# Every case of a folder is rejected. The fuzzed cases outside `syntax` are often broken JSON as well, and then
# the syntax error is met first (all ten `duplicate` cases are; test_strict_json covers each code on clean JSON).
NAY_CODES = {"syntax": "json-syntax", "surrogate": "json-surrogate", "duplicate": "json-duplicate-key",
             "number": "json-number"}


@pytest.mark.parametrize("folder", sorted(NAY_CODES))
def test_legacy_nay_rejected(folder: str, route: str) -> None:
    cases = _legacy(folder)
    if not cases:
        pytest.skip("../shared/vectors/legacy-value-testdata is absent")
    codes = set()
    for path in cases:
        with pytest.raises(InvalidJson) as info:
            parse_json(path.read_bytes())
        codes.add(info.value.code)
        # The verification path reads what JSON.parse reads, naming the strict rule as a finding; it still
        # refuses what JS refuses (broken syntax, also where the strict parser met a bad number first).
        try:
            finding = decode(path.read_bytes())[2]
        except InvalidJson as exc:
            assert exc.code == "json-syntax"
        else:
            assert finding is not None and finding.code == info.value.code
    assert codes <= {NAY_CODES[folder], "json-syntax"}


def test_ssb_keys_weird_latin1_vector() -> None:
    case = load_json(None, "ssb-keys/weird_latin1_hash.json")
    msg = verify_message(case["message"])
    assert msg.id == case["expected_id"]
    assert "vyyVmW" not in msg.id  # the UTF-8 hash would be wrong


def test_protocol_guide_example() -> None:
    case = load_json(None, "scuttlebutt-protocol-guide/examples.json")
    assert verify_message(case["message"]).id == case["expected_id"]
