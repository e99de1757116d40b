"""``ssblab graph hops|stats`` and ``ssblab moderation whatif`` on a Parquet dataset and on a JSONL log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ssblab.cli import main
from ssblab.friends import contact_edges, hops
from ssblab.generate import generate_network, write_jsonl
from ssblab.graph import contacts_from_messages
from ssblab.pipeline.sources import read_source
from ssblab.store import Store

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="module")
def dataset(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    messages = list(generate_network(25, 1200, seed=4))
    path = tmp_path_factory.mktemp("graph-dataset")
    contacts_from_messages(spark, messages).write.parquet(str(path / "contacts"))
    write_jsonl(iter(messages), path / "log.jsonl")
    with Store(path / "store") as store:
        store.append(read_source(path / "log.jsonl"))
    return path, messages


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_hops_json_equals_ssb_friends(dataset: tuple[Path, list], capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    root = messages[0].value["author"]
    expected = hops(contact_edges(messages), root, 3)
    assert run(capsys, "graph", "hops", "--data", str(path), "--root", root, "--max-hops", "3", "--json") == expected
    from_log = run(capsys, "graph", "hops", "--data", str(path / "log.jsonl"), "--root", root, "--json")
    assert from_log == hops(contact_edges(messages), root, 2)
    from_store = run(capsys, "graph", "hops", "--data", str(path / "store"), "--root", root, "--json")
    assert from_store == from_log


def test_whatif_json(dataset: tuple[Path, list], capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    edges = contact_edges(messages)
    root = messages[0].value["author"]
    friend = sorted(d for (s, d), state in edges.items() if s == root and state.weight == 1)[0]
    out = run(capsys, "moderation", "whatif", "--data", str(path), "--root", root, "--block", friend, "--json")
    after = {**{pair: state.weight for pair, state in edges.items()}, (root, friend): -1}
    before_set = {f for f, v in hops(edges, root, 2).items() if 0 <= v <= 2}
    after_set = {f for f, v in hops(after, root, 2).items() if 0 <= v <= 2}
    assert out["leaving"] == sorted(before_set - after_set) and friend in out["leaving"]


def test_bad_arguments_fail_clearly(dataset: tuple[Path, list], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = dataset
    assert main(["graph", "hops", "--data", str(path), "--root", "nobody"]) == 2
    assert "--root: 'nobody' is not a feed id" in capsys.readouterr().err
    root = "@" + "A" * 43 + "=.ed25519"
    assert main(["graph", "hops", "--data", str(tmp_path), "--root", root]) == 2
    assert "no contacts table" in capsys.readouterr().err


@pytest.mark.slow
def test_stats_json(dataset: tuple[Path, list], capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    stats = run(capsys, "graph", "stats", "--data", str(path), "--top", "3", "--json")
    follows = [pair for pair, state in contact_edges(messages).items() if state.weight == 1 and pair[0] != pair[1]]
    assert stats["follows"] == len(follows) and len(stats["pagerank"]) == 3
    assert stats["components"]["largest"] <= stats["feeds"]
