"""The compiled speed-ups (everything else is in pyproject.toml).

Each extension is optional: without a C compiler the install still succeeds and ssblab runs its pure-Python
routes, which give the same bytes (the tests compare both routes). ``SSBLAB_PURE_PYTHON=1``, the switch that makes
a running ssblab take the pure routes, also installs it without the extensions, on purpose. Either way the install
ships only what this build produced: every extension is compiled afresh, and a compiled module left in ``build/``
by an earlier build is deleted first, so a failed compile cannot ship a stale one. The helpers both extensions
share (a growing buffer, text and base64, SHA-256) live in ssblab/_c and are found through ``include_dirs``; each
extension links its own copy of their .c files.
"""

import os
from glob import glob
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SHARED = "ssblab/_c"
SHARED_SOURCES = sorted(glob(f"{SHARED}/*.c"))
# -fvisibility=hidden: the units of one extension see each other's functions; nothing else can bind to them.
COMPILE_ARGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"]
PURE = os.environ.get("SSBLAB_PURE_PYTHON", "") not in ("", "0")


class FreshBuildExt(build_ext):
    """build_ext that never reuses an earlier build's output."""

    def build_extension(self, ext: Extension) -> None:
        self.force = True
        Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
        super().build_extension(ext)


def speedups(package: str, sources: list[str], private: str) -> Extension:
    return Extension(
        f"ssblab.{package}._speedups",
        sources + SHARED_SOURCES,
        include_dirs=[SHARED, private],
        depends=sorted(glob(f"{SHARED}/*.h") + glob(f"{private}/*.h")),
        extra_compile_args=COMPILE_ARGS,
        optional=True,
    )


EXTENSIONS = [
    speedups("core", ["ssblab/core/_speedups.c"], "ssblab/core"),
    speedups("archive", sorted(glob("ssblab/archive/_c/*.c")), "ssblab/archive/_c"),
]
setup(ext_modules=[] if PURE else EXTENSIONS, cmdclass={"build_ext": FreshBuildExt})
