"""JS ssb-validate accepts every generated message, with the same ids (latin1 quirk included)."""

from __future__ import annotations

import pytest

from ssblab.generate import generate_network
from tests.jsref import js_validate, requires_node

pytestmark = [pytest.mark.interop, requires_node]
HMAC = "Z0e2zyrmHeit5ydNjaw2bLlrHBwx9UcivTAAGquwQ+Y="


@pytest.mark.parametrize("hmac_key", [None, HMAC])
def test_js_ssb_validate_accepts_the_network(hmac_key: str | None) -> None:
    msgs = list(generate_network(20, 800, 3, hmac_key=hmac_key))
    verdicts = js_validate([m.value for m in msgs], hmac_key=hmac_key)
    assert [v["error"] for v in verdicts if not v["valid"]] == []
    assert [v["id"] for v in verdicts] == [m.id for m in msgs]
    assert any(not m.encoded.isascii() for m in msgs)
