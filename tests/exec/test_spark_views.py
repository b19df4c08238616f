"""Warehouse tables seen by plain ``spark.sql(...)`` (issue 14, item 4): each table of the
current database is a Spark temporary view that hivepark keeps on the latest commit."""

from __future__ import annotations

import pytest

import hivepark


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _sales(wh):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE sales (id INT, amount DOUBLE) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO sales PARTITION (ds) VALUES (1, 1.5, 'a'), (2, 2.5, 'a'), (3, 3.5, 'b'), (4, NULL, 'c')")


def _plain(spark, wh, table):
    """The table's files read by plain Spark, straight from its directory."""
    return spark.read.option("basePath", f"{wh.location}/{table}").parquet(f"{wh.location}/{table}")


def test_spark_sql_reads_a_table_by_name_as_its_files_hold(wh, spark):
    _sales(wh)
    got = spark.sql("SELECT id, amount, ds FROM sales WHERE ds = 'a'")
    assert _rows(got) == [(1, 1.5, "a"), (2, 2.5, "a")]
    assert _rows(got) == _rows(_plain(spark, wh, "sales").where("ds = 'a'").select("id", "amount", "ds"))
    assert _rows(spark.sql("SELECT * FROM sales")) == _rows(wh.sql("SELECT * FROM sales"))
    # Spark prunes the partitions itself: with another partition's file made unreadable,
    # a query of ds='a' still runs (that file is never opened); the whole table does not
    import glob

    for path in glob.glob(f"{wh.location}/sales/ds=b/*.parquet"):
        with open(path, "wb") as f:
            f.write(b"not parquet")
    assert _rows(spark.sql("SELECT id FROM sales WHERE ds = 'a'")) == [(1,), (2,)]
    with pytest.raises(Exception, match="(?i)parquet"):
        spark.sql("SELECT sum(id) FROM sales").collect()


def test_spark_sql_sees_each_commit_and_never_a_replaced_file(wh, spark):
    _sales(wh)
    assert spark.sql("SELECT count(*) FROM sales").first()[0] == 4
    wh.sql("INSERT OVERWRITE TABLE sales PARTITION (ds='a') VALUES (10, 10.0)")
    got = spark.sql("SELECT id, amount, ds FROM sales")
    assert _rows(got) == [(3, 3.5, "b"), (4, None, "c"), (10, 10.0, "a")]
    assert _rows(got) == _rows(_plain(spark, wh, "sales").select("id", "amount", "ds"))
    wh.sql("ALTER TABLE sales DROP PARTITION (ds='b')")
    assert [r.id for r in spark.sql("SELECT id FROM sales ORDER BY id").collect()] == [4, 10]
    df = spark.createDataFrame([(20, 2.0, "d")], "id INT, amount DOUBLE, ds STRING")
    wh.insert(df, "sales")  # every key dynamic: nonstrict, set above
    assert spark.sql("SELECT id FROM sales WHERE ds = 'd'").first()[0] == 20


def test_created_dropped_and_renamed_tables_come_and_go(wh, spark):
    wh.sql("CREATE TABLE plain_t (k STRING, v INT) STORED AS PARQUET")
    assert spark.sql("SELECT count(*) FROM plain_t").first()[0] == 0
    wh.sql("INSERT INTO plain_t VALUES ('x', 1)")
    assert _rows(spark.sql("SELECT * FROM plain_t")) == [("x", 1)]
    wh.sql("ALTER TABLE plain_t RENAME TO plain_u")
    assert _rows(spark.sql("SELECT * FROM plain_u")) == [("x", 1)]
    assert not spark.catalog.tableExists("plain_t")
    wh.sql("DROP TABLE plain_u")
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM plain_u").collect()


def test_the_current_database_decides_which_tables_are_views(wh, spark):
    wh.sql("CREATE TABLE in_default (a INT) STORED AS PARQUET")
    wh.sql("CREATE DATABASE other")
    wh.sql("CREATE TABLE other.in_other (b INT) STORED AS PARQUET")
    wh.sql("INSERT INTO other.in_other VALUES (7)")
    assert spark.catalog.tableExists("in_default") and not spark.catalog.tableExists("in_other")
    wh.sql("USE other")
    assert not spark.catalog.tableExists("in_default")
    assert spark.sql("SELECT b FROM in_other").first()[0] == 7


def test_a_view_of_the_users_with_a_tables_name_is_never_replaced(wh, spark):
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW mine AS SELECT 'user' AS who")
    try:
        wh.sql("CREATE TABLE mine (who STRING) STORED AS PARQUET")
        wh.sql("INSERT INTO mine VALUES ('warehouse')")
        assert spark.sql("SELECT who FROM mine").first()[0] == "user"
        assert wh.sql("SELECT who FROM mine").first()[0] == "warehouse"  # hivepark reads its table
    finally:
        spark.catalog.dropTempView("mine")


def test_another_connections_commit_is_seen_after_refresh_views(tmp_path, spark):
    path = str(tmp_path / "warehouse")
    first = hivepark.connect(path, spark=spark)
    try:
        first.sql("CREATE TABLE shared_t (a INT) STORED AS PARQUET")
        first.sql("INSERT INTO shared_t VALUES (1)")
        second = hivepark.connect(path, spark=spark, conf={"hivepark.spark.views": "false"})
        second.sql("INSERT OVERWRITE TABLE shared_t VALUES (2)")
        second.close()
        first.refresh_views()
        assert _rows(spark.sql("SELECT a FROM shared_t")) == [(2,)]
    finally:
        first.close()
    assert not spark.catalog.tableExists("shared_t")  # close() removes its views


def test_a_hivepark_view_replacing_a_table_replaces_its_spark_view(tmp_path, spark):
    path = str(tmp_path / "warehouse")
    first = hivepark.connect(path, spark=spark)
    try:
        _sales(first)
        assert _rows(spark.sql("SELECT id FROM sales WHERE ds = 'c'")) == [(4,)]
        second = hivepark.connect(path, spark=spark, conf={"hivepark.spark.views": "false"})
        second.sql("DROP TABLE sales")
        second.sql("CREATE TABLE other (id INT)")
        second.sql("INSERT INTO other VALUES (9)")
        second.sql("CREATE VIEW sales AS SELECT id FROM other")
        second.close()
        first.refresh_views()
        assert _rows(spark.sql("SELECT * FROM sales")) == [(9,)]  # the view, not the dropped table's files
    finally:
        first.close()
    assert not spark.catalog.tableExists("sales")


def _view_rows(spark, wh):
    """The view big_sales's query run by plain Spark SQL over the table's files."""
    _plain(spark, wh, "sales").createOrReplaceTempView("plain_sales")
    try:
        return _rows(spark.sql("SELECT id, ds FROM plain_sales WHERE amount > 2"))
    finally:
        spark.catalog.dropTempView("plain_sales")


def test_spark_sql_reads_a_hivepark_view_and_follows_its_tables_commits(wh, spark):
    _sales(wh)
    wh.sql("CREATE VIEW big_sales AS SELECT id, ds FROM sales WHERE amount > 2")
    assert _rows(spark.sql("SELECT * FROM big_sales")) == [(2, "a"), (3, "b")] == _view_rows(spark, wh)
    assert _rows(spark.sql("SELECT * FROM big_sales")) == _rows(wh.sql("SELECT * FROM big_sales"))
    wh.sql("INSERT OVERWRITE TABLE sales PARTITION (ds='a') VALUES (10, 10.0), (11, 1.0)")
    assert _rows(spark.sql("SELECT id FROM big_sales WHERE ds = 'a'")) == [(10,)]
    assert _rows(spark.sql("SELECT * FROM big_sales")) == _view_rows(spark, wh)
    wh.sql("ALTER VIEW big_sales AS SELECT id, ds FROM sales WHERE amount < 2")
    assert _rows(spark.sql("SELECT * FROM big_sales")) == [(11, "a")]
    wh.sql("ALTER VIEW big_sales RENAME TO small_sales")
    assert _rows(spark.sql("SELECT * FROM small_sales")) == [(11, "a")]
    assert not spark.catalog.tableExists("big_sales")
    wh.sql("DROP VIEW small_sales")
    assert not spark.catalog.tableExists("small_sales")


def test_a_view_is_pruned_by_its_own_filter_when_spark_sql_reads_it(wh, spark):
    import glob

    _sales(wh)
    wh.sql("CREATE VIEW day_a AS SELECT id, amount FROM sales WHERE ds = 'a'")
    for path in glob.glob(f"{wh.location}/sales/ds=b/*.parquet"):
        with open(path, "wb") as f:  # never opened when only ds='a' is read
            f.write(b"not parquet")
    wh.sql("INSERT INTO sales PARTITION (ds='c') VALUES (5, 5.0)")  # a commit: the table's Spark view is new
    assert _rows(spark.sql("SELECT * FROM day_a")) == [(1, 1.5), (2, 2.5)]
    plain = _plain(spark, wh, "sales").where("ds = 'a'").select("id", "amount")
    assert _rows(spark.sql("SELECT * FROM day_a")) == _rows(plain)
    with pytest.raises(Exception, match="(?i)parquet"):
        spark.sql("SELECT sum(id) FROM sales").collect()  # the table itself reads ds=b


def test_a_view_through_views_and_databases_follows_the_table_it_reads(wh, spark):
    wh.sql("CREATE DATABASE far")
    wh.sql("CREATE TABLE far.base (k INT, v STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO far.base VALUES (1, 'one'), (2, 'two')")
    wh.sql("CREATE VIEW far.inner_v AS SELECT k, v FROM far.base WHERE k > 1")
    wh.sql("CREATE VIEW outer_v AS SELECT k, upper(v) AS v FROM far.inner_v")
    assert _rows(spark.sql("SELECT * FROM outer_v")) == [(2, "TWO")]
    assert not spark.catalog.tableExists("inner_v")  # another database's view: not in spark.sql
    wh.sql("INSERT INTO far.base VALUES (3, 'three')")  # a commit in another database
    assert _rows(spark.sql("SELECT * FROM outer_v")) == [(2, "TWO"), (3, "THREE")]
    wh.sql("ALTER VIEW far.inner_v AS SELECT k, v FROM far.base WHERE k < 3")  # the inner view changes
    got = _rows(spark.sql("SELECT * FROM outer_v"))
    assert got == [(1, "ONE"), (2, "TWO")] == _rows(wh.sql("SELECT * FROM outer_v"))
    base = spark.read.parquet(f"{wh.location}/far.db/base")
    assert got == sorted((r.k, r.v.upper()) for r in base.where("k < 3").collect())


def test_a_view_whose_table_is_dropped_warns_and_leaves_no_spark_view(wh, spark):
    from hivepark.exec.spark_views import SparkViewWarning

    wh.sql("CREATE TABLE doomed (a INT) STORED AS PARQUET")
    wh.sql("INSERT INTO doomed VALUES (1)")
    wh.sql("CREATE VIEW reads_doomed AS SELECT a FROM doomed")
    assert spark.sql("SELECT a FROM reads_doomed").first()[0] == 1
    with pytest.warns(SparkViewWarning, match="view default.reads_doomed.*doomed"):
        wh.sql("DROP TABLE doomed")
    assert not spark.catalog.tableExists("reads_doomed")
    wh.sql("CREATE TABLE doomed (a INT) STORED AS PARQUET")  # back: the view reads again
    wh.sql("INSERT INTO doomed VALUES (2)")
    assert spark.sql("SELECT a FROM reads_doomed").first()[0] == 2


def test_a_view_of_an_unreadable_table_comes_back_with_it(wh, spark):
    import glob
    import os

    from hivepark.exec.spark_views import SparkViewWarning

    wh.sql("CREATE TABLE frail (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO frail PARTITION (p='x') VALUES (1)")
    wh.sql("INSERT INTO frail PARTITION (p='y') VALUES (2)")
    wh.sql("CREATE VIEW frail_v AS SELECT a FROM frail")
    for path in glob.glob(f"{wh.location}/frail/p=x/*"):
        os.remove(path)  # deleted by hand: the table's Spark view cannot be built, nor the view's
    with pytest.warns(SparkViewWarning, match="frail_v"):
        wh.sql("ALTER TABLE frail ADD PARTITION (p='z')")
    assert not spark.catalog.tableExists("frail_v")
    wh.sql("MSCK REPAIR TABLE frail")  # the files that are there now: both views are back
    assert _rows(spark.sql("SELECT * FROM frail_v")) == [(2,)] == _rows(wh.sql("SELECT * FROM frail_v"))


def test_strict_mode_does_not_keep_a_view_from_spark_sql(wh, spark):
    _sales(wh)
    wh.sql("CREATE VIEW all_sales AS SELECT id FROM sales")
    wh.sql("SET hive.mapred.mode=strict")
    with pytest.raises(hivepark.HiveParkError, match="partition filter"):
        wh.sql("SELECT * FROM all_sales").collect()  # hivepark's own queries stay strict
    wh.sql("INSERT INTO sales PARTITION (ds='d') VALUES (7, 7.0)")
    assert _rows(spark.sql("SELECT * FROM all_sales")) == [(1,), (2,), (3,), (4,), (7,)] == \
        _rows(_plain(spark, wh, "sales").select("id"))


def test_a_view_of_the_users_with_a_hivepark_views_name_is_never_replaced(wh, spark):
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW mine_v AS SELECT 'user' AS who")
    try:
        wh.sql("CREATE TABLE t_for_v (who STRING) STORED AS PARQUET")
        wh.sql("INSERT INTO t_for_v VALUES ('warehouse')")
        wh.sql("CREATE VIEW mine_v AS SELECT who FROM t_for_v")
        assert spark.sql("SELECT who FROM mine_v").first()[0] == "user"
        assert wh.sql("SELECT who FROM mine_v").first()[0] == "warehouse"
    finally:
        spark.catalog.dropTempView("mine_v")


def test_a_table_of_another_warehouse_is_not_read_as_a_spark_view(tmp_path, spark):
    a = hivepark.connect(str(tmp_path / "a"), spark=spark)
    b = hivepark.connect(str(tmp_path / "b"), spark=spark)
    try:
        a.sql("CREATE TABLE only_in_a (x INT) STORED AS PARQUET")
        with pytest.raises(hivepark.HiveParkError, match="only_in_a"):
            b.sql("SELECT * FROM only_in_a").collect()
    finally:
        a.close()
        b.close()


def test_views_can_be_turned_off(wh, spark):
    wh.sql("CREATE TABLE quiet_t (a INT) STORED AS PARQUET")
    assert spark.catalog.tableExists("quiet_t")
    wh.sql("SET hivepark.spark.views=false")
    assert not spark.catalog.tableExists("quiet_t")
    wh.sql("INSERT INTO quiet_t VALUES (1)")
    assert not spark.catalog.tableExists("quiet_t")
    wh.sql("SET hivepark.spark.views=true")
    assert spark.sql("SELECT a FROM quiet_t").first()[0] == 1


def test_iceberg_table_view_follows_its_snapshots(wh, spark):
    wh.sql("CREATE TABLE ice (id INT) PARTITIONED BY (d STRING) STORED BY ICEBERG")
    wh.sql("INSERT INTO ice VALUES (1, 'x'), (2, 'y')")
    assert _rows(spark.sql("SELECT id, d FROM ice")) == [(1, "x"), (2, "y")]
    wh.sql("INSERT OVERWRITE TABLE ice VALUES (3, 'x')")
    assert _rows(spark.sql("SELECT id, d FROM ice")) == _rows(wh.sql("SELECT id, d FROM ice"))


def test_a_view_of_an_iceberg_table_follows_its_snapshots(wh, spark):
    wh.sql("CREATE TABLE ice_v_src (id INT) PARTITIONED BY (d STRING) STORED BY ICEBERG")
    wh.sql("INSERT INTO ice_v_src VALUES (1, 'x'), (2, 'y')")
    wh.sql("CREATE VIEW ice_x AS SELECT id FROM ice_v_src WHERE d = 'x'")
    assert _rows(spark.sql("SELECT * FROM ice_x")) == [(1,)]
    wh.sql("INSERT INTO ice_v_src VALUES (3, 'x')")
    assert _rows(spark.sql("SELECT * FROM ice_x")) == [(1,), (3,)] == _rows(wh.sql("SELECT * FROM ice_x"))


def test_a_table_with_a_missing_file_warns_and_leaves_spark_sql_without_a_stale_view(wh, spark):
    import glob
    import os

    from hivepark.exec.spark_views import SparkViewWarning

    wh.sql("CREATE TABLE gone_t (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO gone_t PARTITION (p='x') VALUES (1)")
    assert spark.sql("SELECT a FROM gone_t").first()[0] == 1
    for path in glob.glob(f"{wh.location}/gone_t/p=x/*"):
        os.remove(path)  # deleted by hand: the metastore still records it
    with pytest.warns(SparkViewWarning, match="gone_t.*MSCK REPAIR"):
        wh.sql("ALTER TABLE gone_t ADD PARTITION (p='y')")  # the statement itself succeeds
    assert [r[0] for r in wh.sql("SHOW PARTITIONS gone_t").collect()] == ["p=x", "p=y"]
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM gone_t").collect()



def test_an_iceberg_table_that_cannot_be_loaded_never_fails_another_tables_statement(wh, spark):
    """Found by a hunt for bugs: with an Iceberg table's metadata gone, every statement that
    changed any table of the database reported failure after it had committed (a retried
    INSERT added its rows twice). Now a warning, once, as for a table with a missing file."""
    import glob
    import os
    import warnings

    from hivepark.exec.spark_views import SparkViewWarning

    wh.sql("CREATE TABLE ice (k INT) STORED BY ICEBERG")
    wh.sql("INSERT INTO ice VALUES (1)")
    wh.sql("CREATE TABLE plain (k INT) STORED AS ORC")
    for f in glob.glob(f"{wh.location}/ice/metadata/*.metadata.json"):
        os.remove(f)  # broken by another tool, a disk problem, ...
    with pytest.warns(SparkViewWarning, match="spark.sql cannot read table default.ice until this is fixed"):
        wh.sql("INSERT INTO plain VALUES (1)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SparkViewWarning)  # warned once
        wh.sql("INSERT INTO plain VALUES (2)")
        wh.sql("CREATE TABLE other (k INT)")
    assert _rows(wh.sql("SELECT k FROM plain")) == [(1,), (2,)] == _rows(spark.sql("SELECT k FROM plain"))
    assert sorted(r[0] for r in wh.sql("SHOW TABLES").collect()) == ["ice", "other", "plain"]
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM ice").collect()

def test_a_name_spark_cannot_take_is_refused_and_never_breaks_a_statement(wh, spark):
    """Found by a hunt for bugs: CREATE TABLE `my-table` was taken (Hive's metastore refuses it),
    and from then on every statement of the connection failed with Spark's INVALID_IDENTIFIER
    after it had committed, so a retried INSERT added its rows twice."""
    import sqlite3

    from hivepark.errors import SemanticError

    for stmt in ("CREATE TABLE `my-table` (k INT)", "CREATE TABLE `tåble` (k INT)", "CREATE VIEW `a b` AS SELECT 1",
                 "CREATE DATABASE `my-db`", "CREATE TABLE t_ok (k INT) STORED AS PARQUET",
                 "ALTER TABLE t_ok RENAME TO `t-ok`"):
        if "t_ok (k" in stmt:
            wh.sql(stmt)
            continue
        with pytest.raises(SemanticError, match=r"is not a valid object name\): a (table|view|database)'s name is "
                                                r"letters, digits and '_'.*e\.g\. "):
            wh.sql(stmt)
    assert sorted(r[0] for r in wh.sql("SHOW TABLES").collect()) == ["t_ok"]
    assert sorted(r[0] for r in wh.sql("SHOW DATABASES").collect()) == ["default"]
    # a table an earlier version let through: the statements after it run, and say so
    wh.sql("CREATE TABLE odd (k INT) STORED AS PARQUET")
    with sqlite3.connect(f"{wh.location}/metastore.db") as db:
        db.execute("UPDATE hivepark_tables SET name = 'od-d' WHERE name = 'odd'")
    wh.sql("INSERT INTO t_ok VALUES (1)")
    assert _rows(wh.sql("SELECT * FROM t_ok")) == [(1,)] == _rows(spark.sql("SELECT * FROM t_ok"))
    assert _rows(wh.sql("SELECT * FROM `od-d`")) == []


def test_a_statement_that_leaves_a_tables_files_as_they_were_keeps_its_spark_view(wh, spark):
    """An empty partition added, statistics computed, TOUCH: the table's version moves on but
    its Spark view would read the same files, so it stays (Spark's CACHE TABLE of it with it),
    rather than being made again (a status call per file: seconds at 20,000 partitions); a
    commit that changes the files makes it again."""
    _sales(wh)
    spark.sql("CACHE TABLE sales")
    wh.sql("ALTER TABLE sales ADD PARTITION (ds='e')")
    wh.sql("ANALYZE TABLE sales PARTITION (ds='a') COMPUTE STATISTICS")
    wh.sql("ALTER TABLE sales TOUCH")
    wh.sql("MSCK REPAIR TABLE sales")
    assert spark.catalog.isCached("sales")
    assert _rows(spark.sql("SELECT * FROM sales")) == _rows(wh.sql("SELECT * FROM sales")) == [
        (1, 1.5, "a"), (2, 2.5, "a"), (3, 3.5, "b"), (4, None, "c")]
    wh.sql("INSERT INTO sales PARTITION (ds='e') VALUES (5, 5.0)")
    assert not spark.catalog.isCached("sales")  # a new view, over the new file too
    assert _rows(spark.sql("SELECT id, ds FROM sales WHERE ds >= 'c'")) == [(4, "c"), (5, "e")]
    wh.sql("ALTER TABLE sales DROP PARTITION (ds='a')")
    assert _rows(spark.sql("SELECT id FROM sales")) == [(3,), (4,), (5,)]


def _analyzed(spark, name):
    return spark.table(name)._jdf.queryExecution().analyzed().toString()


def test_a_statement_writing_a_few_partitions_patches_the_tables_spark_view(wh, spark):
    """A statement changing a few partitions' files of a large table patches its Spark view
    (the previous view without those partitions, and those read from their files alone)
    instead of building it from every file of the table (Spark's status call per file:
    seconds at 20,000 partitions); spark.sql reads the same rows as hivepark and as plain
    Spark over the directory after each statement, and after PATCHES patches the view is
    built again from all its files. A file of a partition the statement did not write,
    deleted by hand, is still noticed (the warning of a whole build)."""
    import glob
    import os

    from hivepark.exec.scan import PATCHES
    from hivepark.exec.spark_views import SparkViewWarning

    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE ev (id INT, v STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    values = ", ".join(f"({i}, 'v{i}', 'd{i % 4}', {i % 5})" for i in range(40))
    wh.sql(f"INSERT INTO ev PARTITION (ds, hr) VALUES {values}, (100, 'n', 'd0', NULL)")

    def check():
        got = _rows(spark.sql("SELECT id, v, ds, hr FROM ev"))
        assert got == _rows(wh.sql("SELECT id, v, ds, hr FROM ev"))
        assert got == _rows(_plain(spark, wh, "ev").select("id", "v", "ds", "hr"))
        return got

    assert len(check()) == 41
    statements = [
        "INSERT INTO ev PARTITION (ds='d9', hr=1) VALUES (200, 'new')",
        "INSERT OVERWRITE TABLE ev PARTITION (ds='d1', hr=1) VALUES (201, 'over')",
        "INSERT INTO ev PARTITION (ds='d2', hr=2) VALUES (202, 'more')",
        "ALTER TABLE ev DROP PARTITION (ds='d3', hr=3)",
        "INSERT INTO ev PARTITION (ds='d0', hr) VALUES (203, 'null', NULL)",
        "TRUNCATE TABLE ev PARTITION (ds='d0', hr=0)",
    ]
    for statement in statements:
        wh.sql(statement)
        check()
    assert "Union" in _analyzed(spark, "ev")  # patched, not built again from every file
    assert _rows(spark.sql("SELECT id FROM ev WHERE ds = 'd1' AND hr = 1")) == [(201,)]
    assert _rows(spark.sql("SELECT id FROM ev WHERE hr IS NULL")) == [(100,), (203,)]
    assert not _rows(spark.sql("SELECT id FROM ev WHERE ds = 'd3' AND hr = 3"))
    for i in range(len(statements), PATCHES):
        wh.sql(f"INSERT INTO ev PARTITION (ds='e{i}', hr=0) VALUES ({300 + i}, 'e')")
    assert "Union" in _analyzed(spark, "ev")
    wh.sql("INSERT INTO ev PARTITION (ds='f', hr=0) VALUES (400, 'f')")
    assert "Union" not in _analyzed(spark, "ev")  # built again from all its files
    check()
    for path in glob.glob(f"{wh.location}/ev/ds=d2/hr=2/*.parquet"):
        os.remove(path)  # deleted by hand: the metastore still records it
    with pytest.warns(SparkViewWarning, match="ev"):
        wh.sql("INSERT INTO ev PARTITION (ds='g', hr=0) VALUES (500, 'g')")
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM ev").collect()


def test_refresh_views_sees_files_another_tool_wrote_where_the_metastore_records_none(wh, spark, tmp_path):
    # a partition added with a LOCATION outside the table's directory, and an external table
    # over a directory: Spark's view listed them when it was built; refresh_views lists them again
    landing, ext = tmp_path / "landing", tmp_path / "ext"
    wh.sql("CREATE TABLE o (x INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO o PARTITION (ds='a') VALUES (1)")
    wh.sql(f"ALTER TABLE o ADD PARTITION (ds='b') LOCATION 'file://{landing}'")
    spark.createDataFrame([(0,)], "x INT").write.parquet(f"file://{ext}")
    wh.sql(f"CREATE EXTERNAL TABLE e (x INT) STORED AS PARQUET LOCATION 'file://{ext}'")
    assert _rows(spark.sql("SELECT * FROM o")) == [(1, "a")]
    spark.createDataFrame([(5,)], "x INT").write.parquet(f"file://{landing}", mode="append")
    spark.createDataFrame([(6,)], "x INT").write.parquet(f"file://{ext}", mode="append")
    wh.refresh_views()
    plain = [(x, "b") for (x,) in _rows(spark.read.parquet(f"file://{landing}"))]
    assert _rows(spark.sql("SELECT * FROM o")) == _rows(wh.sql("SELECT * FROM o")) == [(1, "a"), *plain] \
        == [(1, "a"), (5, "b")]
    assert _rows(spark.sql("SELECT x FROM o WHERE ds = 'b'")) == [(5,)]
    assert _rows(spark.sql("SELECT * FROM e")) == _rows(wh.sql("SELECT * FROM e")) \
        == _rows(spark.read.parquet(f"file://{ext}")) == [(0,), (6,)]
    spark.createDataFrame([(7,)], "x INT").write.parquet(f"file://{landing}", mode="append")
    wh.refresh_views()
    assert _rows(spark.sql("SELECT x FROM o WHERE ds = 'b'")) == [(5,), (7,)]


def test_a_timestamp_partition_reads_as_written_in_every_session_time_zone(wh, spark):
    # Hive's timestamps are wall-clock: spark.sql reads the view as wh.sql and plain Spark
    # read the files, whatever the zone when the view was built and however the zone was set
    wh.sql("CREATE TABLE stamped (x INT) PARTITIONED BY (ts TIMESTAMP) STORED AS PARQUET")
    wh.sql("INSERT INTO stamped PARTITION (ts='2024-01-05 10:00:00') VALUES (1)")
    wh.sql("INSERT INTO stamped PARTITION (ts='2024-07-01 23:30:00') VALUES (2)")
    query = "SELECT x, CAST(ts AS STRING) FROM stamped"
    expected = [(1, "2024-01-05 10:00:00"), (2, "2024-07-01 23:30:00")]
    assert _rows(spark.sql(query)) == expected
    try:
        wh.sql("SET spark.sql.session.timeZone=America/Los_Angeles")
        plain = _plain(spark, wh, "stamped").selectExpr("x", "CAST(ts AS STRING)")
        assert _rows(spark.sql(query)) == _rows(wh.sql(query)) == _rows(plain) == expected
        assert _rows(spark.sql("SELECT x FROM stamped WHERE ts = '2024-01-05 10:00:00'")) == [(1,)]
        spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")  # no hivepark statement since
        plain = _plain(spark, wh, "stamped").selectExpr("x", "CAST(ts AS STRING)")
        assert _rows(spark.sql(query)) == _rows(wh.sql(query)) == _rows(plain) == expected
        assert _rows(spark.sql("SELECT x FROM stamped WHERE ts > '2024-06-01 00:00:00'")) == [(2,)]
        wh.sql("INSERT INTO stamped PARTITION (ts='2024-01-05 10:00:00') VALUES (3)")  # a patch, in Tokyo
        assert _rows(spark.sql(query)) == _rows(wh.sql(query)) == sorted([*expected, (3, "2024-01-05 10:00:00")])
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_a_timestamp_partition_outside_the_layout_and_a_view_of_another_database_follow_the_time_zone(
        wh, spark, tmp_path):
    # a partition with its own LOCATION is read through a frame hivepark keeps (exec/scan
    # TableFrames.mapped); a view of another database's table is planned by hivepark
    landing = tmp_path / "landing"
    spark.createDataFrame([(9,)], "x INT").write.parquet(f"file://{landing}")
    wh.sql("CREATE TABLE stamped (x INT) PARTITIONED BY (ts TIMESTAMP) STORED AS PARQUET")
    wh.sql("INSERT INTO stamped PARTITION (ts='2024-01-05 10:00:00') VALUES (1)")
    wh.sql(f"ALTER TABLE stamped ADD PARTITION (ts='2024-01-01 00:00:00') LOCATION 'file://{landing}'")
    wh.sql("CREATE DATABASE elsewhere")
    wh.sql("CREATE VIEW elsewhere.seen AS SELECT x, ts FROM default.stamped")
    expected = [(1, "2024-01-05 10:00:00"), (9, "2024-01-01 00:00:00")]
    query = "SELECT x, CAST(ts AS STRING) FROM stamped"
    assert _rows(wh.sql(query)) == _rows(spark.sql(query)) == expected
    try:
        wh.sql("SET spark.sql.session.timeZone=America/Los_Angeles")
        assert _rows(wh.sql(query)) == _rows(spark.sql(query)) == expected
        assert _rows(wh.sql("SELECT x FROM stamped WHERE ts = '2024-01-01 00:00:00'")) == [(9,)]
        wh.sql("USE elsewhere")
        view = "SELECT x, CAST(ts AS STRING) FROM seen"
        assert _rows(wh.sql(view)) == _rows(spark.sql(view)) == expected
        wh.sql("SET spark.sql.session.timeZone=Asia/Tokyo")
        assert _rows(wh.sql(view)) == _rows(spark.sql(view)) == expected
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
