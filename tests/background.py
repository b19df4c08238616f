"""Work of a test that runs in processes of its own (the writers killed with -9, the core
suite on a Spark cluster), started in a thread as the run starts (conftest.py) rather than
when the test's turn comes: the suite's own Python process keeps about one of this machine's
two cores busy, and the work overlaps the rest of the suite on the other.

A module names its tests that use such work in ``BACKGROUND_TESTS`` (test name -> the work,
a function of its ``Background``); a test takes what the work made with
``start(work).get(key)``, which waits for it. Without conftest.py's start (the test selected
some other way) the first ``start(work)`` starts it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from typing import Any

#: the background's processes yield the CPU to the suite's own, and use what it leaves
NICE = 10


class Background:
    def __init__(self, name: str, work: Callable[[Background], None]) -> None:
        self.name = name
        self._work = work
        self._values: dict[str, Any] = {}
        self._error: BaseException | None = None
        self._ended = False
        self._changed = threading.Condition()
        self._procs: list[subprocess.Popen] = []
        self.stopping = threading.Event()
        self.tmp = tempfile.mkdtemp(prefix=f"hivepark-{name}-")
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)

    def start(self) -> Background:
        self._thread.start()
        return self

    def _main(self) -> None:
        try:
            self._work(self)
        except BaseException as e:  # reported to the test by get()
            self._error = e
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def put(self, key: str, value: Any) -> None:
        with self._changed:
            self._values[key] = value
            self._changed.notify_all()

    def get(self, key: str) -> Any:
        """What the work put under ``key``, once it has; its error if it ended without."""
        with self._changed:
            self._changed.wait_for(lambda: key in self._values or self._ended)
            if key in self._values:
                return self._values[key]
        raise RuntimeError(f"the background work {self.name} ended without {key}: {self._error!r}") from self._error

    def popen(self, args: list[str], **kwargs: Any) -> subprocess.Popen:
        """A process of the work, at a lower priority than the suite's own (NICE), with the
        processes it starts: stop() ends it if it still runs."""
        if self.stopping.is_set():
            raise RuntimeError(f"the background work {self.name} is stopping")
        proc = subprocess.Popen(["nice", "-n", str(NICE), *args], **kwargs)
        self._procs.append(proc)
        return proc

    def run(self, args: list[str], timeout: float = 600, **kwargs: Any) -> subprocess.CompletedProcess:
        """``args`` run to the end as a process of the work (:meth:`popen`), its output kept."""
        proc = self.popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
        out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(args, proc.returncode, out, err)

    def stop(self) -> None:
        """At the end of the run (or on an interrupt): the work's processes ended, its files gone."""
        self.stopping.set()
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
        self._thread.join(timeout=120)
        shutil.rmtree(self.tmp, ignore_errors=True)


_STARTED: dict[Callable[[Background], None], Background] = {}


def start(work: Callable[[Background], None]) -> Background:
    """``work`` running in the background, started once."""
    if work not in _STARTED:
        _STARTED[work] = Background(work.__name__.strip("_").replace("_", "-"), work).start()
    return _STARTED[work]


def stop_all() -> None:
    """At the end of the run: every work's processes ended, its files gone."""
    for work in _STARTED.values():
        work.stop()
