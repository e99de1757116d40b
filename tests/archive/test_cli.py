"""``ssblab archive`` verbs end to end on a real store: build, publish, verify both ways, decode, inspect."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from ssblab.cli import archive as cli
from ssblab.core.errors import SsbError
from ssblab.core.message import Message
from ssblab.generate import GeneratedNetwork, NetworkSpec
from ssblab.store import Store


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="ssblab")
    cli.register(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["archive", *argv])
    return int(args.run(args))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GeneratedNetwork, list[Message]]:
    root = tmp_path_factory.mktemp("archive-cli")
    net = GeneratedNetwork(NetworkSpec(authors=3, messages=400, seed=21))
    msgs = list(net.messages())
    with Store(root / "store") as store:
        store.append(msgs)
    net.write_secrets(root / "secrets")
    return root, net, msgs


def test_build_publish_verify_decode_inspect(world, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    root, net, msgs = world
    feed = net.ids[0]
    own = [m for m in msgs if m.author == feed]
    out = root / "out"
    assert run("build", "--store", str(root / "store"), "--feed", feed, "--block-size", "64", "--out", str(out),
               "--publish", str(root / "secrets" / "secret")) == 0  # fmt: skip
    published = capsys.readouterr().out.split("published ")[1].strip()
    assert run("verify", str(out / "archive.json"), "--store", str(root / "store")) == 0
    assert "ok (rebuild)" in capsys.readouterr().out
    assert run("verify", str(out / "archive.json"), "--mode", "fetched") == 0
    assert f"ok (fetched): {len(own)} messages" in capsys.readouterr().out
    assert run("verify", published, "--store", str(root / "store"), "--blobs", str(out / "blobs")) == 0
    assert run("decode", str(out / "archive.json"), "--format", "jsonl", "--out", str(root / "m.jsonl")) == 0
    lines = (root / "m.jsonl").read_bytes().splitlines()
    assert [Message.from_json(line).id for line in lines] == [m.id for m in own]
    assert run("decode", str(out / "archive.json"), "--format", "parquet", "--out", str(root / "m.parquet")) == 0
    table = pq.read_table(root / "m.parquet")
    assert table.column("id").to_pylist() == [m.id for m in own]
    assert [orjson.loads(c) for c in table.column("content").to_pylist()] == [m.content for m in own]
    capsys.readouterr()
    assert run("inspect", str(out / "archive.json"), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert sum(b["messages"] for b in report["blocks"]) == len(own)
    assert report["dictionaries"]["types"]["entries"] >= 3


def test_errors_are_named(world, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, net, _ = world
    with pytest.raises(SsbError, match=r"neither an archive\.json"):
        run("verify", "%nothing", "--store", str(root / "store"))
    out = tmp_path / "o"
    run("build", "--store", str(root / "store"), "--feed", net.ids[1], "--out", str(out))
    for blob in (out / "blobs").rglob("*"):
        if blob.is_file() and blob.stat().st_size > 2000:
            blob.unlink()
    with pytest.raises(SsbError, match="not available"):
        run("verify", str(out / "archive.json"), "--mode", "fetched")
    with pytest.raises(SsbError, match="the secret is"):
        run("build", "--store", str(root / "store"), "--feed", net.ids[1], "--out", str(out),
            "--publish", str(root / "secrets" / "secret"))  # fmt: skip
