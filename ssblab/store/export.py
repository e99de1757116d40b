"""Writing a store's messages out as JSONL, refusing damaged rows and outputs that would overwrite the store.

Decision (issue 19, item 9): every row is checked before it is written: its value must parse as a message whose
id, author and sequence are the row's own. A row that fails (a value edited on disk, bytes that are no longer
JSON) stops the export with a `TamperedRow` that names the row, and nothing is written: the lines go to a
temporary file next to the output, renamed into place only once every row passed. This check needs no key and
costs a parse per row; the signatures are `ssblab verify`'s job (a forger who rewrites a row's id too is caught
there, by the signature).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import BinaryIO

import orjson

from ssblab.core.errors import InvalidMessage, SsbError
from ssblab.core.message import Message
from ssblab.store.guard import check_output
from ssblab.store.store import Store

__all__ = ["TamperedRow", "checked_message", "export_jsonl"]


class TamperedRow(SsbError):
    """A store row whose value is not the message its columns say (edited or damaged on disk)."""

    code = "store-tampered"


def checked_message(store: Store, row: tuple[int, str, str, int, bytes, float]) -> Message:
    """The message of one `Store.rows` row, when its value is the message the row's columns name.

    Raises:
        TamperedRow: naming the row (its local sequence) and what disagrees.
    """
    seq, msg_id, author, sequence, value, _ = row
    where = f"{store.path} row {seq} ({author} sequence {sequence})"
    try:
        msg = Message.from_json(value)
    except InvalidMessage as exc:
        raise TamperedRow(f"{where}: the stored value is not a message: {exc}") from None
    if (msg.id, msg.author, msg.sequence) != (msg_id, author, sequence):
        raise TamperedRow(f"{where}: the stored value is message {msg.id} of {msg.author} sequence "
                          f"{msg.sequence}, not the row's {msg_id}")
    return msg


def export_jsonl(store: Store, path: str | Path, *, records: bool = False) -> int:
    """Write the store's messages in log order: one value per line, or ``{key, value, timestamp}`` records.

    Returns:
        The number of messages written.

    Raises:
        OutputError: ``path`` is inside the store folder (`guard.check_output`).
        TamperedRow: a row failed its check (module docstring); ``path`` is left as it was.
    """
    path = Path(path)
    check_output(path, store.path)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "xb") as out:  # the usual permissions, unlike mkstemp's 0600
            count = _write_rows(store, out, records)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


def _write_rows(store: Store, out: BinaryIO, records: bool) -> int:
    write = out.write
    count = 0
    for row in store.rows():
        msg = checked_message(store, row)
        if records:
            write(orjson.dumps({"key": msg.id, "value": msg.value, "timestamp": row[5]}) + b"\n")
        else:
            write(row[4] + b"\n")
        count += 1
    return count
