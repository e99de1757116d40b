"""The compiled speed-ups (everything else is in pyproject.toml).

Each extension is optional: without a C compiler the install still succeeds and ssblab runs its pure-Python
routes, which give the same bytes (the tests compare both routes). ``SSBLAB_PURE=1`` chooses that route on purpose.
Either way the install ships only what this build produced: every extension is compiled afresh, and a compiled
module left in ``build/`` by an earlier build is deleted first, so a failed compile cannot ship a stale one.
"""

import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HEADERS = ["ssblab/core/_sha256.h", "ssblab/core/_text.h"]  # shared by both extensions
COMPILE_ARGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
PURE = os.environ.get("SSBLAB_PURE", "") not in ("", "0")


class FreshBuildExt(build_ext):
    """build_ext that never reuses an earlier build's output."""

    def build_extension(self, ext: Extension) -> None:
        self.force = True
        Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
        super().build_extension(ext)


def speedups(package: str) -> Extension:
    return Extension(f"ssblab.{package}._speedups", [f"ssblab/{package}/_speedups.c"], depends=HEADERS,
                     extra_compile_args=COMPILE_ARGS, optional=True)


setup(ext_modules=[] if PURE else [speedups("core"), speedups("archive")], cmdclass={"build_ext": FreshBuildExt})
