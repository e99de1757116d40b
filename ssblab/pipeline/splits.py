"""Splits and raw records: the pipeline's leaf, which every step after the sources speaks.

The pipeline is a straight line, each step a module that imports only the steps before it:

    sources (`ssblab.pipeline.sources`) -> splits (here) -> facts -> verdicts -> tables

A *split* is one task's share of a source: a byte range cut at a record boundary (JSONL, log.offset), a range of a
store's local log, or a run of an archive's blocks. Cutting is the driver's only pass over the data (counting
newlines, hopping frame headers, reading Bundles); each task then reads its own split, in a Spark worker or in a
local process, so raw bytes never pass through the driver. A reader turns a split into `RawRecord`s.

Invariants: ``pos`` orders the records of a source as its reader yields them, and ``where`` names the place (``path:
line``, ``path@offset``, ``store#seq``, an archive's block and sequence) in every error; splits cover a source
exactly once; a split's fields are plain values, so it pickles and travels as a Spark row.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ssblab.core.schema import arrow_type

__all__ = [
    "BATCH_ROWS",
    "RAW_DDL",
    "SPLIT_BYTES",
    "SPLIT_DDL",
    "SPLIT_ROWS",
    "RawRecord",
    "Split",
    "arrow_batch",
    "arrow_schema",
    "splits_of",
]

SPLIT_BYTES = 16 * 2**20  # a task per 16 MiB of source keeps two cores busy and each task's memory small
SPLIT_ROWS = 25_000  # the same for a store or an archive, counted in messages
BATCH_ROWS = 8192  # rows per Arrow batch: large enough to amortise, small enough for memory
SPLIT_DDL = "kind string, path string, start long, end long, first long, prefix string, block string"
RAW_DDL = "pos long, `where` string, raw binary, received double, torn string"  # RawRecord, without decoded


@dataclass(frozen=True, slots=True)
class Split:
    """One task's share of a source: ``[start, end)`` in bytes (files), in local seq (stores) or in ``pos``
    (archives)."""

    kind: str  # the reader's kind (`ssblab.pipeline.sources.READERS`)
    path: str  # the file, the store folder, or an archive's blob folder
    start: int
    end: int
    first: int  # the line number of the first line (jsonl); unused otherwise
    prefix: str  # what `where` starts with
    block: str = ""  # archives: the blocks to read, as JSON


@dataclass(frozen=True, slots=True)
class RawRecord:
    pos: int
    where: str
    raw: bytes | None  # None for a record the source could not hold (a torn frame, an unreadable block)
    received: float | None = None  # a store's receive time; records carry their own
    torn: str | None = None  # why ``raw`` is None
    # (id, content JSON text) where the source decoded them already (archives): the content as signed, taken when
    # the record parses to the message with that id
    decoded: tuple[str, str] | None = None


def splits_of(batch: Any) -> Iterator[Split]:
    """The `Split`s in an Arrow record batch of split rows (`SPLIT_DDL`)."""
    for row in batch.to_pylist():
        yield Split(**row)


def arrow_schema(ddl: str) -> Any:
    """The ``pyarrow.Schema`` of a flat DDL string of ours (PySpark 3.5 has no ``StructType.fromDDL``), through
    the dataset's one type table (`ssblab.core.schema.ARROW_TYPES`)."""
    import pyarrow as pa

    fields = (part.replace("`", "").split() for part in ddl.split(", "))
    return pa.schema([pa.field(name, arrow_type(kind)) for name, kind in fields])


def arrow_batch(rows: Sequence[tuple[Any, ...]], schema: Any) -> Any:
    """Row tuples (in the schema's column order) as one Arrow record batch."""
    import pyarrow as pa

    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)],
                                      schema=schema)
