"""The public names exist, and `import ssblab` stays light (no Spark, asyncio, numpy or widgets)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import ssblab

PACKAGES = [
    "ssblab", "ssblab.core", "ssblab.store", "ssblab.net", "ssblab.net.ebt", "ssblab.generate", "ssblab.friends",
    "ssblab.certs", "ssblab.reconcile", "ssblab.sim", "ssblab.pipeline", "ssblab.viz", "ssblab.archive",
    "ssblab.replicate", "ssblab.graph", "ssblab.tangles", "ssblab.widgets", "ssblab.report", "ssblab.datasets",
    "ssblab.dataset",
]


def test_every_public_name_exists() -> None:
    for module in map(importlib.import_module, PACKAGES):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, f"{module.__name__}.__all__ names missing attributes: {missing}"


def test_core_api_named_by_the_issue() -> None:
    for name in ("parse_json", "signing_encoding", "message_id", "verify_message", "validate_feed", "Keypair",
                 "create_message", "box", "unbox", "InvalidMessage", "InvalidJson", "SsbError"):
        assert name in ssblab.__all__


def test_import_is_minimal() -> None:
    probe = ("import sys, ssblab, ssblab.store, ssblab.graph, ssblab.pipeline; heavy = {'pyspark', 'asyncio', 'numpy',"
             " 'pandas', 'pyarrow', 'duckdb', 'ipywidgets', 'altair'} & set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


REPO = Path(__file__).resolve().parents[1]


def _cells(path: Path, kinds: tuple[str, ...] = ("code", "markdown")) -> list[str]:
    """The sources of a notebook's cells of those kinds, without their outputs (a saved output may print a class's
    module path, which is not a name the reader is asked to use)."""
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] in kinds]


def _code_of(path: Path) -> list[str]:
    """The Python a reader is shown: a notebook's code cells, a Markdown page's ``python`` blocks."""
    if path.suffix == ".ipynb":
        return _cells(path, ("code",))
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)


def _prose_and_code(path: Path) -> str:
    """What a reader is told: a page's text, or a notebook's cells."""
    return "\n".join(_cells(path)) if path.suffix == ".ipynb" else path.read_text()


def _imported_names(source: str) -> set[tuple[str, str]]:
    """``(module, name)`` for each ``from ssblab... import name`` of the source (top-level await allowed)."""
    tree = ast.parse(source.replace("await ", ""))
    return {(node.module, alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ssblab"
            for alias in node.names}


def _dotted_names(text: str) -> set[tuple[str, str]]:
    """``(module, name)`` for each ``ssblab.module.name`` the text mentions: the longest prefix that is a module,
    and the name after it."""
    found = set()
    # (``ssblab.sqlite3`` is the store's database file, not a name)
    for dotted in re.findall(r"\bssblab(?:\.[A-Za-z_][A-Za-z0-9_]*)+", text.replace("ssblab.sqlite3", "")):
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            parent = importlib.import_module(".".join(parts[: cut - 1])) if cut > 1 else None
            if (parent is None or hasattr(parent, "__path__")) and importlib.util.find_spec(module) is not None:
                found.add((module, parts[cut]))
                break
    return found


def _exported(module: str, name: str) -> bool:
    found = importlib.import_module(module)
    if name in getattr(found, "__all__", ()):
        return True
    return hasattr(found, "__path__") and importlib.util.find_spec(f"{module}.{name}") is not None


def test_readme_docs_and_notebooks_use_only_exported_names() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "notebooks").glob("*.ipynb"))]
    unexported = []
    for page in pages:
        imported = {pair for source in _code_of(page) for pair in _imported_names(source)}
        used = _dotted_names(_prose_and_code(page)) | imported
        unexported += [f"{page.name}: {module}.{name}" for module, name in sorted(used)
                       if not _exported(module, name)]
    assert unexported == []


def test_every_module_declares_its_public_names() -> None:
    missing = [str(p.relative_to(REPO)) for p in sorted((REPO / "ssblab").rglob("*.py"))
               if p.name != "__main__.py" and "fb" not in p.parts and "\n__all__ = " not in p.read_text()]
    assert missing == []
