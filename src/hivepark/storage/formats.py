"""File formats: how Spark reads and writes each STORED AS format with Hive's conventions.

Parquet and ORC use Spark's readers. TEXTFILE follows Hive's LazySimpleSerDe: one line per
row, fields split on the table's delimiter (``\\x01`` by default), ``\\N`` for NULL, an empty
field is the empty string, a missing trailing field or a value that does not parse as the
column's type is NULL. It is read with Spark's text source and split with Spark expressions,
so no row passes through Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
    _parse_datatype_string,
)

from hivepark.catalog.models import Column, Table
from hivepark.errors import UnsupportedError
from hivepark.expr import render_literal
from hivepark.storage import fs
from hivepark.types import INTEGRAL_BITS, HiveType, hive_allows_type_change

FORMATS = {"parquet": "parquet", "orc": "orc", "textfile": "text"}
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


def spark_type(hive_type: str | HiveType) -> str:
    """A Hive column type as Spark DDL (char/varchar read as string):
    :attr:`hivepark.types.HiveType.spark_ddl`.

    >>> spark_type("VARCHAR(10)"), spark_type("decimal(10, 2)")
    ('string', 'decimal(10,2)')
    """
    return HiveType.parse(hive_type).spark_ddl


def reads_as(fmt: str, old: str | HiveType, new: str | HiveType) -> bool:
    """Whether the table's reader takes a column its files hold as ``old`` for a column of
    type ``new``, each value read as itself (NULL where it does not fit, as Hive reads it), so
    the column may change type without its files being rewritten (tests/storage/
    test_type_changes.py checks every pair against Spark). TEXTFILE parses its text as the
    column's type: any change. ORC: the changes Hive's metastore allows
    (:func:`hivepark.types.hive_allows_type_change`; ORC's schema evolution converts each)
    but a decimal or float to a string type, whose text would differ from the text of the
    same value written after the change.
    Parquet: only Spark's type widening: a wider integer; tinyint, smallint or int to double;
    an integer to a decimal with room for its digits; a decimal to one keeping its integer
    digits and scale; float to double. Spark fails on others, or reads wrong values (a decimal
    read as an integer gives its unscaled digits, an int read as a date a day count)."""
    a, b = HiveType.parse(old), HiveType.parse(new)
    if a.spark_ddl == b.spark_ddl or fmt == "textfile":
        return True
    if fmt == "orc":  # but a decimal or float as text: "1.5" for 1.50, float through double
        return hive_allows_type_change(a, b) and not (b.family == "string" and a.base in ("decimal", "float"))
    if fmt != "parquet":
        return False
    if a.is_integral:
        if b.is_integral:
            return INTEGRAL_BITS[b.base] >= INTEGRAL_BITS[a.base]
        if b.base == "double":
            return a.base != "bigint"
        if b.base == "decimal":
            p, s = b.precision_scale
            return p - s >= (20 if a.base == "bigint" else 10)
        return False
    if a.base == "decimal" and b.base == "decimal":
        (p1, s1), (p2, s2) = a.precision_scale, b.precision_scale
        return s2 >= s1 and p2 - s2 >= p1 - s1
    return a.base == "float" and b.base == "double"


def spark_literal(value: Any, hive_type: str | HiveType) -> str:
    """A value bound to ``hive_type`` (:func:`hivepark.expr.bind.bind_literal`) as a Spark
    SQL literal of that type (dates and timestamps cast from their ISO text).

    >>> spark_literal("2008-04-08", "date"), spark_literal(7, "int")
    ("CAST('2008-04-08' AS date)", '7')
    """
    t = HiveType.parse(hive_type)
    text = render_literal(value)
    if t.family in ("date", "timestamp"):
        return f"CAST({text} AS {t.spark_ddl})"
    return text


def schema_ddl(columns: Sequence[Column]) -> str:
    """The columns as a Spark DDL schema string (``a` INT, `b` STRING``)."""
    return ", ".join(f"`{c.name}` {spark_type(c.type)}" for c in columns)


def schema_of(columns: Sequence[Column]) -> StructType:
    ddl = schema_ddl(columns)
    return cast(StructType, StructType.fromDDL(ddl)) if ddl else StructType([])


def load(spark: SparkSession, table: Table, paths: Sequence[str], base_path: str | None = None,
         extra: Mapping[str, SparkColumn] | None = None) -> DataFrame:
    """One Spark read of ``paths``: the data columns, the partition columns when
    ``base_path`` is given (Hive-layout discovery), then ``extra`` columns computed on each
    raw row (for example from ``_metadata.file_path``)."""
    parts = list(table.partition_keys) if base_path else []
    r = spark.read.format(FORMATS[table.format])
    if base_path:
        r = r.option("basePath", base_path)
    extra = dict(extra or {})
    discovered = [_as_discovered(p) for p in parts]
    if table.format != "textfile":
        # a DDL string: one call into the JVM (a StructType costs two and a JSON round trip)
        df = _load_paths(r.schema(schema_ddl([*table.columns, *discovered])), paths)
        if discovered == parts:
            return df.select("*", *[c.alias(n) for n, c in extra.items()]) if extra else df
        return df.select(*[F.col(f"`{c.name}`") for c in table.columns], *_typed_partitions(parts),
                         *[c.alias(n) for n, c in extra.items()])
    schema = StructType([StructField(TEXT_LINE, StringType())] + schema_of(discovered).fields)
    raw = r.schema(schema).load(list(paths))
    fields = F.split(F.col(TEXT_LINE), re.escape(table.field_delim or DEFAULT_TEXT_DELIM), -1)
    cols = []
    for i, c in enumerate(table.columns):
        text = F.try_element_at(fields, F.lit(i + 1))
        typ = spark_type(c.type)
        if _is_complex(typ):
            cols.append(_parse_text(text, _spark_data_type(typ), 2).alias(c.name))
            continue
        value = F.when(text == F.lit(NULL_TEXT), F.lit(None)).otherwise(text)
        cols.append((value if typ == "string" else value.try_cast(typ)).alias(c.name))
    return raw.select(*cols, *_typed_partitions(parts), *[e.alias(n) for n, e in extra.items()])


def _as_discovered(key: Column) -> Column:
    """A partition column as Spark's partition discovery is asked to read it: a DECIMAL as
    its directory's text (discovery keeps the text's own scale under the column's, so the
    canonical ``n=12.5`` of a DECIMAL(10,2) would read as 1.25), every other type as itself."""
    return Column(key.name, "string") if key.hive_type.kind == "decimal" else key


def _typed_partitions(parts: Sequence[Column]) -> list[SparkColumn]:
    """The partition columns typed as in the metastore: a DECIMAL read as text is cast by
    Spark SQL (NULL for text that is not a number, as Hive reads such a partition value)."""
    return [F.col(f"`{p.name}`").try_cast(spark_type(p.type)).alias(p.name)
            if _as_discovered(p) is not p else F.col(f"`{p.name}`") for p in parts]


# the text source's one column; not "value", which a partition column may be called
TEXT_LINE = "__hivepark_line"


# LazySimpleSerDe's separators of nested values: level 2 (the items of an ARRAY, the entries of
# a MAP, the fields of a STRUCT) is \x02, a MAP's key from its value one level deeper (\x03),
# and so on down (Hive's defaults; field.delim is level 1)
def _separator(level: int) -> str:
    return chr(level)


def _is_complex(ddl: str) -> bool:
    return ddl.lower().startswith(("array<", "map<", "struct<"))


def _spark_data_type(ddl: str) -> DataType:
    parsed: DataType = _parse_datatype_string(ddl)
    return parsed


def _parse_text(text: SparkColumn, typ: DataType, level: int) -> SparkColumn:
    """One field's text as a value of ``typ`` (LazySimpleSerDe): ``\\N`` is NULL, a value
    that does not parse is NULL, ARRAY/MAP/STRUCT split on their level's separators."""
    value = F.when(text == F.lit(NULL_TEXT), F.lit(None)).otherwise(text)
    sep = re.escape(_separator(level))
    if isinstance(typ, ArrayType):
        items = F.split(value, sep, -1)
        parsed = F.transform(items, lambda x: _parse_text(x, typ.elementType, level + 1))
        return F.when(value == F.lit(""), F.array().cast(typ)).otherwise(parsed)
    if isinstance(typ, MapType):
        entries = F.split(value, sep, -1)
        inner = re.escape(_separator(level + 1))
        pairs = F.transform(entries, lambda e: F.struct(
            _parse_text(F.try_element_at(F.split(e, inner, 2), F.lit(1)), typ.keyType, level + 2).alias("key"),
            _parse_text(F.try_element_at(F.split(e, inner, 2), F.lit(2)), typ.valueType, level + 2).alias("value")))
        kept = F.filter(pairs, lambda p: p["key"].isNotNull())
        return F.when(value == F.lit(""), F.create_map().cast(typ)).otherwise(F.map_from_entries(kept))
    if isinstance(typ, StructType):
        parts = F.split(value, sep, -1)
        return F.when(value.isNull(), F.lit(None).cast(typ)).otherwise(F.struct(*[
            _parse_text(F.try_element_at(parts, F.lit(i + 1)), f.dataType, level + 1).alias(f.name)
            for i, f in enumerate(typ.fields)]))
    if isinstance(typ, StringType):
        return value
    return value.try_cast(typ)


def _format_text(col: SparkColumn, typ: DataType, level: int) -> SparkColumn:
    """A value as LazySimpleSerDe writes it (NULL stays NULL: the caller writes ``\\N``)."""
    def item(x: SparkColumn, t: DataType, lvl: int) -> SparkColumn:
        return F.coalesce(_format_text(x, t, lvl), F.lit(NULL_TEXT))

    if isinstance(typ, ArrayType):
        return F.array_join(F.transform(col, lambda x: item(x, typ.elementType, level + 1)), _separator(level))
    if isinstance(typ, MapType):
        return F.array_join(F.transform(F.map_entries(col), lambda e: F.concat(
            item(e["key"], typ.keyType, level + 2), F.lit(_separator(level + 1)),
            item(e["value"], typ.valueType, level + 2))), _separator(level))
    if isinstance(typ, StructType):
        return F.when(col.isNull(), F.lit(None)).otherwise(F.concat_ws(
            _separator(level), *[item(col[f.name], f.dataType, level + 1) for f in typ.fields]))
    return col.cast("string")


def _load_paths(reader: DataFrameReader, paths: Sequence[str]) -> DataFrame:
    """``reader.load(paths)``. PySpark hands a list to the JVM one element per call; many
    paths go as one newline-joined string split in the JVM into the ``String[]`` that
    ``load(String...)`` takes: two calls whatever the number of paths."""
    jreader = getattr(reader, "_jreader", None)
    if len(paths) < 64 or jreader is None or any("\n" in p for p in paths):
        return reader.load(list(paths))
    jvm: Any = reader._spark._sc._jvm
    array = jvm.java.util.regex.Pattern.compile("\n").split("\n".join(paths))
    return reader._df(jreader.load(array))


def writer(df: DataFrame, table: Table) -> DataFrameWriter:
    """A writer for ``df`` (data columns in table order, then any partition columns)."""
    if table.format != "textfile":
        return df.write.format(FORMATS[table.format])
    names = [c.name for c in table.columns]
    ddl = {c.name: spark_type(c.type) for c in table.columns}
    line = F.concat_ws(table.field_delim or DEFAULT_TEXT_DELIM,
                       *[F.coalesce(_format_text(F.col(f"`{n}`"), _spark_data_type(ddl[n]), 2)
                                    if _is_complex(ddl[n]) else F.col(f"`{n}`").cast("string"), F.lit(NULL_TEXT))
                         for n in names])
    rest = [F.col(f"`{c}`") for c in df.columns if c not in names]
    return df.select(line.alias(TEXT_LINE), *rest).write.format("text")


def read_arrow(table: Table, paths: Sequence[str], schema: pa.Schema,
               where: pc.Expression | None = None) -> pa.Table | None:
    """The rows of ``paths`` (a table's Parquet or ORC files) satisfying ``where`` (all rows
    without it), columns of ``schema`` only, read in-process with pyarrow; None when
    pyarrow cannot read them as
    Spark would (TEXTFILE, a column missing from a file or named in another case, a type
    that does not cast exactly), and the caller reads with Spark instead."""
    if table.format not in ("parquet", "orc") or not paths:
        return None if paths else schema.empty_table()
    filesystem, _ = fs.arrow_filesystem(paths[0])
    try:
        # the table's types, not the first file's: a file written before ALTER TABLE ... CHANGE
        # widened a column (int to bigint, float to double) is read as the table's type
        dataset = pads.dataset([fs.arrow_filesystem(p)[1] for p in paths], format=table.format,
                               filesystem=filesystem, schema=schema)
        for fragment in dataset.get_fragments():
            names = set(fragment.physical_schema.names)
            if not all(name in names for name in schema.names):
                return None
        rows = dataset.to_table(columns=schema.names, filter=where) if where is not None \
            else dataset.to_table(columns=schema.names)
        return rows.cast(schema, safe=True)
    except (pa.ArrowException, OSError, ValueError):
        return None
