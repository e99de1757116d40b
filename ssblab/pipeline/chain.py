"""Per-feed chain checks in Spark: sequence contiguity, previous links, first messages, duplicates and forks.

Strategy: a feed's verdicts depend only on its own messages in log order, so the facts are grouped by author,
sorted by ``pos`` and replayed through the core's reducer `validate_next` (``check_sig=False``: the workers
already checked each signature, and the stored outcome is raised exactly where `validate_next` would have checked
it). The bookkeeping around the reducer is `FeedValidator.push`'s: a feed stops at its first fatal error and
later messages get ``feed-stopped``; an out-of-order sequence rejects only itself; a copy of the head is a
duplicate. Records without a usable author (unparseable, or an author that is not a non-empty string) never
join a feed in `FeedValidator` either: each is a group of its own, whose verdict is its per-message error.

Invariant: for every record, ``verdict``, ``code`` and ``detail`` equal what `FeedValidator` decides on the same
records in the same order (tests/pipeline/test_verify.py checks it on data with every kind of fault).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message
from ssblab.core.validate import Duplicate, FeedState, ForkFound, validate_next
from ssblab.pipeline.checks import BATCH_ROWS, FACTS_DDL, fact_error
from ssblab.pipeline.load import _arrow_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

VERDICTS_DDL = (
    "pos long, author string, id string, sequence long, sequence_json string, timestamp double, "
    "verdict string, code string, detail string, fatal boolean, known string"
)
VALID, DUPLICATE, INVALID = "valid", "duplicate", "invalid"
# Shape already passed for a message that reaches the reducer, so any well-formed signature stands in for it.
_STAND_IN_SIGNATURE = "A" * 86 + "==.sig.ed25519"
_STAND_IN_CONTENT = {"type": "stand-in"}


@dataclass(frozen=True, slots=True)
class Fact:
    """What the chain check reads of a facts row."""

    pos: int
    author: str | None
    id: str | None
    sequence_json: str | None
    previous: str | None
    timestamp: float | None
    stage: str | None
    code: str | None
    detail: str | None
    fatal: bool | None


def _stand_in(fact: Fact) -> Message:
    """A message with the fact's chain fields; the reducer reads nothing else once shape has passed."""
    value = {"previous": fact.previous, "author": fact.author, "sequence": orjson.loads(fact.sequence_json or "0"),
             "timestamp": fact.timestamp, "hash": "sha256", "content": _STAND_IN_CONTENT,
             "signature": _STAND_IN_SIGNATURE}
    return Message(value, b"", fact.id or "")


def _next_head(head: FeedState | None, fact: Fact) -> FeedState:
    """`validate_next` with the per-message outcome replayed where the reducer would check it."""
    error = fact_error(fact.stage, fact.code, fact.detail, fact.fatal, fact.author, fact.sequence_json)
    if error is not None and fact.stage != "signature":
        raise error  # shape comes first in validate_next
    try:
        new_head = validate_next(head, _stand_in(fact), check_sig=False)
    except ForkFound:
        if error is not None:
            raise error from None  # an unsigned claim proves no fork: the signature check comes first
        raise
    if error is not None:
        raise error
    return new_head


def replay_feed(facts: Iterable[Fact]) -> Iterator[tuple[Fact, str, InvalidMessage | None]]:
    """Verdicts of one feed's records in log order: ``(fact, verdict, error)``."""
    head: FeedState | None = None
    stopped: InvalidMessage | None = None
    for fact in facts:
        try:
            if stopped is not None:
                raise InvalidMessage(Rule.FEED_STOPPED, f"the feed stopped at sequence {stopped.sequence}: "
                                     f"{stopped.rule.value}", author=fact.author,
                                     sequence=None if fact.sequence_json is None else orjson.loads(fact.sequence_json))
            head = _next_head(head, fact)
        except Duplicate:
            yield fact, DUPLICATE, None
        except InvalidMessage as exc:
            if exc.fatal and stopped is None:
                stopped = exc
            yield fact, INVALID, exc
        else:
            yield fact, VALID, None


def _verdict_batches(batches: Iterator[Any], carry: tuple[str, ...], schema: Any) -> Iterator[Any]:
    """Replay facts rows that arrive sorted by (feed, pos), one feed after another, into verdict batches."""
    rows = (row for batch in batches for row in batch.to_pylist())
    out: list[tuple[Any, ...]] = []
    for _, group in itertools.groupby(rows, key=lambda r: r["feed"]):
        feed = list(group)
        facts = (Fact(*(r[name] for name in Fact.__slots__)) for r in feed)
        for r, (_, verdict, error) in zip(feed, replay_feed(facts), strict=True):
            known = error.fork.known_id if isinstance(error, ForkFound) else None
            out.append((r["pos"], r["author"], r["id"], r["sequence"], r["sequence_json"], r["timestamp"], verdict,
                        error and error.code, error and error.detail, error and error.fatal, known,
                        *(r[name] for name in carry)))
        if len(out) >= BATCH_ROWS:
            yield _to_batch(out, schema)
            out = []
    if out:
        yield _to_batch(out, schema)


def _to_batch(rows: list[tuple[Any, ...]], schema: Any) -> Any:
    import pyarrow as pa

    columns = zip(*rows, strict=True)
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)],
                                      schema=schema)


def verdicts(facts: DataFrame, carry: tuple[str, ...] = ()) -> DataFrame:
    """A verdict row per facts row: valid, duplicate or invalid with the rule (``code``), its message and fork
    evidence (``known``: the id the feed holds where the conflicting message claims a place). The facts columns
    named in ``carry`` are passed through (the export carries the content this way, not by a join).

    Each feed's rows are brought together by a hash shuffle and sorted by position inside the partition, then
    replayed in plain Python over Arrow batches (pandas groups cost more per message than the replay itself).
    """
    from pyspark.sql import functions as F

    types = dict(part.split() for part in FACTS_DDL.split(", "))
    ddl = VERDICTS_DDL + "".join(f", {name} {types[name]}" for name in carry)
    schema = _arrow_schema(ddl)

    def replay(batches: Iterator[Any]) -> Iterator[Any]:
        return _verdict_batches(batches, carry, schema)

    # A record outside any feed is a group of its own, keyed by its position.
    in_feed = F.col("author").isNotNull() & (F.col("author") != "")
    feed = F.when(in_feed, F.col("author")).otherwise(F.concat(F.lit("\0"), F.col("pos").cast("string")))
    keyed = facts.withColumn("feed", feed)
    return keyed.repartition("feed").sortWithinPartitions("feed", "pos").mapInArrow(replay, ddl)
