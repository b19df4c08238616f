"""The CLI's progress line (issue 14, item 2) as exec/running.py computes it from Spark's
status tracker, on the shared SparkSession: stages and tasks of the statement's job group, and
for a write the rows its finished tasks have written. (tests/test_cli_cancel.py sees the line
drawn on a pseudo-terminal.)"""

from __future__ import annotations

import threading
import time

from hivepark.exec.running import _progress


def test_a_writes_progress_line_counts_tasks_and_rows_written(spark, tmp_path):
    sc = spark.sparkContext
    group = "hivepark-test-progress"

    def write() -> None:
        sc.setJobGroup(group, "progress test", True)
        try:
            # 20 tasks of 10,000 rows, each pausing 0.3 s once: finished tasks while others run
            spark.range(0, 200_000, 1, 20).selectExpr(
                "id", "CASE WHEN id % 10000 = 0 THEN java_method('java.lang.Thread', 'sleep', "
                "CAST(300 AS BIGINT)) END AS pause").write.parquet(str(tmp_path / "out"))
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)

    worker = threading.Thread(target=write)
    worker.start()
    lines = []
    store = sc._jsc.sc().statusStore()
    while worker.is_alive():
        line, _, _ = _progress(sc.statusTracker(), group, store)
        if line is not None:
            lines.append(line)
        time.sleep(0.1)
    worker.join()
    # one stage, running; its job may still be committing the write once every task is done
    assert lines and all(line.startswith(("Stages: 0/1  Tasks: ", "Stages: 1/1  Tasks: 20/20 done"))
                         for line in lines), lines
    assert any(line.startswith("Stages: 0/1") for line in lines), lines
    written = [line for line in lines if "rows written" in line]
    assert written, lines
    # rows are counted by finished tasks, 10,000 each, and never more than the write holds
    counts = [int(line.rsplit(", ", 1)[1].split()[0].replace(",", "")) for line in written]
    assert all(c % 10_000 == 0 and 0 < c <= 200_000 for c in counts) and counts == sorted(counts)
    assert _progress(sc.statusTracker(), group, store)[0] is None  # nothing runs: no line
    assert spark.read.parquet(str(tmp_path / "out")).count() == 200_000


def test_a_signal_never_lets_the_statement_outlive_its_cancel(spark, tmp_path):
    """running.run returns (Cancelled) only once the statement's thread has ended, however the
    signal lands: Python 3.11's Thread.join, interrupted by a signal's exception, could report
    a still-running thread as stopped, and the CLI then exited with the write in flight (its
    staging directory and journal left behind)."""
    import os
    import signal

    import pytest

    from hivepark.exec import running

    for _ in range(5):
        ended: list[float] = []

        def body(ended: list[float] = ended) -> None:
            time.sleep(1.0)
            ended.append(time.monotonic())

        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(running.Cancelled) as cancelled:
            running.run(spark, str(tmp_path), body)
        assert cancelled.value.signum == signal.SIGINT
        assert ended, "run() gave up waiting while the statement was still running"
