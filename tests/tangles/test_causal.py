"""The happened-before index against a brute-force transitive closure (random DAGs, generated data)."""

from __future__ import annotations

import random

import pytest

from ssblab.generate import generate_network
from ssblab.tangles.causal import (
    CausalError,
    CausalMessage,
    UnknownMessage,
    build_index,
    clock,
    concurrent,
    extend_index,
    happened_before,
)
from ssblab.tangles.synthetic import message_dag
from tests.tangles.edges import causal_messages, closure


def _assert_matches(index, messages: list[CausalMessage], ancestors: dict[str, set[str]], rng, pairs=3000) -> None:
    ids = [m.id for m in messages]
    for _ in range(pairs):
        a, b = rng.choice(ids), rng.choice(ids)
        assert happened_before(index, a, b) == (a in ancestors[b]), (a, b)
    for b in rng.sample(ids, min(50, len(ids))):  # and every ancestor of some messages: the positives
        assert all(happened_before(index, a, b) for a in ancestors[b])


@pytest.mark.parametrize(("seed", "every"), [(0, 1), (1, 4), (2, 32), (3, 7), (4, 2)])
def test_random_dags_match_the_transitive_closure(seed: int, every: int) -> None:
    rng = random.Random(seed)
    messages = list(message_dag(rng, 1500, rng.choice([3, 20, 60]), reference_rate=rng.random(),
                                mean_age=rng.choice([5.0, 100.0, 2000.0])))
    shuffled = messages[:]
    rng.shuffle(shuffled)  # the input order must not matter
    index = build_index(shuffled, every=every, window=rng.choice([0, 16, 4096]))
    assert len(index) == len(messages) and not index.dangling and not index.waiting
    _assert_matches(index, messages, closure(messages), rng)


def test_vector_clocks_are_the_highest_sequence_depended_on() -> None:
    messages = list(message_dag(random.Random(5), 600, 12))
    index, ancestors = build_index(messages, every=8), closure(messages)
    by_id = {m.id: m for m in messages}
    for m in random.Random(6).sample(messages, 40):
        want: dict[str, int] = {}
        for a in ancestors[m.id]:
            if by_id[a].author != m.author:
                want[by_id[a].author] = max(want.get(by_id[a].author, 0), by_id[a].sequence)
        assert clock(index, m.id) == want


@pytest.mark.parametrize("chunk", [1, 37, 400])
def test_extending_gives_the_same_answers_and_leaves_the_old_index_alone(chunk: int) -> None:
    messages = list(message_dag(random.Random(chunk), 1200, 25, reference_rate=0.7))
    index = build_index(messages[:300], every=4)
    first = index
    for start in range(300, len(messages), chunk):
        index = extend_index(index, messages[start : start + chunk])
    rng = random.Random(9)
    _assert_matches(index, messages, closure(messages), rng)
    _assert_matches(first, messages[:300], closure(messages[:300]), rng, pairs=500)
    assert messages[500].id not in first and messages[500].id in index
    # A second extension of the same old index branches off and does not disturb the first one.
    other = extend_index(first, messages[300:310])
    assert len(other) == 310 and messages[400].id not in other
    _assert_matches(index, messages, closure(messages), rng, pairs=500)


def test_a_new_feed_may_reference_messages_indexed_before_it_existed() -> None:
    # The clocks of recent messages were kept at the old width (two feeds); a third feed widens them on use.
    index = build_index([CausalMessage("%a", "@x", 1), CausalMessage("%b", "@y", 1, ("%a",))])
    index = extend_index(index, [CausalMessage("%c", "@z", 1, ("%b",))])
    assert happened_before(index, "%a", "%c") and happened_before(index, "%b", "%c")
    assert not happened_before(index, "%c", "%a")


def test_generated_network_messages() -> None:
    messages = causal_messages(generate_network(25, 1200, 11))
    index = build_index(messages, every=8)
    assert not index.dangling  # every root, branch and vote names an earlier message of the network
    _assert_matches(index, messages, closure(messages), random.Random(1))


def test_a_gap_in_a_feed_waits_until_it_fills() -> None:
    a1, a2, a3 = (CausalMessage(f"%a{i}", "@a", i) for i in (1, 2, 3))
    b1 = CausalMessage("%b1", "@b", 1, ("%a3",))
    index = build_index([a1, a3, b1])
    assert set(index.waiting) == {"%a3", "%b1"} and len(index) == 1
    with pytest.raises(UnknownMessage, match="waits for a gap"):
        happened_before(index, "%a1", "%a3")
    filled = extend_index(index, [a2])
    assert not filled.waiting and happened_before(filled, "%a1", "%b1") and not happened_before(filled, "%b1", "%a1")
    assert concurrent(filled, "%b1", "%b1") is False and not concurrent(filled, "%a2", "%b1")


def test_dangling_references_are_reported_and_a_late_arrival_refused() -> None:
    late = CausalMessage("%late", "@b", 1)
    index = build_index([CausalMessage("%x", "@a", 1, ("%late", "%never"))])
    assert index.dangling == {"%late": 1, "%never": 1}
    with pytest.raises(CausalError, match="arrived after messages that reference it"):
        extend_index(index, [late])


def test_bad_input_raises_typed_errors() -> None:
    with pytest.raises(CausalError, match="fork in @a at sequence 1"):
        build_index([CausalMessage("%x", "@a", 1), CausalMessage("%y", "@a", 1)])
    with pytest.raises(CausalError, match="outside"):
        build_index([CausalMessage("%x", "@a", 0)])
    index = build_index([CausalMessage("%x", "@a", 1)])
    assert extend_index(index, [CausalMessage("%x", "@a", 1)]).places == index.places  # idempotent
    with pytest.raises(UnknownMessage, match="not in the index"):
        happened_before(index, "%x", "%nope")
    assert not happened_before(index, "%x", "%x")
