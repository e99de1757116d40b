"""``Array.prototype.sort`` as V8 (Node 20) runs it: TimSort, comparison for comparison.

Why: ssb-sort orders a thread with ``Array.prototype.sort`` and a comparator that is not a total order when
claimed times contradict the links (a reply claiming to be older than its parent). The result then depends on
which pairs the sort happens to compare, so matching it means making the same comparisons in the same order.

Strategy: a port of V8's ``third_party/v8/builtins/array-sort.tq`` (itself a port of CPython's 2002 listsort,
before CPython moved to powersort merges): runs found by ``count_and_make_run`` (a strictly descending run is
reversed), extended to the minimum run length by binary insertion, merged with the stack invariants of the 2015
fix, and galloping merges starting at ``min_gallop = 7``. Only the comparator's sign is used; the comparator
must be antisymmetric (ssb-sort's is), not transitive.

Invariants: pure (no I/O); the input list is not modified; every element comes out exactly once, whatever the
comparator answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["js_sort"]

T = TypeVar("T")
MIN_GALLOP = 7


def _min_run(n: int) -> int:
    r = 0
    while n >= 64:
        r |= n & 1
        n >>= 1
    return n + r


class _TimSort:
    """One sort's state: the work array, the pending runs and ``min_gallop`` (V8's ``SortState``)."""

    def __init__(self, items: list[T], cmp: Callable[[T, T], float]) -> None:
        self.a: list[T] = items
        self.cmp = cmp
        self.runs: list[list[int]] = []  # [base, length]
        self.min_gallop = MIN_GALLOP

    def lt(self, x: T, y: T) -> bool:
        return self.cmp(x, y) < 0

    def run(self) -> None:
        low, remaining = 0, len(self.a)
        min_run = _min_run(remaining)
        while remaining:
            length = self.count_and_make_run(low, low + remaining)
            if length < min_run:
                forced = min(min_run, remaining)
                self.binary_insertion(low, low + length, low + forced)
                length = forced
            self.runs.append([low, length])
            self.merge_collapse()
            low += length
            remaining -= length
        while len(self.runs) > 1:
            n = len(self.runs) - 2
            if n > 0 and self.runs[n - 1][1] < self.runs[n + 1][1]:
                n -= 1
            self.merge_at(n)

    def binary_insertion(self, low: int, start: int, high: int) -> None:
        a = self.a
        for i in range(start + 1 if start == low else start, high):
            pivot, left, right = a[i], low, i
            while left < right:
                mid = left + ((right - left) >> 1)
                if self.lt(pivot, a[mid]):
                    right = mid
                else:
                    left = mid + 1
            a[left + 1 : i + 1] = a[left:i]
            a[left] = pivot

    def count_and_make_run(self, low: int, high: int) -> int:
        a = self.a
        if low + 1 == high:
            return 1
        descending = self.lt(a[low + 1], a[low])
        length = 2
        for i in range(low + 2, high):
            if self.lt(a[i], a[i - 1]) != descending:
                break
            length += 1
        if descending:
            a[low : low + length] = a[low : low + length][::-1]
        return length

    def merge_collapse(self) -> None:
        runs = self.runs

        def settled(n: int) -> bool:
            return n < 2 or runs[n - 2][1] > runs[n - 1][1] + runs[n][1]

        while len(runs) > 1:
            n = len(runs) - 2
            if not settled(n + 1) or not settled(n):
                if runs[n - 1][1] < runs[n + 1][1]:
                    n -= 1
            elif runs[n][1] > runs[n + 1][1]:
                break
            self.merge_at(n)

    def merge_at(self, i: int) -> None:
        (base_a, len_a), (base_b, len_b) = self.runs[i], self.runs[i + 1]
        self.runs[i] = [base_a, len_a + len_b]
        del self.runs[i + 1]
        k = gallop_right(self.lt, self.a, self.a[base_b], base_a, len_a, 0)
        base_a, len_a = base_a + k, len_a - k
        if len_a == 0:
            return
        len_b = gallop_left(self.lt, self.a, self.a[base_a + len_a - 1], base_b, len_b, len_b - 1)
        if len_b == 0:
            return
        if len_a <= len_b:
            self.merge_low(base_a, len_a, base_b, len_b)
        else:
            self.merge_high(base_a, len_a, base_b, len_b)

    def merge_low(self, base_a: int, len_a: int, base_b: int, len_b: int) -> None:
        """Merge two adjacent runs left to right, run A (the shorter) copied out (V8's ``MergeLow``)."""
        a, lt = self.a, self.lt
        tmp = a[base_a : base_a + len_a]
        dest, ca, cb = base_a + 1, 0, base_b + 1
        a[base_a] = a[base_b]
        len_b -= 1
        done = not len_b or len_a == 1
        while not done:
            wins_a = wins_b = 0
            while not done and wins_a < self.min_gallop and wins_b < self.min_gallop:  # one pair at a time
                if lt(a[cb], tmp[ca]):
                    a[dest], dest, cb, len_b, wins_b, wins_a = a[cb], dest + 1, cb + 1, len_b - 1, wins_b + 1, 0
                else:
                    a[dest], dest, ca, len_a, wins_a, wins_b = tmp[ca], dest + 1, ca + 1, len_a - 1, wins_a + 1, 0
                done = not len_b or len_a == 1
            if done:
                break
            self.min_gallop += 1
            first = True
            while not done and (first or wins_a >= MIN_GALLOP or wins_b >= MIN_GALLOP):  # galloping
                first = False
                self.min_gallop = max(1, self.min_gallop - 1)
                wins_a = gallop_right(lt, tmp, a[cb], ca, len_a, 0)
                a[dest : dest + wins_a] = tmp[ca : ca + wins_a]
                dest, ca, len_a = dest + wins_a, ca + wins_a, len_a - wins_a
                if len_a <= 1:
                    done = True
                    break
                a[dest], dest, cb, len_b = a[cb], dest + 1, cb + 1, len_b - 1
                wins_b = gallop_left(lt, a, tmp[ca], cb, len_b, 0) if len_b else 0
                a[dest : dest + wins_b] = a[cb : cb + wins_b]
                dest, cb, len_b = dest + wins_b, cb + wins_b, len_b - wins_b
                if not len_b:
                    done = True
                    break
                a[dest], dest, ca, len_a = tmp[ca], dest + 1, ca + 1, len_a - 1
                done = len_a == 1
            if not done:
                self.min_gallop += 1  # leaving galloping mode costs
        if len_a == 1 and len_b:  # V8's CopyB: the last element of A belongs at the end
            a[dest : dest + len_b] = a[cb : cb + len_b]
            a[dest + len_b] = tmp[ca]
        elif len_a:
            a[dest : dest + len_a] = tmp[ca : ca + len_a]

    def merge_high(self, base_a: int, len_a: int, base_b: int, len_b: int) -> None:
        """Merge two adjacent runs right to left, run B (the shorter) copied out (V8's ``MergeHigh``)."""
        a, lt = self.a, self.lt
        tmp = a[base_b : base_b + len_b]
        dest, ca, cb = base_b + len_b - 2, base_a + len_a - 2, len_b - 1
        a[base_b + len_b - 1] = a[base_a + len_a - 1]
        len_a -= 1
        done = not len_a or len_b == 1
        while not done:
            wins_a = wins_b = 0
            while not done and wins_a < self.min_gallop and wins_b < self.min_gallop:
                if lt(tmp[cb], a[ca]):
                    a[dest], dest, ca, len_a, wins_a, wins_b = a[ca], dest - 1, ca - 1, len_a - 1, wins_a + 1, 0
                else:
                    a[dest], dest, cb, len_b, wins_b, wins_a = tmp[cb], dest - 1, cb - 1, len_b - 1, wins_b + 1, 0
                done = not len_a or len_b == 1
            if done:
                break
            self.min_gallop += 1
            first = True
            while not done and (first or wins_a >= MIN_GALLOP or wins_b >= MIN_GALLOP):
                first = False
                self.min_gallop = max(1, self.min_gallop - 1)
                wins_a = len_a - gallop_right(lt, a, tmp[cb], base_a, len_a, len_a - 1)
                dest, ca, len_a = dest - wins_a, ca - wins_a, len_a - wins_a
                a[dest + 1 : dest + 1 + wins_a] = a[ca + 1 : ca + 1 + wins_a]
                if not len_a:
                    done = True
                    break
                a[dest], dest, cb, len_b = tmp[cb], dest - 1, cb - 1, len_b - 1
                if len_b == 1:
                    done = True
                    break
                wins_b = len_b - gallop_left(lt, tmp, a[ca], 0, len_b, len_b - 1)
                dest, cb, len_b = dest - wins_b, cb - wins_b, len_b - wins_b
                a[dest + 1 : dest + 1 + wins_b] = tmp[cb + 1 : cb + 1 + wins_b]
                if len_b <= 1:
                    done = True
                    break
                a[dest], dest, ca, len_a = a[ca], dest - 1, ca - 1, len_a - 1
                done = not len_a
            if not done:
                self.min_gallop += 1
        if len_b == 1 and len_a:  # V8's CopyA: the first element of B belongs at the front
            dest, ca = dest - len_a, ca - len_a
            a[dest + 1 : dest + 1 + len_a] = a[ca + 1 : ca + 1 + len_a]
            a[dest] = tmp[cb]
        elif len_b:
            a[dest - (len_b - 1) : dest + 1] = tmp[:len_b]


def gallop_left(lt: Callable[[T, T], bool], a: Sequence[T], key: T, base: int, length: int, hint: int) -> int:
    """Where ``key`` goes in the sorted ``a[base:base+length]``, left of equal elements, searched from ``hint``."""
    last, ofs = 0, 1
    if lt(a[base + hint], key):
        max_ofs = length - hint
        while ofs < max_ofs and lt(a[base + hint + ofs], key):
            last, ofs = ofs, (ofs << 1) + 1
        last, ofs = last + hint, min(ofs, max_ofs) + hint
    else:
        max_ofs = hint + 1
        while ofs < max_ofs and not lt(a[base + hint - ofs], key):
            last, ofs = ofs, (ofs << 1) + 1
        last, ofs = hint - min(ofs, max_ofs), hint - last
    last += 1
    while last < ofs:
        m = last + ((ofs - last) >> 1)
        if lt(a[base + m], key):
            last = m + 1
        else:
            ofs = m
    return ofs


def gallop_right(lt: Callable[[T, T], bool], a: Sequence[T], key: T, base: int, length: int, hint: int) -> int:
    """Where ``key`` goes in the sorted ``a[base:base+length]``, right of equal elements, searched from ``hint``."""
    last, ofs = 0, 1
    if lt(key, a[base + hint]):
        max_ofs = hint + 1
        while ofs < max_ofs and lt(key, a[base + hint - ofs]):
            last, ofs = ofs, (ofs << 1) + 1
        last, ofs = hint - min(ofs, max_ofs), hint - last
    else:
        max_ofs = length - hint
        while ofs < max_ofs and not lt(key, a[base + hint + ofs]):
            last, ofs = ofs, (ofs << 1) + 1
        last, ofs = last + hint, min(ofs, max_ofs) + hint
    last += 1
    while last < ofs:
        m = last + ((ofs - last) >> 1)
        if lt(key, a[base + m]):
            ofs = m
        else:
            last = m + 1
    return ofs


def js_sort(items: Sequence[T], compare: Callable[[T, T], float]) -> list[T]:
    """A sorted copy of ``items``, exactly as ``items.slice().sort(compare)`` in Node 20.

    Examples:
        >>> js_sort([3, 1, 2], lambda x, y: x - y)
        [1, 2, 3]
    """
    work = list(items)
    if len(work) > 1:
        _TimSort(work, compare).run()
    return work
