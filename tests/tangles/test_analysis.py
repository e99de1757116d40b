"""`Tangles` on both engines: every answer against the pure functions or brute force, and the two engines' answers
equal, on generated networks (hand-written tables, and the pipeline's own export) and on data with faults."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ssblab.core.message import Message
from ssblab.dataset import open_dataset
from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline.export import export_dataset
from ssblab.tangles import Tangles
from ssblab.tangles.causal import CausalError, CausalMessage, build_index, happened_before
from ssblab.tangles.synthetic import message_dag
from ssblab.tangles.thread import heads, lamport_depths, tangle_from_edges
from tests.tangles.edges import brute_depths, causal_messages, closure, tangle_rows
from tests.tangles.tables import causal_rows, message_rows, write_dataset

ENGINES = ["local", pytest.param("spark", marks=pytest.mark.spark)]
# A round of joins per thread level on Spark (about ten here): minutes on two busy cores.
SLOW_ENGINES = ["local", pytest.param("spark", marks=[pytest.mark.spark, pytest.mark.slow])]
METHODS = ("links", "heads", "depths", "dangling_links", "dangling_references", "causal_depths")

Answer = Callable[[Path, str, str], Any]


@dataclass(frozen=True)
class Network:
    path: Path
    messages: list[Message]
    rows: dict[str, list[dict[str, Any]]]
    dropped: str | None


@pytest.fixture(scope="module")
def tangles_of(request: pytest.FixtureRequest) -> Callable[[Path, str], Tangles]:
    """A dataset's `Tangles` on an engine, opened once per module."""
    opened: dict[tuple[Path, str], Tangles] = {}

    def tangles(path: Path, engine: str) -> Tangles:
        if (path, engine) not in opened:
            spark = request.getfixturevalue("spark") if engine == "spark" else None
            opened[path, engine] = open_dataset(path, engine=engine, spark=spark).tangles()
        return opened[path, engine]

    return tangles


@pytest.fixture(scope="module")
def answer(tangles_of: Callable[[Path, str], Tangles]) -> Answer:
    """One method's answer on a dataset and an engine, computed once per module (Spark answers take seconds)."""
    found: dict[tuple[Path, str, str], Any] = {}

    def ask(path: Path, engine: str, method: str) -> Any:
        if (path, engine, method) not in found:
            found[path, engine, method] = getattr(tangles_of(path, engine), method)()
        return found[path, engine, method]

    return ask


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Network:
    """A generated network with one thread root missing from ``messages`` (its edges stay): dangling links and
    references, and a gap in its author's feed."""
    messages = list(generate_network(15, 400, 5))
    rows = message_rows(messages)
    dropped = Counter(r["root"] for r in rows["tangle_edges"]).most_common(2)[1][0]
    rows["messages"] = [r for r in rows["messages"] if r["id"] != dropped]
    return Network(write_dataset(tmp_path_factory.mktemp("network"), rows), messages, rows, dropped)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Network:
    """A generated network through the pipeline: JSONL, verified and exported on the local engine."""
    messages = list(generate_network(15, 400, 6))
    folder = tmp_path_factory.mktemp("exported")
    write_jsonl(iter(messages), folder / "log.jsonl")
    export_dataset(folder / "log.jsonl", folder / "dataset", engine="local", progress=False)
    return Network(folder / "dataset", messages, message_rows(messages), None)


def _by_key(table: Any, *keys: str, value: str) -> dict[Any, Any]:
    return {tuple(row[k] for k in keys): row[value] for row in table.to_pylist()}


@pytest.mark.parametrize("engine", SLOW_ENGINES)
def test_depths_heads_and_dangling_links_match_the_pure_functions(network: Network, answer: Answer,
                                                                  engine: str) -> None:
    rows, stamps = network.rows["tangle_edges"], {m.id: m.value["timestamp"] for m in network.messages}
    depths = _by_key(answer(network.path, engine, "depths"), "root", "id", value="depth")
    found = {r["root"]: (r["heads"], r["concurrent"]) for r in answer(network.path, engine, "heads").to_pylist()}
    for root in {r["root"] for r in rows}:
        tangle = tangle_from_edges(rows, root, root_timestamp=stamps[root])
        assert {i: d for (r, i), d in depths.items() if r == root} == lamport_depths(tangle)
        assert found[root] == (heads(tangle), len(heads(tangle)) > 1)
    dangling = answer(network.path, engine, "dangling_links")
    assert dangling.num_rows and set(dangling["parent"].to_pylist()) == {network.dropped}
    links = answer(network.path, engine, "links").to_pylist()
    assert {(r["id"], r["parent"]) for r in links} == {(r["id"], r["parent"] or r["root"]) for r in rows}


@pytest.mark.parametrize("engine", ENGINES)
def test_causal_depths_on_a_generated_network(network: Network, answer: Answer, engine: str) -> None:
    kept = [m for m in network.messages if m.id != network.dropped]
    tangled = {(r["id"], r["parent"] or r["root"]) for r in network.rows["tangle_edges"]}
    refs = {m.id: tuple(dict.fromkeys([*m.references, *(p for i, p in tangled if i == m.id)]))
            for m in causal_messages(kept)}
    want = brute_depths([CausalMessage(m.id, m.author, m.sequence, refs[m.id]) for m in causal_messages(kept)])
    got = answer(network.path, engine, "causal_depths").to_pylist()
    assert {r["id"]: (r["depth"], r["complete"]) for r in got} == want
    assert 0 < sum(not ok for _, ok in want.values()) < len(kept)  # the gap and the dangling links tell
    dangling = answer(network.path, engine, "dangling_references").to_pylist()
    assert {(r["id"], r["ref"]) for r in dangling} == {(i, r) for i, rs in refs.items() for r in rs
                                                       if r == network.dropped}


@pytest.mark.parametrize("engine", ENGINES)
def test_thread_is_the_pure_tangle_with_its_authors(exported: Network, tangles_of: Callable[[Path, str], Tangles],
                                                    engine: str) -> None:
    rows = tangle_rows(exported.messages)
    by_id = {m.id: m for m in exported.messages}
    tangles = tangles_of(exported.path, engine)
    every = tangles.threads()
    assert set(every) == {r["root"] for r in rows if r["tangle"] == "thread"}
    for root, _ in Counter(r["root"] for r in rows).most_common(3):
        thread = tangles.thread(root)
        assert every[root] == thread
        want = tangle_from_edges(rows, root, root_timestamp=by_id[root].value["timestamp"])
        assert (thread.parents, thread.timestamps) == (want.parents, want.timestamps)
        assert thread.authors == {i: by_id[i].value["author"] for i in want.timestamps}
    absent = tangles.thread("%" + "A" * 43 + "=.sha256")
    assert not absent.has_root and not absent.parents


@pytest.mark.parametrize("engine", ENGINES)
def test_causal_index_from_the_tables(exported: Network, tangles_of: Callable[[Path, str], Tangles],
                                      engine: str) -> None:
    index = tangles_of(exported.path, engine).causal_index(every=4)
    tangled = {(r["id"], r["parent"] or r["root"]) for r in tangle_rows(exported.messages)}
    causal = [CausalMessage(m.id, m.author, m.sequence, (*m.references, *(p for i, p in tangled if i == m.id)))
              for m in causal_messages(exported.messages)]
    ancestors = closure(causal)
    assert len(index) == len(causal) and not index.dangling and not index.waiting
    rng = random.Random(3)
    for _ in range(2000):
        a, b = rng.choice(causal).id, rng.choice(causal).id
        assert happened_before(index, a, b) == (a in ancestors[b])


def _dag_dataset(tmp_path: Path, messages: list[CausalMessage], invalid: set[str] = frozenset()) -> Path:
    rows = causal_rows(messages)
    rows["messages"] = [{**r, "valid": r["id"] not in invalid} for r in rows["messages"]]
    return write_dataset(tmp_path / "dag", rows)


@pytest.mark.parametrize("engine", ENGINES)
def test_causal_depths_match_brute_force_on_random_dags(tmp_path: Path, answer: Answer, engine: str) -> None:
    rng = random.Random(1)  # four rounds on Spark: each costs a few jobs
    messages = [*message_dag(rng, 150, 6, reference_rate=0.6, mean_age=20.0),
                *message_dag(rng, 60, 3, reference_rate=0.9, mean_age=5.0, seed_tag=1)]
    want = brute_depths(messages)
    got = answer(_dag_dataset(tmp_path, messages), engine, "causal_depths").to_pylist()
    assert {r["id"]: (r["depth"], r["complete"]) for r in got} == want
    assert max(d for d, _ in want.values()) > 40 and all(ok for _, ok in want.values())
    index, ancestors = build_index(messages), closure(messages)
    depths = {i: d for i, (d, _) in want.items()}  # depths are a linear extension of happened-before
    for _ in range(500):
        a, b = rng.choice(messages).id, rng.choice(messages).id
        if happened_before(index, a, b):
            assert depths[a] < depths[b] and a in ancestors[b]


@pytest.mark.parametrize("engine", ENGINES)
def test_causal_depths_report_missing_messages_instead_of_guessing(tmp_path: Path, answer: Answer,
                                                                   engine: str) -> None:
    messages = list(message_dag(random.Random(12), 120, 4, reference_rate=0.7, mean_age=10.0))
    dropped, invalid = {messages[30].id, messages[71].id}, messages[90].id  # dangling references and feed gaps
    path = _dag_dataset(tmp_path, [m for m in messages if m.id not in dropped], {invalid})
    kept = [m for m in messages if m.id not in dropped | {invalid}]  # an invalid message is not held either
    want = brute_depths(kept)
    got = answer(path, engine, "causal_depths").to_pylist()
    assert {r["id"]: (r["depth"], r["complete"]) for r in got} == want
    assert 0 < sum(not ok for _, ok in want.values()) < len(kept)
    dangling = {(r["id"], r["ref"]) for r in answer(path, engine, "dangling_references").to_pylist()}
    assert dangling == {(m.id, r) for m in kept for r in m.references if r in dropped | {invalid}}


def _edge(message_id: str, root: str, parent: str | None) -> dict[str, Any]:
    return {"id": message_id, "author": "@x", "timestamp": 1.0, "tangle": "thread", "root": root, "parent": parent}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_reference_cycle_raises(tmp_path: Path, tangles_of: Callable[[Path, str], Tangles], engine: str) -> None:
    # %a names %b and %b names %a (impossible with real hashes): no depth is right, so none is given.
    crossed = _dag_dataset(tmp_path / "crossed", [CausalMessage("%a", "@x", 1, ("%b",)),
                                                  CausalMessage("%b", "@y", 1, ("%a",))])
    # %x1 names its own feed's next message, which follows it.
    ahead = _dag_dataset(tmp_path / "ahead", [CausalMessage("%x1", "@x", 1, ("%x2",)),
                                              CausalMessage("%x2", "@x", 2), CausalMessage("%y1", "@y", 1)])
    for path in (crossed, ahead):
        with pytest.raises(CausalError, match="cycle"):
            tangles_of(path, engine).causal_depths()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cycle_of_links_below_a_root_raises(tmp_path: Path, tangles_of: Callable[[Path, str], Tangles],
                                              engine: str) -> None:
    below = write_dataset(tmp_path / "below", {"tangle_edges": [
        _edge("%a", "%r", None), _edge("%a", "%r", "%b"), _edge("%b", "%r", "%a")]})
    with pytest.raises(CausalError, match="cycle"):
        tangles_of(below, engine).depths()
    # A cycle the root does not reach leaves the root alone: nothing reaches it, nothing is wrong with it.
    aside = write_dataset(tmp_path / "aside", {"tangle_edges": [_edge("%c", "%s", "%d"), _edge("%d", "%s", "%c")]})
    tangles = tangles_of(aside, engine)
    assert tangles.depths().to_pylist() == [{"tangle": "thread", "root": "%s", "id": "%s", "depth": 0}]
    assert tangles.heads().to_pylist() == [{"tangle": "thread", "root": "%s", "heads": ["%s"], "concurrent": False}]


def _same_index(a: Any, b: Any) -> bool:
    return (dict(a.places) == dict(b.places) and dict(a.dangling) == dict(b.dangling)
            and set(a.waiting) == set(b.waiting) and np.array_equal(a.keys, b.keys)
            and np.array_equal(a.values, b.values))


@pytest.mark.slow  # every answer on Spark, depths included
@pytest.mark.parametrize("data", ["network", "exported"])
def test_the_engines_give_equal_answers(request: pytest.FixtureRequest, spark: Any, answer: Answer,
                                        tangles_of: Callable[[Path, str], Tangles], data: str) -> None:
    chosen: Network = request.getfixturevalue(data)
    for method in METHODS:
        local, remote = answer(chosen.path, "local", method), answer(chosen.path, "spark", method)
        assert local.schema == remote.schema and local.equals(remote), method
    local, remote = tangles_of(chosen.path, "local"), tangles_of(chosen.path, "spark")
    assert local.threads() == remote.threads()
    assert _same_index(local.causal_index(), remote.causal_index())


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_dataset_has_empty_answers(tmp_path: Path, tangles_of: Callable[[Path, str], Tangles],
                                            engine: str) -> None:
    tangles = tangles_of(write_dataset(tmp_path / "empty", {}), engine)
    assert all(getattr(tangles, method)().num_rows == 0 for method in METHODS)
    assert len(tangles.causal_index()) == 0 and tangles.threads() == {}
    assert not tangles.thread("%" + "A" * 43 + "=.sha256").timestamps
