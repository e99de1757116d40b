"""Verification and export on a real standalone cluster equal local mode, even when a worker dies mid-job.

The cluster is test_cluster's fixture (a master and two one-core workers on loopback). The cluster driver runs
in a subprocess (this process holds the local SparkContext); to kill a worker *during* the job, that driver
watches its own status tracker and kills one worker's process group as soon as tasks are running.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ssblab.pipeline.export import export_parquet
from ssblab.pipeline.verify import verify_spark
from tests.pipeline.faults import write_fault_log
from tests.pipeline.test_cluster import REPO, WORKERS, standalone_master  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow  # five JVMs on two cores
SPLITS = 20_000

DRIVER = """
import json, os, signal, sys, threading, time
from ssblab.pipeline.export import export_parquet
from ssblab.pipeline.session import spark_session
from ssblab.pipeline.verify import verify_spark
master, source, out, victim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
spark = spark_session(master, app_name="ssblab-pipeline-cluster-test", for_tests=True, cores=2,
                      extra_conf={"spark.executor.memory": "512m", "spark.cores.max": "2"})
sc = spark.sparkContext
deadline = time.monotonic() + 120
while sc._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:
    time.sleep(0.5)
killed = []

def kill_when_busy():
    tracker = sc.statusTracker()
    while not killed:
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if info is not None and info.numActiveTasks > 0:
                os.killpg(victim, signal.SIGKILL)
                killed.append(stage)
                return
        time.sleep(0.05)

if victim:
    threading.Thread(target=kill_when_busy, daemon=True).start()
report = verify_spark(spark, source, split_bytes=SPLITS, progress=False)
summary = export_parquet(spark, source, out, split_bytes=SPLITS, progress=False)
print(json.dumps({"report": report.to_json(), "rows": summary.rows, "killed": bool(killed),
                  "block_managers": sc._jsc.sc().getExecutorMemoryStatus().size()}))
spark.stop()
""".replace("SPLITS", str(SPLITS))


def _worker_pids(master: str) -> list[int]:
    """The worker daemons this module's fixture started (they name the master's unique port)."""
    found = subprocess.run(["pgrep", "-f", f"deploy.worker.Worker.*{master}"], capture_output=True, text=True,
                           check=False)
    return sorted(int(pid) for pid in found.stdout.split())


def _run_driver(master: str, source: Path, out: Path, victim: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", DRIVER, master, str(source), str(out), str(victim)], cwd=REPO,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _tables(folder: Path) -> dict[str, list[dict[str, Any]]]:
    import pyarrow.dataset as ds

    return {t.name: ds.dataset(t, format="parquet").to_table().to_pylist()
            for t in sorted(folder.iterdir()) if t.is_dir()}


@pytest.fixture(scope="module")
def local_result(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    source = write_fault_log(tmp_path_factory.mktemp("cluster") / "faults.jsonl", messages=600)
    out = source.parent / "local"
    export_parquet(spark, source, out, split_bytes=SPLITS, progress=False)
    return source, verify_spark(spark, source, split_bytes=SPLITS, progress=False).to_json(), out


def test_cluster_equals_local_mode(standalone_master: str, local_result: Any) -> None:  # noqa: F811
    source, report, local = local_result
    result = _run_driver(standalone_master, source, source.parent / "cluster", 0)
    assert result["block_managers"] == 1 + WORKERS
    assert result["report"] == report
    assert _tables(source.parent / "cluster") == _tables(local)


def test_a_worker_killed_mid_job_still_gives_the_same_result(standalone_master: str,  # noqa: F811
                                                             local_result: Any) -> None:
    source, report, local = local_result
    pids = _worker_pids(standalone_master)
    assert len(pids) == WORKERS, pids
    result = _run_driver(standalone_master, source, source.parent / "survivor", pids[0])
    assert result["killed"] and result["block_managers"] == WORKERS  # the driver and the surviving executor
    assert result["report"] == report
    assert _tables(source.parent / "survivor") == _tables(local)
