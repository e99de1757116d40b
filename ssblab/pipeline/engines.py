"""The two engines behind every analysis: local (DuckDB, Arrow, numpy, scipy) and Spark (with GraphFrames).

Every analysis takes an ``engine`` argument and resolves it here, at call time, by one rule:

- ``engine="local"`` (or a `LocalEngine`): this process and a pool of processes; no JVM;
- ``engine="spark"`` (or a `SparkEngine`, or a ``SparkSession`` passed as the engine): Spark, started on demand
  with `ssblab.pipeline.session.spark_session` (local mode, or ``master``);
- no engine: Spark when a session or a master is given (the argument, or ``$SSBLAB_SPARK_MASTER``), else local.

Both engines give the same answers; tests run each analysis on both and compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ssblab.core.errors import SsbError
from ssblab.pipeline.environment import master_from_environment

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["ENGINES", "Engine", "EngineError", "LocalEngine", "SparkEngine", "resolve_engine", "start_spark"]

ENGINES = ("local", "spark")


class EngineError(SsbError):
    """An engine that does not exist, or one this installation cannot run."""

    code = "engine"


@dataclass(frozen=True)
class LocalEngine:
    """DuckDB, Arrow, numpy and scipy in this process; ``workers`` processes for per-message work (None: one per
    core)."""

    workers: int | None = None
    name: Literal["local"] = "local"


@dataclass(frozen=True)
class SparkEngine:
    """A SparkSession (local mode or a cluster), with GraphFrames for the graph algorithms."""

    spark: SparkSession
    name: Literal["spark"] = "spark"


Engine = LocalEngine | SparkEngine


def _is_session(value: Any) -> bool:
    return type(value).__name__ == "SparkSession" and hasattr(value, "sparkContext")


def resolve_engine(engine: str | Engine | Any = None, *, spark: SparkSession | None = None,
                   master: str | None = None) -> Engine:
    """The engine an analysis runs on (the rule above).

    Raises:
        EngineError: an unknown engine name, or Spark asked for where pyspark is not installed.
    """
    if isinstance(engine, LocalEngine | SparkEngine):
        return engine
    if _is_session(engine):
        return SparkEngine(engine)
    if engine is None:
        engine = "spark" if spark is not None or master or master_from_environment() else "local"
    if engine == "local":
        if spark is not None or master:
            raise EngineError("engine 'local' takes no Spark session or master")
        return LocalEngine()
    if engine != "spark":
        raise EngineError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    return SparkEngine(spark if spark is not None else start_spark(master))


def start_spark(master: str | None = None, app_name: str = "ssblab") -> SparkSession:
    """The running SparkSession, or a new one (`ssblab.pipeline.session.spark_session`).

    Raises:
        EngineError: pyspark is not installed (the ``spark`` extra).
    """
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise EngineError(f"the Spark engine needs pyspark and Java: pip install 'ssblab[spark]' ({exc})") from exc
    from ssblab.pipeline.session import spark_session

    return spark_session(master, app_name=app_name)
