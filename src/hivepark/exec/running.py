"""A statement the CLI runs so that it can be cancelled, and shows progress (issue 14, 1, 2).

:func:`run` runs the statement in a worker thread whose Spark jobs carry their own job group
(``SparkContext.setJobGroup``, classic session, with ``interruptOnCancel``), while the main
thread waits, so a signal (Ctrl-C's SIGINT, SIGTERM) reaches Python at once instead of inside
a py4j call. On a signal: the group's jobs are cancelled, the worker's write aborts (its
``Commit`` removes what it staged), hivepark waits until Spark reports no task of the group
still running, then deletes again any staging directory an aborted commit had, since a task
that was still writing may have made it anew. :class:`Cancelled` then says what happened.

A daemon thread polls ``statusTracker()`` meanwhile: it draws a progress line (stages and
tasks done of total) on a terminal, and when the master is not local and no executor has
registered for ``hivepark.executor.wait.seconds`` while the statement's tasks wait, it cancels
the statement with :class:`NoExecutors`, which names the master and the fix.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

from pyspark.sql import SparkSession

from hivepark.errors import HiveParkError
from hivepark.storage.commit import delete_staging, take_aborted

T = TypeVar("T")

_current = threading.local()  # the Run of the statement this (worker) thread runs
STOP_TIMEOUT = 120.0  # how long a cancel waits for Spark's tasks to stop


class Cancelled(Exception):
    """The statement was cancelled by a signal. ``finished``: it had completed (committed)
    before the cancel could stop it."""

    def __init__(self, signum: int, finished: bool) -> None:
        super().__init__(f"cancelled by signal {signum}")
        self.signum = signum
        self.finished = finished


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt is for SIGINT."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class NoExecutors(HiveParkError):
    """No Spark executor registered with a cluster master within the wait."""


class _Run:
    def __init__(self, spark: SparkSession, warehouse: str) -> None:
        self.spark = spark
        self.warehouse = warehouse
        self.group = f"hivepark-{uuid.uuid4().hex[:16]}"
        self.cancelled = threading.Event()
        self.progress_cleared = threading.Event()
        self.watcher: _Watcher | None = None


def check_cancelled() -> None:
    """In a statement :func:`run` runs: raises :class:`Cancelled` once it has been cancelled
    (a write calls it before it commits, so a cancel that came after Spark's job ended still
    rolls back)."""
    run = getattr(_current, "run", None)
    if run is not None and run.cancelled.is_set():
        raise Cancelled(0, False)


def settle() -> None:
    """In a cancelled statement: waits until none of its Spark tasks runs any more, so that
    the abort that follows deletes a staging directory no task still writes into."""
    run = getattr(_current, "run", None)
    if run is not None and run.cancelled.is_set():
        wait_stopped(run.spark, run.group)


def clear_progress() -> None:
    """Called just before a statement prints its first row (a query's rows are computed while
    they are read, so its progress shows until then): its progress line is erased now, before
    the row goes to the terminal, and not drawn again."""
    run = getattr(_current, "run", None)
    if run is not None:
        run.progress_cleared.set()
        if run.watcher is not None:
            run.watcher.erase()


def wait_stopped(spark: SparkSession, group: str, timeout: float = STOP_TIMEOUT) -> bool:
    """Waits until Spark reports no running job and no running task in ``group``."""
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            if job is None:
                continue
            busy = busy or job.status == "RUNNING"
            for stage_id in job.stageIds:
                stage = tracker.getStageInfo(stage_id)
                busy = busy or (stage is not None and stage.numActiveTasks > 0)
        if not busy:
            return True
        time.sleep(0.1)
    return False


def run(spark: SparkSession, warehouse: str, body: Callable[[], T], progress: TextIO | None = None,
        executor_wait: float = 60.0) -> T:
    """Runs ``body`` (one statement, and the printing of its rows) cancellably; see the module.

    Raises:
        Cancelled: SIGINT or SIGTERM came while it ran (after everything it wrote is gone,
            unless it had already finished).
        NoExecutors: a cluster gave it no executor within ``executor_wait`` seconds.
    """
    state = _Run(spark, warehouse)
    outcome: dict[str, Any] = {}

    def work() -> None:
        _current.run = state
        sc = spark.sparkContext
        sc.setJobGroup(state.group, "hivepark statement", interruptOnCancel=True)
        try:
            outcome["value"] = body()
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            outcome["error"] = e
        finally:
            _current.run = None
            try:
                sc._jsc.clearJobGroup()
            except Exception:  # noqa: BLE001 - the session may be stopping
                pass
            done.set()

    # The main thread waits on an Event, never Thread.join: a signal's exception raised inside
    # join() makes Python 3.11's Thread believe a still-running thread has stopped (the lock
    # it waits on is released on the worker's behalf), and the process would then exit while
    # the statement is still writing, leaving its staging directory and journal.
    done = threading.Event()
    worker = threading.Thread(target=work, name="hivepark-statement", daemon=True)
    watcher = _Watcher(state, progress, executor_wait)
    state.watcher = watcher
    take_aborted()  # only this statement's aborts are swept below
    worker.start()
    watcher.start()
    signum = 0
    try:
        try:
            while not done.wait(0.2):
                pass
        except KeyboardInterrupt:
            signum = 2
        except Terminated as t:
            signum = t.signum
        if signum or watcher.error is not None:
            _stop(state, done)
    finally:
        watcher.stop()
    if signum:
        raise Cancelled(signum, "value" in outcome)
    if watcher.error is not None:
        raise watcher.error
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _stop(state: _Run, done: threading.Event) -> None:
    """Cancels the statement's jobs, waits for the worker and Spark's tasks to stop (further
    signals meanwhile are ignored: leaving now would leave files behind), then deletes any
    staging directory an aborted commit of it had."""
    state.cancelled.set()
    while True:
        try:
            state.spark.sparkContext.cancelJobGroup(state.group)
            while not done.wait(0.2):
                state.spark.sparkContext.cancelJobGroup(state.group)  # a job started after the first
            wait_stopped(state.spark, state.group)
            for staging in take_aborted():
                delete_staging(staging, state.warehouse)
            return
        except (KeyboardInterrupt, Terminated):
            continue


class _Watcher:
    """Polls Spark's status tracker for one statement: progress line, executor wait."""

    def __init__(self, state: _Run, out: TextIO | None, executor_wait: float) -> None:
        self.state = state
        self.out = out
        self.executor_wait = executor_wait
        self.error: NoExecutors | None = None
        self._stop = threading.Event()
        self._drawn = False
        self._lock = threading.Lock()  # drawing, and erasing from the statement's thread
        self._thread = threading.Thread(target=self._loop, name="hivepark-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.erase()

    def erase(self) -> None:
        with self._lock:
            self._erase()

    def _erase(self) -> None:
        if self._drawn and self.out is not None:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self._drawn = False

    def _loop(self) -> None:
        sc = self.state.spark.sparkContext
        local = (sc.master or "").startswith("local")
        started = time.monotonic()
        waiting_since: float | None = None
        try:
            tracker = sc.statusTracker()
            store = sc._jsc.sc().statusStore()  # stage metrics: rows written by finished tasks
            while not self._stop.wait(0.5):
                line, running, tasks_started = _progress(tracker, self.state.group, store)
                if line is None:
                    self.erase()
                    waiting_since = None
                    continue
                if not local and not tasks_started and self._no_executor():
                    waiting_since = waiting_since or time.monotonic()
                    if time.monotonic() - waiting_since >= self.executor_wait:
                        self.error = _no_executors(sc.master or "", self.executor_wait)
                        sc.cancelJobGroup(self.state.group)
                        return
                else:
                    waiting_since = None
                with self._lock:
                    if self.out is None or self.state.progress_cleared.is_set():
                        self._erase()
                    elif time.monotonic() - started >= 1.0:  # quick statements draw nothing
                        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
                        self.out.write("\r" + line[:width] + "\x1b[K")
                        self.out.flush()
                        self._drawn = True
        except Exception:  # noqa: BLE001 - progress is a courtesy; the statement goes on
            return

    def _no_executor(self) -> bool:
        """Whether only the driver is known (getExecutorInfos lists the driver too)."""
        infos = self.state.spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
        return len(infos) <= 1


def _progress(tracker: Any, group: str, store: Any = None) -> tuple[str | None, int, bool]:
    """The progress line of ``group``'s jobs (None when none runs), its running tasks, and
    whether any task of them has started. With ``store`` (Spark's AppStatusStore), a write's
    line also counts the rows its finished tasks have written."""
    stages_done = stages = tasks_done = tasks = running = written = 0
    active = False
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        if job is None or job.status != "RUNNING":
            continue
        active = True
        for stage_id in job.stageIds:
            info = tracker.getStageInfo(stage_id)
            stages += 1
            if info is None:
                continue
            tasks += info.numTasks
            tasks_done += info.numCompletedTasks
            running += info.numActiveTasks
            stages_done += info.numTasks > 0 and info.numCompletedTasks >= info.numTasks
            written += _rows_written(store, stage_id)
    if not active:
        return None, 0, False
    line = f"Stages: {stages_done}/{stages}  Tasks: {tasks_done}/{tasks} done, {running} running"
    if written:
        line += f", {written:,} rows written"
    return line, running, running > 0 or tasks_done > 0


def _rows_written(store: Any, stage_id: int) -> int:
    if store is None:
        return 0
    try:
        return int(store.lastStageAttempt(stage_id).outputRecords())
    except Exception:  # noqa: BLE001 - a stage not in the store yet (or gone): nothing to add
        return 0


def _no_executors(master: str, seconds: float) -> NoExecutors:
    return NoExecutors(
        f"No Spark executor registered with the master {master} within {seconds:g} seconds, so the "
        f"statement could not start and was cancelled (nothing written). Start a worker for it "
        f"($SPARK_HOME/sbin/start-worker.sh {master}), or check that its workers have the free cores "
        f"and memory the application asks for (spark.executor.cores, spark.executor.memory; the "
        f"master's web UI shows them). SET hivepark.executor.wait.seconds=N waits longer.")
