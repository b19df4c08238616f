"""The planner's rules, read like sqlglot's optimizer fixtures: statements that build a
warehouse, a query in, its EXPLAIN snapshot out. Paths under the warehouse root read
``<wh>``. Each case runs on a fresh warehouse (the shared ``wh`` fixture)."""

from __future__ import annotations

import pytest

PART = ["CREATE TABLE t (v INT) PARTITIONED BY (ds STRING) STORED AS PARQUET",
        "INSERT INTO t PARTITION (ds='1') VALUES (1)",
        "INSERT INTO t PARTITION (ds='2') VALUES (2)",
        "INSERT INTO t PARTITION (ds='3') VALUES (3)"]
SKEW = ["CREATE TABLE lb (a INT, x INT) SKEWED BY (x) ON (6, 30) STORED AS DIRECTORIES "
        "STORED AS PARQUET",
        "INSERT INTO lb VALUES (1, 6), (2, 30), (3, 50)"]
STAR = PART + ["CREATE TABLE d (ds STRING, keep BOOLEAN) STORED AS PARQUET",
               "INSERT INTO d VALUES ('1', true), ('2', false), ('3', true), (NULL, true)"]
ROWS = ["CREATE TABLE f (id INT, k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET",
        "INSERT INTO f PARTITION (ds='1') SELECT id, id FROM range(0, 1000)",
        "CREATE TABLE k (k INT, pick BOOLEAN) STORED AS PARQUET",
        "INSERT INTO k SELECT id, id % 2 = 0 OR id < 300 FROM range(0, 1000)"]

CASES = {
    "static partition pruning": (
        PART, "EXPLAIN SELECT v FROM t WHERE ds = '2'", """
TableScan default.t
  partitions=1/3
  partition filter: (ds = '2')
  directories: <wh>/t/ds=2"""),
    "no partition filter reads every partition": (
        PART, "EXPLAIN SELECT v FROM t", """
TableScan default.t
  partitions=3/3
  partition filter: none (all partitions read)
  directories: <wh>/t/ds=1, <wh>/t/ds=2, <wh>/t/ds=3"""),
    "a predicate on data columns only prunes nothing": (
        PART, "EXPLAIN SELECT v FROM t WHERE v > 1 OR ds = '1'", """
TableScan default.t
  partitions=3/3
  partition filter: none (all partitions read)
  directories: <wh>/t/ds=1, <wh>/t/ds=2, <wh>/t/ds=3"""),
    "list bucketing chooses the skewed value's directory": (
        SKEW, "EXPLAIN SELECT a FROM lb WHERE x = 30", """
TableScan default.lb
  partitioned: false
  list bucketing: directories=1/3
  directories: <wh>/lb/x=30"""),
    "list bucketing keeps the default directory for other values": (
        SKEW, "EXPLAIN SELECT a FROM lb WHERE x IN (6, 50)", """
TableScan default.lb
  partitioned: false
  list bucketing: directories=2/3
  directories: <wh>/lb/x=6, <wh>/lb/HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"""),
    "runtime pruning is planned, decided at execution": (
        STAR, "EXPLAIN SELECT t.v FROM t JOIN d ON t.ds = d.ds WHERE d.keep", """
TableScan default.t
  partitions=3/3 after static pruning; runtime pruning chooses at execution
  directories: chosen at execution (EXPLAIN ANALYZE shows them)
  runtime pruning of partitions: t.ds IN (d.ds of default.d; values collected at execution)
TableScan default.d
  partitioned: false
  directories: <wh>/d
  map-join: broadcast to the other side"""),
    "runtime pruning of partitions by collected values": (
        STAR, "EXPLAIN ANALYZE SELECT t.v FROM t JOIN d ON t.ds = d.ds WHERE d.keep", """
TableScan default.t
  partitions=2/3 (static pruning: 3/3, then runtime pruning)
  directories: <wh>/t/ds=1, <wh>/t/ds=3
  runtime pruning (d.ds -> t.ds): 2 distinct values from default.d (pyarrow)
TableScan default.d
  partitioned: false
  directories: <wh>/d
  map-join: broadcast to the other side"""),
    "runtime pruning skipped: the big table is preserved": (
        STAR, "EXPLAIN ANALYZE SELECT t.v FROM t LEFT JOIN d ON t.ds = d.ds", """
TableScan default.t
  partitions=3/3
  partition filter: none (all partitions read)
  directories: <wh>/t/ds=1, <wh>/t/ds=2, <wh>/t/ds=3
  runtime pruning not applied (d.ds -> t.ds): the big table is on the preserved side of a LEFT \
OUTER JOIN
TableScan default.d
  partitioned: false
  directories: <wh>/d"""),
    "runtime values as an IN reader filter": (
        ROWS, "EXPLAIN ANALYZE SELECT f.id FROM f JOIN k ON f.k = k.k WHERE k.k < 5", """
TableScan default.f
  partitions=1/1
  partition filter: none (all partitions read)
  directories: <wh>/f/ds=1
  runtime pruning (k.k -> f.k): 5 distinct values from default.k (pyarrow)
  row filter pushed to the reader: k IN (5 values)
TableScan default.k
  partitioned: false
  directories: <wh>/k
  map-join: broadcast to the other side"""),
    "runtime values as a range reader filter": (
        ROWS, "EXPLAIN ANALYZE SELECT f.id FROM f JOIN k ON f.k = k.k WHERE k.k < 400", """
TableScan default.f
  partitions=1/1
  partition filter: none (all partitions read)
  directories: <wh>/f/ds=1
  runtime pruning (k.k -> f.k): 400 distinct values from default.k (pyarrow)
  row filter pushed to the reader: k BETWEEN 0 AND 399 (range of 400 values)
TableScan default.k
  partitioned: false
  directories: <wh>/k
  map-join: broadcast to the other side"""),
    "runtime values not pushed: their range covers the small table's": (
        ROWS, "EXPLAIN ANALYZE SELECT f.id FROM f JOIN k ON f.k = k.k WHERE k.pick", """
TableScan default.f
  partitions=1/1
  partition filter: none (all partitions read)
  directories: <wh>/f/ds=1
  runtime pruning (k.k -> f.k): 650 distinct values from default.k (pyarrow)
  row filter not pushed (k.k -> f.k): 650 values span 100% of the small table's key range, so no \
row group would be skipped; the join keeps only matching rows
TableScan default.k
  partitioned: false
  directories: <wh>/k
  map-join: broadcast to the other side"""),
}


def explain_lines(wh, tmp_path, setup: list[str], query: str) -> str:
    for stmt in setup:
        wh.sql(stmt)
    text = "\n".join(r[0] for r in wh.sql(query).collect())
    return text.replace(str(tmp_path / "warehouse"), "<wh>").replace("file:<wh>", "<wh>")


@pytest.mark.parametrize("name", list(CASES))
def test_explain_snapshot(wh, tmp_path, name):
    setup, query, expected = CASES[name]
    got = explain_lines(wh, tmp_path, setup, query)
    assert got == "== hivepark plan ==" + expected
