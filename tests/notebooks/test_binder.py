"""Binder's files alone make an environment that runs the quickstart (a fresh venv, nothing else)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = """
import sys, nbformat, nbclient
notebook = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}}).execute()
"""


@pytest.mark.slow
def test_binder_files_build_an_environment_that_runs_the_quickstart(tmp_path: Path) -> None:
    assert (ROOT / "binder" / "apt.txt").read_text().split() == ["openjdk-17-jre-headless"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    steps = [[str(python), "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt"],
             ["bash", "binder/postBuild"]]
    for step in steps:
        subprocess.run(step, cwd=ROOT, env=env, check=True, timeout=1800)
    notebook = ROOT / "notebooks" / "01-quickstart.ipynb"
    subprocess.run([str(python), "-c", RUNNER, str(notebook), str(tmp_path)], cwd=tmp_path, env=env, check=True,
                   timeout=900)
