"""The local engine's pipeline: the same steps as Spark's, in this process and a pool of processes, into Arrow.

Strategy: the source is cut into more splits than there are cores; a pool of worker processes computes the facts
of each split (`facts.split_facts`: the parse and the signature check, the expensive part) and, while each
message is at hand, the rows it would give the six content tables (its content parsed once for all six), and
sends both back as Arrow IPC. This process then decides the verdicts (`verdicts_table`: clean chains in one
DuckDB query, the other feeds replayed by `verdicts.verdict_rows`), keeps the content rows of valid messages,
runs the table queries of `ssblab.pipeline.tables` in DuckDB, and adds the timestamp columns with
`ssblab.core.schema.arrow_timestamps`. Nothing here needs a JVM.

Invariants: the tables equal the Spark engine's row for row (tests/pipeline/test_export.py); the pool is
`ssblab.pipeline.pool`'s (a small source is done in this process alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ssblab.core.schema import TABLES, arrow_schema, arrow_timestamps
from ssblab.pipeline import tables as catalog
from ssblab.pipeline.facts import FACT_FIELDS, FACTS_DDL, split_facts
from ssblab.pipeline.pool import cores, is_parallel, local_splits, pool_map, worker_pool
from ssblab.pipeline.sources import plan_splits
from ssblab.pipeline.splits import Split, arrow_batch
from ssblab.pipeline.splits import arrow_schema as ddl_schema
from ssblab.pipeline.verdicts import VALID, verdict_rows, verdicts_ddl

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["FACTS", "build_tables", "messages_table", "sorted_table", "split_tables", "valid_positions",
           "valid_rows", "verdicts_table"]

T = TypeVar("T")
FACTS = "facts"  # the facts table among `split_tables`' answers


def _split_tables(split: Split, hmac_key: bytes | None, with_content: bool) -> dict[str, bytes]:
    """One split's facts and, with content, the content-table rows of its records that may be valid messages
    (`tables.derivable`; each row with the record's ``pos``, by which `build_tables` keeps those of valid ones), as
    Arrow IPC streams: a worker's answer, one buffer per table and no pickled rows."""
    schema = ddl_schema(FACTS_DDL)
    facts = []
    derived: dict[str, list[tuple[Any, ...]]] = {name: [] for name in catalog.DERIVED} if with_content else {}
    for rows in split_facts([split], hmac_key, with_content):
        facts.append(arrow_batch(rows, schema))
        for row in rows if with_content else ():
            fact = dict(zip(FACT_FIELDS, row, strict=True))
            if catalog.derivable(fact):
                for table, found in catalog.derive_message(fact):
                    derived[table].append((fact["pos"], *found))
    answer = {FACTS: _ipc(schema, facts)}
    for name, rows in derived.items():
        schema = _positioned(name)
        answer[name] = _ipc(schema, [arrow_batch(rows, schema)])
    return answer


def _positioned(table: str) -> Any:
    """A content table's columns before its timestamps, after the ``pos`` of the record each row came from."""
    import pyarrow as pa

    return pa.schema([pa.field("pos", pa.int64()), *(f.with_nullable(True) for f in arrow_schema(table)
                                                    if f.name in catalog.base_columns(table))])


def _ipc(schema: Any, batches: list[Any]) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _read_ipc(data: bytes) -> Any:
    import pyarrow as pa

    return pa.ipc.open_stream(data).read_all()


def split_tables(splits: Sequence[Split], *, hmac_key: bytes | None, with_content: bool, pool: Executor | None,
                 on_split: Callable[[int], None] | None = None) -> dict[str, Any]:
    """`FACTS` (every split's facts, in ``pos`` order) and, with content, the content tables' rows of every
    record that may be a valid message, each after its ``pos`` (`_split_tables`)."""
    import pyarrow as pa

    parts: dict[str, list[Any]] = {FACTS: [], **({name: [] for name in catalog.DERIVED} if with_content else {})}
    answers = pool_map(pool, _SplitTables(hmac_key, with_content), splits)
    if pool is not None:
        _load_next()  # while the workers check signatures
    for answer in answers:
        for name, data in answer.items():
            parts[name].append(_read_ipc(data))
        if on_split:
            on_split(parts[FACTS][-1].num_rows)
    empty = {FACTS: ddl_schema(FACTS_DDL), **{name: _positioned(name) for name in parts if name != FACTS}}
    return {name: pa.concat_tables(found) if found else empty[name].empty_table() for name, found in parts.items()}


class _SplitTables:
    """`_split_tables` with its options bound (picklable, unlike a closure)."""

    def __init__(self, hmac_key: bytes | None, with_content: bool) -> None:
        self.hmac_key, self.with_content = hmac_key, with_content

    def __call__(self, split: Split) -> dict[str, bytes]:
        return _split_tables(split, self.hmac_key, self.with_content)


def verdicts_table(facts: Any, carry: tuple[str, ...] = (), strict: bool = False) -> Any:
    """Verdict rows (`verdicts.verdicts_ddl`) of a facts table: each feed's facts replayed in ``pos`` order
    (``strict``: a message that breaks a strict JSON rule JS accepts is invalid).

    A feed whose facts form a clean chain is valid throughout, which one query decides for all such feeds at
    once (`_CLEAN_CHAINS`: usually nearly every feed); only the others are replayed in Python, record by record.
    The query reads the chain columns only and orders row numbers, so the wide columns (the content) are copied
    once, by one ``take``: the clean feeds' rows first, then the others, each feed in ``pos`` order.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    in_feed = pc.and_(pc.is_valid(facts["author"]), pc.not_equal(facts["author"], ""))
    loose = pc.binary_join_element_wise("\0", pc.cast(facts["pos"], pa.string()), "")
    chain = facts.select(["pos", "author", "id", "sequence", "previous", "stage", "format", "finding"])
    chain = chain.append_column("feed", pc.if_else(pc.fill_null(in_feed, False), facts["author"], loose))
    chain = chain.append_column("row", pa.array(np.arange(len(facts), dtype=np.int64)))
    order = run_sql(_CLEAN_CHAINS.replace("{finding}", "finding IS NULL" if strict else "true"), facts=chain)
    ordered = facts.take(order["row"])
    del facts, chain  # the caller's facts, once it holds no other reference, are freed here
    clean = int(pc.sum(order["clean"]).as_py() or 0)
    schema = ddl_schema(verdicts_ddl(carry))
    valid = ordered.slice(0, clean)
    valid = valid.append_column("verdict", pa.repeat(pa.scalar(VALID), clean))  # no code, detail, …: nulls
    parts = [pa.Table.from_arrays([valid[f.name] if f.name in valid.column_names else pa.nulls(clean, f.type)
                                   for f in schema], schema=schema)]
    rows = (row for batch in ordered.slice(clean).to_batches(max_chunksize=8192) for row in batch.to_pylist())
    parts += [pa.Table.from_batches([arrow_batch(chunk, schema)])
              for chunk in _chunks(verdict_rows(rows, carry, strict), 8192)]
    return pa.concat_tables(parts)


# A clean chain: every record of the feed passed its own checks and is classic (no finding, when strict), the
# sequences are 1, 2, … in log order and each previous is the id before it (null first) — what `validate_next`
# accepts without a word. Row numbers come out with the clean feeds' first, each feed in (feed, pos) order, as
# `verdict_rows` needs the others.
_CLEAN_CHAINS = """
SELECT row, clean FROM (
  SELECT row, feed, pos, bool_and(coalesce(stage IS NULL AND format = 'classic' AND author IS NOT NULL
                                           AND author <> '' AND sequence = rank
                                           AND previous IS NOT DISTINCT FROM before AND {finding}, false))
                         OVER (PARTITION BY feed) AS clean
  FROM (SELECT *, row_number() OVER chain AS rank, lag(id) OVER chain AS before FROM {facts}
        WINDOW chain AS (PARTITION BY feed ORDER BY pos)))
ORDER BY clean DESC, feed, pos
"""


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def with_timestamps(table: str, base: Any) -> Any:
    """``base`` (the table's `base_columns`) with its ``*_at`` columns added, in the schema's order and types."""
    schema = arrow_schema(table)
    columns = []
    for field in schema:
        if field.name in catalog.TIMESTAMPS:
            columns.append(arrow_timestamps(base[catalog.TIMESTAMPS[field.name]]))
        else:
            columns.append(base[field.name].cast(field.type))
    import pyarrow as pa

    return pa.Table.from_arrays(columns, schema=schema)


def run_sql(query: str, *, con: Any = None, **relations: Any) -> Any:
    """A `tables` query over Arrow tables, in DuckDB: on ``con`` (one connection for a build's queries: opening
    one costs about 20 ms), or on a connection of its own."""
    import duckdb

    if con is None:
        with duckdb.connect() as own:
            return run_sql(query, con=own, **relations)
    for name, relation in relations.items():
        con.register(name, relation)
    try:
        return con.sql(query.format(**{name: name for name in relations})).to_arrow_table()
    finally:
        for name in relations:
            con.unregister(name)


def messages_table(verdicts: Any) -> Any:
    return with_timestamps("messages", run_sql(catalog.messages_sql(), verdicts=verdicts))


def valid_positions(verdicts: Any) -> Any:
    """The ``pos`` of every valid message (an Arrow array)."""
    import pyarrow.compute as pc

    narrow = verdicts.select(["pos", "verdict"])
    return narrow.filter(pc.equal(narrow["verdict"], VALID))["pos"].combine_chunks()


def valid_rows(table: Any, positions: Any) -> Any:
    """The rows of a content table (`split_tables`) whose record is at one of ``positions``, without ``pos``."""
    import pyarrow.compute as pc

    return table.filter(pc.is_in(table["pos"], value_set=positions)).drop_columns(["pos"])


def blobs_table(links: Any, sizes: Any, con: Any = None) -> Any:
    found = run_sql(catalog.blobs_sql(), con=con, links=links, sizes=sizes)
    return with_timestamps("blobs", found.rename_columns(["blob", "size", "references", "first_referenced"]))


def follows_table(contacts: Any, con: Any = None) -> Any:
    return with_timestamps("follows", run_sql(catalog.follows_sql(catalog.DUCKDB), con=con, contacts=contacts))


def names_table(abouts: Any, con: Any = None) -> Any:
    return with_timestamps("names", run_sql(catalog.names_sql(), con=con, abouts=abouts))


def blob_sizes(held: Sequence[tuple[str, int | None]]) -> Any:
    """``blob, size`` of the blobs a source holds, as an Arrow table."""
    import pyarrow as pa

    return pa.table({"blob": pa.array([b for b, _ in held], pa.string()),
                     "size": pa.array([s for _, s in held], pa.int64())})


def build_tables(source: str | Path, *, hmac_key: bytes | None = None, strict: bool = False,
                 workers: int | None = None, held: Sequence[tuple[str, int | None]] = (),
                 split_bytes: int | None = None,
                 on_records: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Every table of a dataset of ``source``, verified, as Arrow tables (what ``export --engine local`` writes).

    Args:
        source: anything `ssblab.pipeline.sources.resolve_source` reads.
        hmac_key: a test network's HMAC key (bytes).
        strict: a message that breaks a strict JSON rule JS accepts is invalid.
        workers: processes for the per-message work (default: the cores; 1: this process only).
        held: ``(blob, size)`` of the blobs the source holds (`ssblab.pipeline.sources.held_blobs`).
        split_bytes: cut the source into splits of this size and check them in the pool whatever its size.
        on_records: called with the number of records of each split as it is checked.
    """
    workers = workers or cores()
    parallel = split_bytes is not None or is_parallel(source, workers)
    if split_bytes is not None:
        splits = plan_splits(source, split_bytes=split_bytes)
    else:
        splits = local_splits(source, workers) if parallel else plan_splits(source)
    if parallel:
        import pyarrow  # noqa: F401 (before the fork: the workers inherit it)
    with worker_pool(workers if parallel else 1) as pool:
        found = split_tables(splits, hmac_key=hmac_key, with_content=True, pool=pool, on_split=on_records)
    verdicts = verdicts_table(found.pop(FACTS), catalog.CARRY, strict)
    valid = valid_positions(verdicts)
    found = {name: with_timestamps(name, valid_rows(rows, valid)) for name, rows in found.items()}
    found["messages"] = messages_table(verdicts)  # on a connection of its own: closing it frees what DuckDB holds
    del verdicts
    import duckdb

    with duckdb.connect() as con:  # one for the small queries
        found["blobs"] = blobs_table(found["links"], blob_sizes(held), con)
        found["follows"] = follows_table(found["contacts"], con)
        found["names"] = names_table(found["abouts"], con)
    return {name: found[name] for name in TABLES}


def _load_next() -> None:
    """Load what this process needs once the facts are in: DuckDB, and the pandas that pyarrow imports on its first
    conversion of a Python list (together about 0.35 s), while the pool's workers (which never load pandas,
    `ssblab.pipeline.pool`) check signatures."""
    import duckdb  # noqa: F401
    import pyarrow as pa

    pa.array([], pa.int64())


def sorted_table(table: str, data: Any) -> Any:
    """A table in its `tables.LAYOUT` order (nulls first, as Spark sorts)."""
    return data.sort_by([(key, "ascending", "at_start") for key in catalog.LAYOUT[table][1]])
