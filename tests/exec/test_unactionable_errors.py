"""Errors a user can act on (issue 13, item 5): a damaged, deleted or unwritable data file, a
full disk, a NUL in a dynamic partition value, a backtick in a name and a setting of the
wrong type each come out as one hivepark error naming the file, the table or the setting and
the fix, never as ``Py4JJavaError ... calling o159``; a read-only table directory does not
stop connect(); Spark's ``${env:...}`` substitution is off."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from contextlib import contextmanager

import pytest

import hivepark
from hivepark import RecoveryWarning
from hivepark.errors import (
    DataFileError,
    HiveParkError,
    InvalidPartitionSpec,
    MetastoreError,
    ParseError,
    UserInputError,
)
from hivepark.exec.failures import spark_error, translate


def _data_files(directory: str) -> list[str]:
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if not f.startswith((".", "_")))


def _tree(root: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if ".hivepark" not in d and f != "metastore.db")


def _no_jvm_noise(message: str) -> None:
    for noise in ("Py4J", "py4j", "calling o", "\tat ", "org.apache.spark.SparkException"):
        assert noise not in message


@pytest.fixture
def p(wh):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE p (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO p PARTITION (ds) VALUES (1, 'x'), (2, 'y')")
    wh.sql("CREATE TABLE copy_of_p (a INT) STORED AS PARQUET")
    return wh


def test_a_damaged_parquet_file_names_the_file_the_table_and_the_fix(p):
    damaged = _data_files(os.path.join(p.location, "p", "ds=x"))[0]
    with open(damaged, "wb") as f:
        f.write(b"not a parquet file" * 10)
    with pytest.raises(DataFileError) as e:
        p.sql("INSERT INTO copy_of_p SELECT a FROM p")
    assert e.value.reason == "corrupt" and e.value.path == damaged and e.value.table == "default.p"
    msg = e.value.message
    assert msg.startswith(f"Cannot read {damaged} of table default.p (")
    assert "not a Parquet file" in msg and "MSCK REPAIR TABLE default.p" in msg
    _no_jvm_noise(msg)
    assert p.sql("SELECT * FROM copy_of_p").collect() == []
    # a query's rows are read when they are used: the CLI translates that failure the same way
    with pytest.raises(Exception) as raw:
        p.sql("SELECT a FROM p").collect()
    translated = translate(raw.value, p._ctx)
    assert isinstance(translated, DataFileError) and translated.message == msg


def test_a_file_holding_a_column_of_another_type_is_not_called_damaged(p, tmp_path):
    """Found by a hunt for bugs: a Parquet file holding b as STRING in a table whose b is INT failed
    every read with a message calling the file damaged and telling to move it out of the table, which
    loses its rows. The file is intact: the message says so and names the way (the column's type)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": pa.array([7], pa.int32()), "b": pa.array(["seven"])}), src)
    p.sql("CREATE TABLE typed (a INT, b INT) STORED AS PARQUET")
    p.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE typed")
    with pytest.raises(DataFileError) as e:
        p.sql("INSERT INTO copy_of_p SELECT a FROM typed WHERE b > 0")
    assert e.value.reason == "type" and e.value.table == "default.typed"
    msg = e.value.message
    assert "holds a column under another type" in msg and "The file is intact" in msg and "Move it" not in msg
    _no_jvm_noise(msg)
    assert os.path.exists(e.value.path)
    p.sql("CREATE TABLE as_file (a INT, b STRING) STORED AS PARQUET")  # the way the message names
    p.sql(f"LOAD DATA LOCAL INPATH '{e.value.path}' INTO TABLE as_file")
    assert [tuple(r) for r in p.sql("SELECT * FROM as_file").collect()] == [(7, "seven")]


def test_a_deleted_data_file_names_the_file_and_msck_repair_fixes_it(p):
    part = os.path.join(p.location, "p", "ds=x")
    gone = _data_files(part)[0]
    os.remove(gone)
    with pytest.raises(DataFileError) as e:
        p.sql("SELECT a FROM p")
    assert e.value.reason == "missing" and e.value.path == gone and e.value.table == "default.p"
    assert e.value.message == (f"File {gone} of table default.p does not exist: it was deleted or moved outside "
                               "hivepark. Run MSCK REPAIR TABLE default.p to record the files that are there now, "
                               "or restore it.")
    with pytest.raises(DataFileError, match="does not exist"):
        p.sql("INSERT INTO copy_of_p SELECT a FROM p")
    p.sql("MSCK REPAIR TABLE p")
    assert [r[0] for r in p.sql("SELECT a FROM p").collect()] == [2]


def test_a_nul_in_a_dynamic_partition_value_names_the_column_and_writes_nothing(p):
    before = _tree(p.location)
    for values in ("(3, 'a\\0b')", "(3, 'ok'), (4, concat('a', char(0)))"):
        with pytest.raises(InvalidPartitionSpec) as e:
            p.sql(f"INSERT INTO p PARTITION (ds) VALUES {values}")
        assert e.value.message.startswith("A dynamic partition value for column ds contains a NUL character")
        assert "the write left nothing behind" in e.value.message and "replace(ds, char(0), '')" in e.value.message
    assert _tree(p.location) == before
    assert not [d for d in os.listdir(os.path.join(p.location, "p")) if d.startswith(".hive-staging")]
    assert sorted(r[0] for r in p.sql("SHOW PARTITIONS p").collect()) == ["ds=x", "ds=y"]


def test_a_full_disk_keeps_the_root_cause_and_names_the_table(p, spark):
    """A full disk cannot be made on demand here: a Java exception chain as Spark raises it
    when a task's write fails with ENOSPC is translated. (tests/test_cli_errors.py fills a
    real, tiny file system.)"""
    from py4j.protocol import Py4JJavaError

    jvm = spark.sparkContext._jvm
    staging = os.path.join(p.location, "p", ".hive-staging_hivepark_1_abc", "data")
    root = jvm.java.io.IOException("No space left on device")
    wrapped = jvm.org.apache.spark.SparkException(
        f"[TASK_WRITE_FAILED] Task failed while writing rows to file:{staging}. SQLSTATE: 58030", root)
    err = Py4JJavaError("An error occurred while calling o1234.save.\n", wrapped)
    translated = translate(err, p._ctx)
    assert isinstance(translated, DataFileError) and translated.reason == "no_space"
    assert translated.path == os.path.join(p.location, "p") and translated.table == "default.p"
    assert translated.message.startswith(
        f"No space left on device while writing {os.path.join(p.location, 'p')} of table default.p "
        "(IOException: No space left on device). Free space")
    _no_jvm_noise(translated.message)
    # the same from the file system layer (a commit moving files) and without a table at hand
    oserr = OSError(28, "No space left on device", os.path.join(p.location, "p", "ds=x", "f.parquet"))
    assert translate(oserr, p._ctx).message.startswith(  # type: ignore[attr-defined]
        f"No space left on device while writing {oserr.filename} of table default.p")
    assert "No space left on device" in spark_error(err).message  # type: ignore[attr-defined]


def test_the_root_cause_survives_for_any_spark_failure(spark):
    from py4j.protocol import Py4JJavaError

    jvm = spark.sparkContext._jvm
    root = jvm.java.lang.IllegalStateException("the real reason")
    err = Py4JJavaError("An error occurred while calling o99.collectToPython.\n",
                        jvm.org.apache.spark.SparkException("Job aborted due to stage failure", root))
    assert spark_error(err).message == (  # type: ignore[attr-defined]
        "Spark failed: Job aborted due to stage failure Cause: IllegalStateException: the real reason")


@contextmanager
def _immutable(*paths: str):
    """Directories even root cannot change (chattr +i): tests run as root, for whom chmod a-w
    changes nothing."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: cannot make a directory root cannot write")
    done = []
    try:
        for path in paths:
            r = subprocess.run(["chattr", "+i", path], capture_output=True, text=True)
            if r.returncode != 0:
                pytest.skip(f"chattr +i is not permitted here ({r.stderr.strip()}): cannot make a "
                            "directory root cannot write")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", path], check=True)


def test_a_read_only_table_directory_fails_its_statements_clearly_and_never_connect(p, spark):
    part = os.path.join(p.location, "p", "ds=x")
    old = _data_files(part)
    p.sql("SET hivepark.files.retention.seconds=0.2")
    p.sql("INSERT OVERWRITE TABLE p PARTITION (ds) VALUES (5, 'x')")  # the old file expires in 0.2s
    with _immutable(part, os.path.join(p.location, "copy_of_p")):
        time.sleep(0.5)
        for _ in range(2):  # every later connect() opens; the clean-up waits
            with pytest.warns(RecoveryWarning, match="could not finish cleaning up.*" + old[0]):
                hivepark.connect(p.location, spark=spark).close()
        with pytest.raises(DataFileError) as e:
            p.sql("INSERT INTO copy_of_p VALUES (1)")
        assert e.value.reason == "permission"
        assert e.value.message.startswith(f"No permission to use {os.path.join(p.location, 'copy_of_p')} of "
                                          "table default.copy_of_p")
        _no_jvm_noise(e.value.message)
        assert os.path.exists(old[0])
    hivepark.connect(p.location, spark=spark).close()  # writable again: the clean-up is done
    assert not os.path.exists(old[0])
    assert sorted(tuple(r) for r in p.sql("SELECT a, ds FROM p").collect()) == [(2, "y"), (5, "x")]


def test_spark_variable_substitution_is_off(wh, spark):
    assert wh.sql("SELECT '${env:HOME}', '${system:user.name}', '${hivevar:x}'").collect()[0][:] == (
        "${env:HOME}", "${system:user.name}", "${hivevar:x}")
    assert spark.conf.get("spark.sql.variable.substitute") == "false"


def test_a_session_given_to_connect_gets_substitution_off_too(tmp_path, spark):
    spark.conf.set("spark.sql.variable.substitute", "true")
    with hivepark.connect(str(tmp_path / "w2"), spark=spark) as w:
        assert w.sql("SELECT '${env:HOME}'").collect()[0][0] == "${env:HOME}"


@pytest.mark.parametrize("statement, where, name", [
    ("CREATE TABLE bt (a INT,\n  `x``y` STRING)", "line 2:3", "x`y"),
    ("CREATE TABLE bt2 AS SELECT 1 AS `a``b`", "line 1:33", "a`b"),
    ("CREATE TABLE bt3 (a INT) PARTITIONED BY (`p``q` STRING)", "line 1:42", "p`q"),
    ("ALTER TABLE copy_of_p ADD COLUMNS (`c``d` INT)", "line 1:36", "c`d"),
    ("SELECT `a``b` FROM copy_of_p", "line 1:8", "a`b"),
], ids=["create", "ctas-alias", "partition-column", "add-columns", "select"])
def test_a_backtick_in_a_name_is_a_parse_error_where_it_is_written(p, statement, where, name):
    with pytest.raises(ParseError) as e:
        p.sql(statement)
    assert e.value.message.startswith(f"ParseException {where} cannot recognize input near ")
    assert f"(the name {name})" in e.value.message
    assert sorted(p.catalog.list_tables("default")) == ["copy_of_p", "p"]
    assert [c.name for c in p.catalog.get_table("default", "copy_of_p").columns] == ["a"]


def test_a_setting_of_the_wrong_type_is_refused_when_set(p):
    with pytest.raises(UserInputError) as e:
        p.sql("SET hive.exec.max.dynamic.partitions=abc")
    assert e.value.message == (
        "'SET hive.exec.max.dynamic.partitions=abc' FAILED because hive.exec.max.dynamic.partitions expects INT "
        "type value. Give a whole number, e.g. SET hive.exec.max.dynamic.partitions=1000 (the default).")
    assert p.conf("hive.exec.max.dynamic.partitions") == "1000"
    p.sql("INSERT INTO p PARTITION (ds) VALUES (3, 'z')")  # the setting kept its value
    for bad in ("hive.exec.dynamic.partition=yes", "hive.exec.max.created.files=1e3",
                "hive.exec.max.dynamic.partitions=99999999999", "hivepark.files.retention.seconds=soon"):
        with pytest.raises(UserInputError, match="FAILED because .* expects (INT|LONG|BOOLEAN|FLOAT) type value"):
            p.sql(f"SET {bad}")
    p.sql("SET hive.exec.dynamic.partition=FALSE")
    assert p.conf("hive.exec.dynamic.partition") == "FALSE"


def test_a_setting_of_a_set_of_values_refuses_another_when_set(p):
    """Found by following the README: SET hive.msck.path.validation=skp (a typo of skip) was
    kept, and MSCK REPAIR then failed as with throw; Hive's StringSet validators refuse it."""
    with pytest.raises(UserInputError) as e:
        p.sql("SET hive.msck.path.validation=skp")
    assert e.value.message == (
        "'SET hive.msck.path.validation=skp' FAILED in validation : Invalid value.. expects one of "
        "[throw, skip, ignore]. Give one of them, e.g. SET hive.msck.path.validation=throw (the default).")
    with pytest.raises(UserInputError, match=r"expects one of \[none, column\]"):
        p.sql("SET hive.support.quoted.identifiers=off")
    assert p.conf("hive.msck.path.validation") == "throw"
    assert p.conf("hive.support.quoted.identifiers") == "column"
    p.sql("SET hive.msck.path.validation=SKIP")  # Hive compares without case
    p.sql("SET hive.support.quoted.identifiers=None")
    assert p.conf("hive.msck.path.validation") == "SKIP"


def test_another_default_partition_name_is_refused_when_set(p, tmp_path, spark):
    """Found by a hunt for bugs: SET hive.exec.default.partition.name=X was accepted and
    ignored (NULL still went to __HIVE_DEFAULT_PARTITION__). hivepark keeps Hive's default name
    on every path, so another is refused, naming the setting and the name hivepark uses."""
    with pytest.raises(UserInputError) as e:
        p.sql("SET hive.exec.default.partition.name=MY_DEFAULT")
    assert e.value.message.startswith("'SET hive.exec.default.partition.name=MY_DEFAULT' is refused: hivepark "
                                      "always writes the rows whose partition value is NULL or '' to the "
                                      "directory __HIVE_DEFAULT_PARTITION__"), e.value.message
    assert e.value.message.endswith("Leave hive.exec.default.partition.name at __HIVE_DEFAULT_PARTITION__.")
    assert p.conf("hive.exec.default.partition.name") == "__HIVE_DEFAULT_PARTITION__"
    p.sql("SET hive.exec.default.partition.name=__HIVE_DEFAULT_PARTITION__")  # its own value is fine
    p.sql("INSERT INTO p PARTITION (ds) VALUES (4, NULL)")
    assert "ds=__HIVE_DEFAULT_PARTITION__" in [r[0] for r in p.sql("SHOW PARTITIONS p").collect()]
    with pytest.raises(UserInputError, match="is refused: hivepark always writes"):
        hivepark.connect(str(tmp_path / "w4"), spark=spark, conf={"hive.exec.default.partition.name": "X"})


def test_connect_refuses_a_setting_of_the_wrong_type(tmp_path, spark):
    with pytest.raises(UserInputError, match="hive.exec.max.created.files expects LONG type value"):
        hivepark.connect(str(tmp_path / "w3"), spark=spark, conf={"hive.exec.max.created.files": "many"})


@pytest.mark.parametrize("url", [
    "nodriver://bob:Pw-93hd@127.0.0.1/x",
    "postgresql+nosuchdriver://bob:Pw-93hd@127.0.0.1/x",
    "bob:Pw-93hd@127.0.0.1",
])
def test_a_metastore_url_that_cannot_open_is_one_error_without_its_password(tmp_path, url):
    with pytest.raises(MetastoreError) as e:
        hivepark.connect(str(tmp_path / "w4"), url, spark=object())  # type: ignore[arg-type]
    assert "Pw-93hd" not in str(e.value) and "Cannot open the metastore at" in str(e.value)
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_file_errors_outside_spark_are_hivepark_errors(p):
    err = translate(PermissionError(1, "Operation not permitted", "/nowhere/f"), p._ctx)
    assert isinstance(err, DataFileError) and err.path == "/nowhere/f" and err.table is None
    assert isinstance(translate(ValueError("a bug"), p._ctx), ValueError)  # bugs stay visible
    assert isinstance(translate(OSError("odd"), p._ctx), HiveParkError)
