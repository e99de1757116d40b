"""The environment variables the pipeline reads, in one leaf module both the engine choice and the Spark session
factory import."""

from __future__ import annotations

import os

__all__ = ["MASTER_ENV", "master_from_environment"]

MASTER_ENV = "SSBLAB_SPARK_MASTER"  # a Spark master URL; set, it also makes Spark the default engine


def master_from_environment() -> str | None:
    """The master URL ``$SSBLAB_SPARK_MASTER`` names, if any."""
    return os.environ.get(MASTER_ENV) or None
