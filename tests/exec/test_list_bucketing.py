"""List bucketing (skewed tables stored as directories): every DDL form and error, the
directories on disk, the layout each partition records, pruning checked against plain
Spark SQL over the same rows, CONCATENATE, SET SKEWED LOCATION, auto top-K and ANALYZE."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hivepark.catalog.skew import SKEW_LOCATIONS, partition_layout
from hivepark.errors import LimitExceeded, ParseError, SemanticError
from spark_cluster import PROPERTY_EXAMPLES

D = "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"


@pytest.fixture(scope="module")
def env(tmp_path_factory, spark):
    import hivepark

    root = tmp_path_factory.mktemp("lb")
    wh = hivepark.connect(str(root / "warehouse"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    rows = [(i, f"b{i % 7}", i % 50 if i % 11 else None, f"2012-04-1{5 + (i // 7) % 2}")
            for i in range(400)]
    spark.createDataFrame(rows, "a int, b string, x int, ds string") \
        .createOrReplaceTempView("lb_src")
    yield wh
    wh.close()


def data_dirs(location: str) -> list[str]:
    out = []
    for d, dirs, files in os.walk(location):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        if any(not f.startswith((".", "_")) for f in files):
            out.append(os.path.relpath(d, location))
    return sorted(out)


def rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def described(wh, what: str) -> dict[str, str]:
    return {r[0].strip(): r[1] for r in wh.sql(f"DESCRIBE FORMATTED {what}").collect() if r[0]}


def layout_of(wh, table: str, values=None):
    t = wh.catalog.get_table("default", table)
    if values is None:
        return partition_layout(t.properties)
    return partition_layout(wh.catalog.get_partition(t, values).parameters)


@pytest.fixture(scope="module")
def fact(env):
    """T(a, b, x) PARTITIONED BY (ds) SKEWED BY (x) ON (6, 20, 30, 40) STORED AS DIRECTORIES."""
    env.sql("CREATE TABLE fact (a INT, b STRING, x INT) PARTITIONED BY (ds STRING) "
            "SKEWED BY (x) ON (6, 20, 30, 40) STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT OVERWRITE TABLE fact PARTITION (ds) SELECT a, b, x, ds FROM lb_src")
    return env.catalog.get_table("default", "fact")


# ---------------------------------------------------------------- DDL


def test_create_forms_store_the_skew(env):
    env.sql("CREATE TABLE c1 (key STRING, value STRING) SKEWED BY (key) ON ('1','5','6')")
    env.sql("CREATE TABLE c2 (key INT, value STRING) SKEWED BY (key) ON ((1),(5),(6))")
    env.sql("CREATE TABLE c3 (key INT, value STRING) SKEWED BY (key) ON (1,5,06)")
    env.sql("CREATE TABLE c4 (col1 STRING, col2 INT, col3 STRING) SKEWED BY (col1, col2) "
            "ON (('s1',1), ('s3',3), ('s13',13), ('s78',78)) STORED AS DIRECTORIES")
    d1, d2, d3, d4 = (described(env, t) for t in ("c1", "c2", "c3", "c4"))
    assert d1["Skewed Columns:"] == "[key]" and d1["Skewed Values:"] == "[[1], [5], [6]]"
    assert "Stored As SubDirectories:" not in d1
    assert d2["Skewed Values:"] == d3["Skewed Values:"] == "[[1], [5], [6]]"
    assert d4["Stored As SubDirectories:"] == "Yes"
    assert d4["Skewed Columns:"] == "[col1, col2]"
    assert d4["Skewed Values:"] == "[[s1, 1], [s13, 13], [s3, 3], [s78, 78]]"
    # the reserved keys are shown only through the Skewed lines
    params = [r[1] for r in env.sql("DESCRIBE FORMATTED c4").collect()]
    assert not any(str(p).startswith("hivepark.skew.") for p in params)


def test_alter_forms_and_create_like(env):
    env.sql("CREATE TABLE al (key STRING, value STRING)")
    assert "Skewed Columns:" not in described(env, "al")
    env.sql("ALTER TABLE al SKEWED BY (key) ON ('1','5','6') STORED AS DIRECTORIES")
    d = described(env, "al")
    assert d["Stored As SubDirectories:"] == "Yes" and d["Skewed Values:"] == "[[1], [5], [6]]"
    env.sql("CREATE TABLE al_like LIKE al")
    d = described(env, "al_like")
    assert d["Stored As SubDirectories:"] == "Yes" and d["Skewed Columns:"] == "[key]"
    env.sql("ALTER TABLE al NOT STORED AS DIRECTORIES")
    d = described(env, "al")
    assert "Stored As SubDirectories:" not in d and d["Skewed Columns:"] == "[key]"
    env.sql("ALTER TABLE al SKEWED BY (key, value) ON (('1','a'), ('2','b'))")
    assert described(env, "al")["Skewed Values:"] == "[[1, a], [2, b]]"
    env.sql("ALTER TABLE al NOT SKEWED")
    d = described(env, "al")
    assert not any(k.startswith(("Skewed", "Stored As")) for k in d)


@pytest.mark.parametrize("ddl, code, text", [
    ("CREATE TABLE e (key STRING) SKEWED BY (key_non) ON ('1')", 10203,
     "Invalid skewed column name: key_non "),
    ("CREATE TABLE e (key STRING) SKEWED BY (key, key) ON (('1','1'))", 10202,
     "Duplicate skewed column name: key"),
    ("CREATE TABLE e (key STRING) SKEWED BY (key) ON ((1),(5,8),(6))", 10206,
     "The number of skewed column names and the number of skewed column values are "
     "different: 1 : 2"),
    ("CREATE TABLE e (key STRING) SKEWED BY () ON ()", 10200, "No skewed column name."),
    ("CREATE TABLE e (key STRING) SKEWED BY (key) ON ()", 10205,
     "Skewed column value is empty but skewed name is not."),
    ("CREATE TABLE e (key STRING) SKEWED BY () ON ('1')", 10204,
     "Skewed column name is empty but skewed value is not."),
    ("CREATE TABLE e (key STRING) PARTITIONED BY (ds STRING) SKEWED BY (ds) ON ('1')", 10203,
     "Invalid skewed column name: ds"),
    ("CREATE TABLE e (key INT) SKEWED BY (key) ON ('abc')", None, "is not a valid int"),
    ("CREATE TABLE e (key INT) SKEWED BY (key) ON (NULL)", None, "NULL"),
    ("CREATE TABLE e (key INT) SKEWED BY (key) ON (1) STORED AS DIRECTORIES "
     "CLUSTERED BY (key) INTO 4 BUCKETS", None, "cannot also be bucketed"),
    # its skewed-value directories (.key=1) would be hidden from Spark, Hadoop and Hive: rows lost to them
    ("CREATE TABLE e (`.key` INT) SKEWED BY (`.key`) ON (1) STORED AS DIRECTORIES", None,
     "Skewed column name '.key' starts with '.': its skewed-value directories (.key=...) would be hidden"),
    ("CREATE TABLE e (`_key` INT) SKEWED BY (`_key`) ON (1) STORED AS DIRECTORIES", None,
     "Skewed column name '_key' starts with '_'"),
    # a directory name the file system refuses: every write meeting the value would fail
    ("CREATE TABLE e (key STRING) SKEWED BY (key) ON ('" + "/" * 90 + "') STORED AS DIRECTORIES", None,
     "gives a directory name of 274 bytes (escaped, UTF-8), more than the file-system limit of 255"),
])
def test_skew_ddl_errors(env, ddl, code, text):
    with pytest.raises(SemanticError) as e:
        env.sql(ddl)
    assert text in str(e.value)
    assert e.value.code == code
    assert "e" not in env.catalog.list_tables("default")


def test_alter_errors(env, fact, tmp_path):
    env.sql("CREATE TABLE plain (key STRING) PARTITIONED BY (ds STRING)")
    with pytest.raises(SemanticError) as e:
        env.sql("ALTER TABLE plain NOT STORED AS DIRECTORIES")
    assert e.value.code == 10196
    assert "This operation is only valid on skewed table. default.plain" in str(e.value)
    with pytest.raises(SemanticError) as e:
        env.sql("ALTER TABLE fact PARTITION (ds='2012-04-15') SET SKEWED LOCATION")
    assert e.value.code == 10198
    with pytest.raises(SemanticError) as e:
        env.sql("ALTER TABLE fact PARTITION (ds='2012-04-15') SET SKEWED LOCATION ()")
    assert e.value.code == 10197
    with pytest.raises(SemanticError, match="is not absolute or has no scheme information. "
                                            "Please specify a complete absolute uri"):
        env.sql("ALTER TABLE fact PARTITION (ds='2012-04-15') SET SKEWED LOCATION "
                "(30='relative/dir')")
    with pytest.raises(SemanticError, match="not one of the skewed values"):
        env.sql(f"ALTER TABLE fact PARTITION (ds='2012-04-15') SET SKEWED LOCATION "
                f"(31='file://{tmp_path}')")
    with pytest.raises(SemanticError) as e:
        env.sql("ALTER TABLE fact CHANGE x y INT")
    assert e.value.code == 10207
    assert "x is a skewed column. It's not allowed to rename skewed column or change " \
           "skewed column type." in str(e.value)
    with pytest.raises(SemanticError) as e:
        env.sql("ALTER TABLE fact CHANGE x x BIGINT")
    assert e.value.code == 10207
    with pytest.raises(ParseError):
        env.sql("ALTER TABLE fact NOT SKEWED BY")


def test_replace_columns_cannot_retype_a_skewed_column(env):
    """10207 as for CHANGE: REPLACE COLUMNS giving a skewed column another type was accepted."""
    env.sql("CREATE TABLE rc (a INT, x INT) SKEWED BY (x) ON (1, 2) STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO rc VALUES (1, 1), (2, 3)")
    for cols in ("a INT, x BIGINT", "a INT, x DOUBLE"):
        with pytest.raises(SemanticError) as e:
            env.sql(f"ALTER TABLE rc REPLACE COLUMNS ({cols})")
        assert e.value.code == 10207
        assert "x is a skewed column. It's not allowed to rename skewed column or change skewed column type." \
            in str(e.value)
    assert [(c.name, c.type) for c in env.catalog.get_table("default", "rc").columns] == [("a", "int"), ("x", "int")]
    env.sql("ALTER TABLE rc REPLACE COLUMNS (a BIGINT, x INT, b STRING)")  # the skewed column as it was
    assert rows(env.sql("SELECT a, x, b FROM rc WHERE x = 1")) == [(1, 1, None)]


def test_load_into_stored_as_dirs_is_10195(env, fact, tmp_path):
    src = tmp_path / "f.txt"
    src.write_text("1\n")
    with pytest.raises(SemanticError) as e:
        env.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE fact PARTITION (ds='x')")
    assert e.value.code == 10195
    assert "A stored-as-directories table cannot be used as target for LOAD" in str(e.value)


# ---------------------------------------------------------------- writes


def test_directories_on_disk_and_layout(env, fact):
    assert data_dirs(fact.location) == sorted(
        f"ds=2012-04-1{d}/{sub}" for d in (5, 6) for sub in (D, "x=20", "x=30", "x=40", "x=6"))
    lay = layout_of(env, "fact", ("2012-04-15",))
    assert lay.columns == ("x",)
    assert lay.values == (("6",), ("20",), ("30",), ("40",))
    assert dict(lay.locations) == {("6",): "x=6", ("20",): "x=20", ("30",): "x=30",
                                   ("40",): "x=40", None: D}
    # each directory holds exactly its rows; NULL goes to the default directory
    for sub, want in (("x=30", {30}), ("x=6", {6})):
        got = {r.x for r in env.spark.read.parquet(
            f"{fact.location}/ds=2012-04-15/{sub}").collect()}
        assert got == want
    default = {r.x for r in env.spark.read.parquet(f"{fact.location}/ds=2012-04-15/{D}").collect()}
    assert None in default and not default & {6, 20, 30, 40}
    assert rows(env.sql("SELECT * FROM fact")) == rows(env.sql("SELECT * FROM lb_src"))
    d = described(env, "fact PARTITION (ds='2012-04-15')")
    assert d["Skewed Value to Path:"].startswith(f"{{[20]={fact.location}/ds=2012-04-15/x=20, ")
    # as Hive's (list_bucket_dml_1.q.out): the skewed values' directories, not the default one
    assert d["Skewed Value to Truncated Path:"] == (
        "{[20]=/fact/ds=2012-04-15/x=20, [30]=/fact/ds=2012-04-15/x=30, "
        "[40]=/fact/ds=2012-04-15/x=40, [6]=/fact/ds=2012-04-15/x=6}")


PRUNING = [
    ("ds = '2012-04-15' AND x = 30", "partitions=1/2", "directories=1/5"),
    ("ds = '2012-04-15' AND x = 50", "partitions=1/2", "directories=1/5"),
    ("x IN (6, 20)", "partitions=2/2", "directories=4/10"),
    ("x IN (6, 49)", "partitions=2/2", "directories=4/10"),
    ("x = 6 OR x = 40", "partitions=2/2", "directories=4/10"),
    ("NOT (x = 6)", "partitions=2/2", "directories=8/10"),
    ("x <> 6 AND ds = '2012-04-16'", "partitions=1/2", "directories=4/5"),
    ("x = 30 AND a > 100", "partitions=2/2", "directories=2/10"),
    ("x = 30 AND x = 6", "partitions=2/2", "directories=0/10"),
    ("(x = 30 AND b = 'b1') OR (x = 20 AND ds = '2012-04-16')", "partitions=2/2",
     "directories=4/10"),
    ("x IS NULL", "partitions=2/2", "directories=2/10"),
    ("x < 25", "partitions=2/2", "directories=6/10"),
    ("a = 3", "partitions=2/2", "directories=10/10"),
    ("x = '30'", "partitions=2/2", "directories=2/10"),
    ("CAST(x AS STRING) = '30'", "partitions=2/2", "directories=10/10"),
]


@pytest.mark.parametrize("where, parts, dirs", PRUNING)
def test_pruning_matches_plain_spark(env, fact, where, parts, dirs):
    text = env.explain(f"SELECT * FROM fact WHERE {where}")
    assert parts in text and f"list bucketing: {dirs}" in text, text
    assert rows(env.sql(f"SELECT * FROM fact WHERE {where}")) == \
        rows(env.spark.sql(f"SELECT * FROM lb_src WHERE {where}"))


@pytest.mark.parametrize("keys, dirs", [
    ("(30)", "directories=2/10"),        # one skewed value: its directory in each partition
    ("(30), (49)", "directories=4/10"),  # 49 is not skewed: the default directory too
    ("(NULL)", "directories=0/10"),      # NULL joins nothing
])
def test_map_join_values_choose_skewed_directories(env, fact, spark, keys, dirs):
    """Issue 5 item 5: a map-join on a skewed (not partition) column prunes its
    list-bucketing directories with the small side's values, as a WHERE x IN (...) would."""
    env.sql("DROP TABLE IF EXISTS xdim")
    env.sql("CREATE TABLE xdim (x INT, tag STRING) STORED AS PARQUET")
    env.sql("INSERT INTO xdim SELECT CAST(col1 AS INT), 't' FROM VALUES " + keys)
    sql = "SELECT f.a, f.x, d.tag FROM fact f JOIN xdim d ON f.x = d.x"
    text = "\n".join(r[0] for r in env.sql("EXPLAIN ANALYZE " + sql).collect())
    assert f"list bucketing: {dirs}" in text, text
    spark.sql("SELECT CAST(col1 AS INT) AS x, 't' AS tag FROM VALUES " + keys) \
        .createOrReplaceTempView("plain_xdim")
    assert rows(env.sql(sql)) == rows(spark.sql(
        "SELECT f.a, f.x, d.tag FROM lb_src f JOIN plain_xdim d ON f.x = d.x"))


def test_equality_reads_only_its_directory(env, fact):
    text = env.explain("SELECT * FROM fact WHERE ds = '2012-04-15' AND x = 30")
    assert f"directories: {fact.location}/ds=2012-04-15/x=30" in text
    text = env.explain("SELECT * FROM fact WHERE ds = '2012-04-15' AND x = 50")
    assert f"directories: {fact.location}/ds=2012-04-15/{D}" in text


def test_multi_column_skew_full_and_partial_key(env, spark):
    env.sql("CREATE TABLE mc (k INT, v STRING, c STRING) PARTITIONED BY (ds STRING) "
            "SKEWED BY (k, v) ON ((484,'val_484'), (103,'val_103'), (51,'val_14')) "
            "STORED AS DIRECTORIES STORED AS ORC")
    spark.sql("SELECT CAST(id % 500 AS INT) AS k, concat('val_', id % 500) AS v, "
              "CAST(id AS STRING) AS c FROM range(2000)").createOrReplaceTempView("mc_src")
    env.sql("INSERT OVERWRITE TABLE mc PARTITION (ds='1') SELECT k, v, c FROM mc_src")
    t = env.catalog.get_table("default", "mc")
    assert data_dirs(t.location) == [f"ds=1/{D}/{D}", "ds=1/k=103/v=val_103",
                                     "ds=1/k=484/v=val_484"]
    lay = layout_of(env, "mc", ("1",))
    assert ("51", "val_14") in lay.values and lay.location_of(("51", "val_14")) is None
    d = described(env, "mc PARTITION (ds='1')")
    assert d["Skewed Values:"] == "[[103, val_103], [484, val_484], [51, val_14]]"
    for where, n in (("k = 484 AND v = 'val_484'", "1/3"), ("k = 484", "2/3"),
                     ("v = 'val_103'", "2/3"), ("k = 51 AND v = 'val_14'", "0/3"),
                     ("k = 1 AND v = 'val_1'", "1/3"),
                     # (484, 'val_103') is not skewed: it could be in the default directory
                     ("k IN (103, 484) AND v = 'val_103'", "2/3")):
        assert f"directories={n}" in env.explain(f"SELECT * FROM mc WHERE {where}"), where
        assert rows(env.sql(f"SELECT k, v, c FROM mc WHERE {where}")) == \
            rows(spark.sql(f"SELECT * FROM mc_src WHERE {where}"))


def test_values_match_exactly_not_lowercased(env):
    env.sql("CREATE TABLE up (a INT, s STRING) SKEWED BY (s) ON ('ABC', 'x y') "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO up VALUES (1, 'ABC'), (2, 'abc'), (3, 'x y'), (4, NULL)")
    t = env.catalog.get_table("default", "up")
    assert data_dirs(t.location) == [D, "s=ABC", "s=x y"]
    assert {r.a for r in env.spark.read.parquet(f"{t.location}/s=ABC").collect()} == {1}
    assert "directories=1/3" in env.explain("SELECT * FROM up WHERE s = 'abc'")
    assert rows(env.sql("SELECT a FROM up WHERE s = 'abc'")) == [(2,)]
    assert rows(env.sql("SELECT a FROM up WHERE s = 'ABC'")) == [(1,)]


def test_unpartitioned_append_keeps_layout_and_alter_affects_later_partitions(env, spark):
    env.sql("CREATE TABLE un (a INT, x INT) SKEWED BY (x) ON (1) STORED AS DIRECTORIES "
            "STORED AS TEXTFILE")
    env.sql("INSERT INTO un VALUES (1, 1), (2, 2)")
    env.sql("ALTER TABLE un SKEWED BY (x) ON (2) STORED AS DIRECTORIES")
    env.sql("INSERT INTO un VALUES (3, 1), (4, 2)")  # an append keeps the layout it has
    t = env.catalog.get_table("default", "un")
    assert data_dirs(t.location) == [D, "x=1"]
    assert rows(env.sql("SELECT * FROM un WHERE x = 1")) == [(1, 1), (3, 1)]
    assert "directories=1/2" in env.explain("SELECT * FROM un WHERE x = 2")
    assert rows(env.sql("SELECT * FROM un WHERE x = 2")) == [(2, 2), (4, 2)]
    env.sql("INSERT OVERWRITE TABLE un SELECT a, x FROM un")  # now the new skew applies
    assert data_dirs(t.location) == [D, "x=2"]
    assert rows(env.sql("SELECT * FROM un")) == [(1, 1), (2, 2), (3, 1), (4, 2)]
    env.sql("ALTER TABLE un NOT STORED AS DIRECTORIES")
    env.sql("INSERT OVERWRITE TABLE un SELECT a, x FROM un")  # plain again
    assert data_dirs(t.location) == ["."]
    assert layout_of(env, "un") is None
    assert rows(env.sql("SELECT * FROM un WHERE x = 2")) == [(2, 2), (4, 2)]


def test_alter_changes_only_later_partitions(env, fact, spark):
    env.sql("CREATE TABLE ev (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO ev PARTITION (ds='old') VALUES (1, 1), (2, 2)")
    env.sql("ALTER TABLE ev SKEWED BY (x) ON (2) STORED AS DIRECTORIES")
    env.sql("INSERT INTO ev PARTITION (ds) VALUES (3, 1, 'new'), (4, 2, 'new'), (5, 2, 'old')")
    t = env.catalog.get_table("default", "ev")
    assert data_dirs(t.location) == [f"ds=new/{D}", "ds=new/x=2", f"ds=old/{D}", "ds=old/x=1"]
    assert layout_of(env, "ev", ("old",)).values == (("1",),)
    assert layout_of(env, "ev", ("new",)).values == (("2",),)
    assert "directories=2/4" in env.explain("SELECT * FROM ev WHERE x = 2")
    assert rows(env.sql("SELECT * FROM ev WHERE x = 2")) == [(2, 2, "old"), (4, 2, "new"),
                                                            (5, 2, "old")]
    assert rows(env.sql("SELECT * FROM ev WHERE x = 1")) == [(1, 1, "old"), (3, 1, "new")]
    env.sql("ALTER TABLE ev NOT SKEWED")
    env.sql("INSERT INTO ev PARTITION (ds='plain') VALUES (6, 2)")
    assert layout_of(env, "ev", ("plain",)) is None
    assert rows(env.sql("SELECT a FROM ev WHERE x = 2")) == [(2,), (4,), (5,), (6,)]
    # one dynamic write: an append to a plain partition stays plain, a new one is laid out
    env.sql("ALTER TABLE ev SKEWED BY (x) ON (2, 3) STORED AS DIRECTORIES")
    env.sql("INSERT INTO ev PARTITION (ds) VALUES (7, 2, 'plain'), (8, 3, 'newer'), "
            "(9, 2, 'newer'), (10, 4, 'newer')")
    assert [d for d in data_dirs(t.location) if d.startswith(("ds=plain", "ds=newer"))] == \
        [f"ds=newer/{D}", "ds=newer/x=2", "ds=newer/x=3", "ds=plain"]
    assert layout_of(env, "ev", ("plain",)) is None
    assert "directories=4/8" in env.explain("SELECT * FROM ev WHERE x = 2")
    assert rows(env.sql("SELECT a FROM ev WHERE x = 2")) == [(2,), (4,), (5,), (6,), (7,), (9,)]


def test_ctas_and_external_tables(env, spark, tmp_path):
    env.sql("CREATE TABLE ct SKEWED BY (x) ON (30) STORED AS DIRECTORIES STORED AS PARQUET "
            "AS SELECT a, x FROM lb_src")
    t = env.catalog.get_table("default", "ct")
    assert data_dirs(t.location) == [D, "x=30"]
    assert rows(env.sql("SELECT * FROM ct WHERE x = 30")) == \
        rows(spark.sql("SELECT a, x FROM lb_src WHERE x = 30"))
    loc = tmp_path / "ext"
    env.sql(f"CREATE EXTERNAL TABLE ext (a INT, x INT) PARTITIONED BY (ds STRING) "
            f"SKEWED BY (x) ON (30) STORED AS DIRECTORIES STORED AS ORC LOCATION '{loc}'")
    env.sql("INSERT INTO ext PARTITION (ds) SELECT a, x, ds FROM lb_src")
    assert data_dirs(str(loc)) == [f"ds=2012-04-15/{D}", "ds=2012-04-15/x=30",
                                   f"ds=2012-04-16/{D}", "ds=2012-04-16/x=30"]
    assert rows(env.sql("SELECT a, x, ds FROM ext WHERE x = 30 OR x IS NULL")) == \
        rows(spark.sql("SELECT a, x, ds FROM lb_src WHERE x = 30 OR x IS NULL"))


def test_msck_repair_keeps_list_bucketing_files(env, spark):
    env.sql("CREATE TABLE ms (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO ms PARTITION (ds='1') VALUES (1, 1), (2, 2)")
    env.sql("MSCK REPAIR TABLE ms")
    assert rows(env.sql("SELECT a FROM ms")) == [(1,), (2,)]
    assert rows(env.sql("SELECT a FROM ms WHERE x = 1")) == [(1,)]


def test_set_skewed_location(env, spark, tmp_path):
    env.sql("CREATE TABLE sl (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO sl PARTITION (ds='1') VALUES (1, 1), (2, 2), (3, 3)")
    t = env.catalog.get_table("default", "sl")
    moved = tmp_path / "moved_x1"
    shutil.copytree(f"{t.location}/ds=1/x=1", moved)
    for f in os.listdir(f"{t.location}/ds=1/x=1"):
        os.remove(f"{t.location}/ds=1/x=1/{f}")
    env.sql(f"ALTER TABLE sl PARTITION (ds='1') SET SKEWED LOCATION (1='file://{moved}', "
            f"'HIVE_DEFAULT_LIST_BUCKETING_KEY'='file://{t.location}/ds=1/{D}')")
    d = described(env, "sl PARTITION (ds='1')")
    assert f"[1]={moved}" in d["Skewed Value to Path:"]
    assert f"[HIVE_DEFAULT_LIST_BUCKETING_KEY]={t.location}/ds=1/{D}" in d["Skewed Value to Path:"]
    text = env.explain("SELECT * FROM sl WHERE x = 1")
    assert "directories=1/3" in text and str(moved) in text
    assert rows(env.sql("SELECT a FROM sl WHERE x = 1")) == [(1,)]
    assert rows(env.sql("SELECT a FROM sl")) == [(1,), (2,), (3,)]
    env.sql("CREATE TABLE slu (a INT, x INT) SKEWED BY (x) ON (1) STORED AS PARQUET")
    env.sql(f"ALTER TABLE slu SET SKEWED LOCATION (1='file://{moved}')")
    assert rows(env.sql("SELECT a FROM slu WHERE x = 1")) == [(1,)]


def all_dirs(location: str) -> list[str]:
    """Every directory below ``location`` (hidden ones left out), empty ones too."""
    out = []
    for d, dirs, _ in os.walk(location):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        out += [os.path.relpath(os.path.join(d, x), location) for x in dirs]
    return sorted(out)


def test_a_skewed_location_where_another_partition_lives_is_refused(env, spark, tmp_path):
    # each file's partition is found from its directory: a skewed location of ds='a' in ds='b''s
    # directory read ds='b''s row as ds='a' twice and never as ds='b'
    env.sql("CREATE TABLE so (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO so PARTITION (ds='a') VALUES (2, 2)")
    t = env.catalog.get_table("default", "so")
    env.sql(f"ALTER TABLE so ADD PARTITION (ds='c') LOCATION '{tmp_path}/c'")
    for where, whose in [(f"{t.location}/ds=b/x=1", "directory where partition {ds=b} is made by default"),
                         (f"{t.location}/ds=b", "directory where partition {ds=b} is made by default"),
                         (t.location, "directory of the table"),
                         (f"{tmp_path}/c/x=1", f"directory of partition {{ds=c}} ({tmp_path}/c)"),
                         (str(tmp_path), f"directory of partition {{ds=c}} ({tmp_path}/c)")]:
        with pytest.raises(SemanticError, match="Give a directory outside the table's other partitions") as e:
            env.sql(f"ALTER TABLE so PARTITION (ds='a') SET SKEWED LOCATION (1='file://{where}')")
        assert "SET SKEWED LOCATION" in str(e.value) and "partition {ds=a} of default.so" in str(e.value)
        assert whose in str(e.value), where
    own = tmp_path / "elsewhere" / "a_x1"
    env.sql(f"ALTER TABLE so PARTITION (ds='a') SET SKEWED LOCATION (1='file://{own}')")  # anywhere else: Hive's
    with pytest.raises(SemanticError, match=re.escape(f"in the skewed location of partition {{ds=a}} ({own})")):
        env.sql(f"ALTER TABLE so PARTITION (ds='c') SET SKEWED LOCATION (1='file://{own}/sub')")
    # nor a table or partition made there later: it would share (and DROP) the skewed directory's files
    with pytest.raises(SemanticError, match=re.escape(f"overlaps a list-bucketing directory of partition (a) of "
                                                      f"table default.so ({own}")):
        env.sql(f"ALTER TABLE so ADD PARTITION (ds='d') LOCATION '{own.parent}'")
    with pytest.raises(SemanticError, match="overlaps a list-bucketing directory of partition"):
        env.sql(f"CREATE TABLE so_over (a INT) LOCATION '{own}/t'")
    env.sql(f"ALTER TABLE so PARTITION (ds='a') SET SKEWED LOCATION (1='file://{env.location}/so_later')")
    with pytest.raises(SemanticError, match="The directory of table default.so_later .* overlaps a list-bucketing"):
        env.sql("CREATE TABLE so_later (a INT)")
    env.sql(f"ALTER TABLE so PARTITION (ds='a') SET SKEWED LOCATION (1='file://{own}')")
    env.sql("INSERT INTO so PARTITION (ds) VALUES (3, 1, 'a'), (4, 1, 'b'), (5, 2, 'a'), (6, 1, 'c')")
    plain = [spark.read.option("recursiveFileLookup", "true").parquet(*paths).selectExpr("a", "x", f"'{ds}'")
             for ds, paths in [("a", [f"{t.location}/ds=a"]), ("b", [f"{t.location}/ds=b"]),
                               ("c", [f"{tmp_path}/c"])]]
    want = rows(plain[0].union(plain[1]).union(plain[2]))
    assert rows(env.sql("SELECT a, x, ds FROM so")) == want == [(2, 2, "a"), (3, 1, "a"), (4, 1, "b"),
                                                                (5, 2, "a"), (6, 1, "c")]


def test_rename_table_moves_the_skewed_locations_inside_its_directory(env, spark):
    # a skewed location inside the table's directory kept its old path after RENAME TO: the rows
    # there were lost, and a new table under the old name was refused over the stale location
    env.sql("CREATE TABLE rn (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO rn PARTITION (ds='a') VALUES (1, 1), (2, 2)")
    env.sql("CREATE TABLE rnu (a INT, x INT) SKEWED BY (x) ON (1) STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO rnu VALUES (1, 1), (2, 2)")
    for name, part in (("rn", "/ds=a"), ("rnu", "")):
        loc = env.catalog.get_table("default", name).location + part
        shutil.move(f"{loc}/x=1", f"{loc}/own")  # (as Hive's list_bucket tests move directories by hand)
        spec = " PARTITION (ds='a')" if part else ""
        env.sql(f"ALTER TABLE {name}{spec} SET SKEWED LOCATION (1='file://{loc}/own')")
        env.sql(f"ALTER TABLE {name} RENAME TO {name}_2")
        new = env.catalog.get_table("default", f"{name}_2").location
        plain = rows(spark.read.option("recursiveFileLookup", "true").parquet(new))
        assert rows(env.sql(f"SELECT a, x FROM {name}_2")) == plain == [(1, 1), (2, 2)]
        assert rows(env.sql(f"SELECT a FROM {name}_2 WHERE x = 1")) == [(1,)]
        env.sql(f"CREATE TABLE {name} (a INT)")  # its old directory is free


def test_rename_partition_moves_the_skewed_locations_inside_its_directory(env, spark):
    # a skewed location inside the partition's directory stayed behind at RENAME TO PARTITION: its files
    # were left in ds=a/own, read as ds=b's, and a DROP of the renamed partition left them in the table
    env.sql("CREATE TABLE rp (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO rp PARTITION (ds='a') VALUES (1, 1), (2, 2)")
    t = env.catalog.get_table("default", "rp")
    shutil.move(f"{t.location}/ds=a/x=1", f"{t.location}/ds=a/own")
    env.sql(f"ALTER TABLE rp PARTITION (ds='a') SET SKEWED LOCATION (1='file://{t.location}/ds=a/own')")
    env.sql("ALTER TABLE rp PARTITION (ds='a') RENAME TO PARTITION (ds='b')")
    assert data_dirs(t.location) == [f"ds=b/{D}", "ds=b/own"]
    assert f"[1]={t.location}/ds=b/own" in described(env, "rp PARTITION (ds='b')")["Skewed Value to Path:"]
    plain = rows(spark.read.option("recursiveFileLookup", "true").parquet(t.location).selectExpr("a", "x", "'b'"))
    assert rows(env.sql("SELECT a, x, ds FROM rp")) == plain == [(1, 1, "b"), (2, 2, "b")]
    assert rows(env.sql("SELECT a FROM rp WHERE x = 1")) == [(1,)]
    env.sql("INSERT INTO rp PARTITION (ds='a') VALUES (3, 1)")  # a new ds='a' shares nothing with ds='b'
    env.sql("CREATE TABLE rpx (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("ALTER TABLE rpx EXCHANGE PARTITION (ds='b') WITH TABLE rp")  # (the same move)
    x = env.catalog.get_table("default", "rpx")
    assert data_dirs(t.location) == ["ds=a/x=1"] and data_dirs(x.location) == [f"ds=b/{D}", "ds=b/own"]
    assert f"[1]={x.location}/ds=b/own" in described(env, "rpx PARTITION (ds='b')")["Skewed Value to Path:"]
    assert rows(env.sql("SELECT a, x, ds FROM rp")) == [(3, 1, "a")]
    assert rows(env.sql("SELECT a FROM rpx WHERE x = 1")) == [(1,)]
    env.sql("ALTER TABLE rpx DROP PARTITION (ds='b')")
    assert data_dirs(x.location) == []


def test_insert_overwrite_replaces_the_rows_of_a_skewed_location_set_back(env, spark, tmp_path):
    # SET SKEWED LOCATION elsewhere and back to the partition's own x=1 (an absolute path inside it):
    # INSERT OVERWRITE left x=1's old files, still read by plain Spark, and by hivepark again once the
    # partition's files were listed (another SET SKEWED LOCATION)
    env.sql("CREATE TABLE sb (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO sb PARTITION (ds='a') VALUES (1, 1), (2, 2)")
    part = env.catalog.get_table("default", "sb").location + "/ds=a"
    env.sql(f"ALTER TABLE sb PARTITION (ds='a') SET SKEWED LOCATION (1='file://{tmp_path}/elsewhere')")
    env.sql(f"ALTER TABLE sb PARTITION (ds='a') SET SKEWED LOCATION (1='file://{part}/x=1')")
    assert rows(env.sql("SELECT a, x FROM sb")) == [(1, 1), (2, 2)]
    env.sql("INSERT OVERWRITE TABLE sb PARTITION (ds='a') VALUES (10, 1), (20, 2)")
    plain = rows(spark.read.option("recursiveFileLookup", "true").parquet(part))
    assert rows(env.sql("SELECT a, x FROM sb")) == plain == [(10, 1), (20, 2)]
    env.sql(f"ALTER TABLE sb PARTITION (ds='a') SET SKEWED LOCATION (1='file://{part}/x=1')")
    assert rows(env.sql("SELECT a, x FROM sb")) == [(10, 1), (20, 2)]


def test_msck_repair_keeps_the_files_of_a_skewed_location_inside_the_partition(env, spark):
    # MSCK REPAIR refreshed a registered partition's files from its relative list-bucketing
    # directories alone: the files of an absolute skewed location inside it (ds=a/own) left its
    # list, so its rows were no longer read, and DROP PARTITION left them on disk
    env.sql("CREATE TABLE mo (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO mo PARTITION (ds='a') VALUES (1, 1), (2, 2), (3, 3)")
    t = env.catalog.get_table("default", "mo")
    shutil.move(f"{t.location}/ds=a/x=1", f"{t.location}/ds=a/own")
    env.sql(f"ALTER TABLE mo PARTITION (ds='a') SET SKEWED LOCATION (1='file://{t.location}/ds=a/own', "
            f"2='file://{t.location}/ds=a/own')")  # (two values, one directory: its files once)
    shutil.move(next(f"{t.location}/ds=a/x=2/{f}" for f in os.listdir(f"{t.location}/ds=a/x=2")
                     if f.endswith(".parquet")), f"{t.location}/ds=a/own/two.parquet")
    env.sql("MSCK REPAIR TABLE mo")
    plain = rows(spark.read.option("recursiveFileLookup", "true").parquet(t.location))
    assert rows(env.sql("SELECT a, x FROM mo")) == plain == [(1, 1), (2, 2), (3, 3)]
    assert rows(env.sql("SELECT a FROM mo WHERE x = 1")) == [(1,)]
    assert env.catalog.get_partition(t, ["a"]).parameters["numFiles"] == "3"
    env.sql("ALTER TABLE mo DROP PARTITION (ds='a')")
    assert data_dirs(t.location) == []


def test_rename_partition_moves_a_skewed_location_at_its_own_directory(env):
    # a skewed location given as the partition's directory itself stayed at the old directory at
    # RENAME TO PARTITION (as RENAME TO of the table moves one at the table's): ds=b's x=1 pointed
    # at ds=a, where a new partition ds='a' is made
    env.sql("CREATE TABLE ro (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO ro PARTITION (ds='a') VALUES (1, 2)")
    t = env.catalog.get_table("default", "ro")
    env.sql(f"ALTER TABLE ro PARTITION (ds='a') SET SKEWED LOCATION (1='file://{t.location}/ds=a')")
    env.sql("ALTER TABLE ro PARTITION (ds='a') RENAME TO PARTITION (ds='b')")
    assert f"[1]={t.location}/ds=b}}" in described(env, "ro PARTITION (ds='b')")["Skewed Value to Path:"]
    assert rows(env.sql("SELECT a, x, ds FROM ro")) == [(1, 2, "b")]


def test_insert_overwrite_removes_the_skewed_directories_it_emptied(env, spark, tmp_path):
    # after ALTER TABLE ... SKEWED BY with other values (or NOT STORED AS DIRECTORIES) an INSERT
    # OVERWRITE deleted the old files and left their directories (x=1/) empty behind; Hive removes them
    from hivepark.storage import commit

    env.sql("CREATE TABLE ow (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x, a) ON ((1, 1), (1, 2)) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql("INSERT INTO ow PARTITION (ds) VALUES (1, 1, 'a'), (2, 1, 'a'), (3, 2, 'a'), (1, 1, 'b'), (4, 2, 'b')")
    t = env.catalog.get_table("default", "ow")
    assert all_dirs(f"{t.location}/ds=a") == [D, f"{D}/{D}", "x=1", "x=1/a=1", "x=1/a=2"]
    moved = tmp_path / "ow_moved"  # a skewed location outside the table: never touched by its overwrite
    shutil.move(f"{t.location}/ds=b/x=1/a=1", moved)
    os.rmdir(f"{t.location}/ds=b/x=1")
    env.sql(f"ALTER TABLE ow PARTITION (ds='b') SET SKEWED LOCATION ((1, 1)='file://{moved}')")
    env.sql("ALTER TABLE ow SKEWED BY (x) ON (2) STORED AS DIRECTORIES")
    env.sql("INSERT OVERWRITE TABLE ow PARTITION (ds) SELECT a + 10, x, ds FROM ow")
    assert all_dirs(f"{t.location}/ds=a") == [D, "x=2"] and all_dirs(f"{t.location}/ds=b") == [D, "x=2"]
    assert os.listdir(moved)  # (not listed as the partition's, so not deleted: outside the table)
    got = rows(env.sql("SELECT a, x, ds FROM ow"))
    plain = rows(spark.read.option("recursiveFileLookup", "true").parquet(f"{t.location}/ds=a", f"{t.location}/ds=b")
                 .selectExpr("a", "x", "CASE WHEN input_file_name() LIKE '%ds=a%' THEN 'a' ELSE 'b' END"))
    assert got == plain == [(11, 1, "a"), (11, 1, "b"), (12, 1, "a"), (13, 2, "a"), (14, 2, "b")]
    # a file the table does not own (another statement's in flight, one put by hand) keeps its directory
    open(f"{t.location}/ds=a/x=2/.not_the_tables", "w").close()
    env.sql("ALTER TABLE ow NOT STORED AS DIRECTORIES")
    env.sql("SET hivepark.files.retention.seconds=60")  # the old files stay for readers, their directories too
    try:
        env.sql("INSERT OVERWRITE TABLE ow PARTITION (ds='a') SELECT a, x FROM ow WHERE ds = 'a'")
    finally:
        env.sql("SET hivepark.files.retention.seconds=0")
    assert all_dirs(f"{t.location}/ds=a") == [D, "x=2"]
    commit.delete_expired(env.location, now=float("inf"))
    assert all_dirs(f"{t.location}/ds=a") == ["x=2"] and os.listdir(f"{t.location}/ds=a/x=2") == [".not_the_tables"]
    env.sql("INSERT OVERWRITE TABLE ow PARTITION (ds='b') SELECT a, x FROM ow WHERE ds = 'b'")
    assert all_dirs(f"{t.location}/ds=b") == []
    assert rows(env.sql("SELECT a, x, ds FROM ow")) == got
    env.sql("CREATE TABLE owu (a INT, x INT) SKEWED BY (x) ON (1) STORED AS DIRECTORIES STORED AS ORC")
    env.sql("INSERT INTO owu VALUES (1, 1), (2, 2)")
    env.sql("ALTER TABLE owu SKEWED BY (x) ON (2) STORED AS DIRECTORIES")
    env.sql("INSERT OVERWRITE TABLE owu SELECT a, x FROM owu")  # unpartitioned: the same
    u = env.catalog.get_table("default", "owu")
    assert all_dirs(u.location) == [D, "x=2"]
    assert rows(env.sql("SELECT * FROM owu")) == rows(spark.read.option("recursiveFileLookup", "true")
                                                          .orc(u.location)) == [(1, 1), (2, 2)]


@pytest.mark.parametrize("fmt", ["PARQUET", "ORC", "TEXTFILE"])
def test_concatenate_merges_each_directory(env, spark, fmt):
    name = f"cc_{fmt.lower()}"
    env.sql(f"CREATE TABLE {name} (a INT, s STRING, x INT) PARTITIONED BY (ds STRING) "
            f"SKEWED BY (x) ON (1, 2) STORED AS DIRECTORIES STORED AS {fmt}")
    for i in range(3):
        env.sql(f"INSERT INTO {name} PARTITION (ds='1') VALUES ({i}, 'a\\tb', 1), "
                f"({i + 10}, '', 2), ({i + 20}, NULL, 3)")
    env.sql(f"INSERT INTO {name} PARTITION (ds='2') VALUES (99, 'z', 1)")
    t = env.catalog.get_table("default", name)
    before = rows(env.sql(f"SELECT * FROM {name}"))

    def count(d: str) -> int:
        return len([f for f in os.listdir(f"{t.location}/{d}") if not f.startswith(".")])

    assert count("ds=1/x=1") == 3
    env.sql(f"ALTER TABLE {name} PARTITION (ds='1') CONCATENATE")
    assert [count(f"ds=1/{d}") for d in ("x=1", "x=2", D)] == [1, 1, 1]
    assert count("ds=2/x=1") == 1
    assert rows(env.sql(f"SELECT * FROM {name}")) == before
    assert rows(env.sql(f"SELECT a FROM {name} WHERE x = 2")) == [(10,), (11,), (12,)]
    p = env.catalog.get_partition(t, ("1",))
    assert p.parameters["numFiles"] == "3" and p.parameters["numRows"] == "9"
    assert SKEW_LOCATIONS in p.parameters
    env.sql(f"ALTER TABLE {name} CONCATENATE")  # nothing left to merge: no change
    assert rows(env.sql(f"SELECT * FROM {name}")) == before


def test_concatenate_plain_and_unpartitioned_tables(env):
    env.sql("CREATE TABLE cp (a INT) STORED AS PARQUET")
    for i in range(3):
        env.sql(f"INSERT INTO cp VALUES ({i})")
    env.sql("ALTER TABLE cp CONCATENATE")
    t = env.catalog.get_table("default", "cp")
    assert len(json.loads(t.properties["hivepark.files"])) == 1
    assert t.properties["numRows"] == "3"
    assert rows(env.sql("SELECT * FROM cp")) == [(0,), (1,), (2,)]


# ---------------------------------------------------------------- skew that follows the data


def _task_of(file_name: str) -> int:
    """The write task that made a data file: Spark names it part-<task>-..."""
    return int(re.search(r"part-(\d+)-", file_name).group(1))


def _one_file_each(location: str, dirs: list[str]) -> set[int]:
    """The write tasks that wrote ``dirs`` (under ``location``), each directory holding one file."""
    tasks = set()
    for d in dirs:
        files = [f for f in os.listdir(os.path.join(location, d)) if not f.startswith((".", "_"))]
        assert len(files) == 1, d
        tasks.add(_task_of(files[0]))
    return tasks


@pytest.mark.parametrize("large", [False, True])
def test_a_small_dynamic_write_is_one_task_a_large_one_spreads_its_directories(env, spark, large, monkeypatch):
    # a dynamic write of an input Spark estimates small (200 rows) writes every directory of its two
    # partitions from one task; a large one (the threshold lowered) spreads them; one file each either way
    from hivepark.exec import write

    if large:
        monkeypatch.setattr(write, "SMALL_WRITE_BYTES", 0)
    name = f"dyn_spread_{int(large)}"
    env.sql(f"CREATE TABLE {name} (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2, 3) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    spark.sql("SELECT CAST(id AS INT) AS a, CAST(id % 5 AS INT) AS x, CONCAT('d', id % 2) AS ds "
              "FROM range(200)").createOrReplaceTempView(f"{name}_src")
    env.sql(f"INSERT OVERWRITE TABLE {name} PARTITION (ds) SELECT a, x, ds FROM {name}_src")
    t = env.catalog.get_table("default", name)
    dirs = data_dirs(t.location)
    assert dirs == sorted(f"ds=d{i}/{sub}" for i in range(2) for sub in (D, "x=1", "x=2", "x=3"))
    tasks = _one_file_each(t.location, dirs)
    assert len(tasks) > 1 if large else len(tasks) == 1, tasks
    assert rows(env.sql(f"SELECT a, x, ds FROM {name}")) == rows(spark.sql(f"SELECT * FROM {name}_src"))


def _spread_write(env, spark, name: str, partitions: int, rows: int, pernode: int
                  ) -> tuple[list[str], dict[int, set[str]]]:
    """A dynamic list-bucketed write of ``rows`` rows over ``partitions`` partitions under the
    pernode limit: its directories (one file each, checked) and each task's partitions."""
    env.sql(f"CREATE TABLE {name} (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2, 3) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    spark.sql(f"SELECT CAST(id AS INT) AS a, CAST(id % 5 AS INT) AS x, CONCAT('d', id % {partitions}) AS ds "
              f"FROM range({rows})").createOrReplaceTempView(f"{name}_src")
    env.sql(f"SET hive.exec.max.dynamic.partitions.pernode={pernode}")
    try:
        env.sql(f"INSERT OVERWRITE TABLE {name} PARTITION (ds) SELECT a, x, ds FROM {name}_src")
    finally:
        env.sql("SET hive.exec.max.dynamic.partitions.pernode=100")
    t = env.catalog.get_table("default", name)
    dirs = data_dirs(t.location)
    assert dirs == sorted(f"ds=d{i}/{sub}" for i in range(partitions) for sub in (D, "x=1", "x=2", "x=3"))
    tasks: dict[int, set[str]] = {}
    for d in dirs:
        files = [f for f in os.listdir(os.path.join(t.location, d)) if not f.startswith((".", "_"))]
        assert len(files) == 1, d
        tasks.setdefault(_task_of(files[0]), set()).add(d.split("/")[0])
    return dirs, tasks


def test_a_pernode_limit_of_one_never_fails_a_dynamic_list_bucketed_write(env, spark):
    """Found by a hunt for bugs: (partition, directory) hashes that met modulo every task count
    tried failed the statement with Hive's 20004 (README: the limit never fails one). Each
    partition's directories are then given one task of their own."""
    dirs, tasks = _spread_write(env, spark, "spread1", partitions=12, rows=240, pernode=1)
    assert max(len(parts) for parts in tasks.values()) == 1, tasks
    assert rows(env.sql("SELECT a, x, ds FROM spread1")) == rows(spark.sql("SELECT * FROM spread1_src"))


def test_a_dynamic_write_spreads_a_partitions_directories_over_tasks_within_the_pernode_limit(env, spark):
    # rows go to the write's tasks by (partition, directory): one file per directory still,
    # a partition's directories written by several tasks, and no task writes into more
    # partitions than hive.exec.max.dynamic.partitions.pernode allows
    dirs, tasks = _spread_write(env, spark, "spread", partitions=6, rows=600, pernode=2)
    spread = set()
    for part in {d.split("/")[0] for d in dirs}:
        spread.add(len({n for n, parts in tasks.items() if part in parts}) > 1)
    assert max(len(parts) for parts in tasks.values()) <= 2, tasks
    assert True in spread, tasks
    assert rows(env.sql("SELECT a, x, ds FROM spread")) == rows(spark.sql("SELECT * FROM spread_src"))
    for where in ("x = 2", "x = 4 AND ds = 'd3'", "x IN (1, 0)"):
        assert rows(env.sql(f"SELECT a, x, ds FROM spread WHERE {where}")) == \
            rows(spark.sql(f"SELECT * FROM spread_src WHERE {where}"))


@pytest.mark.parametrize("large", [False, True])
def test_a_static_partition_write_fills_its_directories_in_parallel(env, spark, large, monkeypatch):
    # one partition's directories are written by several tasks, each directory by one (one file);
    # an input Spark estimates small (700 rows: 5,600 bytes) by one task (large: as if it were not)
    from hivepark.exec import write

    n = 700 + large  # a table of its own for each case
    if large:
        monkeypatch.setattr(write, "SMALL_WRITE_BYTES", 0)
    env.sql(f"CREATE TABLE spread1_{n} (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2, 3, 4) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    spark.sql(f"SELECT CAST(id AS INT) AS a, CAST(id % 7 AS INT) AS x FROM range({n})") \
        .createOrReplaceTempView(f"spread1_src_{n}")
    env.sql(f"INSERT OVERWRITE TABLE spread1_{n} PARTITION (ds='d') SELECT a, x FROM spread1_src_{n}")
    t = env.catalog.get_table("default", f"spread1_{n}")
    dirs = data_dirs(t.location)
    assert dirs == sorted(f"ds=d/{sub}" for sub in (D, "x=1", "x=2", "x=3", "x=4"))
    tasks = _one_file_each(t.location, dirs)
    assert len(tasks) > 1 if large else len(tasks) == 1, tasks
    assert rows(env.sql(f"SELECT a, x FROM spread1_{n}")) == rows(spark.sql(f"SELECT * FROM spread1_src_{n}"))
    assert rows(env.sql(f"SELECT a, x FROM spread1_{n} WHERE x IN (2, 6)")) == \
        rows(spark.sql(f"SELECT * FROM spread1_src_{n} WHERE x IN (2, 6)"))


def test_created_files_limit_counts_the_list_bucketing_directories(env, spark):
    # each directory that gets rows is a file: 2 partitions x 3 directories = 6 files, over a
    # limit of 5 that the partitions alone (2) would pass; nothing is left on disk or recorded
    env.sql("CREATE TABLE lim (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2) "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    spark.sql("SELECT CAST(id AS INT) AS a, CAST(id % 4 AS INT) AS x, CONCAT('d', (id DIV 4) % 2) AS ds "
              "FROM range(40)").createOrReplaceTempView("lim_src")
    t = env.catalog.get_table("default", "lim")
    env.sql("SET hive.exec.max.created.files=5")
    try:
        with pytest.raises(LimitExceeded, match="total number of created files now is 6, which exceeds 5"):
            env.sql("INSERT OVERWRITE TABLE lim PARTITION (ds) SELECT a, x, ds FROM lim_src")
        with pytest.raises(LimitExceeded, match="total number of created files now is 3, which exceeds 2"):
            env.sql("SET hive.exec.max.created.files=2")
            env.sql("INSERT OVERWRITE TABLE lim PARTITION (ds='s') SELECT a, x FROM lim_src")
        assert env.catalog.list_partitions(t) == []
        assert data_dirs(t.location) == []
        assert [d for d in os.listdir(t.location) if d.startswith(".")] == []
        env.sql("SET hive.exec.max.created.files=6")
        env.sql("INSERT OVERWRITE TABLE lim PARTITION (ds) SELECT a, x, ds FROM lim_src")
    finally:
        env.sql("SET hive.exec.max.created.files=100000")
    assert len(data_dirs(t.location)) == 6
    assert rows(env.sql("SELECT a, x, ds FROM lim")) == rows(spark.sql("SELECT * FROM lim_src"))


def test_auto_topk_follows_the_data_per_partition(env, spark):
    env.sql("CREATE TABLE tk (a INT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (0) "
            "STORED AS DIRECTORIES STORED AS PARQUET "
            "TBLPROPERTIES ('hivepark.skew.auto.topk'='2')")
    spark.sql("SELECT CAST(id AS INT) AS a, CAST(CASE WHEN id % 2 = 0 THEN IF(id < 200, 7, 8) "
              "WHEN id % 3 = 0 THEN IF(id < 200, 5, 9) ELSE id END AS INT) AS x, "
              "IF(id < 200, 'd1', 'd2') AS ds FROM range(400)").createOrReplaceTempView("tk_src")
    env.sql("INSERT OVERWRITE TABLE tk PARTITION (ds) SELECT a, x, ds FROM tk_src")
    t = env.catalog.get_table("default", "tk")
    assert data_dirs(t.location) == [f"ds=d1/{D}", "ds=d1/x=5", "ds=d1/x=7",
                                     f"ds=d2/{D}", "ds=d2/x=8", "ds=d2/x=9"]
    assert layout_of(env, "tk", ("d1",)).values == (("7",), ("5",))
    assert layout_of(env, "tk", ("d2",)).values == (("8",), ("9",))
    for where, n in (("x = 7", "2/6"), ("x = 8", "2/6"), ("x IN (5, 9)", "4/6"),
                     ("x = 11", "2/6"), ("x IN (7, 8)", "4/6"), ("x = 7 AND ds = 'd1'", "1/3")):
        assert f"directories={n}" in env.explain(f"SELECT * FROM tk WHERE {where}"), where
        assert rows(env.sql(f"SELECT a, x, ds FROM tk WHERE {where}")) == \
            rows(spark.sql(f"SELECT * FROM tk_src WHERE {where}"))
    # a static write chooses its own heavy values too; an append keeps the partition's
    env.sql("INSERT OVERWRITE TABLE tk PARTITION (ds='d3') SELECT a, 4 - a % 3 FROM tk_src")
    assert layout_of(env, "tk", ("d3",)).values == (("4",), ("2",))  # 134 rows, then a tie
    env.sql("INSERT INTO tk PARTITION (ds='d3') SELECT a, 9 FROM tk_src WHERE a < 300")
    assert layout_of(env, "tk", ("d3",)).values == (("4",), ("2",))
    assert "directories=1/3" in env.explain("SELECT * FROM tk WHERE ds = 'd3' AND x = 9")
    assert env.sql("SELECT count(*) FROM tk WHERE ds = 'd3' AND x = 9").first()[0] == 300


def test_auto_topk_with_braces_and_spaces_in_names(env, spark):
    """The heaviest values are found by Spark SQL text: names that are format syntax (braces)
    or need quoting (a space, a comma) in the skewed column and the partition key still route rows."""
    env.sql("CREATE TABLE tkq (a INT, `x{0}, y` INT) PARTITIONED BY (`d{s}` STRING) "
            "SKEWED BY (`x{0}, y`) ON (0) STORED AS DIRECTORIES STORED AS PARQUET "
            "TBLPROPERTIES ('hivepark.skew.auto.topk'='1')")
    spark.sql("SELECT CAST(id AS INT) AS a, CAST(IF(id % 3 = 0, 4, id) AS INT) AS x, "
              "IF(id < 30, 'p', 'q') AS d FROM range(60)").createOrReplaceTempView("tkq_src")
    env.sql("INSERT OVERWRITE TABLE tkq PARTITION (`d{s}`) SELECT a, x, d FROM tkq_src")
    env.sql("INSERT OVERWRITE TABLE tkq PARTITION (`d{s}`='r') SELECT a, IF(a < 40, 7, a) FROM tkq_src")
    t = env.catalog.get_table("default", "tkq")
    assert [d for d in data_dirs(t.location) if D not in d] == \
        ["d%7Bs}=p/x%7B0}, y=4", "d%7Bs}=q/x%7B0}, y=4", "d%7Bs}=r/x%7B0}, y=7"]  # Hive escapes { alone
    assert rows(env.sql("SELECT * FROM tkq WHERE `x{0}, y` IN (4, 7)")) == rows(spark.sql(
        "SELECT * FROM (SELECT a, x, d FROM tkq_src UNION ALL SELECT a, IF(a < 40, 7, a), 'r' FROM tkq_src) "
        "WHERE x IN (4, 7)"))


def test_skewed_directories_that_cannot_be_made_or_found_are_refused_by_alter(env, spark):
    """ALTER ... SKEWED BY checks what CREATE checks: a hidden directory name and one too long for
    the file system; without STORED AS DIRECTORIES no directory is made, so the skew is kept."""
    env.sql("CREATE TABLE hs (a INT, `.k` INT, s STRING) STORED AS PARQUET")
    with pytest.raises(SemanticError, match=r"Skewed column name '\.k' starts with '\.'.*Rename the column"):
        env.sql("ALTER TABLE hs SKEWED BY (`.k`) ON (1) STORED AS DIRECTORIES")
    with pytest.raises(SemanticError, match=r"Skewed value 'xxx.*' for column s gives a directory name of 302 bytes"):
        env.sql(f"ALTER TABLE hs SKEWED BY (s) ON ('{'x' * 300}') STORED AS DIRECTORIES")
    assert "Skewed Columns:" not in described(env, "hs")
    env.sql("ALTER TABLE hs SKEWED BY (`.k`) ON (1)")
    env.sql("INSERT INTO hs VALUES (1, 1, 'a'), (2, 2, 'b')")
    assert data_dirs(env.catalog.get_table("default", "hs").location) == ["."]


def test_auto_topk_leaves_a_value_too_long_for_a_directory_name_in_the_default_directory(env, spark):
    """The heaviest value is longer than a file name can hold: auto top-K takes the next ones
    instead, and the write, dynamic or static, lands every row (it failed making the directory)."""
    env.sql("CREATE TABLE tkl (a INT, s STRING) PARTITIONED BY (ds STRING) SKEWED BY (s) ON ('x') "
            "STORED AS DIRECTORIES STORED AS PARQUET TBLPROPERTIES ('hivepark.skew.auto.topk'='2')")
    spark.sql("SELECT CAST(id AS INT) AS a, CASE WHEN id % 2 = 0 THEN repeat('b', 300) WHEN id % 3 = 0 "
              "THEN 'c/3' ELSE CAST(id % 5 AS STRING) END AS s, IF(id < 30, 'd1', 'd2') AS ds "
              "FROM range(60)").createOrReplaceTempView("tkl_src")
    env.sql("INSERT OVERWRITE TABLE tkl PARTITION (ds) SELECT a, s, ds FROM tkl_src")
    env.sql("INSERT OVERWRITE TABLE tkl PARTITION (ds='d3') SELECT a, s FROM tkl_src")
    t = env.catalog.get_table("default", "tkl")
    for ds in ("d1", "d2", "d3"):
        assert [v for v, in layout_of(env, "tkl", (ds,)).values][0] == "c/3"
        assert f"ds={ds}/{D}" in data_dirs(t.location) and f"ds={ds}/s=c%2F3" in data_dirs(t.location)
    want = rows(spark.sql("SELECT a, s, ds FROM tkl_src UNION ALL SELECT a, s, 'd3' FROM tkl_src"))
    assert rows(env.sql("SELECT a, s, ds FROM tkl")) == want
    plain = spark.read.option("recursiveFileLookup", "true").parquet(t.location)
    assert sorted((r.a, r.s) for r in plain.collect()) == sorted((a, s) for a, s, _ in want)


def test_auto_topk_never_puts_two_values_in_one_directory(env, spark):
    """'' and '__HIVE_DEFAULT_PARTITION__' both name the directory s=__HIVE_DEFAULT_PARTITION__ (as
    in Hive): when both are among the heaviest, the lighter one stays in the default directory.
    Chosen both, a dynamic write's two files of that directory took one name, one overwrote the
    other, and the survivor was recorded twice: rows of one value lost, of the other doubled."""
    env.sql("CREATE TABLE tke (a INT, s STRING) PARTITIONED BY (ds STRING) SKEWED BY (s) ON ('x') "
            "STORED AS DIRECTORIES STORED AS PARQUET TBLPROPERTIES ('hivepark.skew.auto.topk'='2')")
    spark.sql("SELECT CAST(id AS INT) AS a, IF(id < 60, element_at(array('', '__HIVE_DEFAULT_PARTITION__', 'x', 'y'), "
              "CAST(id % 4 + 1 AS INT)), 'z') AS s, 'd' AS ds FROM range(70)").createOrReplaceTempView("tke_src")
    env.sql("INSERT OVERWRITE TABLE tke PARTITION (ds) SELECT a, s, ds FROM tke_src")
    env.sql("INSERT OVERWRITE TABLE tke PARTITION (ds='e') SELECT a, s FROM tke_src")
    want = rows(spark.sql("SELECT a, s, ds FROM tke_src UNION ALL SELECT a, s, 'e' FROM tke_src"))
    assert rows(env.sql("SELECT a, s, ds FROM tke")) == want
    for ds in ("d", "e"):
        assert layout_of(env, "tke", (ds,)).values == (("",),)
    for v in ("", "__HIVE_DEFAULT_PARTITION__"):
        assert rows(env.sql(f"SELECT a, s, ds FROM tke WHERE s = '{v}'")) == [r for r in want if r[1] == v]
    location = env.catalog.get_table("default", "tke").location
    plain = spark.read.option("recursiveFileLookup", "true").parquet(location)
    assert sorted((r.a, r.s) for r in plain.collect()) == sorted((a, s) for a, s, _ in want)


def test_analyze_compute_skew(env, fact):
    out = env.sql("ANALYZE TABLE fact PARTITION (ds='2012-04-15') COMPUTE SKEW FOR COLUMNS x")
    got = out.collect()
    assert got[0]["partition"] == "ds=2012-04-15" and got[0]["rank"] == 1
    assert got[0]["skewed_value"] == "[NULL]"  # every 11th row has no x
    want = env.spark.sql("SELECT count(*) FROM lb_src WHERE ds = '2012-04-15' AND x IS NULL") \
        .first()[0]
    total = env.spark.sql("SELECT count(*) FROM lb_src WHERE ds = '2012-04-15'").first()[0]
    assert got[0]["num_rows"] == want and abs(got[0]["share"] - want / total) < 1e-4
    assert len(got) == 10
    out = env.sql("ANALYZE TABLE fact COMPUTE SKEW FOR COLUMNS x, b").collect()
    assert {r["partition"] for r in out} == {"ds=2012-04-15", "ds=2012-04-16"}
    want = env.spark.sql(  # the same figures by plain Spark SQL over the rows written
        "SELECT concat('ds=', ds), rank, concat('[', coalesce(string(x), 'NULL'), ', ', coalesce(b, 'NULL'), ']'), n, "
        "round(n / total, 4) FROM (SELECT ds, x, b, n, sum(n) OVER (PARTITION BY ds) AS total, "
        "row_number() OVER (PARTITION BY ds ORDER BY n DESC, x, b) AS rank "
        "FROM (SELECT ds, x, b, count(*) AS n FROM lb_src GROUP BY ds, x, b)) WHERE rank <= 10")
    assert sorted(tuple(r) for r in out) == sorted(tuple(r) for r in want.collect())
    with pytest.raises(SemanticError) as e:
        env.sql("ANALYZE TABLE fact COMPUTE SKEW FOR COLUMNS nope")
    assert e.value.code == 10203


# ---------------------------------------------------------------- property

PRED_ATOMS = st.one_of(
    st.builds(lambda v: f"x = {v}", st.sampled_from([6, 20, 30, 40, 7, 49])),
    st.builds(lambda vs: f"x IN ({', '.join(map(str, vs))})",
              st.lists(st.sampled_from([6, 20, 30, 7, 0]), min_size=1, max_size=3)),
    st.builds(lambda v: f"x <> {v}", st.sampled_from([6, 30])),
    st.builds(lambda v: f"x < {v}", st.sampled_from([10, 35])),
    st.just("x IS NULL"), st.just("x IS NOT NULL"),
    st.builds(lambda v: f"a > {v}", st.integers(0, 400)),
    st.builds(lambda v: f"ds = '2012-04-1{v}'", st.sampled_from([5, 6])),
)
PREDS = st.recursive(PRED_ATOMS, lambda sub: st.one_of(
    st.builds(lambda a, b: f"({a} AND {b})", sub, sub),
    st.builds(lambda a, b: f"({a} OR {b})", sub, sub),
    st.builds(lambda a: f"NOT ({a})", sub)), max_leaves=5)


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(PREDS)
def test_list_bucketing_pruning_never_loses_a_row(env, fact, where):
    assert rows(env.sql(f"SELECT * FROM fact WHERE {where}")) == \
        rows(env.spark.sql(f"SELECT * FROM lb_src WHERE {where}"))


def test_hostile_partition_values_read_right_from_list_bucketing_directories(wh, spark):
    """A list-bucketed partition is read by mapping each file's directory to its partition
    values (SQL text built from the values): quotes, backslashes, '%', '+' and spaces in a
    value come back exactly, as plain Spark reads the same files."""
    wh.sql("CREATE TABLE hv (x INT, y STRING) PARTITIONED BY (p STRING) SKEWED BY (x) ON (1) "
           "STORED AS DIRECTORIES STORED AS PARQUET")
    values = ["it's", "back\\slash", "50% + more", "new\nline", "a'b\\'c"]
    for i, v in enumerate(values):
        literal = v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
        wh.sql(f"INSERT INTO hv PARTITION (p='{literal}') VALUES (1, 'skewed{i}'), (2, 'other{i}')")
    got = sorted(tuple(r) for r in wh.sql("SELECT p, x, y FROM hv").collect())
    assert got == sorted((v, x, f"{'skewed' if x == 1 else 'other'}{i}") for i, v in enumerate(values)
                         for x in (1, 2))
    plain = spark.read.option("recursiveFileLookup", "true").parquet(f"{wh.location}/hv")
    assert sorted((r.x, r.y) for r in plain.collect()) == sorted((x, y) for _, x, y in got)
    literal = values[4].replace("\\", "\\\\").replace("'", "\\'")
    assert [r[0] for r in wh.sql(f"SELECT y FROM hv WHERE p = '{literal}' AND x = 1").collect()] == ["skewed4"]


def test_a_repeated_list_bucketing_scan_reuses_its_dataframe_until_a_commit(tmp_path, spark):
    """The same directories read again come from the DataFrame kept for them (no new view);
    a commit's rows are read at once; closing the warehouse drops the kept views."""
    import hivepark

    def frames() -> set[str]:
        return {t.name for t in spark.catalog.listTables() if t.name.startswith("__hivepark_frame_")}

    before = frames()
    wh = hivepark.connect(str(tmp_path / "wh"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    wh.sql("CREATE TABLE k (a INT, x INT) PARTITIONED BY (ds STRING) "
           "SKEWED BY (x) ON (6, 20) STORED AS DIRECTORIES STORED AS PARQUET")
    wh.sql("INSERT INTO k PARTITION (ds) SELECT a, x, ds FROM lb_src")
    spark.sql("SELECT a, x, ds FROM lb_src").createOrReplaceTempView("plain_k")
    for where in ("x = 20", "x IN (6, 21)", "x = 20"):
        for _ in range(2):
            assert rows(wh.sql(f"SELECT * FROM k WHERE {where}")) == \
                rows(spark.sql(f"SELECT * FROM plain_k WHERE {where}"))
    assert len(frames() - before) == 2  # one per set of directories read, not one per query
    wh.sql("INSERT INTO k PARTITION (ds) VALUES (1000, 20, '2012-04-15'), (1001, 21, '2012-04-20')")
    spark.sql("SELECT a, x, ds FROM lb_src UNION ALL VALUES (1000, 20, '2012-04-15'), "
              "(1001, 21, '2012-04-20')").createOrReplaceTempView("plain_k")
    for where in ("x = 20", "x IN (6, 21)"):
        got = rows(wh.sql(f"SELECT * FROM k WHERE {where}"))
        assert got == rows(spark.sql(f"SELECT * FROM plain_k WHERE {where}"))
        assert any(r[0] in (1000, 1001) for r in got)
    wh.close()
    assert frames() == before


@pytest.mark.parametrize("chosen", [None, ("x=6",), ("DEFAULT",), ()])
def test_plain_directories_give_the_files_the_general_resolution_gives(tmp_path, chosen):
    """A layout of plain relative directories (``x=6``) takes a fast path in the scan; the
    same directories written so that each must be resolved (``./x=6``, ``x=30/``) give the
    same files, and so do the files outside every directory (always read)."""
    from hivepark.catalog.skew import SkewLayout
    from hivepark.exec.scan import lb_paths

    part = tmp_path / "t" / "ds=1"
    names = ["x=6/a.parquet", "x=30/b.parquet", "DEFAULT/c.parquet", "stray.parquet"]
    for n in names:
        (part / n).parent.mkdir(parents=True, exist_ok=True)
        (part / n).write_bytes(b"")
    plain = SkewLayout(("x",), (("6",), ("30",)),
                       ((("6",), "x=6"), (("30",), "x=30"), (None, "DEFAULT")))
    spelled = {"x=6": "./x=6", "x=30": "x=30/", "DEFAULT": "x=6/../DEFAULT"}
    resolved = SkewLayout(plain.columns, plain.values,
                          tuple((k, spelled[loc]) for k, loc in plain.locations))
    want = None if chosen is None else tuple(spelled[c] for c in chosen)
    for recorded in (tuple(names), None):  # the commit's file list, or a listing
        fast = lb_paths(str(part), recorded, plain, chosen)
        general = lb_paths(str(part), recorded, resolved, want)
        assert sorted(fast) == sorted(general)
        expected = {"x=6/a.parquet", "x=30/b.parquet", "DEFAULT/c.parquet"} if chosen is None \
            else {n for n in names if n.split("/")[0] in chosen}
        assert sorted(fast) == sorted(f"{part}/{n}" for n in expected | {"stray.parquet"})


HOSTILE_DS = ["plain", "a b", "50%", "x/y=z", "é", "tab\tc", "a+b", "h#sh:q?"]


@pytest.mark.parametrize("by_path", ["path", "missed", "over the limit"])
def test_partition_values_of_list_bucketed_rows_by_file_path_and_by_directory(
        env, spark, monkeypatch, by_path):
    """A list-bucketed scan finds each row's partition values by its file's path as Spark
    gives it (``fs.spark_file_uri``) and, where that misses or a scan has more files than
    the lookup takes, by its directory: hostile values (escaped on disk, URI-quoted by Spark)
    read back the same every way, equal to plain Spark over the rows written."""
    from hivepark.exec import scan
    from hivepark.storage import fs

    name = f"hv_{by_path.replace(' ', '_')}"
    src = spark.createDataFrame([(i, i // 8 % 4, HOSTILE_DS[i % len(HOSTILE_DS)]) for i in range(160)],
                                "a int, x int, ds string")
    src.createOrReplaceTempView(f"{name}_src")
    env.sql(f"CREATE TABLE {name} (a INT, x INT) PARTITIONED BY (ds STRING) "
            "SKEWED BY (x) ON (1, 2) STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql(f"INSERT OVERWRITE TABLE {name} PARTITION (ds) SELECT a, x, ds FROM {name}_src")
    location = env.catalog.get_table("default", name).location
    files = [os.path.join(d, f) for d, _, fs_ in os.walk(location) for f in fs_
             if f.endswith(".parquet") and "/." not in d]
    seen = {r[0] for r in spark.read.parquet(*[fs.to_spark_path(f) for f in files])
            .selectExpr("_metadata.file_path").collect()}
    if by_path == "path":  # every file's path form is the one Spark gives (é included)
        assert {fs.spark_file_uri(f) for f in files} == seen
    elif by_path == "missed":  # no file found by its path: every row by its directory
        monkeypatch.setattr(fs, "spark_file_uri", lambda path: "missing:" + path)
    else:  # no lookup by path at all
        monkeypatch.setattr(scan, "BY_FILE_PATH_MAX", 0)
    query = "SELECT ds, x, count(*), sum(a) FROM {} WHERE x IN (1, 3) GROUP BY ds, x"
    assert rows(env.sql(query.format(name))) == rows(spark.sql(query.format(f"{name}_src")))
    assert len(rows(env.sql(query.format(name)))) == 2 * len(HOSTILE_DS)


@pytest.fixture(scope="module")
def floats(env, spark):
    """sd SKEWED BY (x DOUBLE) and sf SKEWED BY (y FLOAT), both ON (1.1, 2.5), the same rows;
    dd(k DECIMAL(5,1)) a small side; each read by plain Spark from its files as ``plain_*``."""
    for name, col in (("sd", "x"), ("sf", "y")):
        env.sql(f"CREATE TABLE {name} (a INT, x DOUBLE, y FLOAT) SKEWED BY ({col}) ON (1.1, 2.5) "
                "STORED AS DIRECTORIES STORED AS PARQUET")
        env.sql(f"INSERT INTO {name} VALUES (1, 1.1, 1.1), (2, 2.5, 2.5), (3, 3.3, 3.3), (4, NULL, NULL)")
    env.sql("CREATE TABLE dd (k DECIMAL(5,1)) STORED AS PARQUET")
    env.sql("INSERT INTO dd VALUES (1.1), (2.5), (7.0)")
    for name, schema in (("sd", "a int, x double, y float"), ("sf", "a int, x double, y float"),
                         ("dd", "k decimal(5,1)")):
        spark.read.schema(schema).option("recursiveFileLookup", "true") \
            .parquet(env.catalog.get_table("default", name).location) \
            .createOrReplaceTempView(f"plain_{name}")
    return env


@pytest.mark.parametrize("where", [
    "x = 1.1", "x IN (1.1, 3.3)", "x = 2.5", "x <> 1.1", "x = 1.1e0", "x = '1.1'", "x = 11/10",
    "x IN (1.1, 2.5)", "y = 1.1", "y = 2.5", "y IN (1.1, 2.5)", "y = CAST(1.1 AS FLOAT)",
    "y = 1.10000002384185791015625", "y = 1.1000000238418579", "y = 1.1e0",
    "x = 1.10000000000000000001",
])
def test_skewed_floating_point_columns_compare_decimal_literals_as_double(floats, spark, where):
    """A decimal literal (``1.1``) against a DOUBLE or FLOAT column compares as DOUBLE in
    Spark, so ``x = 1.1`` reads the directory of the skewed value 1.1 (it read none)."""
    for name in ("sd", "sf"):
        assert rows(floats.sql(f"SELECT a FROM {name} WHERE {where}")) == \
            rows(spark.sql(f"SELECT a FROM plain_{name} WHERE {where}")), (name, where)


@pytest.mark.parametrize("col", ["x", "y"])
def test_map_join_decimal_keys_choose_double_skewed_directories(floats, spark, col):
    """A DECIMAL small side joined with a skewed DOUBLE (FLOAT) column: its values choose
    the directories as Spark compares them, as DOUBLE."""
    for name in ("sd", "sf"):
        sql = f"SELECT f.a, d.k FROM {name} f JOIN dd d ON f.{col} = d.k"
        assert rows(floats.sql(sql)) == rows(spark.sql(sql.replace(f"{name} f", f"plain_{name} f")
                                                       .replace("dd d", "plain_dd d"))), sql


TEMPORAL_SKEW = [
    ("TIMESTAMP", "('2024-01-01 10:00:00', '2024-01-03 00:00:00.5')",
     "TIMESTAMP'2024-01-01 10:00:00', TIMESTAMP'2024-01-02 10:00:00', "
     "TIMESTAMP'2024-01-03 00:00:00.5'",
     ["v = TIMESTAMP'2024-01-01 10:00:00'", "v = '2024-01-01 10:00:00'",
      "v IN (TIMESTAMP'2024-01-01 10:00:00', TIMESTAMP'2024-01-02 10:00:00')",
      "v = TIMESTAMP'2024-01-03 00:00:00.5'", "v = '2024-01-03 00:00:00.500'",
      "v IN ('2024-01-03 00:00:00.5')", "v >= '2024-01-01 00:00:00'",
      "v <> TIMESTAMP'2024-01-02 10:00:00'", "v = TIMESTAMP'2024-01-02 10:00:00'"]),
    ("DATE", "('2024-01-01', '2024-01-03')", "DATE'2024-01-01', DATE'2024-01-02', DATE'2024-01-03'",
     ["v = DATE'2024-01-01'", "v = '2024-01-01'", "v IN ('2024-01-01', '2024-01-02')",
      "v <> DATE'2024-01-03'", "v = DATE'2024-01-02'"]),
    ("DECIMAL(6,2)", "(1.5, 2.25)", "1.5, 2.00, 2.25",
     ["v = 1.5", "v = 1.50", "v IN (1.5, 2)", "v = 2.25", "v = 2", "v <> 1.5", "v = '1.5'"]),
    ("BOOLEAN", "(true)", "true, false, true", ["v = true", "v", "NOT v", "v IN (false)", "v = false"]),
]


@pytest.mark.parametrize("typ, skew, values, wheres", TEMPORAL_SKEW, ids=[t[0] for t in TEMPORAL_SKEW])
def test_skewed_columns_of_every_scalar_type_match_plain_spark(env, spark, typ, skew, values, wheres):
    """A skewed TIMESTAMP column's directories are compared with TIMESTAMP literals and
    timestamp strings as timestamps (``ts = TIMESTAMP '...'`` read no directory); DATE,
    DECIMAL and BOOLEAN skew as Spark compares them too."""
    name = "sk_" + typ.split("(")[0].lower()
    env.sql(f"CREATE TABLE {name} (a INT, v {typ}) SKEWED BY (v) ON {skew} "
            "STORED AS DIRECTORIES STORED AS PARQUET")
    env.sql(f"INSERT INTO {name} SELECT pos + 1, v FROM (SELECT posexplode(array({values})) AS (pos, v)) "
            "UNION ALL SELECT 9, NULL")
    spark.read.schema(f"a int, v {typ}").option("recursiveFileLookup", "true") \
        .parquet(env.catalog.get_table("default", name).location) \
        .createOrReplaceTempView(f"plain_{name}")
    assert len(rows(env.sql(f"SELECT a FROM {name}"))) == 4
    for where in wheres:
        assert rows(env.sql(f"SELECT a FROM {name} WHERE {where}")) == \
            rows(spark.sql(f"SELECT a FROM plain_{name} WHERE {where}")), where
    # a map-join small side's values choose the directories as the literals do
    env.sql(f"CREATE TABLE {name}_d (v {typ}) STORED AS PARQUET")
    env.sql(f"INSERT INTO {name}_d SELECT v FROM {name} WHERE a IN (1, 2)")
    spark.read.schema(f"v {typ}").parquet(env.catalog.get_table("default", f"{name}_d").location) \
        .createOrReplaceTempView(f"plain_{name}_d")
    join = "SELECT f.a FROM {0} f JOIN {0}_d d ON f.v = d.v"
    got = rows(env.sql(join.format(name)))
    assert got == rows(spark.sql(join.format(f"plain_{name}"))) and (1,) in got and (2,) in got
