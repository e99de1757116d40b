"""Refuse outputs that would overwrite what a command reads: the source file, or anything in a source folder.

Why: ``ssblab export --store S --out S/ssblab.sqlite3`` used to truncate the store it was reading (and an output
on ``ssblab.sqlite3-wal`` overwrote its write-ahead log). Paths are compared after resolving symbolic links, and an
existing output is also compared by inode, so a hard link (to the source, or to a file in a source folder) is caught
too.
"""

from __future__ import annotations

import os
from pathlib import Path

from ssblab.core.errors import SsbError

__all__ = ["OutputError", "check_output"]


class OutputError(SsbError):
    """An output path that would overwrite (or land inside) what the command reads."""

    code = "output-in-source"


def check_output(out: str | Path, *sources: str | Path) -> None:
    """Raise unless writing ``out`` leaves every source untouched.

    Refused: ``out`` is a source (or the same file under another name), lies inside a source folder (a store's
    database, its ``-wal``/``-shm`` files, its blobs), or is a folder that holds a source (replacing it would
    delete the source).

    Raises:
        OutputError: naming the output and the source it would damage.

    Examples:
        >>> check_output("out.jsonl", "store")
        >>> check_output("store/ssblab.sqlite3", "store")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        OutputError: --out store/ssblab.sqlite3 is inside the source store: refusing to overwrite it
    """
    target = Path(out).resolve()
    for source in map(Path, sources):
        origin = source.resolve()
        if target == origin or _same_file(target, origin):
            raise OutputError(f"--out {out} is the source {source} itself: refusing to overwrite it")
        if origin in target.parents or _linked_inside(target, origin):
            raise OutputError(f"--out {out} is inside the source {source}: refusing to overwrite it")
        if target in origin.parents:
            raise OutputError(f"--out {out} holds the source {source}: replacing it would delete the source")


def _linked_inside(target: Path, folder: Path) -> bool:
    """A hard link to a file of ``folder`` (looked for only when ``target`` has several links)."""
    try:
        found = target.stat()
    except OSError:
        return False
    if found.st_nlink < 2 or not folder.is_dir():
        return False
    return any(_same_file(target, path) for path in folder.rglob("*") if path.is_file())


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False  # one of them does not exist yet
