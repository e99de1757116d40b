"""Test inputs for the tangle analyses, built from generated messages.

``tangle_rows`` gives rows of the ``tangle_edges`` table and ``causal_messages`` what the causal index needs,
both through ``ssblab.pipeline.extract`` (what the Parquet export uses); ``closure`` and ``brute_depths`` are
the brute-force references; ``random_thread`` makes ssb-sort input with many ties.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Iterable
from typing import Any

from ssblab.core.message import Message
from ssblab.pipeline import extract
from ssblab.tangles.causal import CausalMessage


def tangle_rows(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Rows ``(id, author, timestamp, tangle, root, parent)`` of the ``tangle_edges`` table."""
    rows: list[dict[str, Any]] = []
    for m in messages:
        content = m.value["content"]
        if not isinstance(content, dict):
            continue
        base = {"id": m.id, "author": m.value["author"], "timestamp": float(m.value["timestamp"])}
        rows.extend({**base, "tangle": t, "root": r, "parent": p} for t, r, p in extract.tangle_edges(content))
    return rows


def causal_messages(messages: Iterable[Message]) -> list[CausalMessage]:
    """The causal index's view: author, sequence and the message ids the content names (links and tangles)."""
    found = []
    for m in messages:
        content = m.value["content"]
        refs = [t for t, kind, _ in extract.links(content) if kind == "message"] if isinstance(content, dict) else []
        found.append(CausalMessage(m.id, m.value["author"], m.value["sequence"], tuple(dict.fromkeys(refs))))
    return found


def closure(messages: Iterable[CausalMessage]) -> dict[str, set[str]]:
    """Brute force: each message's ancestors (references and feed predecessors, transitively)."""
    ordered = list(messages)
    by_place = {(m.author, m.sequence): m.id for m in ordered}
    by_id = {m.id: m for m in ordered}
    ancestors: dict[str, set[str]] = {}

    def visit(message_id: str) -> set[str]:
        stack, seen = [message_id], set()
        while stack:
            current = by_id.get(stack.pop())
            if current is None:
                continue
            before = by_place.get((current.author, current.sequence - 1))
            for parent in [*current.references, *([before] if before else [])]:
                if parent not in seen and parent in by_id:
                    seen.add(parent)
                    stack.append(parent)
        return seen

    for m in ordered:
        ancestors[m.id] = visit(m.id)
    return ancestors


FUTURE = 4_102_444_800_000  # 2100-01-01 in epoch milliseconds: a clock set far ahead


def random_thread(rng: random.Random, size: int, *, ties: bool = True,
                  contradict: bool = False) -> list[dict[str, Any]]:
    """A thread as ssb-sort takes it (``{key, value}``), with random branches and many equal timestamps.

    Claimed times grow strictly along links (so ssb-sort's comparator is a total order) and often repeat among
    concurrent messages; ids are random, so the id tie-break decides those. With ``contradict``, claimed times
    ignore the links: drawn from a few values (many equal, replies older than their parents) and sometimes far
    in the future; half such threads also carry receive times (``timestamp`` beside ``value``), also drawn.
    """
    def key() -> str:  # canonical base64, or ssb-ref's isMsg (which ssb-sort uses to find links) rejects it
        return "%" + base64.b64encode(rng.randbytes(32)).decode() + ".sha256"

    root = {"key": key(), "value": {"author": "@r", "timestamp": 1000, "content": {"type": "post"}}}
    thread = [root]
    for _ in range(size - 1):
        parents = rng.sample(thread, min(len(thread), rng.choice([1, 1, 2])))
        floor = max(p["value"]["timestamp"] for p in parents) + 1
        stamp = floor + (rng.randrange(3) if ties else rng.randrange(1, 10**6))
        if contradict:
            stamp = FUTURE + rng.randrange(2) if rng.random() < 0.1 else 1000 + rng.randrange(6)
        branch = [p["key"] for p in parents]
        content = {"type": "post", "root": root["key"], "branch": branch[0] if len(branch) == 1 else branch}
        thread.append({"key": key(), "value": {"author": "@a", "timestamp": stamp, "content": content}})
    if contradict and rng.random() < 0.5:
        for record in thread:
            record["timestamp"] = 2000 + rng.randrange(4)
    return thread


def brute_depths(messages: list[CausalMessage]) -> dict[str, tuple[int, bool]]:
    """Longest reference chain (``previous`` included) over present messages, and whether all ancestry is there."""
    by_id = {m.id: m for m in messages}
    by_place = {(m.author, m.sequence): m.id for m in messages}
    found: dict[str, tuple[int, bool]] = {}
    for m in messages:  # any order: a stack settles the ancestors first
        stack = [m.id]
        while stack:
            current = by_id[stack[-1]]
            before = by_place.get((current.author, current.sequence - 1))
            parents = [r for r in current.references if r in by_id and r != current.id]
            parents += [before] if before else []
            todo = [p for p in parents if p not in found]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            lost = (before is None and current.sequence > 1) or any(r not in by_id for r in current.references)
            depth = max((found[p][0] + 1 for p in parents), default=0)
            found[current.id] = (depth, not lost and all(found[p][1] for p in parents))
    return found
