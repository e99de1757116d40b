"""Rebuilding a decoded block's signed messages and ids, with one Python step per message: hash and chain.

Each message's encoding is ``A + previous + Z``. Everything but ``previous`` is known from the block's columns,
so `frames` builds every ``A`` and ``Z`` with Arrow's element-wise join (sequence and timestamp digits, the
content text, the signature's base64, the constant key lines of the message's key order), one call per key order.
Only ``previous`` needs a loop: it is the id of the message just rebuilt, and hashing that message is the one step
per message that `chain` takes. A message stored verbatim (``Z`` is None) is its own text.

The id is sha256 over ``Buffer.from(text, "binary")`` (the low byte of each UTF-16 unit). Envelope lines are
ASCII, so only rows whose content is not ASCII are framed a second time, over the contents transcoded to that
form by `binary_form` (numpy, touching only the non-ASCII bytes), before the same loop hashes them.

With `_speedups` built, `_speedups.block_digests` renders, transcodes and hashes in C instead, two blocks' chains
side by side (one chain waits on SHA-256's latency), and `_speedups.message_texts` renders the texts once the ids
are known.

Invariant: the encodings and digests equal those of the per-message rendering of docs/archive-format.md §5.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from binascii import b2a_base64
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ssblab.archive.block import Block
from ssblab.archive.compiled import speedups
from ssblab.archive.dictionaries import KEYS, PATHS, SIGNATURES, Dictionaries
from ssblab.archive.envelope import KEYS as ENVELOPE_KEYS
from ssblab.archive.errors import MalformedArchive, MissingDictionary

__all__ = [
    "FIELDS", "I64", "PREVIOUS_CLOSE", "PREVIOUS_OPEN", "binary_form", "block_frames", "chain", "compiled_layout",
    "compiled_rows", "digests", "digits", "encodings", "envelope_columns", "first_text", "frames", "orders",
    "rebuild_block", "signature_column", "texts",
]

PREVIOUS_OPEN, PREVIOUS_CLOSE = b'"%', b'.sha256"'
# The fields `_speedups.block_digests` renders per message (author and hash are constant within a block).
FIELDS = {"previous": 0, "sequence": 1, "timestamp": 2, "content": 3, "signature": 4}
_FOUR = ((0, 0x07, 18), (1, 0x3F, 12), (2, 0x3F, 6), (3, 0x3F, 0))  # bytes of a 4-byte UTF-8 character
_EMPTY = pa.scalar(b"", pa.large_binary())
I64 = npt.NDArray[np.int64]


def digits(values: I64) -> pa.Array:
    return pc.cast(pc.cast(pa.array(values, pa.int64()), pa.large_string()), pa.large_binary())


def texts(data: bytes, offsets: I64) -> pa.Array:
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), offsets.size - 1, [None, pa.py_buffer(offsets.astype(np.int64)), pa.py_buffer(data)]
    )


def signature_column(signatures: bytes) -> pa.Array:
    """``"<base64>.sig.ed25519"`` (with its quotes) for each 64-byte signature, from one base64 call.

    64 bytes padded to 66 give 88 letters whose first 86 are those of the 64 bytes (then ``==``).
    """
    n = len(signatures) // 64
    padded = np.zeros((n, 66), dtype=np.uint8)
    padded[:, :64] = np.frombuffer(signatures, dtype=np.uint8).reshape(n, 64)
    letters = np.frombuffer(base64.b64encode(padded.tobytes()), dtype=np.uint8).reshape(n, 88)
    out = np.empty((n, 102), dtype=np.uint8)
    out[:, 0] = ord('"')
    out[:, 1:87] = letters[:, :86]
    out[:, 87:] = np.frombuffer(b'==.sig.ed25519"', dtype=np.uint8)
    return texts(out.tobytes(), np.arange(0, 102 * n + 1, 102, dtype=np.int64))


def binary_form(contents: bytes, offsets: I64) -> tuple[bytes, I64]:
    """Valid UTF-8 ``contents`` as the low bytes of its UTF-16 units, and the offsets mapped into that form.

    Only the non-ASCII bytes are touched: a 2- or 3-byte character becomes the low byte of its code point, a
    4-byte one the low bytes of its two surrogates, and the other continuation bytes are dropped.
    """
    if contents.isascii():
        return contents, offsets
    raw = np.frombuffer(contents, dtype=np.uint8)
    high = np.flatnonzero(raw >= 0x80)
    kind = raw[high] >> 4  # 8..11 continuation, 12..13 two bytes, 14 three, 15 four
    two, three, four = high[(kind == 12) | (kind == 13)], high[kind == 14], high[kind == 15]
    out = raw.copy()
    out[two] = ((raw[two] & 0x03) << 6) | (raw[two + 1] & 0x3F)
    out[three] = ((raw[three + 1] & 0x03) << 6) | (raw[three + 2] & 0x3F)
    point = sum((raw[four + k].astype(np.int64) & mask) << shift for k, mask, shift in _FOUR) - 0x10000
    out[four], out[four + 1] = (point >> 10) & 0xFF, point & 0xFF
    keep = np.ones(raw.size, dtype=np.bool_)
    keep[high[kind < 12]] = False
    keep[four + 1] = True  # the low surrogate's byte
    dropped = np.flatnonzero(~keep)
    return out[keep].tobytes(), offsets - np.searchsorted(dropped, offsets)


@lru_cache(maxsize=64)
def _layout(order: tuple[str, ...]) -> tuple[tuple[pa.Scalar | str, ...], ...]:
    """The parts of A and Z for ``order``: constant text (as Arrow scalars, adjacent ones merged) or a key."""
    sides: tuple[list[bytes | str], list[bytes | str]] = ([], [])
    texts = [b"", b""]  # the constant text each side ends with so far
    side = 0
    for j, key in enumerate(order):
        texts[side] += (b"{\n" if j == 0 else b",\n") + b'  "' + key.encode() + b'": '
        if key == "previous":
            texts[0] += PREVIOUS_OPEN
            texts[1] += PREVIOUS_CLOSE
            side = 1
        else:
            sides[side].extend((texts[side], key))
            texts[side] = b""
    texts[1] += b"\n}"
    return tuple(
        tuple(pa.scalar(p, pa.large_binary()) if isinstance(p, bytes) else p for p in (*parts, text) if p != b"")
        for parts, text in zip(sides, texts, strict=True)
    )


def frames(
    columns: Mapping[str, pa.Array | pa.Scalar], rows: I64 | None, order: tuple[str, ...], n: int
) -> tuple[list[bytes], list[bytes]]:
    """(A, Z) of ``rows`` (None: all ``n``): the text before the ``previous`` id and after it, in key ``order``.

    ``columns`` gives each envelope value's JSON text (an array over the block's rows, or one scalar); A ends
    with the id's opening ``"%`` and Z starts with its closing ``.sha256"``.
    """
    out = []
    for parts in _layout(order):
        args = [p if not isinstance(p, str) else _rows(columns[p], rows) for p in parts]
        joined = pc.binary_join_element_wise(*args, _EMPTY) if len(args) > 1 else args[0]
        out.append(
            [joined.as_py()] * (n if rows is None else rows.size)
            if isinstance(joined, pa.Scalar)
            else joined.to_pylist()
        )
    return out[0], out[1]


def _rows(column: pa.Array | pa.Scalar, rows: I64 | None) -> pa.Array | pa.Scalar:
    return column if isinstance(column, pa.Scalar) or rows is None else column.take(rows)


def chain(first: bytes, a: Sequence[bytes], z: Sequence[bytes | None]) -> list[bytes]:
    """The sha256 digest of each message: the first one's is given, each next one names the one before."""
    digests = [first]
    sha256 = hashlib.sha256
    d = first
    for head, tail in zip(a, z, strict=True):
        d = sha256(head if tail is None else head + b2a_base64(d, newline=False) + tail).digest()
        digests.append(d)
    return digests


def envelope_columns(block: Block) -> dict[str, pa.Array | pa.Scalar]:
    """The JSON text of each envelope value but ``previous`` and ``content``: a column, or one scalar."""
    n, base = block.sketch.length, block.sketch.sequence_base
    return {
        "author": pa.scalar(b'"@' + base64.b64encode(block.author) + b'.ed25519"', pa.large_binary()),
        "hash": pa.scalar(b'"sha256"', pa.large_binary()),
        "sequence": digits(np.arange(base, base + n, dtype=np.int64)),
        "timestamp": digits(block.timestamps),
        "signature": signature_column(block.signatures),
    }


def block_frames(
    block: Block,
    by_order: dict[int, tuple[str, ...]],
    columns: dict[str, pa.Array | pa.Scalar],
    contents: tuple[bytes, npt.NDArray[np.int64]],
    subset: npt.NDArray[np.int64] | None = None,
) -> tuple[list[bytes], list[bytes | None]]:
    """(A, Z) of every message, or of the ``subset`` rows (`frames`); verbatim: (its text, None)."""
    columns = {**columns, "content": texts(*contents)}
    ids = block.signature_ids if subset is None else block.signature_ids[subset]
    if len(by_order) == 1 and not (ids == 0).any():
        (order,) = by_order.values()
        return frames(columns, subset, order, ids.size)  # type: ignore[return-value]
    picked = np.arange(ids.size) if subset is None else subset
    at = contents[1].tolist()
    a: list[bytes] = [contents[0][at[i] : at[i + 1]] for i in picked.tolist()]
    z: list[bytes | None] = [None] * picked.size
    for ident, order in by_order.items():
        local = np.flatnonzero(ids == ident)
        for j, head, tail in zip(local.tolist(), *frames(columns, picked[local], order, 0), strict=True):
            a[j], z[j] = head, tail
    return a, z


def first_text(block: Block, head: bytes, tail: bytes | None) -> bytes:
    """The first message's text: its ``previous`` is the block's, or null at the start of the feed."""
    if tail is None:
        return head
    if block.previous is None:
        return head[: -len(PREVIOUS_OPEN)] + b"null" + tail[len(PREVIOUS_CLOSE) :]
    return head + base64.b64encode(block.previous) + tail


@lru_cache(maxsize=64)
def compiled_layout(order: tuple[str, ...], author: bytes) -> tuple[bytes | int, ...]:
    """The message text of ``order`` for `_speedups.block_digests`: constant text and `FIELDS` codes, in turn."""
    parts: list[bytes | int] = []
    text = b""  # the constant text since the last field
    for j, key in enumerate(order):
        text += (b"{\n" if j == 0 else b",\n") + b'  "' + key.encode() + b'": '
        if key in FIELDS:
            parts.extend((text, FIELDS[key]))
            text = b""
        else:
            text += author if key == "author" else b'"sha256"'
    parts.append(text + b"\n}")
    return tuple(p for p in parts if p != b"")


def compiled_rows(block: Block, by_order: dict[int, tuple[str, ...]], where: str) -> tuple[object, ...]:
    """The block as `_speedups.block_digests` and `message_texts` take it: its columns and each key order's layout."""
    author = b'"@' + base64.b64encode(block.author) + b'.ed25519"'
    idents = sorted(by_order)
    lookup = np.full(max(idents, default=0) + 1, -1, dtype=np.int64)
    lookup[idents] = np.arange(len(idents))
    layout_of = lookup[block.signature_ids.astype(np.int64)]
    layouts = tuple(compiled_layout(by_order[i], author) for i in idents)
    return (
        block.contents, block.offsets, block.plain, layout_of, layouts, block.timestamps, block.sketch.sequence_base,
        block.signatures, block.previous, where,
    )  # fmt: skip


def orders(block: Block, dicts: Dictionaries, where: str) -> dict[int, tuple[str, ...]]:
    """The key order of each object signature id used by the block (checked to be an envelope order)."""
    found = {}
    for ident in np.flatnonzero(np.bincount(block.signature_ids)).tolist():  # ids are small: below the chain's size
        if ident == 0:
            continue
        paths = dicts.chains[SIGNATURES].get(ident - 1, where)
        keys = [dicts.chains[KEYS].get(dicts.chains[PATHS].get(p, where)[0], where) for p in paths]
        order = tuple(k.decode("utf-8", "replace") for k in keys)
        if sorted(order) != sorted(ENVELOPE_KEYS):
            raise MalformedArchive(f"{where}: object signature {ident - 1} is not a classic message envelope")
        found[ident] = order
    return found


def _checked_orders(block: Block, dicts: Dictionaries, where: str) -> dict[int, tuple[str, ...]]:
    """`orders`, once ``dicts`` are proved to be the ones the block was coded with."""
    if block.dictionaries != dicts.heads:
        raise MissingDictionary(f"{where} was coded with other dictionaries than the ones given")
    return orders(block, dicts, where)


def rebuild_block(block: Block, dicts: Dictionaries, where: str, keep: bool) -> tuple[list[bytes], list[bytes]]:
    """(each message's signed JSON when ``keep``, else []; each message's sha256 id digest)."""
    by_order = _checked_orders(block, dicts, where)
    compiled = speedups()
    if compiled is not None:
        args = compiled_rows(block, by_order, where)
        (joined,) = compiled.block_digests([args])
        texts = compiled.message_texts(args, joined) if keep else []
        return texts, [joined[i : i + 32] for i in range(0, len(joined), 32)]
    columns = envelope_columns(block)
    a, z = block_frames(block, by_order, columns, (block.contents, block.offsets))
    a_bin, z_bin = a, z
    rows = np.flatnonzero(block.plain < np.diff(block.offsets))
    if rows.size:  # the id hashes the low byte of each UTF-16 unit: frame those rows again in that form
        a_bin, z_bin = list(a), list(z)
        binary = binary_form(block.contents, block.offsets)
        for i, head, tail in zip(
            rows.tolist(), *block_frames(block, by_order, columns, binary, rows), strict=True
        ):
            a_bin[i], z_bin[i] = head, tail
    digests = chain(
        hashlib.sha256(first_text(block, a_bin[0], z_bin[0])).digest(), a_bin[1:], z_bin[1:]
    )
    if not keep:
        return [], digests
    b2a = binascii.b2a_base64
    out = [first_text(block, a[0], z[0])]
    out.extend(
        head if tail is None else head + b2a(d, newline=False) + tail
        for head, tail, d in zip(a[1:], z[1:], digests, strict=False)
    )
    return out, digests


def digests(blocks: Sequence[Block], dicts: Dictionaries, wheres: Sequence[str] | None = None) -> list[bytes]:
    """Each block's message id digests, end to end (32 bytes each): what a table needs, without the texts.

    Compiled, the blocks' chains are hashed two at a time, so pass all the blocks at hand at once.
    """
    named = list(zip(blocks, wheres or [f"block {i}" for i in range(len(blocks))], strict=True))
    compiled = speedups()
    if compiled is None:
        return [b"".join(rebuild_block(block, dicts, where, keep=False)[1]) for block, where in named]
    rows = [compiled_rows(block, _checked_orders(block, dicts, where), where) for block, where in named]
    return compiled.block_digests(rows)  # type: ignore[no-any-return]


def encodings(block: Block, dicts: Dictionaries, where: str = "block") -> tuple[list[bytes], list[bytes]]:
    """Each message's signed JSON (signature included) and its sha256 id digest, in feed order."""
    return rebuild_block(block, dicts, where, keep=True)
