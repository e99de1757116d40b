"""The durable local replica (SQLite WAL + a blob folder) and the file formats SSB data comes in (JSONL,
log.offset, ssb-db2's log.bipf)."""

from ssblab.store.blobs import BlobStore
from ssblab.store.db2 import is_db2, read_db2
from ssblab.store.received import Received
from ssblab.store.sources import read_jsonl, read_log_offset, read_source, write_log_offset
from ssblab.store.store import Store, StoreStats, export_jsonl

__all__ = [
    "BlobStore",
    "Received",
    "Store",
    "StoreStats",
    "export_jsonl",
    "is_db2",
    "read_db2",
    "read_jsonl",
    "read_log_offset",
    "read_source",
    "write_log_offset",
]
