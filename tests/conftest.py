"""Test-wide plugins: the one shared SparkSession of a run lives in tests/conftest_spark.py."""

pytest_plugins = ["tests.conftest_spark"]
