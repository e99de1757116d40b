"""The report's threads section from the `Tangles` facade: its numbers against the pure thread functions, and the
same section on both engines."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ssblab.dataset import open_dataset
from ssblab.generate import generate_network
from ssblab.graph.labels import short_id
from ssblab.report.analyses import tangles_section
from ssblab.tangles.thread import heads, lamport_depths, tangle_from_edges
from tests.tangles.tables import message_rows, write_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """A generated network whose most replied-to thread root is missing from ``messages``."""
    messages = list(generate_network(12, 300, 2))
    rows = message_rows(messages)
    dropped = Counter(r["root"] for r in rows["tangle_edges"] if r["tangle"] == "thread").most_common(1)[0][0]
    stamps = {m.id: m.value["timestamp"] for m in messages}
    rows["messages"] = [r for r in rows["messages"] if r["id"] != dropped]
    return write_dataset(tmp_path_factory.mktemp("report"), rows), {"rows": rows, "stamps": stamps}, dropped


def test_the_section_counts_what_the_threads_hold(dataset: tuple[Path, dict[str, Any], str]) -> None:
    path, data, dropped = dataset
    rows = [r for r in data["rows"]["tangle_edges"] if r["tangle"] == "thread"]
    threads = {root: tangle_from_edges(rows, root, root_timestamp=data["stamps"][root]) for root in
               {r["root"] for r in rows}}
    section = tangles_section(open_dataset(path).tangles())
    facts = dict(section.facts)
    assert facts["threads"] == len(threads)
    assert facts["threads with concurrent heads"] == sum(len(heads(t)) > 1 for t in threads.values())
    links = {(r["root"], r["id"], r["parent"] or r["root"]) for r in rows}
    assert facts["links to messages not in the dataset"] == sum(parent == dropped for _, _, parent in links) > 0
    deepest = sorted(((max(lamport_depths(t).values()), len(t.timestamps), root) for root, t in threads.items()),
                     key=lambda d: (-d[0], -d[1], d[2]))[:5]
    authors = {r["id"]: r["author"] for r in data["rows"]["messages"]}
    assert section.tables[0].rows == [(short_id(authors[root]) if root in authors else "(not in the dataset)",
                                       short_id(root), size, depth) for depth, size, root in deepest]
    assert any(row[0] == "(not in the dataset)" for row in section.tables[0].rows)


@pytest.mark.slow  # the thread depths on Spark: a round of joins per level
def test_the_section_is_the_same_on_spark(dataset: tuple[Path, dict[str, Any], str], spark: Any) -> None:
    path, _, _ = dataset
    assert tangles_section(open_dataset(path, spark=spark).tangles()) == tangles_section(open_dataset(path).tangles())
