"""`open_dataset`: any SSB data as queryable tables, without a JVM unless asked for one.

Strategy: a Parquet dataset (a folder written by ``ssblab export --format parquet``, with its manifest) is read
where it lies: each table lazily, only the columns asked for, by pyarrow (local engine) or Spark. Any other source
``ssblab import`` accepts (a store, JSONL, a log.offset, an ssb-fixtures folder, an archive) is verified on the way
in by the engine's pipeline (`ssblab.pipeline.local.build_tables`, or Spark's transforms), with the verdicts of
``ssblab verify``. On the local engine that dataset is kept (`ssblab.pipeline.cache`: named by a digest of the
source's bytes) and read back like any Parquet dataset, so the next opening of the same bytes verifies nothing; on
Spark, or with ``cache=False``, its tables are held in memory. Queries run in DuckDB over the same tables
(`Dataset.sql`); the analyses run on the dataset's engine (`Dataset.graph`).

Invariants: the tables are named and shaped as docs/datasets.md says (`ssblab.core.schema.TABLES`); a dataset
written by a newer ssblab, a folder that is not a dataset, a missing table and a failed query each raise a
`DatasetError` that names the path, the table or the query's complaint.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.schema import DATASET_VERSION, TABLES
from ssblab.graph.errors import DatasetError
from ssblab.pipeline.engines import Engine, LocalEngine, SparkEngine, resolve_engine
from ssblab.pipeline.export import MANIFEST

if TYPE_CHECKING:
    from concurrent.futures import Future

    from pyspark.sql import DataFrame, SparkSession

    from ssblab.graph.network import FollowNetwork
    from ssblab.tangles.analysis import Tangles

__all__ = ["Dataset", "DatasetError", "is_dataset", "open_dataset"]


def is_dataset(path: str | Path) -> bool:
    """A folder holding a dataset manifest (``_ssblab_dataset.json``)."""
    return (Path(path) / MANIFEST).is_file()


def open_dataset(path: str | Path, *, engine: str | Engine | None = None, spark: SparkSession | None = None,
                 master: str | None = None, hmac_key: Any = None, cache: bool = True) -> Dataset:
    """The tables of a Parquet dataset, or of any source ``ssblab import`` reads (verified on the way in).

    Args:
        path: a dataset folder, a store folder, a JSONL file, a log.offset, an ssb-fixtures folder or an archive.
        engine: ``"local"`` (DuckDB, Arrow, numpy, scipy; the default) or ``"spark"`` (the default when ``spark``
            or ``master`` is given).
        spark, master: a SparkSession, or a master URL to start one on.
        hmac_key: a test network's HMAC key (for sources that are not datasets).
        cache: on the local engine, keep a source's verified dataset for the next opening of the same bytes
            (`ssblab.pipeline.cache`); False verifies in memory and keeps nothing.

    Raises:
        DatasetError: the folder is a dataset of a newer (or an older) layout version, or its manifest is broken.
        SourceError: ``path`` is nothing ssblab reads.

    Examples:
        >>> ds = open_dataset("out/parquet")  # doctest: +SKIP
        >>> ds.sql("SELECT count(*) AS n FROM follows WHERE state = 'following'")  # doctest: +SKIP
    """
    chosen = resolve_engine(engine, spark=spark, master=master)
    path = Path(path).absolute()
    if is_dataset(path):
        return Dataset(path, chosen, manifest=_manifest(path))
    if cache and isinstance(chosen, LocalEngine):
        from ssblab.core.message import hmac_key_bytes
        from ssblab.pipeline import cache as kept

        try:
            folder = kept.kept_folder(path, hmac_key_bytes(hmac_key))
            if kept.is_kept(folder):
                return Dataset(path, chosen, manifest=_manifest(folder), folder=folder)
        except OSError:  # an unreadable cache: verify in memory
            return Dataset(path, chosen, built=_build(path, chosen, hmac_key))
        built = _build(path, chosen, hmac_key)
        return Dataset(path, chosen, built=built, keeping=kept.keep_in_background(built, folder, path))
    return Dataset(path, chosen, built=_build(path, chosen, hmac_key))


def _manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((path / MANIFEST).read_text())
        version = int(manifest["version"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path / MANIFEST}: not a dataset manifest ({exc})") from exc
    if version > DATASET_VERSION:
        raise DatasetError(f"{path}: written by a newer ssblab (dataset version {version}; this one reads "
                           f"version {DATASET_VERSION}): upgrade ssblab")
    if version < DATASET_VERSION:
        raise DatasetError(f"{path}: dataset version {version} lacks tables and columns of version "
                           f"{DATASET_VERSION}: export it again with `ssblab export --format parquet`")
    return manifest  # type: ignore[no-any-return]


def _build(source: Path, engine: Engine, hmac_key: Any) -> dict[str, Any]:
    """Every table of a source, verified, as the engine's relations."""
    if isinstance(engine, SparkEngine):
        from ssblab.pipeline.spark import build_frames

        return build_frames(engine.spark, source, hmac_key=hmac_key)
    from ssblab.pipeline.export import local_tables
    from ssblab.pipeline.sources import resolve_source

    return local_tables(resolve_source(source)[1], hmac_key=hmac_key, workers=engine.workers)


def _read_parquet(name: str, folder: Path, columns: list[str] | None) -> Any:
    """A table folder's Parquet files, one by one: ``pq.read_table`` goes through ``pyarrow.dataset``, which
    imports pandas (half a second of a CLI verb's start-up)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ssblab.core.schema import arrow_schema

    parts = [pq.ParquetFile(part).read(columns=columns) for part in sorted(folder.glob("*.parquet"))]
    if parts:
        return pa.concat_tables(parts)
    empty = arrow_schema(name).empty_table()
    return empty.select(columns) if columns else empty


class Dataset:
    """The tables of one dataset, on one engine.

    Attributes:
        path: the dataset folder, or the source it was built from.
        engine: the engine its analyses run on.
        manifest: the manifest of a Parquet dataset (None for a source built in memory).
        folder: where the Parquet files are: ``path``, or the source's verified dataset in the cache (None for a
            source built in memory, including one verified now whose dataset is being kept: `wait_kept`).
    """

    def __init__(self, path: Path, engine: Engine, *, manifest: dict[str, Any] | None = None,
                 built: dict[str, Any] | None = None, folder: Path | None = None,
                 keeping: Future[Path | None] | None = None) -> None:
        self.path = path
        self.engine = engine
        self.manifest = manifest
        self.folder = None if built is not None else folder or path
        self._built = built
        self._keeping = keeping

    def wait_kept(self) -> Path | None:
        """Wait until the verified dataset of a source opened for the first time is kept in the cache (it is
        written in the background while the tables are used from memory); its folder, the dataset's own folder,
        or None when nothing is kept (``cache=False``, Spark, or a cache that cannot be written)."""
        return self._keeping.result() if self._keeping is not None else self.folder

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r}, engine={self.engine.name!r})"

    @property
    def tables(self) -> list[str]:
        """The table names (docs/datasets.md)."""
        return list(TABLES)

    def _check(self, name: str) -> None:
        if name not in TABLES:
            raise DatasetError(f"{self.path}: no table {name!r} (the tables: {', '.join(TABLES)})")

    def _folder(self, name: str) -> Path:
        assert self.folder is not None, "a dataset built in memory has no folder"
        folder = self.folder / name
        if not folder.is_dir():
            raise DatasetError(f"{self.path}: the {name} table is missing ({folder} does not exist)")
        return folder

    def table(self, name: str, columns: list[str] | None = None) -> Any:
        """One table (or some of its columns) as a ``pyarrow.Table``."""
        self._check(name)
        if self._built is None:
            try:
                return _read_parquet(name, self._folder(name), columns)
            except (KeyError, ValueError, OSError) as exc:
                raise DatasetError(f"{self.path}: reading the {name} table: {exc}") from exc
        found = self._built[name]
        if isinstance(self.engine, SparkEngine):
            from ssblab.graph.spark import SparkGraphEngine

            found = SparkGraphEngine(self.engine.spark).collect(found)
        return found.select(columns) if columns else found

    def frame(self, name: str) -> DataFrame:
        """One table as a Spark DataFrame (the Spark engine only)."""
        self._check(name)
        if not isinstance(self.engine, SparkEngine):
            raise DatasetError("Dataset.frame: this dataset is on the local engine; open it with engine='spark'")
        if self._built is not None:
            return self._built[name]
        from ssblab.pipeline.spark import spark_schema

        return self.engine.spark.read.schema(spark_schema(name)).parquet(str(self._folder(name)))

    def relation(self, name: str, columns: list[str] | None = None) -> Any:
        """One table as the engine's own relation: an Arrow table locally, a DataFrame on Spark."""
        if isinstance(self.engine, SparkEngine):
            frame = self.frame(name)
            return frame.select(*columns) if columns else frame
        return self.table(name, columns)

    def pandas(self, name: str) -> Any:
        """One table as a pandas DataFrame."""
        return self.table(name).to_pandas()

    def polars(self, name: str) -> Any:
        """One table as a Polars DataFrame (needs ``polars``: pip install 'ssblab[polars]')."""
        try:
            import polars as pl
        except ImportError as exc:
            raise DatasetError("Dataset.polars needs polars: pip install 'ssblab[polars]'") from exc
        return pl.from_arrow(self.table(name))

    @cached_property
    def _duckdb(self) -> Any:
        """A DuckDB connection with every table as a view (over the Parquet files, or the tables in memory)."""
        import duckdb

        con = duckdb.connect()
        for name in TABLES:
            if self._built is None:
                pattern = str(self._folder(name) / "*.parquet").replace("'", "''")
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{pattern}')")
            else:
                con.register(name, self.table(name))
        return con

    def sql(self, query: str) -> Any:
        """Run a DuckDB query over the tables (named as in docs/datasets.md) into a ``pyarrow.Table``.

        Raises:
            DatasetError: the query failed; the message is DuckDB's.
        """
        import duckdb

        try:
            return self._duckdb.sql(query).to_arrow_table()
        except duckdb.Error as exc:
            raise DatasetError(f"query failed: {exc}") from exc

    def graph(self, *, local_limit: int | None = None, engine: Any = None) -> FollowNetwork:
        """The follow graph (`ssblab.graph.FollowNetwork`) on this dataset's engine: hops, PageRank, components,
        moderation and the about directory.

        Args:
            local_limit: on Spark, the most edges collected here rather than kept in Spark blocks.
            engine: a graph engine of this dataset's engine to use instead (`ssblab.graph.graph_engine`).
        """
        from ssblab.graph.network import FollowNetwork, graph_engine

        engine = graph_engine(engine or self.engine, local_limit=local_limit)
        return FollowNetwork(engine, self.relation("follows"), abouts=self.relation("abouts"),
                             messages=self.relation("messages", ["author", "timestamp"]))

    def tangles(self) -> Tangles:
        """Threads, tangles and causal order (`ssblab.tangles.Tangles`) on this dataset's engine."""
        from ssblab.tangles.analysis import Tangles

        return Tangles(self)

