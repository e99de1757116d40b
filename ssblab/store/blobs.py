"""A content-addressed blob folder: ``blobs/sha256/<2 hex>/<62 hex>``.

Writes go to a temporary file that is renamed into place, so a blob either exists whole or not at all; reads
check the hash, so a blob damaged on disk is reported instead of served.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ssblab.core.errors import InvalidRef, SsbError
from ssblab.core.refs import b64, blob_id, parse_blob_id

__all__ = ["BlobStore"]


class BlobStore:
    def __init__(self, root: str | Path, *, create: bool = True) -> None:
        """``create`` makes the folder now (``False`` for a read-only store: `add` makes it when needed)."""
        self.root = Path(root)
        if create:
            self.root.mkdir(parents=True, exist_ok=True)

    def path(self, ref: str) -> Path:
        digest = parse_blob_id(ref).hex()
        return self.root / "sha256" / digest[:2] / digest[2:]

    def add(self, data: bytes, expected: str | None = None) -> str:
        """Store ``data``; with ``expected``, refuse bytes whose hash is another blob's id."""
        ref = blob_id(data)
        if expected is not None and expected != ref:
            raise InvalidRef(f"blob bytes hash to {ref}, not the requested {expected}")
        target = self.path(ref)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        return ref

    def has(self, ref: str) -> bool:
        return self.path(ref).exists()

    def size(self, ref: str) -> int | None:
        path = self.path(ref)
        return path.stat().st_size if path.exists() else None

    def get(self, ref: str) -> bytes | None:
        path = self.path(ref)
        if not path.exists():
            return None
        data = path.read_bytes()
        if blob_id(data) != ref:
            raise SsbError(f"blob {ref} is damaged on disk ({path})", code="blob-damaged")
        return data

    def __iter__(self) -> Iterator[str]:
        for path in sorted((self.root / "sha256").glob("??/*")):
            if not path.name.startswith(".tmp-"):
                yield "&" + b64(bytes.fromhex(path.parent.name + path.name)) + ".sha256"
