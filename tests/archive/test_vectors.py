"""Pinned output: a fixed input must keep giving the same blob ids, across flatbuffers and numpy versions.

Verifiers compare rebuilt blob ids with the owner's, so any change in the bytes (a new runtime that lays out
FlatBuffers differently, a change of ranking or of the tokenizer) must be deliberate: it needs a new format version.
The input is `generate_network`'s seeded output, which is itself byte-identical across platforms.
"""

from __future__ import annotations

from collections import defaultdict

from ssblab.archive.bundle import build_archives
from ssblab.core.message import Message
from ssblab.core.refs import blob_id
from ssblab.generate import generate_network

BUNDLES = [
    "&D4LSmMpRZFGYTcF8iLB7YsY2XolmUKCYdF7pLNZ55NE=.sha256",
    "&uMoSOlDNjxLSPFV9P7ttML4hU+6qJqoZoITQOpo4VLY=.sha256",
]
FIRST_BLOCKS = [
    "&Dk7Fc3D4Jge4S3Cfeu3LBzEr7iMR2KhqwV2JqjTDrZk=.sha256",
    "&UJS5ll+69dU2iiBzBQn/x/dh2duv/oH49focG0hu9nM=.sha256",
]
DICTIONARIES = [
    "&QtZIY4ioPxvDbg2BoRbpOm9mbkN9IZAc2V1vCW+GhOE=.sha256",
    "&Xaxh9pBa0GcMRgjZV6AP/pPaRXE/Lz2ldT4qiKBUwpo=.sha256",
    "&q/XSaiBv3K/FkOX3GDI22iOHGhmPCYmM2zjdXRxEyGo=.sha256",
    "&bAAnYQO2O0Dkw6bF7DirC8cr1gsCS11Aw+pmBUNhR4I=.sha256",
    "&8cde7jqFPQZy9NtbCeMRIup/p4KYnWfq7bk7ioOFfpc=.sha256",
    "&D/oL6Q43FIY27THH1XkYpGqruRdb93gYPenktrsIXwY=.sha256",
]


def test_pinned_blob_ids() -> None:
    feeds: dict[str, list[Message]] = defaultdict(list)
    for msg in generate_network(authors=2, messages=60, seed=3):
        feeds[msg.author].append(msg)
    archives, _ = build_archives(list(feeds.values()), 16)
    assert [blob_id(b) for b in archives[0].dictionaries] == DICTIONARIES
    assert [blob_id(a.blocks[0]) for a in archives] == FIRST_BLOCKS
    assert [blob_id(a.bundle_blob) for a in archives] == BUNDLES
