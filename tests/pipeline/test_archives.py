"""Archives as a pipeline source: the same facts, verdicts, reports and tables as the JSONL of the same messages."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from ssblab.archive.bundle import build_archives
from ssblab.archive.folder import blob_ref, open_archive, write_archives
from ssblab.core import Keypair, Message, create_message
from ssblab.core.refs import parse_feed_id
from ssblab.generate import generate_network
from ssblab.pipeline.facts import FACT_FIELDS, split_facts
from ssblab.pipeline.sources import iter_split, plan_splits, resolve_source
from ssblab.pipeline.verify import verify_local, verify_path
from ssblab.store.blobs import BlobStore

BLOCK = 32


def faulty_feed() -> list[Message]:
    """A feed with a message stored verbatim (float timestamp) and a tampered one (its signature fails)."""
    keys = Keypair.generate(bytes([81]) * 32)
    out: list[Message] = []
    for i in range(40):
        stamp = 1_000.5 + i if i == 7 else 1_000 + i
        out.append(create_message(keys, {"type": "post", "text": f"note {i} ✓"}, previous=out[-1] if out else None,
                                  timestamp=stamp))
    value = dict(out[20].value, content={"type": "post", "text": "tampered"})
    out[20] = Message.from_value(value)
    return out


@pytest.fixture(scope="module")
def ordered() -> list[Message]:
    """Feeds in the order an archive numbers them: by author key, each in sequence order."""
    feeds: dict[str, list[Message]] = defaultdict(list)
    for msg in generate_network(authors=4, messages=400, seed=5):
        feeds[msg.author].append(msg)
    bad = faulty_feed()
    feeds[bad[0].author] = bad
    return [m for author in sorted(feeds, key=parse_feed_id) for m in feeds[author]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, ordered: list[Message]) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("archives")
    feeds: dict[str, list[Message]] = defaultdict(list)
    for msg in ordered:
        feeds[msg.author].append(msg)
    archives, _ = build_archives(list(feeds.values()), BLOCK)
    write_archives(archives, root / "archive")
    jsonl = root / "messages.jsonl"
    jsonl.write_bytes(b"".join(orjson.dumps(m.value) + b"\n" for m in ordered))
    return root / "archive", jsonl


def _facts(splits: list[Any]) -> list[tuple[Any, ...]]:
    return [row for rows in split_facts(splits, None, True) for row in rows]


def test_sources_resolve_to_archives(world: tuple[Path, Path]) -> None:
    folder, jsonl = world
    assert resolve_source(folder)[0] == "archive"
    assert resolve_source(folder / "blobs")[0] == "archive"
    assert resolve_source(next(folder.glob("archive-*.json")))[0] == "archive"
    assert resolve_source(jsonl)[0] == "jsonl"


def test_records_are_the_signed_messages_in_order(world: tuple[Path, Path], ordered: list[Message]) -> None:
    folder, _ = world
    records = [r for split in plan_splits(folder, split_rows=100) for r in iter_split(split)]
    assert [r.raw for r in records] == [m.encoded for m in ordered]
    assert [r.pos for r in records] == list(range(len(ordered)))
    # a blob folder alone finds the Bundles by their identifier and reads the same messages
    again = [r.raw for split in plan_splits(folder / "blobs") for r in iter_split(split)]
    assert again == [m.encoded for m in ordered]


def test_facts_equal_the_jsonl_facts(world: tuple[Path, Path]) -> None:
    folder, jsonl = world
    ours, theirs = _facts(plan_splits(folder)), _facts(plan_splits(jsonl))
    content = FACT_FIELDS.index("content")
    assert [r[1:content] for r in ours] == [r[1:content] for r in theirs]
    assert sum(r[FACT_FIELDS.index("code")] == "signature" for r in ours) == 1


def test_facts_take_the_signed_content_text(world: tuple[Path, Path], ordered: list[Message]) -> None:
    folder, jsonl = world
    rows = [dict(zip(FACT_FIELDS, row, strict=True)) for row in _facts(plan_splits(folder))]
    assert [r["id"] for r in rows] == [m.id for m in ordered]
    assert [orjson.loads(r["content"]) for r in rows] == [m.content for m in ordered]
    assert rows[0]["content"].startswith("{\n    ")  # as signed (depth one), not re-serialised
    compact = {r[FACT_FIELDS.index("id")]: r for r in _facts(plan_splits(jsonl))}
    for row in rows:
        assert tuple(v for k, v in row.items() if k not in ("pos", "content")) == tuple(
            v for k, v in zip(FACT_FIELDS, compact[row["id"]], strict=True) if k not in ("pos", "content"))


def _broken_copy(world: tuple[Path, Path], tmp_path: Path, damage: str) -> tuple[Path, str, int]:
    """A copy of the archive whose first feed's second block is missing or damaged (its ref and length)."""
    folder, _ = world
    copy = tmp_path / "archive"
    shutil.copytree(folder, copy)
    archive = open_archive(copy)
    ref = next(iter(archive.runs().values()))[1]
    path = BlobStore(copy / "blobs").path(blob_ref(ref.blob_id))
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:-1] + b"!")
    return copy, blob_ref(ref.blob_id), ref.sketch.length


@pytest.mark.parametrize(("damage", "says"), [("missing", "is not in"), ("damaged", "damaged on disk")])
def test_an_unreadable_block_is_one_invalid_record(world: tuple[Path, Path], tmp_path: Path, damage: str,
                                                   says: str) -> None:
    copy, ref, length = _broken_copy(world, tmp_path, damage)
    records = [r for split in plan_splits(copy) for r in iter_split(split)]
    torn = [r for r in records if r.raw is None]
    assert len(torn) == 1 and torn[0].pos == BLOCK and ref in torn[0].where and says in (torn[0].torn or "")
    assert len(records) == sum(1 for split in plan_splits(world[0]) for _ in iter_split(split)) - length + 1


def test_verify_spark_equals_verify_path(spark: Any, world: tuple[Path, Path]) -> None:
    from ssblab.pipeline.verify import verify_spark

    folder, jsonl = world
    ours = verify_spark(spark, folder, progress=False).to_json()
    assert ours == verify_path(jsonl).to_json()
    assert ours["invalid"] == 20  # the tampered message stops its feed


def test_verify_spark_names_an_unreadable_block(spark: Any, world: tuple[Path, Path], tmp_path: Path) -> None:
    from ssblab.pipeline.verify import verify_spark

    copy, ref, _ = _broken_copy(world, tmp_path, "missing")
    report = verify_spark(spark, copy, progress=False).to_json()
    first = report["errors"][0]
    assert first["code"] == "json" and ref in first["message"] and "is not in" in first["message"]
    assert report["invalid"] > 1  # the feed's later messages no longer follow its head
    assert verify_path(copy).to_json() == report  # the same verdicts without Spark
    assert verify_local(copy, workers=2, split_bytes=1).to_json() == report  # and in the local engine's pool


def test_cli_verify_of_an_archive_without_spark(world: tuple[Path, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from ssblab.cli import main

    folder, jsonl = world
    assert main(["verify", "--json", str(folder)]) == 1  # the tampered message: exit 1, as for the JSONL
    assert orjson.loads(capsys.readouterr().out) == verify_path(jsonl).to_json()
    copy, ref, _ = _broken_copy(world, tmp_path, "damaged")
    assert main(["verify", str(copy)]) == 1
    err = capsys.readouterr().err
    assert ref in err and "damaged on disk" in err


@pytest.mark.slow  # two Spark exports: about a minute
def test_export_of_an_archive_equals_the_jsonl_export(spark: Any, world: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    from ssblab.core.schema import TABLES
    from ssblab.pipeline.export import export_parquet

    folder, jsonl = world
    a = export_parquet(spark, folder, tmp_path / "from-archive", progress=False)
    j = export_parquet(spark, jsonl, tmp_path / "from-jsonl", progress=False)
    assert a.rows == j.rows and a.rows["messages"] == 440
    for table in TABLES:
        ours = ds.dataset(a.path / table, format="parquet").to_table().to_pylist()
        theirs = ds.dataset(j.path / table, format="parquet").to_table().to_pylist()
        if table == "messages":
            for rows in (ours, theirs):
                for row in rows:
                    row["content"] = orjson.loads(row["content"])
        if table == "blobs":
            theirs = [dict(r, size=None) for r in theirs]
            ours = [dict(r, size=None) for r in ours]
        assert ours == theirs, table


def test_archive_messages_reader(spark: Any, world: tuple[Path, Path], ordered: list[Message]) -> None:
    from ssblab.core.schema import TABLES
    from ssblab.pipeline.spark import archive_messages

    folder, _ = world
    df = archive_messages(spark, folder)
    assert df.columns == [c.name for c in TABLES["messages"]]
    rows = df.orderBy("author", "sequence").collect()
    assert len(rows) == len(ordered)
    assert sum(not r.valid for r in rows) == 20
    assert {r.error for r in rows if not r.valid} == {"signature", "feed-stopped"}
