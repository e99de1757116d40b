"""The same messages' size in each format: JSONL, JSONL with zstd, the Parquet ``messages`` table, the archive.

This is how docs/archive-format.md §12 compares them (the figures there come from ``bench/archive.py`` at scale);
notebooks call `format_sizes` on their own data. It reads files and compresses in memory, so it is an I/O helper
beside the pure archive modules; pyarrow does the zstd.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ssblab.archive.folder import open_archive, stored_bytes

__all__ = ["ZSTD_LEVEL", "format_sizes", "parquet_bytes", "zstd_bytes"]

ZSTD_LEVEL = 3  # zstd's default level: what `zstd FILE` gives


def zstd_bytes(path: str | Path, level: int = ZSTD_LEVEL) -> int:
    """Bytes of ``path`` compressed with zstd at ``level`` (one frame, in memory)."""
    import pyarrow as pa

    return len(pa.Codec("zstd", compression_level=level).compress(Path(path).read_bytes(), asbytes=True))


def parquet_bytes(folder: str | Path) -> int:
    """Bytes of the Parquet files under ``folder`` (one table of a dataset)."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*.parquet"))


def format_sizes(jsonl: str | Path, messages_parquet: str | Path, archive: str | Path) -> list[dict[str, Any]]:
    """``[{"format", "bytes", "of_jsonl"}]`` for the same messages as JSONL, JSONL + zstd, the Parquet
    ``messages`` table and the archive (every blob its Bundles need, counted once)."""
    jsonl_size = Path(jsonl).stat().st_size
    sizes = {
        "JSONL": jsonl_size,
        f"JSONL + zstd {ZSTD_LEVEL}": zstd_bytes(jsonl),
        "Parquet messages (zstd)": parquet_bytes(messages_parquet),
        "archive (ssb-bipf2 blobs)": stored_bytes(open_archive(archive)),
    }
    return [{"format": name, "bytes": size, "of_jsonl": size / jsonl_size} for name, size in sizes.items()]
