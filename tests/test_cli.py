"""The ``hivepark`` command, run as a subprocess against a temporary warehouse.

Each run starts a JVM, so the four runs start together in the background as the suite starts
(tests/background.py) and each test checks one of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import background
from background import Background

TIMEOUT = 600


def _command() -> list[str]:
    exe = Path(sys.executable).parent / "hivepark"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "hivepark.cli"]


@dataclass
class Run:
    proc: subprocess.Popen
    root: Path
    _out: tuple[int, str, str] | None = None

    def result(self) -> tuple[int, str, str]:
        if self._out is None:
            out, err = self.proc.communicate(timeout=TIMEOUT)
            self._out = (self.proc.returncode, out, err)
        return self._out


SCRIPT_RUNTIME_ERROR = """\
CREATE TABLE nums (n INT) STORED AS PARQUET;
INSERT INTO nums VALUES (1), (NULL);
SELECT n FROM nums ORDER BY n;
INSERT INTO nums VALUES ('abc');
CREATE TABLE never_created (a INT);
"""

SCRIPT_SYNTAX_ERROR = """\
CREATE TABLE first (a INT);
SELECT 'one', 2;
SELECT * FROM
  first WHERE a = = 1;
CREATE TABLE second (a INT);
"""


def _start_runs(bg: Background) -> None:
    """The four runs, started together in the background as the suite starts
    (tests/background.py); puts "runs": name -> Run (the process still running)."""
    root = Path(bg.tmp)
    env = dict(os.environ, HIVEPARK_DRIVER_MEMORY="512m",
               HIVEPARK_HISTORY=str(root / "history"))
    env.pop("HIVEPARK_MASTER", None)

    def start(name: str, args: list[str]) -> Run:
        d = root / name
        d.mkdir()
        proc = bg.popen([*_command(), *args], cwd=d, env=env, stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return Run(proc, d)

    (root / "runtime.sql").write_text(SCRIPT_RUNTIME_ERROR)
    (root / "syntax.sql").write_text(SCRIPT_SYNTAX_ERROR)
    bg.put("runs", {
        "e": start("e", [
            "--warehouse", str(root / "e" / "wh"),
            "--metastore", f"sqlite:///{root / 'e' / 'meta.db'}",
            "--master", "local[1]",
            "--hiveconf", "hive.exec.dynamic.partition.mode=nonstrict",
            "--hiveconf", "my.setting=x=y z",
            "-e", "CREATE TABLE t (id INT, name STRING) PARTITIONED BY (ds STRING) "
                  "STORED AS PARQUET; "
                  "INSERT INTO t PARTITION (ds) VALUES (1, 'a b', 'd1'), (2, NULL, 'd2'); "
                  "SELECT id, name, ds FROM t ORDER BY id; "
                  "SET hive.exec.dynamic.partition.mode; SET my.setting; "
                  "SHOW PARTITIONS t"]),
        "runtime": start("runtime", ["--warehouse", "wh", "--master", "local[1]",
                                     "-f", str(root / "runtime.sql")]),
        "syntax": start("syntax", ["--warehouse", "wh", "--master", "local[1]",
                                   "-f", str(root / "syntax.sql")]),
        "verbose": start("verbose", ["--warehouse", "wh", "--master", "local[1]", "--verbose",
                                     "-e", "SHOW TABLES; SELECT * FROM missing_table"]),
    })


BACKGROUND_TESTS = {name: _start_runs for name in (
    "test_e_prints_tab_separated_rows_and_applies_hiveconf", "test_f_stops_at_first_runtime_error_with_one_line",
    "test_f_syntax_error_shows_line_and_column", "test_verbose_prints_the_traceback")}


@pytest.fixture(scope="module")
def runs():
    return background.start(_start_runs).get("runs")  # the processes end with the run (Background.stop)


def _assert_one_clean_failure(err: str) -> str:
    # Hive's trailer of each statement that ran before (OK, Time taken) is not noise
    lines = [line for line in err.splitlines() if line.strip() and line != "OK"
             and not line.startswith("Time taken: ")]
    assert len(lines) == 1, err
    assert lines[0].startswith("FAILED: ")
    for noise in ("Traceback", "at org.apache", "Py4J", "py4j", "\tat "):
        assert noise not in err
    return lines[0]


def test_e_prints_tab_separated_rows_and_applies_hiveconf(runs):
    rc, out, err = runs["e"].result()
    assert rc == 0, err
    assert "FAILED" not in err
    assert out.splitlines() == [
        "1\ta b\td1",
        "2\tNULL\td2",
        "hive.exec.dynamic.partition.mode=nonstrict",
        "my.setting=x=y z",
        "ds=d1",
        "ds=d2",
    ]
    root = runs["e"].root
    assert (root / "meta.db").is_file()
    assert not (root / "wh" / "metastore.db").exists()
    assert (root / "wh" / "t" / "ds=d1").is_dir() and (root / "wh" / "t" / "ds=d2").is_dir()


def test_f_stops_at_first_runtime_error_with_one_line(runs):
    rc, out, err = runs["runtime"].result()
    assert rc == 1
    line = _assert_one_clean_failure(err)
    assert "'abc'" in line
    assert out.splitlines() == ["NULL", "1"]
    wh = runs["runtime"].root / "wh"
    assert (wh / "nums").is_dir()
    assert not (wh / "never_created").exists()
    assert not [p for p in (wh / "nums").iterdir() if p.name.startswith(".hive-staging")]


def test_f_syntax_error_shows_line_and_column(runs):
    rc, out, err = runs["syntax"].result()
    assert rc == 1
    line = _assert_one_clean_failure(err)
    assert line.startswith("FAILED: ParseException line 4:19 ")
    assert out.splitlines() == ["one\t2"]
    wh = runs["syntax"].root / "wh"
    assert (wh / "first").is_dir()
    assert not (wh / "second").exists()


def test_verbose_prints_the_traceback(runs):
    rc, out, err = runs["verbose"].result()
    assert rc == 1
    assert "Traceback" in err
    failed = [line for line in err.splitlines() if line.startswith("FAILED: ")]
    assert len(failed) == 1 and "missing_table" in failed[0]
    assert "SHOW TABLES" in failed[0]
    assert out == ""
