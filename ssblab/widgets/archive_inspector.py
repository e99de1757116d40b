"""The archive inspector: pick a Bundle and a block, see its sketch, where its bytes go, the dictionaries, a few
decoded messages, and whether it verifies.

Strategy: a plain model (`ArchiveInspector`: which Bundle, which block) over an archive on disk
(`ssblab.archive.folder.open_archive`), whose methods return plain data (dicts, lists of rows, a Vega-Lite chart)
computed by the archive's own functions: `block.decode_block` and the Arrow decoder for messages,
`verify.verify_fetched` for the verdict. Column sizes are read from the block's FlatBuffer tables and its content
FlexBuffer (docs/archive-format.md §5 and §6), so they add up to the blob's size with the FlatBuffers framing as
the rest. The ipywidgets view (`archive_inspector_view`) only forwards choices and re-renders.

Invariants: the selection always names an existing Bundle and block (choosing another Bundle returns to its first
block); nothing is cached across selections except the loaded dictionaries, which blobs never change.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import flatbuffers.flexbuffers as flex

from ssblab.archive import block as blocks
from ssblab.archive.dictionaries import Dictionaries
from ssblab.archive.errors import ArchiveError
from ssblab.archive.fb import ssblab_archive_generated as fb
from ssblab.archive.flat import KIND_NAMES, BlockRef, Bundle, open_blob, read_dictionary
from ssblab.archive.folder import ArchiveFolder, blob_ref, open_archive
from ssblab.archive.verify import verify_fetched
from ssblab.core.errors import SsbError
from ssblab.core.refs import b64
from ssblab.widgets.common import WidgetError
from ssblab.widgets.snapshot import short_id

__all__ = ["ArchiveInspector", "Verdict", "archive_inspector_view"]


CSS_CLASS = "ssblab-archive-inspector"
# The content FlexBuffer's ten parts (docs/archive-format.md §6), named for the size chart.
CONTENT_PARTS = ("content: entry kinds", "content: shared ids", "content: shared ids", "content: entry lengths",
                 "content: entry lengths", "content: payloads", "content: dense code s", "content: token ranks",
                 "content: skeleton ids", "content: skeleton ids")
FRAMING = "FlatBuffers framing, sketch, dictionary heads"


@dataclass(frozen=True)
class Verdict:
    """The outcome of verifying the selected Bundle by fetching its blobs."""

    ok: bool
    text: str


def _time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _svb_bytes(column: Any) -> int:
    return 0 if column is None else column.CodesLength() + column.ValuesLength()


def _rle_bytes(column: Any) -> int:
    return 0 if column is None else _svb_bytes(column.Values()) + _svb_bytes(column.Lengths())


class ArchiveInspector:
    """Which Bundle and which block of an archive; what that block holds.

    Examples:
        >>> inspector = ArchiveInspector.from_path("out/")  # doctest: +SKIP
        >>> inspector.sketch()["messages"], inspector.verify().ok  # doctest: +SKIP
        (64, True)
    """

    def __init__(self, archive: ArchiveFolder, *, hmac_key: bytes | None = None) -> None:
        self.archive = archive
        self.hmac_key = hmac_key
        self.bundle_index = 0
        self.block_index = 0
        self._dictionaries: dict[Any, Dictionaries] = {}

    @classmethod
    def from_path(cls, path: str | Path, *, hmac_key: bytes | None = None) -> ArchiveInspector:
        return cls(open_archive(path), hmac_key=hmac_key)

    # --- selection -------------------------------------------------------------------------------------------

    @property
    def bundle(self) -> Bundle:
        return self.archive.bundles[self.bundle_index]

    @property
    def ref(self) -> BlockRef:
        return self.bundle.blocks[self.block_index]

    def bundle_options(self) -> list[tuple[str, int]]:
        """(label, index) of each Bundle: its feed and the sequences it covers."""
        out = []
        for i, bundle in enumerate(self.archive.bundles):
            first, last = bundle.blocks[0].sketch, bundle.blocks[-1].sketch
            span = f"{first.sequence_base}..{last.sequence_base + last.length - 1}"
            out.append((f"{short_id(f'@{b64(bundle.author)}.ed25519')} · sequences {span} · "
                        f"{len(bundle.blocks)} blocks", i))
        return out

    def block_options(self) -> list[tuple[str, int]]:
        return [(f"block {i}: sequences {r.sketch.sequence_base}..{r.sketch.sequence_base + r.sketch.length - 1}", i)
                for i, r in enumerate(self.bundle.blocks)]

    def select_bundle(self, index: int) -> None:
        if not 0 <= index < len(self.archive.bundles):
            raise WidgetError(f"archive inspector: no Bundle {index} (the archive has {len(self.archive.bundles)})")
        self.bundle_index, self.block_index = index, 0

    def select_block(self, index: int) -> None:
        if not 0 <= index < len(self.bundle.blocks):
            raise WidgetError(f"archive inspector: no block {index} (the Bundle has {len(self.bundle.blocks)})")
        self.block_index = index

    # --- what the block holds --------------------------------------------------------------------------------

    def data(self) -> bytes:
        return self.archive.block(self.ref)

    def dicts(self) -> Dictionaries:
        heads = self.bundle.dictionaries
        if heads not in self._dictionaries:
            self._dictionaries[heads] = self.archive.dictionaries(self.bundle)
        return self._dictionaries[heads]

    def sketch(self) -> dict[str, Any]:
        """Author, sequences, timestamps and hashes of the selected block (from the block itself)."""
        blk = blocks.decode_block(self.data(), self.dicts(), f"block {blob_ref(self.ref.blob_id)}")
        s = blk.sketch
        return {
            "author": f"@{b64(blk.author)}.ed25519", "blob": blob_ref(self.ref.blob_id), "bytes": len(self.data()),
            "messages": s.length, "sequences": (s.sequence_base, s.sequence_base + s.length - 1),
            "timestamps": (_time(s.first_timestamp), _time(s.last_timestamp)),
            "previous message": None if blk.previous is None else blocks.message_ref(blk.previous),
            "last message": blocks.message_ref(blk.last_hash),
            "previous block": None if self.ref.previous_blob_id is None else blob_ref(self.ref.previous_blob_id),
        }  # fmt: skip

    def column_sizes(self) -> list[dict[str, Any]]:
        """``[{"column", "bytes"}]``: which parts of the block take its bytes (they add up to the blob's size)."""
        data = self.data()
        table = open_blob(data, fb.Bip2BlobData.MessageBlock, "block")
        classic = fb.ClassicMessageBlock()
        classic.Init(table.Data().Bytes, table.Data().Pos)
        sizes: dict[str, int] = {
            "timestamp deltas": _svb_bytes(table.TimestampDeltas()),
            "types": _rle_bytes(table.Types()),
            "object signatures": _rle_bytes(classic.ObjectSignatures()),
            "ed25519 signatures": classic.CryptoSignaturesLength(),
        }
        content = flex.GetRoot(bytes(classic.MessagesAsNumpy())).AsVector
        for name, part in zip(CONTENT_PARTS, content, strict=True):
            sizes[name] = sizes.get(name, 0) + len(part.AsBlob)
        sizes[FRAMING] = len(data) - sum(sizes.values())
        return [{"column": name, "bytes": size} for name, size in sizes.items()]

    def size_chart(self) -> dict[str, Any]:
        """The column sizes as a bar chart (`ssblab.viz.charts.size_comparison`'s look)."""
        import pandas as pd

        from ssblab.viz.charts import size_comparison

        frame = pd.DataFrame([{"format": r["column"], "bytes": r["bytes"]} for r in self.column_sizes()])
        return size_comparison(frame, title=f"Where the {len(self.data()):,} bytes of block {self.block_index} go")

    def dictionary_rows(self) -> list[dict[str, Any]]:
        """Per dictionary chain named by the Bundle: entries, blobs in the chain, bytes, head blob id."""
        rows = []
        for kind, head in enumerate(self.bundle.dictionaries.by_kind()):
            links, size, ref = 0, 0, head
            while ref is not None:
                data = self.archive.fetch(ref.blob_id)
                if data is None:
                    break
                links, size, ref = links + 1, size + len(data), read_dictionary(data, KIND_NAMES[kind])[1]
            rows.append({"dictionary": KIND_NAMES[kind], "entries": 0 if head is None else head.size,
                         "blobs": links, "bytes": size, "head": None if head is None else blob_ref(head.blob_id)})
        return rows

    def decode(self, limit: int = 5) -> list[dict[str, Any]]:
        """The first ``limit`` messages of the block as rows of the pipeline's ``messages`` table (unverified)."""
        from ssblab.archive.arrow import block_table

        blk = blocks.decode_block(self.data(), self.dicts(), f"block {blob_ref(self.ref.blob_id)}")
        return block_table(blk, self.dicts()).slice(0, max(0, limit)).to_pylist()  # type: ignore[no-any-return]

    def verify(self) -> Verdict:
        """Verify the selected Bundle by fetching its blobs (hashes, sketches, chain, every signature)."""
        try:
            result = verify_fetched(self.bundle, self.archive.fetch, hmac_key=self.hmac_key)
        except (ArchiveError, SsbError) as exc:
            return Verdict(False, f"{type(exc).__name__}: {exc}")
        return Verdict(True, f"ok: {result.messages} messages of {short_id(result.feed)} in {result.blocks} "
                             f"blocks, sequences {result.first_sequence}..{result.last_sequence}")

    # --- HTML ------------------------------------------------------------------------------------------------

    def sketch_html(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td><code>{html.escape(str(v))}"
                       "</code></td></tr>" for k, v in self.sketch().items())
        return f"<table>{rows}</table>"

    def dictionaries_html(self) -> str:
        return _table(self.dictionary_rows(), ["dictionary", "entries", "blobs", "bytes", "head"])

    def messages_html(self, limit: int = 5) -> str:
        rows = [{"sequence": r["sequence"], "type": r["type"], "id": short_id(r["id"]),
                 "content": (r["content"] or "")[:160]} for r in self.decode(limit)]
        return _table(rows, ["sequence", "type", "id", "content"])

    def widget(self) -> Any:
        return archive_inspector_view(self)


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def archive_inspector_view(model: ArchiveInspector) -> Any:
    """Bundle and block pickers, the sketch, the size chart, the dictionaries, decoded messages, a verify button."""
    import ipywidgets as w

    from ssblab.widgets.common import chart_svg

    bundles = w.Dropdown(options=model.bundle_options(), value=model.bundle_index, description="bundle")
    picker = w.Dropdown(options=model.block_options(), value=model.block_index, description="block")
    count = w.IntSlider(value=5, min=1, max=50, description="messages")
    sketch, chart, dicts, messages, verdict = w.HTML(), w.HTML(), w.HTML(), w.HTML(), w.HTML()
    check = w.Button(description="verify the Bundle")

    def render(*_: Any) -> None:
        sketch.value, chart.value = model.sketch_html(), chart_svg(model.size_chart())
        dicts.value, messages.value = model.dictionaries_html(), model.messages_html(count.value)

    def on_bundle(change: dict[str, Any]) -> None:
        model.select_bundle(change["new"])
        picker.options, picker.value, verdict.value = model.block_options(), 0, ""
        render()

    def on_block(change: dict[str, Any]) -> None:
        model.select_block(change["new"])
        render()

    bundles.observe(on_bundle, names="value")
    picker.observe(on_block, names="value")
    count.observe(lambda _: setattr(messages, "value", model.messages_html(count.value)), names="value")
    check.on_click(lambda _: setattr(verdict, "value", html.escape(model.verify().text)))
    render()
    box = w.VBox([w.HBox([bundles, picker]), sketch, chart, dicts, count, messages, w.HBox([check, verdict])])
    box.add_class(CSS_CLASS)
    return box
