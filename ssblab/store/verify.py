"""Verify any SSB data at a path from scratch: a JSONL file, a log.offset, or a store folder.

The same `FeedValidator` decides as for imports; for a store, every stored message is re-verified (nothing is
trusted from its tables) and the fork evidence it holds is reported too. A store is opened read-only. A row whose
value no longer parses (damaged or edited on disk) is one invalid record named ``STORE#ROW``, as the Spark route
names it, and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ssblab.core.validate import FeedValidator, ValidationReport
from ssblab.store.db import is_store
from ssblab.store.sources import Received, parse_record, read_source
from ssblab.store.store import Store


def _store_items(store: Store) -> Iterator[Received]:
    for seq, value, received in store.log():
        item = parse_record(value, f"{store.path}#{seq}")
        yield Received(item.where, item.message, received, item.error)


def verify_path(
    path: str | Path, *, hmac_key: Any = None, on_message: Callable[[], None] | None = None
) -> ValidationReport:
    """Validate every message at ``path``; ``on_message`` is called once per message (progress bars)."""
    validator = FeedValidator(hmac_key)
    store = Store(path, hmac_key=hmac_key, read_only=True) if is_store(path) else None
    try:
        items = _store_items(store) if store else read_source(path)
        for item in items:
            if item.error is not None:
                validator.reject(item.error)
            else:
                validator.push(item.message)  # type: ignore[arg-type]
            if on_message:
                on_message()
        if store:
            validator.report.forks.extend(store.forks())
    finally:
        if store:
            store.close()
    return validator.report
