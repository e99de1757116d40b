"""The compiled blob assembler (`_speedups.block_blob`, `_speedups.bundle_blob`) lays out every blob byte for byte as
the Python FlatBuffers builder does (docs/archive-format.md §3): blob ids are the sha256 of those bytes, and
verifiers rebuild blobs to compare ids.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssblab.archive.bundle import build_archives
from ssblab.archive.flat import BlockRef, Bundle, DictRef, DictSet, Sketch, build_bundle
from ssblab.core.message import Message
from tests.archive.feeds import KEYPAIR
from tests.archive.routes import needs_compiled, pure_python


@needs_compiled
@pytest.mark.parametrize("block_size", [1, 37, 8192])
def test_block_assembly_agrees_on_generated_feeds(feeds: list[list[Message]], block_size: int) -> None:
    """The C block assembler lays out every blob as the Python builder does, on blocks long enough for FlexBuffer
    offsets and StreamVByte values of several bytes, and for blocks that follow a previous one."""
    compiled, _ = build_archives(feeds, block_size)
    with pure_python():
        pure, _ = build_archives(feeds, block_size)
    assert [a.blobs() for a in compiled] == [a.blobs() for a in pure]


@needs_compiled
@pytest.mark.parametrize("sequence", [2**32 - 1, 2**32, 2**63])
def test_both_routes_treat_wide_sequences_alike(sequence: int) -> None:
    """A sequence number beyond the sketch's uint32 fails on both routes (the compiled one hands it over)."""
    value = {
        "previous": "%" + "A" * 43 + "=.sha256", "author": KEYPAIR.id, "sequence": sequence, "timestamp": 0,
        "hash": "sha256", "content": {"type": "post"}, "signature": "x",
    }  # fmt: skip
    feed = [Message.from_value(value)]

    def run() -> object:
        try:
            return [a.blobs() for a in build_archives([feed], 4)[0]]
        except TypeError as exc:  # flatbuffers' "bad number"
            return type(exc).__name__

    compiled = run()
    with pure_python():
        assert run() == compiled
    assert (compiled == "TypeError") == (sequence >= 2**32)


HASH32 = st.binary(min_size=32, max_size=32)
BLOCK_REFS = st.builds(
    BlockRef, HASH32,
    st.builds(Sketch, *(st.integers(0, 2**32 - 1),) * 2, *(st.integers(0, 2**64 - 1),) * 2),
    st.none() | HASH32, HASH32,
)  # fmt: skip
HEADS = st.tuples(*(st.none() | st.builds(DictRef, st.just(k), HASH32, st.integers(0, 2**32 - 1)) for k in range(6)))


@needs_compiled
@given(HASH32, st.lists(BLOCK_REFS, max_size=5), HEADS)
def test_bundle_assembly_agrees(author: bytes, refs: list[BlockRef], heads: tuple[DictRef | None, ...]) -> None:
    """Bundles of any refs and heads (zero fields left out, timestamps past 2**63 handed to the builder) come out
    of the C assembler as the Python builder makes them."""
    bundle = Bundle(author, tuple(refs), DictSet(*heads))
    compiled = build_bundle(bundle)
    with pure_python():
        assert build_bundle(bundle) == compiled
