"""The compiled routes (`ssblab.archive._speedups`) give exactly what the pure-Python routes give.

Blobs are content-addressed, so both routes must decode the same rows from any blob and raise on the same
damaged ones; property tests run both on generated feeds and on generated column bytes.
"""

from __future__ import annotations

import base64
import hashlib
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssblab.archive import block as blocks
from ssblab.archive import rebuild, svb, text
from ssblab.archive.arrow import id_texts, to_arrow
from ssblab.archive.bundle import build_archives
from ssblab.archive.errors import ArchiveError, MalformedArchive, NotArchivable
from ssblab.core.message import Message
from ssblab.core.private_box import box
from tests.archive.feeds import KEYPAIR, contents, sign_feed
from tests.archive.routes import needs_compiled, pure_python


@needs_compiled
@given(st.binary(max_size=300) | st.integers(0, 3000).map(bytes))
def test_sha256_is_hashlibs(data: bytes) -> None:
    from ssblab.archive import _speedups

    expected = hashlib.sha256(data).digest()
    assert _speedups.sha256(data) == expected
    assert _speedups.sha256(data, True) == expected  # the portable rounds, whatever this CPU offers


def cut(data: bytes, points: list[int]) -> list[bytes]:
    ends = sorted({min(p, len(data)) for p in points} | {0, len(data)})
    return [data[a:b] for a, b in pairwise(ends)]


@needs_compiled
def test_streamed_sha256_covers_every_padding_case() -> None:
    from ssblab.archive import _speedups

    data = bytes(range(256)) * 2
    lengths = range(260)  # every tail: empty, up to 55 bytes (one padding block), 56 to 63 (two), across 64s
    for portable in (False, True):
        digests = _speedups.sha256_streams([cut(data[:n], list(range(0, n, 7))) for n in lengths], portable)
        assert digests == [hashlib.sha256(data[:n]).digest() for n in lengths]


@needs_compiled
@given(st.lists(st.tuples(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=7)), max_size=5))
def test_streamed_sha256_is_hashlibs(messages: list[tuple[bytes, list[int]]]) -> None:
    from ssblab.archive import _speedups

    digests = _speedups.sha256_streams([cut(data, points) for data, points in messages])
    assert digests == [hashlib.sha256(data).digest() for data, _ in messages]


def both(fn: Any) -> tuple[str, object]:
    """(outcome, value) of ``fn()``: the value, or the error class name (messages may word it differently)."""
    try:
        return "value", fn()
    except (ArchiveError, NotArchivable) as exc:
        return "error", type(exc).__name__


@needs_compiled
@given(st.binary(max_size=12), st.binary(max_size=40), st.sampled_from(["1234", "1248"]))
def test_svb_routes_agree_on_any_bytes(codes: bytes, values: bytes, flavour: svb.Flavour) -> None:
    def run() -> list[int]:
        return svb.decode(codes, values, flavour).tolist()

    compiled = both(run)
    with pure_python():
        assert both(run) == compiled


@needs_compiled
@given(st.lists(st.integers(0, 2**64 - 1), max_size=30))
def test_svb_routes_agree_on_columns(ints: list[int]) -> None:
    for flavour, limit in (("1234", 2**32), ("1248", 2**64)):
        coded = svb.encode([i % limit for i in ints], flavour)  # type: ignore[arg-type]
        compiled = svb.decode(*coded, flavour)  # type: ignore[arg-type]
        with pure_python():
            assert svb.encode([i % limit for i in ints], flavour) == coded  # type: ignore[arg-type]
            assert np.array_equal(svb.decode(*coded, flavour), compiled)  # type: ignore[arg-type]


def decoded(blobs: tuple[bytes, ...], dicts: Any) -> list[Any]:
    decoded = [blocks.decode_block(data, dicts) for data in blobs]
    out: list[Any] = [
        (blk.contents, blk.offsets.tolist(), blk.plain.tolist(), rebuild.encodings(blk, dicts)) for blk in decoded
    ]
    out.append(rebuild.digests(decoded, dicts))  # the compiled route hashes the blocks' chains two at a time
    out.append(to_arrow(blobs, dicts, valid=True))
    return out


@st.composite
def odd_feeds(draw: st.DrawFn) -> list[Message]:
    """A signed feed of awkward contents, some boxed (private) and some with float timestamps (verbatim)."""
    items = draw(st.lists(contents(), min_size=1, max_size=6))
    stamps: list[float] = [1_600_000_000_000 + i for i in range(len(items))]
    for i in range(len(items)):
        how = draw(st.sampled_from([None, None, "box", "float"]))
        if how == "box":
            items[i] = box(items[i], [KEYPAIR.id], random_bytes=lambda n: bytes(n))
        elif how == "float":
            stamps[i] = 1.5 + i
    try:
        return sign_feed(items, stamps)
    except Exception:  # a content that no SSB implementation would sign (too large, bad type): not our case
        return sign_feed([{"type": "post", "text": "x"}])


SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@needs_compiled
@SLOW
@given(odd_feeds(), st.integers(1, 4))
def test_encoding_routes_agree(feed: list[Message], block_size: int) -> None:
    compiled, dicts = build_archives([feed], block_size)
    with pure_python():
        pure, again = build_archives([feed], block_size)
    assert [a.blobs() for a in pure] == [a.blobs() for a in compiled]
    assert again.heads == dicts.heads


@needs_compiled
@SLOW
@given(odd_feeds(), st.integers(1, 4))
def test_decoding_routes_agree(feed: list[Message], block_size: int) -> None:
    (archive,), dicts = build_archives([feed], block_size)
    compiled = decoded(archive.blocks, dicts)
    with pure_python():
        assert decoded(archive.blocks, dicts) == compiled
    *per_block, digests, _ = compiled
    assert [t for _, _, _, (texts, _) in per_block for t in texts] == [m.encoded for m in feed]
    assert b"".join(digests) == b"".join(base64.b64decode(m.id[1:-7]) for m in feed)


def planned(feed: list[Message]) -> tuple[str, object]:
    def run() -> tuple[object, ...]:
        p = blocks.plan(feed)
        columns = (p.orders, p.types, p.skeletons)
        return (
            p.timestamps.tolist(), p.signatures, *((c.values, c.index.tolist()) for c in columns),
            p.tokens.texts(), p.tokens.stream.tolist(),
        )  # fmt: skip

    return both(run)


SIGNATURE = base64.b64encode(bytes(range(64))).decode() + ".sig.ed25519"
# Envelope fields the text route must settle exactly as the value route: anything else makes a message verbatim.
ODD_FIELDS: dict[str, list[Any]] = {
    "timestamp": [0, 1.0, -0.0, 2**53 - 1, 2**53, -1, 1.5, 1e21, True, "1", None],
    "hash": ["sha256", "sha512", None],
    "signature": [SIGNATURE, SIGNATURE.replace(".sig.", ".sag."), "AB" + SIGNATURE[2:-14] + "=.sig.ed25519", 1],
    "content": [
        {"type": "post", "text": "plain"}, "boxed.box", [1, {"type": "post"}], 3, None, {}, {"type": 'a"b'},
        {"type": "x\ny"}, {"type": "\ud800"},
        {"type": 1}, {"type": None}, {"type": {"type": "post"}}, {"text": "t", "type": "npm-packages", "k": {"a": 1}},
        {"type": "git-update", "refs": {"a": "b"}}, {"n": {"type": "deep"}}, {"type": "é😀"}, {"t": '\n  "x": 1'},
    ],
}  # fmt: skip


@st.composite
def odd_envelopes(draw: st.DrawFn) -> list[Message]:
    """A chained feed of unsigned messages whose envelopes vary field by field, in key order and in their keys."""
    feed: list[Message] = []
    for i in range(draw(st.integers(1, 6))):
        value: dict[str, Any] = {
            "previous": feed[-1].id if feed else None, "author": KEYPAIR.id, "sequence": i + 1,
            **{k: draw(st.just(v[0]) | st.sampled_from(v)) for k, v in ODD_FIELDS.items()},  # often all plain
        }  # fmt: skip
        change = draw(st.sampled_from([None, None, "drop", "add"]))
        if change == "drop":
            del value[draw(st.sampled_from(["previous", "timestamp", "hash", "content", "signature"]))]
        elif change == "add":
            value["extra"] = 1
        if draw(st.booleans()):
            value["previous"] = "%" + "A" * 43 + "=.sha256"  # not the message before
        keys = draw(st.permutations(list(value)))
        feed.append(Message.from_value({k: value[k] for k in keys}))
    return feed


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(odd_envelopes())
def test_planning_routes_agree_on_odd_envelopes(feed: list[Message]) -> None:
    compiled = planned(feed)
    with pure_python():
        assert planned(feed) == compiled


# Bytes that reach every alternative of text.LEAF and text.TOKEN, arranged at random (some runs longer than the
# 8 bytes the compiled tokenizer reads at a time).
PIECES = st.sampled_from([
    b'"', b'\\', b'\\"', b":", b"-", b"1", b"2.5e+3", b"true", b"fals", b"null", b" ", b"\n  ", b"{", b"]", b",",
    b"%", b"@", b"&", b"=", b"=.", b".sha256", b".ed25519", b"A" * 43, b"abc", b"Zz09+/" * 4, b"\xc3\xa9",
    b"\xf0\x9f\x98\x80", b"\x80", b"\x01", b"Seventeen letters", b"12345678901", b"\n          ", b"\xe2\x82\xac" * 4,
])  # fmt: skip
TEXTS = st.lists(PIECES, max_size=30).map(b"".join) | st.binary(max_size=60)


@needs_compiled
@given(st.lists(TEXTS, min_size=1, max_size=5))
def test_flattening_routes_agree_on_any_bytes(texts: list[bytes]) -> None:
    """Messages whose encodings are any bytes are stored verbatim: their whole text is flattened."""
    feed = [Message({"author": KEYPAIR.id, "sequence": i + 1}, t, f"%{i}") for i, t in enumerate(texts)]
    compiled = planned(feed)
    with pure_python():
        assert planned(feed) == compiled
    assert compiled[0] == ("error" if any(0 in t for t in texts) else "value")


def tokens_like(raw: bytes, sigil: bytes, suffix: bytes, cut: int) -> bytes:
    """A ref, base64 run or near miss of one (cut letters, wrong padding)."""
    letters = base64.b64encode(raw)
    return (sigil + letters + suffix)[cut:] if cut >= 0 else sigil + letters[:cut] + suffix


@needs_compiled
@given(
    st.lists(
        st.builds(
            tokens_like,
            st.binary(min_size=15, max_size=40) | st.binary(min_size=32, max_size=32),
            st.sampled_from([b"", b"%", b"@", b"&", b" "]),
            st.sampled_from([b"", b".sha256", b".ed25519", b"=", b".sha25"]),
            st.integers(-2, 2),
        )
        | st.binary(max_size=60)
    )
)
def test_shared_entries_agree(tokens: list[bytes]) -> None:
    compiled = text.shared_entries(tokens)
    with pure_python():
        assert text.shared_entries(tokens) == compiled


@needs_compiled
def test_both_routes_refuse_the_same_feeds(feeds: list[list[Message]]) -> None:
    for bad in ([feeds[0][0], feeds[0][2]], [feeds[0][0], feeds[1][1]]):
        with pytest.raises(NotArchivable, match="one feed"):
            blocks.plan(bad)
        with pure_python(), pytest.raises(NotArchivable, match="one feed"):
            blocks.plan(bad)


SKELETONS = st.lists(st.sampled_from([b"{", b"}", b"[", b"]", b"{}", b"[]", b",", b":", b" ", b"\n  ", b'"k"', b'"\\""',
                                      b'"', b"\x00", b'"\x00"', b"x"]), max_size=25).map(b"".join)  # fmt: skip


@needs_compiled
@given(SKELETONS | st.binary(max_size=40), st.binary(max_size=40))
def test_skeleton_layouts_agree(skeleton: bytes, stored: bytes) -> None:
    outcome = both(lambda: (text.store_skeleton(skeleton), text.load_skeleton(stored)))
    with pure_python():
        assert both(lambda: (text.store_skeleton(skeleton), text.load_skeleton(stored))) == outcome
    with pure_python():  # layouts made by either route rebuild the skeleton on either route
        assert text.load_skeleton(text.store_skeleton(skeleton)) == skeleton


ENTRIES = st.builds(
    lambda k, p: bytes([k]) + p, st.integers(0, 7), st.binary(max_size=40) | st.binary(min_size=32, max_size=32)
)


@needs_compiled
@given(st.lists(ENTRIES | st.just(b"")))
def test_shared_tokens_agree(entries: list[bytes]) -> None:
    outcome = both(lambda: text.shared_tokens(entries))
    with pure_python():
        assert both(lambda: text.shared_tokens(entries)) == outcome


@needs_compiled
def test_base64_is_pythons_at_every_length() -> None:
    """Base64 runs vectorised in steps of 24 bytes where the CPU allows, then 3 bytes at a time: every tail."""
    data = bytes(range(256)) * 3
    entries = [bytes([text.BASE64]) + data[k : k + n] for n in range(300) for k in (0, 1)]
    assert text.shared_tokens(entries) == [base64.b64encode(e[1:]) for e in entries]


@needs_compiled
@given(st.lists(st.binary(min_size=32, max_size=32), max_size=5).map(b"".join))
def test_id_texts_agree(digests: bytes) -> None:
    compiled = id_texts(digests)
    with pure_python():
        assert id_texts(digests) == compiled


@needs_compiled
def test_block_digests_refuse_rows_that_do_not_add_up() -> None:
    """Rows come from a checked block, but the C code trusts none of them: each fault is named, nothing crashes."""
    from ssblab.archive import _speedups

    feed = sign_feed([{"type": "post", "text": "hi"}, {"type": "vote"}])
    (archive,), dicts = build_archives([feed])
    blk = blocks.decode_block(archive.blocks[0], dicts)
    rows = rebuild.compiled_rows(blk, rebuild.orders(blk, dicts, "block 0"), "block 0")
    assert _speedups.block_digests([rows]) == [b"".join(base64.b64decode(m.id[1:-7]) for m in feed)]

    def fault(changes: dict[int, Any], expected: type[Exception] = MalformedArchive) -> str:
        changed = tuple(changes.get(k, row) for k, row in enumerate(rows))
        with pytest.raises(expected) as failure:
            _speedups.block_digests([rows, changed])  # the good block hashes beside the bad one
        return str(failure.value)

    assert fault({1: np.array([0, 5, 10**6]), 2: np.array([5, 0])}) == (
        "block 0, message 1: content offsets outside the texts"
    )
    assert fault({2: np.array([2, 10**6])}) == "block 0, message 1: an ASCII start beyond its content"
    assert fault({3: np.array([0, 7])}) == "block 0, message 1: unknown envelope layout"
    assert fault({7: blk.signatures[:100]}) == "block 0, message 1: no signature bytes"
    assert fault({0: b"\xff", 1: np.array([0, 1, 1]), 2: np.array([0, 0])}) == (
        "block 0, message 0: content is not UTF-8"
    )
    assert "without the content" in fault({4: ((b"{}",),)}, ValueError)
    assert "field not named before" in fault({4: ((b"{", 3, 3),)}, ValueError)
    assert "of different rows" in fault({5: blk.timestamps[:1]}, ValueError)
    assert "of different rows" in fault({2: blk.plain[:1]}, ValueError)
    assert "32 bytes or None" in fault({8: b"short"}, ValueError)
    with pytest.raises(TypeError, match="ten"):
        _speedups.block_digests([rows[:9]])
