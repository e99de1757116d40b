"""Merkle-tree certificates: every ordered pair verifies, every tampered byte or swapped pair fails."""

from __future__ import annotations

import dataclasses
import doctest
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ssblab.certs as certs_pkg
from ssblab.certs import anchor, merkle
from ssblab.certs.merkle import (
    Anchor,
    Certificate,
    CertificateError,
    CertRule,
    FeedTree,
    check_consistent,
    decode,
    encode,
    leaf_hash,
    node_hash,
    required_length,
    verify,
    verify_order,
)


def random_feed(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(32) for _ in range(n)]


FEED = random_feed(300, seed=1)
TREE = FeedTree.from_ids(FEED)  # 300 messages: messages 0..255 can be certified


def trusted(tree: FeedTree) -> Anchor:
    """The anchor the feed's author would sign (tests/certs/test_certs_anchor.py checks real signed ones)."""
    height = tree.length.bit_length() - 1
    return Anchor("@author", tree.length + 1, "%anchor", tuple(tree.diamond(h) for h in range(height + 1)))


def test_doctests() -> None:
    assert doctest.testmod(merkle).failed == 0


def test_all_matches_module() -> None:
    assert sorted(certs_pkg.__all__) == sorted(set(certs_pkg.__all__))
    for name in certs_pkg.__all__:
        assert getattr(certs_pkg, name) is getattr(merkle if hasattr(merkle, name) else anchor, name)


def test_seed_example_certificate_of_m6() -> None:
    """The seed's c6 in a feed of eight: h7, h45, h0123 up to h01234567, plus the diamonds h0, h01, h0123."""
    ids = [f"m{i}" for i in range(8)]
    h = [leaf_hash(m) for m in ids]
    h01, h23, h45 = node_hash(h[0], h[1]), node_hash(h[2], h[3]), node_hash(h[4], h[5])
    h0123 = node_hash(h01, h23)
    root = node_hash(h0123, node_hash(h45, node_hash(h[6], h[7])))
    cert = FeedTree.from_ids(ids).certificate(6)
    assert cert.path == (h[7], h45, h0123)
    assert cert.diamonds == (h[0], h01, h0123, root)
    assert cert.spine == (h[1], h23)
    assert verify(cert, "m6") == root


def test_first_message_is_its_own_diamond() -> None:
    cert = TREE.certificate(0)
    assert (cert.path, cert.diamonds, cert.spine) == ((), (cert.leaf,), ())
    assert verify(cert, FEED[0]) == leaf_hash(FEED[0])


@pytest.mark.parametrize("index", [0, 1, 2, 3, 5, 100, 255])
def test_each_certificate_verifies_against_its_message(index: int) -> None:
    cert = TREE.certificate(index)
    assert verify(cert, FEED[index]) == TREE.diamond(index.bit_length())
    with pytest.raises(CertificateError) as err:
        verify(cert, FEED[index + 1])
    assert err.value.rule is CertRule.LEAF


def test_sampled_pairs_verify_in_order_only() -> None:
    rng = random.Random(7)
    for _ in range(300):
        k1, k2 = sorted(rng.sample(range(256), 2))
        earlier, later = TREE.certificate(k1), TREE.certificate(k2)
        verify_order(earlier, later, trusted(TREE))
        with pytest.raises(CertificateError) as err:
            verify_order(later, earlier, trusted(TREE))
        assert err.value.rule is CertRule.ORDER


def test_same_message_is_not_before_itself() -> None:
    with pytest.raises(CertificateError) as err:
        verify_order(TREE.certificate(9), TREE.certificate(9), trusted(TREE))
    assert err.value.rule is CertRule.ORDER


def test_not_issuable_before_its_diamond_closes() -> None:
    assert required_length(256) == 512
    with pytest.raises(CertificateError) as err:
        TREE.certificate(256)
    assert err.value.rule is CertRule.INDEX
    with pytest.raises(CertificateError):
        TREE.certificate(-1)


def test_fork_is_detected_through_a_shared_diamond() -> None:
    forked = list(FEED)
    forked[3] = b"another message three"
    other = FeedTree.from_ids(forked)
    with pytest.raises(CertificateError) as err:
        check_consistent(TREE.certificate(10), other.certificate(12))
    assert err.value.rule is CertRule.FORK
    with pytest.raises(CertificateError) as err:
        check_consistent(TREE.certificate(3), other.certificate(3))
    assert err.value.rule is CertRule.FORK


def test_certificate_size_is_logarithmic() -> None:
    big = FeedTree.from_leaves(leaf_hash(i.to_bytes(4, "big")) for i in range(1 << 14))
    for k in (1, 15, 16, 1000, (1 << 14) - 1):
        cert = big.certificate(k)
        j = k.bit_length()
        assert cert.hash_count == 3 * j + 1
        assert len(encode(cert)) <= 32 * (3 * math.log2(k) + 4) + 3


@pytest.mark.parametrize("index", [0, 1, 2, 6, 200])
def test_codec_round_trip(index: int) -> None:
    cert = TREE.certificate(index)
    assert decode(encode(cert)) == cert


MALFORMED = [b"", b"\x80", b"\x05" + b"\x00" * 31, b"\x80\x00" + b"\x00" * 32, b"\xff" * 12]


@pytest.mark.parametrize("data", MALFORMED)
def test_codec_rejects_malformed_bytes(data: bytes) -> None:
    with pytest.raises(CertificateError) as err:
        decode(data)
    assert err.value.rule is CertRule.ENCODING


def _reject(cert: Certificate) -> None:
    with pytest.raises(CertificateError):
        verify(cert)


@settings(max_examples=200, deadline=None)
@given(index=st.integers(0, 255), data=st.data())
def test_any_flipped_byte_of_any_field_is_detected(index: int, data: st.DataObject) -> None:
    cert = TREE.certificate(index)
    fields = ["leaf"] + [f for f in ("path", "diamonds", "spine") if getattr(cert, f)]
    field = data.draw(st.sampled_from(fields))
    value = getattr(cert, field)
    position = data.draw(st.integers(0, len(value) - 1)) if field != "leaf" else None
    target = value if position is None else value[position]
    byte = data.draw(st.integers(0, len(target) - 1))
    flip = data.draw(st.integers(1, 255))
    changed = target[:byte] + bytes([target[byte] ^ flip]) + target[byte + 1 :]
    if position is not None:
        changed_field: object = (*value[:position], changed, *value[position + 1 :])
    else:
        changed_field = changed
    _reject(dataclasses.replace(cert, **{field: changed_field}))


@settings(max_examples=200, deadline=None)
@given(index=st.integers(1, 255), other=st.integers(0, 300))
def test_a_changed_index_is_detected(index: int, other: int) -> None:
    if other != index:
        _reject(dataclasses.replace(TREE.certificate(index), index=other))


@settings(max_examples=200, deadline=None)
@given(index=st.integers(2, 255), data=st.data())
def test_swapped_hashes_within_a_field_are_detected(index: int, data: st.DataObject) -> None:
    cert = TREE.certificate(index)
    field = data.draw(st.sampled_from(["path", "diamonds"]))
    value = list(getattr(cert, field))
    i, j = data.draw(st.lists(st.integers(0, len(value) - 1), min_size=2, max_size=2, unique=True))
    value[i], value[j] = value[j], value[i]
    _reject(dataclasses.replace(cert, **{field: tuple(value)}))


@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, 255), byte=st.integers(0, 10_000), flip=st.integers(1, 255))
def test_any_flipped_byte_of_the_encoding_is_detected(index: int, byte: int, flip: int) -> None:
    cert = TREE.certificate(index)
    raw = bytearray(encode(cert))
    raw[byte % len(raw)] ^= flip
    try:
        tampered = decode(bytes(raw))
    except CertificateError:
        return
    if tampered.index == index:
        _reject(tampered)
    else:  # a different index: whatever it now claims must not verify against the real message
        with pytest.raises(CertificateError):
            verify(tampered, FEED[tampered.index] if tampered.index < len(FEED) else b"x")


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 2**32), data=st.data())
def test_random_feeds_pairs_verify(n: int, seed: int, data: st.DataObject) -> None:
    feed = random_feed(n, seed)
    tree = FeedTree.from_ids(feed)
    issuable = 1 << (n.bit_length() - 1)  # largest closed diamond
    k1 = data.draw(st.integers(0, issuable - 1))
    k2 = data.draw(st.integers(0, issuable - 1))
    a, b = tree.certificate(k1), tree.certificate(k2)
    check_consistent(a, b)
    if k1 < k2:
        verify_order(a, b, trusted(tree))
    elif k1 > k2:
        verify_order(b, a, trusted(tree))


def replace_diamond(cert: Certificate, position: int, value: bytes) -> Certificate:
    diamonds = list(cert.diamonds)
    diamonds[position] = value
    return dataclasses.replace(cert, diamonds=tuple(diamonds))


def test_shape_errors_name_the_rule() -> None:
    cert = TREE.certificate(5)
    for bad, rule in [
        (dataclasses.replace(cert, path=cert.path[:-1]), CertRule.SHAPE),
        (dataclasses.replace(cert, spine=(*cert.spine, cert.leaf)), CertRule.SHAPE),
        (dataclasses.replace(cert, leaf=cert.leaf[:31]), CertRule.HASH_LENGTH),
        (dataclasses.replace(cert, index=-3), CertRule.INDEX),
        (replace_diamond(cert, -2, cert.leaf), CertRule.DIAMOND_LINK),
        (replace_diamond(cert, 0, cert.leaf), CertRule.SPINE),
    ]:
        with pytest.raises(CertificateError) as err:
            verify(bad)
        assert err.value.rule is rule, bad
