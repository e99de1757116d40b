"""Archives as a pipeline source: ssb-archive blocks decoded in Spark's Python workers and verified like any source.

Strategy: the driver reads only the Bundles (`ssblab.archive.folder.open_archive`, a few KB each), picks one run
of blocks per feed (`bundle.select_blocks`) and cuts the runs into splits of whole blocks (`load.Split` of kind
``archive``; its ``block`` field lists the blocks). Each task fetches its blocks from the blob folder, loads the
dictionaries they name (cached per worker process), and decodes them in the worker:

- `archive_facts` builds the facts rows from the Arrow decoder (`ssblab.archive.arrow.block_table`): the content
  column is the decoder's, the JSON text exactly as signed, never re-serialised;
- `archive_records` yields each rebuilt message's signed JSON as a raw record, which is what `load.iter_split`
  returns for archives, so `raw_messages`, `verify_spark` and its fork evidence read archives unchanged.

Either way the per-message checks are the core's own (`checks.fact_row` on each rebuilt encoding) and the chain
checks are `chain.verdicts`: every message gets the verdict the single-process validator gives to the same
messages in the same order (tests/pipeline/test_archives.py compares them).

Invariants: ``pos`` numbers the archive's messages feed by feed (feeds by key), block by block, so it is the same
for every run; a block that cannot be read (missing, damaged, malformed, lacking a dictionary, or disagreeing with
its Bundle's sketch) becomes one invalid record at its first position (rule ``json``, as a torn log.offset frame)
whose detail names the block and the fault; its messages are absent, and the feed's chain check reports the gap.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.archive import block as blocks
from ssblab.archive.dictionaries import Dictionaries
from ssblab.archive.errors import ArchiveMismatch, MissingBlob
from ssblab.archive.flat import DictSet
from ssblab.archive.folder import blob_ref, open_archive
from ssblab.archive.verify import check_stored
from ssblab.core.errors import SsbError
from ssblab.core.message import hmac_key_bytes
from ssblab.pipeline.chain import verdicts
from ssblab.pipeline.checks import FACT_FIELDS, FACTS_DDL, fact_row
from ssblab.pipeline.load import SPLIT_ROWS, RawRecord, Split, _arrow_schema, splits_frame, splits_of
from ssblab.store.blobs import BlobStore

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_ID, _CONTENT = FACT_FIELDS.index("id"), FACT_FIELDS.index("content")


@dataclass(frozen=True, slots=True)
class Piece:
    """One block of a split: its blob id, the position of its first message, its first sequence and length."""

    ref: str
    pos: int
    sequence: int
    length: int


def archive_splits(path: str | Path, split_rows: int = SPLIT_ROWS) -> list[Split]:
    """Whole blocks, about ``split_rows`` messages per split, in ``pos`` order (the driver reads Bundles only)."""
    archive = open_archive(path)
    for bundle in archive.bundles:  # what `ssblab archive verify` requires too; unreadable blocks become records
        check_stored(bundle, archive.fetch, skip_unavailable=True)
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


def _split(blobs: Path, path: str | Path, start: int, end: int, pieces: list[Piece]) -> Split:
    listed = json.dumps([[p.ref, p.pos, p.sequence, p.length] for p in pieces])
    return Split("archive", str(blobs), start, end, 0, str(path), listed)


def pieces_of(split: Split) -> list[Piece]:
    return [Piece(*item) for item in json.loads(split.block)]


@lru_cache(maxsize=8)
def _dictionaries(root: str, heads: DictSet) -> Dictionaries:
    """The chains a block names; blocks of one build share them, so each worker loads them once."""
    store = BlobStore(root)
    return Dictionaries.load(heads, lambda digest: store.get(blob_ref(digest)))


def decode_piece(root: str, piece: Piece) -> tuple[blocks.Block, Dictionaries]:
    """Fetch, check and decode one block of a split.

    Raises:
        SsbError: the block is missing, damaged, malformed, lacks a dictionary or disagrees with its Bundle.
    """
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


def _where(split: Split, piece: Piece, offset: int) -> str:
    return f"{split.prefix} block {piece.ref} sequence {piece.sequence + offset}"


def _broken(split: Split, piece: Piece, exc: SsbError) -> RawRecord:
    where = f"{split.prefix} block {piece.ref}"
    return RawRecord(piece.pos, where, None, torn=f"archive {where} is unreadable: {exc}")


def archive_records(split: Split) -> Iterator[RawRecord]:
    """Each message of the split's blocks as its rebuilt signed JSON (`load.iter_split` for archives)."""
    for piece in pieces_of(split):
        try:
            blk, dicts = decode_piece(split.path, piece)
            encodings, _ = blocks.encodings(blk, dicts, f"block {piece.ref}")
        except SsbError as exc:
            yield _broken(split, piece, exc)
            continue
        for i, enc in enumerate(encodings):
            yield RawRecord(piece.pos + i, _where(split, piece, i), enc)


def block_facts(split: Split, piece: Piece, key: bytes | None, schema: Any) -> Any:
    """The facts rows of one block as an Arrow batch: the core's checks on each rebuilt encoding, the content
    column from the Arrow decoder (the JSON text as signed)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ssblab.archive.arrow import block_table

    try:
        blk, dicts = decode_piece(split.path, piece)
        table = block_table(blk, dicts)
        encodings, _ = blocks.encodings(blk, dicts, f"block {piece.ref}")
    except SsbError as exc:
        return _batch([fact_row(_broken(split, piece, exc), key, False)], schema)
    records = [RawRecord(piece.pos + i, _where(split, piece, i), enc) for i, enc in enumerate(encodings)]
    rows = [fact_row(record, key, False) for record in records]
    # A row whose parse is exactly the rebuilt encoding (same id) takes the decoder's content; any other (a stored
    # encoding that is not JSON.stringify's) takes the compact content of its parse, as the JSON readers write it.
    same = pc.fill_null(pc.equal(pa.array([r[_ID] for r in rows], pa.string()), table.column("id")), False)
    compact = [None if ok else fact_row(rec, key, True)[_CONTENT] for ok, rec in zip(same.to_pylist(), records,
                                                                                        strict=True)]
    batch = _batch(rows, schema)
    content = pc.if_else(same, table.column("content"), pa.array(compact, pa.string())).combine_chunks()
    return batch.set_column(_CONTENT, schema.field(_CONTENT), content)


def _batch(rows: list[tuple[Any, ...]], schema: Any) -> Any:
    import pyarrow as pa

    columns = list(zip(*rows, strict=True))
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)],
                                      schema=schema)


def archive_facts(splits: DataFrame, *, hmac_key: Any = None, rows_done: Any = None) -> DataFrame:
    """A facts row (`checks.FACTS_DDL`, content included) per message of the archive splits (`splits_frame`)."""
    key = hmac_key_bytes(hmac_key)
    schema = _arrow_schema(FACTS_DDL)

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for split in splits_of(batch):
                for piece in pieces_of(split):
                    facts = block_facts(split, piece, key, schema)
                    if rows_done is not None:
                        rows_done.add(facts.num_rows)
                    yield facts

    return splits.mapInArrow(decode, FACTS_DDL)


def archive_verdicts(spark: SparkSession, path: str | Path, *, hmac_key: Any = None, carry: tuple[str, ...] = (),
                     split_rows: int = SPLIT_ROWS, rows_done: Any = None) -> DataFrame:
    """The verdicts of every message of the archive at ``path`` (lazy), as `verify.verdicts_of` gives them for
    other sources, with the facts columns in ``carry`` passed through."""
    facts = archive_facts(splits_frame(spark, archive_splits(path, split_rows)), hmac_key=hmac_key,
                          rows_done=rows_done)
    return verdicts(facts, carry)


def archive_messages(spark: SparkSession, path: str | Path, *, hmac_key: Any = None,
                     split_rows: int = SPLIT_ROWS) -> DataFrame:
    """The pipeline's ``messages`` table of an archive, verified (``valid``, ``error``) like any other source.

    Args:
        spark: the session.
        path: an ``archive.json``, a folder written by ``ssblab archive build`` or `folder.write_archives`, or a
            blob folder holding Bundles (`ssblab.archive.folder.open_archive`).
        hmac_key: a test network's HMAC key.
        split_rows: messages per task (whole blocks).

    Examples:
        >>> archive_messages(spark, "out/").filter("valid").count()  # doctest: +SKIP
    """
    from ssblab.pipeline.tables import CARRY, messages_table

    return messages_table(archive_verdicts(spark, path, hmac_key=hmac_key, carry=CARRY, split_rows=split_rows))
