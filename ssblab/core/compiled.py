"""The compiled fast paths (``_speedups.c``), or None where ssblab was installed without a C compiler.

Each compiled function either proves the common case or hands the input back to the pure-Python rules, which
decide every other case and name the errors; both routes give the same bytes and verdicts (tests/core compare
them), so None only costs speed.
"""

from __future__ import annotations

from types import ModuleType

speedups: ModuleType | None
try:
    from ssblab.core import _speedups as speedups
except ImportError:
    speedups = None
