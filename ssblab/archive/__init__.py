"""ssb-archive (ssb-bipf2): blocks of one feed's messages as deterministic, column-oriented FlatBuffers blobs.

The format is specified in docs/archive-format.md. Layers: `svb`, `dense` and `text` code columns; `flat` reads
and writes the FlatBuffers (generated code in `fb`); `dictionaries` chains the shared dictionaries; `block`
encodes and decodes one MessageBlock; `bundle` archives whole feeds; `verify` checks an announced archive both
ways; `arrow` decodes into the pipeline's ``messages`` table (this module needs pyarrow, the others numpy and
flatbuffers). Everything here is pure: no clock, no randomness, no I/O.
"""

from ssblab.archive.bundle import (
    ARCHIVE_TYPE,
    FORMAT,
    Archive,
    archive_content,
    build_archives,
    bundle_of,
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
from ssblab.archive.verify import Verified, verify_by_rebuild, verify_fetched

__all__ = [
    "ARCHIVE_TYPE",
    "FORMAT",
    "Archive",
    "ArchiveError",
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
    "verify_by_rebuild",
    "verify_fetched",
]
