"""Verifying an announced archive, both ways the proposal describes.

* `verify_by_rebuild`: the peer has the feed's messages. It fetches only the (small) dictionaries, rebuilds every
  block from its own replica and compares the blob ids with the Bundle. Nothing is decoded, so nothing in the
  blobs needs to be trusted; a mismatch names the block and its sequences.
* `verify_fetched`: the peer does not have the messages. It fetches the blocks, checks their hashes, decodes them,
  rebuilds each message and checks what SSB itself would check: the author's ed25519 signatures, the ``previous``
  chain (inside blocks, between blocks, and to the feed where the peer knows it), the sketches and last hashes
  against the Bundle. Checks run cheap to expensive: Bundle shape, dictionaries, hashes, block headers and chain
  (`check_stored`, which ``ssblab verify ARCHIVE`` makes too), then the messages and their signatures.

Both return a `Verified` summary or raise an `ArchiveError` that names what is wrong and where.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import flatbuffers

from ssblab.archive import block as blocks
from ssblab.archive import rebuild
from ssblab.archive.bundle import check_bundle_shape
from ssblab.archive.dictionaries import Dictionaries, Fetch
from ssblab.archive.errors import ArchiveMismatch, MissingBlob, MissingDictionary, NotArchivable
from ssblab.archive.flat import BlockRef, Bundle
from ssblab.core import ed25519
from ssblab.core.encoding import strip_signature
from ssblab.core.errors import SsbError
from ssblab.core.message import Message, verify_message
from ssblab.core.refs import b64, parse_message_id

__all__ = ["Known", "Verified", "check_stored", "verify_by_rebuild", "verify_fetched"]

Known = Callable[[int], str | None]  # the id of the feed's message at a sequence, when the verifier has it


@dataclass(frozen=True)
class Verified:
    feed: str
    blocks: int
    messages: int
    first_sequence: int
    last_sequence: int
    last_id: str


def _summary(bundle: Bundle) -> Verified:
    first, last = bundle.blocks[0].sketch, bundle.blocks[-1].sketch
    return Verified(
        feed=f"@{b64(bundle.author)}.ed25519",
        blocks=len(bundle.blocks),
        messages=sum(ref.sketch.length for ref in bundle.blocks),
        first_sequence=first.sequence_base,
        last_sequence=last.sequence_base + last.length - 1,
        last_id=blocks.message_ref(bundle.blocks[-1].last_message_hash),
    )


def _span(i: int, ref: BlockRef) -> str:
    return f"block {i} (sequences {ref.sketch.sequence_base}..{ref.sketch.sequence_base + ref.sketch.length - 1})"


def verify_by_rebuild(bundle: Bundle, feed: Sequence[Message], fetch: Fetch) -> Verified:
    """Rebuild every block of ``bundle`` from ``feed`` (the verifier's own, validated replica) and compare ids."""
    check_bundle_shape(bundle)
    dicts = Dictionaries.load(bundle.dictionaries, fetch)
    by_sequence = {m.sequence: m for m in feed if m.author == f"@{b64(bundle.author)}.ed25519"}
    builder = flatbuffers.Builder(1 << 16)
    for i, ref in enumerate(bundle.blocks):
        seqs = range(ref.sketch.sequence_base, ref.sketch.sequence_base + ref.sketch.length)
        missing = [s for s in seqs if s not in by_sequence]
        if missing:
            raise ArchiveMismatch(f"{_span(i, ref)}: the feed lacks sequence {missing[0]}; verify the fetched blobs")
        try:
            data = blocks.encode_block(blocks.plan([by_sequence[s] for s in seqs]), dicts, builder)
        except (MissingDictionary, NotArchivable) as exc:
            raise ArchiveMismatch(f"{_span(i, ref)}: the feed does not fit the Bundle ({exc})") from None
        rebuilt = hashlib.sha256(data).digest()
        if rebuilt != ref.blob_id:
            ours, theirs = f"&{b64(rebuilt)}.sha256", f"&{b64(ref.blob_id)}.sha256"
            raise ArchiveMismatch(f"{_span(i, ref)}: rebuilt blob {ours} differs from the Bundle's {theirs}")
    return _summary(bundle)


def check_stored(bundle: Bundle, fetch: Fetch, known: Known = lambda _: None, *,
                 skip_unavailable: bool = False) -> Dictionaries:
    """What both verifiers of an archive require before any message is judged (``ssblab archive verify`` through
    `verify_fetched`, and ``ssblab verify ARCHIVE`` through the pipeline's reader, so the two agree).

    The Bundle's shape; every dictionary chain it names, whole and intact (even entries no block uses); and every
    block: present, hashing to its id, coded with the Bundle's dictionaries, its header (sketch, author, last
    message hash) the Bundle's, continuing the chain of the block before. Only block headers are read.

    Args:
        bundle: the Bundle.
        fetch: blobs by sha256 (``None`` when missing).
        known: the id of the verifier's own message at a sequence, to tie the first block to the feed.
        skip_unavailable: pass over a block that is missing or damaged on disk (the pipeline reports it as an
            invalid record of its own, and the other feeds go on).

    Returns:
        The Bundle's dictionaries.

    Raises:
        SsbError: the first fault, naming the block (or dictionary) and what is wrong: an `ArchiveError`, or the
            blob store's ``blob-damaged``.
    """
    check_bundle_shape(bundle)
    dicts = Dictionaries.load(bundle.dictionaries, fetch)
    first = bundle.blocks[0].sketch.sequence_base
    previous: bytes | None = None if first == 1 else _known_digest(known, first - 1)
    for i, ref in enumerate(bundle.blocks):
        where = _span(i, ref)
        try:
            data = _fetch_block(ref, fetch, where)
        except SsbError:  # MissingBlob, ArchiveMismatch, or the blob store's blob-damaged
            if not skip_unavailable:
                raise
        else:
            raw = blocks.read_raw_block(data, where)
            if raw.dictionaries != dicts.heads:
                raise ArchiveMismatch(f"{where}: coded with other dictionaries than the Bundle names")
            _check_block_header(raw, ref, bundle, previous, first, where)
        previous = ref.last_message_hash
    return dicts


def _fetch_block(ref: BlockRef, fetch: Fetch, where: str) -> bytes:
    data = fetch(ref.blob_id)
    if data is None:
        raise MissingBlob(f"{where}: blob &{b64(ref.blob_id)}.sha256 is not available")
    if hashlib.sha256(data).digest() != ref.blob_id:
        raise ArchiveMismatch(f"{where}: the fetched bytes hash to another blob id")
    return data


def verify_fetched(
    bundle: Bundle, fetch: Fetch, known: Known = lambda _: None, hmac_key: bytes | None = None
) -> Verified:
    """Fetch, decode and check every block of ``bundle`` (see the module docstring): `check_stored`, then every
    message."""
    dicts = check_stored(bundle, fetch, known)
    for i, ref in enumerate(bundle.blocks):
        where = _span(i, ref)
        blk = blocks.decode_block(_fetch_block(ref, fetch, where), dicts, where)
        encodings, ids = rebuild.encodings(blk, dicts, where)
        _check_messages(blk, encodings, ids, where, hmac_key)
        for offset in range(blk.sketch.length):
            seen = known(blk.sketch.sequence_base + offset)
            if seen is not None and seen != blocks.message_ref(ids[offset]):
                raise ArchiveMismatch(f"{where}: sequence {blk.sketch.sequence_base + offset} differs from the feed")
        if ids[-1] != ref.last_message_hash:
            raise ArchiveMismatch(f"{where}: the last rebuilt message is not the Bundle's last message hash")
    return _summary(bundle)


def _known_digest(known: Known, sequence: int) -> bytes | None:
    ident = known(sequence)
    return None if ident is None else parse_message_id(ident)


def _check_block_header(
    blk: blocks.Block | blocks.RawBlock, ref: BlockRef, bundle: Bundle, previous: bytes | None, first: int, where: str
) -> None:
    if blk.sketch != ref.sketch:
        raise ArchiveMismatch(f"{where}: the block's sketch differs from the Bundle's")
    if blk.author != bundle.author:
        raise ArchiveMismatch(f"{where}: the block belongs to another feed than the Bundle")
    if blk.last_hash != ref.last_message_hash:
        raise ArchiveMismatch(f"{where}: the block's last message hash differs from the Bundle's")
    if blk.sketch.sequence_base == 1 and blk.previous is not None:
        raise ArchiveMismatch(f"{where}: the first message of a feed names a previous message")
    must_match = blk.sketch.sequence_base > first or previous is not None
    if blk.sketch.sequence_base > 1 and must_match and blk.previous != previous:
        raise ArchiveMismatch(f"{where}: does not continue the chain (previous is not the message before)")


def _check_messages(
    blk: blocks.Block, encodings: list[bytes], ids: list[bytes], where: str, hmac_key: bytes | None
) -> None:
    public = blk.author
    author = f"@{b64(public)}.ed25519"
    sig_ids = blk.signature_ids.tolist()
    for i, enc in enumerate(encodings):
        sequence = blk.sketch.sequence_base + i
        if sig_ids[i] == 0:
            _check_verbatim(enc, author, sequence, ids[i - 1] if i else blk.previous, hmac_key, where)
            continue
        signed = strip_signature(enc) or b""
        data = signed if hmac_key is None else hmac.new(hmac_key, signed, "sha512").digest()[:32]
        if not signed or not ed25519.verify(public, data, blk.signatures[64 * i : 64 * i + 64]):
            raise ArchiveMismatch(f"{where}: sequence {sequence} fails its ed25519 signature")


def _check_verbatim(
    enc: bytes, author: str, sequence: int, previous: bytes | None, hmac_key: bytes | None, where: str
) -> None:
    """A message stored whole: it must be a valid message at this place of the feed."""
    try:
        msg = Message.from_json(enc)
        verify_message(msg.value, hmac_key)
    except SsbError as exc:
        raise ArchiveMismatch(f"{where}: sequence {sequence} is not a valid message: {exc}") from None
    expected_previous = None if previous is None else blocks.message_ref(previous)
    if msg.encoded != enc or msg.author != author or msg.sequence != sequence or msg.previous != expected_previous:
        raise ArchiveMismatch(f"{where}: sequence {sequence} is not the feed's message at that place")
