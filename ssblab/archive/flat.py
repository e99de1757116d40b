"""FlatBuffers plumbing shared by all blob kinds: canonical building, guarded reading, dictionaries and Bundles.

Canonical building (docs/archive-format.md §3): children are created depth first in schema field order before
their parent table, absent optional fields are omitted, scalars equal to their default are omitted (the builder's
default), and the root is finished with the identifier ``BIP2``. Same inputs, same calls, same bytes.

Reading never trusts the buffer: `guarded` turns every low-level failure into `MalformedArchive` naming the part
being read, and vector lengths are checked against the buffer before anything is allocated from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from struct import error as StructError
from typing import Any

import flatbuffers
import numpy as np

from ssblab.archive import svb
from ssblab.archive.compiled import speedups
from ssblab.archive.errors import MalformedArchive
from ssblab.archive.fb import ssblab_archive_generated as fb
from ssblab.core.errors import UsageError

__all__ = [
    "BLOB_TYPES", "FILE_ID", "KIND_NAMES", "VERSION", "BlockRef", "Bundle", "DictRef", "DictSet", "RawRuns",
    "Sketch", "blob_type", "build_bundle", "build_int_dictionary", "build_string_dictionary", "chain_heads",
    "dict_set_of", "expand_runs", "finish", "guarded", "open_blob", "put_dict_ref", "put_dict_set", "put_hash",
    "put_rle", "put_sketch", "put_svb", "read_bundle", "read_bytes", "read_dict_ref", "read_dict_set",
    "read_dictionary", "read_hash", "read_ints", "read_runs", "read_sketch", "read_svb",
]

FILE_ID = b"BIP2"
VERSION = 1
BLOB_TYPES = {v: k for k, v in vars(fb.Bip2BlobData).items() if not k.startswith("_")}
KIND_NAMES = {0: "types", 1: "keys", 2: "paths", 3: "signatures", 4: "skeletons", 5: "tokens"}


@dataclass(frozen=True, slots=True)
class DictRef:
    """A dictionary chain head: its newest blob and the number of entries in the whole chain."""

    kind: int
    blob_id: bytes
    size: int


@dataclass(frozen=True, slots=True)
class DictSet:
    """The six chain heads a block was coded with (None: that dictionary is still empty)."""

    types: DictRef | None = None
    keys: DictRef | None = None
    paths: DictRef | None = None
    signatures: DictRef | None = None
    skeletons: DictRef | None = None
    tokens: DictRef | None = None

    def by_kind(self) -> tuple[DictRef | None, ...]:
        return (self.types, self.keys, self.paths, self.signatures, self.skeletons, self.tokens)


@dataclass(frozen=True, slots=True)
class Sketch:
    """MessageBlockSketch."""

    length: int
    sequence_base: int
    first_timestamp: int
    last_timestamp: int


@dataclass(frozen=True, slots=True)
class BlockRef:
    """MessageBlockRef: one block of a Bundle."""

    blob_id: bytes
    sketch: Sketch
    previous_blob_id: bytes | None
    last_message_hash: bytes


@dataclass(frozen=True, slots=True)
class Bundle:
    author: bytes
    blocks: tuple[BlockRef, ...]
    dictionaries: DictSet


@contextmanager
def guarded(where: str) -> Iterator[None]:
    """Report any failure to read a hostile buffer as `MalformedArchive` at ``where``."""
    try:
        yield
    except MalformedArchive:
        raise
    except (LookupError, StructError, ValueError, TypeError, OverflowError, AttributeError, UnicodeError) as exc:
        raise MalformedArchive(f"{where}: unreadable FlatBuffer ({type(exc).__name__}: {exc})") from None


# --- building ---------------------------------------------------------------------------------------------------


def put_hash(builder: flatbuffers.Builder, digest: bytes) -> int:
    """`fb.CreateHash32` in one slice assignment (the generated code prepends the 32 bytes one by one)."""
    if len(digest) != 32:
        raise UsageError(f"a Hash32 holds 32 bytes, got {len(digest)}")
    builder.Prep(1, 32)
    builder.head -= 32
    builder.Bytes[builder.head : builder.head + 32] = digest
    return int(builder.Offset())


def put_svb(builder: flatbuffers.Builder, coded: tuple[bytes, bytes], flavour: svb.Flavour) -> int:
    codes = builder.CreateByteVector(coded[0])
    values = builder.CreateByteVector(coded[1])
    start, add_codes, add_values, end = (
        (fb.StreamVByte1234Start, fb.StreamVByte1234AddCodes, fb.StreamVByte1234AddValues, fb.StreamVByte1234End)
        if flavour == "1234"
        else (fb.StreamVByte1248Start, fb.StreamVByte1248AddCodes, fb.StreamVByte1248AddValues, fb.StreamVByte1248End)
    )
    start(builder)
    add_codes(builder, codes)
    add_values(builder, values)
    return int(end(builder))


def put_rle(builder: flatbuffers.Builder, ids: Sequence[int] | np.ndarray) -> int:
    runs, lengths = svb.run_lengths(ids)
    values_at = put_svb(builder, svb.encode(runs, "1234"), "1234")
    lengths_at = put_svb(builder, svb.encode(lengths, "1234"), "1234")
    fb.RunLengthColumnStart(builder)
    fb.RunLengthColumnAddLength(builder, len(ids))
    fb.RunLengthColumnAddValues(builder, values_at)
    fb.RunLengthColumnAddLengths(builder, lengths_at)
    return int(fb.RunLengthColumnEnd(builder))


def put_dict_ref(builder: flatbuffers.Builder, ref: DictRef) -> int:
    fb.DictionaryRefStart(builder)
    fb.DictionaryRefAddKind(builder, ref.kind)
    fb.DictionaryRefAddBlobId(builder, put_hash(builder, ref.blob_id))
    fb.DictionaryRefAddSize(builder, ref.size)
    return int(fb.DictionaryRefEnd(builder))


def put_dict_set(builder: flatbuffers.Builder, dicts: DictSet) -> int:
    at = [None if ref is None else put_dict_ref(builder, ref) for ref in dicts.by_kind()]
    fb.DictionarySetStart(builder)
    adders = (
        fb.DictionarySetAddTypes,
        fb.DictionarySetAddKeys,
        fb.DictionarySetAddPaths,
        fb.DictionarySetAddSignatures,
        fb.DictionarySetAddSkeletons,
        fb.DictionarySetAddTokens,
    )
    for add, offset in zip(adders, at, strict=True):
        if offset is not None:
            add(builder, offset)
    return int(fb.DictionarySetEnd(builder))


def finish(builder: flatbuffers.Builder, data_type: int, data: int) -> bytes:
    fb.Bip2BlobStart(builder)
    fb.Bip2BlobAddVersion(builder, VERSION)
    fb.Bip2BlobAddDataType(builder, data_type)
    fb.Bip2BlobAddData(builder, data)
    builder.Finish(fb.Bip2BlobEnd(builder), file_identifier=FILE_ID)
    return bytes(builder.Output())


def build_string_dictionary(kind: int, parent: DictRef | None, entries: Sequence[bytes]) -> bytes:
    builder = flatbuffers.Builder(1024)
    parent_at = None if parent is None else put_dict_ref(builder, parent)
    data_at = builder.CreateByteVector(b"".join(entries))
    lengths_at = put_svb(builder, svb.encode([len(e) for e in entries], "1234"), "1234")
    fb.StringDictionaryStart(builder)
    fb.StringDictionaryAddKind(builder, kind)
    if parent_at is not None:
        fb.StringDictionaryAddParent(builder, parent_at)
    fb.StringDictionaryAddData(builder, data_at)
    fb.StringDictionaryAddLengths(builder, lengths_at)
    return finish(builder, fb.Bip2BlobData.StringDictionary, int(fb.StringDictionaryEnd(builder)))


def build_int_dictionary(kind: int, parent: DictRef | None, entries: Sequence[tuple[int, ...]]) -> bytes:
    builder = flatbuffers.Builder(1024)
    parent_at = None if parent is None else put_dict_ref(builder, parent)
    values_at = put_svb(builder, svb.encode([v for e in entries for v in e], "1234"), "1234")
    lengths_at = put_svb(builder, svb.encode([len(e) for e in entries], "1234"), "1234")
    fb.IntArrayDictionaryStart(builder)
    fb.IntArrayDictionaryAddKind(builder, kind)
    if parent_at is not None:
        fb.IntArrayDictionaryAddParent(builder, parent_at)
    fb.IntArrayDictionaryAddValues(builder, values_at)
    fb.IntArrayDictionaryAddLengths(builder, lengths_at)
    return finish(builder, fb.Bip2BlobData.IntArrayDictionary, int(fb.IntArrayDictionaryEnd(builder)))


def put_sketch(builder: flatbuffers.Builder, sketch: Sketch) -> int:
    fb.MessageBlockSketchStart(builder)
    fb.MessageBlockSketchAddLength(builder, sketch.length)
    fb.MessageBlockSketchAddSequenceNumberBase(builder, sketch.sequence_base)
    fb.MessageBlockSketchAddFirstTimestamp(builder, sketch.first_timestamp)
    fb.MessageBlockSketchAddLastTimestamp(builder, sketch.last_timestamp)
    return int(fb.MessageBlockSketchEnd(builder))


def chain_heads(dicts: DictSet) -> tuple[tuple[int, bytes, int] | None, ...]:
    """The six chain heads as the compiled assemblers take them."""
    return tuple(None if r is None else (r.kind, r.blob_id, r.size) for r in dicts.by_kind())


def build_bundle(bundle: Bundle) -> bytes:
    compiled = speedups()
    if compiled is not None:  # the same bytes, assembled in C; None: a field overflows, for the builder to report
        refs = [
            (r.blob_id, r.sketch.length, r.sketch.sequence_base, r.sketch.first_timestamp, r.sketch.last_timestamp,
             r.previous_blob_id, r.last_message_hash)
            for r in bundle.blocks
        ]  # fmt: skip
        blob = compiled.bundle_blob(bundle.author, refs, chain_heads(bundle.dictionaries))
        if blob is not None:
            return blob  # type: ignore[no-any-return]
    builder = flatbuffers.Builder(1024)
    refs = []
    for ref in bundle.blocks:
        sketch_at = put_sketch(builder, ref.sketch)
        fb.MessageBlockRefStart(builder)
        fb.MessageBlockRefAddBlobId(builder, put_hash(builder, ref.blob_id))
        fb.MessageBlockRefAddSketch(builder, sketch_at)
        if ref.previous_blob_id is not None:
            fb.MessageBlockRefAddPreviousBlobId(builder, put_hash(builder, ref.previous_blob_id))
        fb.MessageBlockRefAddLastMessageHash(builder, put_hash(builder, ref.last_message_hash))
        refs.append(fb.MessageBlockRefEnd(builder))
    fb.BundleStartMessageBlocksVector(builder, len(refs))
    for r in reversed(refs):
        builder.PrependUOffsetTRelative(r)
    vector = builder.EndVector()
    dicts_at = put_dict_set(builder, bundle.dictionaries)
    fb.BundleStart(builder)
    fb.BundleAddAuthor(builder, put_hash(builder, bundle.author))
    fb.BundleAddMessageBlocks(builder, vector)
    fb.BundleAddDictionaries(builder, dicts_at)
    return finish(builder, fb.Bip2BlobData.Bundle, int(fb.BundleEnd(builder)))


# --- reading ----------------------------------------------------------------------------------------------------


def blob_type(data: bytes, where: str) -> int:
    """The Bip2BlobData type of a blob (after checking its identifier)."""
    if len(data) < 12 or data[4:8] != FILE_ID:
        raise MalformedArchive(f"{where}: not an ssb-bipf2 blob (no 'BIP2' file identifier or too short)")
    with guarded(where):
        return int(fb.Bip2Blob.GetRootAs(data, 0).DataType())


def open_blob(data: bytes, expected: int, where: str) -> Any:
    """The table inside a Bip2Blob of the ``expected`` union type, after checking identifier and version."""
    names = BLOB_TYPES
    blob_type(data, where)
    with guarded(where):
        root = fb.Bip2Blob.GetRootAs(data, 0)
        if root.Version() != VERSION:
            raise MalformedArchive(f"{where}: format version {root.Version()}, this reader knows {VERSION}")
        if root.DataType() != expected:
            got = names.get(root.DataType(), f"unknown type {root.DataType()}")
            raise MalformedArchive(f"{where}: holds a {got}, expected a {names[expected]}")
        table = root.Data()
        if table is None:
            raise MalformedArchive(f"{where}: empty blob")
        cls = getattr(fb, names[expected])
        obj = cls()
        obj.Init(table.Bytes, table.Pos)
        return obj


def read_bytes(getter: Callable[[], Any], length: int, limit: int, where: str) -> bytes:
    """A [ubyte] field as bytes, refusing lengths beyond the buffer."""
    if length > limit:
        raise MalformedArchive(f"{where}: vector of {length} bytes in a {limit}-byte blob")
    arr = getter()
    return b"" if isinstance(arr, int) else bytes(np.asarray(arr, dtype=np.uint8))


def read_svb(table: Any, flavour: svb.Flavour, limit: int, where: str) -> tuple[bytes, bytes]:
    if table is None:
        raise MalformedArchive(f"{where}: missing StreamVByte column")
    codes = read_bytes(table.CodesAsNumpy, table.CodesLength(), limit, where)
    values = read_bytes(table.ValuesAsNumpy, table.ValuesLength(), limit, where)
    return codes, values


def read_ints(table: Any, flavour: svb.Flavour, limit: int, where: str) -> np.ndarray:
    return svb.decode(*read_svb(table, flavour, limit, where), flavour, where=where)


RawRuns = tuple[int, tuple[bytes, bytes], tuple[bytes, bytes]]  # length, then the values' and lengths' StreamVByte


def read_runs(table: Any, limit: int, where: str) -> RawRuns:
    """A run-length column as stored (`expand_runs` checks and expands it)."""
    if table is None:
        raise MalformedArchive(f"{where}: missing run-length column")
    values, lengths = (read_svb(column, "1234", limit, where) for column in (table.Values(), table.Lengths()))
    return table.Length(), values, lengths


def expand_runs(runs: RawRuns, where: str, expected: int) -> np.ndarray:
    """The values of a run-length column of exactly ``expected`` values (checked before anything is expanded)."""
    length, values, lengths = runs
    if length != expected:
        raise MalformedArchive(f"{where}: {length} values, expected {expected}")
    return svb.expand_runs(
        svb.decode(*values, "1234", where=where), svb.decode(*lengths, "1234", where=where), length, where=where
    )


def read_hash(struct: Any) -> bytes | None:
    return None if struct is None else bytes(struct.DataAsNumpy())


def read_dict_ref(table: Any) -> DictRef | None:
    if table is None:
        return None
    digest = read_hash(table.BlobId())
    if digest is None:
        raise MalformedArchive("dictionary reference without a blob id")
    return DictRef(table.Kind(), digest, table.Size())


def read_dict_set(table: Any) -> DictSet:
    if table is None:
        raise MalformedArchive("missing dictionary set")
    slots = (table.Types(), table.Keys(), table.Paths(), table.Signatures(), table.Skeletons(), table.Tokens())
    return dict_set_of([read_dict_ref(x) for x in slots])


def dict_set_of(refs: Sequence[DictRef | None]) -> DictSet:
    """The DictionarySet of the six slots' refs, each checked to name its slot's kind."""
    for kind, ref in enumerate(refs):
        if ref is not None and ref.kind != kind:
            raise MalformedArchive(f"dictionary set: the {KIND_NAMES[kind]} slot names a {ref.kind} dictionary")
    return DictSet(*refs)


def read_sketch(table: Any) -> Sketch:
    if table is None:
        raise MalformedArchive("missing message block sketch")
    return Sketch(table.Length(), table.SequenceNumberBase(), table.FirstTimestamp(), table.LastTimestamp())


def read_dictionary(data: bytes, where: str) -> tuple[int, DictRef | None, list[Any]]:
    """(kind, parent, entries) of a dictionary blob: bytes entries for string kinds, int tuples otherwise."""
    strings = blob_type(data, where) == fb.Bip2BlobData.StringDictionary
    expected = fb.Bip2BlobData.StringDictionary if strings else fb.Bip2BlobData.IntArrayDictionary
    table = open_blob(data, expected, where)
    with guarded(where):
        parent = read_dict_ref(table.Parent())
        if expected == fb.Bip2BlobData.StringDictionary:
            blob = read_bytes(table.DataAsNumpy, table.DataLength(), len(data), where)
            ends = np.cumsum(read_ints(table.Lengths(), "1234", len(data), where)).tolist()
            if (ends[-1] if ends else 0) != len(blob):
                raise MalformedArchive(f"{where}: entry lengths do not cover the {len(blob)} bytes")
            return table.Kind(), parent, [blob[a:b] for a, b in pairwise([0, *ends])]
        values = read_ints(table.Values(), "1234", len(data), where).tolist()
        lengths = read_ints(table.Lengths(), "1234", len(data), where).tolist()
        if sum(lengths) != len(values):
            raise MalformedArchive(f"{where}: entry lengths do not cover the {len(values)} values")
        ends = np.cumsum([0, *lengths]).tolist()
        return table.Kind(), parent, [tuple(values[a:b]) for a, b in pairwise(ends)]


def read_bundle(data: bytes, where: str = "bundle") -> Bundle:
    table = open_blob(data, fb.Bip2BlobData.Bundle, where)
    with guarded(where):
        author = read_hash(table.Author())
        if author is None:
            raise MalformedArchive(f"{where}: no author")
        if table.MessageBlocksLength() > len(data):
            raise MalformedArchive(f"{where}: more block refs than bytes")
        refs = []
        for i in range(table.MessageBlocksLength()):
            ref = table.MessageBlocks(i)
            blob, last = read_hash(ref.BlobId()), read_hash(ref.LastMessageHash())
            if blob is None or last is None:
                raise MalformedArchive(f"{where}: block ref {i} lacks its blob id or last message hash")
            refs.append(BlockRef(blob, read_sketch(ref.Sketch()), read_hash(ref.PreviousBlobId()), last))
        return Bundle(author, tuple(refs), read_dict_set(table.Dictionaries()))
