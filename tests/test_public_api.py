"""The public names exist, and `import ssblab` stays light (no Spark, asyncio, numpy or widgets)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import ssblab

PACKAGES = [
    "ssblab", "ssblab.core", "ssblab.store", "ssblab.net", "ssblab.net.ebt", "ssblab.generate", "ssblab.friends",
    "ssblab.certs", "ssblab.reconcile", "ssblab.sim", "ssblab.pipeline", "ssblab.viz", "ssblab.archive",
    "ssblab.replicate", "ssblab.graph", "ssblab.tangles", "ssblab.widgets", "ssblab.report", "ssblab.datasets",
]


def test_every_public_name_exists() -> None:
    for module in map(importlib.import_module, PACKAGES):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, f"{module.__name__}.__all__ names missing attributes: {missing}"


def test_core_api_named_by_the_issue() -> None:
    for name in ("parse_json", "signing_encoding", "message_id", "verify_message", "validate_feed", "Keypair",
                 "create_message", "box", "unbox", "InvalidMessage", "InvalidJson", "SsbError"):
        assert name in ssblab.__all__


def test_import_is_minimal() -> None:
    probe = ("import sys, ssblab, ssblab.store; heavy = {'pyspark', 'asyncio', 'numpy', 'pandas', 'ipywidgets',"
             " 'altair'} & set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
