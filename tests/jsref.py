"""Bridge from the Python tests to the JavaScript reference implementations.

Strategy: every reference lives in a small Node script under ``interop/js/`` that reads
its input from stdin and writes JSON to stdout; this module runs those scripts as
subprocesses with a timeout. The npm packages come from ``interop/package-lock.json``
(``npm ci --ignore-scripts --prefix interop``, which ``make test`` runs).

Invariants: nothing here is imported by ``ssblab``; a test that needs Node is marked
``requires_node`` and skips with an explanation when Node or ``interop/node_modules`` is
missing; a failing script raises ``JsRefError`` carrying its stderr, never a silent
empty result.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

INTEROP = Path(__file__).resolve().parent.parent / "interop"
SCRIPTS = INTEROP / "js"
NODE_MODULES = INTEROP / "node_modules"
SSB_FIXTURES_BIN = NODE_MODULES / "ssb-fixtures" / "lib" / "bin.js"
DEFAULT_TIMEOUT = 120.0


class JsRefError(RuntimeError):
    """A reference script failed, timed out, or printed something that is not JSON."""


def node_available() -> bool:
    """True when `node` is on PATH and the interop packages are installed."""
    return shutil.which("node") is not None and (NODE_MODULES / "ssb-validate").is_dir()


requires_node = pytest.mark.skipif(
    not node_available(),
    reason="needs node and interop/node_modules: run `make test`, which installs interop/node_modules "
    "(npm ci --ignore-scripts --prefix interop)",
)


def run_node(argv: Sequence[str | Path], input: bytes | str = b"", timeout: float = DEFAULT_TIMEOUT) -> str:
    """Run ``node ARGV...`` with ``input`` on stdin and return its stdout as text.

    Raises:
        JsRefError: node exits non-zero or runs past ``timeout`` seconds; the message
            names the command and quotes its stderr.
    """
    data = input.encode() if isinstance(input, str) else input
    cmd = ["node", *map(str, argv)]
    try:
        done = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise JsRefError(f"{' '.join(cmd)}: no answer within {timeout} s") from exc
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()
        raise JsRefError(f"{' '.join(cmd)}: exit code {done.returncode}: {stderr}")
    return done.stdout.decode()


def run_js(
    script: str, args: Sequence[str] = (), input: bytes | str = b"", timeout: float = DEFAULT_TIMEOUT
) -> str:
    """Run ``interop/js/SCRIPT`` with ``args`` and ``input`` on stdin; return its stdout."""
    return run_node([SCRIPTS / script, *args], input, timeout)


def run_js_json(script: str, args: Sequence[str] = (), input: Any = None) -> Any:
    """Run a script that answers with one JSON document, sending ``input`` as JSON."""
    out = run_js(script, args, "" if input is None else json.dumps(input))
    try:
        return json.loads(out)
    except json.JSONDecodeError as exc:
        raise JsRefError(f"interop/js/{script}: output is not JSON: {out[:200]!r}") from exc


def js_validate(
    values: Iterable[Mapping[str, Any] | Any], hmac_key: str | None = None, independent: bool = False
) -> list[dict[str, Any]]:
    """Validate message values with ssb-validate 4, in order, one state for all feeds.

    Returns one ``{"valid", "id", "error"}`` dict per value. With ``independent`` each
    value is checked from a fresh state (for unrelated conformance cases).
    """
    # ASCII escapes keep lone surrogates intact; JSON.parse reads them back the same.
    lines = [json.dumps(v) for v in values]
    args = ["--hmac-key", hmac_key] if hmac_key is not None else []
    if independent:
        args.append("--independent")
    out = run_js("validate.js", args, "".join(line + "\n" for line in lines))
    results = [json.loads(line) for line in out.splitlines()]
    if len(results) != len(lines):
        raise JsRefError(f"validate.js answered {len(results)} lines for {len(lines)} messages")
    return results


def js_dataset() -> list[dict[str, Any]]:
    """The cases of the npm package ssb-validation-dataset, as it ships them."""
    return run_js_json("dataset.js")


def ssb_fixtures(out_dir: Path, seed: int, messages: int, authors: int) -> Path:
    """Write an ssb-fixtures dataset (with every author's secret) and return its log.offset.

    Raises:
        JsRefError: ``out_dir`` already holds a log (ssb-fixtures would append to it,
            mixing two datasets), or the CLI fails or writes no log.
    """
    log = Path(out_dir) / "flume" / "log.offset"
    if log.exists():
        raise JsRefError(f"ssb-fixtures: {log} exists already and would be appended to")
    run_node(
        [
            SSB_FIXTURES_BIN,
            f"--seed={seed}",
            f"--messages={messages}",
            f"--authors={authors}",
            f"--outputDir={out_dir}",
            "--allkeys",
        ]
    )
    if not log.is_file():
        raise JsRefError(f"ssb-fixtures wrote no {log}")
    return log
