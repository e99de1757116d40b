"""`Tangles`: threads, tangles and causal order of a dataset, on either engine, with the same answers.

Strategy: a facade over the dataset's engine (`ssblab.graph.network.graph_engine`: DuckDB over Arrow locally,
Spark SQL over DataFrames). Relational questions are the shared queries of `ssblab.tangles.queries`; the
iterative ones (longest paths) run as each engine's own code over what those queries give: a topological pass
on numpy locally (`ssblab.tangles.local`), rounds of joins on Spark (`ssblab.tangles.spark`). Answers are plain
values, `Tangle`s, `CausalIndex`es or ``pyarrow.Table``s of fixed schemas sorted by their keys, so the two engines'
answers compare equal (tests/tangles run every method on both).

Only valid messages are present: a link to an invalid message dangles, like one to a message this replica never
had. The relations every question starts from (the valid messages, the links, the references) are made once, on
first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from ssblab.tangles import queries
from ssblab.tangles.causal import CausalIndex, CausalMessage, build_index
from ssblab.tangles.thread import Tangle, tangle_from_edges

if TYPE_CHECKING:
    from ssblab.graph.network import GraphEngine
    from ssblab.pipeline.engines import Engine

__all__ = ["Tables", "Tangles"]


class Tables(Protocol):
    """What `Tangles` reads: a dataset's tables as its engine's relations (`ssblab.dataset.Dataset` is one)."""

    engine: Engine

    def relation(self, name: str, columns: list[str] | None = None) -> Any: ...

# The columns of each answer (Spark's and DuckDB's own types differ: answers are cast to these).
SCHEMAS: dict[str, list[tuple[str, str]]] = {
    "links": [("tangle", "string"), ("root", "string"), ("id", "string"), ("parent", "string")],
    "heads": [("tangle", "string"), ("root", "string"), ("heads", "array<string>"), ("concurrent", "boolean")],
    "depths": [("tangle", "string"), ("root", "string"), ("id", "string"), ("depth", "bigint")],
    "references": [("id", "string"), ("ref", "string")],
    "causal_depths": [("id", "string"), ("author", "string"), ("sequence", "bigint"), ("depth", "bigint"),
                      ("complete", "boolean")],
}
KEYS = {"links": ["tangle", "root", "id", "parent"], "heads": ["tangle", "root"], "depths": ["tangle", "root", "id"],
        "references": ["id", "ref"], "causal_depths": ["author", "sequence", "id"]}


def _shaped(found: Any, answer: str) -> Any:
    """An answer with its `SCHEMAS` columns and types, sorted by its `KEYS`."""
    import pyarrow as pa

    from ssblab.core.schema import arrow_type

    schema = pa.schema([(name, arrow_type(kind)) for name, kind in SCHEMAS[answer]])
    table = pa.Table.from_arrays([found[f.name].cast(f.type) for f in schema], schema=schema)
    return table.sort_by([(key, "ascending") for key in KEYS[answer]])


class Tangles:
    """Threads, tangles and causal order of a dataset (``ssblab.open_dataset(path).tangles()``).

    Args:
        dataset: the dataset; its engine runs every question.

    Examples:
        >>> tangles = ssblab.open_dataset("out/parquet").tangles()  # doctest: +SKIP
        >>> tangles.heads().filter(pc.field("concurrent")).num_rows  # doctest: +SKIP
        23
    """

    def __init__(self, dataset: Tables) -> None:
        from ssblab.graph.network import graph_engine

        self.dataset = dataset
        self.engine: GraphEngine = graph_engine(dataset.engine)

    # The relations every question starts from.

    @cached_property
    def edges(self) -> Any:
        """The ``tangle_edges`` table (the engine's relation)."""
        return self.dataset.relation("tangle_edges", ["id", "author", "timestamp", "tangle", "root", "parent"])

    @cached_property
    def present(self) -> Any:
        """``id, author, sequence, timestamp, received`` of the valid messages (the engine's relation, cached)."""
        messages = self.dataset.relation("messages", ["id", "author", "sequence", "timestamp", "received", "valid"])
        return self.engine.cache(self.engine.query(queries.present_sql(), messages=messages))

    @cached_property
    def link_relation(self) -> Any:
        """``tangle, root, id, parent`` (`queries.links_sql`; the engine's relation, cached)."""
        return self.engine.cache(self.engine.query(queries.links_sql(), edges=self.edges))

    @cached_property
    def reference_relation(self) -> Any:
        """``id, ref``: what each present message names (`queries.reference_pairs_sql`; cached)."""
        content = self.dataset.relation("links", ["id", "target", "kind"])
        return self.engine.cache(self.engine.query(queries.reference_pairs_sql(), content_links=content,
                                                   links=self.link_relation, present=self.present))

    def _answer(self, sql: str, answer: str, **inputs: Any) -> Any:
        return _shaped(self.engine.collect(self.engine.query(sql, **inputs)), answer)

    # Tangles.

    def links(self) -> Any:
        """``tangle, root, id, parent``: one row per link, the root standing in for a null parent."""
        return _shaped(self.engine.collect(self.link_relation), "links")

    def heads(self) -> Any:
        """``tangle, root, heads, concurrent``: each tangle's members nothing links to (sorted), and whether
        there are two or more (replies nobody has answered together yet)."""
        return self._answer(queries.heads_sql(self.engine.dialect), "heads", links=self.link_relation)

    def depths(self) -> Any:
        """``tangle, root, id, depth``: each member's longest chain of links back to its tangle's root (0 for
        the root), over the members reachable from the root; a link to an absent message makes it a lower bound.

        Raises:
            CausalError: a cycle of links below a root (forged data).
        """
        if self.engine.name == "spark":
            from ssblab.tangles.spark import tangle_depths as spark_depths

            return _shaped(self.engine.collect(spark_depths(self.link_relation)), "depths")
        from ssblab.tangles.local import tangle_depths

        return _shaped(tangle_depths(self.link_relation), "depths")

    def dangling_links(self) -> Any:
        """``tangle, root, id, parent``: the links whose target (a parent or the root) is not present."""
        return self._answer(queries.dangling_links_sql(), "links", links=self.link_relation, present=self.present)

    def dangling_references(self) -> Any:
        """``id, ref``: references (content links and tangle links) of present messages to absent ones (reported,
        not guessed). A feed's missing predecessors are not listed here: `causal_depths` marks the messages after
        such a gap as not ``complete``."""
        return self._answer(queries.dangling_references_sql(), "references", pairs=self.reference_relation,
                            present=self.present)

    # Causal order over the whole dataset.

    def causal_depths(self) -> Any:
        """``id, author, sequence, depth, complete``: the Lamport depth of every present message.

        ``depth`` is the length of the longest chain of references (``previous`` included) from the message back
        to one that references nothing present: 0 for a feed's first message without references. ``complete`` is
        False when the ancestry reaches a missing message (a dangling reference, or a gap in a feed): the depth
        is then a lower bound over what is present.

        Raises:
            CausalError: a reference cycle (forged data).
        """
        dangling = self.engine.query(queries.dangling_references_sql(), pairs=self.reference_relation,
                                     present=self.present)
        positions = self.engine.query(queries.positions_sql(), present=self.present, dangling=dangling)
        references = self.engine.query(queries.present_references_sql(), pairs=self.reference_relation,
                                       present=self.present)
        if self.engine.name == "spark":
            from ssblab.tangles.spark import causal_depths as spark_depths

            return _shaped(self.engine.collect(spark_depths(positions, references)), "causal_depths")
        from ssblab.tangles.local import causal_depths

        return _shaped(causal_depths(positions, references), "causal_depths")

    def causal_index(self, **options: int) -> CausalIndex:
        """A `CausalIndex` of every present message (happened-before in microseconds), fed in claimed-time order.

        ``options`` go to `ssblab.tangles.causal.build_index` (``every``, ``window``).
        """
        # Claimed time is nearly a causal order: it keeps references close, which the builder's window relies on.
        found = self.engine.collect(self.engine.query(queries.references_sql(self.engine.dialect),
                                                      present=self.present, pairs=self.reference_relation))
        ordered = found.sort_by([("timestamp", "ascending"), ("author", "ascending"), ("sequence", "ascending")])
        return build_index(_causal_messages(ordered), **options)

    def thread(self, root: str, name: str = "thread") -> Tangle:
        """The tangle ``name`` (``thread``: root and branch) of ``root``, with its present members' authors and
        receive times.

        Raises:
            GraphError: ``root`` or ``name`` holds a quote or a backslash (no message id does).
        """
        return self._tangles(name, root)[root]

    def threads(self, name: str = "thread") -> dict[str, Tangle]:
        """Every tangle called ``name`` (``thread``: root and branch), by root (what `thread` gives for each)."""
        return self._tangles(name, None)

    def _tangles(self, name: str, root: str | None) -> dict[str, Tangle]:
        rows = self.engine.collect(self.engine.query(queries.thread_edges_sql(name, root), edges=self.edges))
        order = [("root", "ascending"), ("timestamp", "ascending"), ("id", "ascending"), ("parent", "ascending")]
        by_root: dict[str, list[dict[str, Any]]] = {} if root is None else {root: []}
        for row in rows.sort_by([(*key, "at_start") for key in order]).to_pylist():
            by_root.setdefault(row["root"], []).append(row)
        held = self.engine.collect(self.engine.query(queries.thread_messages_sql(name, root), edges=self.edges,
                                                     present=self.present)).to_pylist()
        messages = {m["id"]: m for m in held}
        received = {i: m["received"] for i, m in messages.items() if m["received"] is not None}
        return {r: tangle_from_edges(found, r, name=name, received=received,
                                     root_timestamp=messages[r]["timestamp"] if r in messages else None,
                                     authors={r: messages[r]["author"]} if r in messages else None)
                for r, found in by_root.items()}


def _causal_messages(rows: Any) -> Iterator[CausalMessage]:
    for batch in rows.to_batches(max_chunksize=65_536):
        columns: Sequence[list[Any]] = [batch.column(c).to_pylist() for c in ("id", "author", "sequence", "refs")]
        for message_id, author, sequence, refs in zip(*columns, strict=True):
            yield CausalMessage(message_id, author, int(sequence), tuple(refs or ()))
