"""The widgets package: every public name resolves, and importing it loads no heavy dependency."""

from __future__ import annotations

import subprocess
import sys

import ssblab.widgets


def test_every_public_name_resolves() -> None:
    missing = [name for name in ssblab.widgets.__all__ if not hasattr(ssblab.widgets, name)]
    assert not missing


def test_import_is_light() -> None:
    probe = ("import sys, ssblab.widgets; heavy = {'pyspark', 'pandas', 'ipywidgets', 'altair', 'vl_convert'}"
             " & set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
