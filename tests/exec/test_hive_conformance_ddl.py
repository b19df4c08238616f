"""Hive's DDL and INSERT forms that Hive's regression tests use and hivepark lacked (issue 12):
ALTER TABLE SET/UNSET TBLPROPERTIES and SHOW TBLPROPERTIES (list_bucket_query_oneskew_1.q),
ALTER TABLE t PARTITION (...) RENAME TO PARTITION (...) (alter_rename_partition.q), INSERT with a
column list and DROP PARTITION ... PURGE (alter_table_partition_drop.q), TRUNCATE TABLE
(partition_date2.q). Queries' rows are compared with plain Spark SQL over the same files; errors
with Hive's code and text."""

from __future__ import annotations

import pytest

from described import parameters
from outcomes import error as _error
from outcomes import rows as _rows


def _described(wh, table: str) -> dict[str, str]:
    return parameters(wh, table)


def test_set_and_unset_tblproperties(wh):
    wh.sql("CREATE TABLE tp (a INT) STORED AS PARQUET TBLPROPERTIES ('x'='1')")
    wh.sql("ALTER TABLE tp SET TBLPROPERTIES ('k'='v', 'comment'='a comment', 'x'='2')")
    props = dict(wh.sql("SHOW TBLPROPERTIES tp").collect())
    assert props["k"] == "v" and props["x"] == "2" and props["comment"] == "a comment"
    assert wh.sql("SHOW TBLPROPERTIES tp ('k')").collect() == [("k", "v")]
    assert wh.sql("SHOW TBLPROPERTIES tp ('nope')").collect()[0][0] == \
        "Table default.tp does not have property: nope"
    described = _described(wh, "tp")
    assert described["k"] == "v" and described["x"] == "2"
    ddl = "\n".join(r[0] for r in wh.sql("SHOW CREATE TABLE tp").collect())
    assert "'k'='v'" in ddl and "'x'='2'" in ddl and "COMMENT 'a comment'" in ddl

    wh.sql("ALTER TABLE tp UNSET TBLPROPERTIES ('k', 'x')")
    props = dict(wh.sql("SHOW TBLPROPERTIES tp").collect())
    assert "k" not in props and "x" not in props and "k" not in _described(wh, "tp")
    wh.sql("ALTER TABLE tp UNSET TBLPROPERTIES IF EXISTS ('k', 'never')")  # no error
    e = _error(wh, "ALTER TABLE tp UNSET TBLPROPERTIES ('never')")
    assert e.code == 10215 and str(e).startswith(
        "Please use the following syntax if not sure whether the property existed or not:\n"
        "ALTER TABLE tableName UNSET TBLPROPERTIES IF EXISTS (key1, key2, ...)\n"
        " The following property never does not exist in tp")


def test_tblproperties_hivepark_interprets(wh, tmp_path):
    wh.sql("CREATE TABLE lb (k STRING, v INT) SKEWED BY (k) ON ('a') STORED AS DIRECTORIES STORED AS PARQUET")
    for key in ("hivepark.skew.columns", "hivepark.skew.locations", "hivepark.files", "storage_handler",
                "hivepark.anything"):
        e = _error(wh, f"ALTER TABLE lb SET TBLPROPERTIES ('{key}'='x')")
        assert key in str(e) and ("use" in str(e).lower() or "choose" in str(e).lower()
                                  or "create" in str(e).lower())
    e = _error(wh, "ALTER TABLE lb UNSET TBLPROPERTIES ('hivepark.skew.values')")
    assert "SKEWED BY" in str(e)
    e = _error(wh, "ALTER TABLE lb SET TBLPROPERTIES ('hivepark.skew.auto.topk'='many')")
    assert "whole number" in str(e)
    # takes effect: the next write stores the heaviest value in a directory of its own
    wh.sql("ALTER TABLE lb SET TBLPROPERTIES ('hivepark.skew.auto.topk'='1')")
    assert dict(wh.sql("SHOW TBLPROPERTIES lb").collect())["hivepark.skew.auto.topk"] == "1"
    wh.sql("INSERT INTO lb VALUES ('b', 1), ('b', 2), ('b', 3), ('c', 4)")
    assert (tmp_path / "warehouse" / "lb" / "k=b").is_dir()
    assert _rows(wh.sql("SELECT * FROM lb")) == [("b", 1), ("b", 2), ("b", 3), ("c", 4)]

    # EXTERNAL changes the table's type, as Hive's metastore does: DROP keeps the files
    wh.sql("CREATE TABLE ext (a INT) STORED AS PARQUET")
    wh.sql("INSERT INTO ext VALUES (1)")
    wh.sql("ALTER TABLE ext SET TBLPROPERTIES ('EXTERNAL'='TRUE')")
    assert dict((r[0].strip(), (r[1] or "").strip()) for r in wh.sql("DESCRIBE FORMATTED ext").collect()
                if r[0])["Table Type:"] == "EXTERNAL_TABLE"
    wh.sql("DROP TABLE ext")
    assert any((tmp_path / "warehouse" / "ext").iterdir())


def test_insert_with_a_column_list(wh, spark):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE src (k INT, v STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.read.parquet(f"{wh.location}/src").createOrReplaceTempView("plain_src")
    wh.sql("CREATE TABLE cl (a INT, b STRING, c DOUBLE) PARTITIONED BY (p STRING, q INT) STORED AS PARQUET")
    # listed columns take the select's columns by position, the others are NULL
    wh.sql("INSERT INTO TABLE cl PARTITION (p='x', q=1) (c, a) SELECT k * 1.5, k FROM src")
    wh.sql("INSERT OVERWRITE TABLE cl PARTITION (p='y', q) (b, q) SELECT v, k FROM src WHERE k < 3")
    wh.sql("INSERT INTO cl PARTITION (p='z', q=9) (b) VALUES ('only b')")
    got = _rows(wh.sql("SELECT a, b, c, p, q FROM cl"))
    want = _rows(spark.sql(
        "SELECT k, CAST(NULL AS STRING), k * 1.5, 'x', 1 FROM plain_src UNION ALL "
        "SELECT NULL, v, NULL, 'y', k FROM plain_src WHERE k < 3 UNION ALL "
        "SELECT NULL, 'only b', NULL, 'z', 9"))
    assert got == [tuple(r) for r in want] and len(got) == 6
    # a column list on a table without partitions, the query's names repeated
    wh.sql("CREATE TABLE flat (a INT, b INT, c INT) STORED AS PARQUET")
    wh.sql("INSERT INTO flat (c, b) SELECT x.k, y.k FROM src x JOIN src y ON x.k = y.k")
    assert _rows(wh.sql("SELECT * FROM flat")) == [(None, 1, 1), (None, 2, 2), (None, 3, 3)]

    e = _error(wh, "INSERT INTO flat (a, nope) SELECT 1, 2")
    assert str(e).startswith("'nope' in insert schema specification is not found among regular columns "
                             "of default.flat nor dynamic partition columns.")
    e = _error(wh, "INSERT INTO TABLE cl PARTITION (p='x', q=1) (a, q) SELECT 1, 2")  # q is static here
    assert str(e).startswith("'q' in insert schema specification is not found")
    e = _error(wh, "INSERT INTO flat (a, a) SELECT 1, 2")
    assert str(e).startswith("Duplicate column name detected in default.flat table schema specification")
    e = _error(wh, "INSERT INTO flat (a, b) SELECT 1, 2, 3")
    assert str(e).startswith("Expected 2 columns for insclause-0/default.flat; select produces 3 columns")
    assert _rows(wh.sql("SELECT * FROM flat")) == [(None, 1, 1), (None, 2, 2), (None, 3, 3)]


def _files(root) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
            and not p.name.startswith((".", "_")) and ".hivepark" not in p.parts}


def test_rename_partition(wh, spark, tmp_path):
    wh.sql("CREATE TABLE rp (a INT, b STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO rp PARTITION (ds='2008-04-08', hr=11) VALUES (1, 'x'), (2, 'y')")
    wh.sql("INSERT INTO rp PARTITION (ds='2008-04-08', hr=11) VALUES (3, 'z')")
    wh.sql("INSERT INTO rp PARTITION (ds='2008-04-09', hr=12) VALUES (4, 'w')")
    version = wh.catalog.get_table("default", "rp").version
    wh.sql("ALTER TABLE rp PARTITION (ds='2008-04-08', hr='011') RENAME TO PARTITION (ds='2010-01-01', hr=1)")
    assert wh.catalog.get_table("default", "rp").version > version
    assert [r[0] for r in wh.sql("SHOW PARTITIONS rp").collect()] == ["ds=2008-04-09/hr=12", "ds=2010-01-01/hr=1"]
    root = tmp_path / "warehouse" / "rp"
    assert not (root / "ds=2008-04-08").exists()  # the old directory and its empty parent went
    assert {f.split("/")[0] for f in _files(root)} == {"ds=2008-04-09", "ds=2010-01-01"}
    got = _rows(wh.sql("SELECT a, b, ds, hr FROM rp WHERE ds = '2010-01-01'"))
    want = _rows(spark.read.parquet(str(root / "ds=2010-01-01" / "hr=1")).selectExpr("a", "b", "'2010-01-01'", "1"))
    assert got == want == [(1, "x", "2010-01-01", 1), (2, "y", "2010-01-01", 1), (3, "z", "2010-01-01", 1)]
    described = {r[0].strip(): (r[1] or "").strip() for r in
                 wh.sql("DESCRIBE FORMATTED rp PARTITION (ds='2010-01-01', hr=1)").collect() if r[0]}
    assert described["Location:"].endswith("/rp/ds=2010-01-01/hr=1")

    e = _error(wh, "ALTER TABLE rp PARTITION (ds='1999-01-01', hr=1) RENAME TO PARTITION (ds='x', hr=1)")
    assert e.code == 10006 and str(e).startswith("Partition not found {ds=1999-01-01, hr=1}")
    e = _error(wh, "ALTER TABLE rp PARTITION (ds='2010-01-01', hr=1) RENAME TO PARTITION (ds='2008-04-09', hr=12)")
    assert str(e).startswith("Unable to rename partition. Partition already exists:default.rp.[2008-04-09, 12]")
    e = _error(wh, "ALTER TABLE rp PARTITION (ds='2010-01-01', hr=1) RENAME TO PARTITION (ds='x')")
    assert "missing: hr" in str(e)  # a target must give every key
    assert len(_rows(wh.sql("SELECT * FROM rp"))) == 4

    # an external table: only the metastore row changes, the files stay where they are
    wh.sql(f"CREATE EXTERNAL TABLE erp (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET "
           f"LOCATION '{tmp_path}/ext'")
    wh.sql("INSERT INTO erp PARTITION (p='a') VALUES (7)")
    wh.sql("ALTER TABLE erp PARTITION (p='a') RENAME TO PARTITION (p='b')")
    assert _rows(wh.sql("SELECT * FROM erp")) == [(7, "b")]
    assert (tmp_path / "ext" / "p=a").is_dir() and not (tmp_path / "ext" / "p=b").exists()


RENAMER = """
import sys, hivepark
wh = hivepark.connect(sys.argv[1])
wh.sql("ALTER TABLE t PARTITION (ds='a') RENAME TO PARTITION (ds='z')")
"""


@pytest.mark.parametrize("fault, after", [("before_commit", False), ("after_commit", True)])
def test_rename_partition_killed_leaves_before_or_after(tmp_path, spark, fault, after):
    import os
    import subprocess
    import sys

    import hivepark

    root = tmp_path / "warehouse"
    wh = hivepark.connect(str(root), spark=spark)
    wh.sql("CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO t PARTITION (ds='a') VALUES (1), (2)")
    wh.sql("INSERT INTO t PARTITION (ds='b') VALUES (3)")
    wh.close()
    env = dict(os.environ, HIVEPARK_FAULT=fault, HIVEPARK_DRIVER_MEMORY="1g", HIVEPARK_MASTER="local[1]")
    env.pop("HIVEPARK_FAULT_PAUSE", None)
    proc = subprocess.run([sys.executable, "-c", RENAMER, str(root)], env=env, capture_output=True, timeout=300)
    assert proc.returncode == -9  # killed at the fault point
    wh = hivepark.connect(str(root), spark=spark)  # recovers the crashed statement
    try:
        parts = [r[0] for r in wh.sql("SHOW PARTITIONS t").collect()]
        files = _files(root / "t")
        if after:
            assert parts == ["ds=b", "ds=z"] and {f.split("/")[0] for f in files} == {"ds=b", "ds=z"}
            assert _rows(wh.sql("SELECT * FROM t")) == [(1, "z"), (2, "z"), (3, "b")]
        else:
            assert parts == ["ds=a", "ds=b"] and {f.split("/")[0] for f in files} == {"ds=a", "ds=b"}
            assert _rows(wh.sql("SELECT * FROM t")) == [(1, "a"), (2, "a"), (3, "b")]
    finally:
        wh.close()


def test_exchange_partition(wh, spark, tmp_path):
    # exchange_partition.q / exchange_partition2.q (a partial spec moves every partition under it)
    for name in ("src", "dst"):
        wh.sql(f"CREATE TABLE {name} (a INT, b STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO src PARTITION (ds='1', hr=1) VALUES (1, 'x'), (2, 'y')")
    wh.sql("INSERT INTO src PARTITION (ds='1', hr=2) VALUES (3, 'z')")
    wh.sql("INSERT INTO src PARTITION (ds='2', hr=1) VALUES (4, 'w')")
    wh.sql("INSERT INTO dst PARTITION (ds='3', hr=1) VALUES (5, 'v')")
    versions = [wh.catalog.get_table("default", n).version for n in ("src", "dst")]
    wh.sql("ALTER TABLE dst EXCHANGE PARTITION (ds='1') WITH TABLE src")
    assert [wh.catalog.get_table("default", n).version for n in ("src", "dst")] == [v + 1 for v in versions]
    assert [r[0] for r in wh.sql("SHOW PARTITIONS dst").collect()] == ["ds=1/hr=1", "ds=1/hr=2", "ds=3/hr=1"]
    assert [r[0] for r in wh.sql("SHOW PARTITIONS src").collect()] == ["ds=2/hr=1"]
    root = tmp_path / "warehouse"
    assert {f.split("/")[0] for f in _files(root / "src")} == {"ds=2"} and not (root / "src" / "ds=1").exists()
    assert {"/".join(f.split("/")[:2]) for f in _files(root / "dst")} == {"ds=1/hr=1", "ds=1/hr=2", "ds=3/hr=1"}
    plain = spark.read.option("basePath", str(root / "dst")).parquet(str(root / "dst"))
    assert _rows(wh.sql("SELECT a, b, ds, hr FROM dst")) == _rows(plain.selectExpr("a", "b", "string(ds)", "hr")) == [
        (1, "x", "1", 1), (2, "y", "1", 1), (3, "z", "1", 2), (5, "v", "3", 1)]
    assert _rows(wh.sql("SELECT a FROM src")) == [(4,)]
    assert _rows(spark.sql("SELECT a FROM src")) == [(4,)]  # the Spark view of src follows

    wh.sql("INSERT INTO src PARTITION (ds='3', hr=9) VALUES (6, 'u')")

    def unchanged() -> None:
        assert len(_rows(wh.sql("SELECT * FROM dst"))) == 4 and len(_rows(wh.sql("SELECT * FROM src"))) == 2

    e = _error(wh, "ALTER TABLE dst EXCHANGE PARTITION (ds='3') WITH TABLE src")
    assert e.code == 10118 and str(e).startswith("Partition already exists [ds=3/hr=1] in default.dst")
    e = _error(wh, "ALTER TABLE dst EXCHANGE PARTITION (hr=9) WITH TABLE src")
    assert e.code == 10234 and str(e).startswith("Partition values specified are not continuous.")
    e = _error(wh, "ALTER TABLE dst EXCHANGE PARTITION (ds='9') WITH TABLE src")
    assert e.code == 10006 and str(e).startswith("Partition not found {ds=9}")
    wh.sql("CREATE TABLE other (a BIGINT, b STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    e = _error(wh, "ALTER TABLE other EXCHANGE PARTITION (ds='2') WITH TABLE src")
    assert e.code == 10235 and "a bigint" in str(e) and "a int" in str(e)
    wh.sql("CREATE TABLE orc_t (a INT, b STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS ORC")
    e = _error(wh, "ALTER TABLE orc_t EXCHANGE PARTITION (ds='2') WITH TABLE src")
    assert e.code == 10235 and "STORED AS ORC" in str(e) and "PARQUET" in str(e)
    wh.sql(f"CREATE EXTERNAL TABLE ext (a INT, b STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET "
           f"LOCATION '{tmp_path}/ext'")
    e = _error(wh, "ALTER TABLE ext EXCHANGE PARTITION (ds='2') WITH TABLE src")
    assert "external" in str(e) and "ADD PARTITION" in str(e)
    unchanged()
    assert not (root / "orc_t" / "ds=2").exists() and not (tmp_path / "ext" / "ds=2").exists()


def test_touch(wh):
    import time

    wh.sql("CREATE TABLE tt (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO tt PARTITION (ds='1') VALUES (1)")
    wh.sql("INSERT INTO tt PARTITION (ds='2') VALUES (2)")

    def ddl_time(values: tuple) -> int:
        p = wh.catalog.get_partition(wh.catalog.get_table("default", "tt"), values)
        return int(p.parameters["transient_lastDdlTime"])

    before = {v: ddl_time((v,)) for v in ("1", "2")}
    time.sleep(1.1)
    wh.sql("ALTER TABLE tt TOUCH PARTITION (ds='1')")
    assert ddl_time(("1",)) > before["1"] and ddl_time(("2",)) == before["2"]
    wh.sql("ALTER TABLE tt TOUCH")
    assert int(dict(wh.sql("SHOW TBLPROPERTIES tt").collect())["transient_lastDdlTime"]) >= before["1"] + 1
    e = _error(wh, "ALTER TABLE tt TOUCH PARTITION (ds='9')")
    assert e.code == 10006 and "Partition not found" in str(e)
    assert _rows(wh.sql("SELECT a, ds FROM tt")) == [(1, "1"), (2, "2")]


def test_regex_column_names(wh, spark, tmp_path):
    # quotedid_basic.q / regex_col.q: hive.support.quoted.identifiers=none makes a back-quoted name
    # in a SELECT list a regular expression over the column names
    wh.sql("CREATE TABLE rx (a INT, b STRING, ab INT) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO rx PARTITION (ds='1', hr=1) VALUES (1, 'x', 10), (2, 'y', 20)")
    wh.sql("INSERT INTO rx PARTITION (ds='2', hr=1) VALUES (3, 'z', 30)")
    spark.read.parquet(str(tmp_path / "warehouse" / "rx" / "ds=1" / "hr=1")).createOrReplaceTempView("plain_rx")
    e = _error(wh, "SELECT `(ds|hr)?+.+` FROM rx")  # Hive's default: a name, which no column has
    assert "(ds|hr)?+.+" in str(e)
    wh.sql("SET hive.support.quoted.identifiers=none")
    got = wh.sql("SELECT `(ds|hr)?+.+` FROM rx WHERE ds = '1'")
    assert got.columns == ["a", "b", "ab"]
    assert _rows(got) == _rows(spark.sql("SELECT a, b, ab FROM plain_rx")) and len(_rows(got)) == 2
    got = wh.sql("SELECT r.`a.*`, hr FROM rx r WHERE ds = '1' AND a > 1")
    assert got.columns == ["a", "ab", "hr"] and _rows(got) == [(2, 20, 1)]
    wh.sql("SET hive.support.quoted.identifiers=column")
    assert wh.sql("SELECT `a` FROM rx WHERE ds = '2'").collect() == [(3,)]


def test_input_file_name_virtual_column(wh, spark, tmp_path):
    # virtual_column.q: INPUT__FILE__NAME is the file each row was read from
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE vc (id INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO vc PARTITION (ds) VALUES (1, 'a'), (2, 'b'), (3, 'b')")
    root = tmp_path / "warehouse" / "vc"
    plain = spark.read.option("basePath", str(root)).parquet(str(root)) \
        .selectExpr("id", "input_file_name() AS f", "string(ds) AS ds")
    plain.createOrReplaceTempView("plain_vc")
    got = wh.sql("SELECT id, INPUT__FILE__NAME FROM vc WHERE ds = 'b'")
    assert got.columns == ["id", "input__file__name"]
    assert _rows(got) == _rows(spark.sql("SELECT id, f FROM plain_vc WHERE ds = 'b'"))
    assert all("/vc/ds=b/" in r[1] for r in got.collect()) and len(got.collect()) == 2
    assert _rows(wh.sql("SELECT v.input__file__name, count(*) FROM vc v GROUP BY v.input__file__name")) == \
        _rows(spark.sql("SELECT f, count(*) FROM plain_vc GROUP BY f"))
    assert _rows(wh.sql("SELECT id FROM vc WHERE INPUT__FILE__NAME LIKE '%ds=a%'")) == [(1,)]
    e = _error(wh, "SELECT BLOCK__OFFSET__INSIDE__FILE FROM vc")
    assert "BLOCK__OFFSET__INSIDE__FILE" in str(e) and "INPUT__FILE__NAME" in str(e)


def test_show_partitions_where_order_by_limit(wh, spark, tmp_path):
    # Hive 4's show_partitions.q forms: the latest partition is SHOW PARTITIONS t ORDER BY ds DESC LIMIT 1
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE sp (a INT) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO sp PARTITION (ds, hr) VALUES (1, '2024-01-01', 1), (2, '2024-01-01', 10), "
           "(3, '2024-01-02', 2), (4, '2024-01-03', 9), (5, NULL, 3)")
    root = str(tmp_path / "warehouse" / "sp")
    spark.read.schema("a INT, ds STRING, hr INT").option("basePath", root).parquet(root) \
        .createOrReplaceTempView("plain_sp")

    def names(sql: str) -> list[str]:
        return [f"ds={ds if ds is not None else '__HIVE_DEFAULT_PARTITION__'}/hr={hr}"
                for ds, hr in spark.sql(f"SELECT DISTINCT ds, hr FROM plain_sp {sql}").collect()]

    def shown(sql: str) -> list[str]:
        return [r[0] for r in wh.sql(f"SHOW PARTITIONS sp {sql}").collect()]

    for clauses in ("WHERE hr > 1 ORDER BY hr DESC", "ORDER BY ds DESC, hr LIMIT 2",
                    "WHERE ds IS NULL OR hr = 2 ORDER BY hr",
                    "WHERE ds BETWEEN '2024-01-01' AND '2024-01-02' AND hr IN (1, 2, 10) ORDER BY ds, hr DESC",
                    "ORDER BY ds NULLS FIRST, hr LIMIT 3"):
        assert shown(clauses.replace(" NULLS FIRST", "")) == names(clauses), clauses
    assert shown("ORDER BY ds DESC LIMIT 1") == ["ds=2024-01-03/hr=9"]
    assert shown("PARTITION (ds='2024-01-01') ORDER BY hr") == ["ds=2024-01-01/hr=1", "ds=2024-01-01/hr=10"]
    assert _error(wh, "SHOW PARTITIONS sp WHERE a = 1").code == 10002  # a data column
    assert "constants" in str(_error(wh, "SHOW PARTITIONS sp WHERE upper(ds) = 'X'"))


def test_a_date_key_compared_with_any_text_spark_casts(wh, spark, tmp_path):
    # '2024-1-6' is the date Spark's cast makes of it: SHOW PARTITIONS decides it, SELECT prunes with it
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE dk (a INT) PARTITIONED BY (dt DATE) STORED AS PARQUET")
    wh.sql("INSERT INTO dk PARTITION (dt) VALUES (1, DATE'2024-01-05'), (2, DATE'2024-01-07'), (3, DATE'2024-02-01')")
    root = str(tmp_path / "warehouse" / "dk")
    spark.read.schema("a INT, dt DATE").option("basePath", root).parquet(root).createOrReplaceTempView("plain_dk")
    for where in ("dt < '2024-1-6'", "dt = ' 2024-01-07 10:00'", "dt IN ('2024-1-5', '2024-2-1T00')",
                  "dt BETWEEN '2024' AND '2024-1-6'", "dt >= '2024-1'", "NOT dt <> '2024-2-1'"):
        expected = [f"dt={r[0]}" for r in spark.sql(f"SELECT DISTINCT dt FROM plain_dk WHERE {where} ORDER BY dt")
                    .collect()]
        assert [r[0] for r in wh.sql(f"SHOW PARTITIONS dk WHERE {where} ORDER BY dt").collect()] == expected, where
        assert _rows(wh.sql(f"SELECT * FROM dk WHERE {where}")) == \
            _rows(spark.sql(f"SELECT * FROM plain_dk WHERE {where}")), where
        plan = "\n".join(r[0] for r in wh.sql(f"EXPLAIN SELECT * FROM dk WHERE {where}").collect())
        assert f"partitions={len(expected)}/3" in plan, (where, plan)


def test_a_date_key_compared_with_a_timestamp_prunes_as_spark_compares(wh, spark, tmp_path):
    """Found by a hunt: a DATE key compared with a TIMESTAMP literal was left to Spark, so every
    partition was listed (EXPLAIN: partitions=3/3). Spark compares the date's midnight with it:
    a midnight literal is its date, another lies between two dates."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE tk (a INT) PARTITIONED BY (dt DATE) STORED AS PARQUET")
    wh.sql("INSERT INTO tk PARTITION (dt) VALUES (1, DATE'2024-01-05'), (2, DATE'2024-01-07'), (3, DATE'2024-02-01'), "
           "(4, NULL)")
    root = str(tmp_path / "warehouse" / "tk")
    spark.read.schema("a INT, dt DATE").option("basePath", root).parquet(root).createOrReplaceTempView("plain_tk")
    for where in ("dt = TIMESTAMP'2024-01-07 00:00:00'", "dt = TIMESTAMP'2024-01-07 10:00:00'",
                  "dt <> TIMESTAMP'2024-01-07 10:00:00'", "dt < TIMESTAMP'2024-01-07 10:00:00'",
                  "dt <= TIMESTAMP'2024-01-07 00:00:00'", "dt > TIMESTAMP'2024-01-07 00:00:01'",
                  "dt >= TIMESTAMP'2024-01-05 23:59:59'", "NOT dt >= TIMESTAMP'2024-01-05 00:00:00'",
                  "dt IN (TIMESTAMP'2024-02-01 00:00:00', TIMESTAMP'2024-01-05 12:00:00')",
                  "dt NOT IN (TIMESTAMP'2024-01-05 12:00:00')", "dt IN (TIMESTAMP'2024-01-05 12:00:00', NULL)",
                  "NOT dt IN (TIMESTAMP'2024-01-05 12:00:00', TIMESTAMP'2024-01-07 00:00:00')"):
        expected = spark.sql(f"SELECT count(DISTINCT coalesce(dt, DATE'1000-01-01')) FROM plain_tk WHERE {where}")
        assert _rows(wh.sql(f"SELECT * FROM tk WHERE {where}")) == \
            _rows(spark.sql(f"SELECT * FROM plain_tk WHERE {where}")), where
        plan = "\n".join(r[0] for r in wh.sql(f"EXPLAIN SELECT * FROM tk WHERE {where}").collect())
        assert f"partitions={expected.first()[0]}/4" in plan, (where, plan)


def test_in_and_between_compare_strings_and_numbers_as_doubles(wh, spark):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE nb (i INT, s STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO nb PARTITION (ds, hr) VALUES (1, '1', '1', 11), (2, '1.0', '1.0', 11), (3, 'abc', '01', 12), "
           "(4, NULL, 'abc', 12), (5, ' 5', '5', 13), (6, '2', '2', 13)")
    spark.read.parquet(f"{wh.location}/nb").createOrReplaceTempView("plain_nb")
    # Hive's rule, spelled out for plain Spark: each operand of IN / BETWEEN compared as DOUBLE
    for mine, hive in [
        ("SELECT i FROM nb WHERE i IN ('1', 'abc')", "SELECT i FROM plain_nb WHERE i = 1"),
        ("SELECT i FROM nb WHERE s IN (1, 2)", "SELECT i FROM plain_nb WHERE try_cast(s AS DOUBLE) IN (1, 2)"),
        ("SELECT i FROM nb WHERE s NOT IN (1, 7)",
         "SELECT i FROM plain_nb WHERE try_cast(s AS DOUBLE) NOT IN (1, 7)"),
        ("SELECT i FROM nb WHERE s BETWEEN 1 AND 5",
         "SELECT i FROM plain_nb WHERE try_cast(s AS DOUBLE) BETWEEN 1 AND 5"),
        ("SELECT i FROM nb WHERE i BETWEEN '2' AND 'x'", "SELECT i FROM plain_nb WHERE false"),
        ("SELECT i FROM nb WHERE i BETWEEN '2' AND '4'", "SELECT i FROM plain_nb WHERE i BETWEEN 2 AND 4"),
        # partition columns: pruning keeps every partition such a comparison may match
        ("SELECT i, ds FROM nb WHERE ds IN (1, 5)",
         "SELECT i, ds FROM plain_nb WHERE try_cast(ds AS DOUBLE) IN (1, 5)"),
        ("SELECT i, ds FROM nb WHERE ds BETWEEN 0.5 AND 1.5",
         "SELECT i, ds FROM plain_nb WHERE try_cast(ds AS DOUBLE) BETWEEN 0.5 AND 1.5"),
        ("SELECT i, hr FROM nb WHERE hr IN ('11', 'abc')", "SELECT i, hr FROM plain_nb WHERE hr = 11"),
        ("SELECT i, hr FROM nb WHERE hr BETWEEN '12' AND 13.5", "SELECT i, hr FROM plain_nb WHERE hr >= 12"),
    ]:
        got = _rows(wh.sql(mine))
        assert got == _rows(spark.sql(hive)), mine
    assert [r[0] for r in wh.sql("SELECT i FROM nb WHERE ds IN (1, 5) ORDER BY i LIMIT 10").collect()] == [1, 2, 3, 5]
    # a string literal that is the column's own type still prunes
    assert "partitions=2/6" in wh.explain("SELECT i FROM nb WHERE hr IN ('11', '14')")
    assert "partitions=4/6" in wh.explain("SELECT i FROM nb WHERE hr BETWEEN '12' AND '13'")


def test_an_in_subquery_compares_a_string_and_a_number_as_doubles(wh, spark):
    """Found by a hunt of lookup queries: Hive runs ``x IN (SELECT c ...)`` as a semi join on ``x = c``,
    a string meeting a number compared as DOUBLE, as the join itself is; Spark's ANSI cast of '12.0'
    to INT failed the query (CAST_INVALID_INPUT)."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE nb (i INT, s STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO nb PARTITION (ds, hr) VALUES (1, '1', '1', 11), (2, '1.0', '1.0', 11), (3, 'abc', '01', 12), "
           "(4, NULL, 'abc', 12), (5, ' 5', '5', 13), (6, '2', '2', 13)")
    wh.sql("CREATE TABLE lk (v STRING, n INT) STORED AS PARQUET")
    wh.sql("INSERT INTO lk VALUES ('11', 1), ('12.0', 5), ('abc', NULL), (NULL, 2)")
    spark.read.parquet(f"{wh.location}/nb").createOrReplaceTempView("plain_nb")
    spark.read.parquet(f"{wh.location}/lk").createOrReplaceTempView("plain_lk")
    for mine, hive in [
        ("SELECT i FROM nb WHERE hr IN (SELECT v FROM lk)",
         "SELECT i FROM plain_nb WHERE hr IN (SELECT try_cast(v AS DOUBLE) FROM plain_lk)"),
        ("SELECT i FROM nb WHERE s IN (SELECT n FROM lk) AND i > 1",
         "SELECT i FROM plain_nb WHERE try_cast(s AS DOUBLE) IN (SELECT n FROM plain_lk) AND i > 1"),
        ("SELECT i, ds FROM nb x WHERE x.ds IN (SELECT l.n AS k FROM lk l WHERE l.v <> 'abc')",
         "SELECT i, ds FROM plain_nb WHERE try_cast(ds AS DOUBLE) IN (SELECT n FROM plain_lk WHERE v <> 'abc')"),
    ]:
        got = _rows(wh.sql(mine))
        assert got and got == _rows(spark.sql(hive)), mine


def test_strict_type_safety_refuses_bigint_against_string_or_double(wh, spark):
    wh.sql("CREATE TABLE ts (b BIGINT, s STRING, d DOUBLE, i INT) STORED AS PARQUET")
    wh.sql("INSERT INTO ts VALUES (1, '1', 1.0, 1), (2, '2.0', 2.5, 2), (3, 'x', 3.0, 3)")
    spark.read.parquet(f"{wh.location}/ts").createOrReplaceTempView("plain_ts")
    for query in ("SELECT * FROM ts WHERE b = s", "SELECT * FROM ts WHERE d > b",
                  "SELECT * FROM ts x JOIN ts y ON x.b = y.s", "SELECT * FROM ts WHERE b BETWEEN d AND 5"):
        e = _error(wh, query)
        assert e.code == 10014 and "Unsafe compares between different types are disabled for safety reasons. " \
            "If you know what you are doing, please set hive.strict.checks.type.safety to false" in str(e), query
    # literals are converted to the column's type first, as in Hive; other types compare freely
    assert _rows(wh.sql("SELECT b FROM ts WHERE b = '2' OR b = 3.0")) == [(2,), (3,)]
    assert _rows(wh.sql("SELECT b FROM ts WHERE i = s OR i < d")) == \
        _rows(spark.sql("SELECT b FROM plain_ts WHERE try_cast(s AS DOUBLE) = i OR i < d"))
    wh.sql("SET hive.strict.checks.type.safety=false")
    assert _rows(wh.sql("SELECT b FROM ts WHERE b = s OR d > b")) == \
        _rows(spark.sql("SELECT b FROM plain_ts WHERE try_cast(s AS DOUBLE) = b OR d > b"))


def test_drop_partition_purge(wh, spark, tmp_path):
    # alter_table_partition_drop.q: DROP PARTITION (...) PURGE; hivepark keeps no trash, so it drops
    # as without PURGE (the managed partition's files are deleted)
    wh.sql("CREATE TABLE pp (k INT, v STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
    for p in ("a", "b", "c", "d"):
        wh.sql(f"INSERT INTO pp PARTITION (p='{p}') VALUES (1, '{p}1'), (2, '{p}2')")
    wh.sql("ALTER TABLE pp DROP PARTITION (p='a') PURGE")
    wh.sql("ALTER TABLE pp DROP IF EXISTS PARTITION (p='b'), PARTITION (p='nope') PURGE")
    root = tmp_path / "warehouse" / "pp"
    assert sorted(x.name for x in root.iterdir() if x.name.startswith("p=")) == ["p=c", "p=d"]
    assert [r[0] for r in wh.sql("SHOW PARTITIONS pp").collect()] == ["p=c", "p=d"]
    want = spark.read.parquet(str(root)).select("k", "v", "p")
    assert _rows(wh.sql("SELECT * FROM pp")) == _rows(want) and len(_rows(want)) == 4
    e = _error(wh, "ALTER TABLE pp DROP PARTITION (p='nope') PURGE")
    assert e.code == 10006 and str(e).startswith("Partition not found")
    # as Hive, every spec is checked before any partition is dropped: one that matches nothing
    # fails the statement and the others' partitions, files and rows stay
    e = _error(wh, "ALTER TABLE pp DROP PARTITION (p='c'), PARTITION (p='nope'), PARTITION (p>'c')")
    assert e.code == 10006 and "{p=nope}" in str(e) and "none was dropped" in str(e)
    assert sorted(x.name for x in root.iterdir() if x.name.startswith("p=")) == ["p=c", "p=d"]
    assert [r[0] for r in wh.sql("SHOW PARTITIONS pp").collect()] == ["p=c", "p=d"]
    assert _rows(wh.sql("SELECT * FROM pp")) == _rows(spark.read.parquet(str(root)).select("k", "v", "p"))
    wh.sql("ALTER TABLE pp DROP PARTITION (p='c'), PARTITION (p>'c')")  # both in one transaction
    assert [r[0] for r in wh.sql("SHOW PARTITIONS pp").collect()] == [] and not any(root.iterdir())


def test_truncate_table(wh, spark, tmp_path):
    # partition_date2.q: TRUNCATE TABLE t PARTITION (...) empties the partitions it names, which stay
    wh.sql("CREATE TABLE tr (k INT, v STRING) PARTITIONED BY (dt DATE, region INT) STORED AS PARQUET")
    for dt, region in (("2000-01-01", 1), ("2000-01-01", 2), ("1999-01-01", 2)):
        wh.sql(f"INSERT INTO tr PARTITION (dt=date '{dt}', region={region}) VALUES (1, 'a'), (2, 'b')")
    root = tmp_path / "warehouse" / "tr"
    before = _files(root)
    wh.sql("TRUNCATE TABLE tr PARTITION (dt=date '2000-01-01', region=2)")
    assert [r[0] for r in wh.sql("SHOW PARTITIONS tr").collect()] == [
        "dt=1999-01-01/region=2", "dt=2000-01-01/region=1", "dt=2000-01-01/region=2"]
    assert not any(f.startswith("dt=2000-01-01/region=2/") for f in _files(root))
    assert (root / "dt=2000-01-01" / "region=2").is_dir()
    want = spark.read.parquet(str(root)).select("k", "v", "dt", "region")
    got = _rows(wh.sql("SELECT * FROM tr"))
    assert got == _rows(want) and len(got) == 4
    # a partial spec: every partition it names
    wh.sql("TRUNCATE TABLE tr PARTITION (region=2)")
    got = _rows(wh.sql("SELECT k, v, CAST(dt AS STRING), region FROM tr"))
    assert got == [(1, "a", "2000-01-01", 1), (2, "b", "2000-01-01", 1)]
    assert _files(root) == {f for f in before if f.startswith("dt=2000-01-01/region=1/")}
    params = {(r[1] or "").strip(): (r[2] or "").strip()
              for r in wh.sql("DESCRIBE FORMATTED tr PARTITION (dt='1999-01-01', region=2)").collect()}
    assert params["numRows"] == "0" and params["numFiles"] == "0"
    wh.sql("INSERT INTO tr PARTITION (dt='1999-01-01', region=2) VALUES (3, 'c')")
    assert _rows(wh.sql("SELECT k FROM tr WHERE region = 2")) == [(3,)]
    # no spec: every partition; an unpartitioned table
    wh.sql("TRUNCATE TABLE tr")
    assert _rows(wh.sql("SELECT * FROM tr")) == [] and len(wh.sql("SHOW PARTITIONS tr").collect()) == 3
    wh.sql("CREATE TABLE flat_t (k INT) STORED AS PARQUET")
    wh.sql("INSERT INTO flat_t VALUES (1), (2)")
    wh.sql("TRUNCATE flat_t")
    assert _rows(wh.sql("SELECT * FROM flat_t")) == [] and _files(tmp_path / "warehouse" / "flat_t") == set()
    wh.sql("INSERT INTO flat_t VALUES (5)")
    assert _rows(wh.sql("SELECT * FROM flat_t")) == [(5,)]

    e = _error(wh, "TRUNCATE TABLE flat_t PARTITION (k=1)")
    assert e.code == 10148 and str(e).startswith("Partition spec for non partitioned table flat_t.")
    e = _error(wh, "TRUNCATE TABLE tr PARTITION (dt='1980-01-01', region=3)")
    assert e.code == 10006 and str(e).startswith("Partition not found {dt=1980-01-01, region=3}")
    ext = tmp_path / "ext"
    wh.sql(f"CREATE EXTERNAL TABLE ext_t (k INT) STORED AS PARQUET LOCATION '{ext}'")
    wh.sql("INSERT INTO ext_t VALUES (1)")
    e = _error(wh, "TRUNCATE TABLE default.ext_t")
    assert e.code == 10146 and str(e).startswith("Cannot truncate non-managed table default.ext_t.")
    assert _rows(wh.sql("SELECT * FROM ext_t")) == [(1,)]


@pytest.mark.parametrize("fmt", ["TEXTFILE", "PARQUET"])
def test_truncated_table_of_every_format_reads_empty(wh, spark, fmt):
    # found by a hunt for bugs: a TEXTFILE table whose every partition was emptied failed every
    # query (Spark's text reader cannot read no file with partition columns); Parquet's read empty
    wh.sql(f"CREATE TABLE te_{fmt} (k INT, v STRING) PARTITIONED BY (ds STRING, n INT) STORED AS {fmt}")
    spark.sql("SELECT 1 AS k, 'x' AS v").createOrReplaceTempView("te_src")
    for n in (1, 2):
        wh.sql(f"INSERT INTO te_{fmt} PARTITION (ds='a', n={n}) SELECT * FROM te_src")
    for _ in range(2):  # the second query reuses what the first built
        assert _rows(wh.sql(f"SELECT * FROM te_{fmt}")) == [(1, "x", "a", 1), (1, "x", "a", 2)]
    wh.sql(f"TRUNCATE TABLE te_{fmt}")
    for _ in range(2):
        for query in (f"SELECT * FROM te_{fmt}", f"SELECT * FROM te_{fmt} WHERE n = 1"):
            assert _rows(wh.sql(query)) == _rows(spark.sql("SELECT * FROM te_src WHERE k = 0")), query
        assert _rows(wh.sql(f"SELECT count(*) FROM te_{fmt} WHERE ds = 'a'")) == [(0,)]
        assert _rows(spark.sql(f"SELECT * FROM te_{fmt}")) == []  # the table's Spark view
    wh.sql(f"INSERT INTO te_{fmt} PARTITION (ds='b', n=3) SELECT * FROM te_src")
    assert _rows(wh.sql(f"SELECT * FROM te_{fmt}")) == [(1, "x", "b", 3)]


def test_drop_database_cascade_deletes_partition_files(wh, tmp_path):
    # found re-running alter_rename_partition.q: DROP DATABASE ... CASCADE left the files of a
    # managed partitioned table's partitions (and so the database's directory) behind
    wh.sql("CREATE DATABASE dx")
    wh.sql("CREATE TABLE dx.pt (c STRING) PARTITIONED BY (p STRING) STORED AS TEXTFILE")
    wh.sql("INSERT INTO dx.pt PARTITION (p='a:') VALUES ('1')")
    wh.sql("INSERT INTO dx.pt PARTITION (p='b') VALUES ('2')")
    wh.sql("ALTER TABLE dx.pt PARTITION (p='a:') RENAME TO PARTITION (p='c:')")
    wh.sql("CREATE TABLE dx.flat (c STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO dx.flat VALUES ('3')")
    ext = tmp_path / "ext"
    wh.sql(f"CREATE EXTERNAL TABLE dx.ept (c STRING) PARTITIONED BY (p STRING) STORED AS PARQUET LOCATION '{ext}'")
    wh.sql("INSERT INTO dx.ept PARTITION (p='x') VALUES ('4')")
    kept = _files(ext)
    assert len(kept) == 1
    wh.sql("DROP DATABASE dx CASCADE")
    assert not (tmp_path / "warehouse" / "dx.db").exists()
    assert _files(ext) == kept  # an external table's files stay
    # a database of the same name starts empty, as in Hive
    wh.sql("CREATE DATABASE dx")
    wh.sql("CREATE TABLE dx.pt (c STRING) PARTITIONED BY (p STRING) STORED AS TEXTFILE")
    wh.sql("ALTER TABLE dx.pt ADD PARTITION (p='c:')")
    assert _rows(wh.sql("SELECT * FROM dx.pt")) == []


def test_empty_added_partition_of_a_textfile_table(wh, spark, tmp_path):
    # found with the test above: a TEXTFILE table's partition added by ADD PARTITION, its
    # directory still empty, failed every scan that chose it ("Text data source supports only
    # a single column"); Hive reads no rows from it
    wh.sql("CREATE TABLE tx (c STRING, n INT) PARTITIONED BY (p STRING) STORED AS TEXTFILE")
    wh.sql("ALTER TABLE tx ADD PARTITION (p='empty')")
    (tmp_path / "warehouse" / "tx" / "p=sub" / "only_a_dir").mkdir(parents=True)
    wh.sql("ALTER TABLE tx ADD PARTITION (p='sub')")
    assert _rows(wh.sql("SELECT * FROM tx")) == []
    assert _rows(wh.sql("SELECT count(*) FROM tx WHERE p = 'empty'")) == [(0,)]
    wh.sql("INSERT INTO tx PARTITION (p='full') VALUES ('a', 1), ('b', 2)")
    plain = spark.read.csv(str(tmp_path / "warehouse" / "tx" / "p=full"), sep="\x01", schema="c STRING, n INT")
    assert _rows(wh.sql("SELECT c, n FROM tx")) == _rows(plain) and len(_rows(plain)) == 2
