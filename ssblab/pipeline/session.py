"""The one place where ssblab starts a SparkSession, and the GraphFrames entry point.

Strategy: every analysis takes a SparkSession as an argument (transforms stay pure ``DataFrame -> DataFrame``).
This module is the boundary that creates one. :func:`session_conf` is a pure function from the choices
(master, cores, JAR, tests or not) to a ``{key: value}`` dict, so the settings are testable without a JVM;
:func:`spark_session` applies them and does the side effects (environment, temp dirs, log level).

Invariants:
- pyspark is imported only inside functions, so ``import ssblab.pipeline`` works without the ``spark`` extra;
- local mode by default (``local[N]``, N = cores); a cluster when a master URL is given, as the argument or in
  ``$SSBLAB_SPARK_MASTER``;
- GraphFrames comes from the cached JAR (:mod:`ssblab.pipeline.graphframes_jar`) when present, else from
  ``spark.jars.packages`` (needs Maven access); when neither works the session still starts, and
  :func:`graphframe` raises :class:`GraphFramesUnavailable` with the fix instead of a JVM stack trace;
- adaptive execution is on, except while :func:`connected_components` runs: GraphFrames 0.8's own
  connectedComponents is slow and can be wrong under it, so call the helper, not the method;
- a second call in the same process returns the already running session (Spark allows one SparkContext per
  process); its JVM-level settings are those of the first call.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ssblab.pipeline.environment import MASTER_ENV, master_from_environment
from ssblab.pipeline.graphframes_jar import cached_jar, jar_dir

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "GRAPHFRAMES_PACKAGE",
    "MASTER_ENV",
    "GraphFramesUnavailable",
    "connected_components",
    "graphframe",
    "graphframes_problem",
    "resolve_master",
    "session_conf",
    "spark_session",
]

log = logging.getLogger(__name__)

# The usual Maven coordinates for PySpark 3.5 (Scala 2.12); only reachable where Maven/spark-packages are.
GRAPHFRAMES_PACKAGE = "graphframes:graphframes:0.8.3-spark3.5-s_2.12"
SPARK_PACKAGES_REPO = "https://repos.spark-packages.org/"
GRAPHFRAMES_JVM_CLASS = "org.graphframes.GraphFramePythonAPI"
FIX_HINT = (
    "run `make test` (or `python -m ssblab.pipeline.graphframes_jar`) to cache the GraphFrames JAR in "
    "{jar_dir}, then start a new Python process (Spark reads spark.jars only when its JVM starts)"
)
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class GraphFramesUnavailable(RuntimeError):
    """GraphFrames is not loaded in this Spark session (no cached JAR and no Maven access)."""


def resolve_master(master: str | None, cores: int) -> str:
    """The master URL: the argument, else ``$SSBLAB_SPARK_MASTER``, else ``local[cores]``."""
    return master or master_from_environment() or f"local[{cores}]"


def _is_loopback(master: str) -> bool:
    """True for local mode and for a cluster whose master listens on this machine's loopback."""
    if master.startswith("local"):
        return True
    host = urlparse(master).hostname or ""
    return host in _LOOPBACK_HOSTS or host.startswith("127.")


def _engine_conf(master: str, cores: int, tmp_dir: Path) -> dict[str, str]:
    """Settings for every session: sized to the machine, adaptive, nothing written into the working dir."""
    conf = {
        # Spark's default of 200 shuffle partitions made a five-vertex connectedComponents take over 100 s on
        # 2 cores: one partition per core keeps small analyses fast; AQE coalesces or splits from there.
        "spark.sql.shuffle.partitions": str(cores),
        # RDD operations (GraphFrames uses some) default to the same parallelism as the SQL side.
        "spark.default.parallelism": str(cores),
        # Adaptive execution re-plans joins and partition counts from runtime sizes (default on since 3.2;
        # set so the choice is explicit and survives a site spark-defaults.conf).
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
        # SSB timestamps are epoch milliseconds; showing them in UTC makes results identical on every machine.
        "spark.sql.session.timeZone": "UTC",
        # Arrow makes toPandas/createDataFrame(pandas) columnar instead of row-by-row pickling.
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # saveAsTable never writes a spark-warehouse/ folder into the current directory (the repository).
        "spark.sql.warehouse.dir": str(tmp_dir / "warehouse"),
        # Spark's stage bar would interleave with ssblab's own bars (`ssblab.pipeline.progress`), which also
        # reach notebooks, where the JVM's stderr does not.
        "spark.ui.showConsoleProgress": "false",
    }
    if _is_loopback(master):
        # Local and loopback-cluster runs need no network: binding the driver to loopback avoids hostname
        # lookups that fail in sandboxes and keeps all traffic on this machine.
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    return conf


@contextlib.contextmanager
def _workers_run_this_python() -> Iterator[None]:
    """Make the SparkContext about to start give its Python workers this interpreter, which has pyarrow and
    pandas (Spark would otherwise start ``python3`` from PATH, and mapInPandas fails with "No module named
    pyarrow"); a ``$PYSPARK_PYTHON`` the user set wins.

    PySpark reads the variable once, as the context starts; it is restored afterwards so that processes this one
    starts later (another Python, a notebook kernel) do not inherit this interpreter as theirs.
    """
    if os.environ.get("PYSPARK_PYTHON"):
        yield
        return
    os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        yield
    finally:
        os.environ.pop("PYSPARK_PYTHON", None)


def _graphframes_conf(jar: Path | None, use_packages: bool) -> dict[str, str]:
    """How the GraphFrames JVM classes and Python wrapper reach the driver and executors."""
    if jar is not None:
        return {
            # The JVM side: Spark puts spark.jars on the driver classpath and ships it to executors.
            "spark.jars": str(jar),
            # The Python side: the JAR also holds the matching `graphframes` package; pyFiles puts it on the
            # driver's sys.path (the SparkContext inserts it ahead of site-packages, so it wins over any
            # pip-installed `graphframes`) and the Python workers'.
            "spark.submit.pyFiles": str(jar),
        }
    if use_packages:
        return {
            # Fallback where Maven is reachable: Ivy resolves the package when the JVM starts, and
            # spark-submit adds the resolved JAR to pyFiles itself.
            "spark.jars.packages": GRAPHFRAMES_PACKAGE,
            "spark.jars.repositories": SPARK_PACKAGES_REPO,
        }
    return {}


def _test_conf() -> dict[str, str]:
    """Settings for the test suite's shared session."""
    return {
        # No web UI: nothing binds port 4040+, start-up is faster and parallel test runs cannot collide.
        "spark.ui.enabled": "false",
    }


def session_conf(
    master: str,
    *,
    cores: int,
    tmp_dir: Path,
    jar: Path | None,
    use_packages: bool = True,
    for_tests: bool = False,
    log_config: Path | None = None,
) -> dict[str, str]:
    """All Spark settings of a session, as a pure function of the choices (no JVM needed).

    Args:
        master: resolved master URL (see :func:`resolve_master`).
        cores: cores the session should plan for; sets shuffle partitions and default parallelism.
        tmp_dir: per-session temp directory (holds the SQL warehouse).
        jar: the verified cached GraphFrames JAR, or None.
        use_packages: when ``jar`` is None, whether to fall back to ``spark.jars.packages``.
        for_tests: add the test-suite settings (UI off).
        log_config: a log4j2 properties file for the driver JVM, or None for Spark's default.

    Returns:
        ``{spark config key: value}``.
    """
    conf = _engine_conf(master, cores, tmp_dir)
    conf.update(_graphframes_conf(jar, use_packages))
    if for_tests:
        conf.update(_test_conf())
    if log_config is not None:
        # Read by the driver JVM as it starts, before any SparkContext exists: quiets start-up messages too.
        conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={log_config.as_uri()}"
    return conf


LOG4J2_TEMPLATE = """\
# Written by ssblab.pipeline.session: Spark's own defaults log INFO, which drowns notebook and test output.
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
# Hadoop's native libraries are optional; the warning about their absence is noise.
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
# "Your hostname resolves to a loopback address": local sessions bind the driver to loopback on purpose.
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
"""


def _write_log_config(tmp_dir: Path, level: str) -> Path:
    """A log4j2 file for the driver JVM, so even the start-up messages obey ``level``."""
    path = tmp_dir / "log4j2.properties"
    path.write_text(LOG4J2_TEMPLATE.format(level=level))
    return path


def _new_tmp_dir() -> Path:
    """A per-session directory under the system temp dir, removed when the process exits."""
    path = Path(tempfile.mkdtemp(prefix="ssblab-spark-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _start(master: str, app_name: str, conf: Mapping[str, str]) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _start_with_fallback(master: str, app_name: str, conf: Mapping[str, str]) -> SparkSession:
    """Start the session; if Ivy cannot resolve the GraphFrames package, start without it."""
    from pyspark.errors import PySparkRuntimeError

    try:
        return _start(master, app_name, conf)
    except PySparkRuntimeError as exc:
        # spark-submit exits before the JVM gateway opens when our package cannot be resolved (no Maven
        # access); anything else, including packages the caller asked for, is not ours to hide.
        if conf.get("spark.jars.packages") != GRAPHFRAMES_PACKAGE or exc.getErrorClass() != "JAVA_GATEWAY_EXITED":
            raise
    log.warning("could not resolve %s (no Maven access?); GraphFrames is unavailable: %s",
                GRAPHFRAMES_PACKAGE, FIX_HINT.format(jar_dir=jar_dir()))
    retry = {k: v for k, v in conf.items() if k not in ("spark.jars.packages", "spark.jars.repositories")}
    return _start(master, app_name, retry)


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "ssblab",
    for_tests: bool = False,
    cores: int | None = None,
    checkpoint_dir: str | None = None,
    extra_conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Start (or return the running) SparkSession configured for ssblab.

    Args:
        master: Spark master URL, e.g. ``spark://host:7077``; default ``$SSBLAB_SPARK_MASTER`` or local mode.
        app_name: name shown in the Spark UI and the cluster's application list.
        for_tests: test-suite settings (UI off, ERROR log level).
        cores: cores to plan for (default: this machine's count); sizes ``local[N]`` and shuffle partitions.
        checkpoint_dir: where connectedComponents checkpoints; default a temp dir removed at exit. On a
            multi-machine cluster pass a path every executor can reach (e.g. ``hdfs://...``).
        extra_conf: more Spark settings; they override ours.

    Returns:
        The active SparkSession. A session that is already running is returned as it is: one process has one
        SparkContext, and a library call (the CLI run in-process, a notebook helper) must not reconfigure it.
    """
    from pyspark.sql import SparkSession

    running = SparkSession.getActiveSession()
    if running is not None:
        return running
    cores = max(1, cores or os.cpu_count() or 1)
    resolved = resolve_master(master, cores)
    tmp_dir = _new_tmp_dir()
    jar = cached_jar()
    # Spark's INFO chatter drowns notebook output; tests want only errors.
    level = "ERROR" if for_tests else "WARN"
    conf = session_conf(resolved, cores=cores, tmp_dir=tmp_dir, jar=jar, for_tests=for_tests,
                        log_config=_write_log_config(tmp_dir, level.lower()))
    conf.update(extra_conf or {})
    with _workers_run_this_python():
        spark = _start_with_fallback(resolved, app_name, conf)
    # Stop the session before the scratch folder goes (exit handlers run last-registered first): otherwise the
    # JVM's own shutdown finds its block-manager folder half removed and prints "Failed to delete" traces.
    atexit.register(spark.stop)
    spark.sparkContext.setLogLevel(level)
    # connectedComponents refuses to run without a checkpoint directory.
    spark.sparkContext.setCheckpointDir(checkpoint_dir or str(tmp_dir / "checkpoints"))
    return spark


def graphframes_problem(spark: SparkSession) -> str | None:
    """Why GraphFrames cannot run in ``spark``, or None when both its halves are loaded."""
    from py4j.java_gateway import JavaClass  # type: ignore[import-untyped]

    if importlib.util.find_spec("graphframes") is None:
        return "the Python package `graphframes` is not importable (the cached JAR carries it)"
    jvm: Any = spark.sparkContext._jvm
    found = jvm
    for part in GRAPHFRAMES_JVM_CLASS.split("."):
        found = getattr(found, part)
    if not isinstance(found, JavaClass):
        return f"the JVM class {GRAPHFRAMES_JVM_CLASS} is not on the driver classpath"
    return None


def graphframe(vertices: DataFrame, edges: DataFrame) -> Any:
    """A ``graphframes.GraphFrame`` over ``vertices`` (column ``id``) and ``edges`` (``src``, ``dst``).

    Raises:
        GraphFramesUnavailable: GraphFrames is not loaded in the session; the message says how to fix it.
    """
    problem = graphframes_problem(vertices.sparkSession)
    if problem is not None:
        hint = FIX_HINT.format(jar_dir=jar_dir())
        raise GraphFramesUnavailable(f"GraphFrames is unavailable: {problem}; {hint}")
    from graphframes import GraphFrame  # type: ignore[import-not-found]  # ships inside the JAR, untyped

    # The 0.8 wrapper builds DataFrames the pre-3.4 way, and PySpark warns on each of its calls: noise that
    # users cannot act on.
    for internal in ("DataFrame constructor is internal", "DataFrame.sql_ctx is an internal property"):
        warnings.filterwarnings("ignore", message=internal, category=UserWarning)
    return GraphFrame(vertices, edges)


@contextlib.contextmanager
def sql_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Apply runtime SQL settings for the duration of a block, then restore the previous values."""
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def connected_components(
    graph: Any, *, algorithm: str = "graphframes", checkpoint_interval: int = 2
) -> DataFrame:
    """Connected components of a GraphFrame (columns of its vertices plus ``component``), computed safely.

    GraphFrames 0.8.x iterates DataFrame joins; with adaptive execution on, those loops are known to return
    wrong components (graphframes issues #428, #453, fixed only in later releases) and here grew plans until
    the driver ran out of memory. So adaptive execution is off while the iterations run, and the result is
    cached and counted inside that window. ``algorithm="graphx"`` is faster on small graphs.
    """
    with sql_conf(graph.vertices.sparkSession, {"spark.sql.adaptive.enabled": "false"}):
        found: DataFrame = graph.connectedComponents(algorithm=algorithm, checkpointInterval=checkpoint_interval)
        result = found.cache()
        result.count()
    return result
