"""The session factory: its settings (pure, no JVM), the shared session, GraphFrames, and the clear error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ssblab.pipeline.graphframes_jar import JAR_DIR_ENV, JAR_NAME
from ssblab.pipeline.session import (
    GRAPHFRAMES_PACKAGE,
    MASTER_ENV,
    connected_components,
    graphframe,
    graphframes_problem,
    resolve_master,
    session_conf,
)

REPO = Path(__file__).resolve().parents[2]
JAR = Path("/cache/jars") / JAR_NAME

# A 3-chain a->b->c, a pair d->e and a lone vertex f: three components.
VERTICES = ["a", "b", "c", "d", "e", "f"]
EDGES = [("a", "b"), ("b", "c"), ("d", "e")]


# --- pure: settings without a JVM -------------------------------------------------------------------------


def test_local_conf_is_sized_and_carries_the_jar(tmp_path: Path) -> None:
    conf = session_conf("local[2]", cores=2, tmp_dir=tmp_path, jar=JAR, for_tests=True)
    assert conf["spark.sql.shuffle.partitions"] == "2"
    assert conf["spark.default.parallelism"] == "2"
    assert conf["spark.sql.adaptive.enabled"] == "true"
    assert conf["spark.ui.enabled"] == "false"
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert conf["spark.jars"] == conf["spark.submit.pyFiles"] == str(JAR)
    assert "spark.jars.packages" not in conf


def test_without_jar_falls_back_to_packages(tmp_path: Path) -> None:
    conf = session_conf("local[4]", cores=4, tmp_dir=tmp_path, jar=None)
    assert conf["spark.jars.packages"] == GRAPHFRAMES_PACKAGE
    assert "spark.jars" not in conf
    assert "spark.ui.enabled" not in conf  # the UI stays on outside tests
    assert conf["spark.ui.showConsoleProgress"] == "false"  # ssblab draws its own bars
    offline = session_conf("local[4]", cores=4, tmp_dir=tmp_path, jar=None, use_packages=False)
    assert not any(key.startswith("spark.jars") for key in offline)


def test_remote_cluster_does_not_bind_driver_to_loopback(tmp_path: Path) -> None:
    conf = session_conf("spark://analysis-host:7077", cores=8, tmp_dir=tmp_path, jar=JAR)
    assert "spark.driver.host" not in conf
    loopback = session_conf("spark://127.0.0.1:7077", cores=8, tmp_dir=tmp_path, jar=JAR)
    assert loopback["spark.driver.host"] == "127.0.0.1"


def test_master_comes_from_argument_then_env_then_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert resolve_master(None, 3) == "local[3]"
    monkeypatch.setenv(MASTER_ENV, "spark://127.0.0.1:7077")
    assert resolve_master(None, 3) == "spark://127.0.0.1:7077"
    assert resolve_master("local[1]", 3) == "local[1]"


def test_import_does_not_load_pyspark() -> None:
    code = "import sys, ssblab.pipeline, ssblab.pipeline.session; print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# --- the shared session -----------------------------------------------------------------------------------


def test_session_starts_with_expected_settings(spark) -> None:
    conf = spark.sparkContext.getConf()
    assert spark.sparkContext.master == "local[2]"
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.jars", "").endswith(JAR_NAME)
    assert spark.sparkContext.getCheckpointDir() is not None
    root = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getRootLogger()
    assert root.getLevel().toString() == "ERROR"


def test_python_workers_run_this_interpreter(spark) -> None:
    import pandas as pd

    def executable(batches):  # runs in a Python worker; needs pyarrow there
        for _ in batches:
            yield pd.DataFrame({"exe": [sys.executable]})

    rows = spark.range(1).mapInPandas(executable, "exe string").collect()
    assert [r.exe for r in rows] == [sys.executable]


def _graph(spark):
    vertices = spark.createDataFrame([(v,) for v in VERTICES], ["id"])
    edges = spark.createDataFrame(EDGES, ["src", "dst"])
    return graphframe(vertices, edges)


def test_graphframes_is_loaded(spark) -> None:
    assert graphframes_problem(spark) is None


def test_connected_components(spark) -> None:
    rows = connected_components(_graph(spark)).collect()
    groups: dict[int, set[str]] = {}
    for row in rows:
        groups.setdefault(row.component, set()).add(row.id)
    assert sorted(map(sorted, groups.values())) == [["a", "b", "c"], ["d", "e"], ["f"]]
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"  # restored after the run


def expected_page_rank(reset: float, iterations: int) -> dict[str, float]:
    """GraphX static PageRank: r(v) = reset + (1 - reset) * sum(r(u) / outdeg(u)), then scaled to sum to N."""
    out_degree = {v: sum(1 for s, _ in EDGES if s == v) for v in VERTICES}
    ranks = dict.fromkeys(VERTICES, 1.0)
    for _ in range(iterations):
        ranks = {v: reset + (1 - reset) * sum(ranks[s] / out_degree[s] for s, d in EDGES if d == v)
                 for v in VERTICES}
    scale = len(VERTICES) / sum(ranks.values())
    return {v: r * scale for v, r in ranks.items()}


def test_page_rank(spark) -> None:
    ranks = _graph(spark).pageRank(resetProbability=0.15, maxIter=10).vertices.collect()
    got = {row.id: row.pagerank for row in ranks}
    assert got == pytest.approx(expected_page_rank(0.15, 10), abs=1e-6)
    assert got["c"] > got["b"] > got["a"] == pytest.approx(got["f"])


# --- the clear error when GraphFrames cannot be had ---------------------------------------------------------

OFFLINE_IVY = """<ivysettings>
  <settings defaultResolver="nowhere"/>
  <resolvers><filesystem name="nowhere"><artifact pattern="{root}/[artifact].[ext]"/></filesystem></resolvers>
</ivysettings>
"""

FALLBACK_SCRIPT = textwrap.dedent("""
    import json, sys
    from ssblab.pipeline.session import GraphFramesUnavailable, graphframe, spark_session
    spark = spark_session(for_tests=True, cores=1, extra_conf=json.loads(sys.argv[1]))
    frame = spark.createDataFrame([("a",)], ["id"])
    try:
        graphframe(frame, frame)
        error = None
    except GraphFramesUnavailable as exc:
        error = str(exc)
    conf = spark.sparkContext.getConf()
    print(json.dumps({"error": error, "packages": conf.get("spark.jars.packages", None)}))
""")


@pytest.mark.slow  # two JVM starts in a subprocess (the failed Ivy resolution, then the session): 10-40 s
def test_no_jar_and_no_maven_gives_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty-repo"
    empty.mkdir()
    (tmp_path / "ivy.xml").write_text(OFFLINE_IVY.format(root=empty))
    offline = {
        # Nothing Ivy may reach: no network resolver, an empty local repository, a fresh Ivy cache.
        "spark.jars.ivySettings": str(tmp_path / "ivy.xml"),
        "spark.jars.repositories": empty.as_uri(),
        "spark.jars.ivy": str(tmp_path / "ivy-home"),
    }
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), JAR_DIR_ENV: str(tmp_path / "no-jars")}
    done = subprocess.run([sys.executable, "-c", FALLBACK_SCRIPT, json.dumps(offline)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["packages"] is None  # the session started without the unresolvable package
    assert "GraphFrames is unavailable" in result["error"]
    assert "python -m ssblab.pipeline.graphframes_jar" in result["error"]
    assert str(tmp_path / "no-jars") in result["error"]
    assert f"could not resolve {GRAPHFRAMES_PACKAGE}" in done.stderr


def test_public_names_resolve() -> None:
    import ssblab.pipeline as pipeline
    from ssblab.pipeline import graphframes_jar, session

    for module in (pipeline, session, graphframes_jar):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], f"{module.__name__}.__all__ names undefined {missing}"
