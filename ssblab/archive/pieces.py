"""Byte strings laid end to end, and gathers over them in one call: how decoders avoid a Python step per token.

A `Pieces` is one buffer plus ``n + 1`` offsets. Dictionary chains keep their entries this way (built once per
chain), so a block decoder only appends its own few thousand tokens and lets Arrow's ``take`` copy the token
sequence of the whole block into one buffer: C speed for the step that touches every byte of every message.

Invariant: `gather` returns exactly ``b"".join(items[i] for i in seq)`` and the offsets between the items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ssblab.archive.errors import ArchiveOverflow

__all__ = ["I64", "Pieces", "concat", "gather"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Pieces:
    data: bytes
    offsets: I64  # n + 1 ascending offsets into ``data``, starting at 0

    @classmethod
    def of(cls, items: Sequence[bytes]) -> Pieces:
        offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=offsets[1:])
        return cls(b"".join(items), offsets)

    def __len__(self) -> int:
        return self.offsets.size - 1

    @property
    def lengths(self) -> I64:
        return np.diff(self.offsets)


def concat(parts: Sequence[Pieces]) -> Pieces:
    """The pieces of each part in turn (indexes shift by the sizes of the parts before)."""
    shifts = np.cumsum([0, *(len(p.data) for p in parts)])
    offsets = np.concatenate([p.offsets[:-1] + s for p, s in zip(parts, shifts, strict=False)] + [shifts[-1:]])
    return Pieces(b"".join(p.data for p in parts), offsets.astype(np.int64))


def gather(pieces: Pieces, seq: I64) -> tuple[bytes, I64]:
    """(the pieces at ``seq`` joined, ``seq.size + 1`` offsets of each in the result).

    Raises:
        ArchiveOverflow: the result would not fit 32-bit offsets (2 GiB; real blocks hold megabytes).
    """
    total = int(pieces.lengths[seq].sum())
    if total >= 2**31:
        raise ArchiveOverflow(f"a gather of {total} bytes")
    offsets = pieces.offsets.astype(np.int32)
    array = pa.BinaryArray.from_buffers(
        pa.binary(), len(pieces), [None, pa.py_buffer(offsets), pa.py_buffer(pieces.data)]
    )
    taken = array.take(pa.array(seq, pa.int64()))
    ends = np.frombuffer(taken.buffers()[1], dtype=np.int32, count=seq.size + 1).astype(np.int64)
    data = taken.buffers()[2]
    return (b"" if data is None else data.slice(int(ends[0]), total).to_pybytes()), ends - ends[0]
