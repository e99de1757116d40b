"""Verified once per content: the Parquet dataset of a source, kept for the next analysis of the same bytes.

Why: an analysis verb on a store or a JSONL file has to verify every message first (the signature checks alone
are about 60 µs each), so every ``ssblab graph hops --data store`` of 20,000 messages paid 3 to 4 s for the same
verdicts. Verification is a pure function of the source's bytes, the HMAC key and the code that verifies, so
its output is kept in a folder named after a digest of exactly those, like a build cache: the first analysis
verifies and writes the dataset (``ssblab export --engine local``), every later one on unchanged data reads it.

Strategy: `source_digest` hashes the content of every file the source's reader reads (the file, or every file
of its folder but SQLite's shared-memory index and a store's blobs, which are named by their hash and are listed
with their sizes instead; an archive's blobs are its data and are hashed whole), the reader's kind, the HMAC key,
the dataset layout version, ssblab's version and the source of the packages that verify (`code_digest`). The
folders live in ``$SSBLAB_DATA_CACHE/verified`` (default ``~/.cache/ssblab/datasets/verified``); the `KEEP` most
recently used are kept, and any used in the last `IN_USE` seconds. Where the cache cannot be written (a read-only
home, a full disk), `ssblab.open_dataset` verifies in memory instead.

Invariants: a changed byte anywhere in the source, or a changed verifier, gives another folder, never a stale
answer; a folder is complete when its manifest exists (the export renames it into place whole), so a killed
process leaves nothing that passes for a dataset; two processes that build the same folder write equal bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ssblab import __version__
from ssblab.core.schema import DATASET_VERSION
from ssblab.pipeline.export import MANIFEST, local_tables, write_tables
from ssblab.pipeline.sources import blob_folder, held_blobs, resolve_source

__all__ = ["IN_USE", "KEEP", "PRODUCERS", "cache_dir", "code_digest", "is_kept", "keep", "keep_in_background",
           "kept_folder", "source_digest", "verified_cache_dir", "verified_dataset"]

KEEP = 8
IN_USE = 600
# The packages whose code decides what a source's dataset holds.
PRODUCERS = ("core", "store", "archive", "pipeline")
_CODE = (".py", ".c", ".h")
_PACKAGE = Path(__file__).resolve().parents[1]
_CHUNK = 1 << 20


def cache_dir() -> Path:
    """ssblab's data cache, ``$SSBLAB_DATA_CACHE`` or ``~/.cache/ssblab/datasets`` (read at call time)."""
    return Path(os.environ.get("SSBLAB_DATA_CACHE") or Path.home() / ".cache" / "ssblab" / "datasets")


def verified_cache_dir() -> Path:
    """Where the verified datasets are kept."""
    return cache_dir() / "verified"


def code_digest(packages: tuple[str, ...] = PRODUCERS) -> bytes:
    """sha256 over ssblab's version and the source (Python and C) of ``packages`` (names relative to
    ``ssblab/``)."""
    digest = hashlib.sha256(__version__.encode() + b"\0")
    for package in packages:
        for source in sorted(p for p in (_PACKAGE / package).rglob("*") if p.suffix in _CODE):
            digest.update(source.relative_to(_PACKAGE).as_posix().encode() + b"\0" + source.read_bytes())
    return digest.digest()


def source_digest(source: str | Path, hmac_key: bytes | None = None) -> str:
    """The digest naming a source's verified dataset (the module docstring says what goes in).

    Raises:
        SourceError: ``source`` is nothing ssblab reads.
    """
    kind, where = resolve_source(source)
    digest = hashlib.sha256(code_digest())
    digest.update(json.dumps({"kind": kind, "dataset": DATASET_VERSION,
                              "hmac": hmac_key.hex() if hmac_key else None}).encode())
    for path, name in _read_files(kind, where):
        digest.update(f"\0{name}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
    if kind == "store":
        for blob, size in held_blobs(where):
            digest.update(f"\0blob {blob} {size}".encode())
    return digest.hexdigest()[:32]


def _read_files(kind: str, where: Path) -> Iterator[tuple[Path, str]]:
    """(file, name in the digest) of what the reader of ``kind`` may read at ``where``."""
    if where.is_file():
        yield where, where.name
    else:
        blobs = where / "blobs"
        for path in sorted(where.rglob("*")):
            if path.is_file() and not path.name.endswith("-shm") and blobs not in path.parents:
                yield path, path.relative_to(where).as_posix()
    if kind == "archive":
        folder = blob_folder(where)
        if folder is not None and folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    yield path, "archive-blobs/" + path.relative_to(folder).as_posix()


def kept_folder(source: str | Path, hmac_key: bytes | None = None) -> Path:
    """Where the verified dataset of ``source``'s bytes is kept (whether or not it is there yet)."""
    return verified_cache_dir() / source_digest(source, hmac_key)


def is_kept(folder: Path) -> bool:
    """Whether a kept dataset is complete in ``folder`` (and then marked most recently used: kept longest)."""
    if not (folder / MANIFEST).is_file():
        return False
    os.utime(folder)
    return True


def keep(tables: dict[str, Any], folder: Path, source: str | Path) -> Path:
    """Write the local engine's tables of ``source`` (`export.local_tables`) into the cache at ``folder``."""
    write_tables(tables, folder, source)
    _prune(folder.parent)
    return folder


def keep_in_background(tables: dict[str, Any], folder: Path, source: str | Path) -> Future[Path | None]:
    """`keep`, in a thread: the Parquet writer releases the GIL, so the analysis that opened the source runs
    meanwhile (a process waits for the thread before it exits). The future's result is the folder, or None where
    the cache cannot be written (a read-only home, a full disk): then nothing is kept."""
    done: Future[Path | None] = Future()

    def run() -> None:
        try:
            done.set_result(keep(tables, folder, source))
        except OSError:
            done.set_result(None)
        except BaseException as exc:  # a defect: whoever waits gets it, and the thread reports it too
            done.set_exception(exc)
            raise

    threading.Thread(target=run, name="ssblab-keep-dataset").start()
    return done


def verified_dataset(source: str | Path, *, hmac_key: bytes | None = None, workers: int | None = None) -> Path:
    """The Parquet dataset of ``source``: the kept one for these bytes, or one verified and written now on the
    local engine (``workers``: its processes).

    Raises:
        SourceError: ``source`` is nothing ssblab reads.
    """
    folder = kept_folder(source, hmac_key)
    if not is_kept(folder):
        keep(local_tables(resolve_source(source)[1], hmac_key=hmac_key, workers=workers), folder, source)
    return folder


def _prune(root: Path) -> None:
    """Keep the `KEEP` most recently used datasets, any used in the last `IN_USE` seconds (another process may be
    reading it: tables are read lazily) and any build in progress (hidden folders)."""
    kept = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in kept[KEEP:]:
        if time.time() - stale.stat().st_mtime > IN_USE:
            shutil.rmtree(stale, ignore_errors=True)
