"""ANALYZE TABLE ... COMPUTE STATISTICS FOR COLUMNS and DESCRIBE FORMATTED t [PARTITION (...)] c
(Hive's alter_table_update_status.q, stats_only_null.q): each figure is compared with plain
Spark SQL over the same files."""

from __future__ import annotations

from outcomes import error as _error


def _described(wh, sql: str) -> dict[str, str]:
    return {r[0]: r[1] for r in wh.sql(sql).collect()}


def test_column_statistics_of_partitions(wh, spark, tmp_path):
    wh.sql("CREATE TABLE cs (i INT, s STRING, b BOOLEAN, d DECIMAL(6,2), dt DATE, bin BINARY, "
           "arr ARRAY<INT>) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.sql("INSERT INTO cs PARTITION (ds='1', hr=1) VALUES (1, 'abc', true, 1.5, DATE '2024-01-02', "
           "CAST('xy' AS BINARY), array(1)), (7, 'é', false, -2.25, DATE '2023-05-06', NULL, NULL), "
           "(NULL, NULL, NULL, NULL, NULL, NULL, NULL), (7, 'abc', true, 3, DATE '2024-01-02', "
           "CAST('z' AS BINARY), array(2))")
    wh.sql("INSERT INTO cs PARTITION (ds='2', hr=1) VALUES (40, 'longer text', false, 10, DATE '2025-01-01', "
           "CAST('' AS BINARY), NULL)")
    # a NULL of no type (VALUES' NULL) goes into any column, an ARRAY too, as in Hive
    assert wh.sql("SELECT count(*) FROM cs WHERE ds = '2' AND arr IS NULL").first()[0] == 1
    e = _error(wh, "ANALYZE TABLE cs COMPUTE STATISTICS FOR COLUMNS arr")
    assert "arr" in str(e) and "array<int>" in str(e)
    e = _error(wh, "ANALYZE TABLE cs COMPUTE STATISTICS FOR COLUMNS nope")
    assert e.code == 10002
    before = _described(wh, "DESCRIBE FORMATTED cs PARTITION (ds='1', hr=1) i")
    assert before["col_name"] == "i" and before["data_type"] == "int" and before["min"] == ""

    wh.sql("ANALYZE TABLE cs PARTITION (ds='1', hr) COMPUTE STATISTICS FOR COLUMNS")
    root = tmp_path / "warehouse" / "cs"
    spark.read.parquet(str(root / "ds=1" / "hr=1")).createOrReplaceTempView("plain_cs")
    want = spark.sql(
        "SELECT string(min(i)), string(max(i)), count(*) - count(i), approx_count_distinct(i), "
        "count(*) - count(s), approx_count_distinct(s), avg(octet_length(s)), max(octet_length(s)), "
        "count(if(b, 1, NULL)), count(if(NOT b, 1, NULL)), string(min(d)), string(max(d)), "
        "string(min(dt)), string(max(dt)), max(octet_length(bin)), count(*) - count(bin) FROM plain_cs").first()
    got = {c: _described(wh, f"DESCRIBE FORMATTED cs PARTITION (ds='1', hr=1) {c}") for c in
           ("i", "s", "b", "d", "dt", "bin")}
    assert (got["i"]["min"], got["i"]["max"], got["i"]["num_nulls"], got["i"]["distinct_count"]) == \
        (want[0], want[1], str(want[2]), str(want[3])) == ("1", "7", "1", "2")
    assert (got["s"]["num_nulls"], got["s"]["distinct_count"], float(got["s"]["avg_col_len"]),
            got["s"]["max_col_len"], got["s"]["min"]) == (str(want[4]), str(want[5]), want[6], str(want[7]), "")
    assert (got["b"]["num_trues"], got["b"]["num_falses"], got["b"]["distinct_count"]) == \
        (str(want[8]), str(want[9]), "") == ("2", "1", "")
    assert (got["d"]["min"], got["d"]["max"], got["dt"]["min"], got["dt"]["max"]) == tuple(want[10:14])
    assert (got["bin"]["max_col_len"], got["bin"]["num_nulls"]) == (str(want[14]), str(want[15]))
    assert '"COLUMN_STATS":{' in got["i"]["COLUMN_STATS_ACCURATE"] and '"i":"true"' in got["i"]["COLUMN_STATS_ACCURATE"]
    # the other partition was not named: no figures; the table's aggregate is the one partition's
    assert _described(wh, "DESCRIBE FORMATTED cs PARTITION (ds='2', hr=1) i")["min"] == ""
    assert _described(wh, "DESCRIBE FORMATTED cs i")["max"] == "7"
    wh.sql("ANALYZE TABLE cs COMPUTE STATISTICS FOR COLUMNS i, s")
    table_i = _described(wh, "DESCRIBE FORMATTED cs i")
    assert (table_i["min"], table_i["max"], table_i["num_nulls"]) == \
        tuple(str(v) for v in wh.sql("SELECT min(i), max(i), count(*) - count(i) FROM cs").first())
    # the statistics live with the rows they describe: a write to the partition removes them
    wh.sql("INSERT INTO cs PARTITION (ds='2', hr=1) VALUES (99, 'x', true, 1, DATE '2025-01-01', NULL, NULL)")
    assert _described(wh, "DESCRIBE FORMATTED cs PARTITION (ds='2', hr=1) i")["max"] == ""
    assert _described(wh, "DESCRIBE FORMATTED cs PARTITION (ds='1', hr=1) i")["max"] == "7"
    params = {r[1].strip() for r in wh.sql("DESCRIBE FORMATTED cs PARTITION (ds='1', hr=1)").collect() if r[1]}
    assert "hivepark.column.stats" not in params and "COLUMN_STATS_ACCURATE" in params
    assert _described(wh, "DESCRIBE cs i") == {"i": "int"}  # without FORMATTED: name, type, comment


def test_column_statistics_of_a_table(wh, spark):
    wh.sql("CREATE TABLE ct (k BIGINT, v STRING) STORED AS ORC")
    wh.sql("INSERT INTO ct SELECT id % 10, IF(id % 3 = 0, NULL, repeat('x', CAST(id % 5 AS INT))) FROM range(100)")
    wh.sql("ANALYZE TABLE ct COMPUTE STATISTICS FOR COLUMNS")
    k, v = (_described(wh, f"DESCRIBE FORMATTED ct {c}") for c in ("k", "v"))
    want = wh.sql("SELECT string(min(k)), string(max(k)), approx_count_distinct(k), count(*) - count(v), "
                  "max(octet_length(v)) FROM ct").first()
    assert (k["min"], k["max"], k["distinct_count"], v["num_nulls"], v["max_col_len"]) == \
        (want[0], want[1], str(want[2]), str(want[3]), str(want[4])) == ("0", "9", "10", "34", "4")
    e = _error(wh, "ANALYZE TABLE ct PARTITION (ds='1') COMPUTE STATISTICS FOR COLUMNS")
    assert e.code == 10241
    wh.sql("INSERT INTO ct VALUES (100, 'y')")  # the rows changed: the statistics go
    assert _described(wh, "DESCRIBE FORMATTED ct k")["max"] == ""


def test_a_partitions_nan_maximum_is_the_tables(wh, spark):
    """Found by a hunt for bugs: the table's DOUBLE maximum over partitions dropped a partition's
    NaN (Python's max with NaN depends on the order), where max(x) is NaN, as in Spark and Hive."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE nanst (x DOUBLE) PARTITIONED BY (p STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO nanst PARTITION (p) VALUES (10.0D, 'a'), (1.0D, 'b'), (CAST('NaN' AS DOUBLE), 'b')")
    wh.sql("ANALYZE TABLE nanst PARTITION (p) COMPUTE STATISTICS FOR COLUMNS")
    st = _described(wh, "DESCRIBE FORMATTED nanst x")
    true = wh.sql("SELECT CAST(min(x) AS STRING), CAST(max(x) AS STRING) FROM nanst").first()
    assert (st["min"], st["max"]) == tuple(true) == ("1.0", "NaN")


def test_statistics_of_a_changed_column_are_not_its_own(wh, spark):
    """Found by a hunt for bugs: after REPLACE COLUMNS dropped s and ADD COLUMNS brought it back
    (reading NULL), or CHANGE narrowed it, DESCRIBE FORMATTED showed the old figures and
    COLUMN_STATS_ACCURATE claimed them; statistics computed before a column changed are not its."""
    wh.sql("CREATE TABLE u (y BIGINT, s STRING) STORED AS TEXTFILE")
    wh.sql("INSERT INTO u VALUES (5, 'q'), (6, 'r')")
    wh.sql("ANALYZE TABLE u COMPUTE STATISTICS FOR COLUMNS")
    assert _described(wh, "DESCRIBE FORMATTED u s")["distinct_count"] == "2"
    wh.sql("ALTER TABLE u REPLACE COLUMNS (y BIGINT, s2 STRING)")
    wh.sql("ALTER TABLE u ADD COLUMNS (s STRING)")
    assert wh.sql("SELECT count(*) FROM u WHERE s IS NULL").first()[0] == 2
    st = _described(wh, "DESCRIBE FORMATTED u s")
    assert (st["num_nulls"], st["distinct_count"], st["max_col_len"]) == ("", "", "")
    assert '"s"' not in st.get("COLUMN_STATS_ACCURATE", "")
    assert _described(wh, "DESCRIBE FORMATTED u y")["distinct_count"] == "2"  # unchanged: kept
    wh.sql("ANALYZE TABLE u COMPUTE STATISTICS FOR COLUMNS s")
    assert _described(wh, "DESCRIBE FORMATTED u s")["num_nulls"] == "2"
    # a partition's statistics too, when the column is narrowed
    wh.sql("CREATE TABLE pv (s STRING) PARTITIONED BY (p INT) STORED AS PARQUET")
    wh.sql("INSERT INTO pv PARTITION (p=1) VALUES ('abcde'), ('abxyz')")
    wh.sql("ANALYZE TABLE pv PARTITION (p=1) COMPUTE STATISTICS FOR COLUMNS")
    wh.sql("ALTER TABLE pv CHANGE s s VARCHAR(2)")
    st = _described(wh, "DESCRIBE FORMATTED pv PARTITION (p=1) s")
    assert (st["distinct_count"], st["max_col_len"]) == ("", ""), st
    wh.sql("ANALYZE TABLE pv PARTITION (p=1) COMPUTE STATISTICS FOR COLUMNS")
    true = wh.sql("SELECT count(DISTINCT s), max(octet_length(s)) FROM pv").first()
    st = _described(wh, "DESCRIBE FORMATTED pv s")
    assert (st["distinct_count"], st["max_col_len"]) == tuple(str(v) for v in true) == ("1", "2")
