"""Verify any SSB data at a path from scratch: a JSONL file, a log.offset, an ssb-db2 log, or a store folder.

The same `FeedValidator` decides as for imports; for a store, every stored message is re-verified (nothing is
trusted from its tables) and the fork evidence it holds is reported too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ssblab.core.message import Message
from ssblab.core.validate import FeedValidator, ValidationReport
from ssblab.store.received import Received
from ssblab.store.sources import read_source
from ssblab.store.store import Store


def is_store(path: str | Path) -> bool:
    return (Path(path) / "ssblab.sqlite3").exists()


def _store_items(store: Store) -> Iterator[Received]:
    for seq, value, received in store.log():
        yield Received(f"{store.path}#{seq}", Message.from_json(value), received)


def verify_path(
    path: str | Path, *, hmac_key: Any = None, on_message: Callable[[], None] | None = None, strict: bool = False
) -> ValidationReport:
    """Validate every message at ``path``; ``on_message`` is called once per message (progress bars).

    ``strict`` makes a message that breaks a strict JSON rule JS accepts invalid (it is a finding otherwise).
    """
    validator = FeedValidator(hmac_key, strict=strict)
    store = Store(path, hmac_key=hmac_key) if is_store(path) else None
    try:
        items = _store_items(store) if store else read_source(path, hmac_key=hmac_key)
        for item in items:
            if item.error is not None:
                validator.reject(item.error)
            elif item.skipped is not None:
                validator.skip(item.skipped)
            elif item.native is not None:
                validator.push(item.native)
            else:
                validator.push(item.message, item.finding)  # type: ignore[arg-type]
            if on_message:
                on_message()
        if store:
            validator.report.forks.extend(store.forks())
    finally:
        if store:
            store.close()
    return validator.report
