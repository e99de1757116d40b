"""``ssblab serve`` and ``ssblab replicate`` as a user runs them: --json, --explain, --hops, a throwaway key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ssblab.cli import build_parser
from ssblab.store import Store

from .helpers import filled_store, ids_by_feed, network
from .jspeers import ssblab_serve


def test_replicate_json_and_explain_by_hops(tmp_path: Path) -> None:
    net, _ = network()
    with filled_store(tmp_path / "source") as source:
        expected = ids_by_feed(source)
    net.write_secrets(tmp_path / "keys")
    with ssblab_serve(tmp_path / "source", tmp_path / "keys" / "secret") as address:
        command = [sys.executable, "-m", "ssblab", "replicate", "--store", str(tmp_path / "r"), "--remote",
                   str(address), "--hops", "1", "--explain", "--json", "--mode", "ebt"]
        done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    assert set(report) == {"feeds", "messages", "blobs", "seconds", "mode", "routes", "unserved", "stopped", "errors"}
    assert report["unserved"] == [] and report["stopped"] is None
    assert report["routes"]["ebt"] == {"feeds": report["feeds"], "messages": report["messages"]}, json.dumps(report)
    explained = [line.split("\t") for line in done.stderr.decode().splitlines() if line.startswith("@")]
    assert explained[0][:2] == [net.ids[0], "0"]  # the remote's own feed is the root
    assert all(hops in {"0", "1"} and why for _, hops, why in explained)
    with Store(tmp_path / "r") as replica:
        got = ids_by_feed(replica)
    assert report["messages"] == sum(map(len, got.values())) and got == {f: expected[f] for f in got}
    assert set(got) == {feed for feed, _, _ in explained}


def test_bad_arguments_are_clean_errors(tmp_path: Path) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["replicate", "--store", str(tmp_path), "--remote", "x", "--network-key", "short"])
    from ssblab.cli import main
    assert main(["serve", "--store", str(tmp_path), "--identity", str(tmp_path / "none"), "--listen", "nope"]) == 2
