"""Partition values are bound to their column's Hive type on every path (issue 13, item 3).

A value that does not fit the type is an error naming the column, the value, the type and the
fix, with nothing written and nothing in the metastore: static values (INSERT ... VALUES and
SELECT, ALTER TABLE ADD PARTITION, LOAD DATA, ``Warehouse.insert``), dynamic values computed by
Spark, and directories found by MSCK REPAIR. A value that fits is stored in one canonical text,
whichever path gives it: a DECIMAL's is Hive's (``HiveDecimal``, trailing zeros stripped), so
``12.5``, ``12.50`` and a dynamic ``12.50`` are the one partition ``n=12.5``, which reads back as
``12.50``. Partition columns named ``_x`` or ``.x`` (hidden paths for Hadoop, Spark and Hive) are
refused at CREATE TABLE. Query results are compared with plain Spark SQL over the same files.
"""

from __future__ import annotations

import os
import time
from decimal import Decimal

import pytest

import hivepark
from hivepark.errors import HiveParkError, InvalidPartitionSpec, SemanticError
from hivepark.layout import make_part_name

# type, a SQL literal that does not fit it, words the error must carry (its reason)
BAD_STATIC = [
    ("int", "99999999999", "out of range"),
    ("boolean", "'maybe'", "true or false"),
    ("timestamp", "'not a time'", "yyyy-mm-dd hh:mm:ss"),
    ("tinyint", "300", "out of range"),
    ("double", "1e400", "out of range"),
    ("decimal(10,2)", "123456789.5", "out of range"),
    ("date", "'2024-02-30'", "yyyy-mm-dd"),
]
BAD_IDS = [f"{t}-{v}" for t, v, _ in BAD_STATIC]


def _rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _col(df, i: int = 0) -> list:
    return [r[i] for r in df.collect()]


def _tree(path: str) -> list[str]:
    """Every file and directory under ``path``, hidden ones included."""
    out: list[str] = []
    for d, dirs, files in os.walk(path):
        out += [os.path.relpath(os.path.join(d, x), path) for x in dirs + files]
    return sorted(out)


def _parts(wh, table: str) -> list[str]:
    t = wh.catalog.get_table("default", table)
    return sorted(make_part_name(t.partition_key_names(), p.values) for p in wh.catalog.list_partitions(t))


def _state(wh, table: str):
    """What a failed statement must leave as it was: the table's files (hidden ones too), its
    partitions in the metastore, and the warehouse's journals."""
    return (_tree(os.path.join(wh.location, table)), _parts(wh, table),
            _tree(os.path.join(wh.location, ".hivepark", "journal")))


def _uri(path: str) -> str:
    return "file://" + os.path.abspath(path)


def _plain(spark, wh, table: str, data: str, key: str, key_type: str, fmt: str = "parquet"):
    """Plain Spark SQL over the table's files: the partition directory's text read as a string
    and cast by Spark SQL (Spark's typed partition discovery reads ``n=12.5`` of a DECIMAL(10,2)
    column as 1.25, so it cannot be the reference)."""
    loc = os.path.join(wh.location, table)
    reader = spark.read.schema(f"{data}, {key} string").option("basePath", _uri(loc))
    df = reader.parquet(_uri(loc)) if fmt == "parquet" else reader.csv(_uri(loc))
    view = f"plain_{table}"
    df.createOrReplaceTempView(view)
    cols = ", ".join(c.split()[0] for c in data.split(","))
    return spark.sql(f"SELECT {cols}, CAST({key} AS {key_type}) AS {key} FROM {view}")


@pytest.fixture(scope="module")
def wh(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("pvt")
    w = hivepark.connect(str(root / "warehouse"), spark=spark,
                         conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    w.source = root / "one_line.txt"
    w.source.write_text("1\n")
    yield w
    w.close()


def _fresh(wh, name: str, key_type: str, fmt: str = "PARQUET", extra_key: str = "") -> None:
    wh.sql(f"DROP TABLE IF EXISTS {name}")
    wh.sql(f"CREATE TABLE {name} (k INT) PARTITIONED BY (n {key_type}{extra_key}) STORED AS {fmt}")


# ---------------------------------------------------------------------------------------
# static values that do not fit the type: an error on every path, nothing written


def _check_error(e: pytest.ExceptionInfo, typ: str, literal: str, words: str) -> None:
    msg = str(e.value)
    shown = literal.strip("'")
    assert isinstance(e.value, InvalidPartitionSpec) and e.value.code == 10248, msg
    assert "column n" in msg and f"'{shown}'" in msg and typ in msg, msg
    assert words in msg, msg
    assert "PARTITION (n=" in msg, msg  # the fix: a value of the type


@pytest.mark.parametrize("typ, literal, words", BAD_STATIC, ids=BAD_IDS)
def test_bad_static_value_is_refused_on_every_path(wh, spark, typ, literal, words):
    _fresh(wh, "bs", typ, fmt="TEXTFILE")
    wh.sql("INSERT INTO bs PARTITION (n=NULL) VALUES (0)")  # one partition already there
    before = _state(wh, "bs")
    statements = [
        f"INSERT INTO bs PARTITION (n={literal}) VALUES (1)",
        f"INSERT OVERWRITE TABLE bs PARTITION (n={literal}) SELECT 2",
        f"ALTER TABLE bs ADD PARTITION (n={literal})",
        f"ALTER TABLE bs ADD IF NOT EXISTS PARTITION (n={literal})",
        f"LOAD DATA LOCAL INPATH '{wh.source}' INTO TABLE bs PARTITION (n={literal})",
    ]
    for text in statements:
        with pytest.raises(InvalidPartitionSpec) as e:
            wh.sql(text)
        _check_error(e, typ, literal, words)
        assert _state(wh, "bs") == before, text
    with pytest.raises(InvalidPartitionSpec) as e:
        wh.insert(spark.createDataFrame([(3,)], "k int"), "bs", partition={"n": literal.strip("'")})
    _check_error(e, typ, literal, words)
    assert _state(wh, "bs") == before
    # the table still reads, as plain Spark reads it
    assert _rows(wh.sql("SELECT k, n FROM bs")) == [(0, None)]


def test_bad_static_value_in_a_mixed_static_dynamic_insert(wh, spark):
    wh.sql("DROP TABLE IF EXISTS mx")
    wh.sql("CREATE TABLE mx (k INT) PARTITIONED BY (a TINYINT, b INT) STORED AS PARQUET")
    before = _state(wh, "mx")
    with pytest.raises(InvalidPartitionSpec) as e:
        wh.sql("INSERT INTO mx PARTITION (a=300, b) SELECT 1, 2")
    assert "column a" in str(e.value) and "'300'" in str(e.value) and "-128 to 127" in str(e.value)
    with pytest.raises(InvalidPartitionSpec, match="out of range"):
        wh.insert(spark.createDataFrame([(1, 2)], "k int, b int"), "mx", partition={"a": 300, "b": None})
    assert _state(wh, "mx") == before


# ---------------------------------------------------------------------------------------
# dynamic values computed by Spark


@pytest.mark.parametrize("expr, words", [
    ("CAST('1e400' AS DOUBLE)", "'Infinity'"),
    ("-1e308 * 10", "'-Infinity'"),
    ("CAST('NaN' AS DOUBLE)", "'NaN'"),
], ids=["overflow", "negative-overflow", "nan"])
def test_dynamic_double_that_is_not_a_number_is_refused(wh, spark, expr, words):
    _fresh(wh, "dd", "double")
    wh.sql("INSERT INTO dd PARTITION (n) SELECT 1, 2.5")
    before = _state(wh, "dd")
    with pytest.raises(InvalidPartitionSpec) as e:
        wh.sql(f"INSERT INTO dd PARTITION (n) SELECT 7, {expr}")
    msg = str(e.value)
    assert words in msg and "column n" in msg and "double" in msg and "SELECT" in msg, msg
    assert _state(wh, "dd") == before
    with pytest.raises(InvalidPartitionSpec):
        wh.insert(spark.sql(f"SELECT 9 AS k, {expr} AS n"), "dd", partition={"n": None})
    assert _state(wh, "dd") == before
    assert _rows(wh.sql("SELECT * FROM dd")) == [(1, 2.5)]


def test_dynamic_value_out_of_the_type_range_writes_nothing(wh):
    _fresh(wh, "dt", "tinyint")
    before = _state(wh, "dt")
    with pytest.raises(HiveParkError, match="300"):
        wh.sql("INSERT INTO dt PARTITION (n) SELECT 1, 300")
    assert _state(wh, "dt") == before


# ---------------------------------------------------------------------------------------
# DECIMAL: one canonical text (Hive's), read back as the same number


def test_decimal_values_name_one_partition_whichever_path_gives_them(wh, spark):
    _fresh(wh, "dec", "decimal(10,2)", fmt="TEXTFILE")
    wh.sql("INSERT INTO dec PARTITION (n=12.5) VALUES (1)")
    wh.sql("INSERT INTO dec PARTITION (n=12.50) SELECT 2")
    wh.sql("INSERT INTO dec PARTITION (n='12.500') VALUES (3)")
    wh.sql("INSERT INTO dec PARTITION (n) SELECT 4, CAST(12.5 AS DECIMAL(10,2))")
    wh.sql("INSERT INTO dec PARTITION (n) SELECT 5, 12.50")
    wh.sql("INSERT INTO dec PARTITION (n) SELECT 6, CAST(12.5 AS DOUBLE)")
    wh.insert(spark.createDataFrame([(7,)], "k int"), "dec", partition={"n": Decimal("12.50")})
    wh.insert(spark.sql("SELECT 8 AS k, CAST(12.5 AS DECIMAL(4,2)) AS n"), "dec", partition={"n": None})
    wh.sql(f"LOAD DATA LOCAL INPATH '{wh.source}' INTO TABLE dec PARTITION (n=12.50)")
    wh.sql("ALTER TABLE dec ADD IF NOT EXISTS PARTITION (n=12.500)")
    assert _parts(wh, "dec") == ["n=12.5"]
    assert _col(wh.sql("SHOW PARTITIONS dec")) == ["n=12.5"]
    loc = os.path.join(wh.location, "dec")
    assert sorted(os.listdir(loc)) == ["n=12.5"]
    ours = _rows(wh.sql("SELECT k, n FROM dec"))
    assert ours == sorted(((k, Decimal("12.50")) for k in [1, *range(1, 9)]), key=repr)  # LOAD gave 1
    assert ours == _rows(_plain(spark, wh, "dec", "k int", "n", "decimal(10,2)", fmt="text"))


def test_decimal_values_read_back_as_the_same_number(wh, spark):
    _fresh(wh, "dv", "decimal(10,2)")
    wh.sql("INSERT INTO dv PARTITION (n=12.5) VALUES (1)")
    wh.sql("INSERT INTO dv PARTITION (n='7') VALUES (2)")
    wh.sql("INSERT INTO dv PARTITION (n=0.00) VALUES (3)")
    wh.sql("INSERT INTO dv PARTITION (n=-0.5) VALUES (4)")
    wh.sql("INSERT INTO dv PARTITION (n=12.345) VALUES (5)")  # rounded half up to the scale, as Hive
    wh.sql("INSERT INTO dv PARTITION (n) VALUES (6, 99999999.99), (7, NULL)")
    assert _parts(wh, "dv") == sorted(["n=12.5", "n=7", "n=0", "n=-0.5", "n=12.35", "n=99999999.99",
                                       "n=__HIVE_DEFAULT_PARTITION__"])
    expected = [(1, Decimal("12.50")), (2, Decimal("7.00")), (3, Decimal("0.00")), (4, Decimal("-0.50")),
                (5, Decimal("12.35")), (6, Decimal("99999999.99")), (7, None)]
    ours = _rows(wh.sql("SELECT k, n FROM dv"))
    assert ours == sorted(expected, key=repr)
    assert ours == _rows(_plain(spark, wh, "dv", "k int", "n", "decimal(10,2)"))
    # pruning and filters see the same numbers
    assert _rows(wh.sql("SELECT k FROM dv WHERE n = 12.5")) == [(1,)]
    assert _rows(wh.sql("SELECT k FROM dv WHERE n = 7")) == [(2,)]
    assert _rows(wh.sql("SELECT k FROM dv WHERE n > 12")) == [(1,), (5,), (6,)]
    assert "partitions=1/" in wh.explain("SELECT k FROM dv WHERE n = 12.50")
    assert _rows(wh.sql("SELECT k FROM dv WHERE n = 12.5")) == \
        _rows(_plain(spark, wh, "dv", "k int", "n", "decimal(10,2)").where("n = 12.5").select("k"))


def test_decimal_text_table_reads_the_same_number(wh, spark):
    _fresh(wh, "dtx", "decimal(10,2)", fmt="TEXTFILE")
    wh.sql("INSERT INTO dtx PARTITION (n=12.5) VALUES (1)")
    wh.sql(f"LOAD DATA LOCAL INPATH '{wh.source}' INTO TABLE dtx PARTITION (n='7')")
    ours = _rows(wh.sql("SELECT k, n FROM dtx"))
    assert ours == [(1, Decimal("12.50")), (1, Decimal("7.00"))]
    assert ours == _rows(_plain(spark, wh, "dtx", "k int", "n", "decimal(10,2)", fmt="text"))


def test_ctas_keeps_a_timestamp_ntz_column_as_hive_timestamp(wh, spark):
    """Spark's TIMESTAMP_NTZ (to_timestamp_ntz, make_timestamp_ntz: a wall-clock time, as Hive's
    TIMESTAMP) is a TIMESTAMP column of the table, a partition column too: the metastore held
    ``timestamp_ntz``, a type Hive cannot read, and a partition column of it failed the CTAS."""
    wh.sql("DROP TABLE IF EXISTS ntz")
    wh.sql("CREATE TABLE ntz PARTITIONED BY (p) STORED AS PARQUET AS SELECT 1 AS k, "
           "TIMESTAMP_NTZ '2024-01-05 10:00:00.5' AS t, array(TIMESTAMP_NTZ '2024-01-05 11:00:00') AS ta, "
           "TIMESTAMP_NTZ '2024-01-05 12:30:00' AS p")
    table = wh.catalog.get_table("default", "ntz")
    assert [(c.name, c.type) for c in (*table.columns, *table.partition_keys)] == \
        [("k", "int"), ("t", "timestamp"), ("ta", "array<timestamp>"), ("p", "timestamp")]
    assert _col(wh.sql("SHOW PARTITIONS ntz")) == ["p=2024-01-05 12%3A30%3A00"]
    ours = _rows(wh.sql("SELECT k, t, ta, p FROM ntz WHERE p = '2024-01-05 12:30:00'"))
    assert ours == _rows(_plain(spark, wh, "ntz", "k int, t timestamp, ta array<timestamp>", "p", "timestamp"))
    assert ours == _rows(spark.sql("SELECT 1, TIMESTAMP '2024-01-05 10:00:00.5', "
                                   "array(TIMESTAMP '2024-01-05 11:00:00'), TIMESTAMP '2024-01-05 12:30:00'"))


def test_localtimestamp_runs_and_a_ctas_keeps_it_as_a_timestamp(wh, spark):
    """Found by a hunt for bugs: Spark's localtimestamp() failed every query (UNRESOLVED_COLUMN
    `LOCALTIMESTAMP`: the query was handed to Spark without its parentheses)."""
    wh.sql("DROP TABLE IF EXISTS lts")
    wh.sql("CREATE TABLE lts STORED AS PARQUET AS SELECT 1 AS k, localtimestamp() AS loaded_at")
    assert [(c.name, c.type) for c in wh.catalog.get_table("default", "lts").columns] == \
        [("k", "int"), ("loaded_at", "timestamp")]
    (k, loaded), = wh.sql("SELECT k, loaded_at FROM lts").collect()
    (now,), = spark.sql("SELECT localtimestamp()").collect()
    assert k == 1 and abs((now - loaded).total_seconds()) < 3600
    assert _col(wh.sql("SELECT count(*) FROM lts WHERE loaded_at <= localtimestamp()")) == [1]


# ---------------------------------------------------------------------------------------
# MSCK REPAIR: directories whose value does not fit the type


def _hand_dir(spark, wh, table: str, name: str, k: int) -> None:
    """A partition directory written by another tool, holding one Parquet file with ``k``."""
    d = os.path.join(wh.location, table, name)
    spark.createDataFrame([(k,)], "k int").coalesce(1).write.mode("overwrite").parquet(_uri(d))


@pytest.mark.parametrize("typ, bad, good", [
    ("tinyint", "300", "12"),
    ("int", "99999999999", "12"),
    ("boolean", "maybe", "true"),
    ("double", "1e400", "2.5"),
    ("timestamp", "not a time", "2024-01-05"),
    ("date", "2024-02-30", "2024-02-01"),
], ids=["tinyint", "int", "boolean", "double", "timestamp", "date"])
def test_msck_refuses_directories_whose_value_does_not_fit(wh, spark, typ, bad, good):
    t = f"ms_{typ}"  # DROP TABLE keeps hand-made directories: one table each
    _fresh(wh, t, typ)
    _hand_dir(spark, wh, t, f"n={bad}", 1)
    _hand_dir(spark, wh, t, f"n={good}", 2)
    before = _state(wh, t)
    with pytest.raises(InvalidPartitionSpec) as e:
        wh.sql(f"MSCK REPAIR TABLE {t}")
    msg = str(e.value)
    assert f"n={bad}" in msg and "column n" in msg and typ in msg and "hive.msck.path.validation=skip" in msg, msg
    assert _state(wh, t) == before  # nothing registered, not even the good directory

    wh.sql("SET hive.msck.path.validation=skip")
    try:
        out = _col(wh.sql(f"MSCK REPAIR TABLE {t}"))
    finally:
        wh.sql("SET hive.msck.path.validation=throw")
    assert [line for line in out if line.startswith("Repair: Added")] == [
        f"Repair: Added partition to metastore {t}:{_canonical_name(wh, t, good)}"]
    assert any(line.startswith(f"Repair: Skipped directory {t}:n={bad}") and typ in line for line in out), out
    assert len(_parts(wh, t)) == 1
    ours = _rows(wh.sql(f"SELECT k, n FROM {t}"))
    assert [k for k, _ in ours] == [2]  # the bad directory is not read, and no scan fails
    plain = _plain(spark, wh, t, "k int", "n", typ).where("k = 2")
    assert ours == _rows(plain)


def _canonical_name(wh, table: str, directory_value: str) -> str:
    t = wh.catalog.get_table("default", table)
    value = t.partition_keys[0].hive_type.partition_text(directory_value)
    name = make_part_name(["n"], [value])
    return name if name == f"n={directory_value}" else f"{name} (directory n={directory_value})"


def test_msck_registers_non_canonical_decimal_directories_with_their_value(wh, spark):
    _fresh(wh, "md", "decimal(10,2)")
    _hand_dir(spark, wh, "md", "n=12.50", 1)  # written by a tool that pads to the scale
    _hand_dir(spark, wh, "md", "n=7", 2)
    out = _col(wh.sql("MSCK REPAIR TABLE md"))
    assert sorted(out) == ["Partitions not in metastore:\tmd:n=12.5\tmd:n=7",  # Hive's checker's line first
                           "Repair: Added partition to metastore md:n=12.5 (directory n=12.50)",
                           "Repair: Added partition to metastore md:n=7"]
    assert _parts(wh, "md") == ["n=12.5", "n=7"]
    ours = _rows(wh.sql("SELECT k, n FROM md"))
    assert ours == [(1, Decimal("12.50")), (2, Decimal("7.00"))]  # not 0.07, not 1.25
    assert ours == _rows(_plain(spark, wh, "md", "k int", "n", "decimal(10,2)"))
    # the next write of 12.5 lands in the partition MSCK registered, in its directory
    wh.sql("INSERT INTO md PARTITION (n=12.5) VALUES (3)")
    assert _parts(wh, "md") == ["n=12.5", "n=7"]
    assert _rows(wh.sql("SELECT k FROM md WHERE n = 12.5")) == [(1,), (3,)]
    assert _col(wh.sql("MSCK REPAIR TABLE md")) == []  # nothing new: idempotent

    # a second directory holding the same value as a known partition is refused
    _hand_dir(spark, wh, "md", "n=12.500", 4)
    with pytest.raises(InvalidPartitionSpec, match=r"n=12\.500.*same value as partition n=12\.5"):
        wh.sql("MSCK REPAIR TABLE md")
    assert _rows(wh.sql("SELECT k FROM md WHERE n = 12.5")) == [(1,), (3,)]


def test_a_bad_value_already_in_the_metastore_reads_as_null(wh, spark):
    """A partition registered before values were checked (an older MSCK) reads as NULL in its
    partition column, as Hive reads a value it cannot convert; a full scan no longer fails and a
    TINYINT 300 never reads as 44."""
    from hivepark.catalog.models import Partition

    for typ, bad in (("tinyint", "300"), ("int", "99999999999"), ("boolean", "maybe"),
                     ("date", "2024-02-30")):
        _fresh(wh, "legacy", typ)
        t = wh.catalog.get_table("default", "legacy")
        _hand_dir(spark, wh, "legacy", f"n={bad}", 1)
        wh.catalog.add_partitions(t, [Partition((bad,), os.path.join(t.location, f"n={bad}"))])
        assert _rows(wh.sql("SELECT k, n FROM legacy")) == [(1, None)], typ


# ---------------------------------------------------------------------------------------
# partition column names Hadoop, Spark and Hive treat as hidden paths


@pytest.mark.parametrize("name", ["_p", "__rows", "_metadata", ".x"])
def test_hidden_partition_column_names_are_refused_at_create(wh, name):
    wh.sql("DROP TABLE IF EXISTS hid")
    for text in (f"CREATE TABLE hid (k INT) PARTITIONED BY (`{name}` INT) STORED AS PARQUET",
                 f"CREATE TABLE hid PARTITIONED BY (`{name}`) STORED AS PARQUET AS SELECT 1 AS k, 2 AS `{name}`",
                 f"CREATE TABLE hid (k INT) PARTITIONED BY (ok INT, `{name}` STRING)"):
        with pytest.raises(SemanticError) as e:
            wh.sql(text)
        msg = str(e.value)
        assert f"'{name}'" in msg and "hidden" in msg and "rename" in msg.lower(), msg
        assert "hid" not in _col(wh.sql("SHOW TABLES"))
        assert not os.path.exists(os.path.join(wh.location, "hid"))


def test_underscore_in_the_middle_of_a_partition_column_name_is_fine(wh, spark):
    wh.sql("DROP TABLE IF EXISTS mid")
    wh.sql("CREATE TABLE mid (k INT) PARTITIONED BY (p_1 INT) STORED AS PARQUET")
    wh.sql("INSERT INTO mid PARTITION (p_1) VALUES (1, 1), (2, 2)")
    loc = os.path.join(wh.location, "mid")
    assert _rows(wh.sql("SELECT k, p_1 FROM mid")) == _rows(
        spark.read.schema("k int, p_1 int").option("basePath", _uri(loc)).parquet(_uri(loc))) == [(1, 1), (2, 2)]


@pytest.mark.parametrize("ddl", [
    "CREATE TABLE ib (k INT, `_id` INT) PARTITIONED BY SPEC (bucket(4, `_id`)) STORED BY ICEBERG",
    "CREATE TABLE ib (k INT) PARTITIONED BY (`_id` INT) STORED BY ICEBERG",
], ids=["bucket", "identity"])
def test_iceberg_partition_source_named_with_an_underscore_keeps_its_rows(wh, spark, ddl):
    wh.sql("DROP TABLE IF EXISTS ib")
    wh.sql(ddl)
    wh.sql("INSERT INTO ib VALUES (1, 1), (2, 2), (3, 3)")
    assert _rows(wh.sql("SELECT k, `_id` FROM ib")) == [(1, 1), (2, 2), (3, 3)]
    data = os.path.join(wh.location, "ib", "data")
    files = [os.path.join(d, f) for d, _, fs in os.walk(data) for f in fs if f.endswith(".parquet")]
    plain = spark.read.parquet(*[_uri(f) for f in files])
    assert _rows(plain.select("k", "_id")) == [(1, 1), (2, 2), (3, 3)]
    wh.sql("DROP TABLE ib")


@pytest.mark.parametrize("typ,named,other", [("boolean", "false", "true"),
                                             ("bigint", str(2 ** 53 + 1), str(2 ** 53))],
                         ids=["boolean", "bigint-beyond-2**53"])
def test_a_spec_acts_on_the_partition_it_names_only(wh, spark, typ, named, other):
    """``PARTITION (n=false)`` of a BOOLEAN key and ``PARTITION (n=9007199254740993)`` of a BIGINT
    one (the same double as 9007199254740992) name one partition: EXCHANGE moves it alone (it moved
    both), SHOW PARTITIONS, TOUCH, ANALYZE and TRUNCATE see it alone, DROP PARTITION drops it (on a
    BOOLEAN key it always failed). The rows are plain Spark SQL's over the same files."""
    for t in ("src", "dst"):
        _fresh(wh, t, typ)
    wh.sql(f"INSERT INTO src PARTITION (n={named}) VALUES (1)")
    wh.sql(f"INSERT INTO src PARTITION (n={other}) VALUES (2)")
    assert _col(wh.sql(f"SHOW PARTITIONS src PARTITION (n={named})")) == [f"n={named}"]

    def params():
        return {p.values[0]: p.parameters for p in wh.catalog.list_partitions(wh.catalog.get_table("default", "src"))}

    for stmt in (f"ALTER TABLE src TOUCH PARTITION (n={named})",
                 f"ANALYZE TABLE src PARTITION (n={named}) COMPUTE STATISTICS FOR COLUMNS",
                 f"ANALYZE TABLE src PARTITION (n={named}) COMPUTE STATISTICS"):
        if stmt.endswith("STATISTICS"):  # each partition's numRows forgotten: ANALYZE gives the named one's
            t = wh.catalog.get_table("default", "src")
            wh.catalog.commit(t, t.version, put=[p.evolve(parameters={k: v for k, v in p.parameters.items()
                                                                      if k != "numRows"})
                                                 for p in wh.catalog.list_partitions(t)])
        before = params()
        time.sleep(1.01 if "TOUCH" in stmt else 0)  # transient_lastDdlTime is in seconds
        wh.sql(stmt)
        after = params()
        assert after[other] == before[other] and after[named] != before[named], stmt
    wh.sql(f"ALTER TABLE dst EXCHANGE PARTITION (n={named}) WITH TABLE src")
    assert _parts(wh, "src") == [f"n={other}"] and _parts(wh, "dst") == [f"n={named}"]
    assert sorted(os.listdir(os.path.join(wh.location, "src"))) == [f"n={other}"]
    for table, k in (("src", 2), ("dst", 1)):
        ours = _rows(wh.sql(f"SELECT k, n FROM {table}"))
        assert ours == _rows(_plain(spark, wh, table, "k int", "n", typ)) and [r[0] for r in ours] == [k]
    wh.sql(f"ALTER TABLE src EXCHANGE PARTITION (n={named}) WITH TABLE dst")  # back
    wh.sql(f"TRUNCATE TABLE src PARTITION (n={named})")
    assert _rows(wh.sql("SELECT k, n FROM src")) == _rows(_plain(spark, wh, "src", "k int", "n", typ))
    assert [r[0] for r in _rows(wh.sql("SELECT k, n FROM src"))] == [2]
    wh.sql(f"ALTER TABLE src DROP PARTITION (n={named})")
    assert _parts(wh, "src") == [f"n={other}"]
    wh.sql(f"ALTER TABLE src DROP IF EXISTS PARTITION (n='{other}')")
    assert _parts(wh, "src") == [] and _rows(wh.sql("SELECT k FROM src")) == []


def test_a_nul_character_in_a_static_value_is_refused_on_every_path(wh, spark):
    """A NUL character (\\0) in a static partition value is refused before anything is written,
    with the text the dynamic INSERT gives: a SQLite metastore stored it (s=a%00b), a PostgreSQL one
    failed with its driver's message."""
    wh.sql("DROP TABLE IF EXISTS nul")
    wh.sql("CREATE TABLE nul (k INT) PARTITIONED BY (s STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO nul PARTITION (s='a') VALUES (0)")
    before = _state(wh, "nul")
    for text in ["ALTER TABLE nul ADD PARTITION (s='a\\0b')",
                 "ALTER TABLE nul ADD IF NOT EXISTS PARTITION (s='x') PARTITION (s='c\\0d')",
                 "INSERT INTO nul PARTITION (s='c\\0d') VALUES (1)",
                 "INSERT OVERWRITE TABLE nul PARTITION (s='c\\0d') SELECT 2",
                 "ALTER TABLE nul PARTITION (s='a') RENAME TO PARTITION (s='e\\0f')",
                 f"LOAD DATA LOCAL INPATH '{wh.source}' INTO TABLE nul PARTITION (s='g\\0h')"]:
        with pytest.raises(InvalidPartitionSpec, match=r"partition value for column s contains a NUL character "
                                                        r"\(\\0\), which no directory name can hold") as e:
            wh.sql(text)
        assert "Remove it" in str(e.value)
        assert _state(wh, "nul") == before, text
    with pytest.raises(InvalidPartitionSpec, match="contains a NUL character"):
        wh.insert(spark.createDataFrame([(3,)], "k int"), "nul", partition={"s": "i\0j"})
    assert _state(wh, "nul") == before
    assert _rows(wh.sql("SELECT k, s FROM nul")) == _rows(_plain(spark, wh, "nul", "k int", "s", "string")) == \
        [(0, "a")]


def test_msck_does_not_register_a_directory_whose_value_holds_a_nul(wh, spark):
    """A directory named s=a%00b (made by hand or another tool) holds a value with a NUL, which
    a static value may not (above): MSCK REPAIR names it and registers nothing (SQLite stored it,
    PostgreSQL failed with its driver's text)."""
    wh.sql("DROP TABLE IF EXISTS nulm")
    wh.sql("CREATE TABLE nulm (k INT) PARTITIONED BY (s STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO nulm PARTITION (s='a') VALUES (0)")
    location = wh.catalog.get_table("default", "nulm").location
    spark.createDataFrame([(1,)], "k int").write.parquet(f"{location}/s=b")
    spark.createDataFrame([(2,)], "k int").write.parquet(f"{location}/s=c%00d")
    with pytest.raises(InvalidPartitionSpec, match=r"MSCK REPAIR TABLE default\.nulm registered nothing: .*s=c%00d: "
                                                   r"value of column s contains a NUL character"):
        wh.sql("MSCK REPAIR TABLE nulm")
    assert _parts(wh, "nulm") == ["s=a"]
    wh.sql("SET hive.msck.path.validation=skip")
    try:
        wh.sql("MSCK REPAIR TABLE nulm")
    finally:
        wh.sql("SET hive.msck.path.validation=throw")
    assert _parts(wh, "nulm") == ["s=a", "s=b"]
    plain = spark.read.option("basePath", location).parquet(f"{location}/s=a", f"{location}/s=b")
    assert _rows(wh.sql("SELECT k, s FROM nulm")) == _rows(plain.select("k", "s")) == [(0, "a"), (1, "b")]
