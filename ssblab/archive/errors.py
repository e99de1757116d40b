"""Archive errors: every bad blob, dictionary, Bundle or feed disagreement raises one of these, with a stable code.

The decoder never lets a low-level exception (IndexError, struct.error, ValueError from a truncated FlatBuffer)
escape: `MalformedArchive` wraps it and names the blob and the part being read.
"""

from __future__ import annotations

from ssblab.core.errors import SsbError

__all__ = [
    "ArchiveError", "ArchiveMismatch", "ArchiveOverflow", "MalformedArchive", "MissingBlob", "MissingDictionary",
    "NotArchivable",
]


class ArchiveError(SsbError):
    """Base of the archive errors."""

    code = "archive"


class MalformedArchive(ArchiveError):
    """Bytes that are not a canonical ssblab bipf2 blob (truncated, wrong identifier, bad column, not canonical)."""

    code = "archive-malformed"


class MissingDictionary(ArchiveError):
    """A block or dictionary names a dictionary blob that is not available (or an id beyond the chain)."""

    code = "archive-missing-dictionary"


class ArchiveMismatch(ArchiveError):
    """The archive disagrees with what it claims or with the feed: blob id, sketch, chain, signature, Bundle."""

    code = "archive-mismatch"


class NotArchivable(ArchiveError):
    """Messages that cannot form a block: not one feed, not consecutive, empty."""

    code = "archive-input"


class ArchiveOverflow(ArchiveError, ValueError):
    """A value beyond what its column can hold (StreamVByte, the dense code, a block's 2 GiB of texts). Also a
    ValueError, which is what these were before."""

    code = "archive-overflow"


class MissingBlob(ArchiveError):
    """A block blob named by a Bundle is not available."""

    code = "archive-missing-blob"
