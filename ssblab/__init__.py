"""ssblab: a Jupyter-centred data-analysis and interop kit for Secure Scuttlebutt.

The top level is the thin waist (`ssblab.core`), plus the entry points of the data tools, which load on first use:
``import ssblab`` loads nothing heavier than the core. `open_dataset` opens any SSB data as tables and analyses
on the local engine or on Spark; `verify` checks any source; `export_dataset` writes a Parquet dataset. The other
layers are subpackages imported by name: `ssblab.store`, `ssblab.net`, `ssblab.generate`, `ssblab.graph`, …
"""

from __future__ import annotations

from ssblab import core
from ssblab.core.lazy import lazy_names

__version__ = "0.1.0"

# The data tools' entry points: name -> the submodule that defines it (imported on first use).
_HOME = {
    **dict.fromkeys(core.__all__, "core"),  # the core's public names are the top-level API, listed once there
    **dict.fromkeys(["Dataset", "DatasetError", "open_dataset"], "dataset"),
    "export_dataset": "pipeline.export",
    "verify": "pipeline.verify",
}

__all__ = [*_HOME, "__version__"]

__getattr__, __dir__ = lazy_names(__name__, _HOME)
