"""A clean copy of the source tree (what git would check out, plus new files not ignored), for builds and installs
that must not see this checkout's build/, .venv/ or compiled modules."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def clean_copy(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def interpreters() -> dict[str, str]:
    """Python 3.11, 3.12 and 3.13 where this machine has them (on PATH, or under pyenv), by version."""
    found = {}
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in (11, 12, 13):
        name = f"python3.{minor}"
        candidates = [shutil.which(name), *sorted(glob.glob(str(pyenv / f"3.{minor}.*" / "bin" / name)))]
        for candidate in filter(None, candidates):
            probe = subprocess.run([candidate, "-c", "import sys, venv; print(sys.version_info[1])"],
                                   capture_output=True, text=True)
            if probe.returncode == 0 and probe.stdout.strip() == str(minor):  # a pyenv shim may refuse
                found[f"3.{minor}"] = candidate
                break
    if f"3.{sys.version_info[1]}" not in found:
        found[f"3.{sys.version_info[1]}"] = sys.executable
    return found
