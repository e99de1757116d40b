"""Progress bars for long CLI jobs: on stderr, and only when stderr is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(desc: str, total: int | None = None, *, unit: str = " msg") -> tqdm:  # type: ignore[type-arg]
    """A bar counting ``unit`` (messages unless told otherwise)."""
    return tqdm(desc=desc, total=total, unit=unit, unit_scale=True, disable=None, file=sys.stderr)


def ticking(items: Iterable[T], bar: tqdm) -> Iterator[T]:  # type: ignore[type-arg]
    """``items`` unchanged, advancing ``bar`` once per item."""
    for item in items:
        yield item
        bar.update()
