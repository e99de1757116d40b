"""ssb-archive (ssb-bipf2): blocks of one feed's messages as deterministic, column-oriented FlatBuffers blobs.

The format is specified in docs/archive-format.md. Layers: `svb`, `dense` and `text` code columns; `flat` reads
and writes the FlatBuffers (generated code in `fb`); `dictionaries` chains the shared dictionaries; `block`
encodes and decodes one MessageBlock; `bundle` archives whole feeds; `verify` checks an announced archive both
ways; `rebuild` and `pieces` rebuild whole columns of a block at once, and `arrow` decodes into the pipeline's
``messages`` table (numpy, flatbuffers and pyarrow, loaded with the module that needs them). These are pure: no
clock, no randomness, no I/O. `folder` reads and writes archives on disk
(``archive*.json`` and a blob folder) and `sizes` measures a dataset in each format.

`_speedups` (built by setup.py from ssblab/archive/_c when a C compiler is there) holds the hot loops of both
directions; each module that uses it keeps its pure-Python route, which gives the same bytes and rows.
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

__all__ = [
    "ARCHIVE_TYPE",
    "FORMAT",
    "MAX_BUNDLE_BLOCKS",
    "Archive",
    "ArchiveError",
    "ArchiveFolder",
    "ArchiveMismatch",
    "ArchiveOverflow",
    "Dictionaries",
    "MalformedArchive",
    "MissingBlob",
    "MissingDictionary",
    "NotArchivable",
    "Verified",
    "archive_content",
    "build_archives",
    "bundle_of",
    "check_stored",
    "open_archive",
    "read_content",
    "select_blocks",
    "verify_by_rebuild",
    "verify_fetched",
    "write_archives",
]

# Where each public name lives: importing the package loads none of its modules (numpy, pyarrow and flatbuffers
# come with the ``archive`` extra), a name's module loads on first use.
_HOME = {
    "ARCHIVE_TYPE": "bundle",
    "FORMAT": "bundle",
    "MAX_BUNDLE_BLOCKS": "bundle",
    "Archive": "bundle",
    "archive_content": "bundle",
    "build_archives": "bundle",
    "bundle_of": "bundle",
    "select_blocks": "bundle",
    "Dictionaries": "dictionaries",
    "ArchiveError": "errors",
    "ArchiveMismatch": "errors",
    "ArchiveOverflow": "errors",
    "MalformedArchive": "errors",
    "MissingBlob": "errors",
    "MissingDictionary": "errors",
    "NotArchivable": "errors",
    "ArchiveFolder": "folder",
    "open_archive": "folder",
    "read_content": "folder",
    "write_archives": "folder",
    "Verified": "verify",
    "check_stored": "verify",
    "verify_by_rebuild": "verify",
    "verify_fetched": "verify",
}

__getattr__, __dir__ = lazy_names(__name__, _HOME)
