"""The shared Spark fixture: one local SparkSession for the whole test run.

Starting a JVM costs seconds, and Spark allows one SparkContext per process, so every test that needs Spark
shares the session-scoped ``spark`` fixture. Tests that use it are marked ``spark`` automatically, so the pure
suite runs alone with ``-m "not spark"``. The root conftest imports this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Two cores is what CI has; fixing it keeps partition counts (and so test timings) the same everywhere.
TEST_CORES = 2


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: tests that use the shared SparkSession (set automatically)")
    # The GraphFrames 0.8 Python wrapper builds DataFrames the pre-3.4 way; PySpark warns on every call.
    config.addinivalue_line("filterwarnings", "ignore:DataFrame constructor is internal:UserWarning")
    config.addinivalue_line("filterwarnings", "ignore:DataFrame.sql_ctx is an internal property:UserWarning")
    # PySpark 3.5's own pandas/pyarrow version checks still use distutils' LooseVersion.
    config.addinivalue_line("filterwarnings", "ignore:distutils Version classes are deprecated:DeprecationWarning")
    # PySpark 3.5's pandas conversions call APIs that pandas 3 deprecates (harmless, but one warning per call).
    config.addinivalue_line("filterwarnings", "ignore:is_categorical_dtype is deprecated")
    config.addinivalue_line("filterwarnings", "ignore:The copy keyword is deprecated")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """The shared local SparkSession (UI off, ERROR logs, 2 cores, GraphFrames JAR when it can be had)."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'ssblab[spark]'")
    from ssblab.pipeline.graphframes_jar import JarFetchError, ensure_jar
    from ssblab.pipeline.session import spark_session

    # `make test` fetched it already; this makes a bare `pytest` work too. Offline, the GraphFrames tests
    # then fail with GraphFramesUnavailable, which says how to fix it.
    with contextlib.suppress(JarFetchError):
        ensure_jar()
    session = spark_session(for_tests=True, cores=TEST_CORES)
    yield session
    session.stop()
