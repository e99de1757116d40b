"""The archive's two routes: the compiled `ssblab.archive._speedups` and the pure-Python one it replaces.

The one switch is the environment: `pure_python` sets ``SSBLAB_PURE_PYTHON=1`` for the duration of a block, and
every module with a compiled path reads it at its next call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ssblab.archive import compiled
from ssblab.core.compiled import PURE_PYTHON

COMPILED = compiled.built() is not None
needs_compiled = pytest.mark.skipif(not COMPILED, reason="ssblab.archive._speedups is not built")


@contextmanager
def pure_python() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PURE_PYTHON, "1")
        yield
