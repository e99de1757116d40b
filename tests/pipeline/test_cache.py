"""The verified-dataset cache: a source is verified once per content, a changed byte or key is verified again,
and what is kept equals what an in-memory build gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ssblab.core.schema import TABLES
from ssblab.dataset import open_dataset
from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline import cache
from ssblab.pipeline.export import MANIFEST
from ssblab.pipeline.sources import SourceError, read_source
from ssblab.store import Store


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache root (the variable is read at call time)."""
    monkeypatch.setenv("SSBLAB_DATA_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "verified"


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    write_jsonl(generate_network(6, 150, seed=11), tmp_path / "log.jsonl")
    return tmp_path / "log.jsonl"


def _rows(ds: Any, name: str) -> list[dict[str, Any]]:
    return ds.table(name).to_pylist()  # type: ignore[no-any-return]


def test_a_source_is_verified_once_and_read_back_equal(cached: Path, jsonl: Path) -> None:
    first = open_dataset(jsonl)  # verified now: its tables in memory, its dataset written in the background
    assert first.folder is None
    folder = first.wait_kept()
    assert folder is not None and folder.parent == cached
    written = (folder / MANIFEST).stat().st_mtime_ns
    again = open_dataset(jsonl)
    assert again.folder == folder == again.wait_kept() and (folder / MANIFEST).stat().st_mtime_ns == written
    assert again.path == jsonl.absolute() and repr(again) == f"Dataset({str(jsonl.absolute())!r}, engine='local')"
    in_memory = open_dataset(jsonl, cache=False)
    assert in_memory.folder is None and in_memory.wait_kept() is None
    for name in TABLES:
        kept, built, first_built = again.table(name), in_memory.table(name), first.table(name)
        assert kept.schema == built.schema == first_built.schema, name
        key = [(c, "ascending") for c in kept.column_names if not str(kept.schema.field(c).type).startswith("list")]
        assert kept.sort_by(key).to_pylist() == built.sort_by(key).to_pylist() == first_built.sort_by(key).to_pylist()
    assert list(cached.iterdir()) == [folder]


def test_a_changed_byte_is_verified_again(cached: Path, jsonl: Path) -> None:
    before = open_dataset(jsonl)
    before.wait_kept()
    lines = jsonl.read_bytes().splitlines(keepends=True)
    value = json.loads(lines[3])
    value["signature"] = value["signature"].replace(value["signature"][5], "A" if value["signature"][5] != "A"
                                                    else "B", 1)
    lines[3] = json.dumps(value).encode() + b"\n"
    jsonl.write_bytes(b"".join(lines))
    after = open_dataset(jsonl)
    assert after.wait_kept() != before.wait_kept()
    invalid = after.sql("SELECT count(*) AS n FROM messages WHERE NOT valid")["n"][0].as_py()
    assert invalid >= 1 and before.sql("SELECT count(*) AS n FROM messages WHERE NOT valid")["n"][0].as_py() == 0


def test_the_key_and_the_store_state_name_the_folder(cached: Path, jsonl: Path, tmp_path: Path) -> None:
    assert cache.source_digest(jsonl) != cache.source_digest(jsonl, b"\x01" * 32)
    store = tmp_path / "store"
    values = list(read_source(jsonl))
    with Store(store) as db:
        db.append(values[:100])
    digest = cache.source_digest(store)
    (store / "ssblab.sqlite3-shm").touch()  # SQLite's shared-memory index is not data
    assert cache.source_digest(store) == digest
    with Store(store) as db:
        db.append(values[100:])
    assert cache.source_digest(store) != digest
    assert open_dataset(store).table("messages").num_rows == len(values)


def test_only_the_most_recently_used_are_kept(cached: Path, tmp_path: Path) -> None:
    sources = []
    for seed in range(cache.KEEP + 3):
        write_jsonl(generate_network(2, 6, seed=seed), tmp_path / f"{seed}.jsonl")
        sources.append(tmp_path / f"{seed}.jsonl")
    folders = [open_dataset(source).wait_kept() for source in sources[:-1]]
    assert len(list(cached.iterdir())) == cache.KEEP + 2  # all in use: another process may be reading them
    for used, folder in enumerate(folders, 1):
        os.utime(folder, (used, used))  # long unused, the first longest
    staging = cached / ".half-written.tmp-1"  # a build in progress (or killed) is not a dataset, and not pruned
    staging.mkdir()
    newest = open_dataset(sources[-1]).wait_kept()
    kept = {p for p in cached.iterdir() if not p.name.startswith(".")}
    assert kept == {newest, *folders[-(cache.KEEP - 1):]} and staging.exists()


def test_an_unwritable_cache_verifies_in_memory(tmp_path: Path, jsonl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("SSBLAB_DATA_CACHE", str(tmp_path / "not-a-folder"))
    ds = open_dataset(jsonl)
    assert ds.table("messages").num_rows == 150 and ds.wait_kept() is None


def test_bad_sources_are_named(cached: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file or folder"):
        open_dataset(tmp_path / "missing.jsonl")
    assert not cached.exists()


def test_the_cli_keeps_nothing_when_asked(cached: Path, jsonl: Path) -> None:
    env = {**os.environ, "SSBLAB_DATA_CACHE": str(cached.parent)}
    run = [sys.executable, "-m", "ssblab", "graph", "stats", "--data", str(jsonl), "--json"]
    uncached = subprocess.run([*run, "--no-cache"], env=env, capture_output=True, text=True, check=True)
    assert not cached.exists()
    kept = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert json.loads(kept.stdout) == json.loads(uncached.stdout) and len(list(cached.iterdir())) == 1
