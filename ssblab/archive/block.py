"""MessageBlock blobs: consecutive messages of one feed, coded column by column, rebuilt byte for byte.

Strategy (docs/archive-format.md §5): `plan` reads each message's envelope (`envelope.split`), flattens its
content and names the dictionary entries the block needs (with `_speedups`, one C pass that reads most envelopes
off the encoding alone); `encode_block` writes the columns (timestamp deltas, types, object signatures,
ed25519 signatures, token-coded content) against dictionaries that already hold them, so a block is a pure
function of (messages, dictionaries). `decode_block` reads the columns back with every length and id checked
(`rebuild` then rebuilds each message's signed JSON and id from them).

Invariant: for every message ``m`` of a block, the rebuilt encoding equals ``m.encoded``; a hostile blob either
decodes to columns that agree with each other or raises an `ArchiveError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import flatbuffers
import flatbuffers.flexbuffers as flex
import numpy as np
import numpy.typing as npt

from ssblab.archive import svb, text
from ssblab.archive.compiled import speedups
from ssblab.archive.dictionaries import KEYS, PATHS, SIGNATURES, SKELETONS, TOKENS, TYPES, Dictionaries
from ssblab.archive.envelope import MAX_TIMESTAMP, split_block
from ssblab.archive.errors import MalformedArchive, MissingDictionary, NotArchivable
from ssblab.archive.fb import ssblab_archive_generated as fb
from ssblab.archive.flat import (
    DictRef,
    DictSet,
    RawRuns,
    Sketch,
    chain_heads,
    dict_set_of,
    expand_runs,
    finish,
    guarded,
    open_blob,
    put_dict_set,
    put_hash,
    put_rle,
    put_sketch,
    put_svb,
    read_bytes,
    read_dict_set,
    read_hash,
    read_runs,
    read_sketch,
    read_svb,
)
from ssblab.archive.pieces import Pieces
from ssblab.archive.text import KEYS_AS_DATA
from ssblab.core.message import Message
from ssblab.core.refs import b64, parse_feed_id, parse_message_id

__all__ = [
    "KEYS_AS_DATA_UTF8", "SHARED_MIN", "Block", "Coded", "Planned", "RawBlock", "block_dictionaries",
    "decode_block", "decode_sketch", "encode_block", "message_ref", "new_entries", "plan", "read_raw_block",
]

KEYS_AS_DATA_UTF8 = frozenset(k.encode() for k in KEYS_AS_DATA)  # types as the envelopes hold them
SHARED_MIN = 4  # bytes of kind + payload above which a token repeated across blocks joins the TOKEN dictionary


@dataclass(frozen=True, slots=True)
class Coded:
    """A column of repeated values: the distinct ones, first met first, and each row's index into them."""

    values: list[Any]
    index: npt.NDArray[np.int64]

    @classmethod
    def of(cls, column: Sequence[Any]) -> Coded:
        places: dict[Any, int] = {}
        index = np.fromiter((places.setdefault(v, len(places)) for v in column), np.int64, len(column))
        return cls(list(places), index)


@dataclass(frozen=True, slots=True)
class Planned:
    """A block's messages, their envelope columns and flattened contents: what coding the block needs."""

    messages: Sequence[Message]
    timestamps: npt.NDArray[np.int64]  # a verbatim row repeats the row before (0 first)
    signatures: bytes  # 64 bytes a message, zeros when verbatim
    orders: Coded  # each message's envelope key order; None when stored verbatim
    types: Coded  # each content's type as UTF-8 (lone surrogates kept); None when there is none
    skeletons: Coded  # each content's skeleton
    tokens: text.Tokens  # the leaves cut by `text.TOKEN`, once for both the dictionaries and the coding


@dataclass(frozen=True, slots=True)
class Block:
    """The decoded columns of a MessageBlock."""

    sketch: Sketch
    author: bytes
    previous: bytes | None
    last_hash: bytes
    timestamps: npt.NDArray[np.int64]
    type_ids: npt.NDArray[np.uint64]
    signature_ids: npt.NDArray[np.uint64]
    signatures: bytes
    contents: bytes
    offsets: npt.NDArray[np.int64]
    plain: npt.NDArray[np.int64]  # the length of each content's ASCII start (text.decode_column)
    dictionaries: DictSet


def plan(messages: Sequence[Message]) -> Planned:
    """Check that ``messages`` are consecutive messages of one feed, split their envelopes and flatten their
    contents."""
    if not messages:
        raise NotArchivable("a block needs at least one message")
    author, first = messages[0].author, messages[0].sequence
    if not isinstance(author, str) or type(first) is not int or first < 1:
        raise NotArchivable("the first message has no usable author or sequence")
    previous = messages[0].previous if isinstance(messages[0].previous, str) else None
    compiled = speedups()
    if compiled is not None:  # one pass in C; None: something the route below reports
        listed = messages if isinstance(messages, list) else list(messages)
        done = compiled.plan_block(listed, author, previous, first, KEYS_AS_DATA_UTF8)
        if done is not None:
            stamps, signatures, orders, order_at, types, type_at, skeletons, skeleton_at, *tokens = done
            distinct, offsets, hashes, stream = tokens
            return Planned(
                messages, _int64s(stamps), signatures, Coded(orders, _int64s(order_at)), Coded(types, _int64s(type_at)),
                Coded(skeletons, _int64s(skeleton_at)),
                text.Tokens(Pieces(distinct, _int64s(offsets)), np.frombuffer(stream, np.uint32), _int64s(hashes)),
            )  # fmt: skip
    envelopes = split_block(messages, author, previous, first)
    keys_as_data = [
        order is not None and kind in KEYS_AS_DATA_UTF8
        for order, kind in zip(envelopes.orders, envelopes.types, strict=True)
    ]
    skeletons, tokens = text.flatten_block(envelopes.contents, keys_as_data)
    return Planned(
        messages, envelopes.timestamps, envelopes.signatures, Coded.of(envelopes.orders), Coded.of(envelopes.types),
        Coded.of(skeletons), tokens,
    )  # fmt: skip


def _int64s(data: bytes) -> npt.NDArray[np.int64]:
    return np.frombuffer(data, np.int64)


def new_entries(blocks: Sequence[Planned], dicts: Dictionaries) -> list[list[object]]:
    """The entries ``blocks`` need that ``dicts`` lacks, per kind, in the order first met.

    A content token becomes a shared TOKEN entry when it occurs in two or more of ``blocks``, is not shared yet,
    and its payload has at least `SHARED_MIN` bytes (shorter ones cost as much as the reference).
    """
    new: list[dict[object, int]] = [{} for _ in dicts.chains]

    def ident(kind: int, entry: object) -> int:
        known = dicts.id_of(kind, entry)
        if known is not None:
            return known
        return len(dicts.chains[kind].entries) + new[kind].setdefault(entry, len(new[kind]))

    for block in blocks:
        for kind in block.types.values:
            if kind is not None:
                ident(TYPES, kind)
        for order in block.orders.values:
            if order is not None:
                ident(SIGNATURES, tuple(ident(PATHS, (ident(KEYS, key.encode()),)) for key in order))
    shapes = dicts.chains[SKELETONS].index  # a few hundred a block: looked up without a call each
    new[SKELETONS] = dict.fromkeys((s for block in blocks for s in block.skeletons.values if s not in shapes), 0)
    entries: list[list[object]] = [list(d) for d in new]
    entries[TOKENS] = [*_shared_candidates(blocks, dicts.chains[TOKENS].shared.index)]
    return entries


def _shared_candidates(blocks: Sequence[Planned], known: dict[bytes, int]) -> list[bytes]:
    """The new TOKEN entries, each once: the tokens repeated are distinct, and a token's entry gives it back."""
    repeated = [tok for tok in text.repeated([block.tokens for block in blocks]) if tok not in known]
    return [e for e in text.shared_entries(repeated) if len(e) > SHARED_MIN]


def _column_ids(block: Planned, dicts: Dictionaries) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each message's type id and object signature id (dictionary id + 1; 0 for none, or verbatim)."""

    def need(kind: int, entry: object) -> int:
        found = dicts.id_of(kind, entry)
        if found is None:
            raise MissingDictionary(f"the dictionaries lack the entry {entry!r}: extend them first (new_entries)")
        return found

    type_ids = [0 if t is None else need(TYPES, t) + 1 for t in block.types.values]
    sig_ids = [
        0 if o is None else need(SIGNATURES, tuple(need(PATHS, (need(KEYS, k.encode()),)) for k in o)) + 1
        for o in block.orders.values
    ]
    return np.array(type_ids, np.int64)[block.types.index], np.array(sig_ids, np.int64)[block.orders.index]


def _flex_messages(column: text.TextColumn) -> bytes:
    parts = column.parts()
    builder = flex.Builder()
    with builder.Vector():
        for part in parts:
            builder.Blob(part)
    return bytes(builder.Finish())


def encode_block(block: Planned, dicts: Dictionaries, builder: flatbuffers.Builder | None = None) -> bytes:
    """The MessageBlock blob of ``block`` coded with ``dicts`` (which must hold every entry it needs).

    ``builder``: one to reuse (cleared first), so that a build of many blocks allocates its buffer once.
    """
    types, sigs = _column_ids(block, dicts)
    column = _content_column(block, dicts)
    msgs, stamps = block.messages, block.timestamps
    first = msgs[0]
    hashes = (
        parse_feed_id(first.author),
        parse_message_id(first.previous) if isinstance(first.previous, str) else None,
        parse_message_id(msgs[-1].id),
    )
    compiled = speedups()
    if compiled is not None:  # the same bytes, assembled in C; None: a field overflows, for the builder to report
        blob = compiled.block_blob(
            first.sequence, stamps, types, sigs, block.signatures, *hashes, tuple(column.parts()),
            chain_heads(dicts.heads),
        )  # fmt: skip
        if blob is not None:
            return blob  # type: ignore[no-any-return]
    deltas = svb.zigzag(np.concatenate(([0], stamps[1:] - stamps[:-1])).astype(np.int64))
    if builder is None:
        builder = flatbuffers.Builder(1 << 16)
    builder.Clear()
    sketch_at = put_sketch(builder, Sketch(len(msgs), first.sequence, int(stamps[0]), int(stamps[-1])))
    deltas_at = put_svb(builder, svb.encode(deltas, "1248"), "1248")
    types_at = put_rle(builder, types)
    classic_at = _put_classic(builder, block, sigs, hashes, column)
    dicts_at = put_dict_set(builder, dicts.heads)
    fb.MessageBlockStart(builder)
    fb.MessageBlockAddSketch(builder, sketch_at)
    fb.MessageBlockAddTimestampDeltas(builder, deltas_at)
    fb.MessageBlockAddTypes(builder, types_at)
    fb.MessageBlockAddDataType(builder, fb.FormatSpecificBlockData.ClassicMessageBlock)
    fb.MessageBlockAddData(builder, classic_at)
    fb.MessageBlockAddDictionaries(builder, dicts_at)
    return finish(builder, fb.Bip2BlobData.MessageBlock, int(fb.MessageBlockEnd(builder)))


def _content_column(block: Planned, dicts: Dictionaries) -> text.TextColumn:
    shapes = list(map(dicts.chains[SKELETONS].index.get, block.skeletons.values))
    if None in shapes:
        raise MissingDictionary("the dictionaries lack a content skeleton: extend them first (new_entries)")
    skeletons = np.array(shapes, dtype=np.int64)[block.skeletons.index]
    return text.encode_column(skeletons, block.tokens, dicts.chains[TOKENS].shared)


def _put_classic(
    builder: flatbuffers.Builder,
    block: Planned,
    sigs: npt.NDArray[np.int64],
    hashes: tuple[bytes, bytes | None, bytes],
    column: text.TextColumn,
) -> int:
    author, previous, last = hashes
    fb.ClassicMessageBlockSketchStart(builder)
    fb.ClassicMessageBlockSketchAddAuthor(builder, put_hash(builder, author))
    if previous is not None:
        fb.ClassicMessageBlockSketchAddPreviousMessageHash(builder, put_hash(builder, previous))
    fb.ClassicMessageBlockSketchAddLastMessageHash(builder, put_hash(builder, last))
    sketch_at = fb.ClassicMessageBlockSketchEnd(builder)
    sigs_at = put_rle(builder, sigs)
    crypto = builder.CreateByteVector(block.signatures)
    flex_at = builder.CreateByteVector(_flex_messages(column))
    fb.ClassicMessageBlockStart(builder)
    fb.ClassicMessageBlockAddSketch(builder, sketch_at)
    fb.ClassicMessageBlockAddObjectSignatures(builder, sigs_at)
    fb.ClassicMessageBlockAddCryptoSignatures(builder, crypto)
    fb.ClassicMessageBlockAddMessages(builder, flex_at)
    return int(fb.ClassicMessageBlockEnd(builder))


def _read_flex(data: bytes, where: str) -> tuple[bytes, ...]:
    with guarded(f"{where} content column"):
        root = flex.GetRoot(data)
        if not root.IsVector or len(root.AsVector) != text.PARTS:
            raise MalformedArchive(f"{where}: the content column is not a vector of {text.PARTS} blobs")
        return tuple(bytes(x.AsBlob) for x in root.AsVector)


@dataclass(frozen=True, slots=True)
class RawBlock:
    """A MessageBlock blob's fields as stored, each required one present: what `decode_block` checks and decodes."""

    sketch: Sketch
    author: bytes
    previous: bytes | None
    last_hash: bytes
    deltas: tuple[bytes, bytes]  # StreamVByte1248 codes and values
    types: RawRuns
    object_signatures: RawRuns
    signatures: bytes
    parts: tuple[bytes, ...]  # the content column's FlexBuffer blobs
    dictionaries: DictSet


@lru_cache(maxsize=64)
def _dict_set(refs: tuple[tuple[int, bytes, int] | None, ...]) -> DictSet:
    """The DictionarySet of `_speedups.read_block`'s refs: the blocks of a build all name the same six heads."""
    return dict_set_of([None if r is None else DictRef(*r) for r in refs])


def read_raw_block(data: bytes, where: str) -> RawBlock:
    """The fields of a MessageBlock blob (compiled when the blob is regular; otherwise the accessors below, which
    name what is wrong)."""
    compiled = speedups()
    raw = compiled.read_block(data) if compiled is not None else None
    if raw is not None:
        length, base, first, last, author, previous, last_hash, deltas, types, sigs, signatures, parts, refs = raw
        return RawBlock(
            Sketch(length, base, first, last), author, previous, last_hash, deltas, types, sigs, signatures, parts,
            _dict_set(refs),
        )  # fmt: skip
    table = open_blob(data, fb.Bip2BlobData.MessageBlock, where)
    limit = len(data)
    with guarded(where):
        sketch = read_sketch(table.Sketch())
        if table.DataType() != fb.FormatSpecificBlockData.ClassicMessageBlock or table.Data() is None:
            raise MalformedArchive(f"{where}: not a classic message block")
        classic = fb.ClassicMessageBlock()
        classic.Init(table.Data().Bytes, table.Data().Pos)
        csk = classic.Sketch()
        if csk is None:
            raise MalformedArchive(f"{where}: the classic block has no sketch")
        author, last = read_hash(csk.Author()), read_hash(csk.LastMessageHash())
        if author is None or last is None:
            raise MalformedArchive(f"{where}: the classic sketch lacks the author or the last message hash")
        deltas = read_svb(table.TimestampDeltas(), "1248", limit, f"{where} timestamps")
        signatures = read_bytes(classic.CryptoSignaturesAsNumpy, classic.CryptoSignaturesLength(), limit, where)
        parts = _read_flex(read_bytes(classic.MessagesAsNumpy, classic.MessagesLength(), limit, where), where)
        types = read_runs(table.Types(), limit, f"{where} types")
        sigs = read_runs(classic.ObjectSignatures(), limit, f"{where} object signatures")
        previous, heads = read_hash(csk.PreviousMessageHash()), read_dict_set(table.Dictionaries())
    return RawBlock(sketch, author, previous, last, deltas, types, sigs, signatures, parts, heads)


def block_dictionaries(data: bytes, where: str = "block") -> DictSet:
    """The dictionary chain heads a MessageBlock blob was coded with (to load them before `decode_block`)."""
    table = open_blob(data, fb.Bip2BlobData.MessageBlock, where)
    with guarded(where):
        return read_dict_set(table.Dictionaries())


def _check_columns(
    sketch: Sketch,
    heads: DictSet,
    dicts: Dictionaries,
    deltas: npt.NDArray[np.uint64],
    types: npt.NDArray[np.uint64],
    sig_ids: npt.NDArray[np.uint64],
    signature_bytes: int,
    where: str,
) -> npt.NDArray[np.int64]:
    """Check the block's columns against the sketch and the dictionaries; return the timestamps."""
    n = sketch.length
    if heads != dicts.heads:
        raise MissingDictionary(f"{where} was coded with other dictionaries than the ones given")
    if deltas.size != n or types.size != n or sig_ids.size != n or signature_bytes != 64 * n:
        raise MalformedArchive(f"{where}: a column does not have the sketch's {n} rows")
    for ids, kind in ((types, TYPES), (sig_ids, SIGNATURES)):
        if int(ids.max()) > len(dicts.chains[kind].entries):
            raise MissingDictionary(
                f"{where}: id {int(ids.max()) - 1} beyond the {len(dicts.chains[kind].entries)} entries"
            )
    steps = svb.unzigzag(deltas)
    rough = sketch.first_timestamp + np.cumsum(steps.astype(np.float64))  # cannot wrap around like int64
    if sketch.first_timestamp >= MAX_TIMESTAMP or rough.min() < 0 or rough.max() >= MAX_TIMESTAMP:
        raise MalformedArchive(f"{where}: timestamps outside 0..2**53")
    stamps = sketch.first_timestamp + np.cumsum(steps)
    if int(stamps[-1]) != sketch.last_timestamp:
        raise MalformedArchive(f"{where}: timestamp deltas do not lead to the sketch's last timestamp")
    return stamps


def decode_block(data: bytes, dicts: Dictionaries, where: str = "block") -> Block:
    """The columns of a MessageBlock blob, checked against each other and against ``dicts``."""
    raw = read_raw_block(data, where)
    n = raw.sketch.length
    if not 0 < n <= len(data) // 64:
        raise MalformedArchive(f"{where}: a sketch length of {n} cannot fit in {len(data)} bytes")
    with guarded(where):
        deltas = svb.decode(*raw.deltas, "1248", where=f"{where} timestamps")
        column = text.TextColumn.from_parts(raw.parts, where)
        block_types = expand_runs(raw.types, f"{where} types", n)
        sig_ids = expand_runs(raw.object_signatures, f"{where} object signatures", n)
    heads = raw.dictionaries
    stamps = _check_columns(raw.sketch, heads, dicts, deltas, block_types, sig_ids, len(raw.signatures), where)
    skeletons, shared = dicts.chains[SKELETONS].skeleton_table, dicts.chains[TOKENS].shared.pieces
    contents, offsets, plain = text.decode_column(column, n, skeletons, shared)
    return Block(
        raw.sketch, raw.author, raw.previous, raw.last_hash, stamps, block_types, sig_ids, raw.signatures, contents,
        offsets, plain, heads,
    )  # fmt: skip


def message_ref(digest: bytes) -> str:
    return f"%{b64(digest)}.sha256"


def decode_sketch(data: bytes, where: str = "block") -> Sketch:
    """The MessageBlockSketch of a block blob, without decoding its columns."""
    table = open_blob(data, fb.Bip2BlobData.MessageBlock, where)
    with guarded(where):
        return read_sketch(table.Sketch())
