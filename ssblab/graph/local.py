"""The local engine of the graph analyses: Arrow tables, DuckDB for the queries, numpy and scipy for the rest.

Relations are ``pyarrow.Table``s; a query registers its inputs with a fresh in-memory DuckDB connection and
returns an Arrow table. The packed graph is always here (`ssblab.graph.packed.pack_arrays`). Nothing starts a JVM.
"""

from __future__ import annotations

from typing import Any

from ssblab.graph.packed import PackedGraph, pack_arrays
from ssblab.pipeline.tables import DUCKDB, Dialect

__all__ = ["LocalGraphEngine"]


class LocalGraphEngine:
    """DuckDB over Arrow tables."""

    name = "local"
    dialect: Dialect = DUCKDB

    def query(self, sql: str, **inputs: Any) -> Any:
        """Run one of `ssblab.graph.queries` (its ``{placeholders}`` bound to ``inputs``) into an Arrow table."""
        import duckdb

        with duckdb.connect() as con:
            for name, relation in inputs.items():
                con.register(name, relation)
            return con.sql(sql.format(**{name: name for name in inputs})).to_arrow_table()

    def collect(self, relation: Any) -> Any:
        return relation

    def from_arrow(self, table: Any) -> Any:
        return table

    def cache(self, relation: Any) -> Any:
        return relation

    def pack(self, edges: Any, feeds: Any) -> PackedGraph:
        """The edges (``src, dst, weight``) packed here, with every feed of ``feeds`` (``id``) numbered."""
        return pack_arrays(edges["src"].to_numpy(zero_copy_only=False), edges["dst"].to_numpy(zero_copy_only=False),
                           edges["weight"].to_numpy(zero_copy_only=False), feeds["id"].to_numpy(zero_copy_only=False))
