"""The feed browser's model: paging, type filter, verdicts (against the Parquet export), and the clique scenario."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ssblab.core.validate import validate_feed
from ssblab.dataset import open_dataset
from ssblab.generate import GeneratedNetwork, NetworkSpec, write_jsonl
from ssblab.widgets import FeedBrowser, GraphSnapshot, WidgetError
from ssblab.widgets.scenarios import clique_attack

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NETWORK = GeneratedNetwork(NetworkSpec(authors=8, messages=300, seed=4))


def tampered_values() -> list[dict]:
    """The network's values with one message's timestamp changed (its signature no longer matches)."""
    values = [dict(m.value) for m in NETWORK.messages()]
    values[40]["timestamp"] += 1
    return values


def test_paging_and_type_filter() -> None:
    browser = FeedBrowser.from_messages(NETWORK.messages(), page_size=7)
    top = browser.feeds()[0]
    assert browser.feed == top.feed and top.messages == max(s.messages for s in browser.feeds())
    rows = browser.page_rows()
    assert [r["sequence"] for r in rows] == list(range(1, 8)) and {r["author"] for r in rows} == {top.feed}
    assert browser.go(99).page == browser.page_count - 1 == (top.messages - 1) // 7
    assert browser.go(-5).page == 0
    kind, count = top.types[0]
    browser.go(1).filter_types([kind])
    assert browser.page == 0 and len(browser.selection()) == count
    assert {r["type"] for r in browser.page_rows()} == {kind}
    private = [s for s in browser.feeds() if dict(s.types).get("private")]
    assert private and browser.select(private[0].feed).filter_types(["private"]).page_rows()[0]["content"].startswith(
        '"')
    with pytest.raises(WidgetError, match="no messages by"):
        browser.select("@nobody")
    with pytest.raises(WidgetError, match="page_size"):
        FeedBrowser.from_messages(NETWORK.messages(), page_size=0)


def test_verdicts_come_from_the_core_validator() -> None:
    values = tampered_values()
    browser = FeedBrowser.from_messages(values, page_size=500)
    bad = values[40]
    summary = {s.feed: s for s in browser.feeds()}[bad["author"]]
    after = sum(1 for v in values if v["author"] == bad["author"] and v["sequence"] >= bad["sequence"])
    assert summary.invalid == after  # the feed stops at its first bad message
    rows = browser.select(bad["author"]).page_rows()
    first_bad = next(r for r in rows if not r["valid"])
    assert first_bad["sequence"] == bad["sequence"] and first_bad["error"] == "signature"
    assert "invalid: signature" in browser.go(0).page_html()


@pytest.mark.slow  # a Parquet export: about 10 s alone, a minute on a busy 2-core machine
def test_clique_attack_found_and_browsed_from_the_dataset(spark: SparkSession, tmp_path: Path) -> None:
    """One export serves two checks: the §8.6 clique is found, and the browser reads the table as the log."""
    from ssblab.pipeline.export import export_parquet

    victim, last = NETWORK.ids[0], max(m.timestamp for m in NETWORK.messages())
    friends = GraphSnapshot.from_messages(NETWORK.messages()).hops(victim, 1)
    bridge = min(feed for feed, value in friends.items() if value == 1)
    attack = clique_attack(NETWORK, bridge, start=last + 86_400_000, size=4, posts=5)
    log = [*NETWORK.messages(), *attack.messages]
    assert validate_feed([m.value for m in log]).ok
    assert all(m.timestamp >= attack.start for m in attack.messages)
    write_jsonl(log, tmp_path / "log.jsonl")
    export_parquet(spark, tmp_path / "log.jsonl", tmp_path / "data", progress=False)
    net = open_dataset(tmp_path / "data").graph()
    found = net.resource_attack_cliques(victim, since=attack.start)
    assert [c.feeds for c in found] == [tuple(sorted(attack.members))]
    assert found[0].density == 1.0 and found[0].messages == 4 * (1 + 3 + 5)
    spark_side, local = FeedBrowser.from_dataset(tmp_path / "data"), FeedBrowser.from_messages(log)
    assert spark_side.feeds() == local.feeds()
    columns = ["id", "sequence", "type", "valid"]
    assert spark_side.messages[columns].equals(local.messages[columns])
    with pytest.raises(WidgetError, match="at least 3"):
        clique_attack(NETWORK, bridge, start=0.0, size=2)
