"""``ssblab verify --engine spark`` keeps the single-process output contract; ``export --format parquet`` works.

Both verbs run in one subprocess (the CLI starts its own SparkSession; this process holds the shared one).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ssblab.cli import main
from ssblab.pipeline.progress import job_progress
from tests.pipeline.faults import write_fault_log

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from ssblab.cli import main
source, out = sys.argv[1], sys.argv[2]
print("VERIFY", main(["verify", "--engine", "spark", "--json", source]), flush=True)
print("EXPORT", main(["export", "--format", "parquet", "--store", source, "--out", out]), flush=True)
"""


@pytest.mark.slow
def test_verify_engine_spark_prints_the_same_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_fault_log(tmp_path / "faults.jsonl", messages=150)
    assert main(["verify", "--json", str(source)]) == 1
    expected = capsys.readouterr().out.strip()
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(source), str(tmp_path / "ds")], cwd=REPO,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert json.loads(lines[0]) == json.loads(expected) and lines[1] == "VERIFY 1"
    assert lines[2].startswith("wrote a Parquet dataset") and lines[3] == "EXPORT 0"
    assert (tmp_path / "ds" / "_ssblab_dataset.json").exists()


def test_job_progress_reports_stages_and_rows(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with job_progress(spark, "counting", enabled=True) as rows:
        spark.sparkContext.parallelize(range(1000), 4).foreach(lambda _: rows.add(1))
    err = capsys.readouterr().err
    assert "counting" in err and "1,000 rows" in err
