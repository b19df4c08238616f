"""Hive's DDL and INSERT forms that Hive's regression tests use and hivepark lacked (issue 12):
ALTER TABLE SET/UNSET TBLPROPERTIES and SHOW TBLPROPERTIES (list_bucket_query_oneskew_1.q),
ALTER TABLE t PARTITION (...) RENAME TO PARTITION (...) (alter_rename_partition.q), INSERT with a
column list (alter_table_partition_drop.q). Queries' rows are compared with plain Spark SQL over
the same files; errors with Hive's code and text."""

from __future__ import annotations

import pytest

from hivepark.errors import HiveParkError


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _error(wh, sql: str) -> HiveParkError:
    with pytest.raises(HiveParkError) as info:
        wh.sql(sql).collect()
    return info.value


def _described(wh, table: str) -> dict[str, str]:
    rows = wh.sql(f"DESCRIBE FORMATTED {table}").collect()
    start = next(i for i, r in enumerate(rows) if r[0].startswith("Table Parameters:"))
    out = {}
    for r in rows[start + 1:]:
        if (r[0] or "").strip():
            break
        if r[1]:
            out[r[1].strip()] = (r[2] or "").strip()
    return out


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
