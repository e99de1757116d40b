"""The compiled fast paths (``_speedups.c``) and the one switch that turns them off.

Each compiled function either proves the common case or hands the input back to the pure-Python rules, which
decide every other case and name the errors; both routes give the same bytes and verdicts (tests/core compare
them), so leaving the extension out only costs speed. It is left out where ssblab was installed without a C
compiler, and wherever the environment says ``SSBLAB_PURE_PYTHON=1``.

The switch is read at call time. ``os.environ.get`` costs about a microsecond for a variable that is not set (it
raises and catches two exceptions; a message's whole check costs about eighty), so where the extension is built
the switch is read with C's getenv (``env_flag``), which sees what os.environ writes (putenv, unsetenv) for a few
tens of nanoseconds. Functions on the per-message path also take the route as an argument (``compiled``, a
`Route`) whose default reads the switch, so a caller that handles many messages can choose it once
(`Message.from_json`, `FeedValidator`). Tests and benchmarks choose a route with the environment
(``monkeypatch.setenv``); nothing rebinds a module global.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Literal, TypeAlias

__all__ = ["PURE_PYTHON", "SWITCH", "Route", "built", "is_pure_python", "load_extension", "route", "speedups"]

PURE_PYTHON = "SSBLAB_PURE_PYTHON"  # set to "1" for the pure-Python routes
SWITCH: Literal["switch"] = "switch"  # a Route that says: read the switch now
Route: TypeAlias = ModuleType | Literal["switch"] | None  # the extension, None for pure Python, or SWITCH


def load_extension(name: str) -> ModuleType | None:
    """The compiled module ``name``, or None where it was not built (setup.py makes each one optional)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_EXTENSION = load_extension("ssblab.core._speedups")


def is_pure_python() -> bool:
    """True when ``SSBLAB_PURE_PYTHON=1`` asks for the pure-Python routes (read now, not at import)."""
    if _EXTENSION is not None:
        return bool(_EXTENSION.env_flag(PURE_PYTHON))  # the same environment, without os.environ's miss
    return os.environ.get(PURE_PYTHON) == "1"


def built() -> ModuleType | None:
    """The extension as built, whatever the switch says: None only without a C compiler at install time."""
    return _EXTENSION


def speedups() -> ModuleType | None:
    """The extension for this call: None where it was not built or the switch asks for pure Python."""
    if _EXTENSION is None or _EXTENSION.env_flag(PURE_PYTHON):  # is_pure_python, one call shorter
        return None
    return _EXTENSION


def route(compiled: Route) -> ModuleType | None:
    """The extension a call takes: the one given (None: pure Python), or the switch's when ``SWITCH``."""
    return speedups() if isinstance(compiled, str) else compiled
