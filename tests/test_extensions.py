"""Both compiled extensions are built wherever the machine has a C compiler (setup.py makes them optional)."""

from __future__ import annotations

import shutil
import sysconfig
from types import ModuleType

import pytest

from ssblab.archive import compiled as archive_compiled
from ssblab.core import compiled as core_compiled


@pytest.mark.parametrize("compiled", [core_compiled, archive_compiled], ids=["core", "archive"])
def test_the_extension_is_built_where_a_compiler_is(compiled: ModuleType) -> None:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}): ssblab runs its pure-Python routes")
    built = compiled.speedups is not None
    assert built, f"{compiled.__name__}: _speedups failed to build (`pip install -e . -v` shows why)"
