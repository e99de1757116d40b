"""The embedded default dataset: found, built once into the cache, rebuilt when its producers change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssblab import datasets
from ssblab.core.message import Message
from ssblab.store import Store


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SSBLAB_DATA_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_parameters_are_the_repository_file() -> None:
    path = datasets.spec_path()
    assert path == Path(__file__).resolve().parents[2] / "datasets" / "default.json"
    spec = datasets.default_spec()
    assert spec == json.loads(path.read_text())
    assert datasets.default_network().spec.messages == spec["messages"]


def test_an_unknown_dataset_names_where_it_looked() -> None:
    with pytest.raises(datasets.DatasetNotFound, match=r"dataset 'nope': no nope.json in .*datasets"):
        datasets.default_spec("nope")


def test_the_jsonl_is_built_once_and_reused(cache: Path) -> None:
    first = datasets.default_jsonl()
    assert first.is_relative_to(cache)
    stamp = first.stat().st_mtime_ns
    assert datasets.default_jsonl() == first and first.stat().st_mtime_ns == stamp
    lines = first.read_text().splitlines()
    assert len(lines) == datasets.default_spec()["messages"]
    assert Message.from_json(lines[0]).id == next(datasets.default_network().messages()).id
    assert not [p for p in first.parent.iterdir() if ".tmp-" in p.name]


def test_a_failed_build_leaves_nothing_that_looks_complete(cache: Path) -> None:
    def broken(out: Path) -> None:
        out.write_text("half")
        raise RuntimeError("interrupted")

    target = cache / "x" / "data.jsonl"
    with pytest.raises(RuntimeError):
        datasets._cached(target, broken)
    assert not target.exists() and not list(target.parent.iterdir())


def test_the_store_holds_every_message(cache: Path) -> None:
    with Store(datasets.default_store()) as store:
        assert store.stats().messages == datasets.default_spec()["messages"]


def test_a_changed_producer_gives_a_new_folder(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = datasets._dataset_dir("default")
    monkeypatch.setattr(datasets, "PRODUCERS", ("generate",))
    assert datasets._dataset_dir("default") != before
