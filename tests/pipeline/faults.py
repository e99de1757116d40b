"""A JSONL log with every kind of fault the verifier knows, interleaved with a realistic generated network.

Each fault is built from real keys and signatures, so a fault is exactly the one intended (a tampered field
breaks the signature, a re-signed one does not). Shared by the verification, export and cluster tests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson

from ssblab.core import Keypair, Message, create_message
from ssblab.generate import generate_network
from tests.signed import signed_posts


def _line(value: Any) -> bytes:
    return orjson.dumps(value.value if isinstance(value, Message) else value)


def fault_lines() -> list[bytes]:
    """Lines in log order: feeds whose faults cover every rule and the chain's corner cases."""
    keys = [Keypair.generate(bytes([40 + i]) * 32) for i in range(9)]
    ok, forked, gap, stopped, late, signed, shapes, dup, odd = keys
    a = signed_posts(ok, 4)
    f = signed_posts(forked, 4)
    fork_next = create_message(forked, {"type": "post", "text": "fork"}, previous=f[1], timestamp=7)
    fork_same = create_message(forked, {"type": "post", "text": "same place"}, previous=f[0], timestamp=8)
    g = signed_posts(gap, 5)
    s = signed_posts(stopped, 4)
    lt = signed_posts(late, 3)
    sg = signed_posts(signed, 3)
    d = signed_posts(dup, 3)
    sh = signed_posts(shapes, 2)
    base = dict(sh[1].value)
    # Lone surrogates, which JS accepts in a string (a finding: valid unless strict); Arrow columns hold U+FFFD.
    lone = create_message(odd, {"type": "post", "text": "lone \ud800", "channel": "\udc00", "mentions": [
        {"link": a[0].id, "name": "\ud800"}], "\udfff": ok.id}, timestamp=1)
    odd_type = create_message(odd, {"type": "odd\ud83d", "root": lone.id}, previous=lone, timestamp=2)
    lines: list[bytes] = [
        _line(a[0]), _line(f[0]), _line(g[0]), _line(s[0]), _line(d[0]), _line(sh[0]),
        b"{not json", b"   ", b"[1, 2]", b'"a string"',
        _line(f[1]), _line(f[2]), _line(fork_next),  # a signed fork at the next place: fatal, with evidence
        _line(f[3]), _line(fork_same),  # the feed stopped already
        _line(g[2]), _line(g[1]), _line(g[3]), _line(g[2]),  # a gap (non-fatal), then an old one
        _line({**s[1].value, "timestamp": 5}),  # a bad signature: fatal
        _line(s[2]), _line(s[3]),  # stopped
        _line(lt[1]), _line(lt[0]), _line(lt[1]),  # first message must be sequence 1: fatal, stopped after
        _line(d[1]), _line(d[1]), _line(d[2]), _line(d[2]), _line(d[0]),  # duplicates of the head; an old one
        _line({**sg[0].value, "previous": a[0].id}),  # a first message with a previous
        _line(sh[1].value | {"author": 12}), _line({**base, "author": ""}), _line({**base, "author": "@nope"}),
        *_shape_faults(base),
        orjson.dumps({"key": a[1].id, "value": a[1].value, "timestamp": 12.5}),
        orjson.dumps({"key": a[0].id, "value": a[2].value, "timestamp": 13}),  # a record whose key lies
        _line(a[2]), _line(a[3]), _line(sh[1]),
        json.dumps(lone.value).encode(), json.dumps(odd_type.value).encode(),  # orjson refuses lone surrogates
    ]
    return lines


def _shape_faults(base: dict[str, Any]) -> list[bytes]:
    """One broken field each, each under its own author (a shape error stops the feed it names)."""
    broken = [{"sequence": "2"}, {"sequence": 2.5}, {"timestamp": "now"}, {"hash": "sha1"}, {"content": None},
              {"content": {"type": "x"}}, {"content": "bm90IGJveA=.box"}, {"signature": "nope"},
              {"previous": "%bad"}, {"content": {"type": "post", "text": "y" * 9000}}]
    authors = [Keypair.generate(bytes([100 + i]) * 32).id for i in range(len(broken) + 1)]
    lines = [_line({**base, "author": author, **change}) for author, change in zip(authors, broken, strict=False)]
    reordered = {**base, "author": authors[-1]}
    return [*lines, _line({k: reordered[k] for k in reversed(list(reordered))})]


def write_fault_log(path: Path, *, authors: int = 12, messages: int = 400, seed: int = 3) -> Path:
    """A generated network with the fault lines spread through it (seeded)."""
    rng = random.Random(seed)
    network = [orjson.dumps(m.value) for m in generate_network(authors, messages, seed)]
    faults = fault_lines()
    merged: list[bytes] = []
    cuts = sorted(rng.randrange(len(network)) for _ in faults)
    i = 0
    for cut, fault in zip(cuts, faults, strict=True):
        merged.extend(network[i:cut])
        merged.append(fault)
        i = cut
    merged.extend(network[i:])
    path.write_bytes(b"\n".join(merged) + b"\n")
    return path
