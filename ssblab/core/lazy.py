"""The one idiom of the lazy packages: a package lists where each public name lives (``_HOME``: name -> its
submodule), and a module ``__getattr__`` imports that submodule when the name is first used.

Why: ``import ssblab.graph`` (or ``pipeline``, ``store``, …) must not load numpy, pyarrow, DuckDB or pyspark, and a
command-line verb pays at start-up only for the modules it uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, home: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names live in the submodules ``home``
    names. A name's submodule is imported on first use; the value is kept in the package for later uses.

    Examples:
        >>> getattr_, dir_ = lazy_names("ssblab.core", {"encode": "encoding"})
        >>> getattr_("encode").__name__, "encode" in dir_()
        ('encode', True)
    """

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home[name]}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(importlib.import_module(package)), *home})

    return __getattr__, __dir__
