"""Two sessions in memory: convergence on random trDAGs, O(log n) rounds, and lying peers caught by name."""

from __future__ import annotations

import dataclasses
import doctest
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.reconcile import (
    Aggregate,
    Bucket,
    Check,
    Hello,
    Message,
    ReconcileError,
    ReconcileRole,
    Session,
    State,
    Step,
    TrDag,
    derive_key,
    encode,
)
from ssblab.reconcile import session as session_module
from ssblab.reconcile.aggregate import aggregate_of
from ssblab.reconcile.simulate import (
    content_id,
    content_node,
    diverge_replicas,
    random_trdag,
    run_pair,
    sessions,
    split_replicas,
)


def test_doctests() -> None:
    assert doctest.testmod(session_module).failed == 0


def converge(a: TrDag, b: TrDag, seed: int = 0) -> tuple[Session, Session, int]:
    alice, bob = sessions(random.Random(seed), a, b)
    report = run_pair(alice, bob)
    return alice, bob, report.rounds


@settings(max_examples=150, deadline=None)
@given(
    rng=st.randoms(use_true_random=False),
    n=st.integers(1, 150),
    cuts=st.integers(0, 6),
    recent=st.floats(0.05, 1.0),
    branch=st.floats(0.0, 0.9),
)
def test_random_trdags_converge_to_the_union(
    rng: random.Random, n: int, cuts: int, recent: float, branch: float
) -> None:
    dag = random_trdag(rng, n, branch=branch)
    a, b = split_replicas(rng, dag, cuts, recent=recent)
    alice, bob, rounds = converge(a, b, rng.randrange(2**32))
    assert alice.state is State.DONE and bob.state is State.DONE
    union = set(a.nodes) | set(b.nodes)
    assert set(alice.result.nodes) == set(bob.result.nodes) == union
    assert dict(alice.result.depths) == dict(bob.result.depths) == {i: dag.depths[i] for i in union}
    assert rounds <= min(a.max_depth, b.max_depth).bit_length() + 4


@settings(max_examples=60, deadline=None)
@given(
    rng=st.randoms(use_true_random=False),
    n=st.integers(1, 120),
    new_a=st.integers(0, 40),
    new_b=st.integers(0, 40),
)
def test_concurrently_grown_replicas_converge(rng: random.Random, n: int, new_a: int, new_b: int) -> None:
    a, b = diverge_replicas(rng, random_trdag(rng, n), new_a, new_b)
    assert len(set(a.nodes) ^ set(b.nodes)) == new_a + new_b
    alice, bob, rounds = converge(a, b, rng.randrange(2**32))
    assert set(alice.result.nodes) == set(bob.result.nodes) == set(a.nodes) | set(b.nodes)
    assert rounds <= min(a.max_depth, b.max_depth).bit_length() + 4


def chain(length: int, extra: dict[int, int] | None = None) -> tuple[list, TrDag]:
    """A chain root - c1 - ... - c_length, plus ``extra[k]`` side branches off ``c_{k-1}`` (at depth k)."""
    nodes = [content_node([], b"root")]
    for i in range(1, length + 1):
        nodes.append(content_node([nodes[-1].id], i.to_bytes(4, "big")))
    for depth, count in (extra or {}).items():
        nodes.extend(content_node([nodes[depth - 1].id], f"x{depth}.{j}".encode()) for j in range(count))
    return nodes, TrDag.from_nodes(nodes)


@pytest.mark.parametrize("exponent", [3, 6, 10, 13])
def test_rounds_grow_with_log_n(exponent: int) -> None:
    """One differing message at depth 1 of a 2**k chain: the search walks the whole tallest tree."""
    n = 1 << exponent
    _, a = chain(n, {1: 1})
    _, b = chain(n)
    alice, bob, rounds = converge(a, b)
    assert len(alice.result) == len(bob.result) == n + 2
    assert rounds == exponent + 4  # Hello, log2(n) + 1 tree levels, buckets, pushes


def test_identical_replicas_take_three_rounds() -> None:
    _, a = chain(100, {5: 2})
    alice, bob, rounds = converge(a, a)
    assert rounds == 3 and alice.state is bob.state is State.DONE


def test_root_only_replicas() -> None:
    _, a = chain(0)
    _, b = chain(5)
    alice, _, rounds = converge(a, b)
    assert rounds == 2 and len(alice.result) == 6


# -- lying peers -------------------------------------------------------------------------------------------


def once(kind: type, round_: int | None, change: Callable[[Message], Message]) -> Callable[[Message], Message]:
    """Rewrite the first message of ``kind`` (and, for steps, of ``round_``) that Bob sends."""
    done = []

    def tamper(message: Message) -> Message:
        if done or not isinstance(message, kind):
            return message
        if isinstance(message, Step) and round_ is not None and message.round != round_:
            return message
        done.append(True)
        return change(message)

    return tamper


def flip_first(aggregates: tuple[Aggregate, ...]) -> tuple[Aggregate, ...]:
    first = aggregates[0]
    return (Aggregate(first.count, first.xor ^ 1), *aggregates[1:])


# Alice lacks two messages at depth 3 and Bob lacks one at depth 5; both reach depth 8 (phase 2 only).
A_NODES, A = chain(8, {5: 1})
B_NODES, B = chain(8, {3: 2})
# Bob is deeper (phase 1 pushes a tail of 4 messages).
_, SHORT = chain(4, {2: 1})
TAIL_NODES, LONG = chain(8)
STRANGER = content_node([b"nobody"], b"orphan")

LIES: dict[str, tuple[TrDag, TrDag, Callable[[Message], Message], Check]] = {
    "root": (A, B, once(Hello, None, lambda m: dataclasses.replace(m, root=b"other")), Check.ROOT_MISMATCH),
    "nonce": (A, B, once(Hello, None, lambda m: dataclasses.replace(m, nonce=b"short")), Check.NONCE),
    "version": (A, B, once(Hello, None, lambda m: dataclasses.replace(m, version=9)), Check.VERSION),
    "round": (A, B, once(Step, 2, lambda m: dataclasses.replace(m, round=7)), Check.ROUND),
    "no-total": (A, B, once(Step, 1, lambda m: dataclasses.replace(m, total=None)), Check.TOTAL),
    "late-total": (A, B, once(Step, 2, lambda m: dataclasses.replace(m, total=Aggregate(1, 1))), Check.TOTAL),
    "total": (
        A,
        B,
        once(Step, 1, lambda m: dataclasses.replace(m, total=Aggregate(99, 5))),
        Check.TOTAL_UNION,
    ),
    "frontier": (
        A,
        B,
        once(Step, 2, lambda m: dataclasses.replace(m, aggregates=m.aggregates[1:])),
        Check.FRONTIER_SIZE,
    ),
    "negative": (
        A,
        B,
        once(Step, 1, lambda m: dataclasses.replace(m, aggregates=(Aggregate(0, 5),))),
        Check.AGGREGATE_RANGE,
    ),
    "children": (
        A,
        B,
        once(Step, 2, lambda m: dataclasses.replace(m, aggregates=flip_first(m.aggregates))),
        Check.CHILDREN_UNION,
    ),
    "bucket-aggregate": (
        A,
        B,
        once(
            Step,
            5,
            lambda m: dataclasses.replace(
                m, buckets=(Bucket(m.buckets[0].depth, m.buckets[0].hashes[:1]), *m.buckets[1:])
            ),
        ),
        Check.BUCKET_AGGREGATE,
    ),
    "bucket-order": (
        A,
        B,
        once(
            Step,
            5,
            lambda m: dataclasses.replace(
                m, buckets=(Bucket(m.buckets[0].depth, m.buckets[0].hashes[::-1]), *m.buckets[1:])
            ),
        ),
        Check.BUCKET_HASHES,
    ),
    "extra-bucket": (
        A,
        B,
        once(Step, 5, lambda m: dataclasses.replace(m, buckets=(*m.buckets, Bucket(7, ())))),
        Check.UNEXPECTED_BUCKET,
    ),
    "dropped-push": (
        A,
        B,
        once(Step, 6, lambda m: dataclasses.replace(m, pushes=m.pushes[1:])),
        Check.MISSING_MESSAGE,
    ),
    "forged-push": (
        A,
        B,
        once(
            Step,
            6,
            lambda m: dataclasses.replace(m, pushes=(dataclasses.replace(m.pushes[0], payload=b"evil"), *m.pushes[1:])),
        ),
        Check.CONTENT_ID,
    ),
    "repeated-push": (
        A,
        B,
        once(Step, 6, lambda m: dataclasses.replace(m, pushes=m.pushes * 2)),
        Check.DUPLICATE_MESSAGE,
    ),
    "held-push": (
        A,
        B,
        once(Step, 6, lambda m: dataclasses.replace(m, pushes=(A_NODES[1],))),
        Check.DUPLICATE_MESSAGE,
    ),
    "unsolicited": (
        A,
        B,
        once(Step, 2, lambda m: dataclasses.replace(m, pushes=(B_NODES[-1],))),
        Check.UNSOLICITED_MESSAGE,
    ),
    "dropped-tail": (
        SHORT,
        LONG,
        once(Step, 1, lambda m: dataclasses.replace(m, pushes=m.pushes[:-1])),
        Check.TAIL_AGGREGATE,
    ),
    "shallow-tail": (
        SHORT,
        LONG,
        once(
            Step,
            1,
            lambda m: dataclasses.replace(m, pushes=(*m.pushes, content_node([TAIL_NODES[0].id], b"shallow"))),
        ),
        Check.DEPTH_MISMATCH,
    ),
    "orphan-tail": (
        SHORT,
        LONG,
        once(Step, 1, lambda m: dataclasses.replace(m, pushes=(*m.pushes, STRANGER))),
        Check.MISSING_PARENT,
    ),
    "hello-twice": (A, B, once(Step, 1, lambda m: Hello(1, A.root, bytes(32), 8)), Check.UNEXPECTED_MESSAGE),
}


@pytest.mark.parametrize("lie", sorted(LIES))
def test_a_lying_peer_is_caught_and_nothing_is_accepted(lie: str) -> None:
    a, b, tamper, check = LIES[lie]
    alice, bob = sessions(random.Random(3), a, b)
    with pytest.raises(ReconcileError) as err:
        run_pair(alice, bob, tamper_bob=tamper)
    assert err.value.check is check, err.value
    assert alice.state is State.FAILED
    with pytest.raises(ReconcileError):
        alice.result  # noqa: B018 - the property raises


def test_the_honest_runs_behind_the_lies_succeed() -> None:
    for a, b in ((A, B), (SHORT, LONG)):
        alice, bob, _ = converge(a, b)
        assert set(alice.result.nodes) == set(bob.result.nodes) == set(a.nodes) | set(b.nodes)


# -- the state table ---------------------------------------------------------------------------------------


def test_states_step_by_step() -> None:
    alice = Session(ReconcileRole.INITIATOR, A, bytes(32), content_id=content_id)
    bob = Session(ReconcileRole.RESPONDER, B, bytes([7]) * 32, content_id=content_id)
    assert alice.state is State.IDLE
    hello_a, hello_b = alice.start(), bob.start()
    assert alice.state is State.HELLO_SENT and hello_a.max_depth == 8
    with pytest.raises(ReconcileError) as err:
        alice.start()
    assert err.value.check is Check.UNEXPECTED_MESSAGE
    (step_a,) = alice.receive(hello_b)
    (step_b,) = bob.receive(hello_a)
    assert alice.state is State.STEPPING
    assert isinstance(step_a, Step) and step_a.round == 1 and step_a.total is not None
    assert len(step_a.aggregates) == len(step_b.aggregates) == 1  # one tree over depths 1..8
    assert step_a.pushes == step_b.pushes == ()
    (step_a2,) = alice.receive(step_b)
    assert isinstance(step_a2, Step) and len(step_a2.aggregates) == 2


def test_messages_after_the_end_are_refused() -> None:
    alice, _, _ = converge(A, A)
    with pytest.raises(ReconcileError) as err:
        alice.receive(Hello(1, A.root, bytes(32), 0))
    assert err.value.check is Check.CLOSED
    assert alice.state is State.FAILED


def test_a_negative_count_never_reaches_the_wire_and_is_refused_in_memory() -> None:
    with pytest.raises(ReconcileError) as err:
        encode(Step(1, Aggregate(-1, 0), (), (), ()))
    assert err.value.check is Check.ENCODING
    alice, bob = Session(ReconcileRole.INITIATOR, A, bytes(32)), Session(ReconcileRole.RESPONDER, B, bytes([1]) * 32)
    hello_a, hello_b = alice.start(), bob.start()
    alice.receive(hello_b)
    (step_b,) = bob.receive(hello_a)
    with pytest.raises(ReconcileError) as err:
        alice.receive(dataclasses.replace(step_b, aggregates=(Aggregate(-1, 0),)))
    assert err.value.check is Check.AGGREGATE_RANGE


def test_our_own_nonce_must_have_32_bytes() -> None:
    with pytest.raises(ReconcileError) as err:
        Session(ReconcileRole.INITIATOR, A, b"short")
    assert err.value.check is Check.NONCE


def test_sets_crafted_to_collide_under_plain_xor_differ_under_the_session_key() -> None:
    """The attack the key defeats: {a, b} and {c, a^b^c} have equal plain XORs and counts."""
    rng = random.Random(5)
    a, b, c = (rng.randbytes(32) for _ in range(3))
    d = bytes(x ^ y ^ z for x, y, z in zip(a, b, c, strict=True))
    plain = [int.from_bytes(x, "big") for x in (a, b, c, d)]
    assert plain[0] ^ plain[1] == plain[2] ^ plain[3]
    for seed in range(20):
        key = derive_key(b"root", random.Random(seed).randbytes(32), bytes(32))
        assert aggregate_of(map(key.digest, (a, b))) != aggregate_of(map(key.digest, (c, d)))


fuzz_aggregates = st.builds(Aggregate, st.integers(0, 5), st.integers(0, 2**128 - 1))
fuzz_steps = st.builds(
    Step,
    st.integers(1, 3),
    st.none() | fuzz_aggregates,
    st.lists(fuzz_aggregates, max_size=3).map(tuple),
    st.lists(
        st.builds(Bucket, st.integers(0, 9), st.lists(st.binary(min_size=16, max_size=16), max_size=2).map(tuple)),
        max_size=2,
    ).map(tuple),
    st.lists(st.sampled_from(B_NODES + A_NODES + [STRANGER]), max_size=3).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(fuzz_steps, min_size=1, max_size=4))
def test_arbitrary_steps_are_processed_or_refused_by_name(steps: list[Step]) -> None:
    alice = Session(ReconcileRole.INITIATOR, A, bytes(32), content_id=content_id)
    alice.start()
    alice.receive(Hello(1, A.root, bytes([2]) * 32, 8))
    for step in steps:
        try:
            alice.receive(step)
        except ReconcileError:
            assert alice.state is State.FAILED
            return
