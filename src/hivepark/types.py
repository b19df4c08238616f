"""Hive types: a type's text parsed once into an immutable value that answers every
question the rest of hivepark asks of a type.

A :class:`HiveType` knows

* its **family** (how it compares: numeric, string, date, timestamp, boolean, other) and its
  **kind** (how values are stored and ordered: int, decimal, float32, float64, string, char,
  date, timestamp, boolean, other);
* **binding** a query literal to it (:meth:`HiveType.bind_literal`): the value hivepark
  compares with, only when the comparison provably means what Spark SQL means;
* the **canonical text of a partition value** (:meth:`HiveType.partition_text`), the same for
  ``INSERT ... PARTITION (flag=true)``, ``Warehouse.insert(..., partition={"flag": True})``, a
  dynamic partition insert, LOAD DATA, ADD PARTITION and MSCK REPAIR: Hive's text of the value
  converted to the column's type (what Spark's ``CAST(CAST(v AS type) AS STRING)`` gives,
  except a DECIMAL's, which is Hive's ``HiveDecimal`` text without trailing zeros); a value
  that does not fit the type raises :class:`PartitionValueError`, which says why;
* **decoding** a stored value (:meth:`HiveType.decode`) into the Python value that bound
  literals compare with, so that stored values order like the type.

This module is pure Python (no pyspark, sqlglot or sqlalchemy): every layer may import it.

Example:
    >>> t = HiveType.parse("DECIMAL(5, 2)")
    >>> t.text, t.family, t.kind, t.partition_text("1.50")
    ('decimal(5,2)', 'numeric', 'decimal', '1.5')
    >>> HiveType.parse("boolean").partition_text(True), HiveType.parse("int").partition_text("007")
    ('true', '7')
"""

from __future__ import annotations

import datetime
import math
import re
import struct
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

Value = Any
"""A literal: bool, int, float, Decimal, str, datetime.date or datetime.datetime."""

INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_ALIASES = {"integer": "int", "real": "float", "double precision": "double", "text": "string",
            "long": "bigint", "short": "smallint", "byte": "tinyint", "bool": "boolean",
            "numeric": "decimal", "dec": "decimal"}
_KINDS = {**{b: "int" for b in INTEGRAL_BITS}, "decimal": "decimal", "float": "float32",
          "double": "float64", "string": "string", "varchar": "string", "char": "char",
          "date": "date", "timestamp": "timestamp", "boolean": "boolean"}
_FAMILIES = {"int": "numeric", "decimal": "numeric", "float32": "numeric", "float64": "numeric",
             "string": "string", "char": "string", "date": "date", "timestamp": "timestamp",
             "boolean": "boolean"}
_TRUE_WORDS = ("true", "t", "yes", "y", "1")
_FALSE_WORDS = ("false", "f", "no", "n", "0")
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_REAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
_LOOSE_DATE = re.compile(r"\s*([+-]?\d{4,})-(\d{1,2})-(\d{1,2})(?:[T ].*)?\s*$")
_FLOAT_EXACT = 2**24
_WIDE = Context(prec=80)
_DOUBLE_EXACT = 2**53


class PartitionValueError(ValueError):
    """A partition value that is not one of its column's type: ``reason`` says why, in words a
    user can act on (``out of range: a tinyint holds -128 to 127``)."""

    def __init__(self, value: Value, type_text: str, reason: str) -> None:
        super().__init__(f"'{value}' is not a valid {type_text} value ({reason})")
        self.value = value
        self.type_text = type_text
        self.reason = reason


@dataclass(frozen=True)
class HiveType:
    """One Hive column type. Build with :meth:`parse`; instances are cached and immutable.

    ``base`` is the lower-case type name without parameters (aliases resolved: ``integer``
    is ``int``), ``params`` its numeric parameters (``(10, 2)`` for ``decimal(10,2)``), and
    ``text`` the canonical text Hive writes (``decimal(10,2)``, ``array<int>``).
    """

    text: str
    base: str
    params: tuple[int, ...] = ()

    @staticmethod
    def parse(text: str | HiveType) -> HiveType:
        """The type a column declaration names (case and spaces do not matter).

        >>> HiveType.parse("Integer"), HiveType.parse(" varchar( 5 )").text
        (HiveType(text='int', base='int', params=()), 'varchar(5)')
        """
        if isinstance(text, HiveType):
            return text
        return _parse(text)

    # -- classification ------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """How values are stored and ordered: int, decimal, float32, float64, string (also
        varchar), char, date, timestamp, boolean, or other (complex and unknown types)."""
        return _KINDS.get(self.base, "other")

    @property
    def family(self) -> str:
        """How values compare: numeric, string, date, timestamp, boolean or other."""
        return _FAMILIES.get(self.kind, "other")

    @property
    def is_integral(self) -> bool:
        return self.base in INTEGRAL_BITS

    @property
    def is_scalar(self) -> bool:
        return self.kind != "other"

    @property
    def precision_scale(self) -> tuple[int, int]:
        """A decimal's (precision, scale): Hive's default is decimal(10,0)."""
        p = self.params[0] if self.params else 10
        s = self.params[1] if len(self.params) > 1 else 0
        return p, s

    def integral_range(self) -> tuple[int, int] | None:
        """``(lowest, highest)`` of an integral type, else None."""
        bits = INTEGRAL_BITS.get(self.base)
        if bits is None:
            return None
        half = 2 ** (bits - 1)
        return -half, half - 1

    @property
    def spark_ddl(self) -> str:
        """The type as Spark DDL: char/varchar read as string (Spark pads nothing)."""
        return re.sub(r"\b(var)?char\s*\(\s*\d+\s*\)", "string", self.text)

    # -- binding query literals ----------------------------------------------------------
    def bind_literal(self, value: Value) -> Value | None:
        """The value to compare a column of this type with, or None when not provably safe.

        Spark's coercion rules relied on (``TypeCoercion`` / ``AnsiTypeCoercion``): a plain
        integer string inside an integral column's range is exact in both modes; string vs
        DOUBLE compares as DOUBLE; vs FLOAT only small integers are exact; string vs DECIMAL
        compares as DOUBLE, exact only for ``decimal(p, 0)``, ``p <= 15``; a decimal literal vs
        DOUBLE or FLOAT compares as DOUBLE (``1.1`` is the double 1.1); a ``YYYY-MM-DD``
        string casts to the same DATE; a numeric literal against a string column casts the
        column (``'01' = 1`` is true), so it is never bound; CHAR pads, so it is left to Spark.

        >>> t = HiveType.parse("int")
        >>> t.bind_literal("10"), HiveType.parse("string").bind_literal(1), t.bind_literal("1.5")
        (10, None, None)
        >>> HiveType.parse("date").bind_literal(datetime.date(2008, 4, 8))
        '2008-04-08'
        >>> HiveType.parse("double").bind_literal(Decimal("1.1"))
        1.1
        """
        fam = self.family
        if fam == "numeric":
            return self._bind_numeric(value)
        if fam == "string":
            return value if isinstance(value, str) and self.kind != "char" else None
        if fam == "date":
            return _bind_date(value)
        if fam == "timestamp":
            return _bind_timestamp(value)
        if fam == "boolean":
            return value if isinstance(value, bool) else None
        return None

    def bind_as_double(self, value: Value) -> float | None:
        """The double a literal is compared as where hivepark runs Hive's comparison of a
        numeric column with a string that does not bind exactly (``hr = '5.0'``, ``hr IN
        ('1.5', 2)``): ``sql.analyzer.hive_comparisons`` makes Spark compare
        ``TRY_CAST(x AS DOUBLE)`` on every side. A plain decimal number text (as Java's
        ``parseDouble`` and Python's ``float`` read it alike, correctly rounded) or a number
        is its double; None for any other value, a non-numeric column and a value beyond the
        double range (left to Spark).

        >>> t = HiveType.parse("int")
        >>> t.bind_as_double("5.0"), t.bind_as_double("-1e2"), t.bind_as_double(2), t.bind_as_double(" 5")
        (5.0, -100.0, 2.0, None)
        >>> HiveType.parse("string").bind_as_double("5.0"), t.bind_as_double("1e999")
        (None, None)
        """
        if self.family != "numeric" or isinstance(value, bool):
            return None
        if isinstance(value, str):
            if not _REAL.fullmatch(value):
                return None
        elif not isinstance(value, (int, float, Decimal)):
            return None
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None

    def binds_unchanged(self, values: Any) -> bool:
        """True when :meth:`bind_literal` returns every value as it is (integers in an
        integral type's range, strings for STRING/VARCHAR), so a large set needs no
        per-value work.

        >>> HiveType.parse("int").binds_unchanged([1, 2]), HiveType.parse("int").binds_unchanged([2**40])
        (True, False)
        """
        rng = self.integral_range()
        if rng is not None:
            lo, hi = rng
            return all(type(v) is int and lo <= v <= hi for v in values)
        if self.kind == "string":
            return all(type(v) is str for v in values)
        return False

    def _bind_numeric(self, value: Value) -> Value | None:
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, Decimal)) and _spark_precision(value) > MAX_DECIMAL_PRECISION:
            return None  # no Spark literal: Spark's parser refuses it, which Spark's filter must do
        if isinstance(value, Decimal) and self.kind in ("float32", "float64"):
            number = float(value)  # Spark compares DOUBLE/FLOAT with a decimal as DOUBLE
            return number if math.isfinite(number) else None
        if isinstance(value, (int, float, Decimal)):
            return value
        if not isinstance(value, str):
            return None
        if self.kind == "float64":
            if not _REAL.fullmatch(value):
                return None
            number = float(value)
            return number if math.isfinite(number) else None
        if not _INTEGER.fullmatch(value):
            return None
        n = int(value)
        rng = self.integral_range()
        if rng is not None:
            return n if rng[0] <= n <= rng[1] else None
        if self.kind == "float32":
            return n if abs(n) <= _FLOAT_EXACT else None
        if self.kind == "decimal":  # compared as DOUBLE: exact only for small integral decimals
            precision, scale = self.precision_scale
            return n if scale == 0 and precision <= 15 and len(str(abs(n))) <= precision else None
        return None

    # -- partition values ----------------------------------------------------------------
    def partition_text(self, value: Value) -> str | None:
        """The canonical text of a partition value of this type; None for the default
        partition (NULL, ``''`` or ``__HIVE_DEFAULT_PARTITION__``, given so or as the text a
        value of a string type becomes), as a dynamic insert writes them
        (``exec.write.partition_text_sql``).

        The text is Hive's: the value converted to the type (Hive's ``hive.typecheck.on.insert``
        conversion), then written as Hive writes it. For every type but DECIMAL that is Spark's
        ``CAST(CAST(value AS type) AS STRING)`` too. A DECIMAL is rounded half up to its scale
        and written as Hive's ``HiveDecimal`` writes it: plain digits, no trailing zeros
        (``12.50`` is ``12.5``, ``7.00`` is ``7``), so a static value, a dynamic value and a value
        given from Python name the same partition. A VARCHAR(n) or CHAR(n) value is cut to n
        characters (HiveVarchar, HiveChar), a CHAR value's trailing spaces stripped, as a CHAR
        column's value is stored (``'a '`` is ``'a'``). Values Hive would wrap or keep (TINYINT 300,
        DOUBLE 1e400) are refused instead.

        Raises:
            PartitionValueError: the value is not one of this type (``reason`` says why).

        >>> HiveType.parse("bigint").partition_text(" -007"), HiveType.parse("double").partition_text(2)
        ('-7', '2.0')
        >>> HiveType.parse("timestamp").partition_text("2024-01-05T10:00:00.500")
        '2024-01-05 10:00:00.5'
        >>> HiveType.parse("boolean").partition_text("TRUE"), HiveType.parse("string").partition_text(True)
        ('true', 'true')
        >>> HiveType.parse("decimal(10,2)").partition_text("12.50"), HiveType.parse("decimal(10,2)").partition_text(7)
        ('12.5', '7')
        >>> HiveType.parse("char(3)").partition_text("a b c"), HiveType.parse("char(3)").partition_text("   ") is None
        ('a b', True)
        >>> HiveType.parse("tinyint").partition_text(300)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hivepark.types.PartitionValueError: '300' is not a valid tinyint value (out of range: ...)
        """
        if value is None or value == "" or value == DEFAULT_PARTITION_NAME:
            return None
        kind = self.kind
        if kind in ("string", "char"):
            text = _spark_string(value)
            if self.base in ("varchar", "char") and self.params:  # Hive's HiveVarchar, HiveChar: cut to the length
                text = text[: self.params[0]]
            if self.base == "char":  # HiveChar's stripped value, as a CHAR column's value is stored
                text = text.rstrip(" ")
            return None if text in ("", DEFAULT_PARTITION_NAME) else text
        converter = _PARTITION_TEXT.get(kind)
        if converter is None:
            raise ValueError(f"a {self.text} column cannot be a partition key")
        try:
            return converter(self, value)
        except _Unfit as e:
            raise PartitionValueError(value, self.text, str(e)) from None
        except (ValueError, InvalidOperation, OverflowError, TypeError):
            raise PartitionValueError(value, self.text, self._expected()) from None

    def is_canonical_partition_text(self, text: str | None) -> bool:
        """Whether ``text`` (a stored partition value) is exactly :meth:`partition_text` of
        itself: a value of this type in its canonical text (the default partition is).

        >>> t = HiveType.parse("tinyint")
        >>> [t.is_canonical_partition_text(v) for v in ("12", "300", "012", None)]
        [True, False, False, True]
        """
        return _is_canonical(self, text)

    def _expected(self) -> str:
        """What a value of this type looks like, for error messages."""
        kind = self.kind
        if kind == "int":
            return f"not a whole number: {_a(self.text)} is written like {self.example_literal()}"
        if kind in ("decimal", "float32", "float64"):
            return f"not a number: {_a(self.text)} is written like {self.example_literal()}"
        if kind == "boolean":
            return "a boolean is true or false"
        if kind == "date":
            return "a date is written yyyy-mm-dd, and must exist in the calendar"
        if kind == "timestamp":
            return "a timestamp is written yyyy-mm-dd hh:mm:ss[.fffffffff]"
        return f"not {_a(self.text)}"

    def example_literal(self) -> str:
        """A HiveQL literal of this type, for the fixes error messages suggest.

        >>> HiveType.parse("int").example_literal(), HiveType.parse("decimal(10,2)").example_literal()
        ('1', '12.5')
        >>> HiveType.parse("date").example_literal(), HiveType.parse("boolean").example_literal()
        ("'2024-01-31'", 'true')
        """
        kind = self.kind
        if kind == "int":
            return "1"
        if kind == "decimal":
            precision, scale = self.precision_scale
            return "12.5" if scale and precision - scale >= 2 else "0.5" if scale else "1"
        if kind in ("float32", "float64"):
            return "1.5"
        if kind == "boolean":
            return "true"
        if kind == "date":
            return "'2024-01-31'"
        if kind == "timestamp":
            return "'2024-01-31 10:00:00'"
        return "'x'"

    def decode(self, text: str | None) -> Value | None:
        """A stored (canonical) value as the Python value bound literals compare with: int,
        float, Decimal, bool, a naive datetime for a timestamp (as :meth:`bind_literal` gives),
        or the text itself (dates as ISO text order like dates). None for NULL and for text
        that is not of this type (it reads as NULL in Spark).

        >>> HiveType.parse("int").decode("30"), HiveType.parse("date").decode("2024-01-02")
        (30, '2024-01-02')
        >>> HiveType.parse("timestamp").decode("2024-01-02 10:00:00.5")
        datetime.datetime(2024, 1, 2, 10, 0, 0, 500000)
        >>> HiveType.parse("boolean").decode("true"), HiveType.parse("int").decode("x") is None
        (True, True)
        """
        if text is None:
            return None
        try:
            return self._decode(text)
        except (ValueError, InvalidOperation, ArithmeticError):
            return None

    def _decode(self, text: str) -> Value | None:
        kind = self.kind
        if kind == "int":
            return int(text.strip())
        if kind in ("float32", "float64"):
            f = float(text)
            return _float32(f) if kind == "float32" and not math.isnan(f) else f
        if kind == "decimal":
            d = Decimal(text.strip())
            return d if d.is_finite() else None
        if kind == "boolean":
            low = text.strip().lower()
            return True if low in _TRUE_WORDS else False if low in _FALSE_WORDS else None
        if kind == "date":
            return _canonical_date(text)
        if kind == "timestamp":
            return _bind_timestamp(datetime.datetime.fromisoformat(text.strip()))
        if kind in ("string", "char"):
            return text
        return None


@lru_cache(maxsize=1024)
def _parse(text: str) -> HiveType:
    raw = " ".join(text.strip().lower().split())
    head = re.split(r"[(<]", raw, maxsplit=1)[0].strip()
    base = _ALIASES.get(head, head)
    params: tuple[int, ...] = ()
    m = re.match(r"^[a-z ]+\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$", raw)
    if m:
        params = tuple(int(g) for g in m.groups() if g is not None)
    if "<" in raw:
        canonical = re.sub(r"\s*([<>,:])\s*", r"\1", raw)
        canonical = re.sub(r"\binteger\b", "int", canonical)
    elif params:
        canonical = f"{base}({','.join(map(str, params))})"
    else:
        canonical = base
    return HiveType(canonical, base, params)


@lru_cache(maxsize=65536)
def _is_canonical(t: HiveType, text: str | None) -> bool:
    if text is None:
        return True
    try:
        return t.partition_text(text) == text
    except ValueError:
        return False


# Hive's metastore order of numeric types: a column changes only to a later one (ColumnType)
_NUMERIC_ORDER = {"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4, "decimal": 5, "float": 6, "double": 7}
_STRING_BASES = frozenset({"string", "varchar", "char"})
_DATETIME_BASES = frozenset({"date", "timestamp"})


def hive_allows_type_change(old: str | HiveType, new: str | HiveType) -> bool:
    """Whether Hive's metastore lets a column of type ``old`` become ``new`` while
    ``hive.metastore.disallow.incompatible.col.type.changes`` is true (its default): the same
    type name (parameters and element types do not count), one string type to another, a
    number to a later one of tinyint, smallint, int, bigint, decimal, float, double, and a
    number, date or timestamp to a string type.

    >>> [hive_allows_type_change(a, b) for a, b in [("int", "bigint"), ("bigint", "int"),
    ...     ("int", "string"), ("string", "int"), ("decimal(5,2)", "decimal(3,1)"), ("date", "timestamp")]]
    [True, False, True, False, True, False]
    """
    a, b = HiveType.parse(old).base, HiveType.parse(new).base
    if a == b or (a in _STRING_BASES and b in _STRING_BASES) or a == "void":
        return True
    if a in _NUMERIC_ORDER and b in _NUMERIC_ORDER:
        return _NUMERIC_ORDER[a] < _NUMERIC_ORDER[b]
    return b in _STRING_BASES and (a in _NUMERIC_ORDER or a in _DATETIME_BASES)


#: Hive's limits of a declared type's parameters (HiveDecimal, HiveChar, HiveVarchar)
_SIZED_TYPE = re.compile(r"\b(decimal|char|varchar)\((\d+)(?:,(\d+))?\)")
_MAX_CHAR_LENGTH = 255
_MAX_VARCHAR_LENGTH = 65535


def type_parameter_problem(hive_type: str | HiveType) -> str | None:
    """Why Hive refuses a declared type's parameters (its own words, then what to write
    instead), or None: a DECIMAL's precision from 1 to 38 and its scale at most the precision, a
    CHAR's length from 1 to 255, a VARCHAR's from 1 to 65535, nested types' too. A column of such
    a type is refused at CREATE TABLE by Hive; Spark fails every read and write of it.

    >>> type_parameter_problem("decimal(39,0)")  # doctest: +ELLIPSIS
    'Decimal precision out of allowed range [1,38] in decimal(39,0): ...'
    >>> type_parameter_problem("array<char(0)>")  # doctest: +ELLIPSIS
    'Char length 0 out of allowed range [1, 255] in char(0): ...'
    >>> [type_parameter_problem(t) for t in ("decimal(38,38)", "struct<a:varchar(65535)>", "char(255)")]
    [None, None, None]
    """
    for m in _SIZED_TYPE.finditer(HiveType.parse(hive_type).text):
        base, first, second = m.group(1), int(m.group(2)), m.group(3)
        if base == "decimal":
            scale = int(second) if second is not None else 0
            if not 1 <= first <= MAX_DECIMAL_PRECISION:
                why = f"Decimal precision out of allowed range [1,{MAX_DECIMAL_PRECISION}]"
            elif scale > first:
                why = "Decimal scale must be less than or equal to precision"
            else:
                continue
            fix = (f"give decimal(p,s) with p from 1 to {MAX_DECIMAL_PRECISION} and s at most p "
                   "(DOUBLE or STRING hold wider numbers)")
        else:
            top = _MAX_CHAR_LENGTH if base == "char" else _MAX_VARCHAR_LENGTH
            if 1 <= first <= top:
                continue
            why = f"{base.capitalize()} length {first} out of allowed range [1, {top}]"
            fix = f"give {base}(1) to {base}({top}), or STRING for longer text"
        return f"{why} in {m.group(0)}: {fix}"
    return None


def type_family(hive_type: str | HiveType) -> str:
    """The comparison family of a type: numeric, string, date, timestamp, boolean, other.

    >>> type_family("decimal(10,2)"), type_family("VARCHAR(5)"), type_family("date")
    ('numeric', 'string', 'date')
    """
    return HiveType.parse(hive_type).family


# -- helpers ---------------------------------------------------------------------------------

#: Spark's largest DECIMAL precision; a numeric literal of more digits is refused by Spark's parser
#: (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)
MAX_DECIMAL_PRECISION = 38


def _spark_precision(value: int | Decimal) -> int:
    """The precision of the DECIMAL Spark makes of a numeric literal (``DecimalType.fromDecimal``:
    its digits, at least its scale).

    >>> _spark_precision(Decimal("0.001")), _spark_precision(Decimal("12.50")), _spark_precision(-10**40)
    (3, 4, 41)
    """
    if isinstance(value, int):
        return len(str(abs(value)))
    _, digits, exponent = value.as_tuple()
    scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return max(len(digits), scale)


def _bind_date(value: Value) -> str | None:
    if isinstance(value, datetime.datetime):
        return None
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        return spark_string_date(value)
    return None


_TRIMMED = "".join(map(chr, (*range(33), *range(127, 160))))  # UTF8String.trimAll: whitespace, ISO controls


def spark_string_date(text: str) -> str | None:
    """The date Spark casts ``text`` to (its ``stringToDate``), as ISO text: ``yyyy``,
    ``yyyy-[m]m``, ``yyyy-[m]m-[d]d`` optionally followed by a space or ``T`` and anything,
    trimmed; None where Spark gives NULL (or, under ANSI, fails) and for years Python's dates
    cannot hold, which callers leave to Spark.

    >>> spark_string_date("2024-1-6"), spark_string_date(" 2024-01-06T10:00 "), spark_string_date("2024")
    ('2024-01-06', '2024-01-06', '2024-01-01')
    >>> spark_string_date("2024-02-30"), spark_string_date("2024-1-6x"), spark_string_date("24-01-06")
    (None, None, None)
    """
    s = text.strip(_TRIMMED)
    if s[:1] in ("+", "-"):
        if s[0] == "-":
            return None  # years before 1 (Python's dates start at 1)
        s = s[1:]
    end = len(s)
    for i, ch in enumerate(s):
        if ch in " T":
            end = i
            break
    segments = s[:end].split("-")
    if len(segments) > 3 or (len(segments) < 3 and end < len(s)):
        return None  # yyyy and yyyy-[m]m are the whole text
    if not all(seg and all("0" <= ch <= "9" for ch in seg) for seg in segments):
        return None
    if not 4 <= len(segments[0]) <= 7 or any(len(seg) > 2 for seg in segments[1:]):
        return None
    year, month, day = (*map(int, segments), 1, 1)[:3]
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:
        return None


_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?")


def _bind_timestamp(value: Value) -> datetime.datetime | None:
    """A TIMESTAMP literal (naive: the session's wall clock) or a full ISO timestamp string
    (Spark casts it to the same instant); a date or a partial string is left to Spark.

    >>> _bind_timestamp("2026-01-05 10:00:00"), _bind_timestamp("2026-01-05")
    (datetime.datetime(2026, 1, 5, 10, 0), None)
    """
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo is None else None
    if isinstance(value, str) and _ISO_TIMESTAMP.fullmatch(value):
        try:
            return datetime.datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def _canonical_date(raw: str) -> str | None:
    m = _LOOSE_DATE.match(raw)
    if not m:
        return None
    try:
        return datetime.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
    except ValueError:
        return None


def _float32(f: float) -> float:
    try:
        return float(struct.unpack("f", struct.pack("f", f))[0])
    except OverflowError:
        return math.copysign(math.inf, f)


def _java_double(f: float, digits: int = 17) -> str:
    """Java's ``Double.toString`` (what Spark's cast to string prints) for finite values."""
    if f == 0:
        return "-0.0" if math.copysign(1, f) < 0 else "0.0"
    text = repr(f) if digits == 17 else _shortest_float32(f)
    if 1e-3 <= abs(f) < 1e7:
        d = Decimal(text)
        s = format(d, "f")
        return s if "." in s else s + ".0"
    mantissa, _, exp = f"{Decimal(text):E}".partition("E")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0")
        mantissa = mantissa + "0" if mantissa.endswith(".") else mantissa
    else:
        # Java prints two digits at least, and picks the two closest to the exact value
        # (5e-324 is 4.9E-324), when they still name the same number
        two, _, two_exp = f"{Decimal(f):.1E}".partition("E")
        same = float(f"{two}E{two_exp}")
        if (same if digits == 17 else _float32(same)) == f:
            mantissa, exp = two, two_exp
        else:
            mantissa += ".0"
    return f"{mantissa}E{int(exp)}"


def _shortest_float32(f: float) -> str:
    for p in range(1, 10):
        s = f"{f:.{p}g}"
        if _float32(float(s)) == f:
            return s
    return repr(f)


def _spark_string(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return _timestamp_text(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, float):
        return _java_double(value)
    return str(value)


def _timestamp_text(ts: datetime.datetime) -> str:
    """Spark's text of a timestamp: seconds always, fraction without trailing zeros."""
    if ts.tzinfo is not None:
        raise ValueError("a timestamp with a time zone")
    text = ts.replace(microsecond=0).isoformat(sep=" ")  # four-digit years, as Spark writes
    if ts.microsecond:
        text += "." + f"{ts.microsecond:06d}".rstrip("0")
    return text


def _a(word: str) -> str:
    """``word`` with its indefinite article: ``an int``, ``a tinyint``."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


class _Unfit(ValueError):
    """A converter's reason a value does not fit its type (the message is the reason)."""


def _text_int(t: HiveType, value: Value) -> str:
    if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
        raise ValueError(value)
    n = int(value.strip()) if isinstance(value, str) else int(value)
    rng = t.integral_range()
    assert rng is not None
    if not rng[0] <= n <= rng[1]:
        raise _Unfit(f"out of range: {_a(t.text)} holds {rng[0]} to {rng[1]}")
    return str(n)


def _text_decimal(t: HiveType, value: Value) -> str:
    """Hive's HiveDecimal text of ``value`` as a ``t``: rounded half up to the scale (as Spark
    and Hive's enforcePrecisionScale round), refused when the integer digits exceed
    precision - scale, then plain digits without trailing zeros (``0`` for zero)."""
    if isinstance(value, bool):
        raise ValueError(value)
    d = Decimal(value.strip()) if isinstance(value, str) else Decimal(value)
    if not d.is_finite():
        raise ValueError(value)
    precision, scale = t.precision_scale
    # 38 digits need more than the default context's 28
    q = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
    if len(q.as_tuple().digits) > precision and q != 0:
        whole = precision - scale
        holds = (f"at most {whole} digit{'s' if whole != 1 else ''} before the point" if whole
                 else "only values between -1 and 1")
        raise _Unfit(f"out of range: {_a(t.text)} holds {holds}")
    if q == 0:
        return "0"
    text = format(q, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _text_float(t: HiveType, value: Value) -> str:
    if isinstance(value, bool):
        raise ValueError(value)
    f = float(value.strip()) if isinstance(value, str) else float(value)
    if math.isnan(f) or math.isinf(f) and _looks_infinite(value):
        raise _Unfit("NaN and infinity cannot be partition values")
    if not math.isfinite(f):
        raise _Unfit(f"out of range: it overflows {_a(t.text)}")
    if t.kind == "float32":
        f32 = _float32(f)
        if not math.isfinite(f32):
            raise _Unfit(f"out of range: it overflows {_a(t.text)}")
        return _java_double(f32, digits=9)
    return _java_double(f)


def _looks_infinite(value: Value) -> bool:
    """The value names infinity itself (``inf``, ``-Infinity``), rather than overflowing."""
    return isinstance(value, float) or isinstance(value, str) and "inf" in value.lower()


def _text_boolean(t: HiveType, value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value in (0, 1):
        return "true" if value else "false"
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE_WORDS:
            return "true"
        if low in _FALSE_WORDS:
            return "false"
    raise ValueError(value)


def _text_date(t: HiveType, value: Value) -> str:
    if isinstance(value, datetime.datetime):
        return value.date().isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        text = _canonical_date(value)
        if text is not None:
            return text
    raise ValueError(value)


def _text_timestamp(t: HiveType, value: Value) -> str:
    if isinstance(value, datetime.datetime):
        return _timestamp_text(value)
    if isinstance(value, datetime.date):
        return _timestamp_text(datetime.datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        return _timestamp_text(datetime.datetime.fromisoformat(value.strip()))
    raise ValueError(value)


_PARTITION_TEXT = {
    "int": _text_int,
    "decimal": _text_decimal,
    "float32": _text_float,
    "float64": _text_float,
    "boolean": _text_boolean,
    "date": _text_date,
    "timestamp": _text_timestamp,
}
