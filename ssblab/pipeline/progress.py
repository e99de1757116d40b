"""Progress of long Spark jobs, in a terminal (stderr) and in notebooks (a widget, through ``tqdm.auto``).

Strategy: a daemon thread polls Spark's status tracker (stages and their tasks) and an accumulator that the
Python workers add their record counts to, twice a second, and draws one bar: tasks done of tasks known, with
the running stages and the rows processed so far. Polling reads only driver-side state, so it costs the job
nothing; the bar closes when the block ends, even on error.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["POLL_S", "job_progress"]

POLL_S = 0.5


def _snapshot(tracker: Any) -> tuple[int, int, list[str]]:
    """(tasks done, tasks known, running stage descriptions) of the active stages."""
    done = total = 0
    running = []
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is None:
            continue
        done += info.numCompletedTasks
        total += info.numTasks
        running.append(f"stage {stage_id} ({info.numCompletedTasks}/{info.numTasks})")
    return done, total, running


@contextlib.contextmanager
def job_progress(spark: SparkSession, desc: str, *, enabled: bool | None = None) -> Iterator[Any]:
    """Show a progress bar while the block runs Spark jobs; yields an accumulator for rows processed.

    Args:
        spark: the session whose jobs to follow.
        desc: what the bar says (e.g. "verifying").
        enabled: True, False, or None for "only when stderr is a terminal or in a notebook" (tqdm's rule).
    """
    from tqdm.auto import tqdm

    rows = spark.sparkContext.accumulator(0)
    bar = tqdm(desc=desc, unit=" tasks", disable=enabled is False if enabled is not None else None,
               file=sys.stderr)
    stop = threading.Event()

    def poll() -> None:
        tracker = spark.sparkContext.statusTracker()
        finished = 0
        while not stop.wait(POLL_S):
            done, total, running = _snapshot(tracker)
            if not running:
                finished = bar.n
                continue
            bar.total = finished + total
            bar.n = finished + done
            bar.set_postfix_str(f"{rows.value:,} rows; " + ", ".join(running), refresh=False)
            bar.refresh()

    thread = threading.Thread(target=poll, name="ssblab-progress", daemon=True)
    thread.start()
    finished = False
    try:
        yield rows
        finished = True
    finally:
        stop.set()
        thread.join()
        if finished:  # a saved notebook keeps the last frame: a full bar, not a red one stopped wherever polling was
            bar.total = bar.n = max(bar.n, bar.total or 0)
        bar.set_postfix_str(f"{rows.value:,} rows", refresh=True)
        bar.close()
