"""``ssblab tangle --data SOURCE --root MSGID`` on an exported dataset and on a JSONL log, on both engines."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ssblab.cli import main
from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline.export import export_dataset
from ssblab.tangles.thread import causal_sort, tangle_from_edges
from tests.tangles.edges import tangle_rows


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], dict, str]:
    messages = list(generate_network(20, 600, 4))
    folder = tmp_path_factory.mktemp("tangle-cli")
    write_jsonl(iter(messages), folder / "log.jsonl")
    export_dataset(folder / "log.jsonl", folder / "dataset", engine="local", progress=False)
    rows = tangle_rows(messages)
    root = Counter(r["root"] for r in rows).most_common(1)[0][0]
    return folder, rows, {m.id: m.value["timestamp"] for m in messages}, root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_prints_the_thread_in_causal_order(dataset: tuple[Path, list[dict], dict, str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder, rows, stamps, root = dataset
    answer = json.loads(run(capsys, "tangle", "--data", str(folder / "dataset"), "--root", root, "--json"))
    assert answer["order"] == causal_sort(tangle_from_edges(rows, root, root_timestamp=stamps[root]))
    assert answer["depths"][root] == 0 and answer["is_trdag"] in (True, False) and answer["missing"] == {}
    lines = run(capsys, "tangle", "--data", str(folder / "dataset"), "--root", root).splitlines()
    assert lines[0].split()[0] == "0" and lines[0].split()[3] == root
    assert lines[-1].startswith(f"{len(answer['order'])} messages, heads: ")


def test_any_source_open_dataset_reads(dataset: tuple[Path, list[dict], dict, str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder, _, _, root = dataset
    from_log = run(capsys, "tangle", "--data", str(folder / "log.jsonl"), "--root", root)
    assert from_log == run(capsys, "tangle", "--data", str(folder / "dataset"), "--root", root)


def test_spark_prints_exactly_what_local_prints(dataset: tuple[Path, list[dict], dict, str], spark: Any,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder, _, _, root = dataset
    for extra in ([], ["--json"]):
        argv = ["tangle", "--data", str(folder / "dataset"), "--root", root, *extra]
        assert run(capsys, *argv, "--engine", "spark") == run(capsys, *argv)


def test_bad_input_is_a_clear_error(dataset: tuple[Path, list[dict], dict, str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder, _, _, root = dataset
    assert main(["tangle", "--data", str(tmp_path), "--root", root]) == 2
    assert "not a source ssblab reads" in capsys.readouterr().err
    assert main(["tangle", "--data", str(folder / "dataset"), "--root", "%x'"]) == 2
    assert "--root: \"%x'\" is not a message id" in capsys.readouterr().err
    shutil.copytree(folder / "dataset", tmp_path / "partial")
    shutil.rmtree(tmp_path / "partial" / "tangle_edges")
    assert main(["tangle", "--data", str(tmp_path / "partial"), "--root", root]) == 2
    assert "the tangle_edges table is missing" in capsys.readouterr().err
