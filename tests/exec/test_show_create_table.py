"""SHOW CREATE TABLE (issue 14, item 6): Hive's output form, and DDL that hivepark itself runs
to re-create the table — the same columns, partitioning, skew, format and properties, and for
an external table the same rows (compared with plain Spark over its files)."""

from __future__ import annotations

import sqlite3

import pytest


def _ddl(wh, name: str) -> str:
    df = wh.sql(f"SHOW CREATE TABLE {name}")
    assert df.columns == ["createtab_stmt"]
    return "\n".join(r[0] for r in df.collect())


def _shape(wh, name: str) -> list[tuple]:
    """DESCRIBE FORMATTED without the lines a re-creation changes (times, statistics)."""
    skip = ("CreateTime", "transient_lastDdlTime", "numFiles", "numRows", "totalSize")
    return [tuple(r) for r in wh.sql(f"DESCRIBE FORMATTED {name}").collect()
            if not any(str(x).strip().startswith(skip) for x in r)]


def test_a_managed_table_with_partitions_and_skew(wh):
    wh.sql("CREATE TABLE t (k INT COMMENT 'the key', v STRING) PARTITIONED BY (ds STRING, hr INT) "
           "SKEWED BY (k) ON (1, 5) STORED AS DIRECTORIES STORED AS ORC "
           "TBLPROPERTIES ('owner.team'='data')")
    wh.sql("INSERT INTO t PARTITION (ds='a', hr=1) VALUES (1, 'x'), (2, 'y')")
    ddl = _ddl(wh, "t")
    assert ddl == (
        "CREATE TABLE `default`.`t`(\n"
        "  `k` int COMMENT 'the key', \n"
        "  `v` string)\n"
        "PARTITIONED BY ( \n"
        "  `ds` string, \n"
        "  `hr` int)\n"
        "SKEWED BY (`k`) \n"
        "  ON ((1),(5))\n"
        "  STORED AS DIRECTORIES\n"
        "STORED AS ORC\n"
        "LOCATION\n"
        f"  '{wh.location}/t'\n"
        "TBLPROPERTIES (\n"
        "  'owner.team'='data')")
    before = _shape(wh, "t")
    wh.sql("DROP TABLE t")
    wh.sql(ddl)
    assert _shape(wh, "t") == before
    wh.sql("INSERT INTO t PARTITION (ds='b', hr=2) VALUES (5, 'z')")
    assert [tuple(r) for r in wh.sql("SELECT * FROM t").collect()] == [(5, "z", "b", 2)]


def test_an_external_text_table_keeps_its_rows(wh, spark, tmp_path):
    loc = tmp_path / "ext"
    wh.sql("CREATE EXTERNAL TABLE e (a STRING, b DOUBLE) ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' "
           f"STORED AS TEXTFILE LOCATION '{loc}'")
    wh.sql("INSERT INTO e VALUES ('x', 1.5), ('y', NULL)")
    ddl = _ddl(wh, "e")
    assert ddl.startswith("CREATE EXTERNAL TABLE `default`.`e`(")
    assert "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|'\nSTORED AS TEXTFILE" in ddl
    before = sorted(tuple(r) for r in wh.sql("SELECT * FROM e").collect())
    wh.sql("DROP TABLE e")  # external: the files stay
    wh.sql(ddl)
    after = sorted(tuple(r) for r in wh.sql("SELECT * FROM e").collect())
    plain = spark.read.csv(str(loc), sep="|", schema="a STRING, b DOUBLE", nullValue="\\N")
    assert after == before == sorted(tuple(r) for r in plain.collect())


def test_a_storage_handler_table(wh, tmp_path):
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (o_id INTEGER PRIMARY KEY, o_status TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(1, "open"), (2, "done")])
    wh.sql("CREATE EXTERNAL TABLE o (o_id BIGINT, o_status STRING) "
           "STORED BY 'org.apache.hive.storage.jdbc.JdbcStorageHandler' TBLPROPERTIES ("
           f"'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='jdbc:sqlite:{path}', "
           "'hive.sql.table'='orders')")
    ddl = _ddl(wh, "o")
    assert "STORED BY 'org.apache.hive.storage.jdbc.JdbcStorageHandler'" in ddl
    assert "LOCATION" not in ddl
    before = sorted(tuple(r) for r in wh.sql("SELECT * FROM o").collect())
    wh.sql("DROP TABLE o")
    wh.sql(ddl)
    assert sorted(tuple(r) for r in wh.sql("SELECT * FROM o").collect()) == before == \
        [(1, "open"), (2, "done")]


def test_a_missing_table_is_hives_error(wh):
    from hivepark.errors import HiveParkError

    with pytest.raises(HiveParkError, match="Table not found"):
        wh.sql("SHOW CREATE TABLE nope")
