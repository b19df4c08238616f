"""Spark that cannot start, said in one line with Spark's reason (found by trying the README's
options as a new user): a ``--conf spark.sql.*`` value Spark's SQL configuration refuses hung the
command for ever, printing nothing (PySpark, converting the session's error, read the same broken
configuration again and again); a ``--master`` Spark does not know said only ``[JAVA_GATEWAY_EXITED]
Java gateway process exited before sending its port number``."""

from __future__ import annotations

import os
import subprocess

import background
from background import Background
from cli_command import hivepark_command


def _runs(bg: Background) -> None:
    wh = os.path.join(bg.tmp, "wh")
    for name, args in (("conf", ["--master", "local[1]", "--conf", "spark.sql.shuffle.partitions=abc"]),
                       ("master", ["--master", "nowhere"])):
        try:
            bg.put(name, bg.run([*hivepark_command(), "--warehouse", wh, *args, "-e", "SELECT 1"], timeout=180))
        except subprocess.TimeoutExpired as e:
            bg.put(name, e)


BACKGROUND_TESTS = {name: _runs for name in ("test_a_spark_sql_setting_spark_refuses_is_one_line",
                                             "test_a_master_spark_does_not_know_is_one_line_with_sparks_reason")}


def _failure(name: str) -> str:
    run = background.start(_runs).get(name)
    assert isinstance(run, subprocess.CompletedProcess), f"the command did not end: {run}"
    assert run.returncode == 1 and run.stdout == ""
    (line,) = [line for line in run.stderr.splitlines() if line.strip()]
    assert line.startswith("FAILED: ")
    return line


def test_a_spark_sql_setting_spark_refuses_is_one_line():
    line = _failure("conf")
    assert line.startswith("FAILED: Spark refuses the setting spark.sql.shuffle.partitions=abc: "), line
    assert "'abc'" in line and "'int'" in line and line.endswith("(--conf or connect(conf=...)).")


def test_a_master_spark_does_not_know_is_one_line_with_sparks_reason():
    line = _failure("master")
    assert line.startswith("FAILED: Spark did not start: Master must either be yarn or start with spark, k8s, or "
                           "local. Check --master"), line
