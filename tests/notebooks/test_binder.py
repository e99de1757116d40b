"""Binder's files alone make an environment that runs every tutorial (a fresh venv, nothing else).

This is one of the two places the suite executes the notebooks (the docs build is the other, in this
environment): here they run with only what binder/ installs, and their chart outputs are checked to carry a
static picture, so that they show on GitHub and nbviewer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NOT_FOR_NOTEBOOKS = {"dev", "docs"}  # extras for working on ssblab, not for running its notebooks
RUNNER = """
import json, sys, time, nbformat, nbclient
for path in sys.argv[2:]:
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": sys.argv[1]}}).execute()
    charts = [o for c in notebook.cells for o in c.get("outputs", []) if "application/vnd.vegalite.v5+json" in
              o.get("data", {})]
    print(json.dumps({"notebook": path, "seconds": round(time.perf_counter() - started, 1),
                      "charts": len(charts), "static": sum("image/svg+xml" in o["data"] for o in charts)}))
"""


def binder_extras() -> set[str]:
    line = next(line for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()
                if line.startswith(".["))
    return set(re.fullmatch(r"\.\[(.*)\]", line.strip()).group(1).split(","))  # type: ignore[union-attr]


def test_binder_installs_every_extra_the_notebooks_use() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    assert binder_extras() == extras - NOT_FOR_NOTEBOOKS
    assert (ROOT / "binder" / "apt.txt").read_text().split() == ["openjdk-17-jre-headless"]


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a fresh venv, then the seven tutorials
def test_binder_files_build_an_environment_that_runs_every_tutorial(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    steps = [[str(python), "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt"],
             ["bash", "binder/postBuild"]]
    for step in steps:
        subprocess.run(step, cwd=ROOT, env=env, check=True, timeout=1800)
    run = subprocess.run([str(python), "-c", RUNNER, str(tmp_path), *map(str, NOTEBOOKS)], cwd=tmp_path, env=env,
                         check=True, timeout=3600, capture_output=True, text=True)
    results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    print("\n".join(map(str, results)))
    assert len(results) == len(NOTEBOOKS)
    assert all(r["charts"] > 0 and r["static"] == r["charts"] for r in results), results
