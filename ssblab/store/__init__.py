"""The durable local replica (SQLite WAL + a blob folder) and the file formats SSB data comes in."""

from ssblab.store.blobs import BlobStore
from ssblab.store.sources import Received, parse_record, write_log_offset
from ssblab.store.store import Store, StoreStats, export_jsonl

__all__ = [
    "BlobStore",
    "Received",
    "Store",
    "StoreStats",
    "export_jsonl",
    "parse_record",
    "write_log_offset",
]
