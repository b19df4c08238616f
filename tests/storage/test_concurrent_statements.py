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

import json
import os
import shutil

import pytest

import hivepark
from hivepark.errors import CommitConflict, SemanticError, UserInputError
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


def _at_first_spark_write(monkeypatch, action):
    """Runs ``action`` once, as the writer's first Spark write starts; returns the paths of the
    writes made (the list grows as they are)."""
    from hivepark.exec import write

    real = write.spark_write
    calls: list[str] = []

    def interleaved(df, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            action()
        return real(df, path, *args, **kwargs)

    monkeypatch.setattr(write, "spark_write", interleaved)
    return calls


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


@pytest.mark.parametrize("truncate", ["TRUNCATE TABLE t PARTITION (ds='a')", "TRUNCATE TABLE t"])
def test_truncate_meeting_a_drop_partition_does_not_make_it_again(two, spark, monkeypatch, truncate):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("ALTER TABLE t DROP PARTITION (ds='a')"))
    a.sql(truncate)
    assert fired
    # As if the TRUNCATE ran after the DROP: ds='a' stays dropped, not made again empty.
    assert [r[0] for r in b.sql("SHOW PARTITIONS t").collect()] == ["ds=b"]
    assert not os.path.exists(os.path.join(a.catalog.get_table("default", "t").location, "ds=a"))
    left = [] if truncate.endswith("t") else [(3, "b")]
    assert _rows(a) == left == _spark_rows(spark, a)


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
    a, b = two
    a.sql("CREATE TABLE copy (k INT, ds STRING) STORED AS PARQUET")
    calls = _at_first_spark_write(monkeypatch, lambda: b.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT 5"))
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


def _data_files(location):
    return sorted(os.path.relpath(os.path.join(d, f), location) for d, dirs, files in os.walk(location)
                  for f in files if not f.startswith((".", "_")))


def test_a_failed_ctas_keeps_rows_another_statement_committed_to_its_table(two, spark, monkeypatch):
    """CTAS registers its table before writing; a statement that sees the table and commits
    rows to it meanwhile keeps them when the CTAS's query then fails: only a table nothing was
    committed to is dropped (it was dropped with its whole directory, B's rows with it)."""
    a, b = two
    calls = _at_first_spark_write(monkeypatch, lambda: b.sql("INSERT INTO t2 VALUES (42)"))
    with pytest.raises(Exception, match="boom"):
        a.sql("CREATE TABLE t2 STORED AS PARQUET AS SELECT CASE WHEN id = 3 THEN raise_error('boom') "
              "ELSE id END AS k FROM range(5)")
    monkeypatch.undo()
    assert calls  # B inserted while the CTAS wrote
    t2 = b.catalog.get_table("default", "t2")
    recorded = json.loads(t2.properties[commit.FILES_PARAM])
    assert _data_files(t2.location) == recorded and len(recorded) == 1  # B's file alone
    plain = sorted(tuple(r) for r in spark.read.parquet(f"{t2.location}/{recorded[0]}").collect())
    assert sorted(tuple(r) for r in b.sql("SELECT * FROM t2").collect()) == plain == [(42,)]


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_ctas_keeps_rows_another_statement_committed_to_its_table_while_it_wrote(two, spark, monkeypatch,
                                                                                  partitioned):
    """CTAS registers its table before writing; B sees it and commits a row to it meanwhile. The
    CTAS's commit (an overwrite of its new table) was planned again on B's version and replaced
    B's row, as if B had written to the table before it existed; now the CTAS commits as if it
    ran first, then B: both rows stay."""
    a, b = two
    insert = "INSERT INTO t2 PARTITION (ds='a') VALUES (42)" if partitioned else "INSERT INTO t2 VALUES (42)"
    calls = _at_first_spark_write(monkeypatch, lambda: b.sql(insert))
    a.sql("CREATE TABLE t2 " + ("PARTITIONED BY (ds) " if partitioned else "")
          + "STORED AS PARQUET AS SELECT id AS k" + (", 'a' AS ds" if partitioned else "") + " FROM range(3)")
    monkeypatch.undo()
    assert calls  # B inserted while the CTAS wrote
    t2 = b.catalog.get_table("default", "t2")
    if partitioned:
        [part] = b.catalog.list_partitions(t2)
        base, recorded = part.location, sorted(part.files or ())
    else:
        base, recorded = t2.location, sorted(json.loads(t2.properties[commit.FILES_PARAM]))
    assert _data_files(base) == recorded and len(recorded) == 2  # the CTAS's file and B's
    plain = sorted(r[0] for r in spark.read.parquet(*[f"{base}/{f}" for f in recorded]).collect())
    assert sorted(r[0] for r in b.sql("SELECT k FROM t2").collect()) == plain == [0, 1, 2, 42]


def test_a_failed_ctas_nothing_wrote_to_leaves_no_table_and_runs_again(two):
    a, _ = two
    ctas = ("CREATE TABLE t3 STORED AS PARQUET AS SELECT CASE WHEN id = {bad} THEN raise_error('boom') "
            "ELSE id END AS k FROM range(5)")
    with pytest.raises(Exception, match="boom"):
        a.sql(ctas.format(bad=3))
    assert "t3" not in [r[0] for r in a.sql("SHOW TABLES").collect()]
    assert not os.path.exists(os.path.join(a.location, "t3"))
    assert os.listdir(commit.journal_dir(a.location)) == []
    a.sql(ctas.format(bad=-1))
    assert sorted(r[0] for r in a.sql("SELECT k FROM t3").collect()) == [0, 1, 2, 3, 4]


def _aborts_as_killed(monkeypatch, point: str) -> None:
    """Each statement reaching ``commit.fault_point(point)`` stops there, and its abort does
    what kill -9 leaves: nothing undone, the journal stays and its heartbeat stops (the next
    connect() recovers it as a dead process's). Undone by ``monkeypatch.undo()``."""
    real_fault = commit.fault_point

    def die(name):
        if name == point:
            raise _Killed()
        real_fault(name)

    def dead(self):
        self._journal._stop.set()
        with commit._lock:
            commit._in_flight.discard(self.journal)

    monkeypatch.setattr(commit, "fault_point", die)
    monkeypatch.setattr(commit.Commit, "abort", dead)


def _load_source(tmp_path):
    src = tmp_path / "incoming"
    src.mkdir()
    (src / "rows.txt").write_text("1\n2\n3\n")
    return src


def test_a_load_data_inpath_whose_table_is_dropped_meanwhile_leaves_the_source(two, tmp_path, monkeypatch):
    """The LOAD fails (its table was dropped before its commit): the user's files are back at
    their source (they were deleted with the statement's staging)."""
    a, b = two
    a.sql("CREATE TABLE l (k INT) PARTITIONED BY (ds STRING) STORED AS TEXTFILE")
    src = _load_source(tmp_path)
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("DROP TABLE l"))
    with pytest.raises(Exception, match="dropped"):
        a.sql(f"LOAD DATA INPATH '{src}' INTO TABLE l PARTITION (ds='a')")
    assert fired
    assert os.listdir(src) == ["rows.txt"] and (src / "rows.txt").read_text() == "1\n2\n3\n"
    assert not [f for f in _data_files(a.location) if f.startswith("l/")]


class _Killed(BaseException):
    pass


def test_a_killed_load_data_inpath_has_its_source_back_once_connect_recovers(two, tmp_path, monkeypatch, spark):
    """A LOAD "killed" just before its metastore commit (in-process: the statement stops there
    and nothing of it is undone; its journal is left as a dead process leaves it): the next
    connect() moves the files back to their source and the table is as before."""
    a, _ = two
    a.sql("CREATE TABLE l (k INT) PARTITIONED BY (ds STRING) STORED AS TEXTFILE")
    src = _load_source(tmp_path)
    real_fault = commit.fault_point
    _aborts_as_killed(monkeypatch, "before_commit")
    with pytest.raises(_Killed):
        a.sql(f"LOAD DATA INPATH '{src}' INTO TABLE l PARTITION (ds='a')")
    assert os.listdir(src) == []  # moved into the table's directory, not committed
    monkeypatch.setattr(commit, "fault_point", real_fault)
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(src) == ["rows.txt"] and (src / "rows.txt").read_text() == "1\n2\n3\n"
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert a.sql("SELECT * FROM l").collect() == []
    assert _data_files(os.path.join(a.location, "l")) == []


@pytest.mark.parametrize("fault", ["during_move", "before_commit"])
def test_an_insert_killed_before_its_commit_leaves_no_ghost_partition_once_connect_recovers(two, spark, monkeypatch,
                                                                                            fault):
    """An INSERT into new partitions "killed" before its metastore commit (in-process: it stops
    there and undoes nothing; its journal is left as a dead process leaves it): the next
    connect() deleted its files but kept their new, empty directories, which MSCK REPAIR then
    registered as partitions that never were (ds=n, and u's hr=1 under ds=n)."""
    a, b = two
    a.sql("CREATE TABLE u (k INT) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    _aborts_as_killed(monkeypatch, fault)
    for insert in ["INSERT INTO t PARTITION (ds='n') VALUES (5), (6)",
                   "INSERT INTO u PARTITION (ds='n', hr=1) VALUES (5)"]:
        with pytest.raises(_Killed):
            a.sql(insert)
    monkeypatch.undo()
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert _dirs(a.location) == ["t", "t/ds=a", "t/ds=b", "u"]
    b.sql("MSCK REPAIR TABLE t")
    b.sql("MSCK REPAIR TABLE u")
    assert [r[0] for r in b.sql("SHOW PARTITIONS t").collect()] == ["ds=a", "ds=b"]
    assert b.sql("SHOW PARTITIONS u").collect() == []
    assert _rows(b) == [(1, "a"), (2, "a"), (3, "b")] == _spark_rows(spark, b)


def test_a_killed_insert_into_a_table_dropped_before_recovery_leaves_no_directory(two, spark, monkeypatch):
    """An INSERT into a new partition killed before its commit; B (connected before the kill)
    drops the table, which keeps the directories holding the INSERT's files. connect() deleted
    the files but kept t/ and t/ds=n: a table created as t again then got ds=n from MSCK REPAIR."""
    a, b = two
    _aborts_as_killed(monkeypatch, "before_commit")
    with pytest.raises(_Killed):
        a.sql("INSERT INTO t PARTITION (ds='n') VALUES (5)")
    monkeypatch.undo()
    b.sql("DROP TABLE t")
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert _dirs(a.location) == []
    b.sql("CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    b.sql("MSCK REPAIR TABLE t")
    assert b.sql("SHOW PARTITIONS t").collect() == []


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_rename_table_first_undoes_a_killed_write_into_it(two, spark, monkeypatch, partitioned):
    """An INSERT killed before its commit (in-process, as above), its files moved into the
    table's directory; B (connected before the kill: nothing recovered it) renames the table,
    which moved the uncommitted files along, where the next connect() did not look for them:
    they became the renamed table's rows (listed, or registered by MSCK REPAIR)."""
    a, b = two
    if partitioned:
        insert = "INSERT INTO t PARTITION (ds='n') VALUES (5), (6)"
    else:
        a.sql("DROP TABLE t")
        a.sql("CREATE TABLE t (k INT) STORED AS PARQUET")  # no file recorded: it is listed
        insert = "INSERT INTO t VALUES (5), (6)"
    _aborts_as_killed(monkeypatch, "before_commit")
    with pytest.raises(_Killed):
        a.sql(insert)
    monkeypatch.undo()
    b.sql("ALTER TABLE t RENAME TO t2")
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(commit.journal_dir(a.location)) == []
    if partitioned:
        b.sql("MSCK REPAIR TABLE t2")
    expected = [(1, "a"), (2, "a"), (3, "b")] if partitioned else []
    assert sorted(tuple(r) for r in b.sql("SELECT * FROM t2").collect()) == expected
    assert len(_data_files(os.path.join(a.location, "t2"))) == (2 if partitioned else 0)


def _dirs(root):
    return sorted(os.path.relpath(d, root) for d, _, _ in os.walk(root)
                  if d != root and not os.path.relpath(d, root).startswith((".hivepark", "metastore")))


def _capture(out, conn, sql):
    def run():
        try:
            conn.sql(sql)
            out.append("ok")
        except Exception as e:  # noqa: BLE001 - the test looks at what the user was told
            out.append(f"{type(e).__name__}: {e}")
    return run


@pytest.mark.parametrize("partitioned", [False, True])
def test_rename_table_during_an_insert_waits_for_no_file_in_flight(two, spark, monkeypatch, partitioned):
    """ALTER TABLE t RENAME TO moves t's directory: with an INSERT's files moved in and not
    committed, they moved along and stayed in the new directory, recorded nowhere, after the
    INSERT failed. The RENAME is refused instead (run it again), and the INSERT commits."""
    a, b = two
    if not partitioned:
        a.sql("DROP TABLE t")
        a.sql("CREATE TABLE t (k INT) STORED AS PARQUET")
        a.sql("INSERT INTO t VALUES (1)")
    out: list[str] = []
    fired = _between_plan_and_commit(monkeypatch, _capture(out, b, "ALTER TABLE t RENAME TO t2"))
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)" if partitioned else "INSERT INTO t VALUES (9)")
    assert fired
    assert out[0].startswith("CommitConflict: Cannot rename default.t now: another statement is writing into it")
    assert "run the statement again once it finished" in out[0]
    names = [r[0] for r in b.sql("SHOW TABLES").collect()]
    assert "t" in names and "t2" not in names and not os.path.exists(os.path.join(a.location, "t2"))
    if partitioned:
        assert _rows(b) == [(1, "a"), (2, "a"), (3, "b"), (9, "a")] == _spark_rows(spark, b)
    else:
        t = b.catalog.get_table("default", "t")
        recorded = json.loads(t.properties[commit.FILES_PARAM])
        assert _data_files(t.location) == sorted(recorded)
        assert sorted(r[0] for r in b.sql("SELECT k FROM t").collect()) == [1, 9]
    b.sql("ALTER TABLE t RENAME TO t2")  # once nothing is in flight
    assert _data_files(os.path.join(a.location, "t2")) and not os.path.exists(os.path.join(a.location, "t"))


def test_rename_partition_onto_an_insert_in_flight_says_to_run_again(two, spark, monkeypatch):
    """The new partition's directory holds an INSERT's uncommitted file: the RENAME says
    another statement is writing there (it told the user to register the files with MSCK
    REPAIR, which would have made the in-flight files a partition)."""
    a, b = two
    out: list[str] = []
    fired = _between_plan_and_commit(
        monkeypatch, _capture(out, b, "ALTER TABLE t PARTITION (ds='a') RENAME TO PARTITION (ds='c')"))
    a.sql("INSERT INTO t PARTITION (ds='c') VALUES (7)")
    assert fired
    assert out[0].startswith("CommitConflict: Unable to rename partition: another statement is writing into")
    assert "MSCK" not in out[0] and "run the statement again once it finished" in out[0]
    assert _rows(b) == [(1, "a"), (2, "a"), (3, "b"), (7, "c")] == _spark_rows(spark, b)


def test_drop_table_during_an_insert_leaves_no_directory(two, monkeypatch):
    """DROP TABLE keeps a directory holding an INSERT's file in flight; the INSERT then fails
    (its table is gone) and its abort deletes the directories that left empty (they stayed:
    t/, t/ds=c, u/)."""
    a, b = two
    a.sql("CREATE TABLE u (k INT) STORED AS PARQUET")
    a.sql("INSERT INTO u VALUES (0)")
    for drop, insert in [("DROP TABLE t", "INSERT INTO t PARTITION (ds='c') VALUES (3)"),
                         ("DROP TABLE u", "INSERT INTO u VALUES (3)")]:
        fired = _between_plan_and_commit(monkeypatch, lambda drop=drop: b.sql(drop))
        with pytest.raises(Exception, match=r"was dropped \(or renamed\) while this statement ran"):
            a.sql(insert)
        assert fired
        monkeypatch.undo()
    assert _dirs(a.location) == []


class _KilledAfterCommit(BaseException):
    pass


def _relocation_killed_after_commit(monkeypatch, conn, sql):
    """Runs ``sql`` (a RENAME PARTITION or EXCHANGE PARTITION) on ``conn`` "killed" right after
    its metastore commit (in-process: it stops there and its journal is left as a dead process
    leaves it, for the next connect() to recover)."""
    from hivepark.exec import relocate

    journals = []

    class Recorded(commit.Journal):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            journals.append(self)

    real_fault = commit.fault_point

    def die(name):
        if name == "after_commit":
            raise _KilledAfterCommit()
        real_fault(name)

    monkeypatch.setattr(relocate, "Journal", Recorded)
    monkeypatch.setattr(relocate, "fault_point", die)
    with pytest.raises(_KilledAfterCommit):
        conn.sql(sql)
    monkeypatch.undo()
    for j in journals:  # as kill -9: the journal stays, its heartbeat stops
        j._stop.set()
        with commit._lock:
            commit._in_flight.discard(j.path)


def test_a_rename_partition_killed_after_its_commit_leaves_no_old_directory(two, spark, monkeypatch):
    """A RENAME PARTITION killed right after its metastore commit: the next connect() deletes
    the old files and their directory, so a later MSCK REPAIR finds no ghost partition there."""
    a, b = two
    _relocation_killed_after_commit(monkeypatch, a, "ALTER TABLE t PARTITION (ds='a') RENAME TO PARTITION (ds='z')")
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert _dirs(os.path.join(a.location, "t")) == ["ds=b", "ds=z"]
    b.sql("MSCK REPAIR TABLE t")
    assert [r[0] for r in b.sql("SHOW PARTITIONS t").collect()] == ["ds=b", "ds=z"]
    assert _rows(b) == [(1, "z"), (2, "z"), (3, "b")] == _spark_rows(spark, b)


@pytest.mark.parametrize("move, then", [
    ("ALTER TABLE t PARTITION (ds='a') RENAME TO PARTITION (ds='z')", "ALTER TABLE t DROP PARTITION (ds='z')"),
    ("ALTER TABLE t PARTITION (ds='a') RENAME TO PARTITION (ds='z')",
     "INSERT OVERWRITE TABLE t PARTITION (ds='z') VALUES (100)"),
    ("ALTER TABLE u EXCHANGE PARTITION (ds='a') WITH TABLE t", "DROP TABLE u"),
])
def test_a_relocation_killed_after_its_commit_stays_committed_whatever_came_next(two, spark, monkeypatch,
                                                                                  move, then):
    """A RENAME or EXCHANGE PARTITION killed right after its metastore commit, whose moved files
    a connection opened before the kill then dropped or replaced: the next connect() finishes
    it (its commit is recorded in the metastore). It judged the commit by whether the metastore
    still recorded one of its copies, took it for never committed, and kept the old files:
    MSCK REPAIR brought the moved (and since deleted) rows back under ds='a'."""
    a, b = two
    a.sql("CREATE TABLE u (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    _relocation_killed_after_commit(monkeypatch, a, move)
    b.sql(then)  # b was connected before the "kill": nothing recovered it yet
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert not os.path.exists(os.path.join(a.location, "t", "ds=a"))
    b.sql("MSCK REPAIR TABLE t")
    left = [(3, "b")] + ([(100, "z")] if then.startswith("INSERT") else [])
    assert _rows(b) == left == _spark_rows(spark, b)
    assert committed_records(a) == set()


def _rename_killed_before_its_move(a, monkeypatch, partitioned: bool) -> str:
    """``ALTER TABLE t RENAME TO t2`` on ``a`` (t unpartitioned, of rows 1 and 2, unless
    ``partitioned``) killed between the metastore's rename and the move of t's directory (the
    move stops the statement, which undoes nothing, as kill -9); t's old directory."""
    from hivepark.storage import fs

    if not partitioned:
        a.sql("DROP TABLE t")
        a.sql("CREATE TABLE t (k INT) STORED AS PARQUET")
        a.sql("INSERT INTO t VALUES (1), (2)")
    old = os.path.join(a.location, "t")
    real_move = fs.move

    def killed_moving(src, dst):
        if os.path.normpath(src) == old:
            raise _Killed()
        real_move(src, dst)

    monkeypatch.setattr(fs, "move", killed_moving)
    with pytest.raises(_Killed):
        a.sql("ALTER TABLE t RENAME TO t2")
    monkeypatch.undo()
    return old


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_rename_table_killed_before_its_directory_moved_is_finished_by_connect(two, spark, monkeypatch,
                                                                               partitioned):
    """ALTER TABLE t RENAME TO t2 killed between the metastore's rename and the move of t's
    directory (in-process: the move stops the statement, which undoes nothing, as kill -9):
    the next connect() moves the files. Nothing recorded the move: t2 failed with "File ... does
    not exist" for good, and a table created as t again took t2's files (its rows)."""
    a, b = two
    old = _rename_killed_before_its_move(a, monkeypatch, partitioned)
    assert os.path.exists(old)  # the directory did not move; the metastore says t2
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert os.listdir(commit.journal_dir(a.location)) == []
    assert not os.path.exists(old) and _data_files(os.path.join(a.location, "t2"))
    expected = [(1, "a"), (2, "a"), (3, "b")] if partitioned else [(1,), (2,)]
    got = sorted(tuple(r) for r in b.sql("SELECT * FROM t2").collect())
    plain = sorted(tuple(r) for r in spark.read.parquet(os.path.join(a.location, "t2")).collect())
    assert got == expected == plain
    b.sql("CREATE TABLE t (k INT) STORED AS PARQUET")
    assert b.sql("SELECT * FROM t").collect() == []


@pytest.mark.parametrize("partitioned, reuse", [(False, "CREATE"), (True, "CREATE"), (False, "RENAME")])
def test_a_table_made_at_a_killed_rename_s_old_directory_takes_none_of_its_files(two, spark, monkeypatch,
                                                                                partitioned, reuse):
    """ALTER TABLE t RENAME TO t2 killed before its directory moved, then, before any connect()
    recovered it, CREATE TABLE t on a connection opened earlier: the new t (at the old directory)
    read t2's rows as its own and recorded them at its first INSERT; recovery then found a table
    there and left them (t2 failed with "File ... does not exist" for good). ALTER TABLE x RENAME
    TO t was refused, telling to remove the directory (t2's rows). The killed move is finished
    before a table or partition takes the directory."""
    a, b = two
    old, new = _rename_killed_before_its_move(a, monkeypatch, partitioned), os.path.join(a.location, "t2")
    spec, values = (" PARTITIONED BY (ds STRING)", "PARTITION (ds='n') VALUES (10)") if partitioned else \
        ("", "VALUES (10)")
    if reuse == "CREATE":
        b.sql(f"CREATE TABLE t (k INT){spec} STORED AS PARQUET")
    else:
        b.sql(f"CREATE TABLE x (k INT){spec} STORED AS PARQUET")
        b.sql("ALTER TABLE x RENAME TO t")
    assert b.sql("SELECT * FROM t").collect() == []
    b.sql(f"INSERT INTO t {values}")
    hivepark.connect(a.location, spark=spark).close()  # recovery: nothing left to do
    assert os.listdir(commit.journal_dir(a.location)) == []
    moved = [(1, "a"), (2, "a"), (3, "b")] if partitioned else [(1,), (2,)]
    for name, path, want in (("t2", new, moved), ("t", old, [(10, "n")] if partitioned else [(10,)])):
        got = sorted(tuple(r) for r in b.sql(f"SELECT * FROM {name}").collect())
        assert got == want == sorted(tuple(r) for r in spark.read.parquet(path).collect()), name


def test_a_table_made_at_a_directory_a_rename_is_moving_is_refused(two, spark, monkeypatch):
    """While ALTER TABLE t RENAME TO t2 moves t's directory (between the metastore's rename and the
    move), a CREATE TABLE t on another connection is refused: it would take the directory's files."""
    from hivepark.exec import tables

    a, b = two
    seen = []
    real_fault = tables.fault_point

    def meanwhile(name):
        if name == "table_renamed":
            with pytest.raises(CommitConflict, match="RENAME TO is moving right now. Nothing was changed"):
                b.sql("CREATE TABLE t (k INT) STORED AS PARQUET")
            seen.append(name)
        real_fault(name)

    monkeypatch.setattr(tables, "fault_point", meanwhile)
    a.sql("ALTER TABLE t RENAME TO t2")
    monkeypatch.undo()
    assert seen == ["table_renamed"]
    b.sql("CREATE TABLE t (k INT) STORED AS PARQUET")  # the move is done: the directory is free
    assert b.sql("SELECT * FROM t").collect() == []
    assert sorted(tuple(r) for r in b.sql("SELECT * FROM t2").collect()) == [(1, "a"), (2, "a"), (3, "b")]


def test_copies_a_relocation_made_are_no_statement_s_files_before_it_commits(two, spark, monkeypatch):
    """EXCHANGE PARTITION copies the partition's files into dest's directory, then commits. B
    registers that partition in dest meanwhile (ADD PARTITION: its files are listed) and appends
    to it: the copies, named by the statements that wrote the originals, were taken for dest's
    own (the rows read in both tables), and the INSERT recorded them; the EXCHANGE, failing on
    dest's new version, then deleted files dest recorded (a kill instead left the rows in both
    tables for good). The copies now carry the EXCHANGE's id, so listings leave them out."""
    from hivepark.exec import relocate

    a, b = two
    a.sql("CREATE TABLE u (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    seen: list = []
    real_fault = commit.fault_point

    def meanwhile(name):
        if name == "before_commit" and not seen:
            b.sql("ALTER TABLE u ADD PARTITION (ds='a')")
            seen.append(sorted(tuple(r) for r in b.sql("SELECT k, ds FROM u").collect()))
            b.sql("INSERT INTO u PARTITION (ds='a') VALUES (9)")
        real_fault(name)

    monkeypatch.setattr(relocate, "fault_point", meanwhile)
    with pytest.raises(CommitConflict):
        a.sql("ALTER TABLE u EXCHANGE PARTITION (ds='a') WITH TABLE t")
    monkeypatch.undo()
    assert seen == [[]]
    u = b.catalog.get_table("default", "u")
    [part] = b.catalog.list_partitions(u)
    paths = [f"{part.location}/{f}" for f in part.files or ()]
    assert paths and all(os.path.exists(x) for x in paths)
    assert _data_files(part.location) == sorted(part.files or ())
    plain = sorted((r[0], "a") for r in spark.read.parquet(*paths).collect())
    assert sorted(tuple(r) for r in b.sql("SELECT k, ds FROM u").collect()) == plain == [(9, "a")]
    assert _rows(b) == [(1, "a"), (2, "a"), (3, "b")] == _spark_rows(spark, b)


@pytest.mark.parametrize("partitioned, busy", [(False, False), (True, False), (True, True)])
def test_a_statement_beginning_between_a_reader_s_check_and_its_listing_is_not_read(two, spark, monkeypatch,
                                                                                   tmp_path, partitioned, busy):
    """A reader of a directory the metastore records no files for (a partition made by ADD
    PARTITION, a table nothing was written to by hivepark) asks whether a statement is in flight,
    and, none being (or none with files there: ``busy``, another table's write in flight), gives
    Spark the directory to list. A LOAD DATA of three files beginning between the two, stopped
    (as kill -9) after moving two of them, was read half, uncommitted. (A scan of one partition of
    three, read by its directory; the whole table's scan after it reads the partitions from the
    whole-table frame, listed there, the killed LOAD's files left out.)"""
    from hivepark.exec import scan

    a, b = two
    if busy:  # a write into t in flight the whole time (its journal renewed)
        other = commit.Commit(a.location, a.catalog.get_table("default", "t"))
    a.sql("CREATE TABLE l (k INT) " + ("PARTITIONED BY (ds STRING) " if partitioned else "") + "STORED AS TEXTFILE")
    where = os.path.join(a.location, "l")
    if partitioned:
        a.sql("ALTER TABLE l ADD PARTITION (ds='a') PARTITION (ds='b') PARTITION (ds='c')")
        where = os.path.join(where, "ds=a")
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, "by_hand.txt"), "w") as f:
        f.write("100\n")
    src = tmp_path / "incoming"
    src.mkdir()
    for i in range(3):
        (src / f"f{i}.txt").write_text(f"{i}\n")
    load = f"LOAD DATA INPATH '{src}' INTO TABLE l" + (" PARTITION (ds='a')" if partitioned else "")
    real_fault, real_directory = commit.fault_point, scan._directory

    def load_meanwhile(location, in_flight):
        out = real_directory(location, in_flight)
        if out == [location] and os.listdir(src):  # Spark lists the directory next
            _aborts_as_killed(monkeypatch, "during_move")
            with pytest.raises(_Killed):
                b.sql(load)
            monkeypatch.setattr(commit, "fault_point", real_fault)
        return out

    monkeypatch.setattr(scan, "_directory", load_meanwhile)
    got = sorted(r[0] for r in a.sql("SELECT k FROM l" + (" WHERE ds = 'a'" if partitioned else "")).collect())
    monkeypatch.undo()
    assert len([f for f in os.listdir(where) if f.endswith(".txt")]) == 3  # by_hand.txt and two of the LOAD's
    if busy:
        other.abort()
    assert got == [100]
    assert sorted(r[0] for r in a.sql("SELECT k FROM l").collect()) == [100]


def committed_records(wh):
    """The statements the metastore still records as committed (none once their journals went)."""
    commit.forget_finished(wh.location, wh.catalog)
    return wh.catalog.committed_statements()



def test_a_failed_ctas_whose_undo_fails_shows_its_own_error_and_connect_undoes_it(two, spark, monkeypatch):
    """The metastore fails while a failed CTAS drops its table again: the user sees the CTAS's
    own error (not the undo's), and the journal stays for the next connect() to drop it."""
    a, _ = two
    real = commit.undo_created_table

    def metastore_down(*args):
        raise OSError("metastore unreachable")

    monkeypatch.setattr(commit, "undo_created_table", metastore_down)
    with pytest.raises(Exception, match="boom"):
        a.sql("CREATE TABLE t3 STORED AS PARQUET AS SELECT CASE WHEN id = 3 THEN raise_error('boom') "
              "ELSE id END AS k FROM range(5)")
    assert "t3" in [r[0] for r in a.sql("SHOW TABLES").collect()]
    monkeypatch.setattr(commit, "undo_created_table", real)
    hivepark.connect(a.location, spark=spark).close()  # recovery runs here
    assert "t3" not in [r[0] for r in a.sql("SHOW TABLES").collect()]
    assert os.listdir(commit.journal_dir(a.location)) == [] and not os.path.exists(os.path.join(a.location, "t3"))


def test_an_insert_into_a_new_partition_that_fails_leaves_no_ghost_partition(two, monkeypatch):
    """An INSERT into a new partition whose commit fails leaves no empty directory there, which
    a later MSCK REPAIR would register as a partition (an empty one already registered stays)."""
    a, b = two
    a.sql("ALTER TABLE t ADD PARTITION (ds='e')")

    def conflict(*args, **kwargs):
        raise CommitConflict("Commit conflict: forced. Nothing was changed; run the statement again.")

    monkeypatch.setattr(a.catalog, "commit", conflict)
    for ds in ("n", "e"):
        with pytest.raises(CommitConflict):
            a.sql(f"INSERT INTO t PARTITION (ds='{ds}') VALUES (5)")
    monkeypatch.undo()
    assert _dirs(os.path.join(a.location, "t")) == ["ds=a", "ds=b", "ds=e"]
    b.sql("MSCK REPAIR TABLE t")
    assert [r[0] for r in b.sql("SHOW PARTITIONS t").collect()] == ["ds=a", "ds=b", "ds=e"]


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


def test_recovery_of_a_killed_overwrite_removes_the_skewed_directories_it_emptied(two, spark, monkeypatch):
    """An INSERT OVERWRITE under another list-bucketing layout, killed right after its commit:
    the next connect() deletes its obsolete files and the directories (x=1/) they leave empty."""
    a, _ = two
    a.sql("CREATE TABLE lb (k INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) STORED AS DIRECTORIES "
          "STORED AS PARQUET")
    a.sql("INSERT INTO lb PARTITION (ds='a') VALUES (1, 1), (2, 2)")
    a.sql("ALTER TABLE lb SKEWED BY (x) ON (2) STORED AS DIRECTORIES")
    _dies_at(monkeypatch, "after_commit")
    with pytest.raises(_Killed):
        a.sql("INSERT OVERWRITE TABLE lb PARTITION (ds='a') VALUES (3, 1), (4, 2)")
    root = os.path.join(a.location, "lb")
    assert "ds=a/x=1" in _dirs(root)
    c = hivepark.connect(a.location, spark=spark)
    assert _dirs(root) == ["ds=a", "ds=a/HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME", "ds=a/x=2"]
    got = sorted(tuple(r) for r in c.sql("SELECT k, x FROM lb").collect())
    assert got == sorted(tuple(r) for r in spark.read.option("recursiveFileLookup", "true")
                         .parquet(f"{root}/ds=a").collect()) == [(3, 1), (4, 2)]
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
def test_an_overwrite_reading_its_table_racing_an_insert_runs_again(two, spark, monkeypatch, query):
    a, b = two
    a.sql("CREATE VIEW v AS SELECT * FROM t")
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)"))
    # having read the table without 99, its first run's rows (10, 20) are right for no order of
    # the two: that run fails its commit (it would have deleted 99) and the statement runs again,
    # as after the insert
    a.sql(f"INSERT OVERWRITE TABLE t PARTITION (ds='a') {query}")
    assert fired
    assert _rows(a) == [(3, "b"), (10, "a"), (20, "a"), (990, "a")] == _spark_rows(spark, a)
    assert _leftovers(a) == []


def test_an_overwrite_reading_its_table_that_always_meets_another_commit_fails_in_the_end(two, spark, monkeypatch):
    a, b = two
    plan = commit._plan
    inserts: list[int] = []

    def planned_then_interleaved(*args, **kwargs):  # another insert commits before each run's commit
        out = plan(*args, **kwargs)
        if len(inserts) % 2 == 0:  # (not within that insert's own commit)
            inserts.append(99)
            b.sql("INSERT INTO t PARTITION (ds='a') VALUES (99)")
            inserts.append(0)
        return out

    monkeypatch.setattr(commit, "_plan", planned_then_interleaved)
    with pytest.raises(CommitConflict, match=r"Commit conflict on table default\.t: another statement changed it "
                       r"\(from version \d+ to \d+\) while this statement ran, and this statement's query reads "
                       r"that table, .* Nothing was changed; run the statement again\."):
        a.sql("INSERT OVERWRITE TABLE t PARTITION (ds='a') SELECT k * 10 FROM t WHERE ds='a'")
    assert inserts.count(99) == 4  # the statement ran four times (three runs again)
    monkeypatch.undo()
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b")] + [(99, "a")] * 4 == _spark_rows(spark, a)
    assert _leftovers(a) == []


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


def test_a_python_insert_reading_a_partition_at_its_own_location_racing_an_insert_fails(
        two, spark, monkeypatch, tmp_path):
    a, b = two
    ext = str(tmp_path / "elsewhere")
    a.sql("CREATE TABLE u (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    a.sql(f"ALTER TABLE u ADD PARTITION (ds='e') LOCATION '{ext}'")
    a.sql("INSERT INTO u PARTITION (ds='e') VALUES (4)")
    df = a.table("u").selectExpr("k * 10 AS k")  # reads files outside u's directory only
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("INSERT INTO u PARTITION (ds='e') VALUES (99)"))
    with pytest.raises(CommitConflict, match=r"this statement's query reads that table, .* run the statement again"):
        a.insert(df, "u", partition={"ds": "e"}, overwrite=True)
    assert fired
    assert sorted(tuple(r) for r in a.sql("SELECT k, ds FROM u").collect()) == [(4, "e"), (99, "e")]
    assert sorted(tuple(r) for r in spark.read.parquet(ext).collect()) == [(4,), (99,)]


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
def test_an_insert_into_a_partition_located_elsewhere_meanwhile_runs_again_there(two, spark, monkeypatch, tmp_path,
                                                                                  change):
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
    a.sql(f"INSERT INTO t PARTITION (ds='{ds}') VALUES (1)")  # its files were at ds's old place: runs again
    assert fired
    # B's location holds; A's row went there on the second run, and its first left nothing
    part = a.catalog.get_partition(a.catalog.get_table("default", "t"), (ds,))
    assert part.location == str(ext)
    assert (100, ds) in _rows(a) and (1, ds) in _rows(a)
    assert len(os.listdir(ext)) == 2 and "data.parquet" in os.listdir(ext)
    assert sorted(r[0] for r in spark.read.parquet(str(ext)).collect()) == [1, 100]
    assert not os.path.exists(os.path.join(a.location, "t", "ds=d"))
    assert sorted(os.listdir(old_dir)) == before  # (SET LOCATION: the partition's old files only)
    assert _rows(a) == _rows(b)


@pytest.mark.parametrize("new", ["CREATE TABLE t (name STRING, n BIGINT) STORED AS ORC",
                                 "CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET"])
def test_an_insert_into_a_table_dropped_and_created_again_runs_again_on_the_new_table(two, spark, monkeypatch, new):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: (b.sql("DROP TABLE t"), b.sql(new)))
    if "PARTITIONED" not in new:  # the second run meets the new table: its own error, and nothing written
        with pytest.raises(SemanticError, match=r"Table default\.t is not partitioned but partition spec exists"):
            a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)")
        assert fired
        assert b.sql("SELECT * FROM t").collect() == []  # the new table: empty, and readable
        t = b.catalog.get_table("default", "t")
        assert t.properties.get("numRows", "0") == "0"
        assert [f for _, _, fs_ in os.walk(t.location) for f in fs_] == []
        return
    a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)")  # as if it ran after the CREATE
    assert fired
    assert _rows(a) == [(9, "a")] == _spark_rows(spark, a)
    t = b.catalog.get_table("default", "t")
    assert len([f for _, _, fs_ in os.walk(t.location) for f in fs_ if not f.startswith(".")]) == 1


def test_an_insert_into_a_table_whose_columns_changed_meanwhile_runs_again_on_them(two, spark, monkeypatch):
    a, b = two
    fired = _between_plan_and_commit(monkeypatch, lambda: b.sql("ALTER TABLE t ADD COLUMNS (v STRING)"))
    # its files were written with the old columns: it runs again, and its VALUES no longer fit
    with pytest.raises(SemanticError, match=r"Table insclause-0 has 2 columns, but query has 1 columns"):
        a.sql("INSERT INTO t PARTITION (ds='a') VALUES (9)")
    assert fired
    assert _rows(a) == [(1, "a"), (2, "a"), (3, "b")] == _spark_rows(spark, a)
    assert _leftovers(a) == []
