"""The command line, run as a user runs it (a subprocess of the installed console script's module)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ssblab import Keypair, create_message


def ssblab(*args: str | Path, check: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "ssblab", *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if check and done.returncode != 0:
        raise AssertionError(f"ssblab {args} exited {done.returncode}: {done.stderr}")
    return done


def _feed_file(path: Path, count: int = 4, tamper_at: int | None = None) -> list:
    keypair, previous, out = Keypair.generate(bytes([9]) * 32), None, []
    for i in range(count):
        previous = create_message(keypair, {"type": "post", "text": f"n{i}"}, previous=previous, timestamp=i + 1)
        out.append(dict(previous.value))
    if tamper_at is not None:
        out[tamper_at]["content"] = {"type": "post", "text": "forged"}
    path.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in out))
    return out


def test_help_documents_every_verb() -> None:
    text = ssblab("--help").stdout
    for verb in ("keys", "generate", "import", "export", "verify", "demo", "serve", "replicate", "archive",
                 "graph", "moderation", "tangle"):
        assert verb in text
        assert ssblab(verb, "--help").returncode == 0


def test_keys_new_and_show(tmp_path: Path) -> None:
    feed = ssblab("keys", "new", tmp_path / "secret").stdout.strip()
    assert ssblab("keys", "show", tmp_path / "secret").stdout.strip() == feed
    shown = json.loads(ssblab("keys", "show", "--json", tmp_path / "secret").stdout)
    assert shown["id"] == feed and shown["curve"] == "ed25519"
    again = ssblab("keys", "new", tmp_path / "secret", check=False)
    assert again.returncode == 2 and "error" in again.stderr  # never overwrites a secret
    (tmp_path / "bad").write_text("# nothing\n{\"curve\": \"ed25519\"}")
    bad = ssblab("keys", "show", tmp_path / "bad", check=False)
    assert bad.returncode == 2 and "[secret]" in bad.stderr and "private" in bad.stderr


def test_verify_json_contract_and_exit_codes(tmp_path: Path) -> None:
    _feed_file(tmp_path / "good.jsonl")
    good = json.loads(ssblab("verify", tmp_path / "good.jsonl", "--json").stdout)
    assert good == {"checked": 4, "valid": 4, "invalid": 0, "feeds": 1, "forks": 0, "formats": {}, "findings": [],
                    "skipped": {}, "errors": []}
    values = _feed_file(tmp_path / "bad.jsonl", tamper_at=2)
    done = ssblab("verify", tmp_path / "bad.jsonl", "--json", check=False)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert (report["valid"], report["invalid"]) == (2, 2)
    first, second = report["errors"]
    assert (first["author"], first["sequence"], first["code"]) == (values[0]["author"], 3, "signature")
    assert second["code"] == "feed-stopped" and "signature" in first["message"]


def test_import_export_roundtrip(tmp_path: Path) -> None:
    _feed_file(tmp_path / "in.jsonl", count=5)
    assert "imported 5 new messages" in ssblab("import", tmp_path / "in.jsonl", "--store", tmp_path / "s").stdout
    again = json.loads(ssblab("import", tmp_path / "in.jsonl", "--store", tmp_path / "s", "--json").stdout)
    assert (again["valid"], again["duplicates"], again["stored"]) == (0, 5, 5)
    ssblab("export", "--store", tmp_path / "s", "--format", "jsonl", "--out", tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "in.jsonl").read_bytes()
    assert json.loads(ssblab("verify", tmp_path / "s", "--json").stdout)["valid"] == 5


def test_missing_input_is_a_clear_error(tmp_path: Path) -> None:
    done = ssblab("verify", tmp_path / "nope.jsonl", check=False)
    assert done.returncode == 2 and "nope.jsonl" in done.stderr and "Traceback" not in done.stderr


def test_generate_is_deterministic_and_verifies(tmp_path: Path) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        out = ssblab("generate", "--authors", 4, "--messages", 60, "--seed", 5, "--out", tmp_path / name).stdout
        assert "wrote 60 messages of 4 feeds" in out
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert json.loads(ssblab("verify", tmp_path / "a.jsonl", "--json").stdout)["valid"] == 60
    bad = ssblab("generate", "--authors", 0, "--messages", 5, "--out", tmp_path / "c.jsonl", check=False)
    assert bad.returncode == 2 and "authors must be at least 1" in bad.stderr


@pytest.mark.slow
def test_demo_runs_the_main_job(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "tiny", "authors": 8, "messages": 300, "seed": 3}))
    out_dir = tmp_path / "out"
    out = ssblab("demo", "--spec", spec, cwd=tmp_path).stdout  # the default --out: ./out, a relative path
    assert "feeds             8" in out and "messages        300" in out
    assert "EBT replication 300 messages of 8 feeds" in out and "verified on Spark: 300/300 valid" in out
    assert (out_dir / "store" / "ssblab.sqlite3").exists()
    assert json.loads((out_dir / "parquet" / "_ssblab_dataset.json").read_text())["tables"]["messages"]["rows"] == 300
    report = (out_dir / "report.html").read_text()
    for title in ("The dataset", "The follow graph", "Moderation scenarios", "Threads and causal order", "Archives"):
        assert f"<h2>{title}</h2>" in report
    assert report.count("<svg") == 4 and "<script" not in report  # figures inlined, nothing to fetch
    assert "<dt>seed</dt><dd>3</dd>" in report and "`" not in report  # provenance; the footer is plain text
    assert "…" in report and "(@" in report  # feeds shown by name with the start of their key
    assert {p.name for p in (out_dir / "figures").iterdir()} >= {"message-types.png", "archive-sizes.svg"}


def test_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    """``ssblab … | head`` where head has gone: status 141, as a shell reports it, and nothing on stderr."""
    import os

    _feed_file(tmp_path / "bad.jsonl", count=40, tamper_at=2)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    with open(write, "wb") as out:
        done = subprocess.run([sys.executable, "-m", "ssblab", "verify", str(tmp_path / "bad.jsonl")], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (141, "")
