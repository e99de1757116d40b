"""The one-pass route of `verify_spark` without Spark: each split replayed alone, then stitched by the driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssblab.core.validate import FeedState, ForkFound, ValidationReport
from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline.facts import FACT_FIELDS, split_facts
from ssblab.pipeline.sources import iter_split, plan_splits
from ssblab.pipeline.verdicts import Fact, ForkRow, replay_feed, replay_split, stitch
from ssblab.pipeline.verify import fork_evidence, verify_path
from tests.pipeline.faults import write_fault_log

SMALL_SPLITS = 30_000  # bytes: many splits, so feeds and faults straddle task boundaries


@pytest.fixture(scope="module")
def fault_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fault_log(tmp_path_factory.mktemp("faults") / "faults.jsonl")


def stitched_report(path: Path, split_bytes: int) -> tuple[ValidationReport, set[str]]:
    """`verify_spark`'s steps in plain Python; broken feeds are decided by `replay_feed`, as `verdicts` does."""
    splits = plan_splits(path, split_bytes=split_bytes)
    report, positions, forks, broken = stitch(replay_split(iter_split(s), None) for s in splits)
    feeds: dict[str, list[Fact]] = {}
    for chunk in split_facts(splits, None, False, frozenset(broken)):
        for row in chunk:
            r = dict(zip(FACT_FIELDS, row, strict=True))
            feeds.setdefault(r["author"], []).append(Fact(*(r[name] for name in Fact.__slots__)))
    errors = list(zip(positions, report.errors, strict=True))
    for facts in feeds.values():
        report.checked += len(facts)
        for fact, verdict, error in replay_feed(facts):
            report.valid += verdict == "valid"
            if verdict == "valid":
                report.heads[fact.author] = FeedState(fact.author, int(fact.sequence_json), fact.id, fact.timestamp)
            report.duplicates += verdict == "duplicate"
            if error is not None:
                errors.append((fact.pos, error))
            if isinstance(error, ForkFound):
                forks.append(ForkRow(fact.pos, error.fork.author, error.fork.sequence, error.fork.known_id))
    report.errors[:] = [e for _, e in sorted(errors, key=lambda pair: pair[0])]
    report.forks.extend(fork_evidence(path, sorted(forks)))
    return report, broken


def test_stitched_report_equals_verify_path_on_faulty_data(fault_log: Path) -> None:
    single = verify_path(fault_log)
    got, broken = stitched_report(fault_log, SMALL_SPLITS)
    assert broken, "the fault log must break some presumptions, or the fallback goes untested"
    assert got.to_json() == single.to_json()
    assert got.duplicates == single.duplicates and got.heads == single.heads
    assert [(f.author, f.sequence, f.known_id, f.conflicting.id) for f in got.forks] == \
        [(f.author, f.sequence, f.known_id, f.conflicting.id) for f in single.forks]


def test_one_split_breaks_only_feeds_that_start_wrong(fault_log: Path) -> None:
    """In one split, a presumption fails only for a feed whose first record is no valid first message."""
    single = verify_path(fault_log)
    got, broken = stitched_report(fault_log, 2**30)
    assert got.to_json() == single.to_json() and got.heads == single.heads
    assert broken and broken <= {e.author for e in single.errors if e.code in ("first-message", "fork", "feed-stopped")}


def test_clean_feeds_need_no_second_pass(tmp_path: Path) -> None:
    path = tmp_path / "net.jsonl"
    write_jsonl(generate_network(12, 600, 3), path)
    splits = plan_splits(path, split_bytes=20_000)
    assert len(splits) > 5
    report, positions, forks, broken = stitch(replay_split(iter_split(s), None) for s in splits)
    single = verify_path(path)
    assert not broken and not positions and not forks and single.ok
    assert report.to_json() == single.to_json() and report.heads == single.heads
