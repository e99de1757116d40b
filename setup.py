"""The compiled speed-ups (everything else is in pyproject.toml).

Each extension is optional: without a C compiler the install still succeeds and ssblab runs its pure-Python
routes, which give the same bytes (the tests compare both routes).
"""

from setuptools import Extension, setup

HEADERS = ["ssblab/core/_sha256.h", "ssblab/core/_text.h"]  # shared by both extensions
COMPILE_ARGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]


def speedups(package: str) -> Extension:
    return Extension(f"ssblab.{package}._speedups", [f"ssblab/{package}/_speedups.c"], depends=HEADERS,
                     extra_compile_args=COMPILE_ARGS, optional=True)


setup(ext_modules=[speedups("core"), speedups("archive")])
