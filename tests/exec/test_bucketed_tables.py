"""Bucketed tables (CLUSTERED BY ... [SORTED BY ...] INTO n BUCKETS): hivepark reads the tables
Hive bucketed, kept in the metastore with their bucketing for Hive and SHOW CREATE TABLE, and
refuses to write them (Hive's bucket files are not what Spark writes). Rows are compared with
plain Spark over the same files."""

from __future__ import annotations

from outcomes import error as _error
from outcomes import rows as _rows


def _files(root) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))}


def _hive_files(root, rows_by_ds: dict, count: int, bucket_of) -> None:
    """Hive's layout of a bucketed table: per partition one ORC file per bucket, named 00000N_0."""
    import pyarrow as pa
    from pyarrow import orc

    for ds, rows in rows_by_ds.items():
        (root / f"ds={ds}").mkdir(parents=True)
        for bucket in range(count):
            part = [r for r in rows if bucket_of(r[0]) == bucket]
            orc.write_table(pa.table({"k": pa.array([r[0] for r in part], pa.int32()), "v": [r[1] for r in part]}),
                            str(root / f"ds={ds}" / f"00000{bucket}_0"))


def test_a_bucketed_table_hive_wrote_is_read_and_never_written(wh, spark, tmp_path):
    root = tmp_path / "hive_written"
    _hive_files(root, {"1": [(1, "a"), (2, "b"), (3, "c"), (4, "d")], "2": [(5, "e"), (6, "f")]}, 2,
                lambda k: k % 2)
    wh.sql(f"CREATE EXTERNAL TABLE b (k INT, v STRING) PARTITIONED BY (ds STRING) CLUSTERED BY (k) SORTED BY (k) "
           f"INTO 2 BUCKETS STORED AS ORC LOCATION '{root}'")
    wh.sql("MSCK REPAIR TABLE b")
    spark.read.schema("k INT, v STRING, ds STRING").option("basePath", str(root)).orc(str(root)) \
        .createOrReplaceTempView("plain_b")
    for where in ("", "WHERE k = 3", "WHERE ds = '2' AND k > 5"):
        got = _rows(wh.sql(f"SELECT k, v, ds FROM b {where}"))
        assert got == _rows(spark.sql(f"SELECT k, v, ds FROM plain_b {where}")) and got, where
    described = {r[0].strip(): (r[1] or "").strip() for r in wh.sql("DESCRIBE FORMATTED b").collect() if r[0]}
    assert (described["Num Buckets:"], described["Bucket Columns:"], described["Sort Columns:"]) == \
        ("2", "[k]", "[Order(col:k, order:1)]")
    assert not any("hivepark.bucket" in (r[1] or "") for r in wh.sql("DESCRIBE FORMATTED b").collect())
    ddl = [r[0] for r in wh.sql("SHOW CREATE TABLE b").collect()]
    assert ddl[ddl.index("CLUSTERED BY ( "):ddl.index("INTO 2 BUCKETS") + 1] == [
        "CLUSTERED BY ( ", "  `k`) ", "SORTED BY ( ", "  `k` ASC) ", "INTO 2 BUCKETS"]

    before = _files(root)
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    for sql in ("INSERT INTO b PARTITION (ds='1') VALUES (9, 'z')",
                "INSERT OVERWRITE TABLE b PARTITION (ds) SELECT k, v, ds FROM b"):
        e = _error(wh, sql)
        assert "bucketed" in str(e) and "nothing was written" in str(e), sql
    # a multi-insert whose second target is bucketed writes neither (each target commits on its own)
    wh.sql("CREATE TABLE plain_copy (k INT, v STRING) STORED AS PARQUET")
    e = _error(wh, "FROM b INSERT INTO plain_copy SELECT k, v INSERT INTO b PARTITION (ds='9') SELECT k, v")
    assert "bucketed" in str(e) and _rows(wh.sql("SELECT * FROM plain_copy")) == []
    assert _files(root) == before and len(_rows(wh.sql("SELECT * FROM b"))) == 6
    assert [r[0] for r in wh.sql("SHOW PARTITIONS b").collect()] == ["ds=1", "ds=2"]

    # the same DDL again (SHOW CREATE TABLE's, under another name) gives the same bucketing; LIKE copies it
    wh.sql("\n".join(ddl).replace("`default`.`b`", "`default`.`b2`").replace(str(root), str(tmp_path / "b2")))
    wh.sql("CREATE TABLE b3 LIKE b")
    for name in ("b2", "b3"):
        again = {r[0].strip(): (r[1] or "").strip() for r in wh.sql(f"DESCRIBE FORMATTED {name}").collect() if r[0]}
        assert (again["Num Buckets:"], again["Bucket Columns:"]) == ("2", "[k]"), name
    assert "bucketed" in str(_error(wh, "INSERT INTO b3 PARTITION (ds='1') VALUES (1, 'a')"))


def test_bucketing_clauses_hive_refuses(wh):
    e = _error(wh, "CREATE TABLE z (k INT) CLUSTERED BY (k) INTO 0 BUCKETS")
    assert e.code == 10037 and str(e).startswith("Bucket number should be bigger than zero")
    e = _error(wh, "CREATE TABLE z (k INT) PARTITIONED BY (ds STRING) CLUSTERED BY (ds) INTO 2 BUCKETS")
    assert e.code == 10002 and "partition column" in str(e)
    e = _error(wh, "CREATE TABLE z (k INT) CLUSTERED BY (k) SORTED BY (nope) INTO 2 BUCKETS")
    assert e.code == 10002 and "nope" in str(e)
    e = _error(wh, "CREATE TABLE z CLUSTERED BY (k) INTO 2 BUCKETS AS SELECT 1 AS k")
    assert "bucket" in str(e)
    assert "z" not in [r[0] for r in wh.sql("SHOW TABLES").collect()]


def test_a_renamed_bucket_column_keeps_its_role(wh):
    wh.sql("CREATE TABLE z2 (k INT, v STRING) CLUSTERED BY (k) SORTED BY (v DESC) INTO 2 BUCKETS STORED AS TEXTFILE")
    wh.sql("ALTER TABLE z2 CHANGE COLUMN k key INT")
    described = {r[0].strip(): (r[1] or "").strip() for r in wh.sql("DESCRIBE FORMATTED z2").collect() if r[0]}
    assert (described["Bucket Columns:"], described["Sort Columns:"]) == ("[key]", "[Order(col:v, order:0)]")
    e = _error(wh, "ALTER TABLE z2 REPLACE COLUMNS (v STRING)")
    assert e.code == 10002 and "key" in str(e)
    assert [r[0] for r in wh.sql("DESCRIBE z2").collect()] == ["key", "v"]


def test_a_point_query_reads_only_its_buckets_files(wh, spark, tmp_path):
    """Hive's files of a table with bucketing_version 2: rows placed by Hive's hash (catalog/buckets.py,
    checked against Hive's own output in tests/catalog/test_buckets.py); a query fixing the bucket
    column reads the files of its values' buckets only, with the rows plain Spark gives over all files."""
    from hivepark.catalog.buckets import hive_bucket
    from hivepark.types import HiveType

    root = tmp_path / "hive_v2"
    int_type = [HiveType.parse("int")]
    _hive_files(root, {ds: [(k, f"v{k}") for k in keys] for ds, keys in (("1", range(40)), ("2", range(20, 30)))},
                4, lambda k: hive_bucket([k], int_type, 4))
    wh.sql(f"CREATE EXTERNAL TABLE hb (k INT, v STRING) PARTITIONED BY (ds STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
           f"STORED AS ORC LOCATION '{root}' TBLPROPERTIES ('bucketing_version'='2')")
    wh.sql("MSCK REPAIR TABLE hb")
    spark.read.schema("k INT, v STRING, ds STRING").option("basePath", str(root)).orc(str(root)) \
        .createOrReplaceTempView("plain_hb")
    for where, buckets in (("k = 3", 1), ("k IN (1, 6, 25)", len({hive_bucket([k], int_type, 4) for k in (1, 6, 25)})),
                           ("ds = '2' AND k = 25", 1), ("k > 30", None), ("k = '3'", None), ("k = 3 OR k = 4", None)):
        got = wh.sql(f"SELECT k, v, ds FROM hb WHERE {where}")
        assert _rows(got) == _rows(spark.sql(f"SELECT k, v, ds FROM plain_hb WHERE {where}")) and _rows(got), where
        plan = "\n".join(r[0] for r in wh.sql(f"EXPLAIN SELECT k, v, ds FROM hb WHERE {where}").collect())
        read = {f.rsplit("/", 1)[1] for f in got.inputFiles()}
        if buckets is None:
            assert "buckets=" not in plan and len(read) == 4, where
        else:
            assert f"buckets={buckets}/4" in plan and len(read) == buckets, (where, plan, read)
    # without Hive's version 2 the same files are read whole (version 1's hash is another)
    wh.sql("ALTER TABLE hb UNSET TBLPROPERTIES ('bucketing_version')")
    got = wh.sql("SELECT k, v, ds FROM hb WHERE k = 3")
    assert _rows(got) == [(3, "v3", "1")] and len({f.rsplit("/", 1)[1] for f in got.inputFiles()}) == 4
