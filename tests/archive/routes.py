"""The archive's two routes: the compiled `ssblab.archive._speedups` and the pure-Python one it replaces.

Each module that has a compiled path holds the extension as ``_speedups`` (None when it was not built), so
`pure_python` switches every one of them to the Python route for the duration of a block.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ssblab.archive import arrow, block, flat, svb, text

MODULES = (svb, text, arrow, block, flat)
COMPILED = text._speedups is not None
needs_compiled = pytest.mark.skipif(not COMPILED, reason="ssblab.archive._speedups is not built")


@contextmanager
def pure_python() -> Iterator[None]:
    saved = [m._speedups for m in MODULES]
    for m in MODULES:
        m._speedups = None
    try:
        yield
    finally:
        for m, ext in zip(MODULES, saved, strict=True):
            m._speedups = ext
