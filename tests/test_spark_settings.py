"""Spark settings (issue 14, item 3): ``--conf k=v`` and ``--hiveconf spark.k=v`` on the command
line and ``connect(conf=...)`` reach the session hivepark starts; ``SET spark.k=v`` changes a
runtime setting and refuses, clearly, one Spark reads only at start; ``SET`` shows the values in
force."""

from __future__ import annotations

import subprocess

import pytest

import hivepark
from cli_command import hivepark_command
from hivepark.errors import UserInputError


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
