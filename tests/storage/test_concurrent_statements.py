"""Two connections to one warehouse (issue 13, item 4): a partition dropped or added while a
write is in flight never comes back as a dangling file list, and a reader that planned before
an INSERT OVERWRITE committed still reads the version it planned (the replaced files wait out
``hivepark.files.retention.seconds``).

The files a statement moved into a directory whose files the metastore does not record (a
partition made by ADD PARTITION, a new table) are not the table's until it commits: no other
statement reads, adopts, registers or deletes them, and if its process dies (:func:`_dies_at`
leaves everything on disk as kill -9 would) the next ``connect()`` removes them and nothing
else, and keeps what a committed statement wrote."""

from __future__ import annotations

import os

import pytest

import hivepark
from hivepark.errors import UserInputError
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


# -- uncommitted files in a directory whose files the metastore does not record -------------


@pytest.fixture
def listed(tmp_path, spark):
    """Two connections; t's partition ds='c' was made by ADD PARTITION (its files are listed)."""
    root = str(tmp_path / "warehouse")
    a = hivepark.connect(root, spark=spark, conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    a.sql("CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    a.sql("ALTER TABLE t ADD PARTITION (ds='c')")
    b = hivepark.connect(root, spark=spark, conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    yield a, b
    a.close()
    b.close()


def _missing_recorded_files(wh, table: str = "t") -> list[str]:
    """The files the metastore records for ``table`` that are missing on disk."""
    import json

    t = wh.catalog.get_table("default", table)
    if not t.is_partitioned:
        raw = t.properties.get(commit.FILES_PARAM)
        paths = [f"{t.location}/{f}" for f in json.loads(raw)] if raw else []
    else:
        paths = [f"{p.location}/{f}" for p in wh.catalog.list_partitions(t) for f in p.files or ()]
    return [x for x in paths if not os.path.exists(x)]


@pytest.mark.parametrize("other", [
    "ALTER TABLE t DROP PARTITION (ds='c')",
    "TRUNCATE TABLE t PARTITION (ds='c')",
    "INSERT OVERWRITE TABLE t PARTITION (ds='c') SELECT 5",
])
def test_a_statement_on_a_listed_partition_leaves_an_insert_in_flight_alone(listed, spark, monkeypatch, other):
    """Bug: B's statement took the files A had moved into ds='c' (not yet committed) for the
    partition's and deleted or replaced them; A's commit then recorded a deleted file."""
    a, b = listed
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql(other))
    a.sql("INSERT INTO t PARTITION (ds='c') VALUES (1)")
    assert fired
    assert _missing_recorded_files(a) == []
    rows = _rows(a)
    # serially B then A: A's row is there, B's with it unless B removed the partition's rows
    assert rows == ([(1, "c"), (5, "c")] if "OVERWRITE" in other else [(1, "c")]) == _spark_rows(spark, a)


def test_concatenate_of_a_listed_partition_leaves_an_insert_in_flight_alone(listed, spark, monkeypatch):
    """Bug: CONCATENATE of ds='c' (two files copied in, listed) merged the file A had moved in
    but not committed, and deleted it; A's commit then recorded the deleted file."""
    a, b = listed
    part = a.catalog.get_partition(a.catalog.get_table("default", "t"), ("c",)).location
    spark.range(10, 12).selectExpr("CAST(id AS INT) AS k").repartition(2).write.mode("append").parquet(part)
    for name in os.listdir(part):
        if name.startswith((".", "_")):
            os.remove(os.path.join(part, name))
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("ALTER TABLE t PARTITION (ds='c') CONCATENATE"))
    a.sql("INSERT INTO t PARTITION (ds='c') VALUES (1)")
    assert fired
    assert _missing_recorded_files(a) == []
    assert _rows(a) == [(1, "c"), (10, "c"), (11, "c")] == _spark_rows(spark, a)


def test_an_overwrite_of_a_new_table_leaves_an_insert_in_flight_alone(tmp_path, spark, monkeypatch):
    """Bug: a table just created records no file list; B's INSERT OVERWRITE deleted the file A's
    INSERT INTO had moved in, A's commit recorded it anyway, and reading t failed."""
    root = str(tmp_path / "warehouse")
    a = hivepark.connect(root, spark=spark)
    b = hivepark.connect(root, spark=spark)
    a.sql("CREATE TABLE t (k INT) STORED AS PARQUET")
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT OVERWRITE TABLE t SELECT 5"))
    a.sql("INSERT INTO t VALUES (1)")
    assert fired
    assert _missing_recorded_files(a) == []
    files = [os.path.join(a.catalog.get_table("default", "t").location, f) for f in
             __import__("json").loads(a.catalog.get_table("default", "t").properties[commit.FILES_PARAM])]
    assert sorted(tuple(r) for r in a.sql("SELECT k FROM t").collect()) == [(1,), (5,)] \
        == sorted(tuple(r) for r in spark.read.parquet(*files).collect())
    a.close()
    b.close()


def test_a_reader_never_sees_half_of_an_uncommitted_write(listed, monkeypatch):
    """Bug: B's SELECT, while A's two-partition INSERT had moved its files but not committed,
    read ds='c' (listed) with A's file in it: half of A's write."""
    a, b = listed
    seen = []
    _between_plan_and_commit(monkeypatch, lambda: seen.append(_rows(b)))
    a.sql("INSERT INTO t PARTITION (ds) SELECT id, IF(id = 0, 'c', 'd') FROM range(2)")
    assert seen == [[]]
    assert _rows(b) == [(0, "c"), (1, "d")]


class _Killed(BaseException):
    """What kill -9 is to a statement, in this process (see _dies_at)."""


def _dies_at(monkeypatch, point: str, before=lambda: None) -> None:
    """The next statement to reach ``commit.fault_point(point)`` runs ``before`` there, then dies
    as under kill -9: everything it wrote stays on disk (no abort, no cleanup) and its journal
    is no longer renewed nor owned by a running statement, so that the next ``connect()``
    recovers it as a dead process's."""
    real_point, real_exit = commit.fault_point, commit.Commit.__exit__

    def point_reached(name):
        if name == point:
            monkeypatch.setattr(commit, "fault_point", real_point)
            before()
            raise _Killed(point)
        real_point(name)

    def exit_as_killed(self, exc_type, exc, tb):
        if not isinstance(exc, _Killed):
            return real_exit(self, exc_type, exc, tb)
        self._journal._stop.set()
        with commit._lock:
            commit._in_flight.discard(self._journal.path)
        return None

    monkeypatch.setattr(commit, "fault_point", point_reached)
    monkeypatch.setattr(commit.Commit, "__exit__", exit_as_killed)


def test_a_killed_writers_files_are_not_adopted_by_an_insert_beside_them(listed, spark, monkeypatch):
    """Bug: A moved its file into ds='c' (listed) and was killed before its metastore commit;
    B's INSERT INTO ds='c' meanwhile recorded A's file as the partition's, so that recovery
    took A for committed and A's row stayed."""
    a, b = listed
    _dies_at(monkeypatch, "before_commit", lambda: b.sql("INSERT INTO t PARTITION (ds='c') SELECT 6"))
    with pytest.raises(_Killed):
        a.sql("INSERT INTO t PARTITION (ds='c') VALUES (1)")
    c = hivepark.connect(a.location, spark=spark)  # recovery undoes A
    assert _rows(c) == [(6, "c")] == _spark_rows(spark, c)
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert len(os.listdir(os.path.join(a.location, "t", "ds=c"))) == 1  # A's file went, B's stayed
    c.close()


def test_recovery_of_a_writer_killed_mid_move_keeps_a_later_inserts_files(listed, spark, monkeypatch):
    """Bug: A was killed while moving its files into ds='c'; B's INSERT INTO ds='c' then recorded
    A's file, and recovery deleted it: reading t failed, the file missing."""
    a, b = listed
    _dies_at(monkeypatch, "during_move")
    with pytest.raises(_Killed):
        a.sql("INSERT INTO t PARTITION (ds='c') VALUES (1)")
    b.sql("INSERT INTO t PARTITION (ds='c') SELECT 6")
    c = hivepark.connect(a.location, spark=spark)
    assert _missing_recorded_files(c) == []
    assert _rows(c) == [(6, "c")] == _spark_rows(spark, c)
    c.close()


def test_msck_repair_does_not_register_a_killed_writers_files(listed, spark, monkeypatch):
    """Bug: MSCK REPAIR TABLE registered ds='new', whose directory held only the file of a
    writer killed before its commit; recovery then deleted the file the partition recorded."""
    a, b = listed
    _dies_at(monkeypatch, "during_move")
    with pytest.raises(_Killed):
        a.sql("INSERT INTO t PARTITION (ds='new') VALUES (1)")
    b.sql("MSCK REPAIR TABLE t")
    assert [r[0] for r in b.sql("SHOW PARTITIONS t").collect()] == ["ds=c"]
    c = hivepark.connect(a.location, spark=spark)
    assert [r[0] for r in c.sql("SHOW PARTITIONS t").collect()] == ["ds=c"]
    assert _missing_recorded_files(c) == [] and _rows(c) == []
    c.close()


def test_recovery_keeps_a_killed_overwrite_that_committed_though_a_later_one_replaced_part_of_it(
        two, spark, monkeypatch):
    """Bug: A's INSERT OVERWRITE of ds='a' and ds='b' was killed right after its commit; B then
    overwrote ds='a'. Recovery judged from A's first file (ds='a', replaced by B) that A had not
    committed and deleted A's file in ds='b', which the metastore records."""
    a, b = two
    a.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    _dies_at(monkeypatch, "after_commit")
    with pytest.raises(_Killed):
        a.sql("INSERT OVERWRITE TABLE t PARTITION (ds) SELECT id, IF(id < 2, 'a', 'b') FROM range(4)")
    b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') VALUES (100)")
    c = hivepark.connect(a.location, spark=spark)
    assert _missing_recorded_files(c) == []
    assert _rows(c) == [(2, "b"), (3, "b"), (100, "a")] == _spark_rows(spark, c)
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert c.catalog.committed_statements() == set()  # a commit's record goes with its journal
    c.close()


def test_a_committed_statement_not_yet_cleaned_up_keeps_its_files_in_a_listing(listed, spark, monkeypatch):
    """A statement that committed but whose journal is still there (killed before its
    cleanup) wrote files of the table: a listing of ds='c' (its file list dropped by SET
    LOCATION) keeps them, and so do a later INSERT and the recovery."""
    a, b = listed
    loc = a.catalog.get_partition(a.catalog.get_table("default", "t"), ("c",)).location
    _dies_at(monkeypatch, "after_commit")
    with pytest.raises(_Killed):
        a.sql("INSERT INTO t PARTITION (ds='c') VALUES (1)")
    b.sql(f"ALTER TABLE t PARTITION (ds='c') SET LOCATION '{loc}'")
    assert _rows(b) == [(1, "c")]
    b.sql("INSERT INTO t PARTITION (ds='c') SELECT 6")
    c = hivepark.connect(a.location, spark=spark)
    assert _rows(c) == [(1, "c"), (6, "c")] == _spark_rows(spark, c)
    assert os.listdir(commit.journal_dir(a.location)) == []
    c.close()
