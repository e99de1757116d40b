"""Aggregates, trDAG depths, the forest and the codec, each on its own."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ssblab.reconcile as pkg
from ssblab.reconcile import (
    HASH_BYTES,
    Aggregate,
    Bucket,
    Check,
    Hello,
    Node,
    ReconcileError,
    Span,
    Step,
    TrDag,
    decode,
    derive_key,
    encode,
    forest_roots,
    make_node,
)
from ssblab.reconcile.aggregate import aggregate_of
from ssblab.reconcile.forest import DepthIndex
from ssblab.reconcile.simulate import random_trdag

KEY = derive_key(b"root", bytes(32), bytes([1]) * 32)


def test_all_matches_the_modules() -> None:
    assert len(set(pkg.__all__)) == len(pkg.__all__)
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None


# -- aggregates ----

ids = st.lists(st.binary(min_size=1, max_size=40), unique=True, max_size=30)


@given(ids, ids)
def test_union_and_difference_of_disjoint_sets(xs: list[bytes], ys: list[bytes]) -> None:
    ys = [y for y in ys if y not in xs]
    a, b = aggregate_of(map(KEY.digest, xs)), aggregate_of(map(KEY.digest, ys))
    both = aggregate_of(map(KEY.digest, xs + ys))
    assert a.union(b) == both
    assert both.minus(a) == b
    assert both.is_plausible()


def test_equal_sets_equal_aggregates_and_different_ones_differ() -> None:
    xs = [bytes([i]) for i in range(10)]
    assert aggregate_of(map(KEY.digest, xs)) == aggregate_of(map(KEY.digest, reversed(xs)))
    assert aggregate_of(map(KEY.digest, xs)) != aggregate_of(map(KEY.digest, [*xs[:-1], b"other"]))


def test_keyed_hash_depends_on_both_nonces_and_the_root() -> None:
    keys = {
        derive_key(b"root", bytes(32), bytes(32)).key,
        derive_key(b"root", bytes(32), bytes([1]) * 32).key,
        derive_key(b"root", bytes([1]) * 32, bytes(32)).key,
        derive_key(b"toor", bytes(32), bytes(32)).key,
    }
    assert len(keys) == 4
    assert len(KEY.digest(b"x")) == HASH_BYTES


@pytest.mark.parametrize("aggregate", [Aggregate(-1, 0), Aggregate(0, 5), Aggregate(1, 1 << 128), Aggregate(2, -1)])
def test_implausible_aggregates(aggregate: Aggregate) -> None:
    assert not aggregate.is_plausible()


# -- trDAG ----


def test_depth_is_the_longest_path_to_the_root() -> None:
    dag = TrDag.from_nodes(
        [
            make_node("c", ["a", "b"]),
            make_node("b", ["a"]),
            make_node("a", ["r"]),
            make_node("r"),
            make_node("d", ["r"]),
        ]
    )
    assert dict(dag.depths) == {b"r": 0, b"a": 1, b"b": 2, b"c": 3, b"d": 1}
    assert dag.max_depth == 3
    assert sorted(n.id for n in dag.by_depth()[1]) == [b"a", b"d"]


@pytest.mark.parametrize(
    ("nodes", "check"),
    [
        ([make_node("r"), make_node("a", ["x"])], Check.MISSING_PARENT),
        ([make_node("r"), make_node("a", ["a"])], Check.MISSING_PARENT),
        ([make_node("r"), make_node("s")], Check.SECOND_ROOT),
        ([make_node("a", ["r"])], Check.SECOND_ROOT),
        ([make_node("r"), make_node("a", ["r"]), make_node("a", ["r"])], Check.DUPLICATE_MESSAGE),
    ],
)
def test_bad_dags_name_the_check(nodes: list[Node], check: Check) -> None:
    with pytest.raises(ReconcileError) as err:
        TrDag.from_nodes(nodes)
    assert err.value.check is check


def test_extend_never_mutates() -> None:
    dag = TrDag.from_nodes([make_node("r")])
    bigger = dag.extend([make_node("b", ["a"]), make_node("a", ["r"])])
    assert len(dag) == 1 and len(bigger) == 3 and b"b" in bigger


# -- forest ----


def test_forest_of_23_depths_is_the_drafts_example() -> None:
    assert forest_roots(23) == (Span(1, 16), Span(17, 4), Span(21, 2), Span(23, 1))
    assert forest_roots(0) == ()


@given(st.integers(1, 5000))
def test_forest_leaves_cover_each_depth_once(m: int) -> None:
    roots = forest_roots(m)
    assert len(roots) == bin(m).count("1")
    covered = [d for r in roots for d in range(r.lo, r.lo + r.size)]
    assert covered == list(range(1, m + 1))


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 120))
def test_span_aggregates_match_brute_force(rng: random.Random, n: int) -> None:
    dag = random_trdag(rng, n)
    index = DepthIndex.build(dag, KEY)
    for root in forest_roots(dag.max_depth):
        stack = [root]
        while stack:
            span = stack.pop()
            members = [i for i, d in dag.depths.items() if span.lo <= d < span.lo + span.size]
            assert index.span(span) == aggregate_of(map(KEY.digest, members))
            if not span.is_leaf:
                left, right = span.children()
                assert index.span(left).union(index.span(right)) == index.span(span)
                stack.extend((left, right))


# -- codec ----

aggregates = st.builds(Aggregate, st.integers(0, 2**40), st.integers(0, 2**128 - 1))
nodes = st.builds(
    Node,
    st.binary(max_size=40),
    st.lists(st.binary(max_size=40), max_size=3).map(tuple),
    st.binary(max_size=60),
)
messages = st.one_of(
    st.builds(Hello, st.integers(0, 5), st.binary(max_size=50), st.binary(max_size=40), st.integers(0, 2**40)),
    st.builds(
        Step,
        st.integers(0, 100),
        st.none() | aggregates,
        st.lists(aggregates, max_size=5).map(tuple),
        st.lists(
            st.builds(
                Bucket,
                st.integers(0, 1000),
                st.lists(st.binary(min_size=16, max_size=16), max_size=4).map(tuple),
            ),
            max_size=3,
        ).map(tuple),
        st.lists(nodes, max_size=3).map(tuple),
    ),
)


@given(messages)
def test_codec_round_trip_and_every_truncation_fails(message: Hello | Step) -> None:
    raw = encode(message)
    assert decode(raw) == message
    for cut in range(len(raw)):
        with pytest.raises(ReconcileError) as err:
            decode(raw[:cut])
        assert err.value.check is Check.ENCODING
    with pytest.raises(ReconcileError):
        decode(raw + b"\x00")


@settings(max_examples=500)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_encoding(data: bytes) -> None:
    try:
        decode(data)
    except ReconcileError as err:
        assert err.check is Check.ENCODING


@pytest.mark.parametrize(
    "data", [b"\x07", b"\x02\x80\x00", b"\x02\x00\x02", b"\x01" + b"\xff" * 12, b"\x02\x00\x00\xff\x7f"]
)
def test_malformed_bytes(data: bytes) -> None:
    with pytest.raises(ReconcileError) as err:
        decode(data)
    assert err.value.check is Check.ENCODING
