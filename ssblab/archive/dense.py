"""(s,c)-dense codes for token ranks: a byte-oriented code that sits close to Huffman on word frequencies.

Layout (docs/archive-format.md §6.3, after Brisaboa et al., "(S,C)-Dense Coding"): bytes below ``s`` are
stoppers and end a codeword, bytes from ``s`` to 255 are continuers (``c = 256 - s`` digits). Codewords of 1, 2, 3
and 4 bytes cover ``s``, ``s*c``, ``s*c**2`` and ``s*c**3`` ranks in turn; within a length, the continuers are the
big-endian base-``c`` digits of ``(rank - base) // s`` and the stopper is ``(rank - base) % s``. `best_s` picks the
``s`` that makes the column smallest (ties: the smaller ``s``), so the choice is a function of the ranks alone.

Invariants: every byte string ending in a stopper parses one way, so the code is canonical for a given ``s``;
`decode` checks that codewords are at most 4 bytes and that the buffer ends with a stopper.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ssblab.archive.errors import ArchiveOverflow, MalformedArchive

__all__ = ["I64", "MAX_LENGTH", "best_s", "decode", "encode"]

MAX_LENGTH = 4
I64 = npt.NDArray[np.int64]


def _bases(s: int) -> list[int]:
    """First rank of each codeword length 1..4, and the capacity after length 4."""
    c = 256 - s
    bases = [0]
    for length in range(MAX_LENGTH):
        bases.append(bases[-1] + s * c**length)
    return bases


def best_s(ranks: I64, alphabet: int) -> int:
    """The stopper count that codes ``ranks`` in the fewest bytes, able to code ``alphabet`` distinct ranks."""
    counts = np.bincount(ranks, minlength=alphabet) if ranks.size else np.zeros(alphabet, dtype=np.int64)
    tail = np.concatenate((np.cumsum(counts[::-1])[::-1], [0]))  # tail[k]: how many ranks are >= k
    best, best_size = 0, -1
    for s in range(1, 256):
        bases = _bases(s)
        if bases[-1] < alphabet:
            continue
        size = sum(int(tail[min(b, alphabet)]) for b in bases[:MAX_LENGTH])
        if best_size < 0 or size < best_size:
            best, best_size = s, size
    if best_size < 0:
        raise ArchiveOverflow(f"{alphabet} distinct tokens do not fit a 4-byte dense code")
    return best


def encode(ranks: I64, s: int) -> bytes:
    """The dense code of ``ranks`` with ``s`` stoppers."""
    c, bases = 256 - s, _bases(s)
    if ranks.size and int(ranks.max()) >= bases[-1]:
        raise ArchiveOverflow(f"rank {int(ranks.max())} does not fit a 4-byte dense code with s={s}")
    lengths = np.searchsorted(np.array(bases[1:]), ranks, side="right") + 1
    rest = ranks - np.array(bases)[lengths - 1]
    ends = np.cumsum(lengths) - 1
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    out[ends] = rest % s
    digits = rest // s
    for back in range(1, MAX_LENGTH):
        has = lengths > back
        out[ends[has] - back] = s + digits[has] % c
        digits = digits // c
    return out.tobytes()


def decode(data: bytes, s: int, where: str) -> I64:
    """The ranks coded in ``data`` (see the module docstring)."""
    if not 1 <= s <= 255:
        raise MalformedArchive(f"{where}: dense code parameter s={s} outside 1..255")
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        return np.zeros(0, dtype=np.int64)
    if buf[-1] >= s:
        raise MalformedArchive(f"{where}: the token stream ends inside a codeword")
    ends = np.flatnonzero(buf < s)
    lengths = np.diff(ends, prepend=-1)
    if int(lengths.max()) > MAX_LENGTH:
        raise MalformedArchive(f"{where}: a codeword longer than {MAX_LENGTH} bytes")
    ranks = buf[ends].astype(np.int64)
    longer = np.flatnonzero(lengths > 1)  # most codewords are one stopper byte
    if longer.size:
        c, bases = 256 - s, np.array(_bases(s))
        at, size = ends[longer], lengths[longer]
        digits = np.zeros(longer.size, dtype=np.int64)
        for back in range(1, MAX_LENGTH):
            has = size > back
            digits[has] += (buf[at[has] - back].astype(np.int64) - s) * c ** (back - 1)
        ranks[longer] += bases[size - 1] + digits * s
    return ranks
