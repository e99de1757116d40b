"""Facts: the per-message checks of one record (parse, id, shape, size, signature), as one row per record.

Strategy: every record of a split goes through the core's own functions (`parse_record`, `check_shape`,
`check_signature`) and becomes one row of *facts*: what the feed chain check needs (author, sequence, previous,
id) and the first per-message error, if any, with the stage that found it; with ``with_content``, also what the
``messages`` table keeps. No rule is decided here that needs another message; `ssblab.pipeline.verdicts` does that
per feed. Both engines run `split_facts` on their splits: Spark in its Python workers, the local engine in a pool
of processes.

Invariants: a record's facts depend on that record alone (tasks can run and retry in any order); an error is
stored as its rule code, detail and fatal flag, from which `fact_error` rebuilds an equal `InvalidMessage`;
``sequence_json`` keeps the sequence exactly as the message wrote it (``2.0`` stays ``2.0`` in error reports);
``finding`` is the strict JSON rule a valid text broke that JS accepts (`ssblab.core.validate.Finding`); a message
of a newer format (``format``: bendy butt, buttwoo) was verified alone by its source; a record that holds no
message (ssb-db2's deleted ones) has no facts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from ssblab.core.encoding import encode_compact
from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, check_shape, check_signature, type_column
from ssblab.core.native import NativeMessage
from ssblab.pipeline.sources import iter_split, received_of
from ssblab.pipeline.splits import BATCH_ROWS, RawRecord, Split

__all__ = ["CLASSIC", "FACTS_DDL", "FACT_FIELDS", "fact_error", "fact_row", "split_facts"]

FACTS_DDL = (
    "pos long, author string, id string, sequence long, sequence_json string, previous string, "
    "timestamp double, received double, stage string, code string, detail string, fatal boolean, "
    "format string, finding string, type string, content string, is_private boolean"
)
FACT_FIELDS = tuple(part.split()[0] for part in FACTS_DDL.split(", "))
CLASSIC = "classic"  # the feed format of every message the JSON readers parse (ssb-validate's)
_INT64 = 2**63


def fact_row(record: RawRecord, hmac_key: bytes | None, with_content: bool) -> tuple[Any, ...] | None:
    """The facts of one record, as a tuple in `FACT_FIELDS` order (None for a record that holds no message)."""
    received = received_of(record, hmac_key)
    if received.skipped is not None:
        return None
    if received.native is not None:
        return _native_row(record, received.native, received.received, with_content)
    if received.error is not None or received.message is None:
        error = received.error or InvalidMessage(Rule.JSON, f"no message at {record.where}")
        return _error_row(record.pos, "parse", error)
    msg = received.message
    stage, error = None, None
    try:
        check_shape(msg)
        stage = "signature"
        check_signature(msg, hmac_key)
        stage = None
    except InvalidMessage as exc:
        stage, error = stage or "shape", exc
    content = _content(msg, record, received.plain) if with_content else None
    return _message_row(record.pos, msg, received.received, stage, error, received.finding, content)


def _content(msg: Message, record: RawRecord, plain: bool | None) -> str:
    """The content as JSON text: as the source decoded it when the record is that message, else compact (a plain
    message has plain content: no second walk)."""
    if record.decoded is not None and record.decoded[0] == msg.id:
        return record.decoded[1]
    return encode_compact(msg.content, plain=plain).decode("utf-8", "surrogatepass")


def _error_row(pos: int, stage: str, error: InvalidMessage) -> tuple[Any, ...]:
    return (pos, None, None, None, None, None, None, None, stage, error.rule.value, error.detail, error.fatal,
            None, None, None, None, None)


def _message_row(pos: int, msg: Message, received: float | None, stage: str | None, error: InvalidMessage | None,
                 finding: str | None, content: str | None) -> tuple[Any, ...]:
    author = msg.author if isinstance(msg.author, str) else None
    seq, ts, previous, body = msg.sequence, msg.timestamp, msg.previous, msg.content
    return (
        pos, author, msg.id, _as_int64(seq), orjson.dumps(seq).decode(),
        previous if isinstance(previous, str) else None,
        float(ts) if type(ts) in (int, float) else None, received, stage,
        error.rule.value if error else None, error.detail if error else None, error.fatal if error else None,
        CLASSIC, finding, type_column(body), content, isinstance(body, str),
    )


def _native_row(record: RawRecord, msg: NativeMessage, received: float | None,
                with_content: bool) -> tuple[Any, ...]:
    """A message of a newer format, verified alone by its source: its chain fields, and its content as the JSON
    the source holds it in (ssb-db2's value)."""
    body = record.native.value.get("content")
    content = encode_compact(body).decode("utf-8", "surrogatepass") if with_content else None
    return (record.pos, msg.author, msg.id, msg.sequence, orjson.dumps(msg.sequence).decode(), msg.previous,
            float(msg.timestamp), received, None, None, None, None, msg.format, None,
            type_column(body), content, isinstance(body, str))


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


def split_facts(splits: Iterable[Split], hmac_key: bytes | None, with_content: bool,
                feeds: frozenset[str] | None = None) -> Iterator[list[tuple[Any, ...]]]:
    """Facts rows of the splits (of the records of ``feeds`` only, when given), in chunks of `BATCH_ROWS`."""
    rows: list[tuple[Any, ...]] = []
    for split in splits:
        for record in iter_split(split):
            if feeds is not None and not _in_feeds(record, feeds, hmac_key):
                continue
            row = fact_row(record, hmac_key, with_content)
            if row is not None:
                rows.append(row)
            if len(rows) >= BATCH_ROWS:
                yield rows
                rows = []
    if rows:
        yield rows


def _in_feeds(record: RawRecord, feeds: frozenset[str], hmac_key: bytes | None) -> bool:
    """Whether a record belongs to one of ``feeds`` (records outside any feed never do)."""
    received = received_of(record, hmac_key)
    msg = received.message or received.native
    return msg is not None and msg.value.get("author") in feeds
