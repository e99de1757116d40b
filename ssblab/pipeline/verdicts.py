"""Verdicts: the per-feed chain checks (sequence contiguity, previous links, first messages, duplicates, forks).

Strategy: a feed's verdicts depend only on its own messages in log order, so the facts are grouped by author,
sorted by ``pos`` and replayed through the core's reducer `validate_next` (``check_sig=False``: the facts step
already checked each signature, and its outcome is raised exactly where `validate_next` would have checked it).
The bookkeeping around the reducer is `FeedValidator.push`'s: a feed stops at its first fatal error and later
messages get ``feed-stopped``; an out-of-order sequence rejects only itself; a copy of the head is a duplicate.
Records without a usable author (unparseable, or an author that is not a non-empty string) never join a feed in
`FeedValidator` either: each is a group of its own (`feed_key`), whose verdict is its per-message error.

`verdict_rows` is that replay over facts rows sorted by (feed, pos): the Spark engine runs it after a shuffle, the
local engine after a sort. The one-pass route (`replay_split`, `stitch`) avoids the grouping where the data allows
it; see the comment above `FeedRun`. Everything here is pure Python.

Invariant: for every record, ``verdict``, ``code`` and ``detail`` equal what `FeedValidator` decides on the same
records in the same order (tests/pipeline/test_verify.py checks it on data with every kind of fault, and
tests/pipeline/test_verify_stitch.py the one-pass route).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from ssblab.core.errors import InvalidMessage, Rule
from ssblab.core.message import Message, check_shape
from ssblab.core.validate import Duplicate, FeedState, FeedValidator, ForkFound, ValidationReport, validate_next
from ssblab.pipeline.facts import FACTS_DDL, fact_error
from ssblab.pipeline.sources import received_of
from ssblab.pipeline.splits import RawRecord

__all__ = [
    "DUPLICATE",
    "INVALID",
    "VALID",
    "VERDICTS_DDL",
    "Fact",
    "FeedRun",
    "ForkRow",
    "InvalidMessageFields",
    "SplitRun",
    "decide_feeds",
    "feed_key",
    "merge_exact",
    "received_message",
    "replay_feed",
    "replay_split",
    "stitch",
    "verdict_rows",
    "verdicts_ddl",
]

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


def feed_key(author: str | None, pos: int) -> str:
    """What groups a record's facts: its author, or for a record outside any feed a key of its own."""
    return author if author else f"\0{pos}"


def verdicts_ddl(carry: tuple[str, ...] = ()) -> str:
    """The DDL of verdict rows with the facts columns in ``carry`` appended."""
    types = dict(part.split() for part in FACTS_DDL.split(", "))
    return VERDICTS_DDL + "".join(f", {name} {types[name]}" for name in carry)


def verdict_rows(rows: Iterable[dict[str, Any]], carry: tuple[str, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Replay facts rows that arrive sorted by (`feed_key`, pos), one feed after another, into verdict rows
    (`verdicts_ddl` order): the verdict, the rule (``code``), its message and fork evidence (``known``: the id the
    feed holds where the conflicting message claims a place), then the ``carry`` columns passed through."""
    for _, group in itertools.groupby(rows, key=lambda r: feed_key(r["author"], r["pos"])):
        feed = list(group)
        facts = (Fact(*(r[name] for name in Fact.__slots__)) for r in feed)
        for r, (_, verdict, error) in zip(feed, replay_feed(facts), strict=True):
            known = error.fork.known_id if isinstance(error, ForkFound) else None
            yield (r["pos"], r["author"], r["id"], r["sequence"], r["sequence_json"], r["timestamp"], verdict,
                   error and error.code, error and error.detail, error and error.fatal, known,
                   *(r[name] for name in carry))


# The one-pass route (`ssblab.pipeline.verify`, on either engine): each task replays its own split through
# `FeedValidator`, entering every feed in the state that its first record in the split presumes (the common case:
# the head it follows);
# the driver then walks each feed's runs in split order and checks every presumption against the state the
# earlier splits really left. Where all presumptions hold, the task's verdicts are the single-process ones
# (each record's verdict depends only on its feed's state before it, which then is the true one). A feed with
# one wrong presumption (a fork or gap across a split boundary, a feed stopped in an earlier split) is
# re-decided whole by `verdict_rows`; records outside any feed never depend on a state.

@dataclass(frozen=True, slots=True)
class FeedRun:
    """One feed's records in one split: the entering state presumed, and what the replay left."""

    author: str
    entry: tuple[Any, ...]  # ("any",): any head, not stopped; ("none",): no head; ("head", sequence, id)
    head: FeedState | None  # the head after the split's last valid message of the feed (None: no valid one)
    stopped: bool  # the feed stopped inside this split
    counts: tuple[int, int, int]  # checked, valid, duplicates


@dataclass(frozen=True, slots=True)
class SplitRun:
    """What a task sends back: per-feed runs, the counts of records outside any feed, errors and forks."""

    runs: list[FeedRun]
    loose: tuple[int, int, int]
    errors: list[tuple[int, str | None, InvalidMessageFields]]  # (pos, feed, error)
    forks: list[ForkRow]


class InvalidMessageFields(NamedTuple):
    """An `InvalidMessage` as plain data (exceptions with keyword arguments do not pickle)."""

    code: str
    detail: str
    author: str | None
    sequence: Any
    fatal: bool

    def error(self) -> InvalidMessage:
        return InvalidMessage(Rule(self.code), self.detail, author=self.author, sequence=self.sequence,
                              fatal=self.fatal)


class ForkRow(NamedTuple):
    """Where a fork verdict is, as `verify.fork_evidence` reads it."""

    pos: int
    author: str
    sequence: int
    known: str


def _presume(validator: FeedValidator, msg: Message, feed: str) -> tuple[Any, ...]:
    """Enter ``feed`` in the state its first record in the split follows from; return that presumption."""
    try:
        check_shape(msg)
    except InvalidMessage:
        return ("any",)  # shape is checked before any state is read
    value = msg.value
    seq = int(value["sequence"])
    if seq == 1 and value["previous"] is None:
        return ("none",)
    validator.report.heads[feed] = FeedState(feed, seq - 1, value["previous"], 0.0)
    return ("head", seq - 1, value["previous"])


def replay_split(records: Iterable[RawRecord], hmac_key: bytes | None) -> SplitRun:
    """Parse, check and replay one split's records in log order (a Spark task, or anywhere)."""
    validator = FeedValidator(hmac_key)
    report = validator.report
    entries: dict[str, tuple[Any, ...]] = {}
    counts: dict[str | None, list[int]] = {None: [0, 0, 0]}
    errors: list[tuple[int, str | None, InvalidMessageFields]] = []
    forks: list[ForkRow] = []
    for record in records:
        valid, duplicates, n_errors = report.valid, report.duplicates, len(report.errors)
        feed = _push(validator, record, entries)
        tally = counts.setdefault(feed, [0, 0, 0])
        tally[0] += 1
        if report.valid > valid:
            tally[1] += 1
        elif report.duplicates > duplicates:
            tally[2] += 1
        elif len(report.errors) > n_errors:
            error = report.errors[-1]
            errors.append((record.pos, feed, InvalidMessageFields(error.code, error.detail, error.author,
                                                                  error.sequence, error.fatal)))
            if isinstance(error, ForkFound):
                forks.append(ForkRow(record.pos, error.fork.author, error.fork.sequence, error.fork.known_id))
    runs = [FeedRun(feed, entry, report.heads.get(feed) if counts[feed][1] else None, feed in validator.stopped,
                    tuple(counts[feed]))  # type: ignore[arg-type]
            for feed, entry in entries.items()]
    return SplitRun(runs, tuple(counts[None]), errors, forks)  # type: ignore[arg-type]


def _push(validator: FeedValidator, record: RawRecord, entries: dict[str, tuple[Any, ...]]) -> str | None:
    """`verify_path`'s step for one record; returns its feed (None: outside any feed, as `FeedValidator` keys)."""
    msg = received_message(validator, record)
    if msg is None:
        return None
    author = msg.value.get("author")
    feed = author if type(author) is str and author else None
    if feed is not None and feed not in entries:
        entries[feed] = _presume(validator, msg, feed)
    validator.push(msg)
    return feed


def received_message(validator: FeedValidator, record: RawRecord) -> Message | None:
    """The record's message, or None after rejecting it (torn, or not a message) as `verify_path` does."""
    received = received_of(record)
    if received.message is None:
        validator.reject(received.error or InvalidMessage(Rule.JSON, f"no message at {record.where}"))
    return received.message


def _presumption_holds(entry: tuple[Any, ...], head: FeedState | None, stopped: bool) -> bool:
    if stopped:
        return False
    if entry[0] == "any":
        return True
    if entry[0] == "none":
        return head is None
    return head is not None and head.sequence == entry[1] and head.id == entry[2]


def stitch(split_runs: Iterable[SplitRun]) -> tuple[ValidationReport, list[int], list[ForkRow], set[str]]:
    """Join the splits' runs (in split order) into one report; feeds whose presumptions failed are left out.

    Returns:
        (report without the broken feeds, the log positions of its errors, its fork rows, the broken feeds).
    """
    split_runs = list(split_runs)
    heads: dict[str, FeedState] = {}
    stopped: set[str] = set()
    broken: set[str] = set()
    for split in split_runs:
        for run in split.runs:
            if run.author in broken:
                continue
            if not _presumption_holds(run.entry, heads.get(run.author), run.author in stopped):
                broken.add(run.author)
                continue
            if run.head is not None:
                heads[run.author] = run.head
            if run.stopped:
                stopped.add(run.author)
    report = ValidationReport(heads={a: h for a, h in heads.items() if a not in broken})
    for split in split_runs:
        tallies = [split.loose, *(run.counts for run in split.runs if run.author not in broken)]
        report.checked += sum(t[0] for t in tallies)
        report.valid += sum(t[1] for t in tallies)
        report.duplicates += sum(t[2] for t in tallies)
    kept = sorted((pos, fields) for split in split_runs for pos, feed, fields in split.errors if feed not in broken)
    report.errors.extend(fields.error() for _, fields in kept)
    forks = sorted(row for split in split_runs for row in split.forks if row.author not in broken)
    return report, [pos for pos, _ in kept], forks, broken


def decide_feeds(records: Iterable[RawRecord], feeds: frozenset[str],
                 hmac_key: bytes | None) -> tuple[ValidationReport, list[int], list[ForkRow]]:
    """The records of ``feeds`` decided whole, in log order, by one `FeedValidator` (the feeds `stitch` could not
    join): the report, the log position of each error, and the fork rows."""
    validator = FeedValidator(hmac_key)
    report = validator.report
    positions: list[int] = []
    forks: list[ForkRow] = []
    for record in records:
        msg = received_of(record).message
        if msg is None or msg.value.get("author") not in feeds:
            continue
        errors = len(report.errors)
        validator.push(msg)
        if len(report.errors) > errors:
            error = report.errors[-1]
            positions.append(record.pos)
            if isinstance(error, ForkFound):
                forks.append(ForkRow(record.pos, error.fork.author, error.fork.sequence, error.fork.known_id))
    return report, positions, forks


def merge_exact(report: ValidationReport, positions: list[int], forks: list[ForkRow],
                exact: tuple[ValidationReport, list[int], list[ForkRow]]) -> None:
    """Add feeds decided whole (`decide_feeds`, or Spark's shuffle route) to a stitched report, keeping its errors
    and fork rows in log order."""
    found, found_positions, found_forks = exact
    report.checked += found.checked
    report.valid += found.valid
    report.duplicates += found.duplicates
    report.heads.update(found.heads)
    merged = sorted(zip(positions + found_positions, report.errors + found.errors, strict=True),
                    key=lambda pair: pair[0])
    report.errors[:] = [error for _, error in merged]
    positions[:] = [pos for pos, _ in merged]
    forks.extend(found_forks)
    forks.sort()
