"""Archives on disk: the I/O shell around the pure archive modules (a blob folder and ``archive*.json`` files).

What users hold as "an archive" is what ``ssblab archive build --out DIR`` writes: ``DIR/archive.json`` (the
content of the ``archive`` message; ``archive-2.json``… for the later Bundles of a long feed, §8.1) and the blobs
in ``DIR/blobs`` (a `BlobStore`: dictionaries, blocks and the Bundles themselves). `open_archive` also accepts one
``archive*.json`` file, an output folder, or a bare blob folder (a store's ``blobs`` folder, say), whose Bundles
it finds by their ``BIP2`` identifier; `ArchiveFolder.runs` then picks what to read (`bundle.select_blocks`).

Invariants: discovery only reads (it never creates a folder); what it returns depends on the files alone, in a
fixed order (Bundles by blob id, feeds by key), so every reader of the same folder sees the same runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssblab.archive.bundle import Archive, archive_content, bundle_of, select_blocks
from ssblab.archive.dictionaries import Dictionaries
from ssblab.archive.errors import ArchiveError, MalformedArchive, MissingBlob
from ssblab.archive.fb import ssblab_archive_generated as fb
from ssblab.archive.flat import FILE_ID, BlockRef, Bundle, blob_type, read_bundle, read_dictionary
from ssblab.core.errors import SsbError
from ssblab.core.refs import b64
from ssblab.store.blobs import BlobStore

__all__ = [
    "ARCHIVE_FILE",
    "ArchiveFolder",
    "archive_file_name",
    "blob_ref",
    "is_archive_file",
    "is_blob_folder",
    "open_archive",
    "read_content",
    "stored_bytes",
    "write_archives",
]

ARCHIVE_FILE = "archive.json"
_BUNDLE_FILES = "archive*.json"


def archive_file_name(part: int) -> str:
    """``archive.json`` for a feed's first Bundle, ``archive-2.json``… for the next ones."""
    return ARCHIVE_FILE if part == 1 else f"archive-{part}.json"


def blob_ref(digest: bytes) -> str:
    return f"&{b64(digest)}.sha256"


def read_content(path: str | Path) -> Any:
    """The ``archive`` message content in an ``archive.json`` file (not yet checked: `bundle.bundle_of` does that).

    Raises:
        MalformedArchive: the file is not UTF-8 JSON (naming the file and the place).
    """
    try:
        return json.loads(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MalformedArchive(f"{path}: not UTF-8 (byte {exc.start}); an archive.json holds JSON") from None
    except json.JSONDecodeError as exc:
        raise MalformedArchive(f"{path}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None


def is_archive_file(path: Path) -> bool:
    """A small ``*.json`` file holding an ``archive`` message content."""
    if path.suffix != ".json" or not path.is_file() or path.stat().st_size > 2**20:
        return False
    try:
        content = json.loads(path.read_bytes())
    except ValueError:
        return False
    return isinstance(content, dict) and content.get("type") == "archive"


def is_blob_folder(path: Path) -> bool:
    return (path / "sha256").is_dir()


@dataclass(frozen=True)
class ArchiveFolder:
    """The Bundles found at a path and the blob folder that holds their blobs."""

    path: Path
    blobs: Path
    bundles: tuple[Bundle, ...]
    bundle_blobs: tuple[bytes, ...]

    def fetch(self, digest: bytes) -> bytes | None:
        """A blob by its sha256 (hash-checked by the `BlobStore`); None when the folder lacks it."""
        if not is_blob_folder(self.blobs):
            return None
        return BlobStore(self.blobs).get(blob_ref(digest))

    def runs(self) -> dict[bytes, list[BlockRef]]:
        """The blocks to read, one run per feed (`bundle.select_blocks`)."""
        return select_blocks(self.bundles)

    def block(self, ref: BlockRef) -> bytes:
        data = self.fetch(ref.blob_id)
        if data is None:
            raise MissingBlob(f"block {blob_ref(ref.blob_id)} is not in {self.blobs}")
        return data

    def dictionaries(self, bundle: Bundle) -> Dictionaries:
        return Dictionaries.load(bundle.dictionaries, self.fetch)


def _scan_bundles(blobs: Path) -> Iterator[bytes]:
    """The Bundle blobs of a blob folder (files whose FlatBuffer identifier is ``BIP2`` and root a Bundle)."""
    if not is_blob_folder(blobs):
        return
    store = BlobStore(blobs)
    for ref in store:
        with open(store.path(ref), "rb") as f:
            if f.read(8)[4:8] != FILE_ID:
                continue
        try:
            data = store.get(ref)
            if data is not None and blob_type(data, ref) == fb.Bip2BlobData.Bundle:
                yield data
        except (MalformedArchive, SsbError):
            continue  # damaged on disk, or merely starting like one of ours: a block is reported when read


def open_archive(path: str | Path) -> ArchiveFolder:
    """The archive at ``path`` (see the module docstring).

    Raises:
        ArchiveError: nothing there is an archive; MalformedArchive: a Bundle is unreadable.
    """
    path = Path(path)
    if path.is_file():
        if not is_archive_file(path):
            raise ArchiveError(f"{path}: not an archive message content (archive.json)")
        files, blobs = [path], path.parent / "blobs"
    elif is_blob_folder(path):
        files, blobs = [], path
    elif path.is_dir():
        files, blobs = sorted(filter(is_archive_file, path.glob(_BUNDLE_FILES))), path / "blobs"
    else:
        raise ArchiveError(f"{path}: no such archive file or folder")
    found = {bundle_of(read_content(f))[1] for f in files}
    if not path.is_file():
        found.update(_scan_bundles(blobs))
    if not found:
        raise ArchiveError(f"{path}: holds no archive Bundle (no archive.json and no Bundle blob in {blobs})")
    ordered = tuple(sorted(found, key=_sha))
    return ArchiveFolder(path, blobs, tuple(read_bundle(b, f"bundle {blob_ref(_sha(b))}") for b in ordered), ordered)


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def write_archives(archives: Sequence[Archive], out: str | Path) -> list[Path]:
    """Write every blob into ``out/blobs`` and each Bundle's message content into ``out`` (`archive_file_name`;
    with several feeds, ``archive-<feed>[-<part>].json``); returns the content files in the order of ``archives``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store = BlobStore(out / "blobs")
    several = len({a.feed for a in archives}) > 1
    written = []
    for archive in archives:
        for blob in archive.blobs():
            store.add(blob)
        name = archive_file_name(archive.part)
        if several:
            name = name.replace("archive", f"archive-{_safe(archive.feed)}", 1)
        (out / name).write_text(json.dumps(archive_content(archive.bundle_blob)) + "\n")
        written.append(out / name)
    return written


def _safe(feed: str) -> str:
    """A file-name-safe form of a feed id (base64 may hold ``/`` and ``+``)."""
    return feed[1:].split(".")[0].rstrip("=").replace("/", "_").replace("+", "-")


def stored_bytes(archive: ArchiveFolder) -> int:
    """Bytes of every blob the archive's Bundles need: the Bundles, their blocks and their dictionary chains."""
    seen = {_sha(blob): len(blob) for blob in archive.bundle_blobs}
    for bundle in archive.bundles:
        for ref in bundle.blocks:
            seen[ref.blob_id] = len(archive.block(ref))
        for head in bundle.dictionaries.by_kind():
            while head is not None and head.blob_id not in seen:
                data = archive.fetch(head.blob_id)
                if data is None:
                    raise MissingBlob(f"dictionary {blob_ref(head.blob_id)} is not in {archive.blobs}")
                seen[head.blob_id] = len(data)
                head = read_dictionary(data, blob_ref(head.blob_id))[1]
    return sum(seen.values())
