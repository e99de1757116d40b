"""Every graph test runs on every engine: local (DuckDB, scipy), Spark with the graph collected to the driver, and
Spark with the graph kept in Spark blocks (GraphFrames' components, paths, triangles and motifs)."""

from __future__ import annotations

from typing import Any

import pytest

from ssblab.graph.local import LocalGraphEngine


@pytest.fixture(params=["local", pytest.param("spark", marks=pytest.mark.spark),
                        pytest.param("spark-blocks", marks=[pytest.mark.spark, pytest.mark.slow])])
def engine(request: pytest.FixtureRequest) -> Any:
    """A graph engine (`ssblab.graph.graph_engine`): the answers must not depend on which."""
    if request.param == "local":
        return LocalGraphEngine()
    from ssblab.graph.spark import LOCAL_EDGES, SparkGraphEngine

    spark = request.getfixturevalue("spark")
    return SparkGraphEngine(spark, local_limit=0 if request.param == "spark-blocks" else LOCAL_EDGES)
