"""StreamVByte integer columns and run-length coding, vectorised with numpy.

Layout (docs/archive-format.md §4): integer ``i`` gets a 2-bit code in byte ``i // 4`` of ``codes`` at bits
``2 * (i % 4)``; its value is stored little-endian in the smallest allowed width (1/2/3/4 bytes for "1234", 1/2/4/8
for "1248"). Unused code slots of the last byte are 0 and take no value bytes, so the count is implied: it is the
one prefix of slots whose widths add up to ``len(values)`` (every width is at least 1, so it is unique). Minimal
widths and zero padding make the encoding canonical: one list of integers has exactly one encoding.

Invariant: `decode` either returns the integers whose canonical encoding is ``(codes, values)`` or raises
`MalformedArchive`; it reads nothing outside the two buffers. With `_speedups` built, both directions run in C.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from ssblab.archive.compiled import speedups
from ssblab.archive.errors import ArchiveOverflow, MalformedArchive

__all__ = ["U64", "Flavour", "decode", "encode", "expand_runs", "run_lengths", "unzigzag", "zigzag"]

Flavour = Literal["1234", "1248"]
_WIDTHS: dict[str, tuple[int, ...]] = {"1234": (1, 2, 3, 4), "1248": (1, 2, 4, 8)}
_LIMITS: dict[str, int] = {"1234": 2**32, "1248": 2**64}
U64 = npt.NDArray[np.uint64]


def _codes_of(values: U64, flavour: Flavour) -> npt.NDArray[np.uint8]:
    if flavour == "1234":
        return ((values >= 1 << 8).astype(np.uint8) + (values >= 1 << 16) + (values >= 1 << 24)).astype(np.uint8)
    return ((values >= 1 << 8).astype(np.uint8) + (values >= 1 << 16) + (values >= 1 << 32)).astype(np.uint8)


def encode(ints: npt.ArrayLike, flavour: Flavour) -> tuple[bytes, bytes]:
    """The canonical ``(codes, values)`` of non-negative integers below 2**32 ("1234") or 2**64 ("1248")."""
    values = np.asarray(ints, dtype=np.uint64)
    if values.size and int(values.max()) >= _LIMITS[flavour]:
        raise ArchiveOverflow(f"StreamVByte{flavour}: {int(values.max())} does not fit")
    compiled = speedups()
    if compiled is not None:
        coded: tuple[bytes, bytes] = compiled.svb_encode(np.ascontiguousarray(values), flavour == "1248")
        return coded
    codes = _codes_of(values, flavour)
    widths = np.array(_WIDTHS[flavour], dtype=np.int64)[codes]
    le = values.astype("<u8").view(np.uint8).reshape(-1, 8)
    mask = np.arange(8)[None, :] < widths[:, None]
    packed = le[mask].tobytes()
    padded = np.zeros(-(-values.size // 4) * 4, dtype=np.uint8)
    padded[: values.size] = codes
    quads = padded.reshape(-1, 4)
    code_bytes = quads[:, 0] | (quads[:, 1] << 2) | (quads[:, 2] << 4) | (quads[:, 3] << 6)
    return code_bytes.astype(np.uint8).tobytes(), packed


def decode(codes: bytes, values: bytes, flavour: Flavour, *, where: str = "column") -> U64:
    """The integers of a canonical StreamVByte column (see the module docstring for the implied count)."""
    compiled = speedups()
    if compiled is not None:
        return np.frombuffer(compiled.svb_decode(codes, values, flavour == "1248", where), dtype=np.uint64)
    raw = np.frombuffer(codes, dtype=np.uint8)
    if raw.size and not raw.any():  # every value in one byte (the common case for ids and lengths)
        if -(-len(values) // 4) != raw.size:
            raise MalformedArchive(f"{where}: StreamVByte{flavour} codes are not canonical (padding or count)")
        return np.frombuffer(values, dtype=np.uint8).astype(np.uint64)
    slots = ((raw[:, None] >> np.array([0, 2, 4, 6], dtype=np.uint8)) & 3).reshape(-1)
    widths = np.array(_WIDTHS[flavour], dtype=np.int64)[slots]
    ends = np.cumsum(widths)
    count = int(np.searchsorted(ends, len(values), side="left")) + 1 if len(values) else 0
    if len(values) and (count > slots.size or ends[count - 1] != len(values)):
        raise MalformedArchive(f"{where}: StreamVByte{flavour} codes and values disagree in length")
    if -(-count // 4) != raw.size or slots[count:].any():
        raise MalformedArchive(f"{where}: StreamVByte{flavour} codes are not canonical (padding or count)")
    widths = widths[:count]
    starts = ends[:count] - widths
    buf = np.frombuffer(values, dtype=np.uint8)
    out = np.zeros(count, dtype=np.uint64)
    for byte in range(max(_WIDTHS[flavour])):
        has = widths > byte
        out[has] |= buf[starts[has] + byte].astype(np.uint64) << np.uint64(8 * byte)
    if count and not np.array_equal(_codes_of(out, flavour), slots[:count]):
        raise MalformedArchive(f"{where}: StreamVByte{flavour} value stored wider than needed (not canonical)")
    return out


def zigzag(deltas: npt.NDArray[np.int64]) -> U64:
    """Signed to unsigned so that small magnitudes stay small: 0, -1, 1, -2 -> 0, 1, 2, 3."""
    return ((deltas << 1) ^ (deltas >> 63)).astype(np.uint64)


def unzigzag(values: U64) -> npt.NDArray[np.int64]:
    return ((values >> np.uint64(1)).astype(np.int64)) ^ -((values & np.uint64(1)).astype(np.int64))


def run_lengths(ids: npt.ArrayLike) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """(value per run, length per run): maximal runs of equal values."""
    arr = np.asarray(ids, dtype=np.uint64)
    if arr.size == 0:
        return arr, arr
    starts = np.flatnonzero(np.concatenate(([True], arr[1:] != arr[:-1])))
    lengths = np.diff(np.append(starts, arr.size)).astype(np.uint64)
    return arr[starts], lengths


def expand_runs(values: U64, lengths: U64, total: int, *, where: str) -> U64:
    """Inverse of `run_lengths`, checking that runs are maximal, non-empty and add up to ``total``."""
    if values.size != lengths.size:
        raise MalformedArchive(f"{where}: {values.size} run values but {lengths.size} run lengths")
    if (lengths == 0).any() or int(lengths.sum(dtype=np.uint64)) != total:
        raise MalformedArchive(f"{where}: run lengths do not add up to the column length {total}")
    if values.size > 1 and (values[1:] == values[:-1]).any():
        raise MalformedArchive(f"{where}: two adjacent runs share a value (not canonical)")
    return np.repeat(values, lengths.astype(np.int64))
