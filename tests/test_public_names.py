"""Every module of the pure packages says what it exports: ``__all__`` is exactly the public names it defines.

A package ``__init__`` re-exports names from its modules; each must resolve. ``ssblab.archive`` loads lazily (a
module ``__getattr__`` over its ``_HOME`` table), so its table must place every exported name where it lives.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = ("core", "net", "reconcile", "certs", "archive")
ROOT = Path(__file__).resolve().parents[1] / "ssblab"
MODULES = sorted(
    p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
    if "fb" not in p.relative_to(ROOT).parts and p.name != "__init__.py"
)


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def _name(path: Path) -> str:
    return "ssblab." + ".".join(path.relative_to(ROOT).with_suffix("").parts)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_all_is_what_the_module_defines(path: Path) -> None:
    module = importlib.import_module(_name(path))
    exported = module.__all__
    assert len(set(exported)) == len(exported)
    assert set(exported) == _defined(ast.parse(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("package", [*PACKAGES, "net.ebt"])
def test_a_package_exports_names_that_resolve(package: str) -> None:
    module = importlib.import_module(f"ssblab.{package}")
    assert len(set(module.__all__)) == len(module.__all__)
    assert all(hasattr(module, name) for name in module.__all__)


def test_the_archive_loads_lazily_and_its_table_is_right() -> None:
    archive = importlib.import_module("ssblab.archive")
    assert sorted(archive._HOME) == sorted(archive.__all__)
    for name, home in archive._HOME.items():
        assert name in importlib.import_module(f"ssblab.archive.{home}").__all__, name
    code = "import sys, ssblab.archive; print(sorted({'numpy', 'pyarrow', 'flatbuffers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
