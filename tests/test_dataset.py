"""`open_dataset`: a Parquet dataset or any source as tables, queries and analyses without a JVM, and each bad
input named: a folder that is not a dataset, a missing table, a failed query, a dataset of another version."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ssblab
from ssblab.core.schema import DATASET_VERSION, TABLES
from ssblab.dataset import DatasetError, open_dataset
from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline.export import MANIFEST, export_dataset
from ssblab.pipeline.sources import SourceError, read_source
from ssblab.store import Store


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One network as JSONL, as a store and as a Parquet dataset."""
    root = tmp_path_factory.mktemp("dataset")
    write_jsonl(generate_network(10, 400, seed=6), root / "log.jsonl")
    with Store(root / "store") as store:
        store.append(read_source(root / "log.jsonl"))
    export_dataset(root / "log.jsonl", root / "parquet", engine="local")
    return {"jsonl": root / "log.jsonl", "store": root / "store", "parquet": root / "parquet"}


def test_every_source_gives_the_same_tables(sources: dict[str, Path]) -> None:
    opened = {kind: open_dataset(path) for kind, path in sources.items()}
    assert all(ds.tables == list(TABLES) for ds in opened.values())
    for table in ("follows", "names", "posts", "links"):
        rows = {kind: _sorted(ds.table(table)) for kind, ds in opened.items()}
        assert rows["jsonl"] == rows["store"] == rows["parquet"], table


def _sorted(table: Any) -> list[dict[str, Any]]:
    keys = [(c, "ascending") for c in table.column_names if not str(table.schema.field(c).type).startswith("list")]
    return table.sort_by(keys).to_pylist()  # type: ignore[no-any-return]


def test_tables_queries_and_frames(sources: dict[str, Path]) -> None:
    ds = ssblab.open_dataset(sources["parquet"])
    assert ds.manifest is not None and ds.manifest["version"] == DATASET_VERSION
    following = ds.sql("SELECT count(*) AS n FROM follows WHERE state = 'following'")["n"][0].as_py()
    assert following == ds.graph().stats()["follows"] + ds.sql(
        "SELECT count(*) AS n FROM follows WHERE state = 'following' AND author = contact")["n"][0].as_py()
    assert list(ds.pandas("names").columns) == [c.name for c in TABLES["names"]]
    assert ds.polars("votes").height == ds.table("votes").num_rows
    assert ds.table("messages", ["id", "valid"]).column_names == ["id", "valid"]
    with pytest.raises(DatasetError, match="this dataset is on the local engine"):
        ds.frame("messages")


def test_opening_a_dataset_starts_no_jvm(sources: dict[str, Path]) -> None:
    probe = ("import sys, ssblab; ds = ssblab.open_dataset(sys.argv[1]); ds.graph().hops(ds.table('follows')"
             "['author'][0].as_py()); ds.sql('SELECT 1'); print(sorted({'pyspark', 'py4j'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe, str(sources["parquet"])], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_bad_inputs_are_named(sources: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a source ssblab reads"):
        open_dataset(tmp_path)  # an empty folder: neither a dataset nor a source
    with pytest.raises(SourceError, match="no such file or folder"):
        open_dataset(tmp_path / "missing")
    ds = open_dataset(sources["parquet"])
    with pytest.raises(DatasetError, match="no table 'friends'"):
        ds.table("friends")
    with pytest.raises(DatasetError, match=r"query failed: .*nope"):
        ds.sql("SELECT nope FROM messages")
    broken = tmp_path / "broken"
    shutil.copytree(sources["parquet"], broken)
    shutil.rmtree(broken / "votes")
    with pytest.raises(DatasetError, match="the votes table is missing"):
        open_dataset(broken).table("votes")
    for version, says in ((DATASET_VERSION + 1, "written by a newer ssblab"), (1, "export it again")):
        manifest = json.loads((sources["parquet"] / MANIFEST).read_text())
        (broken / MANIFEST).write_text(json.dumps({**manifest, "version": version}))
        with pytest.raises(DatasetError, match=says):
            open_dataset(broken)
    (broken / MANIFEST).write_text("{not json")
    with pytest.raises(DatasetError, match="not a dataset manifest"):
        open_dataset(broken)


def test_the_cli_says_so_without_a_traceback(sources: dict[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from ssblab.cli import main

    newer = tmp_path / "newer"
    shutil.copytree(sources["parquet"], newer)
    manifest = json.loads((newer / MANIFEST).read_text())
    (newer / MANIFEST).write_text(json.dumps({**manifest, "version": DATASET_VERSION + 1}))
    root = "@" + "A" * 43 + "=.ed25519"
    for data, says in ((newer, "written by a newer ssblab"), (tmp_path, "not a source ssblab reads")):
        assert main(["graph", "hops", "--data", str(data), "--root", root]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err
