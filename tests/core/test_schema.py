"""The dataset schema converts to Spark and Arrow schemas with the same columns, types and nullability."""

from __future__ import annotations

import pytest

from ssblab.core.schema import TABLES, arrow_schema, ddl
from ssblab.pipeline.spark import spark_schema


@pytest.mark.parametrize("table", sorted(TABLES))
def test_engine_schemas_agree(table: str) -> None:
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    spark, arrow = spark_schema(table), arrow_schema(table)
    assert spark.fieldNames() == arrow.names == [c.name for c in TABLES[table]]
    assert [f.nullable for f in spark.fields] == [f.nullable for f in arrow] == [c.nullable for c in TABLES[table]]
    assert [f.dataType.simpleString() for f in spark.fields] == [c.type for c in TABLES[table]]
    assert ddl(table).count("NOT NULL") == sum(not c.nullable for c in TABLES[table])
