"""A number too long to hold (5,000 digits), judged by ssblab and by the real JS ssb-validate (issue 19, item 7).

JS ``JSON.parse`` turns such a number into a double: ``Infinity``. What ssb-validate then decides depends on the
place: a changed ``timestamp`` or a decimal no longer matches the signature; a ``sequence`` of Infinity is out of
order. One kind passes in JS: a number that replaces a ``null``, since ``JSON.stringify(±Infinity)`` is ``"null"``
again, so the signature still verifies and the id is that of the message with ``null``.

ssblab judges every such line invalid with the ``json`` rule (``json-number``: a number that rounds to ±Infinity is
not SSB JSON, the ``number`` folder of legacy-value-testdata), on its line, and goes on. The one divergence is
deliberate and harmless to interop: JS peers store and send the message re-serialized, with ``null``, and that
form ssblab accepts, with the very id JS computed (checked below).
"""

from __future__ import annotations

import orjson
import pytest

from ssblab import Keypair, create_message
from ssblab.pipeline.sources import read_source
from ssblab.pipeline.verify import verify_path
from tests.jsref import requires_node, run_js

pytestmark = [pytest.mark.interop, requires_node]

ALICE = Keypair.generate(bytes([3]) * 32)
BIG = "1" * 5000


def _cases() -> tuple[bytes, bytes, dict[str, bytes]]:
    first = create_message(ALICE, {"type": "post", "text": "a"}, timestamp=1)
    second = create_message(ALICE, {"type": "post", "text": "b", "n": None}, previous=first, timestamp=2)
    line = orjson.dumps(second.value).decode()
    mutated = {
        "timestamp": line.replace('"timestamp":2', f'"timestamp":{BIG}'),
        "sequence": line.replace('"sequence":2', f'"sequence":{BIG}'),
        "decimal in content": line.replace('"n":null', f'"n":0.{BIG}'),
        "negative in content": line.replace('"n":null', f'"n":-{BIG}.5'),  # -Infinity: JSON.stringify says null
        "in place of null": line.replace('"n":null', f'"n":{BIG}'),
    }
    return orjson.dumps(first.value), orjson.dumps(second.value), {k: v.encode() for k, v in mutated.items()}


# ssblab's rule for each line: json (the number rounds to ±Infinity), or, for a decimal that a double holds
# (0.111…), the signature, as in JS.
OURS = {"timestamp": "json", "sequence": "json", "decimal in content": "signature", "negative in content": "json",
        "in place of null": "json"}


def test_huge_numbers_against_js_ssb_validate(tmp_path) -> None:
    first, canonical, mutated = _cases()
    js: dict[str, dict] = {}
    for name, line in mutated.items():
        out = run_js("validate.js", [], (first + b"\n" + line + b"\n").decode())
        js[name] = orjson.loads(out.splitlines()[1])
        path = tmp_path / f"{len(js)}.jsonl"
        path.write_bytes(first + b"\n" + line + b"\n")
        report = verify_path(path)
        (error,) = report.errors
        assert (report.valid, error.code) == (1, OURS[name]), name
        assert error.code != "json" or (f"{path}:2" in str(error) and "rounds to infinity" in str(error))
    assert {name for name, verdict in js.items() if verdict["valid"]} == {"in place of null", "negative in content"}
    assert "signature" in js["timestamp"]["error"] and "signature" in js["decimal in content"]["error"]
    assert "expected sequence 2" in js["sequence"]["error"]
    # The form JS keeps and sends on is the canonical one, with null: ssblab accepts it, with JS's id.
    (tmp_path / "canonical.jsonl").write_bytes(first + b"\n" + canonical + b"\n")
    items = list(read_source(tmp_path / "canonical.jsonl", kind="jsonl"))
    assert verify_path(tmp_path / "canonical.jsonl").valid == 2
    assert items[1].message is not None and items[1].message.id == js["in place of null"]["id"]
