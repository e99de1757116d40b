"""The Parquet dataset on both engines: documented schema, the same rows from either engine, the same counts in
four readers, table folders that hold only Parquet files, atomic and idempotent writes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ssblab.core.schema import TABLES
from ssblab.pipeline.export import MANIFEST, ExportError, export_dataset, export_parquet
from ssblab.pipeline.verify import verify_path
from tests.pipeline.faults import write_fault_log

REPO = Path(__file__).resolve().parents[2]
SPLITS = 30_000


@pytest.fixture(scope="module")
def fault_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fault_log(tmp_path_factory.mktemp("export") / "faults.jsonl", messages=600)


@pytest.fixture(scope="module")
def dataset(spark: Any, fault_log: Path) -> Path:
    out = fault_log.parent / "dataset"
    export_parquet(spark, fault_log, out, split_bytes=SPLITS, progress=False)
    return out


@pytest.fixture(scope="module")
def local_dataset(fault_log: Path) -> Path:
    out = fault_log.parent / "local-dataset"
    export_dataset(fault_log, out, engine="local", split_bytes=SPLITS)
    return out


def _rows(path: Path) -> list[dict[str, Any]]:
    """A table's rows in a fixed order (every column that sorts, then the lists)."""
    import pyarrow.dataset as ds

    table = ds.dataset(path, format="parquet").to_table()
    keys = [(c, "ascending", "at_start") for c in table.column_names if not str(table.schema.field(c).type)
            .startswith("list")]
    return table.sort_by(keys).to_pylist()  # type: ignore[no-any-return]


@pytest.mark.slow  # the dataset fixture exports with Spark: about a minute
def test_local_and_spark_write_the_same_tables(dataset: Path, local_dataset: Path) -> None:
    import pyarrow.dataset as ds

    for table in TABLES:
        spark_schema = ds.dataset(dataset / table, format="parquet").schema
        local_schema = ds.dataset(local_dataset / table, format="parquet").schema
        assert [(f.name, f.type) for f in spark_schema] == [(f.name, f.type) for f in local_schema], table
        assert _rows(dataset / table) == _rows(local_dataset / table), table
    spark_manifest = json.loads((dataset / MANIFEST).read_text())
    local_manifest = json.loads((local_dataset / MANIFEST).read_text())
    assert spark_manifest["tables"] == local_manifest["tables"]
    assert (spark_manifest["engine"], local_manifest["engine"]) == ("spark", "local")


@pytest.mark.slow  # the dataset fixture exports with Spark: about a minute
def test_table_folders_hold_only_parquet_and_open_directly(dataset: Path) -> None:
    import pandas as pd
    import polars as pl

    strays = [p for p in dataset.rglob("*") if p.is_file() and p.suffix != ".parquet" and p.name != MANIFEST]
    assert strays == []  # no _SUCCESS, no .crc
    assert len(pl.read_parquet(dataset / "posts")) == len(pd.read_parquet(dataset / "posts")) > 0
    claimed = pd.read_parquet(dataset / "messages", columns=["timestamp", "claimed_at"])
    assert str(claimed["claimed_at"].dtype).startswith("datetime64[us, UTC]")
    millis = (claimed["claimed_at"] - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(milliseconds=1)
    assert (millis == claimed["timestamp"].floordiv(1).astype("int64")).all()


def test_follows_and_names_are_the_latest_state(local_dataset: Path) -> None:
    from ssblab.friends import contact_edges
    from ssblab.pipeline.sources import read_source

    messages = [r.message for r in read_source(local_dataset.parent / "faults.jsonl") if r.message is not None]
    valid = {m.id for m in messages} & {r["id"] for r in _rows(local_dataset / "messages") if r["valid"]}
    state = {(r["author"], r["contact"]): r["state"] for r in _rows(local_dataset / "follows")}
    names = {"following": 1, "blocking": -1, "cleared": -2}
    expected = {pair: s.weight for pair, s in contact_edges([m for m in messages if m.id in valid]).items()}
    assert {pair: names[s] for pair, s in state.items()} == expected
    assert _scalar(f"SELECT count(*) FROM read_parquet('{_glob(local_dataset, 'names')}')") > 0


def test_lone_surrogates_become_replacement_characters(local_dataset: Path) -> None:
    """JS accepts a string with half a surrogate pair, which no Arrow or Parquet string can hold: the content
    tables and the type column hold U+FFFD in its place (as Node writes it in UTF-8); ``content`` keeps the text
    as signed, with its escape."""
    posts = {r["text"]: r for r in _rows(local_dataset / "posts")}
    lone = posts["lone \ufffd"]
    assert lone["channel"] == "\ufffd" and len(lone["mentions"]) == 1
    messages = _glob(local_dataset, "messages")
    content = _scalar(f"SELECT content FROM read_parquet('{messages}') WHERE id = '{lone['id']}'")
    assert '"text":"lone \\ud800"' in content
    kinds = {r["id"]: r["type"] for r in _rows(local_dataset / "messages") if r["valid"]}
    assert "odd\ufffd" in kinds.values()
    paths = {r["path"] for r in _rows(local_dataset / "links") if r["id"] == lone["id"]}
    assert "$['\ufffd']" in paths


def _scalar(sql: str) -> Any:
    import duckdb

    return duckdb.sql(sql).fetchall()[0][0]


def _glob(dataset: Path, table: str) -> str:
    return str(dataset / table / "*.parquet")


@pytest.mark.slow  # the dataset fixture exports with Spark: about a minute
def test_four_readers_agree_with_the_manifest(dataset: Path) -> None:
    import pandas as pd
    import polars as pl
    import pyarrow.dataset as ds

    manifest = json.loads((dataset / MANIFEST).read_text())
    for table, columns in TABLES.items():
        expected = manifest["tables"][table]["rows"]
        arrow = ds.dataset(dataset / table, format="parquet").to_table()
        assert arrow.column_names == [c.name for c in columns]
        assert arrow.num_rows == expected
        assert len(pd.read_parquet(dataset / table)) == expected
        assert _scalar(f"SELECT count(*) FROM read_parquet('{_glob(dataset, table)}')") == expected
        assert pl.scan_parquet(_glob(dataset, table)).select(pl.len()).collect().item() == expected


@pytest.mark.slow  # the dataset fixture exports with Spark: about a minute
def test_messages_carry_the_verdicts(dataset: Path, fault_log: Path) -> None:
    import duckdb

    report = verify_path(fault_log)
    messages = _glob(dataset, "messages")
    valid = _scalar(f"SELECT count(*) FROM read_parquet('{messages}') WHERE valid")
    assert valid == report.valid
    errors = dict(duckdb.sql(f"SELECT error, count(*) FROM read_parquet('{messages}') WHERE NOT valid "
                             "GROUP BY error").fetchall())
    assert errors["fork"] == 1 and errors["signature"] >= 1 and "json" not in errors  # no id, no row
    kinds = dict(duckdb.sql(f"SELECT kind, count(*) FROM read_parquet('{_glob(dataset, 'links')}') "
                            "GROUP BY kind").fetchall())
    assert set(kinds) == {"feed", "message", "blob"}
    posts = _scalar(f"SELECT count(*) FROM read_parquet('{messages}') WHERE valid AND type = 'post'")
    assert posts == _scalar(f"SELECT count(*) FROM read_parquet('{_glob(dataset, 'posts')}')")


def test_schema_page_documents_every_column() -> None:
    page = (REPO / "docs" / "datasets.md").read_text()
    for table, columns in TABLES.items():
        section = page.split(f"## `{table}`", 1)[1].split("\n## ", 1)[0]
        documented = re.findall(r"^\| `([a-z_]+)` \| `([a-z<>]+)`", section, re.MULTILINE)
        assert documented == [(c.name, c.type) for c in columns], table


@pytest.mark.slow  # the dataset fixture exports with Spark: about a minute
def test_rerun_is_idempotent(spark: Any, dataset: Path, fault_log: Path) -> None:
    import pyarrow.dataset as ds

    before = {t: ds.dataset(dataset / t, format="parquet").to_table().to_pylist() for t in ("messages", "links")}
    export_parquet(spark, fault_log, dataset, split_bytes=SPLITS, progress=False)
    after = {t: ds.dataset(dataset / t, format="parquet").to_table().to_pylist() for t in ("messages", "links")}
    assert after == before
    assert [p.name for p in dataset.parent.iterdir() if p.name.startswith(".dataset")] == []


def test_refuses_to_replace_a_folder_it_did_not_write(fault_log: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(ExportError, match="not an ssblab dataset"):
        export_dataset(fault_log, tmp_path, engine="local")
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    with pytest.raises(ExportError, match="cannot be written over or inside its source"):
        export_dataset(fault_log, fault_log, engine="local")


CRASH_SCRIPT = """
import sys
from ssblab.pipeline.export import export_parquet
from ssblab.pipeline.session import spark_session
export_parquet(spark_session(for_tests=True, cores=2), sys.argv[1], sys.argv[2], split_bytes=30_000, progress=False)
"""


@pytest.mark.slow
def test_a_killed_export_leaves_the_previous_dataset(dataset: Path, fault_log: Path) -> None:
    manifest = (dataset / MANIFEST).read_text()
    proc = subprocess.Popen([sys.executable, "-c", CRASH_SCRIPT, str(fault_log), str(dataset)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    staged: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None and not staged:
        staged = [p for p in dataset.parent.glob(".dataset.tmp-*/messages") if any(p.glob("*.parquet"))]
        time.sleep(0.2)
    assert staged, "the export never reached its first table"
    os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: the driver's JVM too
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert (dataset / MANIFEST).read_text() == manifest  # the previous dataset is untouched
    assert not (staged[0].parent / MANIFEST).exists()  # what was left looks incomplete, and is hidden
