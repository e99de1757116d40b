"""ssblab against the JS reference from npm: ssb-validate, ssb-keys, ssb-fixtures."""

from __future__ import annotations

import pytest

from ssblab import Keypair, box, create_message, unbox
from ssblab.pipeline.sources import read_source
from ssblab.pipeline.verify import verify_path
from ssblab.store import Store
from tests.jsref import js_validate, requires_node, run_js_json, ssb_fixtures

pytestmark = [pytest.mark.interop, requires_node]

ALICE = Keypair.generate(bytes([3]) * 32)
BOB = Keypair.generate(bytes([4]) * 32)
HMAC = "Z0e2zyrmHeit5ydNjaw2bLlrHBwx9UcivTAAGquwQ+Y="

# The cases that break naive serializers: unicode (the latin1 id quirk), floats in every Number::toString
# regime, integers beyond 2**53, array-index keys out of order, control characters, nesting, U+2028.
AWKWARD_CONTENTS = [
    {"type": "post", "text": "naïve ’quotes’ 😀 \u2028 \x01\x1f tab\t"},
    {"type": "measure", "values": [0.1, 1e21, 1.5e-7, 1e-6, 123456.789, -0.5, 5e-324, 1.7976931348623157e308]},
    {"type": "big", "n": 12345678901234567890, "m": 2**53 + 1, "neg": -(2**60)},
    {"type": "keys", "b": 1, "10": "ten", "2": "two", "a": {"1": [], "0": {}}, "4294967295": "not an index"},
    {"type": "nest", "deep": [[[{"x": [None, True, False, ""]}]]]},
    {"type": "ünïcødé-typé", "text": "中文 עברית"},
]


def _feed(keypair: Keypair, contents: list, hmac_key: str | None = None) -> list:
    out, previous = [], None
    for i, content in enumerate(contents):
        previous = create_message(keypair, content, previous=previous, timestamp=1_700_000_000_000 + i * 1.5,
                                  hmac_key=hmac_key)
        out.append(previous)
    return out


@pytest.mark.parametrize("hmac_key", [None, HMAC])
def test_js_ssb_validate_accepts_what_ssblab_creates(hmac_key: str | None) -> None:
    boxed = box({"type": "post", "text": "for bob ’😀"}, [ALICE.id, BOB.id])
    messages = _feed(ALICE, [*AWKWARD_CONTENTS, boxed], hmac_key)
    results = js_validate([m.value for m in messages], hmac_key=hmac_key)
    assert [r["error"] for r in results] == [None] * len(messages)
    assert [r["id"] for r in results] == [m.id for m in messages]


def test_js_and_ssblab_open_each_others_boxes() -> None:
    content = {"type": "post", "text": "private ’😀", "n": [1.5, 1e21], "recps": [ALICE.id, BOB.id]}
    ours = box(content, [ALICE.id, BOB.id])
    secret = BOB.to_secret_object()
    assert run_js_json("keys.js", ["unbox"], {"boxed": ours, "secret": secret})["content"] == content
    theirs = run_js_json("keys.js", ["box"], {"content": content, "recipients": [ALICE.id, BOB.id]})["boxed"]
    assert unbox(theirs, ALICE) == content and unbox(theirs, BOB) == content
    assert unbox(theirs, Keypair.generate(bytes([5]) * 32)) is None


def test_secret_files_are_interchangeable(tmp_path) -> None:
    ALICE.write_secret_file(tmp_path / "ours")
    assert run_js_json("keys.js", ["loadSecret", str(tmp_path / "ours")]) == ALICE.to_secret_object()
    created = run_js_json("keys.js", ["create", str(tmp_path / "theirs")])
    assert Keypair.from_secret_file(tmp_path / "theirs").id == created["id"]


@pytest.mark.parametrize(("seed", "messages", "authors"), [(7, 2000, 30), (11, 1000, 100)])
def test_ssb_fixtures_datasets_import_and_verify_completely(tmp_path, seed, messages, authors) -> None:
    log = ssb_fixtures(tmp_path / "fx", seed, messages, authors)
    report = verify_path(log)
    assert report.ok and report.checked == messages and not report.forks
    with Store(tmp_path / "store") as store:
        assert store.append(read_source(tmp_path / "fx")).valid == messages
        assert store.stats().private > 0
    assert verify_path(tmp_path / "store").valid == messages
