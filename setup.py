"""The compiled speed-ups (everything else is in pyproject.toml).

Each extension is optional: without a C compiler the install still succeeds and ssblab runs its pure-Python
routes, which give the same bytes (the tests compare both routes). The helpers both extensions share (a growing
buffer, text and base64, SHA-256) live in ssblab/_c and are found through ``include_dirs``; each extension links
its own copy of their .c files.
"""

from glob import glob

from setuptools import Extension, setup

SHARED = "ssblab/_c"
SHARED_SOURCES = sorted(glob(f"{SHARED}/*.c"))
# -fvisibility=hidden: the units of one extension see each other's functions; nothing else can bind to them.
COMPILE_ARGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"]


def speedups(package: str, sources: list[str], private: str) -> Extension:
    return Extension(
        f"ssblab.{package}._speedups",
        sources + SHARED_SOURCES,
        include_dirs=[SHARED, private],
        depends=sorted(glob(f"{SHARED}/*.h") + glob(f"{private}/*.h")),
        extra_compile_args=COMPILE_ARGS,
        optional=True,
    )


setup(
    ext_modules=[
        speedups("core", ["ssblab/core/_speedups.c"], "ssblab/core"),
        speedups("archive", sorted(glob("ssblab/archive/_c/*.c")), "ssblab/archive/_c"),
    ]
)
