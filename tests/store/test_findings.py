"""A message JS peers accept but the data model's strict JSON rules refuse (a lone surrogate) goes the whole
verification path as JS takes it: import stores it, verify and replicate keep it, with the same id and
signature bytes, and each reports a named finding; ``--strict`` makes it an error."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from nacl.signing import SigningKey

from ssblab.core.encoding import encode_compact
from ssblab.core.keys import Keypair
from ssblab.core.message import create_message
from ssblab.pipeline.verify import verify_path
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store
from tests.replicate.helpers import served

AUTHOR = Keypair.generate(bytes([91]) * 32)


def feed() -> list[bytes]:
    first = create_message(AUTHOR, {"type": "post", "text": "half a pair: \ud83d"}, timestamp=1)
    second = create_message(AUTHOR, {"type": "post", "text": "fine"}, previous=first, timestamp=2)
    odd_type = create_message(AUTHOR, {"type": "odd\udc00", "text": "a type SQLite cannot hold as it is"},
                              previous=second, timestamp=3)
    assert b"\\ud83d" in first.encoded  # V8 escapes it; the id and signature cover that text
    return [json.dumps(first.value).encode(), encode_compact(second.value), json.dumps(odd_type.value).encode()]


def ssblab(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ssblab", *args], capture_output=True, timeout=120, check=False)


def test_import_verify_and_replicate_follow_js(tmp_path: Path) -> None:
    source = tmp_path / "feed.jsonl"
    source.write_bytes(b"\n".join(feed()) + b"\n")
    done = ssblab("import", str(source), "--store", str(tmp_path / "s"), "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["valid"] == 3
    assert [(f["code"], f["sequence"]) for f in report["findings"]] == [("json-surrogate", 1), ("json-surrogate", 3)]
    with Store(tmp_path / "s") as store:  # the type index holds U+FFFD; the value, the text as signed
        kind, value = store.db.execute("SELECT type, value FROM messages WHERE sequence = 3").fetchone()
        assert kind == "odd\ufffd" and b'"type":"odd\\udc00"' in bytes(value)
    text = ssblab("verify", str(tmp_path / "s"))
    assert text.returncode == 0 and b"2 valid messages break a strict JSON rule" in text.stdout
    assert json.loads(ssblab("verify", str(tmp_path / "s"), "--json").stdout)["findings"][0]["code"] == "json-surrogate"

    async def pull() -> int:
        with Store(tmp_path / "s") as origin, Store(tmp_path / "r") as replica:
            async with served(origin, SigningKey(bytes([92]) * 32)) as (address, _):
                options = ReplicateOptions(feeds=(Want(AUTHOR.id, None, "t"),))
                result = await replicate(address, LiveStore(replica), SigningKey(bytes([93]) * 32), options)
            assert result.errors == [] and result.unserved == []
            return replica.count()

    assert asyncio.run(asyncio.wait_for(pull(), 30)) == 3
    assert verify_path(tmp_path / "r").findings[0].code == "json-surrogate"


def test_strict_refuses_it(tmp_path: Path) -> None:
    source = tmp_path / "feed.jsonl"
    source.write_bytes(b"\n".join(feed()) + b"\n")
    done = ssblab("import", str(source), "--store", str(tmp_path / "s"), "--json", "--strict")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["valid"] == 0
    assert [e["code"] for e in report["errors"]] == ["json", "feed-stopped", "json"]
    assert "json-surrogate" in report["errors"][0]["message"] and "--strict" in report["errors"][0]["message"]
    assert ssblab("verify", str(source), "--strict").returncode == 1
    assert ssblab("verify", str(source)).returncode == 0
