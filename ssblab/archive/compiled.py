"""The archive's compiled hot loops (``_speedups``, built from ssblab/archive/_c), under the core's one switch.

Each module with a compiled path asks `speedups` once per call (a block, a column or a batch of them) and keeps
its pure-Python route, which gives the same bytes and rows (tests/archive run both), so None only costs speed:
None where ssblab was installed without a C compiler, or where ``SSBLAB_PURE_PYTHON=1`` (`ssblab.core.compiled`).
"""

from __future__ import annotations

from types import ModuleType

from ssblab.core.compiled import is_pure_python, load_extension

__all__ = ["built", "speedups"]

_EXTENSION = load_extension("ssblab.archive._speedups")


def built() -> ModuleType | None:
    """The extension as built, whatever the switch says: None only without a C compiler at install time."""
    return _EXTENSION


def speedups() -> ModuleType | None:
    """The extension for this call: None where it was not built or ``SSBLAB_PURE_PYTHON=1``."""
    return None if is_pure_python() else _EXTENSION
