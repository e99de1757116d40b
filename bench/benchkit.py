"""What the benchmarks in bench/ share: medians, whole processes with their peak memory, cached inputs, figures.

The benches are run as scripts (``.venv/bin/python bench/NAME.py``), which puts bench/ on ``sys.path``: they
import this module as ``benchkit``.

Peak memory of a whole process is measured two ways, both Linux-only:
- ``peak_rss``: the largest resident set of the process or of any descendant (``wait4``'s ``ru_maxrss``; a
  descendant that outlives the process, as a Spark driver's JVM does, is adopted and waited for): exact, but one
  process's only (a JVM and its driver, or a pool's workers, are not added up);
- ``peak_tree``: the resident sets of the process and every live descendant, summed and sampled every
  ``sample`` seconds from /proc (the highest sum seen). Pages a forked worker shares with its parent count in
  each, so the sum is an upper bound, and a peak shorter than the interval can be missed.
"""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "ssblab" / "bench"
PAGE = os.sysconf("SC_PAGE_SIZE")
T = TypeVar("T")


def timed(fn: Callable[[], T], repeat: int = 1) -> tuple[T, float]:
    """The last result of ``repeat`` runs of ``fn`` and the median wall time of one."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times)


def seconds(value: float) -> str:
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.1f} ms"


def mib(size: float) -> str:
    return f"{size / 2**30:.2f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"


def write_figures(path: str | Path | None, figures: dict[str, Any]) -> None:
    """The figures as JSON at ``path`` (when one is given)."""
    if path:
        Path(path).write_text(json.dumps(figures, indent=2) + "\n")


def feed_ids(count: int) -> list[str]:
    """Made-up, well-formed feed ids (isFeed accepts them): the index in base 10, padded with A."""
    return ["@" + str(i).rjust(43, "A") + "=.ed25519" for i in range(count)]


def status_kib(pid: int | str, field: str) -> int:
    """A ``kB`` field of /proc/PID/status (``VmRSS``, ``VmHWM``: the peak resident set), 0 if gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def proc_stats() -> dict[int, tuple[int, int, int]]:
    """``{pid: (parent pid, resident bytes, CPU clock ticks of it and its waited-for children)}`` from /proc."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
                found[int(entry.name)] = (int(stat[1]), int(stat[21]) * PAGE, sum(int(x) for x in stat[11:15]))
            except (OSError, IndexError, ValueError):
                continue
    return found


def descendants(root: int, stats: dict[int, tuple[int, int, int]]) -> set[int]:
    """``root`` and its live descendants among ``stats``."""
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, (parent, _, _) in stats.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree & stats.keys()


def process_tree(root: int) -> dict[int, int]:
    """``{pid: resident bytes}`` of ``root`` and its live descendants."""
    stats = proc_stats()
    return {pid: stats[pid][1] for pid in descendants(root, stats)}


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds of ``root`` (default: this process) and every live descendant, the reaped ones included through
    their parents' cumulative times."""
    stats = proc_stats()
    tree = descendants(os.getpid() if root is None else root, stats)
    return sum(stats[pid][2] for pid in tree) / os.sysconf("SC_CLK_TCK")


class TreeMemory:
    """The highest summed resident set of a process tree, sampled in a thread while it runs (a context); ``seen``
    holds every descendant a sample found."""

    def __init__(self, root: int, interval: float = 0.2) -> None:
        self.root, self.interval, self.peak = root, interval, 0
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            tree = process_tree(self.root)
            self.peak = max(self.peak, sum(tree.values()))
            self.seen |= tree.keys() - {self.root}
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class Run:
    """One whole process: its wall time, CPU time (user + system, descendants' included), exit code, output and
    peak memory (bytes; ``peak_tree`` 0 when not sampled)."""

    seconds: float
    cpu: float
    returncode: int
    stdout: bytes
    peak_rss: int
    peak_tree: int


PR_SET_CHILD_SUBREAPER = 36  # prctl(2): orphaned descendants are reparented to this process, not to init
LEFTOVER_WAIT_S = 60.0


def become_subreaper() -> None:
    """Adopt the descendants a measured process leaves running (a Spark driver's JVM outlives its Python process),
    so that they are waited for and their CPU time and memory counted (Linux)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _state(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a process, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def reap_leftovers(seen: set[int]) -> list[Any]:
    """Wait for the descendants in ``seen`` that outlived the measured process (adopted by this one) and return
    their resource usages. Those still running after `LEFTOVER_WAIT_S` are terminated if they are this process's
    own (adopted) children, so that none is left behind; the others are left to their parents."""
    usages, pending = [], set(seen)
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                done, _, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:  # another descendant's child (its parent reaps it), or gone
                state = _state(pid)
                if state is None or state[0] in "ZX":
                    pending.discard(pid)
                continue
            if done:
                usages.append(usage)
                pending.discard(pid)
        time.sleep(0.05)
    for pid in pending:
        state = _state(pid)
        if state is not None and state[1] == os.getpid():
            print(f"benchkit: terminating leftover process {pid}", file=sys.stderr)
            os.kill(pid, signal.SIGTERM)
            usages.append(os.wait4(pid, 0)[2])
    return usages


def run_process(command: Sequence[str], *, stdin: Path | None = None, sample: float | None = None,
                env: dict[str, str] | None = None, check: bool = True) -> Run:
    """Run ``command`` to its end; wall time from the fork to its exit, CPU time and peak memory.

    ``sample``: seconds between samples of the tree's memory (None: do not sample, for start-up timings). A
    sampled run also waits for the descendants that outlive the process and counts them (`reap_leftovers`).
    Output goes to a temporary file (a pipe could fill up and stall the child); stderr passes through.
    """
    if sample is not None:
        become_subreaper()
    with tempfile.TemporaryFile() as out, open(stdin or os.devnull, "rb") as source:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdin=source, stdout=out, env=env)
        with TreeMemory(child.pid, sample) if sample is not None else contextlib.nullcontext() as watch:
            _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        usages = [usage, *(reap_leftovers(watch.seen) if watch else [])]
        out.seek(0)
        found = Run(elapsed, sum(u.ru_utime + u.ru_stime for u in usages), child.returncode, out.read(),
                    max(u.ru_maxrss for u in usages) * 1024, watch.peak if watch else 0)
    if check and found.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {found.returncode}")
    return found


def cached_network(work: Path, messages: int, authors: int, seed: int) -> Path:
    """The JSONL of ``ssblab.generate.generate_network(authors, messages, seed)`` under ``work``: cached, cut from a
    larger cached one (a prefix of a feed's log is a valid log), or generated now (minutes for millions)."""
    import itertools

    from ssblab.generate import generate_network, write_jsonl

    work.mkdir(parents=True, exist_ok=True)
    path = work / f"net-{messages}-a{authors}-s{seed}.jsonl"
    if path.exists():
        return path
    larger = sorted((p for p in work.glob(f"net-*-a{authors}-s{seed}.jsonl")
                     if int(p.name.split("-")[1]) > messages), key=lambda p: int(p.name.split("-")[1]))
    part = path.with_suffix(".jsonl.part")
    if larger:
        with larger[0].open("rb") as src, part.open("wb") as out:
            out.writelines(itertools.islice(src, messages))
    else:
        print(f"generating {messages:,} messages of {authors:,} feeds into {path} (once)...", flush=True)
        write_jsonl(generate_network(authors, messages, seed), part)
    os.replace(part, path)
    return path


def ssblab_command() -> str:
    """The ``ssblab`` console script beside this interpreter (the venv's), with the package's bytecode compiled.

    An installed ssblab has its bytecode (pip compiles it on install); a checkout gets it on first import, except
    under PYTHONDONTWRITEBYTECODE, where every process would compile every module it imports and a start-up
    figure would measure the compiler.
    """
    script = Path(sys.executable).with_name("ssblab")
    if not script.exists():
        raise SystemExit(f"no {script}: run `make setup` first")
    compileall.compile_dir(ROOT / "ssblab", quiet=1)
    return str(script)


def node_validate() -> list[str] | None:
    """The command of JS ssb-validate over stdin (interop/js/validate.js), or None without node or npm packages."""
    import shutil

    if not shutil.which("node") or not (ROOT / "interop" / "node_modules" / "ssb-validate").exists():
        return None
    return ["node", str(ROOT / "interop" / "js" / "validate.js")]


POWER_LAW = 2.0  # target index = floor(u ** POWER_LAW * feeds): a few feeds are followed by most
WEIGHTS = ((1, 0.90), (-1, 0.04), (-2, 0.06))  # ssb-friends weights: follow, block, unfollow (cleared)


def contact_edges(feeds: int, edges: int, seed: int) -> tuple[Any, Any, Any]:
    """About ``edges`` distinct ``(source, target)`` pairs of feed numbers without self-contacts, and their
    ssb-friends weights, as numpy arrays: sources uniform, targets drawn with a power law (as ssb-fixtures draws
    popular authors), 90 % follows, 4 % blocks, 6 % unfollows. Fewer when ``feeds`` cannot hold that many."""
    import numpy as np

    rng = np.random.default_rng(seed)
    draw = int(edges * 1.1) + 1000  # duplicates and self-pairs are dropped below
    while True:
        src = rng.integers(0, feeds, draw)
        dst = np.floor(rng.random(draw) ** POWER_LAW * feeds).astype(np.int64)
        keys = np.where(src != dst, src * feeds + dst, -1)
        _, first = np.unique(keys, return_index=True)
        first = np.sort(first[keys[first] >= 0])  # the first draw of each pair, in draw order
        if len(first) >= edges or draw >= 64 * edges:
            break
        draw *= 2
    first = first[:edges]
    values, shares = zip(*WEIGHTS, strict=True)
    weight = rng.choice(np.array(values), len(first), p=np.array(shares))
    return src[first], dst[first], weight


def warm_local_engine() -> None:
    """Every graph question once on a tiny graph, so that first-use imports (DuckDB, pandas, scipy) go untimed."""
    from ssblab.graph import FollowNetwork

    ids = feed_ids(3)
    net = FollowNetwork.from_edges({(ids[0], ids[1]): 1, (ids[1], ids[2]): -1}, engine="local")
    net.hops(ids[0], 2)
    net.pagerank(10)
    net.components()
