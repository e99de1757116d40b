"""The archive's compiled hot loops (``_speedups.c``), or None where ssblab was installed without a C compiler.

Each module with a compiled path binds this as ``_speedups`` and keeps its pure-Python route, which gives the same
bytes and rows (tests/archive run both), so None only costs speed.
"""

from __future__ import annotations

from types import ModuleType

speedups: ModuleType | None
try:
    from ssblab.archive import _speedups as speedups
except ImportError:
    speedups = None
