"""The compiled routes (`ssblab.archive._speedups`) give exactly what the pure-Python routes give.

Blobs are content-addressed, so both routes must decode the same rows from any blob and raise on the same
damaged ones; property tests run both on generated feeds and on generated column bytes.
"""

from __future__ import annotations

import hashlib
import shutil
import sysconfig
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssblab.archive import block as blocks
from ssblab.archive import svb
from ssblab.archive.arrow import to_arrow
from ssblab.archive.bundle import build_archives
from ssblab.archive.errors import ArchiveError
from ssblab.core.private_box import box
from tests.archive.feeds import KEYPAIR, contents, sign_feed
from tests.archive.routes import COMPILED, needs_compiled, pure_python


def test_the_extension_is_built() -> None:
    if shutil.which("cc") is None and not sysconfig.get_config_var("CC"):
        pytest.skip("no C compiler on this machine: ssblab runs its pure-Python routes")
    assert COMPILED, "ssblab.archive._speedups is missing: run `python setup.py build_ext --inplace`"


@needs_compiled
@given(st.binary(max_size=300) | st.integers(0, 3000).map(bytes))
def test_sha256_is_hashlibs(data: bytes) -> None:
    from ssblab.archive import _speedups

    expected = hashlib.sha256(data).digest()
    assert _speedups.sha256(data) == expected
    assert _speedups.sha256(data, True) == expected  # the portable rounds, whatever this CPU offers


def both(fn: Any) -> tuple[str, object]:
    """(outcome, value) of ``fn()``: the value, or the error class name (messages may word it differently)."""
    try:
        return "value", fn()
    except ArchiveError as exc:
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
            assert np.array_equal(svb.decode(*coded, flavour), compiled)  # type: ignore[arg-type]


def decoded(blobs: tuple[bytes, ...], dicts: Any) -> list[Any]:
    out: list[Any] = []
    for data in blobs:
        blk = blocks.decode_block(data, dicts)
        out.append((blk.contents, blk.offsets.tolist(), blocks.encodings(blk, dicts), blocks.digests(blk, dicts)))
    out.append(to_arrow(blobs, dicts, valid=True))
    return out


@needs_compiled
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(contents(), min_size=1, max_size=6),
    st.lists(st.sampled_from([None, "box", "float"]), min_size=6, max_size=6),
    st.integers(1, 4),
)
def test_decoding_routes_agree(items: list[Any], odd: list[str | None], block_size: int) -> None:
    stamps: list[float] = [1_600_000_000_000 + i for i in range(len(items))]
    for i, how in enumerate(odd[: len(items)]):
        if how == "box":  # private: the content is a boxed string
            items[i] = box(items[i], [KEYPAIR.id], random_bytes=lambda n: bytes(n))
        elif how == "float":  # a float timestamp: the message is stored verbatim
            stamps[i] = 1.5 + i
    try:
        feed = sign_feed(items, stamps)
    except Exception:  # a content that no SSB implementation would sign (too large, bad type): not our case
        return
    (archive,), dicts = build_archives([feed], block_size)
    compiled = decoded(archive.blocks, dicts)
    with pure_python():
        assert decoded(archive.blocks, dicts) == compiled
    assert [t for _, _, (texts, _), _ in compiled[:-1] for t in texts] == [m.encoded for m in feed]
