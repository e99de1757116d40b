"""Python 3.11, 3.12 and 3.13: on each interpreter this machine has, ssblab installs from a clean tree into a
fresh venv, verifies messages, runs one Spark export and one notebook.

The full suite runs on the default interpreter; there the Binder test already makes a fresh venv and runs every
notebook, so this smoke test covers the others.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.tree import ROOT, clean_copy, interpreters

PYTHONS = interpreters()
RUN_NOTEBOOK = """
import sys, nbformat, nbclient
notebook = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}}).execute()
print(sum(len(cell.get("outputs", [])) for cell in notebook.cells), "outputs")
"""


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a fresh venv with PySpark, then a Spark export and a notebook
@pytest.mark.parametrize("version", sorted(PYTHONS))
def test_install_verify_export_and_a_notebook(version: str, tmp_path: Path) -> None:
    if version == f"3.{sys.version_info[1]}":
        pytest.skip("the default interpreter: the full suite and the Binder test cover it")
    venv = tmp_path / "venv"
    subprocess.run([PYTHONS[version], "-m", "venv", str(venv)], check=True)
    bin_ = venv / "bin"
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)

    def run(*argv: str | Path, timeout: float = 900) -> str:
        done = subprocess.run([str(a) for a in argv], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, f"{argv} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        return done.stdout

    tree = clean_copy(tmp_path / "tree")
    run(bin_ / "python", "-m", "pip", "install", "--quiet", f"{tree}[spark,notebooks]", timeout=1800)
    import ssblab

    assert run(bin_ / "ssblab", "--version").strip() == f"ssblab {ssblab.__version__}"
    run(bin_ / "ssblab", "generate", "--authors", "8", "--messages", "200", "--seed", "5", "--out", "net.jsonl")
    assert "200" in run(bin_ / "ssblab", "verify", "net.jsonl")
    run(bin_ / "ssblab", "export", "--format", "parquet", "--store", "net.jsonl", "--out", "parquet")
    assert (tmp_path / "parquet" / "_ssblab_dataset.json").is_file()
    assert "outputs" in run(bin_ / "python", "-c", RUN_NOTEBOOK, ROOT / "notebooks" / "01-quickstart.ipynb", tmp_path)
