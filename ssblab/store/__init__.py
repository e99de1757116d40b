"""The durable local replica (SQLite WAL + a blob folder), what it takes in (`Received`), and ssb-db2's log
layout (`ssblab.store.db2`), which the pipeline's sources read like the other formats.

Names resolve on first use (a module ``__getattr__`` over `_HOME`, the pipeline's idiom): a verb that reads one
module of the package does not load the others at start-up.
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

_HOME = {
    "BlobStore": "blobs",
    **dict.fromkeys(["StoreError", "is_store"], "db"),
    **dict.fromkeys(["is_db2", "read_db2"], "db2"),
    **dict.fromkeys(["TamperedRow", "export_jsonl"], "export"),
    **dict.fromkeys(["OutputError", "check_output"], "guard"),
    "Received": "received",
    **dict.fromkeys(["parse_record", "write_log_offset"], "sources"),
    **dict.fromkeys(["Store", "StoreStats"], "store"),
}

__all__ = sorted(_HOME)

__getattr__, __dir__ = lazy_names(__name__, _HOME)
