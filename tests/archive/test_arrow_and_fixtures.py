"""Arrow decoding against the messages themselves, and exact rebuild of JS ``ssb-fixtures`` datasets."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from ssblab.archive.arrow import MESSAGES_SCHEMA, id_texts, to_arrow
from ssblab.archive.bundle import build_archives
from ssblab.archive.verify import verify_fetched
from ssblab.core.message import Message
from ssblab.core.schema import arrow_schema
from ssblab.pipeline.sources import read_source
from tests.jsref import SSB_FIXTURES_BIN, node_available, ssb_fixtures


def test_schema_is_the_pipeline_messages_table() -> None:
    assert arrow_schema("messages") == MESSAGES_SCHEMA


def test_arrow_table_equals_the_messages(feeds: list[list[Message]]) -> None:
    archives, dicts = build_archives(feeds, 200)
    table = to_arrow([b for a in archives for b in a.blocks], dicts, valid=True)
    msgs = [m for feed in feeds for m in feed]
    assert table.schema == MESSAGES_SCHEMA
    assert table.column("id").to_pylist() == [m.id for m in msgs]
    assert table.column("author").to_pylist() == [m.author for m in msgs]
    assert table.column("sequence").to_pylist() == [m.sequence for m in msgs]
    assert table.column("previous").to_pylist() == [m.previous for m in msgs]
    assert table.column("timestamp").to_pylist() == [float(m.timestamp) for m in msgs]
    assert table.column("type").to_pylist() == [None if m.is_private else m.content["type"] for m in msgs]
    assert [orjson.loads(c) for c in table.column("content").to_pylist()] == [m.content for m in msgs]
    assert table.column("is_private").to_pylist() == [m.is_private for m in msgs]
    assert table.column("received").null_count == len(msgs) and table.column("valid").to_pylist() == [True] * len(msgs)
    assert table.column("error").null_count == len(msgs)
    table.validate(full=True)
    unverified = to_arrow([b for a in archives for b in a.blocks], dicts)
    assert set(unverified.column("error").to_pylist()) == {"unverified"}
    assert not any(unverified.column("valid").to_pylist())


def test_id_texts_are_the_base64_of_each_digest() -> None:
    digests = [hashlib.sha256(bytes([i])).digest() for i in range(5)]
    import base64

    assert id_texts(b"".join(digests)) == b"".join(b"%" + base64.b64encode(d) + b".sha256" for d in digests)
    assert to_arrow([], None).num_rows == 0  # type: ignore[arg-type]
    assert id_texts(b"") == b""


@pytest.mark.interop
@pytest.mark.skipif(not (node_available() and SSB_FIXTURES_BIN.exists()), reason="needs node and interop/node_modules")
def test_ssb_fixtures_datasets_rebuild_exactly(tmp_path: Path) -> None:
    log = ssb_fixtures(tmp_path, seed=5, messages=600, authors=12)
    feeds: dict[str, list[Message]] = defaultdict(list)
    for item in read_source(log):
        assert item.message is not None, item.error
        feeds[item.message.author].append(item.message)
    ordered = [sorted(f, key=lambda m: m.sequence) for f in feeds.values()]
    archives, dicts = build_archives(ordered, 64)
    store = {hashlib.sha256(b).digest(): b for a in archives for b in a.blobs()}
    for archive, feed in zip(archives, ordered, strict=True):
        assert verify_fetched(archive.bundle, store.get).messages == len(feed)
    table = to_arrow([b for a in archives for b in a.blocks], dicts)
    assert table.column("id").to_pylist() == [m.id for f in ordered for m in f]
