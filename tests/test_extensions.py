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
    built = compiled.built() is not None
    assert built, f"{compiled.__name__}: _speedups failed to build (`pip install -e . -v` shows why)"


def test_one_switch_read_at_call_time_turns_every_compiled_route_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(core_compiled.PURE_PYTHON, "1")
    assert core_compiled.speedups() is None and archive_compiled.speedups() is None
    monkeypatch.setenv(core_compiled.PURE_PYTHON, "0")
    assert core_compiled.speedups() is core_compiled.built()
    assert archive_compiled.speedups() is archive_compiled.built()
