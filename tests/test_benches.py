"""Every benchmark in bench/ still imports: the library's API moves, and a bench that imports a removed module
goes unnoticed until someone runs it (`make bench-smoke` runs them all at small sizes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_every_bench_imports_and_documents_how_to_run_it() -> None:
    names = sorted(path.stem for path in BENCH.glob("*.py"))
    # One process imports them all (as `python bench/NAME.py` would, with bench/ on the path), so that their
    # top-level names (graph, network, verify) stay out of this test run's modules.
    check = ("import importlib, sys\n"
             "for name in sys.argv[1:]:\n"
             "    module = importlib.import_module(name)\n"
             "    assert module.__doc__, name + ': no docstring'\n"
             "    assert name == 'benchkit' or callable(getattr(module, 'main', None)), name + ': no main()'\n")
    found = subprocess.run([sys.executable, "-c", check, *names], cwd=BENCH, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
