"""The local engine's processes: how a source is cut for them, and the pool that runs the splits.

Strategy: a source is cut into about four splits per worker, so uneven splits even out; a pool pays for itself
only above `PARALLEL_BYTES` of source (below it, this process does the work alone: no fork, no pickling). Workers
are forked where this process runs no other threads, else started by a fork server (forking a threaded process
can deadlock), and never load pandas (`_lean`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ssblab.pipeline.sources import plan_splits, resolve_source
from ssblab.pipeline.splits import SPLIT_BYTES, Split

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["cores", "is_parallel", "local_splits", "pool_map", "worker_pool"]

T = TypeVar("T")
R = TypeVar("R")
MIN_SPLIT_BYTES = 2**20  # smaller splits cost more in process round trips than they spread
SPLIT_ROWS = 2_500  # stores and archives: messages per split (4 per worker of a 20,000-message store)
PARALLEL_BYTES = 4 * 2**20  # below this much source the pool's start-up costs more than it saves


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _source_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def local_splits(source: str | Path, workers: int) -> list[Split]:
    """Splits for ``workers`` processes: about four each, so that uneven splits even out."""
    where = resolve_source(source)[1]
    size = _source_bytes(where)
    split_bytes = min(SPLIT_BYTES, max(MIN_SPLIT_BYTES, size // (4 * workers)))
    return plan_splits(where, split_bytes=split_bytes, split_rows=SPLIT_ROWS)


def is_parallel(source: str | Path, workers: int) -> bool:
    """Whether a pool pays for itself on this source."""
    return workers > 1 and _source_bytes(resolve_source(source)[1]) >= PARALLEL_BYTES


@contextmanager
def worker_pool(workers: int) -> Iterator[Executor | None]:
    """A process pool of ``workers`` (None for one: run inline)."""
    if workers <= 1:
        yield None
        return
    # Imported here: a small source never forks, and `ssblab verify` of one message must start fast.
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "forkserver"
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method), initializer=_lean) as pool:
        yield pool


def _lean() -> None:
    """A worker's start. Workers compute rows and Arrow batches, never DataFrames, but pyarrow imports pandas on
    its first conversion of a Python list (a quarter of a second, in each worker) unless pandas cannot be
    imported: in a worker it cannot (a worker that inherited pandas from this process keeps it)."""
    if "pandas" not in sys.modules:
        sys.meta_path.insert(0, _NoPandas())


class _NoPandas:
    """An import finder that refuses pandas (pyarrow then converts without it)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not loaded in a worker", name=name)


def pool_map(pool: Executor | None, work: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
    """``map(work, items)`` in order, in the pool when there is one."""
    if pool is None:
        return map(work, items)
    return pool.map(work, items)
