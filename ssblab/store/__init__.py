"""The durable local replica (SQLite WAL + a blob folder) and the file formats SSB data comes in."""

from ssblab.store.blobs import BlobStore
from ssblab.store.db import StoreError, is_store
from ssblab.store.export import TamperedRow, export_jsonl
from ssblab.store.guard import OutputError, check_output
from ssblab.store.sources import Received, read_jsonl, read_log_offset, read_source, write_log_offset
from ssblab.store.store import Store, StoreStats

__all__ = [
    "BlobStore",
    "OutputError",
    "Received",
    "Store",
    "StoreError",
    "StoreStats",
    "TamperedRow",
    "check_output",
    "export_jsonl",
    "is_store",
    "read_jsonl",
    "read_log_offset",
    "read_source",
    "write_log_offset",
]
