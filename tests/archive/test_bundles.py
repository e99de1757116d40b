"""Bundles that fit a message: long feeds split into several Bundles (§8.1); readers pick one run of blocks (§8.2)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ssblab.archive.bundle import (
    MAX_BUNDLE_BLOCKS,
    archive_content,
    build_archives,
    check_bundle_shape,
    select_blocks,
)
from ssblab.archive.errors import ArchiveMismatch
from ssblab.archive.flat import BlockRef, Bundle, DictRef, DictSet, Sketch, build_bundle
from ssblab.archive.folder import open_archive, stored_bytes, write_archives
from ssblab.archive.verify import verify_by_rebuild, verify_fetched
from ssblab.core import Keypair, Message, create_message
from ssblab.core.encoding import encode, utf16_length
from ssblab.core.message import SIZE_LIMIT, check_shape


def _feed(count: int) -> tuple[Keypair, list[Message]]:
    keys = Keypair.generate(bytes([91]) * 32)
    out: list[Message] = []
    for i in range(count):
        out.append(create_message(keys, {"type": "post", "text": f"m{i}"}, previous=out[-1] if out else None,
                                  timestamp=10_000 + i))
    return keys, out


def _worst_message_size(blocks: int) -> int:
    """UTF-16 length of an archive message whose Bundle has ``blocks`` refs with every field at its widest."""
    h = bytes(range(32))
    widest = Sketch(2**32 - 1, 2**32 - 1, 2**64 - 1, 2**64 - 1)
    bundle = Bundle(h, tuple(BlockRef(h, widest, h, h) for _ in range(blocks)),
                    DictSet(*(DictRef(kind, h, 2**32 - 1) for kind in range(6))))
    value = {"previous": "%" + "A" * 43 + "=.sha256", "author": "@" + "A" * 43 + "=.ed25519",
             "sequence": 2**53 - 1, "timestamp": -1.2345678901234567e-300, "hash": "sha256",
             "content": archive_content(build_bundle(bundle)), "signature": "A" * 86 + "==.sig.ed25519"}
    return utf16_length(encode(value))


def test_the_bundle_limit_is_the_most_that_always_fits() -> None:
    assert _worst_message_size(MAX_BUNDLE_BLOCKS) <= SIZE_LIMIT < _worst_message_size(MAX_BUNDLE_BLOCKS + 1)


def test_a_long_feed_is_split_into_bundles_that_chain_and_fit() -> None:
    keys, feed = _feed(2 * MAX_BUNDLE_BLOCKS + 2)
    archives, _ = build_archives([feed], 2)
    assert [a.part for a in archives] == [1, 2]
    assert [len(a.bundle.blocks) for a in archives] == [MAX_BUNDLE_BLOCKS, 1]
    first, second = archives
    assert second.bundle.blocks[0].previous_blob_id == first.bundle.blocks[-1].blob_id
    assert second.bundle.blocks[0].sketch.sequence_base == 2 * MAX_BUNDLE_BLOCKS + 1
    blobs = {hashlib.sha256(b).digest(): b for a in archives for b in a.blobs()}
    known = {m.sequence: m.id for m in feed}
    head = None
    for archive in archives:
        check_bundle_shape(archive.bundle)
        assert verify_fetched(archive.bundle, blobs.get, known.get).messages == 2 * len(archive.blocks)
        assert verify_by_rebuild(archive.bundle, feed, blobs.get).blocks == len(archive.blocks)
        head = create_message(keys, archive_content(archive.bundle_blob), previous=head or feed[-1],
                              timestamp=1.5e12)
        check_shape(head)  # within the 8192-unit limit


def test_splitting_is_deterministic() -> None:
    _, feed = _feed(MAX_BUNDLE_BLOCKS + 3)
    one, _ = build_archives([feed], 1)
    two, _ = build_archives([list(feed)], 1)
    assert [a.bundle_blob for a in one] == [a.bundle_blob for a in two]
    assert len(one) == 2


def test_only_the_first_block_of_a_feed_may_not_name_a_previous_block() -> None:
    _, feed = _feed(6)
    (archive,), _ = build_archives([feed], 2)
    refs = archive.bundle.blocks
    bad = Bundle(archive.bundle.author, (BlockRef(refs[0].blob_id, refs[0].sketch, refs[1].blob_id,
                                                  refs[0].last_message_hash), *refs[1:]), archive.bundle.dictionaries)
    with pytest.raises(ArchiveMismatch, match="starts the feed"):
        check_bundle_shape(bad)


def test_readers_take_each_sequence_once_from_overlapping_builds(tmp_path: Path) -> None:
    _, feed = _feed(30)
    early, dicts = build_archives([feed[:12]], 4)
    later, _ = build_archives([feed], 8, dicts)  # other block sizes and dictionaries: overlapping blocks
    gap, _ = build_archives([feed[:4]], 4)
    (run,) = select_blocks([a.bundle for a in (*early, *later, *gap)]).values()
    starts = [(r.sketch.sequence_base, r.sketch.length) for r in run]
    assert starts == [(1, 8), (9, 8), (17, 8), (25, 6)]
    (only_early,) = select_blocks([a.bundle for a in early]).values()
    assert [r.sketch.sequence_base for r in only_early] == [1, 5, 9]
    write_archives([*early, *later], tmp_path / "a")
    archive = open_archive(tmp_path / "a")
    assert len(archive.bundles) == 2 and list(archive.runs().values()) == [run]
    assert stored_bytes(archive) == sum(map(len, {b for a in (*early, *later) for b in a.blobs()}))
