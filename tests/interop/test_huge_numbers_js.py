"""A number too long to hold (5,000 digits), judged by ssblab and by the real JS ssb-validate (issue 19, item 7; issue
18, item 5).

JS ``JSON.parse`` turns such a number into a double: ``Infinity``. What ssb-validate then decides depends on the
place: a changed ``timestamp`` or a decimal no longer matches the signature; a ``sequence`` of Infinity is out of
order. One kind passes in JS: a number that replaces a ``null``, since ``JSON.stringify(±Infinity)`` is ``"null"``
again, so the signature still verifies and the id is that of the message with ``null``.

ssblab reads such text as JS does and gives every line JS's verdict, on its line, and goes on: where JS accepts,
ssblab accepts with JS's id and reports the strict rule the text broke (a ``json-number`` finding; ``--strict``
refuses it).
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


def test_huge_numbers_against_js_ssb_validate(tmp_path) -> None:
    first, canonical, mutated = _cases()
    for name, line in mutated.items():
        out = run_js("validate.js", [], (first + b"\n" + line + b"\n").decode())
        js = orjson.loads(out.splitlines()[1])
        path = tmp_path / f"{name.replace(' ', '-')}.jsonl"
        path.write_bytes(first + b"\n" + line + b"\n")
        report = verify_path(path)
        assert report.valid == 1 + js["valid"], name  # the first message, and the second where JS takes it
        if js["valid"]:
            assert report.heads[ALICE.id].id == js["id"] and [f.code for f in report.findings] == ["json-number"]
            assert verify_path(path, strict=True).errors[0].code == "json"
        else:
            (error,) = report.errors
            assert len(str(error)) < 300, name  # the number is not printed whole
    # The form JS keeps and sends on is the canonical one, with null: ssblab accepts it, with the same id.
    (tmp_path / "canonical.jsonl").write_bytes(first + b"\n" + canonical + b"\n")
    items = list(read_source(tmp_path / "canonical.jsonl", kind="jsonl"))
    assert verify_path(tmp_path / "canonical.jsonl").valid == 2
    assert items[1].message is not None and items[1].message.id == report.heads[ALICE.id].id
