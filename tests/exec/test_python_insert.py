"""Warehouse.insert matches columns by name (issue 14, item 4): a DataFrame (v, k) goes into a
table (k, v) unswapped; by position only when asked; a mismatch or something that is not a
DataFrame is refused with a message naming the columns."""

from __future__ import annotations

import pytest

from hivepark.errors import UserInputError


@pytest.fixture
def kv(wh):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE kv (k STRING, v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    return wh


def _rows(wh, spark):
    got = sorted(tuple(r) for r in wh.sql("SELECT k, v, ds FROM kv").collect())
    t = wh.catalog.get_table("default", "kv")
    plain = spark.read.parquet(t.location).selectExpr("k", "v", "ds")
    assert got == sorted(tuple(r) for r in plain.collect())
    return got


def test_columns_are_matched_by_name(kv, spark):
    df = spark.createDataFrame([("value-1", "key-1", "d1")], "V string, k string, ds string")
    kv.insert(df, "kv")
    kv.insert(spark.createDataFrame([("value-2", "key-2")], "v string, k string"), "kv",
              partition={"ds": "d2"})
    assert _rows(kv, spark) == [("key-1", "value-1", "d1"), ("key-2", "value-2", "d2")]


def test_by_position_when_asked(kv, spark):
    df = spark.createDataFrame([("a", "b")], "first string, second string")
    kv.insert(df, "kv", partition={"ds": "d"}, by_position=True)
    assert _rows(kv, spark) == [("a", "b", "d")]


@pytest.mark.parametrize("schema,partition,message", [
    ("k string, value string", {"ds": "d"}, r"missing v; not in the table: value"),
    ("k string, v string, extra int", {"ds": "d"}, r"not in the table: extra"),
    ("k string, v string", None, r"missing ds"),
])
def test_a_mismatch_is_refused_naming_the_columns(kv, spark, schema, partition, message):
    df = spark.createDataFrame([], schema)
    with pytest.raises(UserInputError, match=message) as e:
        kv.insert(df, "kv", partition=partition)
    assert "by_position=True" in str(e.value)
    assert kv.sql("SHOW PARTITIONS kv").collect() == []


def test_anything_but_a_dataframe_is_refused(kv):
    with pytest.raises(UserInputError, match=r"takes a Spark DataFrame, got list.*k string, v string"):
        kv.insert([("k", "v")], "kv", partition={"ds": "d"})


def test_a_partition_mapping_in_another_order_than_the_keys(wh, spark):
    """A dict has no order for its reader: ``{"hr": None, "ds": "d"}`` is PARTITION (ds='d', hr)
    (it failed with Hive's 10125, dynamic before static)."""
    wh.sql("CREATE TABLE kvh (k STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    wh.insert(spark.createDataFrame([("a", 1), ("b", 2)], "k string, hr int"), "kvh", partition={"hr": None, "ds": "d"})
    wh.insert(spark.createDataFrame([("c",)], "k string"), "kvh", partition={"hr": 3, "ds": "e"})
    got = sorted(tuple(r) for r in wh.sql("SELECT k, ds, hr FROM kvh").collect())
    t = wh.catalog.get_table("default", "kvh")
    plain = spark.read.parquet(t.location).selectExpr("k", "ds", "hr")
    assert got == sorted(tuple(r) for r in plain.collect()) == [("a", "d", 1), ("b", "d", 2), ("c", "e", 3)]
    assert [r[0] for r in wh.sql("SHOW PARTITIONS kvh").collect()] == ["ds=d/hr=1", "ds=d/hr=2", "ds=e/hr=3"]
