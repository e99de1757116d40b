"""The sdist and the wheel as users get them: the licence inside, one version everywhere, and a pure-Python
build that really is pure even where an earlier build left compiled modules in build/."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import ssblab
from tests.packaging.tree import clean_copy

pytestmark = pytest.mark.slow


def _build(tree: Path, out: Path, *args: str, **env: str) -> None:
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), *args], cwd=tree,
                   check=True, capture_output=True, env={**os.environ, **env}, timeout=600)


def _wheel_names(out: Path) -> list[str]:
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="the dev extra's build package is missing")
    return clean_copy(tmp_path_factory.mktemp("tree"))


def test_sdist_and_wheel_carry_the_licence_and_the_version(tree: Path, tmp_path: Path) -> None:
    _build(tree, tmp_path)
    (sdist,) = tmp_path.glob("*.tar.gz")
    version = ssblab.__version__
    assert sdist.name == f"ssblab-{version}.tar.gz"
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert f"ssblab-{version}/LICENSE" in names and f"ssblab-{version}/CHANGELOG.md" in names
    wheel = _wheel_names(tmp_path)
    assert f"ssblab-{version}.dist-info/licenses/LICENSE" in wheel
    assert any(name.endswith(".so") for name in wheel), "a build with a compiler ships the compiled fast paths"
    with zipfile.ZipFile(next(tmp_path.glob("*.whl"))) as archive:
        metadata = archive.read(f"ssblab-{version}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Project-URL: Documentation" in metadata
    assert 'setuptools>=68; python_version >= "3.12" and extra == "spark"' in metadata


@pytest.mark.parametrize("route", ["CC=/bin/false", "SSBLAB_PURE_PYTHON=1"])
def test_a_pure_build_ships_no_compiled_module_even_after_a_compiled_one(tree: Path, tmp_path: Path,
                                                                          route: str) -> None:
    _build(tree, tmp_path / "compiled", "--wheel")  # leaves compiled modules in tree/build
    assert list((tree / "build").rglob("_speedups*.so")), "the first build should leave its modules in build/"
    name, value = route.split("=")
    _build(tree, tmp_path / "pure", "--wheel", **{name: value})
    assert [n for n in _wheel_names(tmp_path / "pure") if n.endswith(".so")] == []
    assert any(n.endswith(".so") for n in _wheel_names(tmp_path / "compiled"))


def test_the_cli_reports_the_package_version() -> None:
    out = subprocess.run([sys.executable, "-m", "ssblab", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"ssblab {ssblab.__version__}"
