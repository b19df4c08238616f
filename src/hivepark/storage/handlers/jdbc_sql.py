"""The JDBC handler's SQL: the predicate tree written exactly in the source's dialect.

:class:`SqlTranslator` turns a predicate into a sqlglot expression for PostgreSQL,
MariaDB/MySQL or SQLite, or None when the source would not compare exactly as Spark does.
Three-valued logic is the same in every SQL database, so an ``And``/``Or``/``Not`` of exact
atoms is exact; what decides is each atom:

* a literal is written only when its type fits the column (an integer for an integral
  column, a string for a string column, a date for a date column, ...): sqlglot writes it
  in the dialect, with quotes escaped, so a value never changes the statement; a string
  with a backslash in a form that means the same under every quoting mode of the session
  (:meth:`SqlTranslator._string`);
* strings: PostgreSQL compares ``=``/``IN`` exactly under a deterministic collation, and
  ranges under ``COLLATE "C"`` (code-point order, as Spark); MariaDB's default collations
  ignore case and trailing spaces, so ``=``/``IN`` are sent as ``col = 'x' AND
  CAST(col AS BINARY) = CAST('x' AS BINARY)`` (the first keeps the index, the second is
  exact; a column of another character set than utf8mb4 is compared as its utf8mb4
  conversion, binary, alone) and ranges as the binary comparison alone; SQLite compares text
  bytewise under ``COLLATE BINARY`` (sent: a column may be declared NOCASE) but only a column
  of TEXT affinity holds text for sure (``STRING`` has NUMERIC affinity: '007' is stored as 7);
* a column is compared as the value the reader makes of it (:meth:`SqlTranslator._read_as`):
  a MariaDB BOOLEAN as ``(col <> 0)``, a SQLite column (but a STRICT table's) through the
  ``CAST`` that converts a value of another storage class as sqlite-jdbc does;
* a column whose source type is not the Hive type's (``SourceColumn.exact``) takes none;
* MariaDB/MySQL keep "zero" dates ('0000-00-00', and '2024-00-00' or '2024-01-00' unless the
  sql_mode has NO_ZERO_DATE / NO_ZERO_IN_DATE, which the default strict mode has not): the
  reader makes NULL of '0000-00-00' and 2023-11-30 of '2024-00-00', while the server compares
  the stored values ('0000-00-00' is not NULL and is before 2000-01-01; '2024-00-00' is after
  2023-12-31), so nothing is pushed exactly on their DATE and DATETIME columns, not even IS NULL
  (the split ranges, on the stored values, still are: each stored value is in one range); a
  DATE comparison is pushed as a wider range of the stored values that holds every row it may
  hold (:meth:`SqlTranslator.widened`), and stays in the residual;
* PostgreSQL's infinite dates are read as 9999-12-31 and 0001-01-03, so a date literal is pushed
  there only between the years 2 and 9999 (:data:`PG_DATES`), where it orders with them as read;
* ``LIKE`` is pushed to PostgreSQL only (MariaDB's and SQLite's ignore case);
* CHAR (padding), FLOAT (single precision), TIMESTAMP (time zones) and anything on SQLite
  but integers, doubles and TEXT-affinity strings stay in the residual; so does an
  empty ``IN``.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlglot import exp

from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Like,
    Not,
    NotEqualTo,
    NotNull,
    Opaque,
    Or,
)
from hivepark.expr.visitors import like_regex
from hivepark.types import INTEGRAL_BITS, HiveType

SQLGLOT_DIALECT = {"POSTGRES": "postgres", "MYSQL": "mysql", "MARIADB": "mysql", "SQLITE": "sqlite"}

MARIADB_UTF8 = frozenset({"utf8mb4"})  # character sets whose bytes are the utf8mb4 literal's

# PostgreSQL's dates 'infinity' and '-infinity' are read as 9999-12-31 and 0001-01-03: a date literal
# between these (with a margin) compares with them as PostgreSQL does; others are left to Spark
PG_DATES = (datetime.date(2, 1, 1), datetime.date(9999, 11, 30))

_OPS: dict[type[Comparison], type[exp.Expression]] = {
    EqualTo: exp.EQ, NotEqualTo: exp.NEQ, LessThan: exp.LT, LessThanOrEqual: exp.LTE,
    GreaterThan: exp.GT, GreaterThanOrEqual: exp.GTE,
}


def sqlite_affinity(declared: str) -> str:
    """SQLite's column affinity of a declared type (its section 3.1 rules, in order).

    >>> sqlite_affinity("BIGINT"), sqlite_affinity("VARCHAR(5)"), sqlite_affinity("STRING"), sqlite_affinity("")
    ('INTEGER', 'TEXT', 'NUMERIC', 'BLOB')
    """
    t = declared.upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t or not t.strip():
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


@dataclass(frozen=True)
class SourceColumn:
    """One column: its Hive name and type, its name in the source, (SQLite) its declared
    type's affinity, and whether the source compares its values as Spark compares the Hive
    type's (``exact``: false when CREATE TABLE declared another type than the source's, for
    PostgreSQL's unconstrained NUMERIC (read rounded to 18 decimals), ``citext`` and columns
    of a nondeterministic collation; nothing but IS NULL is then pushed on it), (MariaDB) the
    column's character set (``latin1``, ...; None when not text or not known), and (SQLite)
    whether its table is STRICT (each value then has the column's storage class)."""

    hive: str
    source: str
    hive_type: HiveType
    affinity: str | None = None
    exact: bool = True
    charset: str | None = None
    strict: bool = False


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def sqlite_datetime(col: exp.Expression) -> exp.Expression:
    """A SQLite DATE or TIMESTAMP column for sqlite-jdbc's date reader: text in the driver's
    form (``strftime`` reads every form SQLite's date functions take, and gives NULL for any
    other text: ``''``, ``'n/a'``), numbers as they are (the driver reads them as milliseconds
    or a Julian day)."""
    is_text = exp.EQ(this=exp.Anonymous(this="typeof", expressions=[col]), expression=exp.Literal.string("text"))
    as_text = exp.Anonymous(this="strftime", expressions=[exp.Literal.string("%Y-%m-%d %H:%M:%f"), col.copy()])
    return exp.Case(ifs=[exp.If(this=is_text, true=as_text)], default=col.copy())


#: MariaDB's stored DATE values and the dates the reader makes of them differ by at most these days:
#: a zero month or day is read as the day before it ('2024-00-00' as 2023-11-30, '2024-01-00' as
#: 2023-12-31, '2024-00-15' as 2023-12-15), so the stored value follows the read one by up to a month
#: and a day; an invalid day (sql_mode ALLOW_INVALID_DATES: '2024-02-31') is read as the days after the
#: month's end (2024-03-02), so it precedes the read one by up to three
MARIADB_DATE_MARGIN = (datetime.timedelta(days=3), datetime.timedelta(days=32))
#: the read dates a widened MariaDB range is written for (none near the calendar change of 1582,
#: and the margin stays within the years 1 to 9999)
MARIADB_WIDENED_DATES = (datetime.date(1700, 1, 1), datetime.date(9999, 11, 30))


class SqlTranslator:
    """Writes predicates on ``columns`` in ``database_type``'s dialect (None: not exactly).

    ``outer=True`` names columns by their Hive names (the aliases of hivepark's own
    SELECT, for the split ranges Spark appends). ``stored_dates=True`` writes date comparisons
    on MariaDB too, on the stored values: for the split ranges, and for the ranges
    :meth:`widened` makes (never exact on what is read, so Spark applies the filter again)."""

    def __init__(self, database_type: str, columns: Mapping[str, SourceColumn], outer: bool = False,
                 stored_dates: bool = False) -> None:
        self.db = database_type
        self.dialect = SQLGLOT_DIALECT[database_type]
        self.columns = columns
        self.outer = outer
        self.stored_dates = stored_dates or outer

    # -- literals ------------------------------------------------------------------------
    def _literal(self, value: Any, col: SourceColumn) -> exp.Expression | None:
        kind = col.hive_type.kind
        sqlite = self.db == "SQLITE"
        if value is None:
            return exp.Null()
        if not col.exact:
            return None
        if isinstance(value, bool):
            if kind != "boolean" or sqlite:
                return None
            if self.dialect == "mysql":
                return exp.Literal.number(1 if value else 0)
            return exp.Boolean(this=value)
        if kind == "int":
            if sqlite and col.affinity != "INTEGER":
                return None
            if isinstance(value, int):
                # SQLite reads an integer literal outside 64 bits as a REAL, rounded:
                # -9223372036854775809 becomes -2**63, which equals the smallest BIGINT
                if sqlite and not -(2**63) <= value < 2**63:
                    return None
                return exp.Literal.number(value)
            if isinstance(value, Decimal) and value.is_finite() and not sqlite:
                return exp.Literal.number(format(value, "f"))
            return None
        if kind == "decimal":
            if sqlite:
                return None
            if isinstance(value, int):
                return exp.Literal.number(value)
            if isinstance(value, Decimal) and value.is_finite():
                return exp.Literal.number(format(value, "f"))
            return None
        if kind == "float64":
            if sqlite and col.affinity != "REAL":
                return None
            if isinstance(value, int) and abs(value) <= 2**53:
                return exp.Literal.number(value)
            if isinstance(value, float) and math.isfinite(value):
                text = repr(value)
                return exp.Literal.number(text if "e" in text else text + "E0")
            return None
        if kind == "string":
            if not isinstance(value, str) or (sqlite and col.affinity != "TEXT") or "\x00" in value:
                return None
            return self._string(value)
        if kind == "date":
            if sqlite or (self.dialect == "mysql" and not self.stored_dates):  # MariaDB's zero dates
                return None
            if isinstance(value, datetime.datetime):
                return None
            if isinstance(value, datetime.date):
                value = value.isoformat()
            if not isinstance(value, str):
                return None
            try:
                day = datetime.date.fromisoformat(value)
            except ValueError:
                return None
            if self.dialect == "postgres" and not self.outer and not PG_DATES[0] <= day <= PG_DATES[1]:
                return None
            return exp.cast(exp.Literal.string(day.isoformat()), "DATE")
        return None  # char, float32, timestamp, boolean on SQLite, complex types

    def _string(self, value: str) -> exp.Expression:
        """A string literal that means ``value`` whatever the session's quoting rules: a
        backslash is an escape in MariaDB's literals unless its ``sql_mode`` has
        NO_BACKSLASH_ESCAPES, and in PostgreSQL's when ``standard_conforming_strings`` is off,
        so a value with one is written in a form that has one meaning: PostgreSQL's escape
        string ``E'a\\b'``, MariaDB's ``_utf8mb4 x'615c62'`` (its UTF-8 bytes)."""
        if "\\" not in value or self.db == "SQLITE":
            return exp.Literal.string(value)
        if self.dialect == "postgres":
            return exp.ByteString(this=value)
        return exp.Introducer(this=exp.var("_utf8mb4"), expression=exp.HexString(this=value.encode("utf-8").hex()))

    def column(self, term: str) -> exp.Expression | None:
        col = self.columns.get(term)
        if col is None:
            return None
        return exp.column(ident(col.hive if self.outer else col.source))

    def _read_as(self, ref: exp.Expression, col: SourceColumn) -> exp.Expression:
        """The column as the value hivepark's reader makes of it, where the source's own value
        may differ:

        * SQLite keeps a value of another storage class than the column's affinity as it is
          (1.5 or 'n/a' in an INTEGER column, 'n/a' in a REAL one, a BLOB in a TEXT one), and
          the reader (sqlite-jdbc's ``getLong``/``getInt``/``getShort``/``getByte``,
          ``getDouble``, ``getString`` as ``customSchema`` asks) converts it as SQLite's
          ``CAST`` does (``sqlite3_value_int64``, ``sqlite3_value_double``, the text of a
          blob), an INT/SMALLINT/TINYINT then keeping the low 32/16/8 bits (sign-extended
          here by the shifts). A STRICT table holds only the column's class: its INTEGER
          (read as BIGINT), REAL and TEXT columns are compared as they are (an index serves);
        * MariaDB: a BOOLEAN (``TINYINT(1)``) reads as true for any nonzero value (2, -1),
          so it is compared as ``(col <> 0)``; a string column of another character set than
          utf8mb4 (latin1, ...) is compared as its utf8mb4 conversion (what the server sends
          the reader), since ``CAST(col AS BINARY)`` gives the column's own bytes."""
        kind = col.hive_type.kind
        if self.db == "SQLITE":
            if kind == "int":
                bits = INTEGRAL_BITS.get(col.hive_type.base, 64)
                if col.strict and bits == 64:
                    return ref
                read: exp.Expression = exp.Cast(this=ref, to=exp.DataType.build("INTEGER", dialect="sqlite"))
                if bits < 64:
                    shift = exp.Literal.number(64 - bits)
                    read = exp.BitwiseRightShift(this=exp.paren(exp.BitwiseLeftShift(this=read, expression=shift)),
                                                 expression=shift.copy())
                return exp.paren(read)
            if kind == "float64" and not col.strict:
                return exp.Cast(this=ref, to=exp.DataType.build("REAL", dialect="sqlite"))
            if kind == "string" and not col.strict:
                return exp.Cast(this=ref, to=exp.DataType.build("TEXT", dialect="sqlite"))
            return ref
        if self.dialect == "mysql":
            if kind == "boolean":
                return exp.paren(exp.NEQ(this=ref, expression=exp.Literal.number(0)))
            if kind == "string" and col.charset not in MARIADB_UTF8:
                return exp.Cast(this=ref, to=exp.DataType(this=exp.DataType.Type.CHARACTER_SET,
                                                          kind=exp.var("utf8mb4")))
        return ref

    def _compared(self, ref: exp.Expression, col: SourceColumn) -> exp.Expression:
        """The column as a comparison reads it (:meth:`_read_as`): a string on SQLite under
        ``COLLATE BINARY`` (bytewise, as Spark), whatever collation the column was declared
        with (``NOCASE``, ``RTRIM``); an explicit COLLATE decides SQLite's comparison (a CAST
        keeps the column's collation), and a BINARY index still serves it."""
        read = self._read_as(ref, col)
        if self.db == "SQLITE" and col.hive_type.kind == "string":
            return exp.Collate(this=read, expression=exp.var("BINARY"))
        return read

    def _binary(self, e: exp.Expression) -> exp.Expression:
        return exp.Cast(this=e, to=exp.DataType.build("BINARY", dialect="mysql"))

    # -- atoms ---------------------------------------------------------------------------
    def _comparison(self, node: Comparison) -> exp.Expression | None:
        col, ref = self.columns.get(node.term), self.column(node.term)
        if col is None or ref is None:
            return None
        lit = self._literal(node.value, col)
        if lit is None:
            return None
        op = _OPS[type(node)]
        if col.hive_type.kind != "string" or isinstance(lit, exp.Null):
            return op(this=self._compared(ref, col), expression=lit)
        if self.dialect == "postgres":
            if isinstance(node, (EqualTo, NotEqualTo)):
                return op(this=ref, expression=lit)
            return op(this=exp.Collate(this=ref, expression=ident("C")), expression=lit)
        if self.dialect == "mysql":
            read = self._read_as(ref, col)
            exact = op(this=self._binary(read), expression=self._binary(lit))
            if isinstance(node, EqualTo) and read is ref:  # the index's comparison, on utf8mb4 only
                return exp.and_(exp.EQ(this=ref.copy(), expression=lit.copy()), exact)
            return exact
        return op(this=self._compared(ref, col), expression=lit)

    def _in(self, node: In) -> exp.Expression | None:
        col, ref = self.columns.get(node.term), self.column(node.term)
        if col is None or ref is None or not node.values:
            return None
        lits = [self._literal(v, col) for v in node.values]
        if any(lit is None for lit in lits):
            return None
        if col.hive_type.kind == "string" and self.dialect == "mysql":
            read = self._read_as(ref, col)
            exact = exp.In(this=self._binary(read.copy()),
                           expressions=[lit.copy() if isinstance(lit, exp.Null) else self._binary(lit.copy())
                                        for lit in lits if lit is not None])
            # the plain IN first (an index serves it), on utf8mb4 only (another character set
            # may not hold the literal: MariaDB's 'Illegal mix of collations')
            return exp.and_(exp.In(this=ref, expressions=lits), exact) if read is ref else exact
        return exp.In(this=self._compared(ref, col), expressions=lits)

    def _like(self, node: Like) -> exp.Expression | None:
        col, ref = self.columns.get(node.term), self.column(node.term)
        if col is None or ref is None or self.dialect != "postgres" or col.hive_type.kind != "string" \
                or not col.exact:
            return None
        try:
            like_regex(node.pattern)
        except ValueError:
            return None
        return exp.Escape(this=exp.Like(this=ref, expression=self._string(node.pattern)),
                          expression=self._string("\\"))

    def translate(self, expr: Expr) -> exp.Expression | None:
        """The predicate in the source's dialect, or None when it would not be exact."""
        if isinstance(expr, AlwaysTrue):
            return exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(1))
        if isinstance(expr, AlwaysFalse):
            return exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(0))
        if isinstance(expr, (And, Or)):
            left, right = self.translate(expr.left), self.translate(expr.right)
            if left is None or right is None:
                return None
            return exp.and_(left, right) if isinstance(expr, And) else exp.or_(left, right)
        if isinstance(expr, Not):
            child = self.translate(expr.child)
            return None if child is None else exp.not_(exp.paren(child))
        if isinstance(expr, (IsNull, NotNull)):
            ref = self.column(expr.term)
            if ref is None:
                return None
            col = self.columns[expr.term]
            if self.db == "SQLITE" and not self.outer and col.hive_type.kind in ("date", "timestamp"):
                ref = sqlite_datetime(ref)  # text no date function reads ('', 'n/a') is read as NULL
            if self.dialect == "mysql" and col.hive_type.kind in ("date", "timestamp") and not self.outer:
                return None  # a zero date is read as NULL (the module's docstring)
            test = exp.Is(this=ref, expression=exp.Null())
            return test if isinstance(expr, IsNull) else exp.not_(test)
        if isinstance(expr, Comparison):
            return self._comparison(expr)
        if isinstance(expr, In):
            return self._in(expr)
        if isinstance(expr, Like):
            return self._like(expr)
        if isinstance(expr, Opaque):
            return None
        return None

    def sql(self, e: exp.Expression) -> str:
        return e.sql(dialect=self.dialect)

    # -- wider ranges ----------------------------------------------------------------------
    def widened(self, expr: Expr) -> Expr | None:
        """A predicate that holds on every row ``expr`` holds on (as read) and that the source
        can apply, where ``expr`` itself cannot be written exactly; None when there is none.
        MariaDB's DATE columns: a comparison, IN or BETWEEN with dates becomes a range of the
        stored values wider by :data:`MARIADB_DATE_MARGIN` (``d = '2024-01-05'``: ``d >=
        '2024-01-02' AND d <= '2024-02-06'``), which an index on the column serves; Spark still
        applies ``expr`` to what it reads. An AND keeps the conjuncts that have one, an OR needs
        both sides; anything exact is itself. Written with ``stored_dates=True``.

        >>> t = SqlTranslator("MARIADB", {"d": SourceColumn("d", "d", HiveType.parse("date"))})
        >>> t.widened(EqualTo("d", "2024-01-05"))  # doctest: +NORMALIZE_WHITESPACE
        And(left=GreaterThanOrEqual(term='d', value='2024-01-02'),
            right=LessThanOrEqual(term='d', value='2024-02-06'))
        >>> t.widened(NotEqualTo("d", "2024-01-05")) is None, t.widened(GreaterThan("d", "1500-01-01")) is None
        (True, True)
        """
        if self.translate(expr) is not None:
            return expr
        if self.dialect != "mysql":
            return None
        if isinstance(expr, (And, Or)):
            left, right = self.widened(expr.left), self.widened(expr.right)
            if isinstance(expr, Or):
                return None if left is None or right is None else Or(left, right)
            return right if left is None else left if right is None else And(left, right)
        term = getattr(expr, "term", None) or ""
        col = self.columns.get(term)
        if col is None or col.hive_type.kind != "date" or not col.exact:
            return None
        if isinstance(expr, Comparison):
            values = [expr.value]
        elif isinstance(expr, In):
            values = [v for v in expr.values if v is not None]  # a NULL member is never TRUE
        else:
            return None
        days = [d for d in map(_iso_date, values) if d is not None]
        if not days or len(days) < len(values) \
                or any(not MARIADB_WIDENED_DATES[0] <= d <= MARIADB_WIDENED_DATES[1] for d in days):
            return None
        low = (min(days) - MARIADB_DATE_MARGIN[0]).isoformat()
        high = (max(days) + MARIADB_DATE_MARGIN[1]).isoformat()
        op = type(expr)
        if op in (GreaterThan, GreaterThanOrEqual):
            return GreaterThanOrEqual(term, low)
        if op in (LessThan, LessThanOrEqual):
            return LessThanOrEqual(term, high)
        if op in (EqualTo, In):
            return And(GreaterThanOrEqual(term, low), LessThanOrEqual(term, high))
        return None  # <>: true of nearly every row


def _iso_date(value: Any) -> datetime.date | None:
    """A bound date literal (ISO text or a date) as a date; None for anything else."""
    if isinstance(value, datetime.datetime):
        return None
    if isinstance(value, datetime.date):
        return value
    try:
        return datetime.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
