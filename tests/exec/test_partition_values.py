"""One partition per value, however it is given: ``Warehouse.insert(partition={...})`` with a
Python value, ``INSERT ... PARTITION (p=<literal>)`` and a dynamic insert write the same
directory and the same metastore partition (regression: ``flag=True`` beside ``flag=true``)."""

from __future__ import annotations

import datetime
import os
from decimal import Decimal
from urllib.parse import unquote

import pytest

CASES = [
    # type, Python value, SQL literal, the directory
    ("boolean", True, "true", "p=true"),
    ("boolean", False, "FALSE", "p=false"),
    ("int", 7, "'+007'", "p=7"),
    ("bigint", -7, "-007", "p=-7"),
    ("decimal(10,2)", Decimal("1.50"), "1.5", "p=1.5"),  # Hive's HiveDecimal text
    ("date", datetime.date(2024, 1, 5), "'2024-01-05'", "p=2024-01-05"),
    ("timestamp", datetime.datetime(2024, 1, 5, 10, 0, 0), "'2024-01-05 10:00:00'",
     "p=2024-01-05 10%3A00%3A00"),
    ("double", 2, "2", "p=2.0"),
]


@pytest.fixture(scope="module")
def wh(tmp_path_factory, spark):
    import hivepark

    root = tmp_path_factory.mktemp("pv")
    w = hivepark.connect(str(root / "warehouse"), spark=spark)
    w.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    yield w
    w.close()


def data_dirs(location):
    out = []
    for d, dirs, files in os.walk(location):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        if any(not f.startswith((".", "_")) for f in files):
            out.append(os.path.relpath(d, location))
    return sorted(out)


@pytest.mark.parametrize("typ, py_value, literal, directory", CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_python_api_and_sql_name_the_same_partition(wh, spark, typ, py_value, literal, directory):
    wh.sql("DROP TABLE IF EXISTS pv")
    wh.sql(f"CREATE TABLE pv (k INT) PARTITIONED BY (p {typ}) STORED AS PARQUET")
    wh.insert(spark.createDataFrame([(1,)], "k int"), "pv", partition={"p": py_value})
    wh.sql(f"INSERT INTO pv PARTITION (p={literal}) SELECT 2")
    wh.sql(f"INSERT INTO pv PARTITION (p) SELECT 3, CAST({literal} AS {typ})")

    table = wh.catalog.get_table("default", "pv")
    assert [r[0] for r in wh.sql("SHOW PARTITIONS pv").collect()] == [directory]
    assert len(wh.catalog.list_partitions(table)) == 1
    assert [unquote(d) for d in data_dirs(table.location)] == [unquote(directory)]
    ours = sorted(tuple(r) for r in wh.sql("SELECT k, p FROM pv").collect())
    # the directory's text, cast by Spark SQL: Spark's typed partition discovery keeps the
    # text's own scale, so it would read p=1.5 of a decimal(10,2) as 0.15
    plain = sorted(tuple(r) for r in spark.read.schema("k int, p string").parquet(table.location)
                   .selectExpr("k", f"CAST(p AS {typ}) AS p").collect())
    assert ours == plain
    assert [k for k, _ in ours] == [1, 2, 3] and len({p for _, p in ours}) == 1
