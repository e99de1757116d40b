"""Archive blocks straight into Arrow: the pipeline's ``messages`` table, column by column, no per-message JSON.

`MESSAGES_SCHEMA` is the pipeline's ``messages`` table (`ssblab.core.schema`, declared once for both).
Strategy: a block's content column is already one buffer plus offsets, so it becomes a string array without a
copy per message; sequences, timestamps, types and ``is_private`` are numpy operations over the block's columns.
Only the ids need a loop, because each id hashes the rebuilt message and the next message names it; that loop
formats and hashes, it never parses. Messages stored verbatim (rare: float timestamps, odd envelopes) are parsed.

``content`` is the JSON text of the content exactly as the author signed it (``JSON.stringify`` indentation at
depth one; the schema leaves its formatting open, so readers parse it): the raw bytes beside the parsed view.
``previous`` follows from the chain of ids. ``received`` is null (an archive does not know when a peer got a
message). ``valid`` is what the caller passes: true once the archive was verified; false with the error
``unverified`` before.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import islice

import numpy as np
import pyarrow as pa

from ssblab.archive import block as blocks
from ssblab.archive.compiled import speedups as _speedups
from ssblab.archive.dictionaries import TYPES, Chain, Dictionaries
from ssblab.archive.errors import MalformedArchive
from ssblab.core.schema import arrow_schema, arrow_timestamps

MESSAGES_SCHEMA = arrow_schema("messages")
UNVERIFIED = "unverified"
CLASSIC = "classic"  # an archive holds classic (JSON) feeds
_ID_TAIL = np.frombuffer(b"=.sha256", dtype=np.uint8)
_CONTENT_KEY = b'\n  "content": '


def id_texts(digests: bytes) -> bytes:
    """``%<base64>.sha256`` of each 32-byte digest of ``digests`` (end to end): 52 bytes each, end to end."""
    if _speedups is not None:
        return _speedups.id_texts(digests)  # type: ignore[no-any-return]
    n = len(digests) // 32
    padded = np.zeros((n, 33), dtype=np.uint8)
    padded[:, :32] = np.frombuffer(digests, dtype=np.uint8).reshape(n, 32)
    letters = np.frombuffer(base64.b64encode(padded.tobytes()), dtype=np.uint8).reshape(n, 44)
    out = np.empty((n, 52), dtype=np.uint8)
    out[:, 0] = ord("%")
    out[:, 1:44] = letters[:, :43]  # the 44th letter of 33 bytes is the "=" of 32 bytes
    out[:, 44:] = _ID_TAIL
    return out.tobytes()


def _id_columns(blk: blocks.Block, digests: bytes) -> tuple[pa.Array, pa.Array]:
    """(id, previous) over one buffer: each message's previous is the id before it, the block's own for the first
    (null at the start of a feed)."""
    n = blk.sketch.length
    texts = pa.py_buffer(id_texts((blk.previous or bytes(32)) + digests))
    offsets = pa.py_buffer(np.arange(0, 52 * (n + 2), 52, dtype=np.int32))
    ids = pa.StringArray.from_buffers(n, offsets, texts, offset=1)
    if blk.previous is not None:
        return ids, pa.StringArray.from_buffers(n, offsets, texts)
    valid = np.ones(n, dtype=np.bool_)
    valid[0] = False
    return ids, pa.StringArray.from_buffers(n, offsets, texts, pa.py_buffer(np.packbits(valid, bitorder="little")), 1)


def _verbatim_fields(enc: bytes, where: str) -> tuple[float | None, bytes | None]:
    """(timestamp, content text) of a message stored whole.

    Parsed like ``JSON.parse``, which takes what such a message may hold and stricter parsers refuse (a lone
    surrogate, say); only the timestamp is read from the value.

    Raises:
        MalformedArchive: the text is not JSON (an unverified archive may hold anything there).
    """
    try:
        value = json.loads(enc)
    except (ValueError, RecursionError) as exc:
        raise MalformedArchive(f"{where}: a message stored whole is not JSON ({exc})") from None
    stamp = value.get("timestamp") if isinstance(value, dict) else None
    stamp = float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) else None
    start = enc.find(_CONTENT_KEY)
    if start < 0:
        return stamp, None
    start += len(_CONTENT_KEY)
    end = enc.find(b',\n  "', start)
    return stamp, enc[start : end if end >= 0 else len(enc) - 2]


@lru_cache(maxsize=8)
def _type_names(chain: Chain) -> pa.Array:
    """The TYPE chain's names, after a null: a type column's ids (dictionary id + 1, 0 for none) index it."""
    return pa.array([None, *chain.names], pa.string())


def _types(blk: blocks.Block, dicts: Dictionaries) -> pa.Array:
    """The type column, taken from the TYPE chain's names (built once); ids were checked against the chain."""
    return _type_names(dicts.chains[TYPES]).take(pa.array(blk.type_ids))


def _contents(blk: blocks.Block, verbatim: list[int]) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(the content column, the timestamps, is_private): verbatim rows take theirs from their whole text."""
    n, contents, offsets = blk.sketch.length, blk.contents, blk.offsets
    stamps = blk.timestamps.astype(np.float64)
    starts = np.minimum(offsets[:-1], len(contents) - 1)  # an empty last text has no first byte
    first = np.frombuffer(contents, dtype=np.uint8)[starts] if len(contents) else np.zeros(n, np.uint8)
    private = (first == ord('"')) & (offsets[1:] > offsets[:-1])
    if not verbatim:  # texts are below 2 GiB (the decoder's limit): 32-bit offsets as they are
        data, ends = pa.py_buffer(contents), pa.py_buffer(offsets.astype(np.int32))
        return pa.StringArray.from_buffers(n, ends, data), stamps, private
    texts: list[bytes | None] = [contents[offsets[i] : offsets[i + 1]] for i in range(n)]
    stamps = stamps.astype(object)
    for i in verbatim:
        stamps[i], texts[i] = _verbatim_fields(contents[offsets[i] : offsets[i + 1]], f"message {i}")
        private[i] = texts[i] is not None and texts[i].startswith(b'"')  # type: ignore[union-attr]
    return pa.array([None if t is None else t.decode("utf-8", "replace") for t in texts], pa.string()), stamps, private


def block_tables(
    decoded: Sequence[blocks.Block], dicts: Dictionaries, *, valid: bool = False, wheres: Sequence[str] | None = None
) -> list[pa.Table]:
    """Decoded blocks as `MESSAGES_SCHEMA` tables (their ids hashed together: see `blocks.digests`); ``wheres``
    names them in errors."""
    return [
        _table(blk, dicts, digests, valid)
        for blk, digests in zip(decoded, blocks.digests(decoded, dicts, wheres), strict=True)
    ]


def block_table(blk: blocks.Block, dicts: Dictionaries, *, valid: bool = False) -> pa.Table:
    """One decoded block as a `MESSAGES_SCHEMA` table."""
    return block_tables([blk], dicts, valid=valid)[0]


def _table(blk: blocks.Block, dicts: Dictionaries, digests: bytes, valid: bool) -> pa.Table:
    n = blk.sketch.length
    ids, previous = _id_columns(blk, digests)
    content, stamps, private = _contents(blk, np.flatnonzero(blk.signature_ids == 0).tolist())
    author = pa.scalar(f"@{base64.b64encode(blk.author).decode()}.ed25519", pa.string())
    timestamps = pa.array(stamps, pa.float64())
    columns = {
        "id": ids,
        "author": pa.repeat(author, n),
        "sequence": pa.array(np.arange(blk.sketch.sequence_base, blk.sketch.sequence_base + n, dtype=np.int64)),
        "previous": previous,
        "timestamp": timestamps,
        "claimed_at": arrow_timestamps(timestamps),
        "received": pa.nulls(n, pa.float64()),
        "received_at": pa.nulls(n, MESSAGES_SCHEMA.field("received_at").type),
        "format": pa.repeat(pa.scalar(CLASSIC, pa.string()), n),
        "type": _types(blk, dicts),
        "content": content,
        "is_private": pa.array(private),
        "valid": pa.repeat(valid, n),
        "error": pa.nulls(n, pa.string()) if valid else pa.repeat(UNVERIFIED, n).cast(pa.string()),
    }
    return pa.Table.from_arrays([columns[name] for name in MESSAGES_SCHEMA.names], schema=MESSAGES_SCHEMA)


def _tables(numbered: Sequence[tuple[int, bytes]], dicts: Dictionaries, valid: bool) -> list[pa.Table]:
    """Block blobs, each with its place in the caller's list (which names it in errors), as tables."""
    wheres = [f"block {i}" for i, _ in numbered]
    decoded = [blocks.decode_block(data, dicts, where) for (_, data), where in zip(numbered, wheres, strict=True)]
    return block_tables(decoded, dicts, valid=valid, wheres=wheres)


def to_arrow(block_blobs: Iterable[bytes], dicts: Dictionaries, *, valid: bool = False) -> pa.Table:
    """Decode MessageBlock blobs (all coded with ``dicts``) into one `MESSAGES_SCHEMA` table."""
    tables = _tables(list(enumerate(block_blobs)), dicts, valid)
    return pa.concat_tables(tables) if tables else MESSAGES_SCHEMA.empty_table()


def iter_batches(block_blobs: Iterable[bytes], dicts: Dictionaries, *, valid: bool = False) -> Iterator[pa.RecordBatch]:
    """The same table as record batches, one per block, for writers that stream. Blocks are decoded two at a
    time, so that their ids hash side by side."""
    numbered = enumerate(block_blobs)
    for first in numbered:
        for table in _tables([first, *islice(numbered, 1)], dicts, valid):
            yield from table.to_batches()
