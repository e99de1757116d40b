"""The bulk paths of the encoder and decoder give exactly what the per-message definitions give.

The decoder gathers whole blocks with Arrow and transcodes contents with numpy; the encoder renders envelopes from
cached templates. Each is checked against the plain definition (docs/archive-format.md §5, §6), and awkward
messages (non-ASCII, astral characters, keys-as-data, boxes, a float timestamp, other envelope key orders) keep
the blob ids the format had before these paths existed.
"""

from __future__ import annotations

import hashlib
from itertools import pairwise
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.archive import block as blocks
from ssblab.archive import rebuild
from ssblab.archive.arrow import to_arrow
from ssblab.archive.bundle import build_archives
from ssblab.archive.pieces import Pieces, concat, gather
from ssblab.core.encoding import encode, latin1_hash
from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message
from ssblab.core.private_box import box
from ssblab.core.refs import blob_id

KEYPAIR = Keypair.generate(bytes(range(32)))
CONTENTS: list[Any] = [
    {"type": "post", "text": "h\u00e9llo \U0001f600 \u20ac", "n": 1e21, "f": -0.5},
    {"type": "git-update", "refs": {"refs/heads/main": "abc"}, "x": [1, 2, {"k": None}]},
    box({"type": "post", "text": "secret"}, [KEYPAIR.id], random_bytes=lambda n: bytes(n)),
    {"b": [[], {}, [[1]]], "type": "vote", "2": "int key", "1": True},
    {"type": "npm-packages", "mentions": [{"name": "a", "link": "&" + "A" * 43 + "=.sha256"}]},
    {"type": "x-\u00e9", "big": 2**60, "neg": -(2**40), "s": 'q\\"\n\t'},
    {"type": "contact", "contact": KEYPAIR.id, "following": True},
    {"type": "post", "text": "word " * 30, "root": "%" + "B" * 43 + "=.sha256"},
]
# Computed with the per-message encoder and decoder that preceded the bulk paths: the bytes must not move.
AWKWARD_DICTIONARIES = [
    "&OyQKuGg0/9bgWDkI0RItgHPg3YWd2J1EMXrGvce0o54=.sha256",
    "&Xaxh9pBa0GcMRgjZV6AP/pPaRXE/Lz2ldT4qiKBUwpo=.sha256",
    "&q/XSaiBv3K/FkOX3GDI22iOHGhmPCYmM2zjdXRxEyGo=.sha256",
    "&bAAnYQO2O0Dkw6bF7DirC8cr1gsCS11Aw+pmBUNhR4I=.sha256",
    "&6ABVBBs0CBjhIIY6plsHOdnqVUI8Keu8zudPpuoTXYA=.sha256",
    "&n2iG0XKu1Er5WaPWtiWDjtA9wkLQzOKigWUPclR91Vo=.sha256",
]
AWKWARD_BLOCKS = [
    "&vGH8BImU+jlTQUHLo6OplCpCpDWIidk1YttdqlOUDB8=.sha256",
    "&p/02jFVyHP4yGlJLl0mlulra32gNmMuPTYDb2u3keEg=.sha256",
    "&LFHR2qMrlDUIM8ASC8Qz6KPAnnbvioT4uErpslrAZpA=.sha256",
]


def awkward_feed() -> list[Message]:
    stamps: list[float] = [1_600_000_000_000 + i for i in range(len(CONTENTS))]
    stamps[3] = 1.5  # stored verbatim
    feed: list[Message] = []
    for content, stamp in zip(CONTENTS, stamps, strict=True):
        feed.append(create_message(KEYPAIR, content, previous=feed[-1] if feed else None, timestamp=stamp))
    return feed


def test_awkward_blobs_keep_their_ids() -> None:
    archives, _ = build_archives([awkward_feed()], 3)
    assert [blob_id(b) for b in archives[0].dictionaries] == AWKWARD_DICTIONARIES
    assert [blob_id(b) for a in archives for b in a.blocks] == AWKWARD_BLOCKS


def test_decoded_ids_and_encodings_match_the_messages() -> None:
    feed = awkward_feed()
    (archive,), dicts = build_archives([feed], 3)
    rebuilt, digests = [], []
    for data in archive.blocks:
        blk = blocks.decode_block(data, dicts)
        encodings, ids = rebuild.encodings(blk, dicts)
        assert rebuild.rebuild_block(blk, dicts, "block", keep=False) == ([], ids)
        rebuilt.extend(encodings)
        digests.extend(ids)
    assert rebuilt == [m.encoded for m in feed]
    assert [blocks.message_ref(d) for d in digests] == [m.id for m in feed]
    table = to_arrow(archive.blocks, dicts)
    assert table.column("id").to_pylist() == [m.id for m in feed]


def reordered(feed: list[Message], order: tuple[str, ...]) -> list[Message]:
    """The same messages with another envelope key order (ids follow; signatures no longer verify)."""
    out: list[Message] = []
    for msg in feed:
        value = {**msg.value, "previous": out[-1].id if out else None}
        out.append(Message.from_value({k: value[k] for k in order}))
    return out


def test_every_envelope_key_order_is_derived_and_rebuilt() -> None:
    base = [m for m in awkward_feed() if isinstance(m.value["timestamp"], int)]
    orders = [
        ("previous", "author", "sequence", "timestamp", "hash", "content", "signature"),
        ("content", "signature", "hash", "timestamp", "sequence", "author", "previous"),
    ]
    for order in orders:
        feed = reordered(base, order)
        feed = [Message.from_value({**m.value, "sequence": i + 1}) for i, m in enumerate(feed)]
        feed = reordered(feed, order)
        assert None not in blocks.plan(feed).orders.values
        (archive,), dicts = build_archives([feed], 4)
        rebuilt = [e for data in archive.blocks for e in rebuild.encodings(blocks.decode_block(data, dicts), dicts)[0]]
        assert rebuilt == [m.encoded for m in feed]


TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=80, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=6))
def test_binary_form_is_the_low_byte_of_each_utf16_unit(texts: list[str]) -> None:
    raw = [encode(t) for t in texts]  # JSON strings: what content texts are made of
    offsets = np.cumsum([0, *map(len, raw)]).astype(np.int64)
    data, mapped = rebuild.binary_form(b"".join(raw), offsets)
    expected = [r.decode().encode("utf-16-le")[0::2] for r in raw]
    assert data == b"".join(expected)
    assert mapped.tolist() == np.cumsum([0, *map(len, expected)]).tolist()
    assert [hashlib.sha256(data[a:b]).digest() for a, b in pairwise(mapped.tolist())] == [latin1_hash(r) for r in raw]


@given(st.lists(st.binary(max_size=5), min_size=1, max_size=8), st.data())
def test_gather_joins_the_pieces_it_is_given(items: list[bytes], data: st.DataObject) -> None:
    seq = data.draw(st.lists(st.integers(0, 2 * len(items) - 1), max_size=20))
    pieces = concat([Pieces.of(items), Pieces.of(items[::-1])])
    table = items + items[::-1]
    joined, ends = gather(pieces, np.array(seq, dtype=np.int64))
    assert joined == b"".join(table[i] for i in seq)
    assert ends.tolist() == np.cumsum([0, *(len(table[i]) for i in seq)]).tolist()
