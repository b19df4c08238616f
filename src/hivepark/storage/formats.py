"""File formats: how Spark reads and writes each STORED AS format with Hive's conventions."""

from __future__ import annotations

from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter, SparkSession

from hivepark.catalog.models import Table
from hivepark.errors import UnsupportedError

FORMATS = {"parquet": "parquet", "orc": "orc", "textfile": "csv"}
DEFAULT_TEXT_DELIM = "\x01"
NULL_TEXT = "\\N"


def normalize_format(name: str) -> str:
    """``STORED AS`` name to one of parquet, orc, textfile."""
    key = name.strip().lower()
    if key in ("text", "textfile"):
        return "textfile"
    if key not in FORMATS:
        raise UnsupportedError(f"STORED AS {name.upper()} is not supported: use PARQUET, ORC or "
                               "TEXTFILE")
    return key


def _text_options(table: Table) -> dict[str, str]:
    return {"sep": table.field_delim or DEFAULT_TEXT_DELIM, "nullValue": NULL_TEXT,
            "quote": "", "escape": "\\", "emptyValue": "", "header": "false"}


def reader(spark: SparkSession, table: Table) -> DataFrameReader:
    r = spark.read.format(FORMATS[table.format])
    if table.format == "textfile":
        r = r.options(**_text_options(table))
    return r


def writer(df: DataFrame, table: Table) -> DataFrameWriter:
    w = df.write.format(FORMATS[table.format])
    if table.format == "textfile":
        w = w.options(**_text_options(table))
    return w
