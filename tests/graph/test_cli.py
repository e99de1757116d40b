"""``ssblab graph hops|stats`` and ``ssblab moderation whatif`` on a Parquet dataset, a JSONL log and a store, on
both engines: the same output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ssblab.cli import main
from ssblab.friends import contact_edges, hops
from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline.export import export_dataset
from ssblab.pipeline.sources import read_source
from ssblab.store import Store


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    messages = list(generate_network(25, 1200, seed=4))
    path = tmp_path_factory.mktemp("graph-dataset")
    write_jsonl(iter(messages), path / "log.jsonl")
    export_dataset(path / "log.jsonl", path / "parquet", engine="local")
    with Store(path / "store") as store:
        store.append(read_source(path / "log.jsonl"))
    return path, messages


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    return json.loads(out) if "--json" in argv else out


def test_hops_json_equals_ssb_friends(dataset: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    root = messages[0].value["author"]
    expected = hops(contact_edges(messages), root, 3)
    parquet = str(path / "parquet")
    assert run(capsys, "graph", "hops", "--data", parquet, "--root", root, "--max-hops", "3", "--json") == expected
    from_log = run(capsys, "graph", "hops", "--data", str(path / "log.jsonl"), "--root", root, "--json")
    assert from_log == hops(contact_edges(messages), root, 2)
    from_store = run(capsys, "graph", "hops", "--data", str(path / "store"), "--root", root, "--json")
    assert from_store == from_log


@pytest.mark.spark
def test_spark_prints_exactly_what_local_prints(spark: Any, dataset: tuple[Path, list[Any]],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    root = messages[0].value["author"]
    for verb in (["graph", "hops", "--root", root], ["graph", "stats", "--top", "5"],
                 ["moderation", "whatif", "--root", root, "--block", messages[5].value["author"]]):
        for data in ("parquet", "log.jsonl"):
            argv = [*verb, "--data", str(path / data)]
            assert run(capsys, *argv, "--engine", "spark") == run(capsys, *argv), argv


def test_whatif_json(dataset: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    edges = contact_edges(messages)
    root = messages[0].value["author"]
    friend = sorted(d for (s, d), state in edges.items() if s == root and state.weight == 1)[0]
    out = run(capsys, "moderation", "whatif", "--data", str(path / "parquet"), "--root", root, "--block", friend,
              "--json")
    after = {**{pair: state.weight for pair, state in edges.items()}, (root, friend): -1}
    before_set = {f for f, v in hops(edges, root, 2).items() if 0 <= v <= 2}
    after_set = {f for f, v in hops(after, root, 2).items() if 0 <= v <= 2}
    assert out["leaving"] == sorted(before_set - after_set) and friend in out["leaving"]


def test_stats_json(dataset: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str]) -> None:
    path, messages = dataset
    stats = run(capsys, "graph", "stats", "--data", str(path / "parquet"), "--top", "3", "--json")
    follows = [pair for pair, state in contact_edges(messages).items() if state.weight == 1 and pair[0] != pair[1]]
    assert stats["follows"] == len(follows) and len(stats["pagerank"]) == 3
    assert stats["components"]["largest"] <= stats["feeds"]


def test_bad_arguments_fail_clearly(dataset: tuple[Path, list[Any]], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = dataset
    root = "@" + "A" * 43 + "=.ed25519"
    cases = [
        (["graph", "hops", "--data", str(path / "parquet"), "--root", "nobody"], "--root: 'nobody' is not a feed id"),
        (["graph", "hops", "--data", str(tmp_path), "--root", root], "not a source ssblab reads"),
        (["graph", "hops", "--data", str(tmp_path / "missing"), "--root", root], "no such file or folder"),
        (["graph", "hops", "--data", str(path / "parquet"), "--root", root, "--engine", "local", "--master",
          "spark://127.0.0.1:1"], "engine 'local' takes no Spark session or master"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)


def test_stats_of_a_log_without_follows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A network with no contact messages has no degrees: the text says what it has, ``--json`` gives nulls."""
    from ssblab.core import Keypair, create_message

    author = Keypair.generate(bytes([17]) * 32)
    first = create_message(author, {"type": "post", "text": "alone \ud800"}, timestamp=1)
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(first.value) + "\n")
    text = run(capsys, "graph", "stats", "--data", str(log), "--no-cache")
    assert text.splitlines()[0] == "0 feeds, 0 follows, 0 mutual pairs" and "degree" not in text
    stats = run(capsys, "graph", "stats", "--data", str(log), "--no-cache", "--json")
    assert stats["degree"] == {"max_in": None, "max_out": None, "mean_out": None} and stats["pagerank"] == []
