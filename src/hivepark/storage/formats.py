"""File formats: how Spark reads and writes each STORED AS format with Hive's conventions.

Parquet and ORC use Spark's readers. TEXTFILE follows Hive's LazySimpleSerDe: one line per
row, fields split on the table's delimiter (``\\x01`` by default), ``\\N`` for NULL, an empty
field is the empty string, a missing trailing field or a value that does not parse as the
column's type is NULL. It is read with Spark's text source and split with Spark expressions,
so no row passes through Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter, SparkSession
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
#: LazySimpleSerDe's NULL text of a TEXTFILE table (ROW FORMAT DELIMITED NULL DEFINED AS, a SerDe or
#: table property), kept among the table's properties; ``\N`` without it
NULL_FORMAT = "serialization.null.format"


#: LazySimpleSerDe's other properties of a TEXTFILE table (ROW FORMAT DELIMITED COLLECTION ITEMS
#: TERMINATED BY, MAP KEYS TERMINATED BY, ESCAPED BY, or a SerDe or table property), kept among the
#: table's properties under Hive's names (``colelction.delim`` is Hive's own spelling,
#: serdeConstants.COLLECTION_DELIM), each one character; Hive's defaults without them
COLLECTION_DELIM = "colelction.delim"
MAPKEY_DELIM = "mapkey.delim"
ESCAPE_DELIM = "escape.delim"
#: ``true``: with an escape character, a string's ``\r`` and ``\n`` are written as the escape then
#: ``r`` / ``n`` (LazySimpleSerDe's ``serialization.escape.crlf``; they are read back so either way)
ESCAPE_CRLF = "serialization.escape.crlf"
SERDE_DELIMITERS = (COLLECTION_DELIM, MAPKEY_DELIM, ESCAPE_DELIM)


def null_text(table: Table) -> str:
    """The text a TEXTFILE table's files hold for NULL (and read as NULL)."""
    return table.properties.get(NULL_FORMAT, NULL_TEXT)


#: LazySerDeParameters.collectSeparators: the separators of the nesting levels below a MAP's key
#: (level 4 on), after the field delimiter, the collection items' and a MAP key's; Hive's first 8
#: are the ones it escapes
_DEEPER_SEPARATORS = (*range(4, 9), 11, *range(14, 27), *range(28, 32), *range(128, 256))


@dataclass(frozen=True)
class TextSerDe:
    """How LazySimpleSerDe writes and reads a TEXTFILE table's lines: ``separators[i]`` splits
    nesting level ``i + 1`` (1: the fields; 2: an ARRAY's items, a MAP's entries, a STRUCT's
    fields; 3: a MAP's key from its value; deeper levels Hive's fixed bytes), ``null`` the NULL
    text, ``escape`` the escape character (None: none).

    With an escape character, Hive writes it before each byte of a string (STRING, VARCHAR,
    CHAR) that is one of the first 8 separators or the escape itself (LazyUtils.writeEscaped;
    ``\\r`` and ``\\n`` as escape + ``r`` / ``n`` with ``escape_crlf``), does not split on an escaped
    separator at any level, and reads a string's escape + ``r`` as ``\\r``, + ``n`` as ``\\n``, + any
    other character as that character (LazyUtils.copyAndEscapeStringDataToText); other types'
    text is neither escaped nor unescaped."""

    separators: tuple[str, ...]
    null: str = NULL_TEXT
    escape: str | None = None
    escape_crlf: bool = False

    def separator(self, level: int) -> str:
        return self.separators[min(level, len(self.separators)) - 1]

    @property
    def escaped(self) -> frozenset[str]:
        """The characters written with the escape before them (LazySerDeParameters.needsEscape)."""
        return frozenset({*self.separators[:8], self.escape}) if self.escape is not None else frozenset()

    def split(self, text: str, level: int) -> str:
        """Spark SQL: ``text`` split on its level's separator, an escaped one not splitting."""
        sep = self.separator(level)
        if self.escape is None:
            return f"split({text}, {render_literal(re.escape(sep))}, -1)"
        s, e = _regex_char(sep), _regex_char(self.escape)
        # each match: a separator, then the item: escaped pairs and other characters (a lone
        # escape at the end its own), so an item ends at the next unescaped separator
        item = f"(?s){s}((?:{e}.|[^{s}{e}])*+(?:{e}\\z)?)"
        return f"regexp_extract_all(concat({render_literal(sep)}, {text}), {render_literal(item)}, 1)"

    def unescape(self, text: str) -> str:
        """Spark SQL: a string's text as Hive reads it (escape + r, n, or any character)."""
        if self.escape is None:
            return text
        e = self.escape
        r = _regex_char(e)
        tokens = f"regexp_extract_all({text}, {render_literal(f'(?s){r}.|[^{r}]+|{r}')}, 0)"
        pair = (f"CASE WHEN esc_t = {render_literal(e + 'r')} THEN {render_literal(chr(13))} "
                f"WHEN esc_t = {render_literal(e + 'n')} THEN {render_literal(chr(10))} "
                f"WHEN length(esc_t) = 2 AND left(esc_t, 1) = {render_literal(e)} THEN substring(esc_t, 2) "
                "ELSE esc_t END")
        return (f"CASE WHEN instr({text}, {render_literal(e)}) = 0 THEN {text} "
                f"ELSE array_join(transform({tokens}, esc_t -> {pair}), '') END")

    def escape_text(self, text: str) -> str:
        """Spark SQL: a string's text as Hive writes it (LazyUtils.writeEscaped)."""
        if self.escape is None:
            return text
        e = self.escape
        crlf = {"\r", "\n"}
        chars = "".join(_regex_char(c) for c in sorted(self.escaped - crlf))
        replacement = ("\\" + e if e in "\\$" else e) + "$0"
        out = f"regexp_replace({text}, {render_literal(f'[{chars}]')}, {render_literal(replacement)})"
        for c, letter in (("\r", "r"), ("\n", "n")):
            if self.escape_crlf or c in self.escaped:
                out = f"replace({out}, {render_literal(c)}, {render_literal(e + letter)})"
        return out


def _regex_char(c: str) -> str:
    """One character as Java regex text, inside or outside a character class."""
    return c if c.isalnum() else "\\" + c


def text_serde(table: Table) -> TextSerDe:
    """The TextSerDe of a TEXTFILE table (:data:`COLLECTION_DELIM` ...: Hive's defaults without
    them)."""
    props = table.properties
    first = (table.field_delim or DEFAULT_TEXT_DELIM, props.get(COLLECTION_DELIM) or "\x02",
             props.get(MAPKEY_DELIM) or "\x03")
    return TextSerDe((*first, *map(chr, _DEEPER_SEPARATORS)), null_text(table), props.get(ESCAPE_DELIM) or None,
                     props.get(ESCAPE_CRLF, "").strip().lower() == "true")


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
    # The columns as Spark SQL for one selectExpr: a Column built in Python costs several Py4J
    # calls per operation, which for a TEXTFILE table of 40 columns was most of a query's time.
    if table.format != "textfile":
        # a DDL string: one call into the JVM (a StructType costs two and a JSON round trip)
        df = _load_paths(r.schema(schema_ddl([*table.columns, *discovered])), paths)
        cut, unpushed = cut_columns(table), orc_unpushed(table)
        if discovered == parts and not cut and not unpushed:
            return df.select("*", *[c.alias(n) for n, c in extra.items()]) if extra else df
        cols = [f"{_unpushed_if(_cut_if(sql_name(c.name), c, cut), c, unpushed)} AS {sql_name(c.name)}"
                for c in table.columns]
    else:
        schema = StructType([StructField(TEXT_LINE, StringType())] + schema_of(discovered).fields)
        df = r.schema(schema).load(list(paths))
        serde = text_serde(table)
        fields = serde.split(sql_name(TEXT_LINE), 1)
        cut = cut_columns(table)
        cols = [f"{_cut_if(_parse_text(f'try_element_at({fields}, {i + 1})', _text_type(c), 2, serde), c, cut)} "
                f"AS {sql_name(c.name)}" for i, c in enumerate(table.columns)]
    if extra:  # computed on each raw row (a hidden column such as _metadata is there only)
        df = df.select("*", *[c.alias(n) for n, c in extra.items()])
    return df.selectExpr(*cols, *_typed_partitions(parts), *[sql_name(n) for n in extra])


#: Table property: the VARCHAR(n) and CHAR(n) columns whose files may hold longer values (or a CHAR's
#: trailing spaces), as a JSON list: ALTER TABLE ... CHANGE / REPLACE COLUMNS gave them that type
#: while the table held files, or files hivepark did not write came in (exec.write.cut_foreign_files).
#: Only these are cut when read: a projection on a column keeps Spark from pushing its filters into
#: the Parquet/ORC reader, and what hivepark writes is cut already.
CUT_COLUMNS = "hivepark.cut.columns"


#: Table property of an ORC table: the types its files may hold for a column besides the column's own,
#: {name: [type, ...]} in JSON: ALTER TABLE ... CHANGE / REPLACE / ADD COLUMNS gave the column another type
#: while the table held files. Spark's ORC reader builds the pushed filter's literals for the file's type,
#: and fails the read (a STRING literal for an INT file column, a DOUBLE one for a DECIMAL) where that
#: type takes another kind of value: such columns are read through a projection (:func:`orc_unpushed`).
FILE_TYPES = "hivepark.file.types"


#: Table property of a Parquet or ORC table: the types its files may hold for the columns REPLACE COLUMNS
#: (or a rename) took out of the metastore, {name: [type, ...]} in JSON (exec/tables._dropped_columns):
#: a column added back under such a name must read those files.
DROPPED_COLUMNS = "hivepark.dropped.columns"


def _orc_pushes_safely(old: str, new: str) -> bool:
    """Whether Spark's ORC filter pushdown takes a literal of type ``new`` for a file column of
    type ``old`` (OrcFilters.castLiteralValue; ORC itself skips a conversion it cannot compare):
    an integer for an integer, a decimal for a decimal, a DOUBLE for a FLOAT, a string for a string."""
    a, b = HiveType.parse(old), HiveType.parse(new)
    if a.spark_ddl == b.spark_ddl or (a.family == "string" and b.family == "string"):
        return True
    if a.is_integral and b.is_integral:
        return True
    return (a.base, b.base) in (("decimal", "decimal"), ("float", "double"))


def orc_unpushed(table: Table) -> frozenset[str]:
    """The columns of an ORC table that :func:`load` reads through a projection, so that no filter
    on them is pushed into Spark's ORC reader (:data:`FILE_TYPES`)."""
    raw = table.properties.get(FILE_TYPES) if table.format == "orc" else None
    if not raw:
        return frozenset()
    held: dict[str, list[str]] = json.loads(raw)
    return frozenset(c.name for c in table.columns
                     if any(not _orc_pushes_safely(t, c.type) for t in held.get(c.name, ())))


def cut_columns(table: Table) -> frozenset[str]:
    """The columns :func:`load` and :func:`read_arrow` read through :func:`read_cut`."""
    raw = table.properties.get(CUT_COLUMNS)
    if not raw:
        return frozenset()
    names = {c.name for c in table.columns if read_cut("x", c.type) != "x"}
    return frozenset(n for n in json.loads(raw) if n in names)


def _unpushed_if(sql: str, column: Column, unpushed: frozenset[str]) -> str:
    """The column's value, as a projection Spark pushes no filter through (``greatest(c, c)`` is
    ``c``; a cut column's projection is one already)."""
    if column.name not in unpushed or sql != sql_name(column.name):
        return sql
    return f"greatest({sql}, {sql})"


def _cut_if(sql: str, column: Column, cut: frozenset[str]) -> str:
    return read_cut(sql, column.type) if column.name in cut else sql


def read_cut(sql: str, hive_type: str | HiveType) -> str:
    """Spark SQL for a column's value (Spark SQL ``sql``) as Hive reads it from a file: a VARCHAR(n)
    or CHAR(n) cut to n characters (HiveVarchar, HiveChar), a CHAR without its trailing spaces (as
    hivepark stores CHAR values), so a file written before ``ALTER TABLE ... CHANGE`` narrowed the
    column reads as one written after (:data:`CUT_COLUMNS`); any other type as it is.

    >>> read_cut("`b`", "varchar(2)"), read_cut("`c`", "char(3)"), read_cut("`s`", "string")
    ('substring(`b`, 1, 2)', 'rtrim(substring(`c`, 1, 3))', '`s`')
    """
    t = HiveType.parse(hive_type)
    if t.base not in ("varchar", "char") or not t.params:
        return sql
    cut = f"substring({sql}, 1, {t.params[0]})"
    return f"rtrim({cut})" if t.base == "char" else cut


def arrow_read_cut(values: pa.ChunkedArray | pa.Array, hive_type: str | HiveType) -> pa.ChunkedArray | pa.Array:
    """:func:`read_cut` over Arrow strings (the in-process reads of :func:`read_arrow`)."""
    t = HiveType.parse(hive_type)
    if t.base not in ("varchar", "char") or not t.params:
        return values
    cut = pc.utf8_slice_codeunits(values, 0, int(t.params[0]))
    return pc.utf8_rtrim(cut, characters=" ") if t.base == "char" else cut


def _as_discovered(key: Column) -> Column:
    """A partition column as Spark's partition discovery is asked to read it: a DECIMAL as
    its directory's text (discovery keeps the text's own scale under the column's, so the
    canonical ``n=12.5`` of a DECIMAL(10,2) would read as 1.25), every other type as itself."""
    return Column(key.name, "string") if key.hive_type.kind == "decimal" else key


def _typed_partitions(parts: Sequence[Column]) -> list[str]:
    """The partition columns typed as in the metastore, as Spark SQL: a DECIMAL read as text is
    cast (NULL for text that is not a number, as Hive reads such a partition value)."""
    return [f"try_cast({sql_name(p.name)} AS {spark_type(p.type)}) AS {sql_name(p.name)}"
            if _as_discovered(p) is not p else sql_name(p.name) for p in parts]


def sql_name(name: str) -> str:
    """A column name as Spark SQL text, back-quoted.

    >>> sql_name("a`b")
    '`a``b`'
    """
    return "`" + name.replace("`", "``") + "`"


# the text source's one column; not "value", which a partition column may be called
TEXT_LINE = "__hivepark_line"


def _is_complex(ddl: str) -> bool:
    return ddl.lower().startswith(("array<", "map<", "struct<"))


def _top_level_split(text: str) -> list[str]:
    """``text`` split on the commas outside any ``<>`` or ``()`` (the items of a type list)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]]


def nested_levels(type_text: str, level: int = 2) -> set[int]:
    """The nesting levels whose separators LazySimpleSerDe writes a value of ``type_text`` with
    (a column's are from level 2: an ARRAY's items, a MAP's entries and a STRUCT's fields on its
    level's, a MAP's key from its value on the next, deeper types one level down each).

    >>> sorted(nested_levels("map<string,array<int>>")), nested_levels("int")
    ([2, 3, 4], set())
    >>> sorted(nested_levels("struct<a:decimal(10,2),b:array<string>>"))
    [2, 3]
    """
    t = type_text.strip()
    low = t.lower()
    if low.startswith("array<") and low.endswith(">"):
        return {level} | nested_levels(t[6:-1], level + 1)
    if low.startswith("map<") and low.endswith(">"):
        key, value = (_top_level_split(t[4:-1]) + [""])[:2]
        return {level, level + 1} | nested_levels(key, level + 2) | nested_levels(value, level + 2)
    if low.startswith("struct<") and low.endswith(">"):
        out = {level}
        for field in _top_level_split(t[7:-1]):
            out |= nested_levels(field.split(":", 1)[-1] if ":" in field else "", level + 1)
        return out
    return set()


def nested_separators(type_text: str, serde: TextSerDe | None = None) -> set[str]:
    """The separators LazySimpleSerDe writes a value of ``type_text`` with (:func:`nested_levels`;
    ``serde`` a table's, Hive's defaults without it).

    >>> sorted(map(ord, nested_separators("map<string,array<int>>"))), nested_separators("int")
    ([2, 3, 4], set())
    """
    serde = serde or text_serde(Table("", "", ()))
    return {serde.separator(level) for level in nested_levels(type_text)}


def _shown_char(c: str) -> str:
    return f"'\\{ord(c):03o}'" if ord(c) < 32 else repr(c)


def check_text_delimiter(table: Table) -> None:
    """Refuses a TEXTFILE table whose lines could not be read back as written: a field
    delimiter that one of its ARRAY, MAP or STRUCT columns' values is written with; two nesting
    levels of one column on the same separator (COLLECTION ITEMS and MAP KEYS TERMINATED BY one
    character, with a MAP column); an escape character that is a separator in use."""
    if table.format != "textfile":
        return
    serde = text_serde(table)
    name = table.qualified_name if table.db else "the directory"
    delim = serde.separator(1)
    clash = [c for c in table.columns if delim in nested_separators(c.type, serde)]
    if clash:
        raise UnsupportedError(
            f"Field delimiter {_shown_char(delim)} of TEXTFILE table {name} is also the separator LazySimpleSerDe "
            f"writes inside the values of its column{'s' if len(clash) > 1 else ''} "
            f"{', '.join(f'{c.name} {c.type}' for c in clash)} (ARRAY items and STRUCT fields on the COLLECTION "
            f"ITEMS separator, {_shown_char(serde.separator(2))}, a MAP's key from its value on the MAP KEYS one, "
            f"{_shown_char(serde.separator(3))}, deeper levels on '\\004', '\\005', ...): every row would be read "
            "back split in the wrong places. Give another field delimiter (FIELDS TERMINATED BY, "
            "'field.delim'; the default '\\001', or ',', '\\t', '|'), or store the table AS PARQUET or ORC.")
    for c in table.columns:
        levels = sorted(nested_levels(c.type))
        seps = [serde.separator(level) for level in levels]
        if len(set(seps)) < len(seps):
            same = next(s for s in seps if seps.count(s) > 1)
            raise UnsupportedError(
                f"Column {c.name} {c.type} of TEXTFILE table {name} would be written with {_shown_char(same)} "
                "between the items of two nesting levels (COLLECTION ITEMS TERMINATED BY and MAP KEYS TERMINATED "
                "BY one character, or one of the fixed bytes '\\004' ... of deeper levels): its values would be "
                "read back split in the wrong places. Give COLLECTION ITEMS TERMINATED BY ('colelction.delim') and "
                "MAP KEYS TERMINATED BY ('mapkey.delim') two characters of their own (the defaults '\\002' and "
                "'\\003'), or store the table AS PARQUET or ORC.")
    if serde.escape is not None:
        used = {delim}.union(*(nested_separators(c.type, serde) for c in table.columns))
        if serde.escape in used or serde.escape in "\r\n":
            raise UnsupportedError(
                f"Escape character {_shown_char(serde.escape)} of TEXTFILE table {name} is also a separator of its "
                "lines (the field delimiter, a COLLECTION ITEMS or MAP KEYS one) or a line end: LazySimpleSerDe "
                "could not tell an escaped character from a separator. Give another ESCAPED BY ('escape.delim'; "
                "usually '\\\\'), or another separator.")


def _text_type(column: Column) -> DataType | str:
    """A column's type as the text functions take it: ARRAY/MAP/STRUCT parsed (a call into the
    JVM), any other its Spark DDL."""
    ddl = spark_type(column.type)
    return _spark_data_type(ddl) if _is_complex(ddl) else ddl


def _spark_data_type(ddl: str) -> DataType:
    parsed: DataType = _parse_datatype_string(ddl)
    return parsed


def _type_sql(typ: DataType) -> str:
    """A Spark type as SQL, its struct fields' names quoted."""
    if isinstance(typ, ArrayType):
        return f"array<{_type_sql(typ.elementType)}>"
    if isinstance(typ, MapType):
        return f"map<{_type_sql(typ.keyType)},{_type_sql(typ.valueType)}>"
    if isinstance(typ, StructType):
        return "struct<" + ",".join(f"{sql_name(f.name)}:{_type_sql(f.dataType)}" for f in typ.fields) + ">"
    return typ.simpleString()


def _parse_text(text: str, typ: DataType | str, level: int, serde: TextSerDe | None = None) -> str:
    """Spark SQL for one field's text (Spark SQL ``text``) as a value of ``typ`` (a DataType, or
    a type that is not ARRAY/MAP/STRUCT as its Spark DDL, which needs no call into the JVM)
    (LazySimpleSerDe): ``\\N`` is NULL, a value that does not parse is NULL, ARRAY/MAP/STRUCT
    split on their level's separators, a string unescaped (:class:`TextSerDe`; ``serde`` a
    table's, Hive's defaults without it).

    >>> print(_parse_text("t", "int", 2))
    try_cast(nullif(t, '\\\\N') AS int)
    """
    serde = serde or text_serde(Table("", "", ()))
    value = f"nullif({text}, {render_literal(serde.null)})"
    x = f"x{level}"  # a lambda's variable, one name per nesting level
    if isinstance(typ, ArrayType):
        items = serde.split(value, level)
        parsed = f"transform({items}, {x} -> {_parse_text(x, typ.elementType, level + 1, serde)})"
        return f"CASE WHEN {value} = '' THEN CAST(array() AS {_type_sql(typ)}) ELSE {parsed} END"
    if isinstance(typ, MapType):
        if serde.escape is None:
            inner = render_literal(re.escape(serde.separator(level + 1)))
            key_text = f"try_element_at(split({x}, {inner}, 2), 1)"
            val_text = f"try_element_at(split({x}, {inner}, 2), 2)"
        else:  # the key ends at the first unescaped separator, the value is the rest (LazyMap)
            key_text = f"element_at({serde.split(x, level + 1)}, 1)"
            val_text = (f"CASE WHEN size({serde.split(x, level + 1)}) > 1 "
                        f"THEN substring({x}, length({key_text}) + 2) END")
        key = _parse_text(key_text, typ.keyType, level + 2, serde)
        val = _parse_text(val_text, typ.valueType, level + 2, serde)
        pairs = f"transform({serde.split(value, level)}, {x} -> named_struct('key', {key}, 'value', {val}))"
        kept = f"filter({pairs}, {x} -> {x}.key IS NOT NULL)"
        return f"CASE WHEN {value} = '' THEN CAST(map() AS {_type_sql(typ)}) ELSE map_from_entries({kept}) END"
    if isinstance(typ, StructType):
        parts = serde.split(value, level)
        fields = ", ".join(f"{render_literal(f.name)}, "
                           f"{_parse_text(f'try_element_at({parts}, {i + 1})', f.dataType, level + 1, serde)}"
                           for i, f in enumerate(typ.fields))
        return f"CASE WHEN {value} IS NULL THEN CAST(NULL AS {_type_sql(typ)}) ELSE named_struct({fields}) END"
    simple = typ if isinstance(typ, str) else _type_sql(typ)
    if simple == "binary":  # LazyBinary.decodeIfNeeded: Base64 text decoded, any other as its bytes
        return f"coalesce(try_to_binary({value}, 'base64'), CAST({value} AS BINARY))"
    if simple == "boolean":  # LazyBoolean: true or false in any case, nothing else (Spark's cast takes 't', 'yes', '1')
        return f"CASE lower({value}) WHEN 'true' THEN true WHEN 'false' THEN false END"
    return serde.unescape(value) if simple == "string" else f"try_cast({value} AS {simple})"


def _format_text(col: str, typ: DataType | str, level: int, serde: TextSerDe) -> str:
    """Spark SQL for a value (Spark SQL ``col``, of ``typ`` as :func:`_parse_text` takes it) as
    LazySimpleSerDe writes it (NULL stays NULL: the caller writes ``serde.null``, as an item's NULL
    is), a string escaped."""
    def item(x: str, t: DataType | str, lvl: int) -> str:
        return f"coalesce({_format_text(x, t, lvl, serde)}, {render_literal(serde.null)})"

    sep = render_literal(serde.separator(level))
    x = f"x{level}"
    if isinstance(typ, ArrayType):
        return f"array_join(transform({col}, {x} -> {item(x, typ.elementType, level + 1)}), {sep})"
    if isinstance(typ, MapType):
        pair = (f"concat({item(f'{x}.key', typ.keyType, level + 2)}, {render_literal(serde.separator(level + 1))}, "
                f"{item(f'{x}.value', typ.valueType, level + 2)})")
        return f"array_join(transform(map_entries({col}), {x} -> {pair}), {sep})"
    if isinstance(typ, StructType):
        fields = ", ".join(item(f"{col}.{sql_name(f.name)}", f.dataType, level + 1) for f in typ.fields)
        return f"CASE WHEN {col} IS NULL THEN NULL ELSE concat_ws({sep}, {fields}) END"
    if (typ if isinstance(typ, str) else _type_sql(typ)) == "binary":  # LazySimpleSerDe: Base64, one line
        return f"replace(base64({col}), {render_literal(chr(13) + chr(10))}, '')"
    text = f"CAST({col} AS STRING)"
    return serde.escape_text(text) if (typ if isinstance(typ, str) else _type_sql(typ)) == "string" else text


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
    names = {c.name for c in table.columns}
    serde = text_serde(table)
    null = render_literal(serde.null)
    fields = ", ".join(f"coalesce({_format_text(sql_name(c.name), _text_type(c), 2, serde)}, {null})"
                       for c in table.columns)
    line = f"concat_ws({render_literal(serde.separator(1))}, {fields}) AS {sql_name(TEXT_LINE)}"
    return df.selectExpr(line, *[sql_name(c) for c in df.columns if c not in names]).write.format("text")


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
        cut = cut_columns(table) & set(schema.names)
        rows = dataset.to_table(columns=schema.names, filter=where) if where is not None and not cut \
            else dataset.to_table(columns=schema.names)
        rows = rows.cast(schema, safe=True)
        if cut:  # VARCHAR(n), CHAR(n) as Hive reads them, then the filter on the values so read
            types = {c.name: c.type for c in table.columns}
            for i, name in enumerate(rows.column_names):
                if name in cut:
                    rows = rows.set_column(i, name, arrow_read_cut(rows.column(i), types[name]))
            if where is not None:
                rows = pads.dataset(rows).to_table(filter=where)
        return rows
    except (pa.ArrowException, OSError, ValueError):
        return None
