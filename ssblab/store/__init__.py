"""The durable local replica (SQLite WAL + a blob folder), what it takes in (`Received`), and ssb-db2's log
layout (`ssblab.store.db2`), which the pipeline's sources read like the other formats."""

from ssblab.store.blobs import BlobStore
from ssblab.store.db2 import is_db2, read_db2
from ssblab.store.received import Received
from ssblab.store.sources import parse_record, write_log_offset
from ssblab.store.store import Store, StoreStats, export_jsonl

__all__ = [
    "BlobStore",
    "Received",
    "Store",
    "StoreStats",
    "export_jsonl",
    "is_db2",
    "parse_record",
    "read_db2",
    "write_log_offset",
]
