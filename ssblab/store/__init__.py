"""The durable local replica (SQLite WAL + a blob folder), what it takes in (`Received`), and ssb-db2's log
layout (`ssblab.store.db2`), which the pipeline's sources read like the other formats."""

from ssblab.store.blobs import BlobStore
from ssblab.store.db import StoreError, is_store
from ssblab.store.db2 import is_db2, read_db2
from ssblab.store.export import TamperedRow, export_jsonl
from ssblab.store.guard import OutputError, check_output
from ssblab.store.received import Received
from ssblab.store.sources import parse_record, write_log_offset
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
    "is_db2",
    "is_store",
    "parse_record",
    "read_db2",
    "write_log_offset",
]
