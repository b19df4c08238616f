"""Spark's own TABLESAMPLE (``n ROWS``, ``PERCENT``, a random ``BUCKET``) samples a table's rows
before any filter of the query: ``FROM t TABLESAMPLE (2 ROWS) WHERE k = 1`` keeps at most 2 rows,
those of the 2 sampled that have k = 1. No filter may narrow what is sampled: no partition,
list-bucketing or runtime pruning, no pushdown into a storage handler's source, none into a
sampled subquery, CTE or view. Every query's rows are compared with plain Spark SQL over the same
source or files, read as one input partition so that ``n ROWS`` (Spark's LIMIT) is deterministic.
Hive's ``BUCKET x OUT OF y ON c`` is a filter by Hive's hash, which any filter commutes with: it
still prunes."""

from __future__ import annotations

import sqlite3

import pytest


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


@pytest.fixture(scope="module")
def one_split(spark):
    """Small files read as one input partition, largest first (Spark's order): a LIMIT over
    them takes the same rows in every run, for hivepark's scans and plain Spark's alike."""
    spark.conf.set("spark.sql.files.minPartitionNum", "1")
    yield
    spark.conf.unset("spark.sql.files.minPartitionNum")


@pytest.fixture(scope="module")
def env(tmp_path_factory, spark, one_split):
    import hivepark

    base = tmp_path_factory.mktemp("sampled")
    db = base / "src.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER)")
        c.executemany("INSERT INTO t VALUES (?, ?)", [(i, i % 4) for i in range(1, 21)])  # k = 1: 5 rows
    wh = hivepark.connect(str(base / "warehouse"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    wh.sql(f"""CREATE EXTERNAL TABLE jt STORED BY 'jdbc' TBLPROPERTIES ("hive.sql.database.type"="SQLITE",
               "hive.sql.jdbc.url"="jdbc:sqlite:{db}", "hive.sql.table"="t")""")
    spark.read.format("jdbc").option("url", f"jdbc:sqlite:{db}").option("dbtable", "t") \
        .option("pushDownPredicate", "false").load().createOrReplaceTempView("plain_jt")
    # p = 'b': 3 rows in the larger file, read first; p = 'a': 2 rows (one file each)
    wh.sql("CREATE TABLE pt (id INT, v STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO pt PARTITION (p = 'b') SELECT CAST(id AS INT), concat('bbbbbbbbbb', id) "
           "FROM range(10, 13, 1, 1)")
    wh.sql("INSERT INTO pt PARTITION (p = 'a') SELECT CAST(id AS INT), 'a' FROM range(1, 3, 1, 1)")
    spark.read.parquet(f"{wh.location}/pt").createOrReplaceTempView("plain_pt")
    # k = 1 in its own directory (2 rows), the other values (3 rows, the larger file) in the default one
    wh.sql("CREATE TABLE lb (id INT, k INT, v STRING) SKEWED BY (k) ON (1) STORED AS DIRECTORIES STORED AS PARQUET")
    wh.sql("INSERT INTO lb SELECT CAST(id AS INT), CAST(IF(id < 3, 1, id) AS INT), "
           "IF(id < 3, 'a', concat('bbbbbbbbbb', id)) FROM range(1, 6, 1, 1)")
    spark.read.option("recursiveFileLookup", "true").parquet(f"{wh.location}/lb").createOrReplaceTempView("plain_lb")
    for view, query in [("v_sampled", "SELECT * FROM {jt} TABLESAMPLE (2 ROWS)"), ("v_jt", "SELECT * FROM {jt}"),
                        ("v_pt_sampled", "SELECT * FROM {pt} TABLESAMPLE (4 ROWS)"), ("v_pt", "SELECT * FROM {pt}")]:
        wh.sql(f"CREATE VIEW {view} AS {query.format(jt='jt', pt='pt')}")
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW plain_{view} AS {query.format(jt='plain_jt', pt='plain_pt')}")
    yield wh
    wh.close()


def _same_as_spark(wh, spark, query: str) -> list[tuple]:
    """``query``'s rows by hivepark and by plain Spark (``{s}``: a subquery's alias, which Spark's
    grammar writes after the subquery's TABLESAMPLE and Hive's before it)."""
    names = ("jt", "pt", "lb", "v_sampled", "v_jt", "v_pt_sampled", "v_pt")
    got = _rows(wh.sql(query.format(**{n: n for n in names}, s=" s", s_=" ")))
    want = _rows(spark.sql(query.format(**{n: f"plain_{n}" for n in names}, s=" ", s_=" s ")))
    assert got == want, query
    return got


@pytest.mark.parametrize("query", [
    "SELECT * FROM {jt} TABLESAMPLE (2 ROWS) WHERE k = 1",
    "SELECT * FROM (SELECT * FROM {jt} TABLESAMPLE (2 ROWS)) s WHERE k = 1",
    "WITH c AS (SELECT * FROM {jt} TABLESAMPLE (2 ROWS)) SELECT * FROM c WHERE k = 1",
    "SELECT * FROM (SELECT * FROM {jt}){s} TABLESAMPLE (2 ROWS){s_}WHERE k = 1",
    "WITH c AS (SELECT * FROM {jt}) SELECT * FROM c TABLESAMPLE (2 ROWS) WHERE k = 1",
    "SELECT * FROM {v_sampled} WHERE k = 1",
    "SELECT * FROM {v_jt} TABLESAMPLE (2 ROWS) WHERE k = 1",
    "SELECT a.* FROM {jt} TABLESAMPLE (2 ROWS) a JOIN {jt} b ON a.id = b.id AND a.k = 1",
    "SELECT * FROM {jt} TABLESAMPLE (2 ROWS) WHERE k = 1 AND id > 0",
])
def test_jdbc_source_is_sampled_before_the_filter(env, spark, query):
    """The JDBC source's SQL gets no WHERE: the 2 sampled rows (ids 1 and 2) hold one with k = 1.
    Before, the filter went into the source's SQL and 2 of the 5 rows with k = 1 came back."""
    assert _same_as_spark(env, spark, query) == [(1, 1)]


def test_jdbc_explain_pushes_nothing_below_the_sample(env):
    plan = "\n".join(r[0] for r in env.sql("EXPLAIN SELECT * FROM jt TABLESAMPLE (2 ROWS) WHERE k = 1").collect())
    assert "pushed: none" in plan and "WHERE" not in plan.split("handler:")[1], plan
    assert "sampled by Spark before the query's filters" in plan


@pytest.mark.parametrize("query", [
    "SELECT * FROM {pt} TABLESAMPLE (4 ROWS) WHERE p = 'a'",
    "SELECT * FROM (SELECT * FROM {pt} TABLESAMPLE (4 ROWS)) s WHERE p = 'a'",
    "WITH c AS (SELECT * FROM {pt} TABLESAMPLE (4 ROWS)) SELECT * FROM c WHERE p = 'a'",
    "SELECT * FROM (SELECT * FROM {pt}){s} TABLESAMPLE (4 ROWS){s_}WHERE p = 'a'",
    "SELECT * FROM {v_pt_sampled} WHERE p = 'a'",
    "SELECT * FROM {v_pt} TABLESAMPLE (4 ROWS) WHERE p = 'a'",
    "SELECT s.* FROM {pt} TABLESAMPLE (4 ROWS) s JOIN {pt} o ON s.id = o.id AND s.p = 'a'",
])
def test_partitions_are_not_pruned_below_the_sample(env, spark, query):
    """Spark samples the whole table (partition b's 3 rows first, then a's first), then filters:
    one row of p = 'a', where pruning to p = 'a' first sampled both of its rows."""
    assert _same_as_spark(env, spark, query) == [(1, "a", "a")]


def test_sampled_scan_reads_every_partition(env):
    plan = "\n".join(r[0] for r in env.sql("EXPLAIN SELECT * FROM pt TABLESAMPLE (4 ROWS) WHERE p = 'a'").collect())
    assert "partitions=2/2" in plan and "sampled by Spark before the query's filters" in plan, plan
    pruned = "\n".join(r[0] for r in env.sql("EXPLAIN SELECT * FROM pt WHERE p = 'a'").collect())
    assert "partitions=1/2" in pruned, pruned


def test_strict_mode_says_the_sample_reads_every_partition(env):
    from hivepark.errors import SemanticError

    env.sql("SET hive.mapred.mode=strict")
    try:
        with pytest.raises(SemanticError, match="TABLESAMPLE samples every partition") as e:
            env.sql("SELECT * FROM pt TABLESAMPLE (4 ROWS) WHERE p = 'a'").collect()
        assert e.value.code == 10056
        assert _rows(env.sql("SELECT * FROM (SELECT * FROM pt WHERE p = 'a') s TABLESAMPLE (1 ROWS)")) \
            == [(1, "a", "a")]
    finally:
        env.sql("SET hive.mapred.mode=nonstrict")


@pytest.mark.parametrize("query", [
    "SELECT * FROM {lb} TABLESAMPLE (4 ROWS) WHERE k = 1",
    "SELECT * FROM (SELECT * FROM {lb} TABLESAMPLE (4 ROWS)) s WHERE k = 1",
])
def test_list_bucketing_directories_are_not_pruned_below_the_sample(env, spark, query):
    assert _same_as_spark(env, spark, query) == [(1, 1, "a")]


def test_runtime_pruning_does_not_narrow_a_sampled_big_side(env, spark):
    """A map join's small side (p = 'a') would have pruned the sampled big side to p = 'a'
    before Spark sampled it."""
    env.sql("CREATE TABLE dim (p STRING, keep INT) STORED AS PARQUET")
    env.sql("INSERT INTO dim VALUES ('a', 1), ('b', 0)")
    spark.read.parquet(f"{env.location}/dim").createOrReplaceTempView("plain_dim")
    query = "SELECT s.* FROM {pt} TABLESAMPLE (4 ROWS) s JOIN {dim} d ON s.p = d.p WHERE d.keep = 1"
    got = _rows(env.sql(query.format(pt="pt", dim="dim")))
    assert got == _rows(spark.sql(query.format(pt="plain_pt", dim="plain_dim"))) == [(1, "a", "a")]
    plan = "\n".join(r[0] for r in env.sql("EXPLAIN " + query.format(pt="pt", dim="dim")).collect())
    assert "sampled (TABLESAMPLE) before the join" in plan, plan


def test_hive_bucket_sample_still_prunes(env, spark):
    """TABLESAMPLE (BUCKET x OUT OF y ON c) is Hive's filter by hash, decided by hivepark: a filter
    commutes with it, so partitions and bucket files are still pruned."""
    env.sql("CREATE TABLE bt (k INT, v STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
            "STORED AS PARQUET")
    env.sql("INSERT INTO bt PARTITION (p) SELECT CAST(id AS INT), concat('v', id), IF(id % 2 = 0, 'a', 'b') "
            "FROM range(40)")
    query = "SELECT * FROM bt TABLESAMPLE (BUCKET 1 OUT OF 2 ON k) WHERE p = 'a'"
    plan = "\n".join(r[0] for r in env.sql("EXPLAIN " + query).collect())
    assert "partitions=1/2" in plan and "buckets=2/4" in plan, plan
    every = _rows(env.sql("SELECT * FROM bt TABLESAMPLE (BUCKET 1 OUT OF 2 ON k)"))
    got = _rows(env.sql(query))
    assert got == [r for r in every if r[2] == "a"] and got
    assert _rows(env.sql("SELECT * FROM (SELECT * FROM bt TABLESAMPLE (BUCKET 1 OUT OF 2 ON k)) s "
                         "WHERE p = 'a'")) == got


def test_iceberg_identity_partition_is_not_pruned_below_the_sample(env, spark):
    """The identity partition's conjunct, exact for Iceberg's file planning, is not pushed: plain
    Spark over the table's data files (Iceberg's own planning lists them) samples the same rows."""
    from pyiceberg.catalog.sql import SqlCatalog

    env.sql("CREATE TABLE ice (id INT, v STRING) PARTITIONED BY (p STRING) STORED BY ICEBERG")
    env.sql("INSERT INTO ice SELECT CAST(id AS INT), concat('bbbbbbbbbb', id), 'b' FROM range(10, 13, 1, 1)")
    env.sql("INSERT INTO ice SELECT CAST(id AS INT), 'a', 'a' FROM range(1, 3, 1, 1)")
    catalog = SqlCatalog("hivepark", uri=env.catalog.url, warehouse="file://" + env.location)
    table = catalog.load_table(("default", "ice"))
    files = [task.file.file_path for task in table.scan().plan_files()]
    assert len(files) == 2
    spark.read.parquet(*files).createOrReplaceTempView("plain_ice")
    for query in ["SELECT * FROM {t} TABLESAMPLE (4 ROWS) WHERE p = 'a'",
                  "SELECT * FROM (SELECT * FROM {t} TABLESAMPLE (4 ROWS)) s WHERE p = 'a'"]:
        got = _rows(env.sql(query.format(t="ice")))
        assert got == _rows(spark.sql(query.format(t="plain_ice"))) == [(1, "a", "a")], query
