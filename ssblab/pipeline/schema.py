"""The dataset schema lives in `ssblab.core.schema` (the archive decoder shares it); re-exported for the pipeline."""

from ssblab.core.schema import TABLES, Column, arrow_schema, ddl, spark_schema

__all__ = ["TABLES", "Column", "arrow_schema", "ddl", "spark_schema"]
