"""Cancel and progress in the CLI (issue 14, items 1 and 2), through a real pseudo-terminal:
Ctrl-C in the shell cancels a running INSERT OVERWRITE (its Spark job stops, nothing of it
stays on disk or in the metastore, one line instead of a traceback, the next statement runs at
once); SIGTERM / SIGINT to ``-e`` runs exit 143 / 130 leaving nothing; the progress line and
"Starting Spark..." go to a terminal's stderr, never to stdout, and ``-S`` shows none."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

import pytest

from cli_command import hivepark_command

# a CPU-bound statement that runs for many minutes and writes one row: its tasks check for
# cancellation every 1000 rows of the big side
SLOW = "SELECT sum(hash(a.id, b.id)) FROM range(100000000) a CROSS JOIN range(1000) b"
RUNNING = re.compile(rb"Stages: \d+/\d+  Tasks: \d+/\d+ done, [1-9]\d* running")


class Terminal:
    """A process whose stdin and stderr (and stdout, unless ``stdout_pipe``) are a new
    pseudo-terminal, its controlling terminal (so \\x03 sends SIGINT to it)."""

    def __init__(self, args: list[str], env: dict[str, str], stdout_pipe: bool = False) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))

        def controlling_tty() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(args, stdin=slave, stdout=subprocess.PIPE if stdout_pipe else slave,
                                     stderr=slave, env=env, start_new_session=True,
                                     preexec_fn=controlling_tty)
        os.close(slave)
        self.master = master
        self.output = b""
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.output += data

    def expect(self, pattern: bytes | re.Pattern[bytes], timeout: float, start: int = 0) -> int:
        """Waits for ``pattern`` in the output after ``start``; returns the end of the match."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                m = regex.search(self.output, start)
            if m:
                return m.end()
            if self.proc.poll() is not None:
                time.sleep(0.3)  # the last output may still be on its way
                with self._lock:
                    m = regex.search(self.output, start)
                if m:
                    return m.end()
                break
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not seen in {timeout}s; output:\n{self.text()}")

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def text(self) -> str:
        with self._lock:
            return self.output.decode("utf-8", "replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        os.close(self.master)


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, HIVEPARK_HISTORY=str(tmp_path / "history"), TERM="xterm")
    for k in ("HIVEPARK_FAULT", "HIVEPARK_FAULT_PAUSE", "PYSPARK_SUBMIT_ARGS"):
        env.pop(k, None)
    return env


def _tree(root: Path) -> set[str]:
    """Every file and directory under ``root``, hidden ones included."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _leftovers(wh: Path) -> list[str]:
    """Staging directories anywhere in the warehouse, and journals of statements."""
    staging = [str(p) for p in wh.rglob(".hive-staging*")]
    journals = [str(p) for p in (wh / ".hivepark" / "journal").glob("*")] if (wh / ".hivepark").exists() else []
    return staging + journals


def test_ctrl_c_in_the_shell_cancels_an_insert_overwrite(tmp_path, spark):
    wh = tmp_path / "wh"
    term = Terminal([*hivepark_command(), "--warehouse", str(wh), "--outputformat", "tsv2"], _env(tmp_path))
    try:
        at = term.expect(b"hivepark> ", 180)
        assert b"Starting Spark..." in term.output  # shown while the session started
        term.send("CREATE TABLE t (a BIGINT) PARTITIONED BY (p STRING) STORED AS PARQUET;\n")
        at = term.expect(b"Time taken", 60, at)
        term.send("INSERT INTO t PARTITION (p='x') VALUES (1), (2);\n")
        at = term.expect(b"Time taken", 60, at)
        table = wh / "t"
        before = _tree(table)
        rows_before = sorted(spark.read.parquet(str(table)).collect())
        assert [tuple(r) for r in rows_before] == [(1, "x"), (2, "x")]

        # one Spark job for the whole write (no adaptive query stages run as jobs before it):
        # its staging directory exists while the slow stage runs
        term.send("SET spark.sql.adaptive.enabled=false;\n")
        at = term.expect(b"Time taken", 60, at)
        term.send(f"INSERT OVERWRITE TABLE t PARTITION (p='x') {SLOW};\n")
        at = term.expect(RUNNING, 120, at)  # the progress line: the job's tasks run
        assert any(p.name.startswith(".hive-staging") for p in table.iterdir())  # Spark is writing
        cancelled_at = time.monotonic()
        term.send("\x03")
        at = term.expect(b"Cancelled: INSERT OVERWRITE (nothing written)", 60, at)
        assert time.monotonic() - cancelled_at < 30
        term.send("SELECT a FROM t ORDER BY a;\n")  # the cancelled job no longer holds the cores
        asked = time.monotonic()
        end = term.expect(b"Fetched: 2 row(s)", 60, at)
        assert time.monotonic() - asked < 30
        assert re.search(r"a\r?\n1\r?\n2\r?\n", term.text()[at:end]), term.text()[at:end]
        shown = term.text()
        assert "Traceback" not in shown and "py4j" not in shown.lower() and "Py4J" not in shown

        time.sleep(2)  # a task that had not stopped would write its staging directory again now
        assert _tree(table) == before
        assert _leftovers(wh) == []
        assert sorted(spark.read.parquet(str(table)).collect()) == rows_before
        term.send("SHOW PARTITIONS t;\n")
        at = term.expect(b"Fetched: 1 row(s)", 60, end)
        # a query shows its progress while its rows are computed (the line was erased before its
        # first job ran, so a long query showed nothing), and Ctrl-C cancels it
        term.send(f"{SLOW};\n")
        at = term.expect(RUNNING, 60, at)
        term.send("\x03")
        at = term.expect(b"Cancelled: query", 60, at)
        term.send("quit;\n")
        assert term.proc.wait(60) == 0
    finally:
        term.close()


def test_sigterm_and_sigint_to_e_runs(tmp_path, spark):
    """SIGTERM to a ``-e`` run: exit 143, nothing left, progress on the terminal but not on the
    piped stdout. At the same time, SIGINT to a ``-S -e`` run: exit 130, no progress and no
    "Starting Spark..." at all."""
    wh, quiet_wh = tmp_path / "wh", tmp_path / "quiet"
    script = (f"CREATE TABLE t (a BIGINT) STORED AS PARQUET; INSERT INTO t VALUES (7); "
              f"SET spark.sql.adaptive.enabled=false; INSERT OVERWRITE TABLE t {SLOW};")
    term = Terminal([*hivepark_command(), "--warehouse", str(wh), "-e", script], _env(tmp_path), stdout_pipe=True)
    quiet = Terminal([*hivepark_command(), "--warehouse", str(quiet_wh), "-S", "-e", f"{SLOW};"], _env(tmp_path),
                     stdout_pipe=True)
    try:
        at = 0
        for _ in range(3):  # CREATE, INSERT INTO, SET
            at = term.expect(b"Time taken", 180, at)
        at = term.expect(RUNNING, 120, at)  # progress on the terminal (stderr)
        assert b"Starting Spark..." in term.output
        assert any(p.name.startswith(".hive-staging") for p in (wh / "t").iterdir())
        term.proc.send_signal(signal.SIGTERM)
        term.expect(b"Cancelled: INSERT OVERWRITE (nothing written)", 60, at)
        assert term.proc.wait(60) == 143
        assert term.proc.stdout.read() == b""  # type: ignore[union-attr]  # nothing went to the pipe
        time.sleep(2)
        assert _leftovers(wh) == []
        table = wh / "t"
        assert [p.name for p in table.iterdir() if p.name.startswith((".", "_"))] == []
        assert [tuple(r) for r in spark.read.parquet(str(table)).collect()] == [(7,)]
        assert "Traceback" not in term.text()

        # -S: nothing to wait for on the terminal; Spark is up once connect() made the metastore
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not (quiet_wh / "metastore.db").exists():
            time.sleep(0.2)
        time.sleep(4)
        assert quiet.proc.poll() is None, quiet.text()
        quiet.proc.send_signal(signal.SIGINT)
        quiet.expect(b"Cancelled: query", 60)
        assert quiet.proc.wait(60) == 130
        shown = quiet.text()
        assert "Stages:" not in shown and "Starting Spark" not in shown and "Traceback" not in shown
        assert quiet.proc.stdout.read() == b""  # type: ignore[union-attr]
    finally:
        term.close()
        quiet.close()


@pytest.mark.spark  # the hivepark command starts Spark
def test_no_executor_on_a_cluster_is_a_clear_error(tmp_path):
    """A master with no worker: Spark would wait silently; the CLI gives up after
    hivepark.executor.wait.seconds with an error naming the master and the fix."""
    from spark_cluster import spark_cluster

    with spark_cluster(worker=False) as url:
        run = subprocess.run([*hivepark_command(), "--warehouse", str(tmp_path / "wh"), "--master", url,
                              "--hiveconf", "hivepark.executor.wait.seconds=3", "-e",
                              "SELECT count(*) FROM range(10)"],
                             capture_output=True, text=True, timeout=300, env=_env(tmp_path))
    assert run.returncode == 1, run.stderr
    assert run.stdout == ""
    assert (f"FAILED: No Spark executor registered with the master {url} within 3 seconds" in run.stderr), \
        run.stderr
    assert "start-worker.sh" in run.stderr and "hivepark.executor.wait.seconds" in run.stderr
