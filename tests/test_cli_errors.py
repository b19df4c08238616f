"""The ``hivepark`` command's errors a user can act on (issue 13, item 5), each one line with
no traceback: a script that is not UTF-8 (file name and byte offset), a damaged data file found
while rows are printed (file and table), a full disk (a real one: a 1 MB tmpfs in a private
mount namespace), and a read-only table directory that no longer stops the warehouse from
opening (a ``WARNING:`` line).

The runs start together in one module fixture, as in tests/test_cli.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

TIMEOUT = 600


def _command() -> list[str]:
    exe = Path(sys.executable).parent / "hivepark"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "hivepark.cli"]


@dataclass
class Run:
    proc: subprocess.Popen | None
    skip: str = ""
    _out: tuple[int, str, str] | None = None

    def result(self) -> tuple[int, str, str]:
        if self.proc is None:
            pytest.skip(self.skip)
        if self._out is None:
            out, err = self.proc.communicate(timeout=TIMEOUT)
            self._out = (self.proc.returncode, out.decode(), err.decode())
        return self._out


def _one_line(err: str) -> str:
    # Hive's trailer of each statement that ran before (OK, Time taken) is not noise
    lines = [line for line in err.splitlines() if line.strip() and line != "OK"
             and not line.startswith("Time taken: ")]
    assert len(lines) == 1, err
    for noise in ("Traceback", "Py4J", "py4j", "calling o", "\tat ", "locals"):
        assert noise not in err
    return lines[0]


def _can_mount_tmpfs(where: Path) -> str:
    """Empty when a private mount namespace with a tmpfs can be made here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    r = subprocess.run(["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o size=64k tmpfs "$0"', str(where)],
                       capture_output=True, text=True)
    return "" if r.returncode == 0 else f"cannot mount a tmpfs here: {r.stderr.strip()}"


def _immutable(path: str, on: bool) -> str:
    if shutil.which("chattr") is None:
        return "chattr is not installed"
    r = subprocess.run(["chattr", "+i" if on else "-i", path], capture_output=True, text=True)
    return "" if r.returncode == 0 else f"chattr +i is not permitted here: {r.stderr.strip()}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, spark):
    import hivepark

    root = tmp_path_factory.mktemp("cli_errors")
    env = dict(os.environ, HIVEPARK_DRIVER_MEMORY="512m", HIVEPARK_HISTORY=str(root / "history"))
    env.pop("HIVEPARK_MASTER", None)

    # a warehouse with a damaged data file, and one whose partition directory root cannot change
    wh = hivepark.connect(str(root / "damaged"), spark=spark)
    wh.sql("CREATE TABLE p (a INT) STORED AS PARQUET")
    wh.sql("INSERT INTO p VALUES (1)")
    damaged = [f for f in (root / "damaged" / "p").iterdir() if not f.name.startswith((".", "_"))][0]
    damaged.write_bytes(b"PAR1 but not really" * 20)
    wh.close()
    wh = hivepark.connect(str(root / "readonly"), spark=spark, conf={"hivepark.files.retention.seconds": "0.2"})
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE q (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO q PARTITION (ds) VALUES (1, 'x')")
    wh.sql("INSERT OVERWRITE TABLE q PARTITION (ds) VALUES (2, 'x')")  # the first file expires in 0.2s
    wh.close()
    part = str(root / "readonly" / "q" / "ds=x")
    no_chattr = _immutable(part, True)
    time.sleep(0.5)

    (root / "latin1.sql").write_bytes("SELECT 1;\nSELECT 'caf\u00e9';\n".encode("latin-1"))
    (root / "full.sql").write_text("CREATE TABLE t (a BIGINT, s STRING) STORED AS PARQUET;\n"
                                   "INSERT INTO t SELECT id, uuid() FROM range(300000);\n")
    (root / "ignored.sql").write_text("SET hive.cli.errors.ignore=true;\nSELECT * FROM missing_table;\n"
                                      "SELECT 'after';\nSELECT * FROM missing_again;\n"
                                      "SELECT 'unterminated;\nSELECT 'never';\n")
    (root / "full").mkdir()
    no_tmpfs = _can_mount_tmpfs(root / "full")

    def start(args: list[str | bytes], wrap: list[str] | None = None, skip: str = "") -> Run:
        if skip:
            return Run(None, skip)
        proc = subprocess.Popen([*(wrap or []), *_command(), "--master", "local[1]", *args], cwd=root, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return Run(proc)

    # the whole run in a private mount namespace whose warehouse is a 1 MB tmpfs; what is left in
    # it afterwards is listed on stdout (the mount goes away with the namespace)
    in_tmpfs = ["unshare", "-m", "sh", "-c",
                'mount -t tmpfs -o size=1m tmpfs "$0" && "$@"; rc=$?; sleep 2; echo "--- left:"; '
                'find "$0" -type f; df -k "$0" | tail -1; exit $rc', str(root / "full")]
    started = {
        "latin1": start(["--warehouse", str(root / "x"), "-f", str(root / "latin1.sql")]),
        "latin1_e": start(["--warehouse", str(root / "x"), "-e", b"SELECT 'caf\xe9'"]),
        "damaged": start(["--warehouse", str(root / "damaged"), "-e", "SHOW TABLES; SELECT a FROM p"]),
        "full": start(["--warehouse", str(root / "full" / "wh"), "--metastore", f"sqlite:///{root / 'full.db'}",
                       "-f", str(root / "full.sql")], in_tmpfs, no_tmpfs),
        "readonly": start(["--warehouse", str(root / "readonly"), "-e", "SELECT a, ds FROM q"], skip=no_chattr),
        "ignored": start(["--warehouse", str(root / "x"), "-f", str(root / "ignored.sql")]),
    }
    yield {"runs": started, "damaged": str(damaged), "root": root, "part": part}
    for run in started.values():
        if run.proc is not None and run.proc.poll() is None:
            run.proc.kill()
            run.proc.communicate()
    if not no_chattr:
        _immutable(part, False)


def test_a_script_that_is_not_utf8_is_one_line_naming_the_file_and_offset(runs):
    rc, out, err = runs["runs"]["latin1"].result()
    assert rc == 1 and out == ""
    assert _one_line(err) == (
        f"FAILED: {runs['root'] / 'latin1.sql'} is not valid UTF-8: byte 0xe9 at offset 21 (line 2, column 12). "
        "Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8).")
    rc, out, err = runs["runs"]["latin1_e"].result()
    assert rc == 1 and out == ""
    assert _one_line(err) == ("FAILED: The -e text is not valid UTF-8: byte 0xe9 at character 11. "
                              "Give the statements as UTF-8.")


def test_a_damaged_file_found_while_printing_rows_names_the_file_and_the_table(runs):
    rc, out, err = runs["runs"]["damaged"].result()
    assert rc == 1
    assert out.splitlines() == ["p"]
    line = _one_line(err)
    assert line.startswith(f"FAILED: Cannot read {runs['damaged']} of table default.p (")
    assert "not a Parquet file" in line and "MSCK REPAIR TABLE default.p" in line


def test_a_full_disk_is_one_line_with_the_cause_and_the_table_and_leaves_nothing(runs):
    rc, out, err = runs["runs"]["full"].result()
    assert rc == 1, err
    line = _one_line(err)
    wh = runs["root"] / "full" / "wh"
    assert line.startswith(f"FAILED: No space left on device while writing {wh / 't'} of table default.t "
                           "(IOException: No space left on device). Free space")
    left = out.split("--- left:\n", 1)[1].splitlines()
    assert not [f for f in left[:-1] if "/t/" in f], out  # no data or staging file stays in the table
    assert left[-1].split()[2] == "0" or int(left[-1].split()[2]) < 100, out  # the space is free again


def test_a_read_only_table_directory_warns_and_the_warehouse_opens(runs):
    rc, out, err = runs["runs"]["readonly"].result()
    assert rc == 0, err
    assert out.splitlines() == ["2\tx"]
    lines = [line for line in err.splitlines() if line.strip() and line != "OK"
             and not line.startswith("Time taken: ")]  # Hive's trailer
    assert len(lines) == 1 and lines[0].startswith("WARNING: hivepark could not finish cleaning up after an "
                                                   "earlier statement: "), err
    assert runs["part"] in lines[0] and "Operation not permitted" in lines[0]


def test_errors_ignored_by_hive_cli_errors_ignore_let_the_script_go_on(runs):
    code, out, err = runs["runs"]["ignored"].result()
    assert out.splitlines() == ["after"]  # the statement after the first error ran
    failed = [line for line in err.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 3 and "missing_table" in failed[0] and "missing_again" in failed[1]
    # an unterminated quote fails after the statements before it ran (none ran): from line 5 the
    # rest is one statement, as Hive's CLI reads it, whose quote left open is the last one
    assert failed[2] == ("FAILED: ParseException line 6:14 unterminated string starting near '';': "
                         "add the closing '"), failed
    assert code != 0  # the last statement's status, as Hive's
