"""Progress bars for long CLI jobs: on stderr, and only when stderr is a terminal.

tqdm is imported only when a bar is shown: a command whose output goes to a pipe or a file (scripts, tests,
benchmarks) pays nothing for it at start-up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["Bar", "progress", "ticking"]

T = TypeVar("T")


class Bar:
    """A progress bar that shows nothing (stderr is not a terminal)."""

    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        pass


def progress(desc: str, total: int | None = None, unit: str = " msg") -> Any:
    """A tqdm bar on stderr counting ``unit``s, or a `Bar` that shows nothing where stderr is not a terminal."""
    if not sys.stderr.isatty():
        return Bar()
    from tqdm import tqdm

    return tqdm(desc=desc, total=total, unit=unit, unit_scale=True, file=sys.stderr)


def ticking(items: Iterable[T], bar: Any) -> Iterator[T]:
    """``items`` unchanged, advancing ``bar`` once per item."""
    for item in items:
        yield item
        bar.update()
