"""Smoke tests for the bridge to the JavaScript references (tests/jsref.py, interop/js/).

They check that each script answers and that its answer carries real content (a wrong
answer fails), so that a broken npm install or script shows up here first rather than
as a confusing mismatch in the conformance tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jsref import (
    JsRefError,
    js_dataset,
    js_validate,
    requires_node,
    run_js,
    run_js_json,
    ssb_fixtures,
)

pytestmark = [pytest.mark.interop, requires_node]

# A first message with a made-up signature: right shape, wrong signature.
FORGED = {
    "previous": None,
    "sequence": 1,
    "author": "@" + "A" * 43 + "=.ed25519",
    "timestamp": 1_500_000_000_000,
    "hash": "sha256",
    "content": {"type": "post", "text": "hello"},
    "signature": "A" * 86 + "==.sig.ed25519",
}


def test_validate_rejects_a_forged_message() -> None:
    [verdict] = js_validate([FORGED])
    assert verdict["valid"] is False
    assert verdict["error"] == "invalid signature"
    assert verdict["id"].startswith("%") and verdict["id"].endswith(".sha256")


def test_validate_accepts_a_signed_feed_and_rejects_a_replay(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    keys = json.loads(run_js("keys.js", ["create", str(secret)]))
    first = {k: v for k, v in FORGED.items() if k != "signature"} | {"author": keys["id"]}
    signed = run_js_json("keys.js", ["signObj"], {"keys": keys, "obj": first})
    verdicts = js_validate([signed, signed])
    assert [v["valid"] for v in verdicts] == [True, False]
    assert verdicts[0]["id"] == run_js_json("keys.js", ["id"], signed)["id"]
    assert "expected sequence 2" in verdicts[1]["error"]


def test_box_unbox_roundtrip(tmp_path: Path) -> None:
    alice = json.loads(run_js("keys.js", ["create", str(tmp_path / "alice")]))
    bob = json.loads(run_js("keys.js", ["create", str(tmp_path / "bob")]))
    content = {"type": "post", "text": "secret ✓"}
    boxed = run_js_json("keys.js", ["box"], {"content": content, "recipients": [alice["id"]]})["boxed"]
    assert boxed.endswith(".box")
    assert run_js_json("keys.js", ["unbox"], {"boxed": boxed, "secret": alice})["content"] == content
    assert run_js_json("keys.js", ["unbox"], {"boxed": boxed, "secret": bob})["content"] is None


def test_load_secret_matches_create(tmp_path: Path) -> None:
    created = json.loads(run_js("keys.js", ["create", str(tmp_path / "secret")]))
    assert run_js_json("keys.js", ["loadSecret", str(tmp_path / "secret")]) == created


def test_dataset_has_126_cases_and_js_agrees_with_it() -> None:
    cases = js_dataset()
    assert len(cases) == 126
    plain = [c for c in cases if c["state"] is None and c["hmacKey"] is None]
    verdicts = js_validate([c["message"] for c in plain], independent=True)
    assert [v["valid"] for v in verdicts] == [c["valid"] for c in plain]
    assert [v["id"] for v in verdicts] == [c["id"] for c in plain]


def test_unknown_subcommand_raises_with_stderr() -> None:
    with pytest.raises(JsRefError, match="unknown subcommand"):
        run_js("keys.js", ["nope"])


def test_ssb_fixtures_writes_a_log(tmp_path: Path) -> None:
    log = ssb_fixtures(tmp_path / "fx", seed=1, messages=50, authors=3)
    assert log == tmp_path / "fx" / "flume" / "log.offset"
    assert log.stat().st_size > 50 * 300
    assert (tmp_path / "fx" / "secret").is_file()
    with pytest.raises(JsRefError, match="appended"):
        ssb_fixtures(tmp_path / "fx", seed=1, messages=50, authors=3)
