"""Table scans become Spark DataFrames over exactly the chosen partitions.

One Spark read over all chosen files or directories, never a union per partition. Partition
values come from the metastore: through Spark's ``basePath`` discovery when every chosen
partition lives in its Hive-layout directory, otherwise through a small map from directory
to values applied to each row's ``_metadata.file_path``.
"""

from __future__ import annotations

import json

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hivepark import layout
from hivepark.catalog.models import Partition, Table
from hivepark.plan.nodes import TableScan
from hivepark.storage import fs
from hivepark.storage.commit import FILES_PARAM, current_files
from hivepark.storage.formats import load, schema_of, spark_type


def scan_dataframe(spark: SparkSession, scan: TableScan) -> DataFrame:
    """The rows of ``scan``: data columns then partition columns, typed as in the metastore."""
    table = scan.table
    if not table.is_partitioned:
        raw = table.properties.get(FILES_PARAM)
        paths = current_files(table.location, json.loads(raw) if raw else None) \
            if raw is not None else [table.location]
        if not paths or (raw is None and not fs.exists(table.location)):
            return spark.createDataFrame([], schema_of(table.columns))
        return load(spark, table, [fs.to_spark_path(p) for p in paths])
    parts = scan.partitions or ()
    paths = _partition_paths(parts)
    if not paths:
        return spark.createDataFrame([], schema_of(table.all_columns))
    if all(_in_hive_layout(table, p) for p in parts):
        return load(spark, table, [fs.to_spark_path(p) for p in paths],
                    base_path=fs.to_spark_path(table.location))
    return _mapped_scan(spark, table, parts, paths)


def _partition_paths(parts: tuple[Partition, ...]) -> list[str]:
    paths: list[str] = []
    for p in parts:
        if p.files is not None:
            paths += current_files(p.location, p.files)
        elif fs.exists(p.location):
            paths.append(p.location)
    return paths


def _in_hive_layout(table: Table, p: Partition) -> bool:
    expected = layout.partition_path(table.location, table.partition_key_names(), p.values)
    return fs.normalize(expected) == fs.normalize(p.location)


def _dir_expr() -> SparkColumn:
    """Each row's directory, URL-decoded: ``_metadata.file_path`` is Hadoop's URI form
    (``my dir`` is ``my%20dir``, ``%`` is ``%25``). URI encoding never writes ``+`` for a
    space, so a ``+`` is kept as itself (``url_decode`` alone would turn it into a space)."""
    path = F.col("_metadata.file_path")
    directory = F.regexp_replace(F.regexp_replace(path, "^file:/+", "/"), "/[^/]*$", "")
    return F.url_decode(F.replace(directory, F.lit("+"), F.lit("%2B")))


def _mapped_scan(spark: SparkSession, table: Table, parts: tuple[Partition, ...],
                 paths: list[str]) -> DataFrame:
    """Partitions outside the Hive layout: values looked up by each file's directory."""
    data = load(spark, table, [fs.to_spark_path(p) for p in paths],
                extra={"__hivepark_dir": _dir_expr()})
    entries: list[SparkColumn] = []
    for p in parts:
        entries += [F.lit(_spark_dir(p.location)),
                    F.array(*[F.lit(v) for v in p.values]).cast("array<string>")]
    mapping = F.create_map(*entries)
    values = F.try_element_at(mapping, F.col("__hivepark_dir"))
    cols = [F.col(f"`{c.name}`") for c in table.columns]
    for i, key in enumerate(table.partition_keys):
        cols.append(F.element_at(values, i + 1).cast(spark_type(key.type)).alias(key.name))
    return data.select(*cols)


def _spark_dir(location: str) -> str:
    """A directory as it appears (URL-decoded) in ``_metadata.file_path``."""
    return fs.normalize(location)
