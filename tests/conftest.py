"""Test-wide plugins and settings: the one shared SparkSession of a run lives in tests/conftest_spark.py; the
verified datasets that analyses keep (`ssblab.pipeline.cache`) go to a folder of the run, not the user's cache."""

from collections.abc import Iterator

import pytest

pytest_plugins = ["tests.conftest_spark"]


@pytest.fixture(scope="session", autouse=True)
def data_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SSBLAB_DATA_CACHE", str(tmp_path_factory.mktemp("data-cache")))
        yield
