"""``ssblab tangle --data DIR --root MSGID`` on Parquet tables written with pyarrow."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ssblab.cli import main
from ssblab.core.schema import TABLES, arrow_schema
from ssblab.generate import generate_network
from ssblab.tangles.thread import causal_sort, tangle_from_edges
from tests.tangles.edges import tangle_rows

pq = pytest.importorskip("pyarrow.parquet")


def _write(folder: Path, table: str, rows: list[dict]) -> None:
    import pyarrow as pa

    folder.mkdir(parents=True, exist_ok=True)
    columns = {c.name: [r.get(c.name) for r in rows] for c in TABLES[table]}
    pq.write_table(pa.table(columns, schema=arrow_schema(table)), folder / "part-0.parquet")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], dict]:
    messages = list(generate_network(20, 600, 4))
    data = tmp_path_factory.mktemp("tables")
    rows = tangle_rows(messages)
    _write(data / "tangle_edges", "tangle_edges", rows)
    _write(data / "messages", "messages", [
        {"id": m.id, "author": m.value["author"], "sequence": m.value["sequence"], "previous": m.value["previous"],
         "timestamp": float(m.value["timestamp"]), "content": json.dumps(m.value["content"]),
         "is_private": isinstance(m.value["content"], str), "valid": True} for m in messages])
    return data, rows, {m.id: m.value["timestamp"] for m in messages}


def test_prints_the_thread_in_causal_order(dataset, capsys: pytest.CaptureFixture[str]) -> None:
    data, rows, stamps = dataset
    root = Counter(r["root"] for r in rows).most_common(1)[0][0]
    assert main(["tangle", "--data", str(data), "--root", root, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["order"] == causal_sort(tangle_from_edges(rows, root, root_timestamp=stamps[root]))
    assert answer["depths"][root] == 0 and answer["is_trdag"] in (True, False) and answer["missing"] == {}
    assert main(["tangle", "--data", str(data), "--root", root]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "0" and lines[0].split()[3] == root
    assert lines[-1].startswith(f"{len(answer['order'])} messages, heads: ")


def test_a_missing_table_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tangle", "--data", str(tmp_path), "--root", "%x"]) == 2
    assert "no tangle_edges table" in capsys.readouterr().err
