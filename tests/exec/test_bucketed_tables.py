"""Bucketed tables (CLUSTERED BY ... [SORTED BY ...] INTO n BUCKETS): hivepark reads the tables
Hive bucketed, kept in the metastore with their bucketing for Hive and SHOW CREATE TABLE, writes
Hive's bucket files (bucketing_version 2: one file per bucket, each row in the bucket Hive's hash
gives, sorted by SORTED BY), and refuses the writes it cannot make so (Hive 2's hash, other
bucket column types, LOAD, CONCATENATE). Rows are compared with plain Spark over the same files."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings

from described import parameters
from hivepark.catalog.buckets import hive_bucket, spark_bucket_sql
from hivepark.types import HiveType
from outcomes import error as _error
from outcomes import rows as _rows
from spark_cluster import PROPERTY_EXAMPLES


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


def test_a_table_hive_2_bucketed_is_read_and_never_written(wh, spark, tmp_path):
    """Hive 1 and 2's hash (bucketing_version 1) is not hivepark's: such a table is read whole."""
    root = tmp_path / "hive_written"
    _hive_files(root, {"1": [(1, "a"), (2, "b"), (3, "c"), (4, "d")], "2": [(5, "e"), (6, "f")]}, 2,
                lambda k: k % 2)
    wh.sql(f"CREATE EXTERNAL TABLE b (k INT, v STRING) PARTITIONED BY (ds STRING) CLUSTERED BY (k) SORTED BY (k) "
           f"INTO 2 BUCKETS STORED AS ORC LOCATION '{root}' TBLPROPERTIES ('bucketing_version'='1')")
    wh.sql("MSCK REPAIR TABLE b")
    spark.read.schema("k INT, v STRING, ds STRING").option("basePath", str(root)).orc(str(root)) \
        .createOrReplaceTempView("plain_b")
    for where in ("", "WHERE k = 3", "WHERE ds = '2' AND k > 5"):
        got = _rows(wh.sql(f"SELECT k, v, ds FROM b {where}"))
        assert got == _rows(spark.sql(f"SELECT k, v, ds FROM plain_b {where}")) and got, where
    plan = "\n".join(r[0] for r in wh.sql("EXPLAIN SELECT k, v, ds FROM b WHERE k = 3").collect())
    assert "buckets=2/2 (every file read: bucketing_version=1: Hive 1 and 2's hash" in plan, plan
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
        assert "bucketing_version=1" in str(e) and "nothing was written" in str(e), sql
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
    assert "z" not in [r[0] for r in wh.sql("SHOW TABLES").collect()]


def test_a_renamed_bucket_column_keeps_its_role(wh):
    wh.sql("CREATE TABLE z2 (k INT, v STRING) CLUSTERED BY (k) SORTED BY (v DESC) INTO 2 BUCKETS STORED AS TEXTFILE")
    wh.sql("ALTER TABLE z2 CHANGE COLUMN k key INT")
    described = {r[0].strip(): (r[1] or "").strip() for r in wh.sql("DESCRIBE FORMATTED z2").collect() if r[0]}
    assert (described["Bucket Columns:"], described["Sort Columns:"]) == ("[key]", "[Order(col:v, order:0)]")
    e = _error(wh, "ALTER TABLE z2 REPLACE COLUMNS (v STRING)")
    assert e.code == 10002 and "key" in str(e)
    assert [r[0] for r in wh.sql("DESCRIBE z2").collect()] == ["key", "v"]


def test_a_bucket_columns_type_changes_only_while_the_table_holds_no_file(wh, spark, tmp_path):
    """Found by a hunt for bugs: INT -> BIGINT of a bucket column was accepted, and bucket pruning
    then hashed the literal as a BIGINT and read the wrong file: `k = 3` lost the row."""
    wh.sql("CREATE TABLE rb (k SMALLINT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
    wh.sql("ALTER TABLE rb CHANGE k k INT")  # no file yet: the files written later follow it
    wh.sql("INSERT INTO rb VALUES (3, 'old'), (5, 'five')")
    for change in ("CHANGE k k BIGINT", "CHANGE k key BIGINT", "REPLACE COLUMNS (k BIGINT, v STRING)"):
        e = _error(wh, f"ALTER TABLE rb {change}")
        assert "k is a bucketing column of default.rb" in str(e) and "CAST(k AS bigint)" in str(e), change
    assert [tuple(r)[:2] for r in wh.sql("DESCRIBE rb").collect()] == [("k", "int"), ("v", "string")]
    wh.sql("ALTER TABLE rb CHANGE v v STRING COMMENT 'not a bucket column'")
    plain = spark.read.orc(str(tmp_path / "warehouse" / "rb"))
    for k in (3, 5):
        assert sorted(map(tuple, wh.sql(f"SELECT * FROM rb WHERE k = {k}").collect())) == \
            sorted(map(tuple, plain.where(f"k = {k}").collect()))


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
                           ("ds = '2' AND k = 25", 1), ("k > 30", None), ("k = '3'", None),
                           ("k = 3 OR k = 4", len({hive_bucket([k], int_type, 4) for k in (3, 4)})),
                           ("(k = 3 OR k IN (6, 25)) AND ds = '1'",
                            len({hive_bucket([k], int_type, 4) for k in (3, 6, 25)})),
                           ("k = 3 OR v = 'v4'", None)):
        got = wh.sql(f"SELECT k, v, ds FROM hb WHERE {where}")
        assert _rows(got) == _rows(spark.sql(f"SELECT k, v, ds FROM plain_hb WHERE {where}")) and _rows(got), where
        plan = "\n".join(r[0] for r in wh.sql(f"EXPLAIN SELECT k, v, ds FROM hb WHERE {where}").collect())
        read = {f.rsplit("/", 1)[1] for f in got.inputFiles()}
        if buckets is None:  # EXPLAIN says why every file is read
            assert "buckets=4/4 (every file read: the filter does not fix k to values of its type" in plan, plan
            assert len(read) == 4, where
        else:
            assert f"buckets={buckets}/4" in plan and len(read) == buckets, (where, plan, read)
    # without Hive's version 2 the same files are read whole (version 1's hash is another)
    wh.sql("ALTER TABLE hb UNSET TBLPROPERTIES ('bucketing_version')")
    got = wh.sql("SELECT k, v, ds FROM hb WHERE k = 3")
    assert _rows(got) == [(3, "v3", "1")] and len({f.rsplit("/", 1)[1] for f in got.inputFiles()}) == 4
    plan = "\n".join(r[0] for r in wh.sql("EXPLAIN SELECT k, v, ds FROM hb WHERE k = 3").collect())
    assert "buckets=4/4 (every file read: no bucketing_version=2 in TBLPROPERTIES" in plan, plan


def _bucket_files(root, fmt: str) -> dict[tuple[str, int], list[list[tuple]]]:
    """Each (partition directory, bucket) of a table's directory: the rows of each of its files
    (k, v, n), read file by file as they are on disk (``fmt``: parquet or textfile)."""
    import pyarrow.parquet as pq

    out: dict[tuple[str, int], list[list[tuple]]] = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file() and not any(
            part.startswith((".", "_")) for part in p.relative_to(root).parts)):
        m = re.fullmatch(r"(\d{6})_0\.\S+", f.name)  # Hive's name, then the commit's
        assert m, f"not a Hive bucket file name: {f}"
        if fmt == "textfile":
            rows = [tuple(None if x == "\\N" else x for x in line.split("\x01"))
                    for line in f.read_text().splitlines()]
            rows = [(None if k is None else int(k), v, None if n is None else int(n)) for k, v, n in rows]
        else:
            t = pq.read_table(f).select(["k", "v", "n"])
            rows = [tuple(r.values()) for r in t.to_pylist()]
        out.setdefault((str(f.parent.relative_to(root)), int(m.group(1))), []).append(rows)
    return out


def test_inserts_write_hive_bucket_files(wh, spark, tmp_path):
    """Dynamic and static inserts, INSERT INTO after INSERT OVERWRITE: every file is one bucket's,
    named as Hive names it, every row in the bucket Hive's hash gives, sorted by SORTED BY; the
    rows are plain Spark's over the same files, and a point query reads its bucket's files only."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE src (k INT, v STRING, n BIGINT, ds STRING) STORED AS PARQUET")
    values = [(k, None if k % 11 == 0 else f"v{k % 5}", k * 7919 % 1000, ["1", "2", "a=b/c"][k % 3]) for k in range(90)]
    values += [(None, "v1", 5, "1"), (3, None, None, "2")]

    def text(x):
        return "NULL" if x is None else repr(x) if isinstance(x, str) else str(x)
    wh.sql("INSERT INTO src VALUES " + ", ".join(f"({', '.join(text(x) for x in r)})" for r in values))
    wh.sql("CREATE TABLE bt (k INT, v STRING, n BIGINT) PARTITIONED BY (ds STRING) "
           "CLUSTERED BY (k, v) SORTED BY (n DESC) INTO 4 BUCKETS STORED AS PARQUET")
    wh.sql("INSERT OVERWRITE TABLE bt PARTITION (ds) SELECT k, v, n, ds FROM src")
    wh.sql("INSERT INTO bt PARTITION (ds='1') SELECT k, v, n + 1 FROM src WHERE ds = '2'")

    root = tmp_path / "warehouse" / "bt"
    files = _bucket_files(root, "parquet")
    types = [HiveType.parse("int"), HiveType.parse("string")]
    for (part, bucket), per_file in files.items():
        for rows in per_file:
            assert rows and {hive_bucket([k, v], types, 4) for k, v, _ in rows} == {bucket}, (part, bucket)
            ns = [n for _, _, n in rows]
            assert ns == sorted(ns, key=lambda n: (n is not None, n), reverse=True), (part, bucket, ns)
    assert {len(per_file) for (part, _), per_file in files.items() if part != "ds=1"} == {1}
    assert max(len(per_file) for (part, _), per_file in files.items() if part == "ds=1") == 2
    assert {part for part, _ in files} == {"ds=1", "ds=2", "ds=a%3Db%2Fc"}

    spark.read.schema("k INT, v STRING, n BIGINT, ds STRING").option("basePath", str(root)).parquet(str(root)) \
        .createOrReplaceTempView("plain_bt")
    assert _rows(wh.sql("SELECT * FROM bt")) == _rows(spark.sql("SELECT * FROM plain_bt"))
    assert len(_rows(wh.sql("SELECT * FROM bt"))) == len(values) + 31
    where = "k = 7 AND v = 'v2'"
    got = wh.sql(f"SELECT * FROM bt WHERE {where}")
    assert _rows(got) == _rows(spark.sql(f"SELECT * FROM plain_bt WHERE {where}")) and _rows(got)
    bucket = hive_bucket([7, "v2"], types, 4)
    assert {f.rsplit("/", 1)[1][:6] for f in got.inputFiles()} == {f"{bucket:06d}"}
    # sampled ON its bucket columns (Hive's ON k, v): bucket 2's files only, its rows
    sample = wh.sql("SELECT k, v, n, ds FROM bt TABLESAMPLE (BUCKET 3 OUT OF 4 ON k, v)")
    plain = _rows(spark.sql("SELECT k, v, n, ds FROM plain_bt"))
    expected = [r for r in plain if hive_bucket(list(r[:2]), types, 4) == 2]
    assert _rows(sample) == expected and expected
    assert {f.rsplit("/", 1)[1][:6] for f in sample.inputFiles()} == {"000002"}


def test_bucketed_writes_hivepark_cannot_make_as_hive_are_refused(wh, spark, tmp_path):
    wh.sql("CREATE TABLE bd (d DECIMAL(10,2), v STRING) CLUSTERED BY (d) INTO 2 BUCKETS STORED AS PARQUET")
    e = _error(wh, "INSERT INTO bd VALUES (1.5, 'a')")
    assert "bucket column d decimal" in str(e) and "nothing was written" in str(e)
    e = _error(wh, "CREATE TABLE bd2 CLUSTERED BY (d) INTO 2 BUCKETS AS SELECT CAST(1.5 AS DECIMAL(10,2)) AS d")
    assert "bucket column d decimal" in str(e)
    assert not any(p.is_file() for p in (tmp_path / "warehouse").rglob("*") if "bd" in str(p))
    assert "bd2" not in [r[0] for r in wh.sql("SHOW TABLES").collect()]

    # CTAS (TEXTFILE: Hive's text lines) writes the buckets; LOAD and CONCATENATE, which cannot keep them, are refused
    wh.sql("CREATE TABLE c CLUSTERED BY (k) SORTED BY (n DESC) INTO 3 BUCKETS STORED AS TEXTFILE AS "
           "SELECT CAST(id AS INT) AS k, CAST(id * 2 AS STRING) AS v, id % 7 AS n FROM range(50)")
    described = {r[0].strip(): (r[1] or "").strip() for r in wh.sql("DESCRIBE FORMATTED c").collect() if r[0]}
    assert described["Num Buckets:"] == "3" and parameters(wh, "c")["bucketing_version"] == "2"
    root = tmp_path / "warehouse" / "c"
    files = _bucket_files(root, "textfile")
    assert sorted(files) == [(".", 0), (".", 1), (".", 2)]
    int_t = [HiveType.parse("int")]
    for (_, bucket), (rows,) in files.items():
        assert {hive_bucket([k], int_t, 3) for k, _, _ in rows} == {bucket}
        assert [n for _, _, n in rows] == sorted((n for _, _, n in rows), reverse=True)
    spark.read.schema("k INT, v STRING, n BIGINT").option("sep", "\x01").csv(str(root)) \
        .createOrReplaceTempView("plain_c")
    assert _rows(wh.sql("SELECT * FROM c")) == _rows(spark.sql("SELECT * FROM plain_c"))
    before = sorted(p.name for p in root.iterdir())
    loaded = tmp_path / "load"
    loaded.mkdir()
    (loaded / "in").mkdir()
    (loaded / "in" / "rows.txt").write_text("1\x01x\x011\n")
    e = _error(wh, f"LOAD DATA INPATH '{loaded / 'in'}' INTO TABLE c")
    assert "LOAD DATA" in str(e) and "nothing was written" in str(e)
    assert (loaded / "in" / "rows.txt").exists()
    e = _error(wh, "ALTER TABLE c CONCATENATE")
    assert "CONCATENATE" in str(e) and "nothing was written" in str(e)
    assert sorted(p.name for p in root.iterdir()) == before


def test_tablesample_on_columns_takes_the_rows_hive_takes(wh, spark, tmp_path):
    """TABLESAMPLE (BUCKET x OUT OF y [ON c]): the rows whose Hive hash of c is in bucket x of y,
    as Hive's bucket2.q.out took them; a bucketed table's sample reads its bucket's files only."""
    from catalog.test_buckets import HIVE_BUCKET_0_OF_2, HIVE_BUCKET_1_OF_2

    keys = sorted(HIVE_BUCKET_0_OF_2 | HIVE_BUCKET_1_OF_2)
    wh.sql("CREATE TABLE src2 (key INT, value STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO src2 VALUES " + ", ".join(f"({k}, 'val_{k}')" for k in keys))
    wh.sql("CREATE TABLE bucket2_1 (key INT, value STRING) CLUSTERED BY (key) INTO 2 BUCKETS STORED AS ORC")
    wh.sql("INSERT OVERWRITE TABLE bucket2_1 SELECT * FROM src2")
    got = wh.sql("SELECT key, value FROM bucket2_1 TABLESAMPLE (BUCKET 1 OUT OF 2)")
    assert {r[0] for r in got.collect()} == HIVE_BUCKET_0_OF_2
    assert {f.rsplit("/", 1)[1][:8] for f in got.inputFiles()} == {"000000_0"}
    plan = "\n".join(r[0] for r in wh.sql("EXPLAIN SELECT key FROM bucket2_1 TABLESAMPLE (BUCKET 1 OUT OF 2)")
                     .collect())
    assert "buckets=1/2" in plan

    # any table, ON any column of a hashed type: plain Spark's rows over the same files, kept by Hive's hash
    spark.read.parquet(str(tmp_path / "warehouse" / "src2")).createOrReplaceTempView("plain_src2")
    every = spark.sql("SELECT key, value FROM plain_src2").collect()
    int_t, str_t = HiveType.parse("int"), HiveType.parse("string")
    for sql, keep in (
            ("SELECT key, value FROM src2 TABLESAMPLE (BUCKET 2 OUT OF 3 ON value)",
             lambda r: hive_bucket([r[1]], [str_t], 3) == 1),
            ("SELECT key, value FROM src2 TABLESAMPLE (BUCKET 3 OUT OF 4 ON key) s WHERE s.key < 300",
             lambda r: hive_bucket([r[0]], [int_t], 4) == 2 and r[0] < 300),
            ("SELECT key, value FROM src2 TABLESAMPLE (BUCKET 2 OUT OF 3 ON key, value)",
             lambda r: hive_bucket([r[0], r[1]], [int_t, str_t], 3) == 1),
            ("SELECT a.key, b.value FROM bucket2_1 TABLESAMPLE (BUCKET 1 OUT OF 4 ON key) a "
             "JOIN src2 b ON a.key = b.key",
             lambda r: hive_bucket([r[0]], [int_t], 4) == 0)):
        expected = sorted((tuple(r) for r in every if keep(r)), key=repr)
        assert _rows(wh.sql(sql)) == expected and expected, sql
    # a view keeps its sample of two columns (its text as hivepark writes it again)
    wh.sql("CREATE VIEW sampled AS SELECT key, value FROM src2 TABLESAMPLE (BUCKET 2 OUT OF 3 ON key, value)")
    assert _rows(wh.sql("SELECT * FROM sampled")) == _rows(
        wh.sql("SELECT key, value FROM src2 TABLESAMPLE (BUCKET 2 OUT OF 3 ON key, value)"))
    # 1 OUT OF 4 of a table of 2 buckets: bucket 0's file, then Hive's hash of 4
    got = wh.sql("SELECT key FROM bucket2_1 TABLESAMPLE (BUCKET 1 OUT OF 4 ON key)")
    assert {f.rsplit("/", 1)[1][:8] for f in got.inputFiles()} == {"000000_0"}
    assert {r[0] for r in got.collect()} == {k for k in keys if hive_bucket([k], [int_t], 4) == 0}
    random = {r[0] for r in wh.sql("SELECT key FROM src2 TABLESAMPLE (BUCKET 1 OUT OF 2 ON rand())").collect()}
    assert random <= set(keys)

    e = _error(wh, "SELECT * FROM bucket2_1 TABLESAMPLE (BUCKET 3 OUT OF 2 ON key)")
    assert e.code == 10061 and str(e).startswith("Numerator should not be bigger than denominator in sample clause "
                                                 "for table bucket2_1")
    wh.sql("CREATE TABLE priced (d DECIMAL(10,2), v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    assert "d is decimal" in str(_error(wh, "SELECT * FROM priced TABLESAMPLE (BUCKET 1 OUT OF 2 ON d)"))
    assert "partition column" in str(_error(wh, "SELECT * FROM priced TABLESAMPLE (BUCKET 1 OUT OF 2 ON ds)"))


def test_date_and_boolean_bucket_columns_are_written_pruned_and_sampled_as_hive_hashes_them(wh, spark, tmp_path):
    """A DATE bucket column (Hive hashes its days as an INT) and a BOOLEAN one (1 or 0): each file
    holds the rows of its bucket, the rows are plain Spark's over the same files, a point query
    reads its bucket's files and TABLESAMPLE ON d keeps the rows of its bucket."""
    import datetime

    wh.sql("CREATE TABLE ev (d DATE, ok BOOLEAN, n INT) CLUSTERED BY (d, ok) INTO 4 BUCKETS STORED AS PARQUET")
    start = datetime.date(2023, 12, 25)
    wh.sql("INSERT INTO ev SELECT date_add(DATE '2023-12-25', CAST(id % 20 AS INT)), id % 3 = 0, CAST(id AS INT) "
           "FROM range(200) UNION ALL SELECT NULL, NULL, -1")
    root = tmp_path / "warehouse" / "ev"
    types = [HiveType.parse("date"), HiveType.parse("boolean")]
    import pyarrow.parquet as pq
    seen = 0
    for f in sorted(p for p in root.iterdir() if p.is_file() and not p.name.startswith((".", "_"))):
        rows = pq.read_table(f).to_pylist()
        seen += len(rows)
        assert {hive_bucket([r["d"], r["ok"]], types, 4) for r in rows} == {int(f.name[:6])}, f.name
    assert seen == 201
    spark.read.parquet(str(root)).createOrReplaceTempView("plain_ev")
    assert _rows(wh.sql("SELECT * FROM ev")) == _rows(spark.sql("SELECT * FROM plain_ev"))
    day = start + datetime.timedelta(days=7)
    where = f"d = DATE '{day}' AND ok = true"
    got = wh.sql(f"SELECT * FROM ev WHERE {where}")
    assert _rows(got) == _rows(spark.sql(f"SELECT * FROM plain_ev WHERE {where}")) and _rows(got)
    assert {f.rsplit("/", 1)[1][:6] for f in got.inputFiles()} == {f"{hive_bucket([day, True], types, 4):06d}"}
    sample = wh.sql("SELECT d, n FROM ev TABLESAMPLE (BUCKET 2 OUT OF 3 ON d)")
    every = spark.sql("SELECT d, n FROM plain_ev").collect()
    expected = sorted((tuple(r) for r in every if hive_bucket([r[0]], types[:1], 3) == 1), key=repr)
    assert _rows(sample) == expected and expected


_SPARK_HASHED = {"i": "int", "b": "bigint", "d": "date", "t": "tinyint", "o": "boolean"}


def _spark_hashed_rows():
    import datetime

    from hypothesis import strategies as st

    def ints(bits):
        edge = st.sampled_from([0, 1, -1, -(1 << (bits - 1)), (1 << (bits - 1)) - 1])
        return st.none() | edge | st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    row = st.tuples(ints(32), ints(64), st.none() | st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)),
                    ints(8), st.none() | st.booleans())
    return st.tuples(st.lists(row, min_size=1, max_size=30),
                     st.lists(st.sampled_from(sorted(_SPARK_HASHED)), min_size=1, max_size=4), st.integers(1, 64))


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(_spark_hashed_rows())
def test_the_spark_expression_puts_each_row_in_the_bucket_hives_hash_gives(spark, case):
    """INT, BIGINT, DATE, TINYINT and BOOLEAN bucket columns get their bucket from a Spark
    expression (Spark's own Murmur3, seeded and fed so it gives Hive's), no Python workers:
    row by row the bucket of ``hive_bucket``, which tests/catalog/test_buckets.py holds to Hive's."""
    rows, columns, count = case
    names = list(_SPARK_HASHED)
    df = spark.createDataFrame(rows, ", ".join(f"{n} {t}" for n, t in _SPARK_HASHED.items()))
    sql = spark_bucket_sql([f"`{c}`" for c in columns], [_SPARK_HASHED[c] for c in columns], count)
    types = [HiveType.parse(_SPARK_HASHED[c]) for c in columns]
    assert [r[0] for r in df.selectExpr(sql).collect()] == \
        [hive_bucket([r[names.index(c)] for c in columns], types, count) for r in rows]


def test_bigint_and_tinyint_bucket_columns_are_written_as_hive_hashes_them(wh, spark, tmp_path):
    wh.sql("CREATE TABLE bb CLUSTERED BY (b, t) INTO 8 BUCKETS STORED AS PARQUET AS SELECT id * 4294967311 - 7 AS b, "
           "CAST(id % 256 - 128 AS TINYINT) AS t, CAST(id AS STRING) AS v FROM range(300)")
    import pyarrow.parquet as pq

    root = tmp_path / "warehouse" / "bb"
    types = [HiveType.parse("bigint"), HiveType.parse("tinyint")]
    files = sorted(p for p in root.iterdir() if p.is_file() and not p.name.startswith((".", "_")))
    for f in files:
        assert {hive_bucket([r["b"], r["t"]], types, 8) for r in pq.read_table(f).to_pylist()} == {int(f.name[:6])}
    assert len(files) == 8
    spark.read.parquet(str(root)).createOrReplaceTempView("plain_bb")
    assert _rows(wh.sql("SELECT * FROM bb")) == _rows(spark.sql("SELECT * FROM plain_bb"))
    assert len(_rows(wh.sql("SELECT * FROM bb"))) == 300


def test_a_char_bucket_column_is_hashed_without_its_trailing_spaces_as_hive_hashes_it(wh, spark, tmp_path):
    """Hive hashes a CHAR's stripped value (HiveChar.getStrippedValue): 'ab' in a CHAR(4) column
    lands in the bucket of 'ab', whatever padding the file keeps; TABLESAMPLE ON it keeps those rows."""
    wh.sql("CREATE TABLE cc (c CHAR(4), n INT) CLUSTERED BY (c) INTO 4 BUCKETS STORED AS PARQUET")
    words = ["ab", "ab  ", " ab", "xyz", "q", "", "long", "a b"]
    wh.sql("INSERT INTO cc VALUES " + ", ".join(f"('{w}', {i})" for i, w in enumerate(words * 5)) + ", (NULL, -1)")
    import pyarrow.parquet as pq

    root = tmp_path / "warehouse" / "cc"
    char_t = [HiveType.parse("char(4)")]
    for f in (p for p in root.iterdir() if p.is_file() and not p.name.startswith((".", "_"))):
        assert {hive_bucket([r["c"]], char_t, 4) for r in pq.read_table(f).to_pylist()} == {int(f.name[:6])}
    assert hive_bucket(["ab  "], char_t, 4) == hive_bucket(["ab"], [HiveType.parse("string")], 4)
    assert hive_bucket([" ab"], char_t, 4) == hive_bucket([" ab"], [HiveType.parse("string")], 4)
    spark.read.parquet(str(root)).createOrReplaceTempView("plain_cc")
    assert _rows(wh.sql("SELECT * FROM cc")) == _rows(spark.sql("SELECT * FROM plain_cc"))
    every = spark.sql("SELECT c, n FROM plain_cc").collect()
    expected = sorted((tuple(r) for r in every if hive_bucket([r[0]], char_t, 3) == 2), key=repr)
    assert _rows(wh.sql("SELECT c, n FROM cc TABLESAMPLE (BUCKET 3 OUT OF 3 ON c)")) == expected and expected
    # a filter fixing the CHAR column reads its value's one bucket (EXPLAIN said CHAR was never pruned)
    for where in ("c = 'ab'", "c IN ('xyz', 'q')", "c = 'a b'"):
        query = f"SELECT c, n FROM {{t}} WHERE {where}"
        assert _rows(wh.sql(query.format(t="cc"))) == _rows(spark.sql(query.format(t="plain_cc"))) != [], where
        plan = "\n".join(r[0] for r in wh.sql("EXPLAIN " + query.format(t="cc")).collect())
        buckets = {hive_bucket([w], char_t, 4) for w in re.findall(r"'([^']*)'", where)}
        assert f"buckets={len(buckets)}/4" in plan, plan
    plan = "\n".join(r[0] for r in wh.sql("EXPLAIN SELECT * FROM cc WHERE c LIKE 'a%'").collect())
    assert "buckets=4/4 (every file read: the filter does not fix c to values of its type" in plan, plan


def test_a_pernode_limit_of_one_never_fails_a_dynamic_bucketed_write(wh, spark, tmp_path):
    """The README's promise that hive.exec.max.dynamic.partitions.pernode never fails a write,
    for a bucketed table, whose rows go to the tasks by (partition, bucket): where the doubled
    task counts cannot keep each task to one partition, each (partition, bucket) hash is sent
    to a task chosen for it. Every file still holds one bucket's rows; the rows are plain Spark's."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE pb (k INT, v STRING, n BIGINT) PARTITIONED BY (ds STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
           "STORED AS PARQUET")
    wh.sql("SET hive.exec.max.dynamic.partitions.pernode=1")
    try:
        wh.sql("INSERT OVERWRITE TABLE pb PARTITION (ds) SELECT CAST(id AS INT), CONCAT('v', id), "
               "id * 3, CONCAT('d', id % 15) FROM range(300)")
    finally:
        wh.sql("SET hive.exec.max.dynamic.partitions.pernode=100")
    root = tmp_path / "warehouse" / "pb"
    files = _bucket_files(root, "parquet")
    assert {part for part, _ in files} == {f"ds=d{i}" for i in range(15)}
    int_t = [HiveType.parse("int")]
    for (part, bucket), per_file in files.items():
        assert len(per_file) == 1, (part, bucket)
        assert {hive_bucket([k], int_t, 4) for k, _, _ in per_file[0]} == {bucket}, (part, bucket)
    spark.read.schema("k INT, v STRING, n BIGINT, ds STRING").option("basePath", str(root)).parquet(str(root)) \
        .createOrReplaceTempView("plain_pb")
    assert _rows(wh.sql("SELECT * FROM pb")) == _rows(spark.sql("SELECT * FROM plain_pb"))
    assert len(_rows(wh.sql("SELECT * FROM pb"))) == 300
