"""archive.json files from outside (issue 19): any bytes either open as an archive or raise an `ArchiveError`,
through `read_content`, `bundle_of` and `open_archive` alike."""

from __future__ import annotations

import base64
import contextlib
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssblab.archive.bundle import archive_content, build_archives, bundle_of
from ssblab.archive.errors import ArchiveError
from ssblab.archive.folder import open_archive, read_content
from ssblab.core.errors import SsbError
from ssblab.core.message import Message

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def content(feeds: list[list[Message]]) -> dict[str, object]:
    (archive,), _ = build_archives([feeds[0][:60]], 30)
    return archive_content(archive.bundle_blob)


def _mutated(content: dict[str, object], seed: int) -> bytes:
    rng = random.Random(seed)
    text = bytearray(json.dumps(content).encode())
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text))
        choice = rng.randrange(3)
        if choice == 0:
            text[at] = rng.randrange(256)
        elif choice == 1:
            del text[at:at + rng.randint(1, 30)]
        else:
            blob = bytearray(base64.b64decode(str(content["bundle"])))
            blob[rng.randrange(len(blob))] ^= 1 << rng.randrange(8)
            text = bytearray(json.dumps({**content, "bundle": base64.b64encode(bytes(blob)).decode()}).encode())
    return bytes(text)


def _judge(path: Path) -> None:
    with contextlib.suppress(ArchiveError):
        bundle_of(read_content(path))
    with contextlib.suppress(SsbError):  # ArchiveError, or a blob the (empty) folder lacks
        open_archive(path)


@SETTINGS
@given(st.integers(0, 2**32))
def test_fuzz_archive_json_mutations(tmp_path_factory: pytest.TempPathFactory, content: dict[str, object],
                                     seed: int) -> None:
    path = tmp_path_factory.mktemp("a") / "archive.json"
    path.write_bytes(_mutated(content, seed))
    _judge(path)


@SETTINGS
@given(st.binary(max_size=300) | st.dictionaries(st.sampled_from(["type", "format", "bundle", "x"]),
                                                 st.none() | st.text(max_size=20) | st.integers()).map(
    lambda d: json.dumps(d).encode()))
def test_fuzz_archive_json_random(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("a") / "archive.json"
    path.write_bytes(data)
    _judge(path)
