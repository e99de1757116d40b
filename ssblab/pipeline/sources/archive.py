"""ssb-archive blobs as a source: blocks decoded where the split is read, verified like any other source.

Strategy: the plan reads only the Bundles (`ssblab.archive.folder.open_archive`, a few KB each), picks one run of
blocks per feed (`bundle.select_blocks`) and cuts the runs into splits of whole blocks (the split's ``block``
field lists them as JSON). Reading a split fetches its blocks from the blob folder, loads the dictionaries they
name (cached per process) and decodes them: each message becomes a record holding its rebuilt signed JSON, with
the decoder's id and content text beside it (``RawRecord.decoded``), so the facts step takes the content as
signed instead of serialising it again.

Invariants: ``pos`` numbers the archive's messages feed by feed (feeds by key), block by block, so it is the same
for every run; a block that cannot be read (missing, damaged, malformed, lacking a dictionary, or disagreeing with
its Bundle's sketch) becomes one record without data at its first position, naming the block and the fault: its
messages are absent, and the feed's chain check reports the gap.

The archive modules (numpy, pyarrow, flatbuffers) are imported when a split is planned or read, not with this
module: detection runs on every ``ssblab verify``, whose start-up must stay small.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ssblab.core.errors import SsbError
from ssblab.pipeline.splits import RawRecord, Split

__all__ = ["KIND", "Piece", "decode_piece", "detect", "is_archive", "is_archive_file", "pieces_of", "plan",
           "records"]

KIND = "archive"
MAX_ARCHIVE_FILE = 2**20  # an archive.json holds one message content: far below this


@dataclass(frozen=True, slots=True)
class Piece:
    """One block of a split: its blob id, the position of its first message, its first sequence and length."""

    ref: str
    pos: int
    sequence: int
    length: int


def is_archive_file(path: Path) -> bool:
    """A small ``*.json`` file holding an ``archive`` message content (``archive.json``)."""
    if path.suffix != ".json" or not path.is_file() or path.stat().st_size > MAX_ARCHIVE_FILE:
        return False
    try:
        content = json.loads(path.read_bytes())
    except ValueError:  # not JSON, or not UTF-8
        return False
    return isinstance(content, dict) and content.get("type") == "archive"


def is_archive(path: Path) -> bool:
    """An archive as `ssblab.archive.folder.open_archive` reads it: an ``archive*.json`` file, a folder holding
    such files or a ``blobs`` folder, or a blob folder itself (``sha256/``)."""
    if path.is_file():
        return is_archive_file(path)
    return path.is_dir() and ((path / "sha256").is_dir() or (path / "blobs" / "sha256").is_dir()
                              or any(map(is_archive_file, path.glob("archive*.json"))))


def detect(path: Path) -> Path | None:
    return path if is_archive(path) else None


def plan(path: Path, split_bytes: int, split_rows: int) -> list[Split]:
    """Whole blocks, about ``split_rows`` messages per split, in ``pos`` order (only Bundles are read)."""
    from ssblab.archive.folder import blob_ref, open_archive

    archive = open_archive(path)
    splits: list[Split] = []
    pieces: list[Piece] = []
    pos = start = 0
    for run in archive.runs().values():
        for ref in run:
            pieces.append(Piece(blob_ref(ref.blob_id), pos, ref.sketch.sequence_base, ref.sketch.length))
            pos += ref.sketch.length
            if pos - start >= split_rows:
                splits.append(_split(archive.blobs, path, start, pos, pieces))
                pieces, start = [], pos
    if pieces:
        splits.append(_split(archive.blobs, path, start, pos, pieces))
    return splits


def _split(blobs: Path, path: Path, start: int, end: int, pieces: list[Piece]) -> Split:
    listed = json.dumps([[p.ref, p.pos, p.sequence, p.length] for p in pieces])
    return Split(KIND, str(blobs), start, end, 0, str(path), listed)


def pieces_of(split: Split) -> list[Piece]:
    return [Piece(*item) for item in json.loads(split.block)]


@lru_cache(maxsize=8)
def _dictionaries(root: str, heads: Any) -> Any:
    """The chains a block names; blocks of one build share them, so each process loads them once."""
    from ssblab.archive.dictionaries import Dictionaries
    from ssblab.archive.folder import blob_ref
    from ssblab.store.blobs import BlobStore

    store = BlobStore(root)
    return Dictionaries.load(heads, lambda digest: store.get(blob_ref(digest)))


def decode_piece(root: str, piece: Piece) -> tuple[Any, Any]:
    """Fetch, check and decode one block of a split: ``(Block, Dictionaries)``.

    Raises:
        SsbError: the block is missing, damaged, malformed, lacks a dictionary or disagrees with its Bundle.
    """
    from ssblab.archive import block as blocks
    from ssblab.archive.errors import ArchiveMismatch, MissingBlob
    from ssblab.store.blobs import BlobStore

    where = f"block {piece.ref}"
    data = BlobStore(root).get(piece.ref)
    if data is None:
        raise MissingBlob(f"{where} is not in {root}")
    dicts = _dictionaries(root, blocks.block_dictionaries(data, where))
    blk = blocks.decode_block(data, dicts, where)
    if (blk.sketch.sequence_base, blk.sketch.length) != (piece.sequence, piece.length):
        raise ArchiveMismatch(f"{where}: holds sequences from {blk.sketch.sequence_base} ({blk.sketch.length} "
                              f"messages), its Bundle says from {piece.sequence} ({piece.length})")
    return blk, dicts


def records(split: Split) -> Iterator[RawRecord]:
    """Each message of the split's blocks as its rebuilt signed JSON, with the decoder's id and content."""
    from ssblab.archive import block as blocks
    from ssblab.archive.arrow import block_table

    for piece in pieces_of(split):
        try:
            blk, dicts = decode_piece(split.path, piece)
            encodings, _ = blocks.encodings(blk, dicts, f"block {piece.ref}")
            table = block_table(blk, dicts)
        except SsbError as exc:
            where = f"{split.prefix} block {piece.ref}"
            yield RawRecord(piece.pos, where, None, torn=f"archive {where} is unreadable: {exc}")
            continue
        decoded = zip(table.column("id").to_pylist(), table.column("content").to_pylist(), strict=True)
        for i, (enc, pair) in enumerate(zip(encodings, decoded, strict=True)):
            yield RawRecord(piece.pos + i, f"{split.prefix} block {piece.ref} sequence {piece.sequence + i}", enc,
                            decoded=pair)
