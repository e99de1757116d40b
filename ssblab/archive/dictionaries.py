"""Dictionary chains: types, keys, paths and object signatures, stored as blobs linked by ``parent``.

Strategy (docs/archive-format.md §7): a chain is a list of entries; ids are positions in the whole chain, so a
child blob holds only the entries added after its parent and entry ids never change. `Dictionaries.extended`
appends new entries (in the order they were first met) as one new blob per chain that grew; any feed can be
coded against any chain head, which is how chains are shared across feeds. `Dictionaries.load` follows ``parent``
links from the heads of a Bundle, checking each blob's hash, kind and size, so a missing, swapped or truncated
dictionary is reported, not decoded into wrong messages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ssblab.archive import text
from ssblab.archive.errors import ArchiveMismatch, MalformedArchive, MissingDictionary
from ssblab.archive.flat import (
    KIND_NAMES,
    DictRef,
    DictSet,
    build_int_dictionary,
    build_string_dictionary,
    read_dictionary,
)
from ssblab.core.refs import b64

__all__ = [
    "KEYS", "PATHS", "SIGNATURES", "SKELETONS", "STRING_KINDS", "TOKENS", "TYPES", "Chain", "Dictionaries", "Fetch",
]

TYPES, KEYS, PATHS, SIGNATURES, SKELETONS, TOKENS = range(6)
STRING_KINDS = (TYPES, KEYS, SKELETONS, TOKENS)
Fetch = Callable[[bytes], bytes | None]  # 32-byte sha256 -> blob bytes, or None when not available


@dataclass(frozen=True)
class Chain:
    """One dictionary chain: all entries (oldest first) and the head that names them."""

    kind: int
    entries: tuple[Any, ...] = ()
    head: DictRef | None = None

    @cached_property
    def index(self) -> dict[Any, int]:
        """Each entry's id, made when first asked for: coders look entries up (never TOKEN ones), decoders do not."""
        return {e: i for i, e in enumerate(self.entries)}

    @cached_property
    def skeleton_table(self) -> text.SkeletonTable:
        """SKELETON entries split at their holes, laid out for `text.decode_column`."""
        return text.SkeletonTable.of(self.entries)

    @cached_property
    def shared(self) -> text.SharedTokens:
        """TOKEN entries as token texts, with the lookups coders and decoders use."""
        return text.SharedTokens(text.shared_tokens(self.entries))

    @cached_property
    def names(self) -> list[str]:
        """String entries as text (TYPE names for tables)."""
        return [e.decode("utf-8", "replace") for e in self.entries]

    def get(self, ident: int, where: str) -> Any:
        if not 0 <= ident < len(self.entries):
            raise MissingDictionary(
                f"{where}: {KIND_NAMES[self.kind]} id {ident} beyond a chain of {len(self.entries)}"
            )
        return self.entries[ident]


@dataclass(frozen=True)
class Dictionaries:
    """The six chains a set of blocks is coded with."""

    chains: tuple[Chain, ...] = tuple(Chain(kind) for kind in range(6))

    @cached_property
    def heads(self) -> DictSet:
        return DictSet(*(c.head for c in self.chains))

    def id_of(self, kind: int, entry: Any) -> int | None:
        return self.chains[kind].index.get(entry)

    def extended(self, new: Sequence[Sequence[Any]]) -> tuple[Dictionaries, list[bytes]]:
        """These chains with ``new[kind]`` appended, and the new dictionary blobs (one per chain that grew)."""
        chains, blobs = [], []
        for chain, added in zip(self.chains, new, strict=True):
            if not added:
                chains.append(chain)
                continue
            stored: list[Any] = [text.store_skeleton(e) for e in added] if chain.kind == SKELETONS else list(added)
            if chain.kind in STRING_KINDS:
                blob = build_string_dictionary(chain.kind, chain.head, stored)
            else:
                blob = build_int_dictionary(chain.kind, chain.head, stored)
            blobs.append(blob)
            entries = chain.entries + tuple(added)
            head = DictRef(chain.kind, hashlib.sha256(blob).digest(), len(entries))
            chains.append(Chain(chain.kind, entries, head))
        return Dictionaries(tuple(chains)), blobs

    @classmethod
    def load(cls, heads: DictSet, fetch: Fetch) -> Dictionaries:
        """The chains named by ``heads``, fetched blob by blob along ``parent`` links."""
        return cls(tuple(_load_chain(kind, ref, fetch) for kind, ref in enumerate(heads.by_kind())))


def _load_chain(kind: int, head: DictRef | None, fetch: Fetch) -> Chain:
    parts: list[list[Any]] = []
    ref = head
    while ref is not None:
        where = f"{KIND_NAMES[kind]} dictionary &{b64(ref.blob_id)}.sha256"
        data = fetch(ref.blob_id)
        if data is None:
            raise MissingDictionary(f"{where} is not available")
        if hashlib.sha256(data).digest() != ref.blob_id:
            raise ArchiveMismatch(f"{where}: the bytes fetched hash to another blob id")
        got_kind, parent, entries = read_dictionary(data, where)
        if kind == SKELETONS:
            entries = [text.load_skeleton(e) for e in entries]
        if got_kind != kind or ref.kind != kind:
            raise MalformedArchive(f"{where}: holds a {KIND_NAMES.get(got_kind, got_kind)} dictionary")
        base = 0 if parent is None else parent.size
        if base + len(entries) != ref.size or not entries:
            raise MalformedArchive(f"{where}: {base} + {len(entries)} entries, but its reference says {ref.size}")
        parts.append(entries)
        ref = parent
    entries_all = tuple(e for part in reversed(parts) for e in part)
    _check_references(kind, entries_all)
    return Chain(kind, entries_all, head)


def _check_references(kind: int, entries: tuple[Any, ...]) -> None:
    if len(set(entries)) != len(entries):
        raise MalformedArchive(f"{KIND_NAMES[kind]} dictionary repeats an entry")
    if kind == TOKENS and any(text.HOLE in tok for tok in text.shared_tokens(entries)):
        raise MalformedArchive("tokens dictionary: a token contains the 0x00 leaf end")
    if kind in STRING_KINDS:
        return
    for entry in entries:
        if not entry:
            raise MalformedArchive(f"{KIND_NAMES[kind]} dictionary has an empty entry")
