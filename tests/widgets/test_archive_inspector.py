"""The archive inspector's model: selection, sketch, where the bytes go, dictionaries, decoding, verification."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from ssblab.archive.bundle import MAX_BUNDLE_BLOCKS, Archive, build_archives
from ssblab.archive.folder import blob_ref, write_archives
from ssblab.core.message import Message
from ssblab.generate import generate_network
from ssblab.store.blobs import BlobStore
from ssblab.widgets import WidgetError
from ssblab.widgets.archive_inspector import CSS_CLASS, FRAMING, ArchiveInspector


@pytest.fixture(scope="module")
def feeds() -> list[list[Message]]:
    grouped: dict[str, list[Message]] = defaultdict(list)
    for msg in generate_network(authors=3, messages=240, seed=8):
        grouped[msg.author].append(msg)
    return list(grouped.values())


@pytest.fixture(scope="module")
def archives(feeds: list[list[Message]]) -> list[Archive]:
    built, _ = build_archives(feeds, 2)  # small blocks: the longest feed needs two Bundles
    assert any(a.part == 2 for a in built)
    return built


@pytest.fixture()
def archive(tmp_path: Path, archives: list[Archive]) -> Path:
    write_archives(archives, tmp_path / "archive")
    return tmp_path / "archive"


def test_selection_stays_within_the_archive(archive: Path) -> None:
    model = ArchiveInspector.from_path(archive)
    assert len(model.bundle_options()) == len(model.archive.bundles) >= 4
    long = next(i for i, b in enumerate(model.archive.bundles) if len(b.blocks) == MAX_BUNDLE_BLOCKS)
    model.select_bundle(long)
    model.select_block(MAX_BUNDLE_BLOCKS - 1)
    model.select_bundle(0)
    assert model.block_index == 0  # another Bundle starts at its first block
    with pytest.raises(WidgetError, match="no block 99"):
        model.select_block(99)
    with pytest.raises(WidgetError, match="no Bundle"):
        model.select_bundle(len(model.archive.bundles))


def test_sketch_sizes_and_dictionaries_describe_the_block(archive: Path, feeds: list[list[Message]]) -> None:
    model = ArchiveInspector.from_path(archive)
    model.select_block(1)
    sketch = model.sketch()
    feed = next(f for f in feeds if f[0].author == sketch["author"])
    first, last = sketch["sequences"]
    assert sketch["messages"] == last - first + 1 == model.ref.sketch.length
    assert sketch["last message"] == feed[last - 1].id and sketch["previous message"] == feed[first - 2].id
    assert sketch["previous block"] == blob_ref(model.bundle.blocks[0].blob_id)
    sizes = {r["column"]: r["bytes"] for r in model.column_sizes()}
    assert sum(sizes.values()) == sketch["bytes"] and sizes[FRAMING] > 0
    assert sizes["ed25519 signatures"] == 64 * sketch["messages"]
    chart = model.size_chart()
    assert {r["format"] for r in chart["data"]["values"]} == set(sizes)
    rows = {r["dictionary"]: r for r in model.dictionary_rows()}
    assert rows["types"]["entries"] == len(model.dicts().chains[0].entries) >= 3
    assert all(r["blobs"] >= 1 for r in rows.values() if r["entries"])


def test_decode_and_verify(archive: Path, feeds: list[list[Message]]) -> None:
    model = ArchiveInspector.from_path(archive)
    rows = model.decode(2)
    feed = next(f for f in feeds if f[0].author == rows[0]["author"])
    start = model.ref.sketch.sequence_base - 1
    assert [r["id"] for r in rows] == [m.id for m in feed[start : start + len(rows)]]
    assert [orjson.loads(r["content"]) for r in rows] == [m.content for m in feed[start : start + len(rows)]]
    assert model.verify().ok and "ok:" in model.verify().text
    path = BlobStore(archive / "blobs").path(blob_ref(model.bundle.blocks[-1].blob_id))
    path.unlink()
    verdict = model.verify()
    assert not verdict.ok and "MissingBlob" in verdict.text


def test_the_view_is_thin(archive: Path) -> None:
    pytest.importorskip("ipywidgets")
    pytest.importorskip("vl_convert")
    model = ArchiveInspector.from_path(archive)
    view = model.widget()
    assert CSS_CLASS in view._dom_classes
    bundles, blocks = view.children[0].children
    blocks.value = 1
    assert model.block_index == 1
    bundles.value = 1
    assert model.bundle_index == 1 and model.block_index == 0 and blocks.value == 0
