"""The store's SQLite file: opening it (read-write or read-only), creating its schema, and refusing what is not one.

Strategy: a new database gets the whole schema and its version row in one transaction, so a crash leaves either a
complete empty store or none. An existing file is never altered to fit: it must be SQLite, carry our version row,
and have every table with exactly the columns of `SCHEMA` (compared with the same schema built in memory), or it
is refused with a `StoreError` naming the file and the fault. Verbs that only read open the file read-only, so a
store on a read-only disk (or in a folder its reader may not write) verifies and exports.

Invariant: every SQLite failure while opening becomes a `StoreError` (an `SsbError`); nothing here raises
``sqlite3`` errors at a caller.
"""

from __future__ import annotations

import sqlite3
from functools import cache
from pathlib import Path

from ssblab.core.errors import SsbError

__all__ = ["DB_FILE", "SCHEMA", "SCHEMA_VERSION", "StoreError", "check_schema", "is_store", "open_database"]

DB_FILE = "ssblab.sqlite3"
SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE messages (
    seq INTEGER PRIMARY KEY,          -- local log order
    id TEXT NOT NULL UNIQUE,
    author TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    received REAL NOT NULL,           -- ms since the epoch, when this replica got it
    type TEXT,                        -- content type; NULL for private messages
    value BLOB NOT NULL,              -- compact JSON of the message value
    UNIQUE (author, sequence)
);
CREATE TABLE feeds (
    author TEXT PRIMARY KEY,
    sequence INTEGER NOT NULL,
    id TEXT NOT NULL,
    timestamp REAL NOT NULL
);
CREATE TABLE forks (
    author TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    known_id TEXT NOT NULL,
    conflicting_id TEXT NOT NULL,
    conflicting_value BLOB NOT NULL,
    found REAL NOT NULL,
    PRIMARY KEY (author, conflicting_id)
);
"""


class StoreError(SsbError):
    """A store that cannot be opened: missing, not SQLite, another schema, damaged, or not writable."""

    code = "store"


def is_store(path: str | Path) -> bool:
    return (Path(path) / DB_FILE).is_file()


def open_database(folder: Path, *, read_only: bool = False, create: bool = True) -> sqlite3.Connection:
    """The store database of ``folder``, checked (see the module docstring).

    Args:
        folder: the store folder.
        read_only: open for reading only (the file must exist); nothing is written, not even the WAL index
            when the folder is not writable.
        create: make the folder and a new empty store when there is none (ignored when ``read_only``).

    Raises:
        StoreError: ``store-missing``, ``store-corrupt`` (not SQLite, bad tables), ``store-version`` or
            ``store-read-only`` (a write was refused).
    """
    file = folder / DB_FILE
    fresh = not file.is_file() or file.stat().st_size == 0
    if fresh and (read_only or not create):
        raise StoreError(f"{folder}: no ssblab store here (no {DB_FILE})", code="store-missing")
    if fresh:
        folder.mkdir(parents=True, exist_ok=True)
    db = _connect(file, read_only)
    try:
        if not fresh:
            check_schema(db, file)  # before any pragma: another program's database stays as it was
        if not read_only:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a committed batch survives power loss, not only a crash
        if fresh:
            db.executescript(f"BEGIN IMMEDIATE; {SCHEMA} INSERT INTO meta VALUES ('schema', '{SCHEMA_VERSION}'); "
                             "COMMIT;")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise _store_error(file, exc) from None
    except StoreError:
        db.close()
        raise
    return db


def _connect(file: Path, read_only: bool) -> sqlite3.Connection:
    try:
        if not read_only:
            return sqlite3.connect(file, isolation_level=None)
        db = sqlite3.connect(f"{file.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:  # a WAL database whose folder we may not write (no -shm can be made)
            db.close()
            return sqlite3.connect(f"{file.absolute().as_uri()}?immutable=1", uri=True, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise _store_error(file, exc) from None


def _store_error(file: Path, exc: sqlite3.DatabaseError) -> StoreError:
    text = str(exc)
    if "readonly" in text:
        return StoreError(f"{file}: the store is read-only ({text}); verify and export work without writing",
                          code="store-read-only")
    return StoreError(f"{file} is not a usable ssblab store: {text}", code="store-corrupt")


@cache
def _expected_columns() -> dict[str, tuple[str, ...]]:
    memory = sqlite3.connect(":memory:")
    memory.executescript(SCHEMA)
    tables = [name for (name,) in memory.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {name: _columns(memory, name) for name in tables}


def _columns(db: sqlite3.Connection, table: str) -> tuple[str, ...]:
    return tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))


def check_schema(db: sqlite3.Connection, file: Path) -> None:
    """Our version row, and every table with exactly our columns.

    Raises:
        StoreError: ``store-version`` or ``store-corrupt``.
    """
    for table, columns in _expected_columns().items():
        found = _columns(db, table)
        if found != columns:
            shape = f"columns {', '.join(found)}" if found else "no such table"
            raise StoreError(f"{file}: table {table} has {shape}, a store's has {', '.join(columns)}",
                             code="store-corrupt")
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if row is None or row[0] != str(SCHEMA_VERSION):
        version = "no schema version" if row is None else f"store schema {str(row[0])[:20]!r}"
        raise StoreError(f"{file} has {version}, this ssblab reads {SCHEMA_VERSION}", code="store-version")
