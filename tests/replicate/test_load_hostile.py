"""Load: 200 peers, hostile and honest, against one real ``ssblab serve`` process on loopback (issue 19).

120 hostile peers attack for the whole run, each coming back a second after it is dropped: silent after
the handshake, half-sent 16 MiB packets (at 1 MiB/s each: the test shares two cores with the server, so the
attackers' own encryption must not starve it), floods of calls to methods the server does not have, live streams
they never read, out-of-range history requests, garbage in the box stream. 80 honest peers replicate every feed
meanwhile: 76 in this process (a client refused while every seat is busy retries, as SSB clients reconnect) and 4
as ``ssblab replicate`` processes, once the first wave is done. The test passes when every honest replicate
completes with the whole source and the server's peak RSS (its ``VmHWM``) stays within its memory budget plus a
fixed allowance for 200 connections; it prints the figures docs/security.md quotes, with the time of the same
wave of 76 honest peers before the attack (the baseline, measured in the same run) and the slowdown against it.

Run it alone: ``.venv/bin/python -m pytest tests/replicate/test_load_hostile.py -s``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.errors import SsbError
from ssblab.net.address import MultiserverAddress, parse_multiserver
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store
from tests.replicate.helpers import filled_store, ids_by_feed, network
from tests.replicate.hostile import Behaviour, Wire, big_packet, junk_calls, request, shake_hands, silent
from tests.ssbserver import free_port, stop, wait_for_port

BUDGET_MIB = 32
ALLOWANCE_MIB = 64  # 200 connections' own state: sockets, box-stream and muxrpc machines, sessions, tasks
HONEST_IN_PROCESS, HONEST_PROCESSES, HOSTILE = 76, 4, 120
SOURCE_MESSAGES = 150  # of the 6 feeds' 400: each honest peer replicates every feed


def _rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


@contextmanager
def serving(store: Path, identity: Path) -> Iterator[tuple[MultiserverAddress, subprocess.Popen[bytes]]]:
    port, log = free_port(), store.parent / "serve.log"
    with log.open("wb") as err:
        process = subprocess.Popen([sys.executable, "-m", "ssblab", "serve", "--store", str(store), "--identity",
                                    str(identity), "--listen", f"127.0.0.1:{port}", "--idle-timeout", "5",
                                    "--memory-budget", str(BUDGET_MIB)], stdout=subprocess.PIPE, stderr=err)
    try:
        assert process.stdout is not None
        address = parse_multiserver(process.stdout.readline().decode().strip())
        wait_for_port(port, process, log)
        yield address, process
    finally:
        stop(process)


async def never_reads(wire: Wire) -> str:
    """Open live history streams of every feed and never read a byte of them."""
    feeds = [kp.id for kp in network()[0].keypairs]
    await wire.send(b"".join(request(n, ["createHistoryStream"], [{"id": feed, "live": True}], "source")
                             for n, feed in enumerate(feeds, 1)))
    await asyncio.sleep(3600)
    return "cancelled"


async def bad_requests(wire: Wire) -> str:
    feed = network()[0].keypairs[0].id
    await wire.send(b"".join(request(n, ["createHistoryStream"], [{"id": feed, "seq": 2**70 + n}], "source")
                             for n in range(1, 50)))
    return await wire.until_dropped()  # then idle: the server closes it


async def garbage(wire: Wire) -> str:
    wire.writer.write(os.urandom(4096))
    return await wire.until_dropped()


BEHAVIOURS: list[tuple[str, Behaviour]] = [
    ("silent", silent), ("16 MiB packet", big_packet(rate=2**20)), ("unknown-method flood", junk_calls(200_000)),
    ("never reads", never_reads), ("seq 2**70", bad_requests), ("garbage", garbage)]


async def attacker(address: MultiserverAddress, name: str, behaviour: Behaviour, outcomes: Counter[str]) -> None:
    """Attack, and come back a second after the server drops us, until cancelled."""
    while True:
        try:
            wire = await shake_hands(address)
        except (ConnectionError, OSError):
            outcomes[f"{name}: refused"] += 1
        else:
            try:
                outcomes[f"{name}: {await behaviour(wire)}"] += 1
            except (ConnectionError, OSError):
                outcomes[f"{name}: dropped"] += 1
            finally:
                wire.writer.close()
        await asyncio.sleep(1.0)


async def honest(address: MultiserverAddress, folder: Path, wants: tuple[Want, ...]) -> tuple[float, int]:
    """Replicate every feed, retrying while refused; (seconds to completion, attempts)."""
    started = time.monotonic()
    for attempt in itertools.count(1):
        with Store(folder) as store:
            try:
                result = await replicate(address, LiveStore(store), SigningKey.generate(),
                                         ReplicateOptions(feeds=wants, timeout=10, stall=10))
                if not result.errors:
                    return time.monotonic() - started, attempt
            except (ConnectionError, OSError, SsbError) as exc:  # refused, or a handshake the busy server was late for
                assert attempt < 60, exc
        await asyncio.sleep(0.2 * min(attempt, 5))
    raise AssertionError("unreachable")


def _cli_replicate(address: MultiserverAddress, folder: Path, feeds: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "ssblab", "replicate", "--store", str(folder), "--remote",
                             str(address), "--feeds", str(feeds), "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@pytest.mark.slow
def test_200_hostile_and_honest_peers(tmp_path: Path) -> None:
    net, messages = network()
    with filled_store(tmp_path / "source", messages[:SOURCE_MESSAGES]) as source:
        expected = ids_by_feed(source)
    net.write_secrets(tmp_path / "keys")
    wants = tuple(Want(kp.id, None, "listed") for kp in net.keypairs)
    (tmp_path / "feeds.txt").write_text("".join(f"{want.feed}\n" for want in wants))
    outcomes: Counter[str] = Counter()

    with serving(tmp_path / "source", tmp_path / "keys" / "secret") as (address, server):
        baseline = _rss_kib(server.pid, "VmRSS")

        async def wave(name: str) -> tuple[list[tuple[float, int]], float]:
            started = time.monotonic()
            done = await asyncio.gather(*(honest(address, tmp_path / f"{name}-{i}", wants)
                                          for i in range(HONEST_IN_PROCESS)))
            return done, time.monotonic() - started

        async def main() -> tuple[list[tuple[float, int]], list[subprocess.Popen[bytes]], float, float]:
            _, quiet = await wave("baseline")  # the same wave without an attack: the baseline, this run
            attack = [asyncio.ensure_future(attacker(address, *BEHAVIOURS[i % len(BEHAVIOURS)], outcomes))
                      for i in range(HOSTILE)]
            await asyncio.sleep(3)  # the attack is under way before the first honest peer arrives
            done, attacked = await wave("honest")
            cli = [_cli_replicate(address, tmp_path / f"cli-{i}", tmp_path / "feeds.txt")
                   for i in range(HONEST_PROCESSES)]
            while any(p.poll() is None for p in cli):
                await asyncio.sleep(0.2)
            for task in attack:
                task.cancel()
            await asyncio.gather(*attack, return_exceptions=True)
            return done, cli, quiet, attacked

        started = time.monotonic()
        done, cli, quiet, attacked = asyncio.run(main())
        peak, after = _rss_kib(server.pid, "VmHWM"), _rss_kib(server.pid, "VmRSS")
        assert server.poll() is None  # still serving

    for process in cli:
        out, err = process.communicate()
        assert process.returncode == 0 and json.loads(out)["errors"] == [], err.decode()[-2000:]
    for folder in [*(tmp_path / f"honest-{i}" for i in range(HONEST_IN_PROCESS)),
                   *(tmp_path / f"cli-{i}" for i in range(HONEST_PROCESSES))]:
        with Store(folder, read_only=True) as replica:
            assert ids_by_feed(replica) == expected, folder
    seconds = [s for s, _ in done]
    figures = {
        "honest_completed": len(done) + len(cli), "honest_seconds_median": round(statistics.median(seconds), 2),
        "honest_seconds_max": round(max(seconds), 2), "wave_seconds_attacked": round(attacked, 1),
        "wave_seconds_quiet": round(quiet, 1), "slowdown": round(attacked / quiet, 2),
        "honest_attempts_max": max(a for _, a in done), "rss_baseline_mib": round(baseline / 1024, 1),
        "rss_peak_mib": round(peak / 1024, 1), "rss_after_mib": round(after / 1024, 1),
        "budget_mib": BUDGET_MIB, "run_seconds": round(time.monotonic() - started, 1),
        "hostile_outcomes": dict(outcomes)}
    print("\nload test:", json.dumps(figures))
    assert (peak - baseline) / 1024 <= BUDGET_MIB + ALLOWANCE_MIB, figures
