"""Bad input: every user mistake raises a HiveParkError that names the problem and the fix,
and leaves nothing behind (no half-created table, partition, directory or staging files).
Hostile partition values end up in a correctly escaped directory inside the table."""

from __future__ import annotations

import os
import re

import pytest

import hivepark
from hivepark.errors import (
    AlreadyExistsError,
    HiveParkError,
    InvalidPartitionSpec,
    NoSuchDatabase,
    NoSuchPartition,
    NoSuchTable,
    ParseError,
    SemanticError,
    UnsupportedError,
    UserInputError,
)
from hivepark.layout import make_part_name

HOSTILE = [
    "../x", "a/b", "..", ".", "%", "%2F", "x\ny", "q'x", 'q"x', "back\\slash", "a=b:c",
    "*?[]{}^#", "ünï ✓ 😀", " lead space", "é" * 126,  # 254 bytes with "p=": just fits
]
HOSTILE_IDS = ["dotdot-slash", "slash", "dotdot", "dot", "percent", "escaped-slash", "newline",
               "single-quote", "double-quote", "backslash", "equals-colon", "glob-chars",
               "unicode", "leading-space", "254-bytes"]
TOO_LONG = "x" * 4096


def _lit(value: str) -> str:
    """A HiveQL string literal for ``value``."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def _col(df, i: int = 0) -> list:
    return [r[i] for r in df.collect()]


def _rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _show(wh, table: str) -> list[str]:
    return _col(wh.sql(f"SHOW PARTITIONS {table}"))


def _parts(wh, table: str) -> list[str]:
    """The partitions the metastore knows, by name (SHOW PARTITIONS without a Spark job)."""
    t = wh.catalog.get_table("default", table)
    return [make_part_name(t.partition_key_names(), p.values)
            for p in wh.catalog.list_partitions(t)]


def _tree(path: str) -> list[str]:
    """Every file and directory under ``path``, hidden ones included."""
    out: list[str] = []
    for d, dirs, files in os.walk(path):
        out += [os.path.relpath(os.path.join(d, x), path) for x in dirs + files]
    return sorted(out)


def _journal(wh) -> list[str]:
    return _tree(os.path.join(wh.location, ".hivepark", "journal"))


def _inside(parent: str, child: str) -> bool:
    parent, child = os.path.realpath(parent), os.path.realpath(child)
    return os.path.commonpath([parent, child]) == parent and child != parent


@pytest.fixture(scope="module")
def bad(tmp_path_factory, spark):
    """One warehouse: ``pt`` gets one static INSERT per hostile value, ``dyn`` the same values
    through one dynamic-partition write; ``t2`` (n INT, s STRING) and ``flat`` for the rest."""
    root = tmp_path_factory.mktemp("bad_input")
    wh = hivepark.connect(str(root / "warehouse"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    wh.sql("CREATE TABLE pt (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
    for i, value in enumerate(HOSTILE):
        wh.sql(f"INSERT INTO pt PARTITION (p={_lit(value)}) VALUES ({i}, 'v{i}')")
    wh.sql("CREATE TABLE dyn (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    wh.insert(spark.createDataFrame(list(enumerate(HOSTILE)), "a int, p string"), "dyn",
              partition={"p": None})
    wh.sql("CREATE TABLE ap (a INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    wh.sql("CREATE TABLE t2 (a INT) PARTITIONED BY (n INT, s STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO t2 PARTITION (n=1, s='ok') VALUES (1)")
    wh.sql("CREATE TABLE flat (a INT) STORED AS PARQUET")
    wh.shown = _show(wh, "pt")
    wh.scanned = {r["a"]: r["p"] for r in wh.sql("SELECT a, p FROM pt").collect()}
    wh.scanned_dyn = {r["a"]: r["p"] for r in wh.sql("SELECT a, p FROM dyn").collect()}
    wh.source = root / "load.txt"
    wh.source.write_text("1\n")
    yield wh
    wh.close()


def _loc(wh, table: str) -> str:
    return os.path.join(wh.location, table)


# ---------------------------------------------------------------------------------------
# hostile partition values


@pytest.mark.parametrize("value", HOSTILE, ids=HOSTILE_IDS)
def test_hostile_value_via_insert(bad, value):
    i = HOSTILE.index(value)
    loc = _loc(bad, "pt")
    name = make_part_name(["p"], [value])
    directory = os.path.join(loc, name)
    assert "/" not in name and name not in (".", "..")
    assert os.path.isdir(directory)
    assert _inside(loc, directory) and os.path.dirname(os.path.realpath(directory)) == \
        os.path.realpath(loc)
    assert [f for f in os.listdir(directory) if f.endswith(".parquet")]
    assert name in bad.shown
    assert _col(bad.sql(f"SHOW PARTITIONS pt PARTITION (p={_lit(value)})")) == [name]
    assert bad.scanned[i] == value
    assert "partitions=1/" in bad.explain(f"SELECT a FROM pt WHERE p = {_lit(value)}")


def test_hostile_values_read_back_exactly_and_match_plain_spark(bad, spark):
    loc = _loc(bad, "pt")
    assert sorted(os.listdir(loc)) == sorted(make_part_name(["p"], [v]) for v in HOSTILE)
    assert sorted(bad.shown) == sorted(make_part_name(["p"], [v]) for v in HOSTILE)
    lits = ", ".join(_lit(v) for v in HOSTILE)
    ours = bad.sql(f"SELECT a, b, p FROM pt WHERE p IN ({lits})")
    assert _rows(ours) == sorted(((i, f"v{i}", v) for i, v in enumerate(HOSTILE)), key=repr)
    uri = "file://" + loc
    plain = spark.read.schema("a int, b string, p string").option("basePath", uri).parquet(uri)
    assert _rows(ours) == _rows(plain)


def test_hostile_values_via_dynamic_partitions(bad):
    loc = _loc(bad, "dyn")
    assert sorted(os.listdir(loc)) == sorted(make_part_name(["p"], [v]) for v in HOSTILE)
    assert sorted(_show(bad, "dyn")) == sorted(make_part_name(["p"], [v]) for v in HOSTILE)
    assert bad.scanned_dyn == dict(enumerate(HOSTILE))


@pytest.mark.parametrize("value", HOSTILE, ids=HOSTILE_IDS)
def test_hostile_value_via_add_partition(bad, value):
    loc = _loc(bad, "ap")
    name = make_part_name(["p"], [value])
    bad.sql(f"ALTER TABLE ap ADD PARTITION (p={_lit(value)})")
    directory = os.path.join(loc, name)
    assert os.path.isdir(directory) and _inside(loc, directory)
    assert os.path.dirname(os.path.realpath(directory)) == os.path.realpath(loc)
    assert _col(bad.sql(f"SHOW PARTITIONS ap PARTITION (p={_lit(value)})")) == [name]
    desc = {r[0]: r[1] for r in bad.sql(
        f"DESCRIBE FORMATTED ap PARTITION (p={_lit(value)})").collect()}
    assert desc["Partition Value:"] == f"[{value}]"
    assert desc["Location:"] == directory
    with pytest.raises(AlreadyExistsError, match="IF NOT EXISTS"):
        bad.sql(f"ALTER TABLE ap ADD PARTITION (p={_lit(value)})")
    bad.sql(f"ALTER TABLE ap ADD IF NOT EXISTS PARTITION (p={_lit(value)})")
    assert _parts(bad, "ap").count(name) == 1
    bad.sql(f"ALTER TABLE ap DROP PARTITION (p={_lit(value)})")
    assert not os.path.exists(directory) and name not in _parts(bad, "ap")
    assert os.path.isdir(loc)


@pytest.mark.parametrize("value", [TOO_LONG, "é" * 128], ids=["4KB", "256-bytes-utf8"])
def test_too_long_value_is_a_clear_error_and_leaves_nothing(bad, value):
    before_pt, before_ap = _tree(_loc(bad, "pt")), _tree(_loc(bad, "ap"))
    parts_pt = _parts(bad, "pt")
    with pytest.raises(UserInputError, match=r"more than the file-system limit of 255") as e:
        bad.sql(f"INSERT INTO pt PARTITION (p={_lit(value)}) VALUES (1, 'x')")
    assert "shorter value" in str(e.value) and "'p'" in str(e.value)
    with pytest.raises(UserInputError, match="255"):
        bad.sql(f"ALTER TABLE ap ADD PARTITION (p={_lit(value)})")
    # a valid partition in the same statement is not added either
    with pytest.raises(UserInputError, match="255"):
        bad.sql(f"ALTER TABLE ap ADD PARTITION (p='fine') PARTITION (p={_lit(value)})")
    assert _parts(bad, "pt") == parts_pt
    assert _show(bad, "ap") == []
    assert _tree(_loc(bad, "pt")) == before_pt
    assert _tree(_loc(bad, "ap")) == before_ap
    assert _journal(bad) == []


def test_too_long_dynamic_value_is_a_clear_error(bad, spark):
    before = _tree(_loc(bad, "dyn"))
    with pytest.raises(UserInputError, match="255"):
        bad.insert(spark.createDataFrame([(1, TOO_LONG)], "a int, p string"), "dyn",
                   partition={"p": None})
    assert _tree(_loc(bad, "dyn")) == before
    assert _journal(bad) == []


def test_partition_path_longer_than_the_file_system_takes_is_a_clear_error(bad):
    """20 levels of 240-byte values: each name fits, the whole path (about 5,000 bytes) does not.
    Hadoop says only "Mkdirs failed" (which read as a missing permission), pyarrow "[Errno 36]"
    with the whole path; the user is told the path is too long and what to shorten, and nothing
    is left behind."""
    keys = [f"p{i}" for i in range(20)]
    bad.sql(f"CREATE TABLE deep (a INT) PARTITIONED BY ({', '.join(k + ' STRING' for k in keys)}) STORED AS PARQUET")
    static = ", ".join(f"{k}='{'y' * 240}'" for k in keys)
    for stmt in (f"INSERT INTO deep PARTITION ({', '.join(keys)}) SELECT 1, "
                 + ", ".join(f"repeat('x', 240) AS {k}" for k in keys),
                 f"INSERT INTO deep PARTITION ({static}) SELECT 1",
                 f"ALTER TABLE deep ADD PARTITION ({static})"):
        with pytest.raises(UserInputError, match=r"^Cannot create a directory whose path is [\d,]+ bytes long, more "
                                                  r"than the file system's limit of 4,096 bytes for a whole path") as e:
            bad.sql(stmt)
        assert "shorter partition values" in str(e.value) and "No permission" not in str(e.value)
        assert len(str(e.value)) < 800  # not the whole path
        assert _parts(bad, "deep") == [] and _tree(_loc(bad, "deep")) == []
        assert _journal(bad) == []
    bad.sql("DROP TABLE deep")


def test_duplicate_partition_in_one_statement_adds_nothing(bad):
    with pytest.raises(AlreadyExistsError, match="IF NOT EXISTS"):
        bad.sql("ALTER TABLE ap ADD PARTITION (p='dup') PARTITION (p='dup')")
    assert "p=dup" not in _parts(bad, "ap")
    assert not os.path.exists(os.path.join(_loc(bad, "ap"), "p=dup"))


def test_duplicate_partition_added_twice(bad):
    bad.sql("ALTER TABLE t2 ADD PARTITION (n=7, s='twice')")
    with pytest.raises(AlreadyExistsError) as e:
        bad.sql("ALTER TABLE t2 ADD PARTITION (n=7, s='twice')")
    assert "n=7/s=twice" in str(e.value) and "IF NOT EXISTS" in str(e.value)
    # 07 is the same int partition as 7
    with pytest.raises(AlreadyExistsError):
        bad.sql("ALTER TABLE t2 ADD PARTITION (n='07', s='twice')")
    assert _parts(bad, "t2").count("n=7/s=twice") == 1
    bad.sql("ALTER TABLE t2 DROP PARTITION (n=7, s='twice')")


# ---------------------------------------------------------------------------------------
# failing writes leave nothing behind


def _assert_untouched(bad, table: str, tree_before: list[str], parts_before: list[str]) -> None:
    assert _parts(bad, table) == parts_before
    assert _tree(_loc(bad, table)) == tree_before
    assert not any(".hive-staging" in p for p in _tree(_loc(bad, table)))
    assert _journal(bad) == []


def test_failing_insert_leaves_no_partition_files_or_staging(bad):
    tree, parts = _tree(_loc(bad, "t2")), _parts(bad, "t2")
    with pytest.raises(HiveParkError) as e:
        bad.sql("INSERT INTO t2 PARTITION (n=2, s='new') VALUES ('abc')")
    assert "'abc'" in str(e.value) and "INT" in str(e.value)
    _assert_untouched(bad, "t2", tree, parts)
    assert not os.path.exists(os.path.join(_loc(bad, "t2"), "n=2"))
    # into an existing partition: its rows stay as they were
    with pytest.raises(HiveParkError):
        bad.sql("INSERT OVERWRITE TABLE t2 PARTITION (n=1, s='ok') VALUES ('abc')")
    _assert_untouched(bad, "t2", tree, parts)
    assert _rows(bad.sql("SELECT * FROM t2")) == [(1, 1, "ok")]


def test_wrong_type_values_is_an_input_error(bad):
    with pytest.raises(UserInputError):
        bad.sql("INSERT INTO t2 PARTITION (n=2, s='new') VALUES ('abc')")


def test_uncastable_values_is_a_hivepark_error(bad):
    tree, parts = _tree(_loc(bad, "t2")), _parts(bad, "t2")
    with pytest.raises(HiveParkError, match="(?i)array"):
        bad.sql("INSERT INTO t2 PARTITION (n=2, s='new') VALUES (array(1))")
    _assert_untouched(bad, "t2", tree, parts)


@pytest.mark.parametrize("stmt,words", [
    ("INSERT INTO cx PARTITION (d='2024-01-01') SELECT NULL, named_struct('x', 1)",
     "column 2 of the query is struct<x:int>, which cannot be converted to s struct<x:bigint,y:date>"),
    ("INSERT INTO cx PARTITION (d) SELECT NULL, NULL, 20240105",
     "column 3 of the query is int, which cannot be converted to d date"),
    ("INSERT OVERWRITE TABLE cx PARTITION (d) SELECT 'x', NULL, '2024-01-01'",
     "column 1 of the query is string, which cannot be converted to a array<bigint>"),
])
def test_a_query_column_spark_cannot_cast_names_the_target_column(bad, spark, stmt, words):
    """Hive's 10044 naming the query's column, its type and the column it goes to, nothing
    written: the error named hivepark's own alias (``Cannot resolve "_hp_col1"``) and said to
    check the column and table names."""
    bad.sql("CREATE TABLE IF NOT EXISTS cx (a ARRAY<BIGINT>, s STRUCT<x:BIGINT, y:DATE>) PARTITIONED BY (d DATE) "
            "STORED AS PARQUET")
    try:
        tree, parts = _tree(_loc(bad, "cx")), _parts(bad, "cx")
        with pytest.raises(SemanticError) as e:
            bad.sql(stmt)
        assert e.value.code == 10044 and words in str(e.value) and "_hp_col" not in str(e.value), str(e.value)
        with pytest.raises(SemanticError, match="column 3 of the query is boolean, which cannot be converted to d "):
            bad.insert(spark.createDataFrame([([1], None, True)], "a array<bigint>, s struct<x:bigint,y:date>, "
                                             "d boolean"), "cx", partition={"d": None})
        _assert_untouched(bad, "cx", tree, parts)
    finally:
        bad.sql("DROP TABLE cx")  # the module's other tests list its tables


@pytest.mark.parametrize("values,given", [("(1, 2)", 2), ("(1, 2, 3)", 3)])
def test_values_of_wrong_arity(bad, values, given):
    tree, parts = _tree(_loc(bad, "t2")), _parts(bad, "t2")
    with pytest.raises(SemanticError, match=f"has 1 columns, but query has {given} columns"):
        bad.sql(f"INSERT INTO t2 PARTITION (n=2, s='new') VALUES {values}")
    _assert_untouched(bad, "t2", tree, parts)


def test_insert_select_unknown_column_writes_nothing(bad):
    tree, parts = _tree(_loc(bad, "t2")), _parts(bad, "t2")
    with pytest.raises(SemanticError, match="nope"):
        bad.sql("INSERT INTO t2 PARTITION (n=3, s='x') SELECT nope FROM flat")
    _assert_untouched(bad, "t2", tree, parts)


# ---------------------------------------------------------------------------------------
# PARTITION specs


@pytest.mark.parametrize("stmt", [
    "INSERT INTO t2 PARTITION (n=1, zz='x') VALUES (1)",
    "INSERT INTO t2 PARTITION (n=1, s='x', zz='y') VALUES (1)",
    "ALTER TABLE t2 ADD PARTITION (n=1, zz='x')",
    "ALTER TABLE t2 DROP PARTITION (zz='x')",
    "SHOW PARTITIONS t2 PARTITION (zz='x')",
    "DESCRIBE t2 PARTITION (n=1, zz='x')",
    "LOAD DATA LOCAL INPATH '{src}' INTO TABLE t2 PARTITION (n=1, zz='x')",
])
def test_partition_spec_naming_a_non_partition_column(bad, stmt):
    tree = _tree(_loc(bad, "t2"))
    with pytest.raises(InvalidPartitionSpec) as e:
        bad.sql(stmt.format(src=bad.source))
    assert "zz" in str(e.value) and "non-partition column" in str(e.value)
    assert "n, s" in str(e.value)  # the fix: the real partition columns
    assert _tree(_loc(bad, "t2")) == tree


def test_data_column_in_partition_spec(bad):
    with pytest.raises(InvalidPartitionSpec, match="non-partition columns"):
        bad.sql("ALTER TABLE t2 ADD PARTITION (n=1, s='x', a=1)")


@pytest.mark.parametrize("stmt,missing", [
    ("ALTER TABLE t2 ADD PARTITION (n=1)", "s"),
    ("ALTER TABLE t2 ADD PARTITION (s='x')", "n"),
    ("DESCRIBE t2 PARTITION (n=1)", "s"),
    ("LOAD DATA LOCAL INPATH '{src}' INTO TABLE t2 PARTITION (n=1)", "s"),
    ("LOAD DATA LOCAL INPATH '{src}' INTO TABLE t2", "n, s"),
])
def test_partition_spec_missing_a_column(bad, stmt, missing):
    tree, parts = _tree(_loc(bad, "t2")), _parts(bad, "t2")
    with pytest.raises(InvalidPartitionSpec) as e:
        bad.sql(stmt.format(src=bad.source))
    assert f"missing: {missing}" in str(e.value)
    assert "every partition column (n, s)" in str(e.value)
    assert _tree(_loc(bad, "t2")) == tree and _parts(bad, "t2") == parts
    assert bad.source.exists()


def test_insert_partition_spec_missing_a_column(bad):
    with pytest.raises(SemanticError) as e:
        bad.sql("INSERT INTO t2 PARTITION (n=1) VALUES (1)")
    assert "table schema are: (n, s)" in str(e.value) and "query are: (n)" in str(e.value)


def test_partition_value_of_wrong_type(bad):
    with pytest.raises(InvalidPartitionSpec) as e:
        bad.sql("INSERT INTO t2 PARTITION (n='abc', s='x') VALUES (1)")
    assert "'abc'" in str(e.value) and "int" in str(e.value) and "PARTITION (n=1)" in str(e.value)
    with pytest.raises(InvalidPartitionSpec, match="'1.5'"):
        bad.sql("ALTER TABLE t2 ADD PARTITION (n='1.5', s='x')")


@pytest.mark.parametrize("stmt", [
    "INSERT INTO flat PARTITION (p='x') VALUES (1)",
    "ALTER TABLE flat ADD PARTITION (p='x')",
    "ALTER TABLE flat DROP PARTITION (p='x')",
    "SHOW PARTITIONS flat",
    "LOAD DATA LOCAL INPATH '{src}' INTO TABLE flat PARTITION (p='x')",
])
def test_partition_clause_on_unpartitioned_table(bad, stmt):
    with pytest.raises(UserInputError, match="not (a )?partitioned"):
        bad.sql(stmt.format(src=bad.source))
    assert _tree(_loc(bad, "flat")) == []


def test_partition_value_must_be_constant(bad):
    with pytest.raises(InvalidPartitionSpec, match="constant"):
        bad.sql("ALTER TABLE t2 ADD PARTITION (n=1+1, s='x')")


# ---------------------------------------------------------------------------------------
# unknown database, table, column


@pytest.mark.parametrize("stmt", [
    "USE nodb",
    "SELECT * FROM nodb.t",
    "CREATE TABLE nodb.t (a INT)",
    "SHOW TABLES IN nodb",
    "DROP DATABASE nodb",
    "ALTER TABLE flat RENAME TO nodb.flat",
    "INSERT INTO nodb.t VALUES (1)",
])
def test_unknown_database(bad, stmt):
    with pytest.raises(NoSuchDatabase) as e:
        bad.sql(stmt)
    assert "nodb" in str(e.value) and "CREATE DATABASE" in str(e.value)
    assert not os.path.exists(os.path.join(bad.location, "nodb.db"))
    assert bad.current_database == "default"
    assert os.path.isdir(_loc(bad, "flat"))


@pytest.mark.parametrize("stmt", [
    "SELECT * FROM nosuch",
    "SELECT f.a FROM flat f JOIN nosuch n ON f.a = n.a",
    "INSERT INTO nosuch VALUES (1)",
    "INSERT INTO flat SELECT * FROM nosuch",
    "DESCRIBE nosuch",
    "DESCRIBE FORMATTED nosuch",
    "ALTER TABLE nosuch ADD PARTITION (p=1)",
    "ALTER TABLE nosuch RENAME TO other",
    "SHOW PARTITIONS nosuch",
    "MSCK REPAIR TABLE nosuch",
    "LOAD DATA LOCAL INPATH '{src}' INTO TABLE nosuch",
    "CREATE TABLE cl LIKE nosuch",
    "EXPLAIN SELECT * FROM nosuch",
])
def test_unknown_table(bad, stmt):
    with pytest.raises(NoSuchTable) as e:
        bad.sql(stmt.format(src=bad.source))
    assert "nosuch" in str(e.value) and "SHOW TABLES" in str(e.value)
    assert not os.path.exists(_loc(bad, "cl")) and not os.path.exists(_loc(bad, "nosuch"))
    assert bad.source.exists()


def test_drop_table_of_a_missing_table_follows_hive_exec_drop_ignorenonexistent(bad):
    bad.sql("DROP TABLE nosuch")  # Hive's default: true
    bad.sql("SET hive.exec.drop.ignorenonexistent=false")
    with pytest.raises(NoSuchTable, match="nosuch"):
        bad.sql("DROP TABLE nosuch")
    bad.sql("SET hive.exec.drop.ignorenonexistent=true")


def test_drop_if_exists_of_unknown_objects_is_silent(bad):
    bad.sql("DROP TABLE IF EXISTS nosuch")
    bad.sql("DROP DATABASE IF EXISTS nodb")
    bad.sql("ALTER TABLE t2 DROP IF EXISTS PARTITION (n=99, s='none')")


@pytest.mark.parametrize("stmt", [
    "SELECT nope FROM flat",
    "SELECT a FROM flat WHERE nope = 1",
    "SELECT f.nope FROM flat f",
    "SELECT a, count(*) FROM t2 GROUP BY nope",
    "SELECT * FROM t2 WHERE n = 1 AND nope IS NULL",
])
def test_unknown_column(bad, stmt):
    with pytest.raises(SemanticError) as e:
        bad.sql(stmt).collect()
    assert "nope" in str(e.value) and "Check the column" in str(e.value)
    assert "\tat " not in str(e.value)


# ---------------------------------------------------------------------------------------
# syntax errors carry line and column


@pytest.mark.parametrize("text,line,col", [
    ("SELECT *\nFROM flat WHERE (", 2, 17),
    ("SELECT * FROM\n  flat WHERE a = = 1", 2, 18),
    ("CREATE TABLE (a INT)", 1, 14),
    ("SELECT 1;\n\nCREATE TABLE (a INT)", 3, 14),
    ("SELECT 1;\n\nSELECT 'unterminated", 3, 8),
    ("SELECT a\n  FROM `flat", 2, 8),
])
def test_syntax_error_shows_line_and_column(bad, text, line, col):
    with pytest.raises(ParseError) as e:
        bad.sql_script(text)
    assert (e.value.line, e.value.column) == (line, col)
    assert str(e.value).startswith(f"ParseException line {line}:{col} ")
    assert isinstance(e.value, ValueError)


def test_script_with_syntax_error_runs_nothing(bad):
    with pytest.raises(ParseError):
        bad.sql_script("CREATE TABLE before_error (a INT);\nSELEC 1;")
    assert "before_error" not in _col(bad.sql("SHOW TABLES"))
    assert not os.path.exists(_loc(bad, "before_error"))


def test_sql_runs_exactly_one_statement(bad):
    with pytest.raises(UserInputError, match="sql_script"):
        bad.sql("SHOW TABLES; SHOW DATABASES")


# ---------------------------------------------------------------------------------------
# never a half-created table


@pytest.mark.parametrize("stmt,error,words", [
    ("CREATE TABLE h1 AS SELECT nope FROM flat", SemanticError, "nope"),
    ("CREATE TABLE h1 AS SELECT CAST(x AS INT) AS a FROM (SELECT 'abc' AS x) s",
     HiveParkError, "abc"),
    ("CREATE TABLE h1 PARTITIONED BY (p) AS SELECT 'x' AS p, 1 AS a", SemanticError,
     "last columns"),
    ("CREATE TABLE h1 (a INT) PARTITIONED BY (p)", SemanticError, "PARTITIONED BY (p STRING)"),
    ("CREATE TABLE h1 (a INT) STORED AS AVRO", UnsupportedError, "PARQUET, ORC or TEXTFILE"),
    ("CREATE TABLE h1 (a INT, A STRING)", SemanticError, "Duplicate column name: a"),
    ("CREATE TABLE h1 (a INT) PARTITIONED BY (a STRING)", SemanticError, "repeated"),
    ("CREATE EXTERNAL TABLE h1 AS SELECT 1 AS a", SemanticError, "EXTERNAL"),
    # types Hive refuses at CREATE (Spark then failed every read and write of the table)
    ("CREATE TABLE h1 (a DECIMAL(39,0))", SemanticError, "Decimal precision out of allowed range [1,38]"),
    ("CREATE TABLE h1 (a INT, b ARRAY<DECIMAL(5,6)>)", SemanticError,
     "Decimal scale must be less than or equal to precision"),
    ("CREATE TABLE h1 (a CHAR(0))", SemanticError, "Char length 0 out of allowed range [1, 255]"),
    ("CREATE TABLE h1 (a VARCHAR(65536))", SemanticError, "Varchar length 65536 out of allowed range [1, 65535]"),
    ("CREATE TABLE h1 (a INT) PARTITIONED BY (p DECIMAL(40,0))", SemanticError, "Column p of type decimal(40,0)"),
    ("CREATE TABLE h1 (a INT) PARTITIONED BY (p ARRAY<INT>)", SemanticError,
     "Partition column must be of primitive type. Found p of type: array<int>"),
    ("CREATE TABLE h1 (a INT) PARTITIONED BY (p BINARY)", SemanticError, "p of type binary is not supported"),
    ("CREATE TABLE h1 PARTITIONED BY (p) AS SELECT 1 AS a, map('k', 1) AS p", SemanticError,
     "Partition column must be of primitive type. Found p of type: map<string,int>"),
    ("CREATE TABLE h1 PARTITIONED BY (p) AS SELECT 1 AS a, unhex('01') AS p", SemanticError,
     "p of type binary is not supported"),
    ("CREATE TABLE h1 STORED AS PARQUET AS SELECT 1 AS a, INTERVAL 1 DAY AS i", SemanticError,
     "column i is of Spark type interval day, which no Hive column type holds"),
    ("CREATE TABLE h1 AS SELECT 1 AS a, array(INTERVAL 1 DAY) AS i", SemanticError, "CAST(i AS STRING)"),
])
def test_failed_create_leaves_no_table(bad, stmt, error, words):
    with pytest.raises(error) as e:
        bad.sql(stmt)
    assert words in str(e.value)
    assert "h1" not in bad.catalog.list_tables("default")
    assert not os.path.exists(_loc(bad, "h1"))
    assert _journal(bad) == []


@pytest.mark.parametrize("stmt,words", [
    ("ALTER TABLE flat ADD COLUMNS (b DECIMAL(50,1))", "Decimal precision out of allowed range [1,38]"),
    ("ALTER TABLE flat CHANGE a a DECIMAL(3,4)", "Decimal scale must be less than or equal to precision"),
    ("ALTER TABLE flat REPLACE COLUMNS (a VARCHAR(0))", "Varchar length 0 out of allowed range"),
])
def test_alter_to_a_type_hive_refuses_changes_nothing(bad, stmt, words):
    with pytest.raises(SemanticError, match=re.escape(words)):
        bad.sql(stmt)
    assert [(c.name, c.type) for c in bad.catalog.get_table("default", "flat").columns] == [("a", "int")]


def test_create_existing_table_keeps_the_original(bad):
    with pytest.raises(AlreadyExistsError, match="IF NOT EXISTS"):
        bad.sql("CREATE TABLE flat (b STRING)")
    with pytest.raises(AlreadyExistsError):
        bad.sql("CREATE TABLE flat AS SELECT 'x' AS b")
    assert [tuple(r) for r in bad.sql("DESCRIBE flat").collect()] == [("a", "int", "")]


def test_rename_onto_an_existing_table(bad):
    with pytest.raises(AlreadyExistsError):
        bad.sql("ALTER TABLE flat RENAME TO t2")
    assert os.path.isdir(_loc(bad, "flat")) and _parts(bad, "t2")
    assert sorted(_col(bad.sql("SHOW TABLES"))) == ["ap", "dyn", "flat", "pt", "t2"]


# ---------------------------------------------------------------------------------------
# other mistakes


def test_missing_partition(bad):
    with pytest.raises(NoSuchPartition, match="IF EXISTS"):
        bad.sql("ALTER TABLE t2 DROP PARTITION (n=99, s='none')")
    with pytest.raises(NoSuchPartition, match="SHOW PARTITIONS t2"):
        bad.sql("DESCRIBE FORMATTED t2 PARTITION (n=99, s='none')")


def test_load_data_from_missing_path(bad, tmp_path):
    with pytest.raises(UserInputError, match="INPATH"):
        bad.sql(f"LOAD DATA LOCAL INPATH '{tmp_path / 'absent'}' INTO TABLE flat")
    assert _tree(_loc(bad, "flat")) == []


@pytest.mark.parametrize("fmt", ["PARQUET", "ORC"])
def test_load_data_of_another_format_is_30019(bad, spark, tmp_path, fmt):
    """Hive's 30019 (Hive checks ORC tables; Parquet ones too here): a text file loaded into a
    Parquet or ORC table would fail every query of it later. Nothing is moved or registered."""
    bad.sql(f"CREATE TABLE lf_{fmt} (a INT, b STRING) PARTITIONED BY (p STRING) STORED AS {fmt}")
    src = tmp_path / f"in_{fmt}"
    spark.createDataFrame([(1, "x"), (2, "y")], "a int, b string").coalesce(1).write.format(fmt.lower()) \
        .save(str(src))
    (src / "notes.csv").write_text("3,z\n")
    before = sorted(p.name for p in src.iterdir())
    with pytest.raises(SemanticError) as e:
        bad.sql(f"LOAD DATA INPATH '{src}' INTO TABLE lf_{fmt} PARTITION (p='a')")
    assert e.value.code == 30019 and str(e.value).startswith(
        "The file that you are trying to load does not match the file format of the destination table. "
        f"Destination table is stored as {fmt} but ") and "notes.csv" in str(e.value)
    assert sorted(p.name for p in src.iterdir()) == before  # nothing moved
    assert _tree(_loc(bad, f"lf_{fmt}")) == [] and bad.sql(f"SHOW PARTITIONS lf_{fmt}").collect() == []
    (src / "notes.csv").unlink()
    bad.sql(f"LOAD DATA INPATH '{src}' INTO TABLE lf_{fmt} PARTITION (p='a')")
    assert sorted(map(tuple, bad.sql(f"SELECT a, b FROM lf_{fmt}").collect())) == [(1, "x"), (2, "y")]
    num_rows = {r[1].strip(): r[2].strip() for r in bad.sql(
        f"DESCRIBE FORMATTED lf_{fmt} PARTITION (p='a')").collect() if r[1]}
    assert num_rows["numRows"] == "2"


def test_drop_default_database(bad):
    with pytest.raises(SemanticError, match="default"):
        bad.sql("DROP DATABASE default")


def test_api_insert_with_bad_partition(bad, spark):
    df = spark.createDataFrame([(1,)], "a int")
    with pytest.raises(InvalidPartitionSpec, match="zz"):
        bad.insert(df, "t2", partition={"n": 1, "zz": "x"})
    with pytest.raises(NoSuchTable):
        bad.insert(df, "nosuch")


def test_every_error_is_a_hivepark_error():
    for cls in (ParseError, SemanticError, NoSuchTable, NoSuchDatabase, NoSuchPartition,
                AlreadyExistsError, InvalidPartitionSpec, UnsupportedError):
        assert issubclass(cls, HiveParkError) and issubclass(cls, ValueError)


@pytest.mark.parametrize("text,message", [
    ("SELEC * FROM flat", "ParseException line 1:1 cannot recognize input near 'SELEC' '*' 'FROM'"),
    ("SELECT * FROM flat WHERE a = = 1", "ParseException line 1:30 cannot recognize input near '=' '1' '<EOF>'"),
])
def test_syntax_errors_are_worded_as_hive_never_as_the_parser_library(bad, text, message):
    with pytest.raises(ParseError) as e:
        bad.sql(text)
    assert str(e.value) == message
    assert "sqlglot" not in str(e.value) and "<class" not in str(e.value)
