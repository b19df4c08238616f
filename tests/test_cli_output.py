"""What the command prints of a query's rows, found by following the README as a new user:
timestamps in the session's time zone whatever the machine's (``TZ``), intervals, the table
format (no markup, no value cut to the terminal's width), and a reader of stdout that goes
away (``hivepark -e ... | head``)."""

from __future__ import annotations

import os
import subprocess

import background
from background import Background
from cli_command import hivepark_command

TIMES = ("SELECT TIMESTAMP '2024-01-05 10:00:00' AS t, TIMESTAMP '2024-07-05 10:00:00.5' AS t, "
         "array(TIMESTAMP '2024-01-05 23:30:00.123') AS a, named_struct('x', TIMESTAMP '1900-01-01 00:00:00') AS s, "
         "CAST(TIMESTAMP '2024-01-05 10:00:00.25' AS TIMESTAMP_NTZ) AS n, INTERVAL '1-2' YEAR TO MONTH AS ym, "
         "DATE '2024-03-01' - DATE '2024-01-01' AS d")
TIMES_TSV = ("2024-01-05 10:00:00\t2024-07-05 10:00:00.5\t[\"2024-01-05 23:30:00.123\"]\t"
             "{\"x\":\"1900-01-01 00:00:00\"}\t2024-01-05 10:00:00.25\tINTERVAL '1-2' YEAR TO MONTH\t"
             "INTERVAL '60' DAY")
WIDE = "w" * 120


def _runs(bg: Background) -> None:
    """Runs on a machine whose time zone is not UTC (the session's is): one piped into a reader
    that stops after two lines, the shell given statements on stdin, one printing tables into a
    pipe (80 columns wide)."""
    wh = os.path.join(bg.tmp, "wh")
    cli = [*hivepark_command(), "--warehouse", wh, "--master", "local[1]", "-S"]
    proc = bg.popen([*cli, "-e", f"{TIMES}; SELECT id FROM range(200000); CREATE TABLE after_the_pipe (a INT)"],
                    env=dict(os.environ, TZ="America/New_York"), stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    proc.stdout.close()  # as `| head -2` does
    err = proc.stderr.read()
    bg.put("piped", (lines, proc.wait(timeout=600), err, os.path.isdir(os.path.join(wh, "after_the_pipe"))))
    # stdout and stderr into one pipe nobody reads: the first statement's OK (stderr) meets it
    closed = bg.popen([*hivepark_command(), "--warehouse", wh, "--master", "local[1]", "-e",
                       "CREATE TABLE first_one (a INT); CREATE TABLE second_one (a INT)"],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert closed.stdout is not None
    closed.stdout.close()
    bg.put("closed", (closed.wait(timeout=600), sorted(os.listdir(wh))))
    history = os.path.join(bg.tmp, "history")
    with open(history, "w") as f:
        f.write("SHOW TABLES;\nSELECT 1;\n")
    shell = bg.popen(cli, env=dict(os.environ, HIVEPARK_HISTORY=history), stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = shell.communicate("SELECT 5\n  AS five;\nSELECT 'six'\n-- a comment\n;\n", timeout=600)
    with open(history) as f:
        bg.put("shell", (shell.returncode, out, err, f.read()))
    bg.put("table", bg.run([*cli, "--outputformat", "table", "-e",
                            f"SELECT 1 AS `[b]`, '[bold]x[/bold] [red]' AS m, '{WIDE}' AS w, "
                            "TIMESTAMP '2024-01-05 10:00:00' AS t"],
                           env=dict(os.environ, TZ="Asia/Tokyo")))


BACKGROUND_TESTS = {name: _runs for name in (
    "test_timestamps_print_in_the_sessions_time_zone_and_intervals_print",
    "test_a_closed_pipe_ends_the_run_quietly", "test_table_output_prints_values_as_they_are",
    "test_a_closed_stderr_pipe_ends_the_run_as_a_closed_stdout_does",
    "test_statements_piped_into_the_shell_print_rows_alone_and_keep_the_history")}


def test_timestamps_print_in_the_sessions_time_zone_and_intervals_print():
    """PySpark gives a TIMESTAMP in the Python process's time zone: with TZ=America/New_York
    ``TIMESTAMP '2024-01-05 10:00:00'`` printed ``2024-01-05 05:00:00`` (and ``.500000`` for
    Hive's ``.5``); a YEAR TO MONTH interval failed the statement (NOT_IMPLEMENTED), a day
    interval printed as Python's ``60 days, 0:00:00``."""
    lines, _, err, _ = background.start(_runs).get("piped")
    assert lines[0] == TIMES_TSV + "\n"
    assert "FAILED" not in err, err


def test_a_closed_pipe_ends_the_run_quietly():
    """``hivepark -e ... | head`` ended with ``FAILED: File system error: [Errno 32] Broken
    pipe`` and status 1; now as a command that SIGPIPE ends: nothing said, status 141, and the
    rest of the statements not run."""
    lines, rc, err, created = background.start(_runs).get("piped")
    assert lines[1] == "0\n"
    assert rc == 141, err
    assert err == ""
    assert not created


def test_a_closed_stderr_pipe_ends_the_run_as_a_closed_stdout_does():
    """``hivepark -e ... 2>&1 | head``: the trailer's OK met the closed pipe first, and the run
    ended with status 1 (its error line unwritable) rather than as SIGPIPE ends a command."""
    rc, made = background.start(_runs).get("closed")
    assert rc == 141
    assert "first_one" in made and "second_one" not in made


def test_table_output_prints_values_as_they_are():
    """The table format read values and names as rich's markup ('[bold]x[/bold]' printed as
    'x', '[red]' vanished, a column '[b]' nameless) and cut values to 80 columns ('www…')."""
    run = background.start(_runs).get("table")
    assert run.returncode == 0, run.stderr
    header, row = [line for line in run.stdout.splitlines() if line.startswith(("┃", "│"))]
    assert [c.strip() for c in header.strip("┃").split("┃")] == ["[b]", "m", "w", "t"]
    assert [c.strip() for c in row.strip("│").split("│")] == ["1", "[bold]x[/bold] [red]", WIDE,
                                                              "2024-01-05 10:00:00"]


def test_statements_piped_into_the_shell_print_rows_alone_and_keep_the_history():
    """``hivepark < q.sql`` printed the prompts among the rows (``hivepark>         > 5``) and
    rewrote the user's history file: each statement read over several lines removed as many
    entries from it, so two statements left one, mangled (``SELECT 'six' -- a comment ;``)."""
    rc, out, err, history = background.start(_runs).get("shell")
    assert rc == 0, err
    assert out == "5\nsix\n"
    assert history == "SHOW TABLES;\nSELECT 1;\n"
