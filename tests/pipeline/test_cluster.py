"""A real Spark standalone cluster on loopback: one master, two workers, a session connected to it.

The daemons are started from the scripts inside the pyspark wheel (``bin/spark-class``), each in its own process
group so teardown can end it and its children even when a test fails. The cluster job runs in a subprocess
because this process already holds the shared local SparkContext (Spark allows one per process); its answer
must equal the same job run in local mode.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # five JVMs on two cores: about a minute

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120
WORKERS = 2


def run_job(spark: Any) -> dict[str, Any]:
    """The job both modes run: a shuffle aggregate, a Python-worker map, GraphFrames CC and PageRank."""
    from ssblab.pipeline.session import connected_components, graphframe

    counts = spark.range(10_000).selectExpr("id % 7 AS k").groupBy("k").count().orderBy("k").collect()
    squares = spark.sparkContext.parallelize(range(100), 4).map(lambda x: x * x).sum()
    vertices = spark.createDataFrame([(v,) for v in "abcdef"], ["id"])
    edges = spark.createDataFrame([("a", "b"), ("b", "c"), ("d", "e")], ["src", "dst"])
    graph = graphframe(vertices, edges)
    groups: dict[int, list[str]] = {}
    for row in connected_components(graph).collect():
        groups.setdefault(row.component, []).append(row.id)
    ranks = graph.pageRank(resetProbability=0.15, maxIter=5).vertices.collect()
    return {
        "counts": [[r.k, r["count"]] for r in counts],
        "squares": squares,
        "components": sorted(sorted(g) for g in groups.values()),
        "pagerank": {r.id: round(r.pagerank, 6) for r in ranks},
    }


CLUSTER_SCRIPT = """
import json, sys, time
from ssblab.pipeline.session import spark_session
from tests.pipeline.test_cluster import run_job
master = sys.argv[1]
# Two executors of one core each; small heaps keep five JVMs within a CI machine's memory.
spark = spark_session(master, app_name="ssblab-cluster-test", for_tests=True, cores=2,
                      extra_conf={"spark.executor.memory": "512m", "spark.cores.max": "2"})
status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()
deadline = time.monotonic() + 60
while status.size() < 3 and time.monotonic() < deadline:  # the driver plus two executors
    time.sleep(0.5)
    status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()
result = run_job(spark)
result["master"] = spark.sparkContext.master
result["block_managers"] = status.size()
print(json.dumps(result))
spark.stop()
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spark_class() -> Path:
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'ssblab[spark]'")
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        # A new session makes the daemon a process-group leader, so teardown can signal it with its children.
        return subprocess.Popen([str(_spark_class()), *args], stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)


def _wait_for(proc: subprocess.Popen[bytes], log: Path, text: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.25)
    tail = log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"{log.name}: no {text!r} (exit code {proc.poll()}); log tail:\n{tail}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def standalone_master(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a running standalone master with two one-core workers, all on 127.0.0.1."""
    tmp = tmp_path_factory.mktemp("spark-cluster")
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    # Daemons and executors bind loopback; small daemon heaps; executors run this interpreter.
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_MEMORY": "256m",
           "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(REPO)}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        master_log = tmp / "master.log"
        procs.append(_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                             "--webui-port", "0"], master_log, env))
        _wait_for(procs[0], master_log, "I have been elected leader")
        for i in range(WORKERS):
            log = tmp / f"worker{i}.log"
            procs.append(_start(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                                 "--memory", "768m", "--webui-port", "0", "--work-dir", str(tmp / f"work{i}"),
                                 url], log, env))
            _wait_for(procs[-1], log, "Successfully registered with master")
        yield url
    finally:
        for proc in reversed(procs):
            _stop(proc)


def test_cluster_job_matches_local_mode(standalone_master: str, spark: Any) -> None:
    done = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, standalone_master], cwd=REPO,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    on_cluster = json.loads(done.stdout.strip().splitlines()[-1])
    assert on_cluster.pop("master") == standalone_master
    assert on_cluster.pop("block_managers") == 1 + WORKERS  # the driver and one executor per worker
    assert on_cluster == run_job(spark)
