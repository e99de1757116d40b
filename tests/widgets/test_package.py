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


def test_no_module_of_the_package_imports_another_in_a_circle() -> None:
    """Each view sits next to its model and shared things live in the leaf ``common``: the imports form no cycle."""
    import ast
    from pathlib import Path

    package = Path(ssblab.widgets.__file__).parent
    graph = {}
    for path in package.glob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ssblab.widgets."):
                names.add(node.module.removeprefix("ssblab.widgets."))
        graph[path.stem] = names
    assert graph["common"] == set()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ()))

    assert [module for module in graph if reaches(module, module, set())] == []
