"""Per-message checks in Spark's Python workers: parse, id, shape, size and signature, batched through Arrow.

Strategy: each task reads its split (`load.iter_split`), runs the core's own functions on every record
(`parse_record`, `check_shape`, `check_signature`) and emits one row of *facts* per record: what the feed chain
check needs (author, sequence, previous, id) and the first per-message error, if any, with the stage that found
it. No rule is decided here that needs another message; `chain` does that per feed.

Invariants: a record's facts depend on that record alone (tasks can run and retry in any order); an error is
stored as its rule code, detail and fatal flag, from which `fact_error` rebuilds an equal `InvalidMessage`;
``sequence_json`` keeps the sequence exactly as the message wrote it (``2.0`` stays ``2.0`` in error reports).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from ssblab.core.encoding import encode_compact
from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, check_shape, check_signature, hmac_key_bytes
from ssblab.pipeline.load import RawRecord, Split, _arrow_schema, iter_split, splits_of
from ssblab.store.sources import parse_record

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

FACTS_DDL = (
    "pos long, author string, id string, sequence long, sequence_json string, previous string, "
    "timestamp double, received double, stage string, code string, detail string, fatal boolean, "
    "type string, content string, is_private boolean"
)
FACT_FIELDS = tuple(part.split()[0] for part in FACTS_DDL.split(", "))
BATCH_ROWS = 8192  # rows per Arrow batch sent back to the JVM: large enough to amortise, small enough for memory
_INT64 = 2**63


def fact_row(record: RawRecord, hmac_key: bytes | None, with_content: bool) -> tuple[Any, ...]:
    """The facts of one record, as a tuple in `FACT_FIELDS` order."""
    if record.raw is None:
        return _error_row(record.pos, None, None, "parse", InvalidMessage(Rule.JSON, record.torn or "no data"))
    received = parse_record(record.raw, record.where)
    if received.error is not None:
        return _error_row(record.pos, None, None, "parse", received.error)
    msg = received.message
    assert msg is not None
    stamp = received.received if received.received is not None else record.received
    stage, error = None, None
    try:
        check_shape(msg)
        stage = "signature"
        check_signature(msg, hmac_key)
        stage = None
    except InvalidMessage as exc:
        stage, error = stage or "shape", exc
    return _message_row(record.pos, msg, stamp, stage, error, with_content)


def _error_row(pos: int, author: str | None, sequence: Any, stage: str, error: InvalidMessage) -> tuple[Any, ...]:
    seq_json = None if sequence is None else orjson.dumps(sequence).decode()
    return (pos, author, None, None, seq_json, None, None, None, stage, error.rule.value, error.detail, error.fatal,
            None, None, None)


def _message_row(pos: int, msg: Message, received: float | None, stage: str | None, error: InvalidMessage | None,
                 with_content: bool) -> tuple[Any, ...]:
    author = msg.author if isinstance(msg.author, str) else None
    seq, ts, previous, content = msg.sequence, msg.timestamp, msg.previous, msg.content
    kind = content.get("type") if isinstance(content, dict) else None
    return (
        pos, author, msg.id, _as_int64(seq), orjson.dumps(seq).decode(),
        previous if isinstance(previous, str) else None,
        float(ts) if type(ts) in (int, float) else None, received, stage,
        error.rule.value if error else None, error.detail if error else None, error.fatal if error else None,
        kind if isinstance(kind, str) else None,
        encode_compact(content).decode("utf-8", "surrogatepass") if with_content else None,
        isinstance(content, str),
    )


def _as_int64(value: Any) -> int | None:
    """The sequence as a long when it is an integral number (JSON has no NaN or infinity)."""
    if type(value) not in (int, float):
        return None
    as_int = int(value)
    return as_int if as_int == value and -_INT64 <= as_int < _INT64 else None


def fact_error(stage: str | None, code: str | None, detail: str | None, fatal: bool | None, author: str | None,
               sequence_json: str | None) -> InvalidMessage | None:
    """The `InvalidMessage` a facts row records (None when the message passed its per-message checks)."""
    if stage is None:
        return None
    sequence = None if sequence_json is None else orjson.loads(sequence_json)
    return InvalidMessage(Rule(code), detail or "", author=author, sequence=sequence, fatal=bool(fatal))


def split_facts(splits: list[Split], hmac_key: bytes | None, with_content: bool,
                feeds: frozenset[str] | None = None) -> Iterator[list[tuple[Any, ...]]]:
    """Facts rows of the splits (of the records of ``feeds`` only, when given), in chunks of `BATCH_ROWS` (pure
    Python: testable without Spark)."""
    rows: list[tuple[Any, ...]] = []
    for split in splits:
        for record in iter_split(split):
            if feeds is not None and not _in_feeds(record, feeds):
                continue
            rows.append(fact_row(record, hmac_key, with_content))
            if len(rows) >= BATCH_ROWS:
                yield rows
                rows = []
    if rows:
        yield rows


def _in_feeds(record: RawRecord, feeds: frozenset[str]) -> bool:
    """Whether a record belongs to one of ``feeds`` (records outside any feed never do)."""
    msg = None if record.raw is None else parse_record(record.raw, record.where).message
    return msg is not None and msg.value.get("author") in feeds


def message_facts(splits: DataFrame, *, hmac_key: Any = None, with_content: bool = False,
                  rows_done: Any = None, feeds: frozenset[str] | None = None) -> DataFrame:
    """A facts row per record of the splits (`load.splits_frame`), computed in the Python workers.

    ``rows_done``: an accumulator the workers add their record counts to (see `progress.job_progress`).
    ``feeds``: only the records of these authors (others are parsed, to learn their author, but not checked).
    """
    import pyarrow as pa

    key = hmac_key_bytes(hmac_key)
    schema = _arrow_schema(FACTS_DDL)

    def check(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for rows in split_facts(list(splits_of(batch)), key, with_content, feeds):
                if rows_done is not None:
                    rows_done.add(len(rows))
                columns = list(zip(*rows, strict=True))
                yield pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema,
                                                                                             strict=True)],
                                                 schema=schema)

    return splits.mapInArrow(check, FACTS_DDL)
