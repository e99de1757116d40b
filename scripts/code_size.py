"""Long functions and long modules of the ssblab tree (Python and C), as a short table.

The style aims for modules of at most ~400 lines and functions of at most ~40 (docs/notes: style by example);
this lists what is over, package by package, so a change can quote before and after.

    python scripts/code_size.py [ROOT] [--functions 40] [--modules 400] [--list] [--package core --package net]

Python functions are measured with `ast` (first decorator or ``def`` line to last line, nested functions
counted on their own too); C functions are found as a line that opens a definition at column 0 and closes with
a ``}`` at column 0, the layout every ssblab C file keeps. Generated code (ssblab/archive/fb) is left out.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

GENERATED = ("archive/fb/",)
C_START = re.compile(r"^(?:static\s+|inline\s+|PyMODINIT_FUNC\s*)*[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;]*$")


class Item(NamedTuple):
    package: str
    path: str
    name: str
    lines: int


def python_functions(path: Path, source: str) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append((node.name, (node.end_lineno or node.lineno) - first + 1))
    return found


def c_functions(source: str) -> list[tuple[str, int]]:
    found, name, start = [], None, 0
    for number, line in enumerate(source.splitlines(), 1):
        if name is None:
            match = C_START.match(line)
            if match and not line.startswith(("#", " ", "\t", "typedef", "struct", "enum")):
                name, start = match.group(1), number
        elif line.startswith("}"):
            found.append((name, number - start + 1))
            name = None
        elif line.endswith(";") and not line.startswith((" ", "\t", "{")):
            name = None  # a prototype spread over lines, not a definition
    return found


def measure(root: Path, packages: set[str]) -> tuple[list[Item], list[Item]]:
    modules, functions = [], []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.suffix not in (".py", ".c", ".h") or any(relative.startswith(g) for g in GENERATED):
            continue
        package = relative.split("/")[0] if "/" in relative else "(top)"
        if packages and package not in packages:
            continue
        source = path.read_text(encoding="utf-8")
        modules.append(Item(package, relative, "", source.count("\n")))
        found = python_functions(path, source) if path.suffix == ".py" else c_functions(source)
        functions += [Item(package, relative, name, count) for name, count in found]
    return modules, functions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", default=Path(__file__).resolve().parents[1] / "ssblab", type=Path)
    parser.add_argument("--functions", type=int, default=40, help="list functions longer than this")
    parser.add_argument("--modules", type=int, default=400, help="list modules longer than this")
    parser.add_argument("--package", action="append", default=[], help="only these packages (repeatable)")
    parser.add_argument("--list", action="store_true", help="also name each long function and module")
    args = parser.parse_args()
    modules, functions = measure(args.root, set(args.package))
    long_modules = [m for m in modules if m.lines > args.modules]
    long_functions = [f for f in functions if f.lines > args.functions]
    by_module, by_function = Counter(m.package for m in long_modules), Counter(f.package for f in long_functions)
    packages = sorted({m.package for m in modules})
    print(f"{'package':<12}{'modules':>9}{f'>{args.modules}':>7}{'functions':>11}{f'>{args.functions}':>6}"
          f"{'longest':>9}")
    for package in packages:
        own = [f.lines for f in functions if f.package == package]
        print(f"{package:<12}{sum(m.package == package for m in modules):>9}{by_module[package]:>7}"
              f"{len(own):>11}{by_function[package]:>6}{max(own, default=0):>9}")
    print(f"{'total':<12}{len(modules):>9}{len(long_modules):>7}{len(functions):>11}{len(long_functions):>6}"
          f"{max((f.lines for f in functions), default=0):>9}")
    if args.list:
        for m in sorted(long_modules, key=lambda m: -m.lines):
            print(f"module   {m.lines:>5}  {m.path}")
        for f in sorted(long_functions, key=lambda f: -f.lines):
            print(f"function {f.lines:>5}  {f.path}:{f.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
