"""Archives of whole feeds: blocks, shared dictionaries, the Bundle and the ``archive`` message that announces it.

Strategy (docs/archive-format.md §8): `build_archives` cuts each feed into blocks of ``block_size`` consecutive
messages, extends the dictionaries once for all of them (so feeds built together share every chain), encodes
the blocks and lists them in Bundles, each block linked to the one before. The Bundle blob travels inline,
base64, in the content of an ``archive`` message that the feed owner publishes; clients that do not know the type
ignore it like any other. A message holds at most 8192 UTF-16 units, so a Bundle lists at most
`MAX_BUNDLE_BLOCKS` blocks and a feed with more is announced by several Bundles (§8.1), the first block of each
naming the last block of the Bundle before. `select_blocks` is the reader's side: from any set of Bundles (a
folder may hold several builds of a feed) it picks one run of blocks per feed, in sequence order (§8.2).

Invariant: the same feeds, block size and starting dictionaries always give the same blobs, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import flatbuffers

from ssblab.archive import block as blocks
from ssblab.archive.dictionaries import Dictionaries
from ssblab.archive.errors import ArchiveMismatch, MalformedArchive, NotArchivable
from ssblab.archive.flat import BlockRef, Bundle, build_bundle, read_bundle
from ssblab.core.message import Message
from ssblab.core.refs import parse_feed_id, parse_message_id

__all__ = [
    "ARCHIVE_TYPE", "DEFAULT_BLOCK_SIZE", "FORMAT", "MAX_BUNDLE_BLOCKS", "Archive", "archive_content",
    "build_archives", "bundle_of", "check_bundle_shape", "select_blocks",
]

ARCHIVE_TYPE = "archive"
FORMAT = "ssblab-bipf2/1"
DEFAULT_BLOCK_SIZE = 8192
# The most blocks whose Bundle fits an archive message in the worst case (every dictionary named, every number at
# its widest, any sequence and timestamp of the announcing message): 38 give 8137 UTF-16 units, 39 give 8329.
MAX_BUNDLE_BLOCKS = 38


@dataclass(frozen=True)
class Archive:
    """One Bundle of a feed's archive and the blobs it needs (the dictionary blobs are shared by a build).

    ``part`` counts a feed's Bundles from 1; a feed of more than `MAX_BUNDLE_BLOCKS` blocks has several.
    """

    feed: str
    bundle: Bundle
    bundle_blob: bytes
    blocks: tuple[bytes, ...]
    dictionaries: tuple[bytes, ...]
    part: int = 1

    def blobs(self) -> list[bytes]:
        """Every blob to publish: dictionaries, blocks, and the Bundle itself."""
        return [*self.dictionaries, *self.blocks, self.bundle_blob]


def _cut(feed: Sequence[Message], block_size: int) -> list[blocks.Planned]:
    if block_size < 1:
        raise NotArchivable(f"block size must be at least 1, got {block_size}")
    if 0 < len(feed) <= block_size:  # one block: no copy of the feed's list (a young list of old messages, which
        return [blocks.plan(feed)]  # each garbage collection meanwhile would visit one by one)
    return [blocks.plan(feed[i : i + block_size]) for i in range(0, len(feed), block_size)]


def build_archives(
    feeds: Sequence[Sequence[Message]],
    block_size: int = DEFAULT_BLOCK_SIZE,
    dictionaries: Dictionaries | None = None,
) -> tuple[list[Archive], Dictionaries]:
    """Archive each feed (consecutive messages of one author each), sharing one extension of the dictionaries.

    Returns:
        One `Archive` per Bundle (feeds in the order given, each feed's Bundles in sequence order), and the
        extended dictionaries (to chain the next build from).

    Raises:
        NotArchivable: an empty feed, a feed with gaps or two authors, a block size below 1.
    """
    base = dictionaries or Dictionaries()
    planned = [_cut(feed, block_size) for feed in feeds]
    if any(not p for p in planned):
        raise NotArchivable("cannot archive an empty feed")
    dicts, dict_blobs = base.extended(blocks.new_entries([b for p in planned for b in p], base))
    archives, builder = [], flatbuffers.Builder(1 << 16)
    planned.reverse()
    while planned:  # each feed's planned blocks let go of once coded: the blobs take their memory
        feed_blocks = planned.pop()
        coded = tuple(blocks.encode_block(b, dicts, builder) for b in feed_blocks)
        refs: list[BlockRef] = []
        for planned_block, data in zip(feed_blocks, coded, strict=True):
            refs.append(_ref(planned_block, data, refs[-1].blob_id if refs else None))
        author = feed_blocks[0].messages[0].author
        for part, start in enumerate(range(0, len(refs), MAX_BUNDLE_BLOCKS), 1):
            end = start + MAX_BUNDLE_BLOCKS
            bundle = Bundle(parse_feed_id(author), tuple(refs[start:end]), dicts.heads)
            archives.append(Archive(author, bundle, build_bundle(bundle), coded[start:end], tuple(dict_blobs), part))
    return archives, dicts


def _ref(planned: blocks.Planned, data: bytes, previous: bytes | None) -> BlockRef:
    sketch = blocks.decode_sketch(data)
    return BlockRef(hashlib.sha256(data).digest(), sketch, previous, parse_message_id(planned.messages[-1].id))


def archive_content(bundle_blob: bytes) -> dict[str, Any]:
    """The content of the ``archive`` message announcing a Bundle."""
    return {"type": ARCHIVE_TYPE, "format": FORMAT, "bundle": base64.b64encode(bundle_blob).decode()}


def bundle_of(content: Any) -> tuple[Bundle, bytes]:
    """The Bundle carried by an ``archive`` message's content (and its blob bytes).

    Raises:
        MalformedArchive: not an archive content of this format, bad base64, or a bad Bundle.
    """
    if not isinstance(content, dict) or content.get("type") != ARCHIVE_TYPE:
        raise MalformedArchive("not an archive message content")
    if content.get("format") != FORMAT or not isinstance(content.get("bundle"), str):
        raise MalformedArchive(f"archive content: format {content.get('format')!r}, expected {FORMAT!r} with a bundle")
    try:
        blob = base64.b64decode(content["bundle"], validate=True)
    except (binascii.Error, ValueError):
        raise MalformedArchive("archive content: the bundle is not base64") from None
    return read_bundle(blob), blob


def check_bundle_shape(bundle: Bundle) -> None:
    """Blocks in sequence order with no gap, each naming the one before (the first names the last block of the
    feed's Bundle before, or nothing when it starts the feed)."""
    expected_seq, previous = None, None
    for i, ref in enumerate(bundle.blocks):
        where = f"bundle block {i}"
        if i == 0 and ref.sketch.sequence_base == 1 and ref.previous_blob_id is not None:
            raise ArchiveMismatch(f"{where}: starts the feed but names a previous block")
        if i > 0 and ref.previous_blob_id != previous:
            raise ArchiveMismatch(f"{where}: names another previous block than the one before it")
        if expected_seq is not None and ref.sketch.sequence_base != expected_seq:
            raise ArchiveMismatch(f"{where}: starts at sequence {ref.sketch.sequence_base}, not {expected_seq}")
        if ref.sketch.length < 1 or ref.sketch.sequence_base < 1:
            raise MalformedArchive(f"{where}: empty block or sequence below 1")
        expected_seq, previous = ref.sketch.sequence_base + ref.sketch.length, ref.blob_id
    if not bundle.blocks:
        raise MalformedArchive("bundle without blocks")


def select_blocks(bundles: Iterable[Bundle]) -> dict[bytes, list[BlockRef]]:
    """One run of blocks per feed (keyed by the author's key, in key order) from any set of Bundles (§8.2).

    Builds of one feed overlap when a folder holds several of them: each sequence is read from one block only.
    Going up the sequences from the lowest block start, the next block is the longest of those that start
    right after the blocks taken (ties to the smaller blob id); a block that starts inside them is left out, and
    when none starts right after, the run resumes at the lowest later start (the gap is the feed's, for its
    verifier to report).
    """
    by_feed: dict[bytes, set[BlockRef]] = {}
    for bundle in bundles:
        by_feed.setdefault(bundle.author, set()).update(bundle.blocks)
    chosen = {}
    for author in sorted(by_feed):
        refs = sorted(by_feed[author], key=lambda r: (r.sketch.sequence_base, -r.sketch.length, r.blob_id))
        run: list[BlockRef] = []
        for ref in refs:
            after = run[-1].sketch.sequence_base + run[-1].sketch.length if run else 0
            if ref.sketch.sequence_base >= after:
                run.append(ref)
        chosen[author] = run
    return chosen
