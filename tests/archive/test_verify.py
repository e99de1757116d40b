"""Verification both ways, and every kind of bad input named by a clear error."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from ssblab.archive import block as blocks
from ssblab.archive import rebuild
from ssblab.archive.bundle import Archive, archive_content, build_archives, bundle_of
from ssblab.archive.errors import ArchiveMismatch, MalformedArchive, MissingBlob, MissingDictionary
from ssblab.archive.flat import build_bundle
from ssblab.archive.verify import verify_by_rebuild, verify_fetched
from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message


@pytest.fixture(scope="module")
def built(feeds: list[list[Message]]) -> tuple[list[Archive], dict[bytes, bytes]]:
    archives, _ = build_archives(feeds, 100)
    store = {hashlib.sha256(b).digest(): b for a in archives for b in a.blobs()}
    return archives, store


def test_both_ways_accept_a_good_archive(feeds: list[list[Message]], built: tuple[list[Archive], dict]) -> None:
    archives, store = built
    for archive, feed in zip(archives, feeds, strict=True):
        bundle, _ = bundle_of(archive_content(archive.bundle_blob))
        by_rebuild = verify_by_rebuild(bundle, feed, store.get)
        fetched = verify_fetched(bundle, store.get, known={m.sequence: m.id for m in feed[-3:]}.get)
        assert by_rebuild == fetched
        assert (fetched.messages, fetched.last_sequence, fetched.last_id) == (len(feed), feed[-1].sequence, feed[-1].id)


def test_rebuild_detects_a_feed_that_differs(feeds: list[list[Message]], built: tuple[list[Archive], dict]) -> None:
    archives, store = built
    other = Keypair.generate(bytes(32))
    forged = list(feeds[0])
    forged[5] = create_message(other, {"type": "post", "text": "x"}, timestamp=1)
    with pytest.raises(ArchiveMismatch, match=r"block 0 .*lacks sequence 6"):
        verify_by_rebuild(archives[0].bundle, forged, store.get)
    edited = list(feeds[0])
    edited[4] = create_message(other, {"type": "brand-new-type"}, timestamp=1)  # fits no dictionary entry
    edited[4] = type(edited[4])(
        {**edited[4].value, "author": feeds[0][4].author, "sequence": 5}, edited[4].encoded, edited[4].id
    )
    with pytest.raises(ArchiveMismatch, match="does not fit the Bundle"):
        verify_by_rebuild(archives[0].bundle, edited, store.get)
    shorter = feeds[0][:150]
    with pytest.raises(ArchiveMismatch, match="lacks sequence 151"):
        verify_by_rebuild(archives[0].bundle, shorter, store.get)


def test_rebuild_detects_a_bundle_that_lies(feeds: list[list[Message]], built: tuple[list[Archive], dict]) -> None:
    archives, store = built
    bundle = archives[0].bundle
    refs = list(bundle.blocks)
    refs[2] = replace(refs[2], previous_blob_id=bytes(32))
    with pytest.raises(ArchiveMismatch, match="previous block"):
        verify_fetched(replace(bundle, blocks=tuple(refs)), store.get)
    refs[1] = replace(refs[1], blob_id=bytes(32))
    lying = replace(bundle, blocks=tuple(refs[:2]))
    with pytest.raises(ArchiveMismatch, match=r"block 1 \(sequences 101..200\): rebuilt blob"):
        verify_by_rebuild(lying, feeds[0], store.get)


def test_fetched_detects_missing_and_tampered_blobs(built: tuple[list[Archive], dict]) -> None:
    archives, store = built
    bundle = archives[0].bundle
    missing_block = {k: v for k, v in store.items() if k != bundle.blocks[1].blob_id}
    with pytest.raises(MissingBlob, match="block 1"):
        verify_fetched(bundle, missing_block.get)
    missing_dict = {k: v for k, v in store.items() if k != bundle.dictionaries.skeletons.blob_id}
    with pytest.raises(MissingDictionary, match="skeletons dictionary"):
        verify_fetched(bundle, missing_dict.get)
    tampered = dict(store)
    data = bytearray(store[bundle.blocks[0].blob_id])
    data[-40] ^= 1
    tampered[bundle.blocks[0].blob_id] = bytes(data)
    with pytest.raises(ArchiveMismatch, match="hash to another blob id"):
        verify_fetched(bundle, tampered.get)


def test_fetched_checks_signatures_even_when_hashes_agree(built: tuple[list[Archive], dict]) -> None:
    """A malicious owner can publish blobs whose hashes match its Bundle: signatures still have to verify."""
    archives, store = built
    archive = archives[0]
    blk = blocks.decode_block(archive.blocks[0], _dicts(archive, store))
    sigs = bytearray(blk.signatures)
    sigs[64 * 3] ^= 1
    forged = replace(blk, signatures=bytes(sigs))
    with pytest.raises(ArchiveMismatch, match="sequence 4 fails its ed25519 signature"):
        from ssblab.archive.verify import _check_messages

        _check_messages(forged, *rebuild.encodings(forged, _dicts(archive, store)), "block 0", None)


def test_fetched_checks_the_chain_to_the_known_feed(
    feeds: list[list[Message]], built: tuple[list[Archive], dict]
) -> None:
    archives, store = built
    known = {m.sequence: m.id for m in feeds[0]}
    known[7] = feeds[1][0].id
    with pytest.raises(ArchiveMismatch, match="sequence 7 differs from the feed"):
        verify_fetched(archives[0].bundle, store.get, known=known.get)


def test_bundle_content_errors() -> None:
    with pytest.raises(MalformedArchive, match="not an archive"):
        bundle_of({"type": "post"})
    with pytest.raises(MalformedArchive, match="format"):
        bundle_of({"type": "archive", "format": "other", "bundle": ""})
    with pytest.raises(MalformedArchive, match="not base64"):
        bundle_of({"type": "archive", "format": "ssblab-bipf2/1", "bundle": "!!"})
    with pytest.raises(MalformedArchive, match="identifier"):
        bundle_of({"type": "archive", "format": "ssblab-bipf2/1", "bundle": "AAAA"})


def test_a_block_is_not_a_bundle(built: tuple[list[Archive], dict]) -> None:
    archives, _ = built
    from ssblab.archive.flat import read_bundle

    with pytest.raises(MalformedArchive, match="holds a MessageBlock, expected a Bundle"):
        read_bundle(archives[0].blocks[0])
    assert read_bundle(build_bundle(archives[0].bundle)) == archives[0].bundle


def test_archive_message_is_an_ordinary_message(built: tuple[list[Archive], dict]) -> None:
    archives, _ = built
    owner = Keypair.generate(bytes(32))
    msg = create_message(owner, archive_content(archives[-1].bundle_blob), timestamp=5)
    assert bundle_of(Message.from_json(msg.encoded).content)[1] == archives[-1].bundle_blob


def _dicts(archive: Archive, store: dict[bytes, bytes]):  # type: ignore[no-untyped-def]
    from ssblab.archive.dictionaries import Dictionaries

    return Dictionaries.load(archive.bundle.dictionaries, store.get)
