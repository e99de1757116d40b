"""The architecture, checked: imports point down the layers of the README, and no module imports itself in a
circle (not through a lazy import either).

Every import statement of every module counts, wherever it stands (top level, inside a function); imports under
``if TYPE_CHECKING:`` count for the layers but not for circles (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ssblab"
# The README's order, lowest first: a module may import its own layer and the layers below.
LAYERS: list[set[str]] = [
    {"core"},
    {"store", "net", "archive", "reconcile", "certs", "friends", "generate", "sim"},
    {"replicate"},
    {"pipeline"},
    {"graph", "tangles"},
    {"dataset", "datasets", "viz", "widgets", "report", "cli", "__main__"},
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py") if "fb" not in p.relative_to(PACKAGE).parts[:2]}


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0  # the root package is the core's face
    return next(i for i, names in enumerate(LAYERS) if parts[1] in names)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _imported(package: str, name: str) -> str:
    """What ``from package import name`` imports: the submodule ``package.name`` where there is one (Python or
    compiled), else the package."""
    folder = PACKAGE.parent.joinpath(*package.split("."))
    is_module = f"{package}.{name}" in MODULES or any(folder.glob(f"{name}.*")) or (folder / name).is_dir()
    return f"{package}.{name}" if is_module else package


def imports(module: str) -> list[tuple[str, bool]]:
    """``(imported ssblab module, only for type checking)`` for each import in the module."""
    tree = ast.parse(MODULES[module].read_text())
    typing_only = _type_checking_lines(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [_imported(node.module, alias.name) for alias in node.names]
        else:
            continue
        found += [(name, node.lineno in typing_only) for name in names if name.split(".")[0] == "ssblab"]
    return found


def test_imports_point_down_the_layers() -> None:
    upward = [f"{module} imports {target}" for module in MODULES for target, _ in imports(module)
              if layer(target) > layer(module)]
    assert upward == []


def test_no_import_circles() -> None:
    graph = {module: {target for target, typing in imports(module) if not typing and target in MODULES and
                      target != module} for module in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == module:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert circles == []


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if m.count(".") and m.split(".")[1] not in set().union(*LAYERS)] == []
