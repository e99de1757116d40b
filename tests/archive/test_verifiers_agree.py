"""The two verifiers of an archive agree on every mutated archive (issue 19, item 10).

``ssblab verify ARCHIVE.json`` judges the messages (through the pipeline's reader) and ``ssblab archive verify``
judges the archive; both make `ssblab.archive.verify.check_stored` first, so an archive one rejects the other
rejects too: missing or damaged blobs of every kind, a Bundle that lies about an intact block, an archive.json
that is not JSON or not UTF-8. (A Bundle that starts inside a feed is no mutation: ``archive verify`` accepts
such a partial archive, and ``verify`` reports the feed's missing start, as for any source.) Every case runs in
one process over the same folder, restored in between, so a dictionary cached by an earlier run cannot hide a
damaged one. Neither verb may raise (a traceback on the CLI).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ssblab.archive.bundle import build_archives
from ssblab.archive.flat import BLOB_TYPES, blob_type, build_bundle, read_bundle
from ssblab.archive.folder import write_archives
from ssblab.cli import main
from ssblab.core.message import Message

Mutation = Callable[[Path], None]


@pytest.fixture(scope="module")
def base(feeds: list[list[Message]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    (archive,), _ = build_archives([feeds[0][:150]], 40)
    folder = tmp_path_factory.mktemp("archive-base")
    write_archives([archive], folder)
    return folder


def _blobs(folder: Path) -> list[Path]:
    return sorted((folder / "blobs" / "sha256").glob("??/*"))


def _kind(path: Path) -> str:
    return BLOB_TYPES[blob_type(path.read_bytes(), path.name)]


def _on_blobs(kind: str, change: Callable[[Path, list[Path]], object]) -> Mutation:
    def mutate(folder: Path) -> None:
        for path in _blobs(folder):
            if _kind(path) == kind:
                change(path, _blobs(folder))
                return
        raise AssertionError(f"no {kind} blob")
    return mutate


BLOB_CHANGES: dict[str, Callable[[Path, list[Path]], object]] = {
    "deleted": lambda path, _: path.unlink(),
    "one bit flipped": lambda path, _: path.write_bytes(bytes([path.read_bytes()[0] ^ 1]) + path.read_bytes()[1:]),
    "truncated": lambda path, _: path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2]),
    "emptied": lambda path, _: path.write_bytes(b""),
    "swapped": lambda path, others: path.write_bytes(next(o for o in others if o != path).read_bytes()),
}


Fields = dict[str, Any]


def _on_bundle(change: Callable[[Fields], Fields]) -> Mutation:
    """Rewrite archive.json with a Bundle whose fields ``change`` alters (a Bundle that lies)."""
    def mutate(folder: Path) -> None:
        content = json.loads((folder / "archive.json").read_text())
        bundle = read_bundle(base64.b64decode(content["bundle"]))
        fields = change({"author": bundle.author, "blocks": list(bundle.blocks), "dictionaries": bundle.dictionaries})
        fields["blocks"] = tuple(fields["blocks"])
        content["bundle"] = base64.b64encode(build_bundle(dataclasses.replace(bundle, **fields))).decode()
        (folder / "archive.json").write_text(json.dumps(content))
    return mutate


def _block(i: int, **changes: Any) -> Callable[[Fields], Fields]:
    def change(fields: Fields) -> Fields:
        blocks = list(fields["blocks"])
        blocks[i] = dataclasses.replace(blocks[i], **changes)
        return {**fields, "blocks": blocks}
    return change


def _dictionary_head(kind: str, blob_id: bytes) -> Callable[[Fields], Fields]:
    def change(fields: Fields) -> Fields:
        heads = fields["dictionaries"]
        head = dataclasses.replace(getattr(heads, kind), blob_id=blob_id)
        return {**fields, "dictionaries": dataclasses.replace(heads, **{kind: head})}
    return change


def _text(change: Callable[[bytes], bytes]) -> Mutation:
    def mutate(folder: Path) -> None:
        path = folder / "archive.json"
        path.write_bytes(change(path.read_bytes()))
    return mutate


def _flip_base64(seed: int) -> Mutation:
    def change(data: bytes) -> bytes:
        at = random.Random(seed).randrange(60, len(data) - 3)
        return data[:at] + (b"A" if data[at:at + 1] != b"A" else b"B") + data[at + 1:]
    return _text(change)


def _without(blocks: list[Any], i: int) -> list[Any]:
    return blocks[:i] + blocks[i + 1:]


def _sketch(i: int, **changes: int) -> Callable[[Fields], Fields]:
    def change(fields: Fields) -> Fields:
        blocks = list(fields["blocks"])
        blocks[i] = dataclasses.replace(blocks[i], sketch=dataclasses.replace(blocks[i].sketch, **changes))
        return {**fields, "blocks": blocks}
    return change


MUTATIONS: dict[str, Mutation] = {
    **{f"{kind} {name}": _on_blobs(kind, change) for kind in ("MessageBlock", "StringDictionary",
                                                               "IntArrayDictionary") for name, change in
       BLOB_CHANGES.items()},
    "bundle: a block's last message hash": _on_bundle(_block(1, last_message_hash=bytes(32))),
    "bundle: a block's previous blob": _on_bundle(_block(2, previous_blob_id=bytes(32))),
    "bundle: a block's timestamps": _on_bundle(_sketch(0, last_timestamp=1)),
    "bundle: a middle block dropped": _on_bundle(lambda f: {**f, "blocks": _without(list(f["blocks"]), 1)}),
    "bundle: another author": _on_bundle(lambda f: {**f, "author": bytes(32)}),
    "bundle: a dictionary head that does not exist": _on_bundle(_dictionary_head("paths", bytes(32))),
    "archive.json: not JSON": _text(lambda data: data[: len(data) // 2]),
    "archive.json: not UTF-8": _text(lambda data: b"\xff\xfe" + data),
    **{f"archive.json: base64 changed ({seed})": _flip_base64(seed) for seed in range(6)},
}


def test_both_verifiers_accept_the_intact_archive(base: Path) -> None:
    assert main(["verify", str(base / "archive.json")]) == 0
    assert main(["archive", "verify", str(base / "archive.json")]) == 0


def test_both_verifiers_reject_every_mutation(base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "archive"
    verdicts = {}
    for name, mutate in MUTATIONS.items():
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(base, folder)
        mutate(folder)
        whole = main(["verify", str(folder / "archive.json")])
        archive = main(["archive", "verify", str(folder / "archive.json")])
        errors = capsys.readouterr().err
        verdicts[name] = (whole, archive)
        assert archive == 2 and ("error [archive" in errors or "[blob-damaged]" in errors), (name, errors)
    assert {name: v for name, v in verdicts.items() if 0 in v} == {}


@pytest.mark.parametrize(("text", "says"), [(b'{"type": "archive", "bundle": "FAA', "not JSON (Unterminated string"),
                                            (b'\xff\xfe{"type": "archive"}', "not UTF-8 (byte 0)")])
@pytest.mark.parametrize("verb", ["verify", "inspect", "decode"])
def test_an_archive_json_that_is_not_json_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          text: bytes, says: str, verb: str) -> None:
    (tmp_path / "archive.json").write_bytes(text)
    extra = ["--format", "jsonl", "--out", str(tmp_path / "o.jsonl")] if verb == "decode" else []
    assert main(["archive", verb, str(tmp_path / "archive.json"), *extra]) == 2
    assert f"[archive-malformed]: {tmp_path / 'archive.json'}: {says}" in capsys.readouterr().err
