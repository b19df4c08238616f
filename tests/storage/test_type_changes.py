"""Which column type changes a table's files survive (storage.formats.reads_as, which ALTER
TABLE ... CHANGE / REPLACE COLUMNS asks before it lets a Parquet or ORC column with files
change type): for every pair of types it allows, Spark reads files written with the old
type as the new one with exactly the values ``try_cast`` gives (NULL where a value does not
fit, as Hive reads it); for the pairs it refuses that Hive's metastore allows, Spark fails or
reads some value wrong, so the refusal is needed."""

from __future__ import annotations

import itertools

import pytest

from hivepark.storage.formats import reads_as
from hivepark.types import HiveType, hive_allows_type_change

TYPES = ["tinyint", "smallint", "int", "bigint", "decimal(5,2)", "decimal(7,4)", "decimal(12,2)",
         "decimal(22,2)", "float", "double", "string", "varchar(8)", "date", "timestamp", "boolean"]
# the values of each type the files hold: typical ones, each type's extremes, NULL
VALUES = {
    "tinyint": ["0", "-7", "127", "-128"],
    "smallint": ["12", "-32768", "32767"],
    "int": ["12", "-2147483648", "2147483647"],
    "bigint": ["12", "-9223372036854775808", "9223372036854775807"],
    "decimal(5,2)": ["999.99", "-1.5", "0.01"],
    "decimal(7,4)": ["123.4567", "-0.0001"],
    "decimal(12,2)": ["1234567890.12", "-3.5"],
    "decimal(22,2)": ["12345678901234567890.12", "7"],
    "float": ["1.5", "-2.25", "3.4e38"],
    "double": ["1.5", "-1e300", "0.1"],
    "string": ["'12'", "'abc'", "''", "'2020-01-02'"],
    "varchar(8)": ["'12'", "'abcdefgh'"],
    "date": ["DATE '2020-01-02'", "DATE '1900-12-31'"],
    "timestamp": ["TIMESTAMP '2020-01-02 03:04:05.123456'", "TIMESTAMP '1970-01-01 00:00:00'"],
    "boolean": ["true", "false"],
}
ROWS = max(len(v) for v in VALUES.values()) + 1  # and a NULL in each column


def _changes(fmt: str, allowed: bool) -> list[tuple[str, str]]:
    return [(a, b) for a, b in itertools.permutations(TYPES, 2)
            if HiveType.parse(a).spark_ddl != HiveType.parse(b).spark_ddl
            and hive_allows_type_change(a, b) and reads_as(fmt, a, b) == allowed]


def _write(spark, path: str, olds: list[str], fmt: str) -> None:
    cols = []
    for a in olds:
        vals = VALUES[a] + ["NULL"] * (ROWS - len(VALUES[a]))
        cols.append([f"CAST({v} AS {HiveType.parse(a).spark_ddl})" for v in vals])
    rows = ", ".join("(" + ", ".join(col[r] for col in cols) + ")" for r in range(ROWS))
    names = ", ".join(f"c{i}" for i in range(len(olds)))
    spark.sql(f"SELECT * FROM VALUES {rows} AS t({names})").coalesce(1).write.format(fmt).save(path)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_every_change_the_reader_allows_reads_each_value_as_try_cast(spark, tmp_path, fmt):
    pairs = _changes(fmt, allowed=True)
    assert ("int", "bigint") in pairs and ("float", "double") in pairs
    path = str(tmp_path / fmt)
    _write(spark, path, [a for a, _ in pairs], fmt)
    old = spark.read.format(fmt).schema(", ".join(f"c{i} {HiveType.parse(a).spark_ddl}"
                                                  for i, (a, _) in enumerate(pairs))).load(path)
    old.createOrReplaceTempView("old_files")
    expected = spark.sql("SELECT " + ", ".join(f"try_cast(c{i} AS {HiveType.parse(b).spark_ddl}) AS c{i}"
                                               for i, (_, b) in enumerate(pairs)) + " FROM old_files")
    read = spark.read.format(fmt).schema(", ".join(f"c{i} {HiveType.parse(b).spark_ddl}"
                                                   for i, (_, b) in enumerate(pairs))).load(path)
    want = sorted((tuple(r) for r in expected.collect()), key=repr)
    got = sorted((tuple(r) for r in read.collect()), key=repr)
    wrong = [f"{a} -> {b}" for i, (a, b) in enumerate(pairs)
             if sorted(map(repr, (r[i] for r in want))) != sorted(map(repr, (r[i] for r in got)))]
    assert wrong == []


def test_a_parquet_change_hive_allows_but_spark_cannot_read_is_refused(spark, tmp_path):
    refused = _changes("parquet", allowed=False)
    # one of each kind Spark's Parquet reader fails on or reads wrong (one file, a read each)
    kinds = [("int", "string"), ("decimal(5,2)", "double"), ("bigint", "double"), ("int", "float"),
             ("tinyint", "decimal(5,2)"), ("decimal(12,2)", "decimal(5,2)"), ("date", "string"),
             ("decimal(7,4)", "decimal(22,2)")]
    assert set(kinds) <= set(refused)
    path = str(tmp_path / "refused")
    _write(spark, path, [a for a, _ in kinds], "parquet")
    for i, (a, b) in enumerate(kinds):
        typ = HiveType.parse(b).spark_ddl
        expected = [repr(r[0]) for r in spark.read.parquet(path).selectExpr(f"try_cast(c{i} AS {typ})").collect()]
        try:
            got = [repr(r[0]) for r in spark.read.schema(f"c{i} {typ}").parquet(path).collect()]
        except Exception:  # noqa: BLE001 - Spark's reader fails: the refusal is needed
            continue
        assert sorted(got) != sorted(expected), f"{a} -> {b} reads right: reads_as could allow it"


def test_pyarrow_reads_files_of_before_and_after_a_widening_as_the_tables_types(tmp_path):
    """The in-process reader (small sides of runtime pruning) reads every file as the table's
    types, not the first file's: INT and SMALLINT files, then BIGINT and INT ones."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hivepark.catalog.models import Column, Table
    from hivepark.storage.arrow import arrow_type
    from hivepark.storage.formats import read_arrow

    before, after = str(tmp_path / "0.parquet"), str(tmp_path / "1.parquet")
    pq.write_table(pa.table({"k": pa.array([1, 2], pa.int32()), "n": pa.array([7, None], pa.int16())}), before)
    pq.write_table(pa.table({"k": pa.array([2 ** 40], pa.int64()), "n": pa.array([2 ** 20], pa.int32())}), after)
    table = Table("default", "t", (Column("k", "bigint"), Column("n", "int")), location=str(tmp_path))
    schema = pa.schema([("k", arrow_type("bigint")), ("n", arrow_type("int"))])
    read = read_arrow(table, [before, after], schema)
    assert read is not None
    assert sorted(read.to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "n": 7}, {"k": 2, "n": None}, {"k": 2 ** 40, "n": 2 ** 20}]
