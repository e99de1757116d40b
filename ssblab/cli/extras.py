"""What each optional dependency is for: the extra that installs it, so a verb can say what to install."""

from __future__ import annotations

import importlib.util

from ssblab.core.errors import SsbError

__all__ = ["EXTRAS", "MissingExtra", "advice", "require"]

# An importable name and the extra that brings it (pyproject.toml).
EXTRAS = {"pyspark": "spark", "py4j": "spark", "altair": "viz", "vl_convert": "viz", "ipywidgets": "notebooks",
          "polars": "polars"}


class MissingExtra(SsbError):
    """A verb needs a package of an extra that is not installed."""

    code = "missing-dependency"


def advice(module: str) -> str:
    """``"install ssblab[extra]"``-style advice for a missing module."""
    extra = EXTRAS.get(module.split(".")[0])
    return f"pip install 'ssblab[{extra}]'" if extra else f"pip install {module.split('.')[0]}"


def require(what: str, *modules: str) -> None:
    """Check up front that ``modules`` can be imported, before a long job starts.

    Raises:
        MissingExtra: one is missing; the message names ``what`` needs it and the extra to install.
    """
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(f"{what} needs {module}: {advice(module)}")
