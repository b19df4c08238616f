"""Two connections to one warehouse (issue 13, item 4): a partition dropped or added while a
write is in flight never comes back as a dangling file list, and a reader that planned before
an INSERT OVERWRITE committed still reads the version it planned (the replaced files wait out
``hivepark.files.retention.seconds``)."""

from __future__ import annotations

import os
import shutil

import pytest

import hivepark
from hivepark.errors import CommitConflict, UserInputError
from hivepark.storage import commit


@pytest.fixture
def two(tmp_path, spark):
    root = str(tmp_path / "warehouse")
    a = hivepark.connect(root, spark=spark)
    a.sql("CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (1), (2)")
    a.sql("INSERT INTO t PARTITION (ds='b') VALUES (3)")
    b = hivepark.connect(root, spark=spark)
    yield a, b
    a.close()
    b.close()


def _rows(wh):
    return sorted(tuple(r) for r in wh.sql("SELECT k, ds FROM t").collect())


def _spark_rows(spark, wh):
    """Plain Spark over the files the metastore lists (what hivepark must agree with)."""
    t = wh.catalog.get_table("default", "t")
    out = []
    for p in wh.catalog.list_partitions(t):
        paths = [f"{p.location}/{f}" for f in p.files or ()]
        assert all(os.path.exists(x) for x in paths), f"{p.name} lists a missing file"
        if paths:
            out += [(r[0], p.values[0]) for r in spark.read.parquet(*paths).collect()]
    return sorted(out)


def _between_plan_and_commit(monkeypatch, action):
    """Runs ``action`` once, after the writer planned its commit and before the metastore
    transaction: the moment a concurrent DDL statement can slip in."""
    plan = commit._plan
    fired: list[bool] = []

    def planned_then_interleaved(*args, **kwargs):
        out = plan(*args, **kwargs)
        if not fired:
            fired.append(True)
            action()
        return out

    monkeypatch.setattr(commit, "_plan", planned_then_interleaved)
    return fired


def test_drop_partition_during_an_insert_does_not_resurrect_its_files(two, spark, monkeypatch):
    a, b = two
    fired = _between_plan_and_commit(
        monkeypatch, lambda: b.sql("ALTER TABLE t DROP PARTITION (ds='a')"))
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)")
    assert fired
    # The insert re-planned on the table without ds='a': only its own row is there.
    assert _rows(a) == [(3, "b"), (9, "a")] == _spark_rows(spark, a)
    assert _rows(b) == _rows(a)


def test_add_partition_during_an_insert_is_kept(two, spark, monkeypatch, tmp_path):
    a, b = two
    fired = _between_plan_and_commit(
        monkeypatch, lambda: b.sql("ALTER TABLE t ADD PARTITION (ds='c')"))
    a.sql("INSERT INTO t PARTITION (ds='d') VALUES (7)")
    assert fired
    parts = [r[0] for r in a.sql("SHOW PARTITIONS t").collect()]
    assert parts == ["ds=a", "ds=b", "ds=c", "ds=d"]
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b"), (7, "d")] == _spark_rows(spark, a)


def test_a_reader_planned_before_an_overwrite_reads_its_version(two, spark):
    a, b = two
    b.sql("SET hivepark.files.retention.seconds=60")
    before = a.sql("SELECT k, ds FROM t")  # planned: the files of the current version
    b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT 5")
    assert sorted(tuple(r) for r in before.collect()) == [(1, "a"), (2, "a"), (3, "b")]
    assert _rows(a) == [(3, "b"), (5, "a")] == _spark_rows(spark, a)


def test_replaced_files_are_deleted_once_their_retention_passed(two, spark):
    a, b = two
    t = a.catalog.get_table("default", "t")
    old = [f"{p.location}/{f}" for p in a.catalog.list_partitions(t) if p.values == ("a",)
           for f in p.files or ()]
    b.sql("SET hivepark.files.retention.seconds=60")
    b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT 5")
    assert old and all(os.path.exists(f) for f in old)  # kept for readers
    records = os.listdir(commit.expiring_dir(a.location))
    assert len(records) == 1
    assert commit.delete_expired(a.location) == 0  # not yet due
    assert commit.delete_expired(a.location, now=float("inf")) == 1
    assert not any(os.path.exists(f) for f in old)
    assert os.listdir(commit.expiring_dir(a.location)) == []
    assert _rows(a) == [(3, "b"), (5, "a")] == _spark_rows(spark, a)


def test_an_insert_whose_source_is_overwritten_meanwhile_runs_again(two, spark, monkeypatch):
    """By default replaced files go at once (directories hold exactly the table); a write
    that planned on them and then finds them gone plans again on the new version."""
    from hivepark.exec import write

    a, b = two
    a.sql("CREATE TABLE copy (k INT, ds STRING) STORED AS PARQUET")
    real = write.spark_write
    calls: list[str] = []

    def overwritten_first(df, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT 5")
        return real(df, path, *args, **kwargs)

    monkeypatch.setattr(write, "spark_write", overwritten_first)
    a.sql("INSERT INTO copy SELECT k, ds FROM t")
    assert len(calls) == 3  # b's overwrite; the first run read a replaced file, rolled back and ran again
    got = sorted(tuple(r) for r in a.sql("SELECT k, ds FROM copy").collect())
    assert got == [(3, "b"), (5, "a")] == _rows(a)
    assert not [d for d in os.listdir(os.path.join(a.location, "copy")) if d.startswith(".")]


def test_retention_zero_deletes_at_once_and_a_bad_value_is_refused(two):
    a, _ = two
    t = a.catalog.get_table("default", "t")
    old = [f"{p.location}/{f}" for p in a.catalog.list_partitions(t) for f in p.files or ()]
    a.sql("SET hivepark.files.retention.seconds=0")
    a.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    a.sql("INSERT OVERWRITE TABLE t PARTITION (ds) SELECT 4, 'a' UNION ALL SELECT 6, 'b'")
    assert not any(os.path.exists(f) for f in old)
    with pytest.raises(UserInputError, match="retention.seconds expects FLOAT type value"):
        a.sql("SET hivepark.files.retention.seconds=soon")
    assert a.conf("hivepark.files.retention.seconds") == "0"
    assert _rows(a) == [(4, "a"), (6, "b")]


# A commit that loses the race to another statement's commit is planned again on the table as
# that statement left it only when that is right: a blind INSERT INTO / OVERWRITE into the
# same table, its partitions where they were. A statement whose rows depend on what it read
# keeps its premise or fails, naming what changed; nothing of it is left either way.


def _leftovers(wh, table="t"):
    """Files under the table's directory that the metastore does not record, and staging."""
    t = wh.catalog.get_table("default", table)
    recorded = {os.path.normpath(f"{p.location}/{f}") for p in wh.catalog.list_partitions(t)
                for f in p.files or ()} if t.is_partitioned else set()
    out = []
    for d, dirs, files in os.walk(t.location):
        out += [os.path.join(d, x) for x in dirs if x.startswith(".hive-staging")]
        out += [os.path.join(d, f) for f in files
                if not f.startswith(".") and os.path.normpath(os.path.join(d, f)) not in recorded]
    return out


def test_concatenate_racing_an_insert_keeps_the_inserted_rows(two, spark, monkeypatch):
    a, b = two
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (3)")  # ds='a': two files to merge
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)"))
    a.sql("ALTER TABLE t PARTITION (ds='a') CONCATENATE")
    assert fired
    # exactly the two merged files were replaced (by one); the concurrent insert's file stays
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "a"), (3, "b"), (99, "a")] == _spark_rows(spark, a)
    part = a.catalog.get_partition(a.catalog.get_table("default", "t"), ("a",))
    assert len(part.files) == 2 and part.parameters["numRows"] == "4"
    assert int(part.parameters["totalSize"]) == sum(os.path.getsize(f"{part.location}/{f}") for f in part.files)
    assert _leftovers(a) == []


def test_concatenate_racing_an_overwrite_fails_and_leaves_the_overwrite(two, spark, monkeypatch):
    a, b = two
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (3)")
    fired = _between_plan_and_commit(
        monkeypatch, lambda: b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT 7"))
    with pytest.raises(CommitConflict, match=r"Commit conflict on table default\.t: another statement replaced "
                       r"or removed files of partition ds=a while this statement rewrote them .*"
                       r"Nothing was changed; run the statement again\."):
        a.sql("ALTER TABLE t PARTITION (ds='a') CONCATENATE")
    assert fired
    assert _rows(a) == [(3, "b"), (7, "a")] == _spark_rows(spark, a)
    assert _leftovers(a) == []


@pytest.mark.parametrize("query", ["SELECT k * 10 FROM t WHERE ds='a'",
                                   "SELECT k * 10 FROM v WHERE ds='a'"])  # through a view too
def test_an_overwrite_reading_its_table_racing_an_insert_fails(two, spark, monkeypatch, query):
    a, b = two
    a.sql("CREATE VIEW v AS SELECT * FROM t")
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)"))
    # ran after the insert, it would write 10, 20, 990: having read the table without 99, its
    # rows are right for no order of the two, so it fails rather than delete 99
    with pytest.raises(CommitConflict, match=r"Commit conflict on table default\.t: another statement changed it "
                       r"\(from version \d+ to \d+\) while this statement ran, and this statement's query reads "
                       r"that table, .* Nothing was changed; run the statement again\."):
        a.sql(f"INSERT OVERWRITE TABLE t PARTITION (ds='a') {query}")
    assert fired
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b"), (99, "a")] == _spark_rows(spark, a)
    assert _leftovers(a) == []
    a.sql(f"INSERT OVERWRITE TABLE t PARTITION (ds='a') {query}")  # run again: as after the insert
    assert _rows(a) == [(3, "b"), (10, "a"), (20, "a"), (990, "a")] == _spark_rows(spark, a)


def test_a_python_insert_of_rows_read_from_its_table_racing_an_insert_fails(two, spark, monkeypatch):
    a, b = two
    df = a.table("t").where("ds = 'a'").selectExpr("k * 10 AS k")
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)"))
    with pytest.raises(CommitConflict, match=r"this statement's query reads that table, .* run the statement again"):
        a.insert(df, "t", partition={"ds": "a"}, overwrite=True)
    assert fired
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b"), (99, "a")] == _spark_rows(spark, a)
    assert _leftovers(a) == []
    # a DataFrame of other rows is a blind write: planned again, as if after the insert
    fired.clear()
    a.insert(spark.createDataFrame([(5,)], "k INT"), "t", partition={"ds": "a"}, overwrite=True)
    assert fired
    assert _rows(a) == [(3, "b"), (5, "a")] == _spark_rows(spark, a)


def test_a_blind_overwrite_racing_an_insert_is_planned_again(two, spark, monkeypatch):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)"))
    a.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT 5")  # reads nothing: as if after the insert
    assert fired
    assert _rows(a) == [(3, "b"), (5, "a")] == _spark_rows(spark, a)
    assert _leftovers(a) == []


def test_two_inserts_into_one_partition_both_land(two, spark, monkeypatch):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)"))
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (7)")
    assert fired
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b"), (7, "a"), (99, "a")] == _spark_rows(spark, a)
    assert a.catalog.get_partition(a.catalog.get_table("default", "t"), ("a",)).parameters["numRows"] == "4"


def test_insert_overwrite_if_not_exists_racing_its_partitions_creation_writes_nothing(two, spark, monkeypatch):
    a, b = two
    fired = _between_plan_and_commit(
        monkeypatch, lambda: b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='n') IF NOT EXISTS SELECT 2"))
    a.sql("INSERT OVERWRITE TABLE t PARTITION (ds='n') IF NOT EXISTS SELECT 1")
    assert fired
    # B created ds='n' first: A's premise (no such partition) is false, so A writes nothing, as
    # it would have run after B
    assert _rows(a) == [(1, "a"), (2, "a"), (2, "n"), (3, "b")] == _spark_rows(spark, a)
    assert _leftovers(a) == []


@pytest.mark.parametrize("change", ["ADD PARTITION (ds='d') LOCATION '{ext}'",
                                    "PARTITION (ds='a') SET LOCATION '{ext}'"])
def test_a_partition_located_elsewhere_meanwhile_fails_the_insert(two, spark, monkeypatch, tmp_path, change):
    a, b = two
    ext = tmp_path / "ext"
    ext.mkdir()
    spark.createDataFrame([(100,)], "k INT").coalesce(1).write.mode("overwrite").parquet(str(ext / "out"))
    data = next(f for f in os.listdir(ext / "out") if f.endswith(".parquet"))
    os.rename(ext / "out" / data, ext / "data.parquet")
    shutil.rmtree(ext / "out")
    ds = "d" if "ADD" in change else "a"
    old_dir = os.path.join(a.location, "t", "ds=a")
    before = sorted(os.listdir(old_dir))
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql(f"ALTER TABLE t {change.format(ext=ext)}"))
    with pytest.raises(CommitConflict, match=rf"Commit conflict on table default\.t: partition ds={ds} is now at "
                       rf"{ext}, not at .*/t/ds={ds} where this statement wrote its files: another statement "
                       r"added it with a LOCATION or moved it \(SET LOCATION\) while this statement ran\. Nothing "
                       r"was changed; run the statement again\."):
        a.sql(f"INSERT INTO t PARTITION (ds='{ds}') VALUES (1)")
    assert fired
    # B's location holds; its rows are read from there, and A left nothing in either directory
    part = a.catalog.get_partition(a.catalog.get_table("default", "t"), (ds,))
    assert part.location == str(ext)
    assert (100, ds) in _rows(a)
    assert sorted(os.listdir(ext)) == ["data.parquet"]
    assert not os.path.exists(os.path.join(a.location, "t", "ds=d"))
    assert sorted(os.listdir(old_dir)) == before  # (SET LOCATION: the partition's old files only)
    assert _rows(a) == _rows(b)


@pytest.mark.parametrize("new", ["CREATE TABLE t (name STRING, n BIGINT) STORED AS ORC",
                                 "CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET"])
def test_an_insert_into_a_table_dropped_and_created_again_fails(two, spark, monkeypatch, new):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: (b.sql("DROP TABLE t"), b.sql(new)))
    with pytest.raises(CommitConflict, match=r"Commit conflict on table default\.t: another statement dropped it "
                       r"and created a table of that name again while this statement ran, so the files this "
                       r"statement wrote were for a table that no longer exists\. Nothing was changed; run the "
                       r"statement again\."):
        a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)")
    assert fired
    assert b.sql("SELECT * FROM t").collect() == []  # the new table: empty, and readable
    t = b.catalog.get_table("default", "t")
    assert t.properties.get("numRows", "0") == "0"
    assert [f for _, _, fs_ in os.walk(t.location) for f in fs_] == []


def test_an_insert_into_a_table_whose_columns_changed_meanwhile_fails(two, spark, monkeypatch):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("ALTER TABLE t ADD COLUMNS (v STRING)"))
    with pytest.raises(CommitConflict, match=r"Commit conflict on table default\.t: another statement changed its "
                       r"columns while this statement ran \(ALTER TABLE\), so the files this statement wrote no "
                       r"longer fit it\. Nothing was changed; run the statement again\."):
        a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)")
    assert fired
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b")] == _spark_rows(spark, a)
    assert _leftovers(a) == []
