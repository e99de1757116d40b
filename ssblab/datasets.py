"""The embedded default dataset (``datasets/default.json``) as a network, a JSONL file, a store and a Parquet dataset.

Notebooks, the demo and examples all start from the same data, so it is built once and cached: every derived form
lives under ``$SSBLAB_DATA_CACHE`` (default ``~/.cache/ssblab/datasets``) in a folder named after a fingerprint of
the parameters and of the code that produces it (the generator, the core, the store and the pipeline). Changing
any of them yields a new folder, never a stale dataset. Each form is written into a temporary sibling and renamed
into place, so an interrupted build leaves nothing that looks complete.

The parameters are looked up in the repository's ``datasets/`` folder (a source checkout or an editable install)
and then in ``<prefix>/share/ssblab/datasets`` (where a wheel installs them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.errors import SsbError
from ssblab.pipeline.cache import cache_dir, code_digest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ssblab.generate import GeneratedNetwork, NetworkSpec

__all__ = [
    "DatasetNotFound",
    "cache_dir",
    "default_jsonl",
    "default_network",
    "default_parquet",
    "default_spec",
    "default_store",
    "network_spec",
    "read_spec",
    "spec_path",
]

PACKAGE = Path(__file__).resolve().parent
# The code whose output a cached form depends on: a change to any of it invalidates the cache.
PRODUCERS = ("generate", "core", "store", "pipeline")


class DatasetNotFound(SsbError, FileNotFoundError):
    code = "dataset"


def spec_path(name: str = "default") -> Path:
    """Where the parameters of dataset ``name`` are (``DatasetNotFound`` when nowhere)."""
    candidates = [PACKAGE.parent / "datasets" / f"{name}.json",
                  Path(sys.prefix) / "share" / "ssblab" / "datasets" / f"{name}.json"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise DatasetNotFound(f"dataset {name!r}: no {name}.json in " + " or ".join(str(c.parent) for c in candidates))


def default_spec(name: str = "default") -> dict[str, Any]:
    """The parameters: ``name``, ``authors``, ``messages``, ``seed`` and generator ``options``."""
    return json.loads(spec_path(name).read_text())


def read_spec(path: str | Path) -> dict[str, Any]:
    """Dataset parameters from a JSON file (``generate --spec``), checked to be an object with an object of
    ``options``; `network_spec` checks the rest.

    Raises:
        InvalidSpec: the file is not UTF-8 JSON, or not shaped like ``datasets/default.json``.
    """
    from ssblab.generate import InvalidSpec

    try:
        parameters = json.loads(Path(path).read_bytes())
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        raise InvalidSpec(f"{path}: not a JSON dataset spec ({exc})") from None
    if not isinstance(parameters, dict) or not isinstance(parameters.get("options", {}), dict):
        raise InvalidSpec(f"{path}: a dataset spec is a JSON object like datasets/default.json, with 'options' an "
                          "object")
    return parameters


def network_spec(parameters: dict[str, Any]) -> NetworkSpec:
    """The generator's spec from a dataset's parameters (``authors``, ``messages``, ``seed``, ``options``).

    Raises:
        InvalidSpec: a parameter is missing, unknown, or of the wrong type or range.
    """
    from dataclasses import fields

    from ssblab.generate import InvalidSpec, NetworkSpec

    options = parameters.get("options", {})
    known = {f.name for f in fields(NetworkSpec)}
    unknown = sorted(set(options) - known) + [k for k in ("authors", "messages", "seed") if k not in parameters]
    if unknown:
        raise InvalidSpec(f"dataset spec: unknown option or missing parameter {', '.join(map(repr, unknown))} "
                          f"(options are {', '.join(sorted(known - {'authors', 'messages', 'seed'}))})")
    return NetworkSpec(parameters["authors"], parameters["messages"], parameters["seed"], **options)


def default_network(name: str = "default") -> GeneratedNetwork:
    """The network the parameters describe (keys included, messages generated on demand)."""
    from ssblab.generate import GeneratedNetwork

    return GeneratedNetwork(network_spec(default_spec(name)))


def _fingerprint(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode() + code_digest(PRODUCERS)).hexdigest()[:16]


def _dataset_dir(name: str) -> Path:
    return cache_dir() / f"{name}-{_fingerprint(default_spec(name))}"


def _cached(path: Path, build: Callable[[Path], None]) -> Path:
    """``path`` if it exists; otherwise ``build`` it at a temporary sibling and rename it into place."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        build(staging)
        try:
            os.replace(staging, path)
        except OSError:
            if not path.exists():
                raise
            # Another process built the same form meanwhile: the same bytes, so keep theirs.
    finally:
        if staging.is_dir():
            shutil.rmtree(staging, ignore_errors=True)
        else:
            staging.unlink(missing_ok=True)
    return path


def default_jsonl(name: str = "default") -> Path:
    """The network as JSONL (one compact message value per line, in log order)."""
    from ssblab.generate import write_jsonl

    return _cached(_dataset_dir(name) / f"{name}.jsonl",
                   lambda out: write_jsonl(default_network(name).messages(), out))


def default_store(name: str = "default") -> Path:
    """A store folder holding the network (every message validated on the way in).

    Treat it as read-only: it is shared by everyone who asks; copy it to change it.
    """
    from ssblab.pipeline.sources import read_source
    from ssblab.store import Store

    def build(out: Path) -> None:
        with Store(out) as store:
            report = store.append(read_source(default_jsonl(name)))
        if not report.ok:
            raise SsbError(f"dataset {name!r}: the generated network failed validation: {report}")

    return _cached(_dataset_dir(name) / "store", build)


def default_parquet(spark: SparkSession | None = None, name: str = "default") -> Path:
    """The verified Parquet dataset of the network (``ssblab export --format parquet``), read-only like the store.

    Built once, on Spark when a session is given, else on the local engine: both write the same tables.
    """
    from ssblab.pipeline.export import export_dataset

    def build(out: Path) -> None:
        export_dataset(default_jsonl(name), out, spark=spark, engine="spark" if spark is not None else "local",
                       progress=False)

    return _cached(_dataset_dir(name) / "parquet", build)
