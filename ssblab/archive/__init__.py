"""ssb-archive (ssb-bipf2): blocks of one feed's messages as deterministic, column-oriented FlatBuffers blobs.

The format is specified in docs/archive-format.md. Layers: `svb`, `dense` and `text` code columns; `flat` reads
and writes the FlatBuffers (generated code in `fb`); `dictionaries` chains the shared dictionaries; `block`
encodes and decodes one MessageBlock; `bundle` archives whole feeds; `verify` checks an announced archive both
ways; `rebuild` and `pieces` rebuild whole columns of a block at once, and `arrow` decodes into the pipeline's
``messages`` table. They need the ``archive`` extra (numpy, flatbuffers, pyarrow). These are pure: no clock, no
randomness, no I/O. `folder` reads and writes archives on disk
(``archive*.json`` and a blob folder) and `sizes` measures a dataset in each format.

`_speedups` (ssblab/archive/_speedups.c, built by setup.py when a C compiler is there) holds the hot loops of
both directions; each module that uses it keeps its pure-Python route, which gives the same bytes and rows.
"""

from ssblab.archive.bundle import (
    ARCHIVE_TYPE,
    FORMAT,
    MAX_BUNDLE_BLOCKS,
    Archive,
    archive_content,
    build_archives,
    bundle_of,
    select_blocks,
)
from ssblab.archive.dictionaries import Dictionaries
from ssblab.archive.errors import (
    ArchiveError,
    ArchiveMismatch,
    MalformedArchive,
    MissingBlob,
    MissingDictionary,
    NotArchivable,
)
from ssblab.archive.folder import ArchiveFolder, open_archive, read_content, write_archives
from ssblab.archive.verify import Verified, check_stored, verify_by_rebuild, verify_fetched

__all__ = [
    "ARCHIVE_TYPE",
    "FORMAT",
    "MAX_BUNDLE_BLOCKS",
    "Archive",
    "ArchiveError",
    "ArchiveFolder",
    "ArchiveMismatch",
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
