"""A store under careless commands and damage on disk (issue 19, items 1, 8, 9, 11): every attempt ends in a clear
error with exit 2 and no traceback (in process: `main` would raise), and the store is byte for byte unchanged."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from ssblab import Keypair
from ssblab.cli import main
from ssblab.pipeline.verify import verify_path
from ssblab.store import OutputError, Store, StoreError, TamperedRow, check_output, export_jsonl
from tests.signed import signed_posts

ALICE, BOB = Keypair.generate(bytes([7]) * 32), Keypair.generate(bytes([8]) * 32)


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file of a folder with its sha256: what "unchanged" means. SQLite's shared-memory index (``-shm``) and
    an empty write-ahead log are what any reader of a WAL database may create; they hold no data."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith("-shm")
            and not (p.name.endswith("-wal") and p.stat().st_size == 0)}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    with Store(tmp_path / "s") as s:
        s.append([*signed_posts(ALICE, 30), *signed_posts(BOB, 20)])
    return tmp_path / "s"


@pytest.mark.parametrize("target", ["ssblab.sqlite3", "ssblab.sqlite3-wal", "ssblab.sqlite3-shm", "blobs/x.jsonl",
                                    "new.jsonl", "."])
def test_export_never_writes_into_the_store(store: Path, capsys: pytest.CaptureFixture[str], target: str) -> None:
    before = fingerprint(store)
    code, _, err = cli(capsys, "export", "--store", store, "--format", "jsonl", "--out", store / target)
    assert code == 2 and "[output-in-source]" in err and "refusing" in err
    assert fingerprint(store) == before
    code, _, _ = cli(capsys, "export", "--store", store, "--format", "parquet", "--out", store / target)
    assert code == 2 and fingerprint(store) == before  # refused before Spark starts


def test_other_names_of_the_store_are_refused_too(store: Path, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(store)
    os.link(store / "ssblab.sqlite3", tmp_path / "hard")
    for out in (tmp_path / "link" / "ssblab.sqlite3", tmp_path / "hard", tmp_path):
        with pytest.raises(OutputError) as caught:
            check_output(out, store)
        assert caught.value.code == "output-in-source"
    check_output(tmp_path / "elsewhere.jsonl", store)  # a sibling is fine


def test_export_of_a_missing_store_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "export", "--store", tmp_path / "nope", "--out", tmp_path / "o.jsonl")
    assert code == 2 and "[store-missing]" in err
    assert not (tmp_path / "nope").exists() and not (tmp_path / "o.jsonl").exists()


def _not_sqlite(db: Path) -> None:
    db.write_bytes(b"this is no database, only text " * 40)


def _sql(db: Path, script: str, *args: object) -> None:
    """Run SQL on a store's file and close it (the last connection to close checkpoints the WAL)."""
    con = sqlite3.connect(db)
    con.execute(script, args)
    con.commit()
    con.close()


def _bad_version(db: Path) -> None:
    _sql(db, "UPDATE meta SET value = 'x7' WHERE key = 'schema'")


def _wrong_shape(db: Path) -> None:
    _sql(db, "ALTER TABLE messages DROP COLUMN type")


def _foreign_database(db: Path) -> None:
    db.unlink()
    _sql(db, "CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")


@pytest.mark.parametrize(("damage", "code"), [(_not_sqlite, "store-corrupt"), (_bad_version, "store-version"),
                                              (_wrong_shape, "store-corrupt"), (_foreign_database, "store-corrupt")])
def test_a_damaged_database_is_a_clear_error_for_every_verb(store: Path, tmp_path: Path, damage: Callable[[Path], None],
                                                          code: str, capsys: pytest.CaptureFixture[str]) -> None:
    damage(store / "ssblab.sqlite3")
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(orjson.dumps(m.value) + b"\n" for m in signed_posts(ALICE, 3)))
    before = fingerprint(store)
    for argv in (("verify", store), ("import", source, "--store", store),
                 ("export", "--store", store, "--out", tmp_path / "o.jsonl")):
        status, _, err = cli(capsys, *argv)
        assert status == 2 and f"[{code}]" in err and "ssblab.sqlite3" in err, (argv, err)
    assert fingerprint(store) == before and not (tmp_path / "o.jsonl").exists()
    with pytest.raises(StoreError) as caught:
        Store(store)
    assert caught.value.code == code


def _tamper(store: Path, seq: int, value: bytes) -> None:
    _sql(store / "ssblab.sqlite3", "UPDATE messages SET value = ? WHERE seq = ?", value, seq)


def test_a_tampered_row_is_named_by_verify_and_refused_by_export(store: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _tamper(store, 5, b'{"previous": "cut here')  # bytes that are no longer JSON: row 5 is alice's 5th
    report = verify_path(store)
    assert (report.checked, report.valid, report.invalid) == (50, 24, 26)  # alice's first 4 and bob's 20 valid
    first = report.errors[0]
    assert first.code == "json" and f"{store}#5" in str(first)
    assert {e.code for e in report.errors[1:]} == {"sequence-order"}  # alice's feed cannot go past the gap
    code, _, err = cli(capsys, "export", "--store", store, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "[store-tampered]" in err and "row 5" in err
    assert not (tmp_path / "o.jsonl").exists() and not list(tmp_path.glob(".o.jsonl.tmp-*"))


def test_export_refuses_a_row_whose_value_was_swapped(store: Path, tmp_path: Path) -> None:
    forged = signed_posts(ALICE, 3, text="forged")[2]  # a valid message, but not the one row 3 names
    _tamper(store, 3, orjson.dumps(forged.value))
    with Store(store, read_only=True) as s, pytest.raises(TamperedRow, match="row 3"):
        export_jsonl(s, tmp_path / "o.jsonl")


def test_a_read_only_store_is_never_written(store: Path, tmp_path: Path) -> None:
    before = fingerprint(store)
    with Store(store, read_only=True) as s:
        assert verify_path(store).valid == 50 and export_jsonl(s, tmp_path / "o.jsonl") == 50
        with pytest.raises(StoreError) as caught:
            s.append(signed_posts(ALICE, 31))
        assert caught.value.code == "store-read-only"
    assert fingerprint(store) == before


def _as_nobody() -> list[str]:
    """A command prefix that drops root (root may write anything), or nothing when not root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a store read-only for the test")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder any user may enter (pytest's own tmp folders are root's alone, 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="ssblab-ro-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        for path in folder.rglob("*"):
            path.chmod(0o777 if path.is_dir() else 0o666)
        shutil.rmtree(folder)


def test_verify_and_export_work_on_a_read_only_disk(store: Path, open_folder: Path) -> None:
    """The store's folder and files are read-only for the process (a read-only mount, another user's store):
    verify and export work, import of new messages is a clear error, nothing changes."""
    work = open_folder
    shutil.move(store, work / "s")
    source = work / "new.jsonl"
    source.write_bytes(b"".join(orjson.dumps(m.value) + b"\n" for m in signed_posts(ALICE, 33)))
    for path in [work / "s", *(work / "s").rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    before = fingerprint(work / "s")

    def run(*argv: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*_as_nobody(), sys.executable, "-m", "ssblab", *map(str, argv)], cwd=work,
                              capture_output=True, text=True, env={**os.environ, "HOME": str(work)})

    assert run("verify", "s").returncode == 0
    exported = run("export", "--store", "s", "--out", "o.jsonl")
    assert exported.returncode == 0 and len((work / "o.jsonl").read_bytes().splitlines()) == 50
    imported = run("import", "new.jsonl", "--store", "s")
    assert imported.returncode == 2 and "[store-read-only]" in imported.stderr
    assert "Traceback" not in imported.stderr + exported.stderr
    assert fingerprint(work / "s") == before
