"""The Parquet dataset: documented schema, same counts in four readers, atomic and idempotent writes."""

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
from ssblab.pipeline.export import MANIFEST, ExportError, export_parquet
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


def test_refuses_to_replace_a_folder_it_did_not_write(spark: Any, fault_log: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(ExportError, match="not an ssblab dataset"):
        export_parquet(spark, fault_log, tmp_path, progress=False)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


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
