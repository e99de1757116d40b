"""Run notebooks in place and keep their outputs (``make notebooks``), as deterministically as they allow.

Each notebook runs top to bottom in a fresh kernel started in a temporary folder (the tutorials write nothing
next to themselves), with ``PYTHONHASHSEED=0`` and no timing metadata; outputs that measure time still vary. The
widgets' state is kept, so saved widgets show on nbviewer. Prints each notebook's run time and the cells that took
longer than ``--slow`` seconds; a failing cell stops the run with its traceback and leaves that notebook as it was.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def run(path: Path, slow: float) -> tuple[float, list[tuple[int, float, str]]]:
    """Execute ``path`` in place; returns its run time and its slow cells (index, seconds, first line)."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    started: dict[int, float] = {}
    slow_cells: list[tuple[int, float, str]] = []

    def before(cell: Any, cell_index: int, **_: Any) -> None:
        started[cell_index] = time.perf_counter()

    def after(cell: Any, cell_index: int, **_: Any) -> None:
        seconds = time.perf_counter() - started[cell_index]
        if seconds > slow:
            slow_cells.append((cell_index, seconds, cell.source.splitlines()[0] if cell.source else ""))

    begin = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ssblab-notebook-") as scratch:
        client = nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3", record_timing=False,
                                         resources={"metadata": {"path": scratch}},
                                         on_cell_execute=before, on_cell_executed=after)
        client.execute()
    nbformat.write(notebook, path)
    return time.perf_counter() - begin, slow_cells


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--slow", type=float, default=10.0, help="report cells slower than this (seconds)")
    args = parser.parse_args(argv)
    os.environ["PYTHONHASHSEED"] = "0"  # the kernels inherit it
    total = 0.0
    for path in args.notebooks:
        seconds, slow_cells = run(path, args.slow)
        total += seconds
        print(f"{path.name}: {seconds:.0f} s")
        for index, cell_seconds, first in slow_cells:
            print(f"  cell {index}: {cell_seconds:.0f} s  {first[:70]}")
    print(f"all: {total:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
