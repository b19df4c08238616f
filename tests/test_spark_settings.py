"""Spark settings (issue 14, item 3): ``--conf k=v`` and ``--hiveconf spark.k=v`` on the command
line and ``connect(conf=...)`` reach the session hivepark starts; ``SET spark.k=v`` changes a
runtime setting and refuses, clearly, one Spark reads only at start; ``SET`` shows the values in
force."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

import pytest

import background
import hivepark
from background import Background
from cli_command import hivepark_command
from hivepark.errors import UserInputError
from jvm_start import FAST_START


@pytest.mark.spark  # the hivepark command starts Spark
def test_the_command_line_gives_spark_its_settings_at_start(tmp_path):
    run = subprocess.run(
        [*hivepark_command(), "--warehouse", str(tmp_path / "wh"), "--conf", "spark.executor.memory=1234m",
         "--conf", "spark.sql.shuffle.partitions=7", "--hiveconf", "spark.sql.ansi.enabled=false",
         "-e", "SET spark.executor.memory; SET spark.sql.shuffle.partitions; SET spark.sql.ansi.enabled; "
               "SELECT CAST('x' AS INT)"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["spark.executor.memory=1234m", "spark.sql.shuffle.partitions=7",
                                       "spark.sql.ansi.enabled=false", "NULL"]
    bad = subprocess.run([*hivepark_command(), "--warehouse", str(tmp_path / "wh"), "--conf", "hive.mapred.mode=strict",
                          "-e", "SELECT 1"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 1 and "--conf takes Spark settings (spark.*)" in bad.stderr


@pytest.fixture
def restored(spark):
    saved = spark.conf.get("spark.sql.shuffle.partitions")
    yield spark
    spark.conf.set("spark.sql.shuffle.partitions", saved)


def test_set_changes_a_runtime_setting_and_refuses_a_static_one(wh, restored):
    wh.sql("SET spark.sql.shuffle.partitions=3")
    assert restored.conf.get("spark.sql.shuffle.partitions") == "3"
    assert wh.sql("SET spark.sql.shuffle.partitions").collect()[0][0] == "spark.sql.shuffle.partitions=3"
    before = wh.sql("SET spark.executor.memory").collect()[0][0]
    with pytest.raises(UserInputError, match=r"spark.executor.memory can only be set when Spark starts.*--conf"):
        wh.sql("SET spark.executor.memory=8g")
    assert wh.sql("SET spark.executor.memory").collect()[0][0] == before  # nothing recorded
    everything = [r[0] for r in wh.sql("SET").collect()]
    assert "spark.sql.shuffle.partitions=3" in everything and "hive.mapred.mode=nonstrict" in everything


def test_connect_conf_sets_spark_settings_on_a_running_session(tmp_path, restored):
    w = hivepark.connect(str(tmp_path / "w"), spark=restored, conf={"spark.sql.shuffle.partitions": "5"})
    assert restored.conf.get("spark.sql.shuffle.partitions") == "5"
    w.close()
    with pytest.raises(UserInputError, match="can only be set when Spark starts"):
        hivepark.connect(str(tmp_path / "w"), spark=restored, conf={"spark.driver.memory": "9g"})


def test_a_master_other_than_the_running_sessions_is_refused_naming_both(wh, tmp_path, restored):
    """connect(conf={'spark.master': ...}) and SET spark.master=... on a session already running
    elsewhere: Spark would take the setting silently and go on running where it runs."""
    running = restored.sparkContext.master
    for spark in (None, restored):
        with pytest.raises(UserInputError, match=rf"already runs in this process on {re.escape(running)}, "
                                                 r"so it cannot start on local\[7\]"):
            hivepark.connect(str(tmp_path / "w"), spark=spark, conf={"spark.master": "local[7]"})
    with pytest.raises(UserInputError, match=r"cannot start on local\[7\]"):
        wh.sql("SET spark.master=local[7]")
    w = hivepark.connect(str(tmp_path / "w"), conf={"spark.master": running})  # its own master: fine
    assert w.spark.sparkContext.master == running
    w.close()
    wh.sql(f"SET spark.master={running}")


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SUBMITTED_JOB = """\
import sys, hivepark
wh = hivepark.connect(sys.argv[1])
spark = wh._ctx.spark
wh.sql("CREATE TABLE t (k INT)")
wh.sql("INSERT INTO t SELECT CAST(id AS INT) FROM range(10)")
print("JOB", spark.sparkContext.master, spark.conf.get("spark.sql.shuffle.partitions"),
      spark.conf.get("spark.sql.session.timeZone"), wh.sql("SELECT count(*) FROM t").first()[0], flush=True)
wh.close()
"""


def _spark_submit(bg: Background) -> None:
    """The README's ``spark-submit --master ... job.py`` (job.py calling hivepark.connect), in
    the background as the suite starts (tests/background.py): it starts a JVM."""
    import pyspark

    job = os.path.join(bg.tmp, "job.py")
    with open(job, "w") as f:
        f.write(_SUBMITTED_JOB)
    exe = sys.executable
    env = dict(os.environ, PYSPARK_PYTHON=exe, PYSPARK_DRIVER_PYTHON=exe, HIVEPARK_MASTER="local[2]",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]))
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    bg.put("run", bg.run([os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit"),
                          "--master", "local[1]", "--conf", "spark.sql.shuffle.partitions=7",
                          "--driver-memory", "1g", "--driver-java-options", FAST_START,
                          job, os.path.join(bg.tmp, "wh")], env=env))


BACKGROUND_TESTS = {"test_spark_submit_master_and_conf_win_over_hiveparks_defaults": _spark_submit}


def test_spark_submit_master_and_conf_win_over_hiveparks_defaults():
    """spark-submit's --master and --conf reach the job's session (they ran it on local[2],
    hivepark's default, with 4 shuffle partitions); what spark-submit leaves out is hivepark's."""
    run = background.start(_spark_submit).get("run")
    assert run.returncode == 0, run.stderr[-3000:]
    assert [line for line in run.stdout.splitlines() if line.startswith("JOB ")] == ["JOB local[1] 7 UTC 10"]


def test_connect_in_another_thread_leaves_the_running_session_as_the_user_set_it(tmp_path, restored):
    """connect() without spark= in a thread other than the session's (a web server's worker)
    uses the user's session unchanged (it gave it hivepark's defaults: 4 partitions, UTC)."""
    zone = restored.conf.get("spark.sql.session.timeZone")
    restored.conf.set("spark.sql.shuffle.partitions", "7")
    restored.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        got: list = []
        thread = threading.Thread(target=lambda: got.append(hivepark.connect(str(tmp_path / "w"))))
        thread.start()
        thread.join()
        w = got[0]
        assert w._ctx.spark.sparkContext is restored.sparkContext
        assert w.sql("SHOW TABLES").collect() == []
        w.close()
        assert restored.sql("SELECT CAST(TIMESTAMP'2024-01-01 00:00:00' AS BIGINT)").first()[0] == 1704085200
        assert restored.conf.get("spark.sql.shuffle.partitions") == "7"
        assert restored.conf.get("spark.sql.session.timeZone") == "America/New_York"
    finally:
        restored.conf.set("spark.sql.session.timeZone", zone)
