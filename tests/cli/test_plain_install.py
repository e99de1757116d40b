"""A plain ``pip install ssblab`` (no extras) in a fresh virtual environment, as a new user gets it: every verb it
can run runs (the local engine needs no extra), and every other verb exits 2 with the extra to install, no
traceback."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # a fresh virtual environment and a wheel build: a minute or two


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``ssblab`` command of a fresh venv with ``pip install REPO`` and nothing else."""
    env = tmp_path_factory.mktemp("plain-venv")
    venv.create(env, with_pip=True)
    done = subprocess.run([env / "bin" / "python", "-m", "pip", "install", "--quiet", str(REPO)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = subprocess.run([env / "bin" / "python", "-m", "pip", "list"], capture_output=True, text=True).stdout
    assert "pyspark" not in listed and "altair" not in listed  # really no extras
    return env / "bin" / "ssblab"


def run(command: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(command), *argv], capture_output=True, text=True, cwd=cwd, timeout=300, check=False)


def test_every_verb_runs_or_says_what_to_install(plain: Path, tmp_path: Path) -> None:
    ok = [
        ["--version"], ["--help"], ["keys", "new", "me.secret"],
        ["generate", "--authors", "6", "--messages", "300", "--seed", "3", "--out", "log.jsonl"],
        ["verify", "log.jsonl"], ["import", "log.jsonl", "--store", "store"],
        ["export", "--store", "store", "--format", "jsonl", "--out", "again.jsonl"],
        ["export", "--store", "store", "--format", "parquet", "--engine", "local", "--out", "dataset"],
        ["graph", "stats", "--data", "dataset"],
    ]
    for argv in ok:
        done = run(plain, *argv, cwd=tmp_path)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
    author = next(line.split('"author":"')[1].split('"')[0] for line in (tmp_path / "log.jsonl").open())
    for argv in (["graph", "hops", "--data", "dataset", "--root", author, "--json"],
                 ["moderation", "whatif", "--data", "log.jsonl", "--root", author, "--block", author],
                 ["archive", "build", "--store", "store", "--feed", author, "--out", "archive"],
                 ["verify", "archive"]):
        done = run(plain, *argv, cwd=tmp_path)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
    needs_spark = [["export", "--store", "store", "--format", "parquet", "--out", "on-spark"],
                   ["verify", "log.jsonl", "--engine", "spark"], ["graph", "stats", "--data", "dataset",
                                                                   "--engine", "spark"], ["demo", "--out", "demo"]]
    for argv in needs_spark:
        done = run(plain, *argv, cwd=tmp_path)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert "pip install 'ssblab[spark]'" in done.stderr and "Traceback" not in done.stderr, (argv, done.stderr)
        # where Spark was only the verb's default, the way on without Java is named too
        assert ("--engine local" in done.stderr) == (argv[0] == "export"), (argv, done.stderr)
    assert not (tmp_path / "on-spark").exists() and not (tmp_path / "demo").exists()
