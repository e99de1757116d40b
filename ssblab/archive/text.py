"""The content column: each message's content text, exactly as signed, as a skeleton plus token-coded leaves.

Strategy (docs/archive-format.md §6):
1. `flatten` cuts the text at its leaves (string values, numbers, true/false/null; and keys too for the
   keys-as-data types of `KEYS_AS_DATA`). The skeleton is the text with each leaf replaced by one 0x00 byte
   (V8 escapes every control character, so 0x00 never occurs in an encoding); it is what the proposal calls the
   object signature and goes to the shared SKELETON dictionary. The leaves, each followed by 0x00, form the
   message's leaf text.
2. The block's leaf texts are cut into tokens by `TOKEN` (refs, long base64, words with their leading space,
   digits, newline+indent, non-ASCII runs, any other byte: 0x00 is its own token). Distinct tokens form a block
   dictionary ranked by falling count, ties by first appearance; a token already in the shared TOKEN dictionary
   is stored as a reference to it, canonical base64 (refs, boxes) as its decoded bytes, anything else as is.
3. Ranks are written with the (s,c)-dense code of `dense`.

Invariants: `decode_column(encode_column(x))` rebuilds every text byte for byte; the bytes depend only on the
texts and the shared dictionaries (no hash order, no clock).

Two routes give the same bytes: `_speedups` (C) flattens, tokenizes and codes a block's column in one pass each
and decodes it in one walk over the ranks; without it, the regular expressions above code it and decoding is
vectorised (numpy assembles the block's token and skeleton-part sequence, Arrow gathers it in one call: `pieces`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, pairwise
from types import ModuleType

import numpy as np
import numpy.typing as npt

from ssblab.archive import dense, svb
from ssblab.archive.compiled import speedups
from ssblab.archive.errors import ArchiveOverflow, MalformedArchive, NotArchivable
from ssblab.archive.pieces import I64, Pieces, concat, gather

__all__ = [
    "BASE64", "BLOB_REF", "FEED_REF", "HOLE", "KEYS_AS_DATA", "LEAF", "LITERAL", "MSG_REF", "PARTS", "SHARED",
    "TOKEN", "SharedTokens", "SkeletonTable", "TextColumn", "Tokens", "ascii_starts", "check_utf8", "decode_column",
    "encode_column", "entry_of", "flatten", "flatten_block", "load_skeleton", "repeated", "shared_entries",
    "shared_entry", "shared_token", "shared_tokens", "store_skeleton", "token_of",
]

TOKEN = re.compile(
    rb"[%&@][A-Za-z0-9+/]{43}=\.(?:sha256|ed25519)"  # SSB refs
    rb"|[A-Za-z0-9+/]{20,}={0,2}"  # long base64 runs (boxes, hashes)
    rb"| ?[A-Za-z]+"  # a word, with its leading space
    rb"|[0-9]+"
    rb"|\n +"  # a newline and the indentation after it
    rb"|[\x80-\xff]+"  # a run of non-ASCII bytes
    rb"|.",
    re.DOTALL,
)
LEAF = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*"(?::)?|-?[0-9][0-9.eE+\-]*|true|false|null)', re.DOTALL)
HOLE = b"\x00"
PARTS = 10
KEYS_AS_DATA = frozenset({"git-update", "npm-packages", "npm-publish", "ssb-pkg-installer", "ssb-browser-app"})

# Kinds of block dictionary entries; the payload of a literal is its bytes, of refs and base64 the decoded bytes,
# of a shared entry the little-endian id in the shared TOKEN dictionary.
LITERAL, MSG_REF, FEED_REF, BLOB_REF, BASE64, SHARED = 0, 1, 2, 3, 4, 5
_REF_FORMS = {MSG_REF: (b"%", b".sha256"), FEED_REF: (b"@", b".ed25519"), BLOB_REF: (b"&", b".sha256")}
_REF_KIND = {v: k for k, v in _REF_FORMS.items()}


@dataclass(frozen=True, slots=True)
class TextColumn:
    """The coded column; see the module docstring for each part."""

    kinds: bytes  # one per block dictionary entry, in rank order
    shared_ids: tuple[bytes, bytes]  # StreamVByte1234: the TOKEN id of each SHARED entry
    lengths: tuple[bytes, bytes]  # StreamVByte1234: payload length of each LITERAL or BASE64 entry
    payload: bytes  # the payloads of the entries that are not SHARED (refs: 32 bytes each)
    s: int
    ranks: bytes
    skeletons: tuple[bytes, bytes]

    def parts(self) -> list[bytes]:
        return [
            self.kinds, *self.shared_ids, *self.lengths, self.payload, bytes([self.s]), self.ranks, *self.skeletons
        ]  # fmt: skip

    @classmethod
    def from_parts(cls, parts: Sequence[bytes], where: str) -> TextColumn:
        if len(parts) != PARTS or len(parts[6]) != 1:
            raise MalformedArchive(f"{where}: the content column has the wrong parts")
        p = parts
        return cls(p[0], (p[1], p[2]), (p[3], p[4]), p[5], p[6][0], p[7], (p[8], p[9]))


def flatten(content: bytes, keys_as_data: bool) -> tuple[bytes, bytes]:
    """(skeleton, leaf text) of one content text."""
    if HOLE in content:
        raise NotArchivable("content text contains a 0x00 byte: not a V8 JSON encoding")
    parts = LEAF.split(content)  # structure, match, structure, match, ..., structure
    matches = parts[1::2]
    if keys_as_data:
        parts[1::2] = [b'"\x00":' if m[-1] == 0x3A else b'"\x00"' if m[0] == 0x22 else HOLE for m in matches]
        leaves = [m[1:-2] if m[-1] == 0x3A else m[1:-1] if m[0] == 0x22 else m for m in matches]
    else:  # a key ('"...":') stays in the skeleton
        parts[1::2] = [m if m[-1] == 0x3A else b'"\x00"' if m[0] == 0x22 else HOLE for m in matches]
        leaves = [m[1:-1] if m[0] == 0x22 else m for m in matches if m[-1] != 0x3A]
    return b"".join(parts), (HOLE.join(leaves) + HOLE if leaves else b"")


_LAYOUT = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")|[\n ]+')
_PLAIN_SKELETON = 0xFF


def _indent(compact: bytes, depth: int) -> bytes:
    """``JSON.stringify(_, null, 2)``'s layout of a whitespace-free skeleton whose outer value sits at ``depth``."""
    out, d = [], depth
    for m in re.finditer(rb'"[^"\\]*(?:\\.[^"\\]*)*"|\{\}|\[\]|.', compact, re.DOTALL):
        tok = m.group(0)
        if tok in (b"{", b"["):
            d += 1
            out.append(tok + b"\n" + b"  " * d)
        elif tok in (b"}", b"]"):
            d -= 1
            out.append(b"\n" + b"  " * d + tok)
        elif tok == b",":
            out.append(b",\n" + b"  " * d)
        elif tok == b":":
            out.append(b": ")
        else:
            out.append(tok)
    return b"".join(out)


def store_skeleton(skeleton: bytes) -> bytes:
    """How a SKELETON entry is stored: a depth byte and the skeleton without layout, when that rebuilds it."""
    compiled = speedups()
    if compiled is not None:
        return compiled.store_skeleton(skeleton)  # type: ignore[no-any-return]
    compact = _LAYOUT.sub(lambda m: m.group(1) or b"", skeleton)
    for depth in (0, 1):
        if _indent(compact, depth) == skeleton:
            return bytes([depth]) + compact
    return bytes([_PLAIN_SKELETON]) + skeleton


def load_skeleton(stored: bytes) -> bytes:
    """Inverse of `store_skeleton`."""
    if not stored or stored[0] not in (0, 1, _PLAIN_SKELETON):
        raise MalformedArchive("skeletons dictionary: an entry without a valid layout byte")
    if stored[0] == _PLAIN_SKELETON:
        return stored[1:]
    compiled = speedups()
    return _indent(stored[1:], stored[0]) if compiled is None else compiled.indent(stored[1:], stored[0])


@dataclass(frozen=True, slots=True)
class Tokens:
    """A block's leaf texts cut by `TOKEN`: the distinct tokens (first met first, end to end) and the token sequence
    as indexes into them. The compiled route also keeps each distinct token's hash, so that the lookups across blocks
    and in the shared dictionary do not hash it again."""

    distinct: Pieces
    stream: npt.NDArray[np.uint32]  # a block holds fewer than 2**31 distinct tokens
    hashes: I64 | None = None

    def texts(self) -> list[bytes]:
        """The distinct tokens, one bytes object each."""
        data = self.distinct.data
        return [data[a:b] for a, b in pairwise(self.distinct.offsets.tolist())]


def flatten_block(contents: Sequence[bytes], keys_as_data: Sequence[bool]) -> tuple[list[bytes], Tokens]:
    """`flatten` each content text, and cut the leaf texts of the whole block into tokens."""
    flat = [flatten(c, k) for c, k in zip(contents, keys_as_data, strict=True)]
    index: dict[bytes, int] = {}
    stream = [index.setdefault(t, len(index)) for t in TOKEN.findall(b"".join(f[1] for f in flat))]
    return [f[0] for f in flat], Tokens(Pieces.of(list(index)), np.array(stream, dtype=np.uint32))


def _canonical_b64(text: bytes) -> bytes | None:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw) == text else None


def entry_of(token: bytes) -> tuple[int, bytes]:
    """(kind, payload) of a token, without the shared dictionary."""
    if len(token) >= 52 and token[44:45] == b"=":
        kind = _REF_KIND.get((token[:1], token[45:]))
        raw = _canonical_b64(token[1:45]) if kind is not None else None
        if kind is not None and raw is not None:
            return kind, raw
    if len(token) >= 20 and token[:1] not in b" \n%&@":
        raw = _canonical_b64(token)
        if raw is not None:
            return BASE64, raw
    return LITERAL, token




def token_of(kind: int, payload: bytes) -> bytes:
    """Inverse of `entry_of`."""
    if kind == LITERAL:
        return payload
    if kind == BASE64:
        return base64.b64encode(payload)
    if kind in _REF_FORMS and len(payload) == 32:
        sigil, suffix = _REF_FORMS[kind]
        return sigil + base64.b64encode(payload) + suffix
    raise MalformedArchive(f"content column: bad dictionary entry (kind {kind}, {len(payload)} bytes)")


def shared_entry(token: bytes) -> bytes:
    """How a token is stored in the shared TOKEN dictionary: its kind byte, then its payload."""
    kind, payload = entry_of(token)
    return bytes([kind]) + payload


def repeated(blocks: Sequence[Tokens]) -> list[bytes]:
    """The tokens that occur in more than one of ``blocks``, in the order first met."""
    hashes = [b.hashes for b in blocks]
    compiled = speedups()
    if compiled is not None and all(h is not None for h in hashes):
        return compiled.repeated_tokens(  # type: ignore[no-any-return]
            [b.distinct.data for b in blocks], [b.distinct.offsets for b in blocks], hashes
        )
    seen = Counter(chain.from_iterable(b.texts() for b in blocks))
    return [tok for tok, count in seen.items() if count > 1]


def shared_entries(tokens: list[bytes]) -> list[bytes]:
    """`shared_entry` of each token."""
    compiled = speedups()
    return compiled.shared_entries(tokens) if compiled is not None else [shared_entry(tok) for tok in tokens]


def shared_token(entry: bytes) -> bytes:
    if not entry or entry[0] == SHARED:
        raise MalformedArchive("TOKEN dictionary: entry without a usable kind byte")
    return token_of(entry[0], entry[1:])


def shared_tokens(entries: Sequence[bytes]) -> list[bytes]:
    """`shared_token` of each entry."""
    compiled = speedups()
    if compiled is not None:
        return compiled.shared_tokens(list(entries))  # type: ignore[no-any-return]
    return [shared_token(e) for e in entries]


class SharedTokens:
    """The shared TOKEN dictionary's tokens (by id), and how coders find a token's id by its text: a dict on the
    pure route, a `token_slots` table of the extension over the tokens end to end on the compiled one."""

    def __init__(self, tokens: list[bytes]) -> None:
        self.tokens = tokens
        self._slots: bytes | None = None

    @cached_property
    def pieces(self) -> Pieces:
        return Pieces.of(self.tokens)

    @cached_property
    def index(self) -> dict[bytes, int]:
        return {tok: i for i, tok in enumerate(self.tokens)}

    def slots(self, compiled: ModuleType) -> bytes:
        """The compiled route's table, made on its first use (the pure route never needs it)."""
        if self._slots is None:
            self._slots = compiled.token_slots(self.pieces.data, self.pieces.offsets)
        return self._slots


def encode_column(skeleton_ids: I64, tokens: Tokens, shared: SharedTokens) -> TextColumn:
    """Code one block's content column from its tokens against the shared TOKEN dictionary."""
    compiled = speedups()
    if compiled is not None and tokens.hashes is not None:
        hashes, skeletons = (np.ascontiguousarray(a, dtype=np.int64) for a in (tokens.hashes, skeleton_ids))
        stream = np.ascontiguousarray(tokens.stream, dtype=np.uint32)
        pieces, distinct = shared.pieces, tokens.distinct
        parts = compiled.encode_column(
            distinct.data, distinct.offsets, hashes, stream, pieces.data, pieces.offsets, shared.slots(compiled),
            skeletons,
        )  # fmt: skip
        return TextColumn.from_parts(parts, "content column")
    counts = np.bincount(tokens.stream, minlength=len(tokens.distinct))
    order = np.argsort(-counts, kind="stable")  # falling count, ties by first appearance
    texts = tokens.texts()
    ranked = [texts[i] for i in order.tolist()]
    rank_of = np.empty(order.size, dtype=np.int64)
    rank_of[order] = np.arange(order.size)
    ranks = rank_of[tokens.stream]
    index = shared.index
    entries = [(SHARED, b"") if tok in index else entry_of(tok) for tok in ranked]
    s = dense.best_s(ranks, len(ranked))
    return TextColumn(
        kinds=bytes(kind for kind, _ in entries),
        shared_ids=svb.encode([index[tok] for tok in ranked if tok in index], "1234"),
        lengths=svb.encode([len(p) for k, p in entries if k in (LITERAL, BASE64)], "1234"),
        payload=b"".join(p for _, p in entries),
        s=s,
        ranks=dense.encode(ranks, s),
        skeletons=svb.encode(skeleton_ids, "1234"),
    )


def _ref_texts(kind: int, payload: bytes, starts: I64) -> Pieces:
    """Refs of one kind from their 32-byte payloads, with one base64 call (33 padded bytes give 44 letters)."""
    sigil, suffix = _REF_FORMS[kind]
    raw = np.frombuffer(payload, dtype=np.uint8)
    padded = np.zeros((starts.size, 33), dtype=np.uint8)
    padded[:, :32] = raw[starts[:, None] + np.arange(32)]
    letters = np.frombuffer(base64.b64encode(padded.tobytes()), dtype=np.uint8).reshape(-1, 44)
    width = 45 + len(suffix)
    out = np.empty((starts.size, width), dtype=np.uint8)
    out[:, 0] = sigil[0]
    out[:, 1:44] = letters[:, :43]
    out[:, 44:] = np.frombuffer(b"=" + suffix, dtype=np.uint8)
    return Pieces(out.tobytes(), np.arange(0, width * starts.size + 1, width, dtype=np.int64))


def _leaf_end_entry(payload: bytes, ends: I64, literal: npt.NDArray[np.bool_]) -> int | None:
    """The own entry that is the leaf end (the first literal 0x00); no other literal may hold a 0x00 byte."""
    zeros = np.flatnonzero(np.frombuffer(payload, dtype=np.uint8) == 0)
    entry = np.searchsorted(ends, zeros, side="right")
    entry = entry[literal[entry]]  # refs and base64 payloads are binary
    lengths = np.diff(ends, prepend=0)
    if (lengths[entry] != 1).any():
        raise MalformedArchive("content column: a token other than the leaf end contains a 0x00 byte")
    return int(entry[0]) if entry.size else None


def _entries(column: TextColumn, n_shared: int, base: int) -> tuple[I64, Pieces, int | None]:
    """(the table index of each block entry, the block's own pieces, the leaf-end entry's rank or None).

    Shared entries index the shared tokens as they are; the block's own entries index its own pieces, which
    the table holds from ``base``: every payload as stored, then the texts of refs and base64 entries.
    """
    kinds = np.frombuffer(column.kinds, dtype=np.uint8)
    if kinds.size and int(kinds.max()) > SHARED:
        raise MalformedArchive(f"content column: bad dictionary entry kind {int(kinds.max())}")
    is_shared, is_ref = kinds == SHARED, np.isin(kinds, list(_REF_FORMS))
    ids = svb.decode(*column.shared_ids, "1234", where="content shared ids").astype(np.int64)
    sized = svb.decode(*column.lengths, "1234", where="content entry lengths").astype(np.int64)
    if ids.size != int(is_shared.sum()) or sized.size != int((~is_shared & ~is_ref).sum()):
        raise MalformedArchive("content column: entry kinds disagree with the shared ids or the lengths")
    if ids.size and int(ids.max()) >= n_shared:
        raise MalformedArchive(f"content column: a shared token id beyond {n_shared} entries")
    own_at = np.flatnonzero(~is_shared)
    own_kinds = kinds[own_at]
    lengths = np.where(is_ref[own_at], 32, 0)
    lengths[~is_ref[own_at]] = sized
    offsets = np.zeros(own_at.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    payload = column.payload
    if int(offsets[-1]) != len(payload):
        raise MalformedArchive("content column: the entry payloads do not add up")
    place = np.empty(kinds.size, dtype=np.int64)
    place[is_shared] = ids
    place[own_at] = base + np.arange(own_at.size)
    parts, at = [Pieces(payload, offsets)], base + own_at.size
    for kind in (MSG_REF, FEED_REF, BLOB_REF, BASE64):
        which = np.flatnonzero(own_kinds == kind)
        if not which.size:
            continue
        if kind == BASE64:
            texts = Pieces.of([base64.b64encode(payload[offsets[i] : offsets[i + 1]]) for i in which.tolist()])
        else:
            texts = _ref_texts(kind, payload, offsets[which])
        place[own_at[which]] = at + np.arange(which.size)
        parts.append(texts)
        at += which.size
    hole = _leaf_end_entry(payload, offsets[1:], own_kinds == LITERAL)
    return place, concat(parts), None if hole is None else int(own_at[hole])


@dataclass(frozen=True, slots=True)
class SkeletonTable:
    """A SKELETON chain for decoding: every skeleton's parts (split at its holes) end to end, where each
    skeleton's parts start, and how many holes each has."""

    parts: Pieces
    first: npt.NDArray[np.int64]
    holes: npt.NDArray[np.int64]

    @classmethod
    def of(cls, skeletons: Sequence[bytes]) -> SkeletonTable:
        split = [s.split(HOLE) for s in skeletons]
        holes = np.fromiter(map(len, split), dtype=np.int64, count=len(split)) - 1
        first = np.zeros(len(split), dtype=np.int64)
        np.cumsum(holes[:-1] + 1, out=first[1:])
        return cls(Pieces.of([p for parts in split for p in parts]), first, holes)


def decode_column(column: TextColumn, n: int, skeletons: SkeletonTable, shared: Pieces) -> tuple[bytes, I64, I64]:
    """All ``n`` texts concatenated (checked to be UTF-8 row by row), ``n + 1`` byte offsets into them, and the
    length of each text's ASCII start (all of it when ASCII: what a message id's binary form leaves as it is).

    ``shared`` holds the shared TOKEN dictionary's tokens, none of which may contain 0x00. The texts are one
    gather over [shared tokens | skeleton parts | the block's own tokens]: each leaf-end token is replaced by
    the next part of its message's skeleton and each message starts with its skeleton's first part.
    """
    compiled = speedups()
    if compiled is not None:  # the same walk in C, from the ten parts as stored
        parts = skeletons.parts
        texts, ends, plain = compiled.decode_column(
            tuple(column.parts()), n, shared.data, shared.offsets, parts.data, parts.offsets, skeletons.first,
            skeletons.holes,
        )  # fmt: skip
        return texts, np.frombuffer(ends, dtype=np.int64), np.frombuffer(plain, dtype=np.int64)
    base = len(shared) + len(skeletons.parts)
    place, own, hole = _entries(column, len(shared), base)
    ranks = dense.decode(column.ranks, column.s, "content tokens")
    skel = svb.decode(*column.skeletons, "1234", where="content skeletons").astype(np.int64)
    if skel.size != n or (n and int(skel.max()) >= skeletons.holes.size):
        raise MalformedArchive(f"content column: {skel.size} skeleton ids for {n} messages, or an unknown id")
    if ranks.size and int(ranks.max()) >= place.size:
        raise MalformedArchive(f"content column: token rank {int(ranks.max())} beyond {place.size} entries")
    holes = skeletons.holes[skel]
    hole_at = np.flatnonzero(ranks == hole) if hole is not None else np.zeros(0, dtype=np.int64)
    leaf_ends = _leaf_ends(holes, hole_at, ranks.size)
    seq = place[ranks]
    first = skeletons.first[skel] + len(shared)
    if hole_at.size:  # the k-th leaf end of a message becomes part k + 1 of its skeleton
        seq[hole_at] = np.repeat(first + 1 - (np.cumsum(holes) - holes), holes) + np.arange(hole_at.size)
    seq = np.insert(seq, np.concatenate(([0], leaf_ends[:-1])), first)
    try:
        data, ends = gather(concat([shared, skeletons.parts, own]), seq)
    except ArchiveOverflow as exc:
        raise MalformedArchive(f"content column: texts too large ({exc})") from None
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = ends[leaf_ends + np.arange(n) + 1]
    check_utf8(data, offsets)
    return data, offsets, ascii_starts(data, offsets)


def check_utf8(contents: bytes, offsets: I64) -> None:
    """Every row's text is UTF-8: the whole buffer is, and no row starts inside a character."""
    if contents.isascii():
        return
    try:  # V8 escapes lone surrogates, so a signed encoding is always valid UTF-8
        contents.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedArchive(f"content is not UTF-8 at byte {exc.start}") from None
    starts = offsets[:-1][offsets[:-1] < len(contents)]
    inside = np.flatnonzero((np.frombuffer(contents, dtype=np.uint8)[starts] & 0xC0) == 0x80)
    if inside.size:
        raise MalformedArchive(f"content is not UTF-8 at byte {int(starts[inside[0]])}")


def ascii_starts(contents: bytes, offsets: I64) -> I64:
    """The length of each row's ASCII start: up to its first byte from 0x80, or its whole length."""
    plain = np.diff(offsets)
    if contents.isascii():
        return plain
    high = np.flatnonzero(np.frombuffer(contents, dtype=np.uint8) >= 0x80)
    rows, first = np.unique(np.searchsorted(offsets, high, side="right") - 1, return_index=True)
    plain[rows] = high[first] - offsets[rows]
    return plain


def _leaf_ends(holes: I64, hole_at: I64, total: int) -> I64:
    """Where each message's leaf tokens end, given each skeleton's holes and where the leaf ends are."""
    if hole_at.size != int(holes.sum()):
        raise MalformedArchive(f"content column: {hole_at.size} leaves for {int(holes.sum())} skeleton holes")
    ends = np.cumsum(holes)
    leaf_ends = np.where(ends > 0, hole_at[np.maximum(ends - 1, 0)] + 1, 0) if hole_at.size else np.zeros_like(holes)
    if holes.size and int(leaf_ends[-1]) != total:
        raise MalformedArchive("content column: tokens after the last leaf")
    return leaf_ends
