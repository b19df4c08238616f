"""Partition keys as indexed SQL values, and partition filters as SQL over them.

Each partition stores one ``hivepark_partition_key_vals`` row per key (see
:mod:`hivepark.catalog.schema`). :class:`KeyCodec` turns a key's raw string into the values
stored there, by the key's type:

* numeric keys: ``num_value``, the value as a double (``hr > 9`` matches ``hr=10``, which text
  order would miss); a string that does not parse as the type reads as NULL, as it does in
  Spark and Hive;
* string keys: ``str_value``, the raw string, compared byte-wise like Spark;
* date, timestamp and boolean keys: ``str_value`` in a canonical text form that sorts like the
  type (``2008-04-08``, ``2008-04-08 10:00:00.000000``, ``true``);
* the default partition (``None``) is NULL in both columns.

:func:`filter_sql` turns a predicate tree into a SQL condition. SOUNDNESS: a partition whose
values make the predicate TRUE under Spark's three-valued logic is always kept. The tree is
translated in negation normal form: ``Not`` is pushed down to the atoms, each atom has a
translation for both polarities, and an atom that cannot be expressed (``Opaque``, a column
that is not a partition key, a literal of another type family, ``LIKE`` on a non-string key)
becomes TRUE in either polarity. Since AND and OR are monotone, the result keeps a superset
of the matching partitions, and is exact when every atom is expressible.

:func:`evaluate` is the same semantics evaluated exactly in Python, for ``DROP PARTITION``.
"""

from __future__ import annotations

import datetime
import math
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, not_, or_

from hivepark.catalog.models import Table
from hivepark.expr.nodes import (
    NEGATED_COMPARISON,
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

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

#: IN lists longer than this are rendered inline instead of as bound parameters, so that
#: SQLite's limit on bound parameters never applies.
INLINE_IN_THRESHOLD = 1000

_INT_TYPES = ("tinyint", "smallint", "int", "integer", "bigint")
_FLOAT32_TYPES = ("float", "real")
_FLOAT64_TYPES = ("double", "double precision")
_NUMERIC_KINDS = ("int", "decimal", "float32", "float64")
_FLOAT_KINDS = ("float32", "float64")
_TEXT_KINDS = ("string", "date", "timestamp", "boolean")
_EXACT_LIMIT = 2 ** 53
_MAX_DOUBLE_INT = 2 ** 1023
_TRUE_WORDS = ("true", "t", "yes", "y", "1")
_FALSE_WORDS = ("false", "f", "no", "n", "0")
_DATE_RE = re.compile(r"\s*([+-]?\d{4,})-(\d{1,2})-(\d{1,2})(?:[T ].*)?\s*$")


def key_kind(hive_type: str) -> str:
    """How a partition key is stored and compared: int, decimal, float32, float64, string,
    date, timestamp, boolean or other.

    >>> key_kind("BIGINT"), key_kind("decimal(10,2)"), key_kind("varchar(4)"), key_kind("real")
    ('int', 'decimal', 'string', 'float32')
    """
    base = hive_type.strip().lower().split("(")[0].split("<")[0].strip()
    if base in _INT_TYPES:
        return "int"
    if base == "decimal":
        return "decimal"
    if base in _FLOAT32_TYPES:
        return "float32"
    if base in _FLOAT64_TYPES:
        return "float64"
    if base in ("string", "varchar", "char"):
        return "string"
    if base in ("date", "timestamp", "boolean"):
        return base
    return "other"


def _decimal(raw: str) -> Decimal | None:
    try:
        d = Decimal(raw.strip())
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def _orders_like_double(d: Decimal) -> bool:
    """True when comparing ``float(d)`` orders ``d`` exactly against other such values:
    integers below 2**53, and decimals of at most 15 significant digits in the normal range."""
    if d == d.to_integral_value():
        return abs(d) < _EXACT_LIMIT
    if not Decimal("1e-300") < abs(d) < Decimal("1e300"):
        return False
    return len(d.normalize().as_tuple().digits) <= 15


def _float32(f: float) -> float:
    try:
        return float(struct.unpack("f", struct.pack("f", f))[0])
    except OverflowError:
        return math.copysign(math.inf, f)


def _canonical_date(raw: str) -> str | None:
    m = _DATE_RE.match(raw)
    if not m:
        return None
    try:
        return datetime.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
    except ValueError:
        return None


def _canonical_timestamp(value: datetime.datetime) -> str | None:
    if value.tzinfo is not None:
        return None
    return value.isoformat(sep=" ", timespec="microseconds")


def _parse_timestamp(raw: str) -> str | None:
    try:
        return _canonical_timestamp(datetime.datetime.fromisoformat(raw.strip()))
    except ValueError:
        return None


def _canonical_boolean(raw: str) -> str | None:
    low = raw.strip().lower()
    if low in _TRUE_WORDS:
        return "true"
    if low in _FALSE_WORDS:
        return "false"
    return None


@dataclass(frozen=True)
class KeyCodec:
    """One partition key: its position, type and how its values are stored and compared."""

    idx: int
    name: str
    hive_type: str
    kind: str

    @property
    def numeric(self) -> bool:
        return self.kind in _NUMERIC_KINDS

    def encode(self, raw: str | None) -> tuple[str | None, float | None, bool]:
        """``(str_value, num_value, num_exact)`` for a raw partition value."""
        if raw is None:
            return None, None, True
        if self.kind == "string":
            return raw, None, True
        if not self.numeric:
            return self.text(raw), None, True
        if self.kind in _FLOAT_KINDS:
            try:
                f = float(raw)
            except ValueError:
                return raw, None, True
            if math.isnan(f):  # NaN sorts above +inf in Spark: store +inf, flagged inexact
                return raw, math.inf, False
            return raw, _float32(f) if self.kind == "float32" else f, True
        d = _decimal(raw)
        if d is None or (self.kind == "int" and d != d.to_integral_value()):
            return raw, None, True
        return raw, float(d), _orders_like_double(d)

    def text(self, raw: str) -> str | None:
        """The canonical text of a non-numeric value (None when it reads as NULL)."""
        if self.kind == "date":
            return _canonical_date(raw)
        if self.kind == "timestamp":
            return _parse_timestamp(raw)
        if self.kind == "boolean":
            return _canonical_boolean(raw)
        return raw

    def value(self, raw: str | None) -> Any:
        """The value Spark reads, for exact evaluation: Decimal, float, str or None."""
        if raw is None:
            return None
        if self.kind in _FLOAT_KINDS:
            try:
                f = float(raw)
            except ValueError:
                return None
            return _float32(f) if self.kind == "float32" and not math.isnan(f) else f
        if self.numeric:
            d = _decimal(raw)
            if d is None or (self.kind == "int" and d != d.to_integral_value()):
                return None
            return d
        return self.text(raw) if self.kind != "other" else None

    def text_literal(self, value: Any) -> str | None:
        """A literal as canonical text comparable with ``str_value``; None if it does not fit."""
        if self.kind == "string":
            return value if isinstance(value, str) else None
        if self.kind == "date":
            if isinstance(value, datetime.datetime):
                return None
            if isinstance(value, datetime.date):
                return value.isoformat()
            if isinstance(value, str) and len(value.strip()) == 10:
                return _canonical_date(value)
            return None
        if self.kind == "timestamp":
            if isinstance(value, datetime.datetime):
                return _canonical_timestamp(value)
            if isinstance(value, datetime.date):
                return _canonical_timestamp(datetime.datetime(value.year, value.month, value.day))
            return _parse_timestamp(value) if isinstance(value, str) else None
        if self.kind == "boolean":
            if isinstance(value, bool):
                return "true" if value else "false"
            return None
        return None


def codecs_for(table: Table) -> dict[str, KeyCodec]:
    """The codecs of a table's partition keys, by lower-case name."""
    return {c.name.lower(): KeyCodec(i, c.name.lower(), c.type, key_kind(c.type))
            for i, c in enumerate(table.partition_keys)}


def num_literal(value: Any) -> tuple[float, bool] | None:
    """``(double, orders_exactly)`` for a numeric literal; None when it is not a finite number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return (value, True) if math.isfinite(value) else None
    if isinstance(value, int):
        if abs(value) > _MAX_DOUBLE_INT:  # beyond the double range
            return None
        return float(value), abs(value) < _EXACT_LIMIT
    if isinstance(value, Decimal):
        if not value.is_finite() or not math.isfinite(float(value)):
            return None
        return float(value), _orders_like_double(value)
    return None


def like_regex(pattern: str) -> re.Pattern[str] | None:
    """Spark's LIKE as a regex (``\\`` escapes ``%``, ``_`` and ``\\``); None if invalid.

    >>> bool(like_regex(r"a\\%%").fullmatch("a%bc")), like_regex("a\\\\")
    (True, None)
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in "%_\\":
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


# SQL translation ------------------------------------------------------------------------

#: True, False, or a SQL condition with the key positions it reads.
Sql = bool | tuple[ColumnElement[bool], frozenset[int]]


def _and(a: Sql, b: Sql) -> Sql:
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    assert not isinstance(a, bool) and not isinstance(b, bool)
    return and_(a[0], b[0]), a[1] | b[1]


def _or(a: Sql, b: Sql) -> Sql:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    assert not isinstance(a, bool) and not isinstance(b, bool)
    return or_(a[0], b[0]), a[1] | b[1]


def _in(col: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    if len(values) > INLINE_IN_THRESHOLD:
        param = bindparam(None, list(values), expanding=True, literal_execute=True,
                          type_=col.type)
        return col.in_(param)
    return col.in_(list(values))


class _Translator:
    """Translates one predicate tree; ``alias(idx)`` is the key-value row of key ``idx``."""

    def __init__(self, codecs: dict[str, KeyCodec], alias: Callable[[int], Any]) -> None:
        self.codecs = codecs
        self.alias = alias

    def tr(self, e: Expr, neg: bool) -> Sql:
        if isinstance(e, Not):
            return self.tr(e.child, not neg)
        if isinstance(e, (And, Or)):
            left, right = self.tr(e.left, neg), self.tr(e.right, neg)
            return _and(left, right) if isinstance(e, And) != neg else _or(left, right)
        if isinstance(e, AlwaysTrue):
            return neg is False
        if isinstance(e, AlwaysFalse):
            return neg is True
        term = getattr(e, "term", None)
        codec = self.codecs.get(term.lower()) if isinstance(term, str) else None
        if codec is None or isinstance(e, Opaque):
            return True
        cond = self.atom(e, codec, neg)
        if cond is None:
            # Not expressible, but any comparison with NULL is NULL in either polarity:
            # only the partitions where the key is NULL can be dropped.
            cond = _value_column(self.alias(codec.idx), codec).is_not(None)
        if isinstance(cond, bool):
            return cond
        return cond, frozenset({codec.idx})

    def atom(self, e: Expr, c: KeyCodec, neg: bool) -> ColumnElement[bool] | bool | None:
        """The atom's condition in polarity ``neg``; None when it cannot be expressed."""
        a = self.alias(c.idx)
        if isinstance(e, (IsNull, NotNull)):
            col = _value_column(a, c)
            return col.is_(None) if isinstance(e, IsNull) != neg else col.is_not(None)
        if c.kind == "other":
            return None
        if isinstance(e, Comparison):
            op = NEGATED_COMPARISON[type(e)] if neg else type(e)
            if c.numeric:
                return self.num_compare(op, a, e.value)
            lit = c.text_literal(e.value)
            return None if lit is None else _compare(op, a.str_value, lit)
        if isinstance(e, In):
            return self.num_in(e, a, neg) if c.numeric else self.text_in(e, c, a, neg)
        if isinstance(e, Like):
            if c.kind != "string" or not isinstance(e.pattern, str) \
                    or like_regex(e.pattern) is None:
                return None
            if neg:
                return a.str_value.not_like(e.pattern, escape="\\")
            return a.str_value.like(e.pattern, escape="\\")
        return None

    @staticmethod
    def num_compare(op: type[Comparison], a: Any,
                    value: Any) -> ColumnElement[bool] | bool | None:
        lit = num_literal(value)
        if lit is None:
            return None
        f, exact = lit
        col, inexact_row = a.num_value, a.num_exact.is_(False)
        if op is EqualTo:
            return col == f
        if op is NotEqualTo:
            if not exact:
                return col.is_not(None)
            return and_(col.is_not(None), or_(col != f, inexact_row))
        if op is GreaterThanOrEqual:
            return col >= f
        if op is LessThanOrEqual:
            return col <= f
        if op is GreaterThan:
            return and_(col >= f, or_(col > f, inexact_row)) if exact else col >= f
        if op is LessThan:
            return and_(col <= f, or_(col < f, inexact_row)) if exact else col <= f
        return None

    @staticmethod
    def num_in(e: In, a: Any, neg: bool) -> ColumnElement[bool] | bool | None:
        lits = [num_literal(v) for v in e.values]
        if not neg:
            if any(lit is None for lit in lits):
                return None
            if not lits:
                return False
            return _in(a.num_value, sorted({lit[0] for lit in lits if lit is not None}))
        if not lits:
            return True
        exact = sorted({lit[0] for lit in lits if lit is not None and lit[1]})
        if not exact:
            return a.num_value.is_not(None)
        return and_(a.num_value.is_not(None),
                    or_(not_(_in(a.num_value, exact)), a.num_exact.is_(False)))

    @staticmethod
    def text_in(e: In, c: KeyCodec, a: Any, neg: bool) -> ColumnElement[bool] | bool | None:
        lits = [c.text_literal(v) for v in e.values]
        if not neg:
            if any(lit is None for lit in lits):
                return None
            if not lits:
                return False
            return _in(a.str_value, sorted({lit for lit in lits if lit is not None}))
        if not lits:
            return True
        fitting = sorted({lit for lit in lits if lit is not None})
        if not fitting:
            return a.str_value.is_not(None)
        return not_(_in(a.str_value, fitting))


def _value_column(a: Any, c: KeyCodec) -> Any:
    """The stored column that is NULL exactly when the key's value reads as NULL."""
    return a.num_value if c.numeric else a.str_value


def _compare(op: type[Comparison], col: Any, lit: Any) -> ColumnElement[bool]:
    if op is EqualTo:
        return col == lit
    if op is NotEqualTo:
        return col != lit
    if op is LessThan:
        return col < lit
    if op is LessThanOrEqual:
        return col <= lit
    if op is GreaterThan:
        return col > lit
    return col >= lit


def filter_sql(e: Expr, codecs: dict[str, KeyCodec], alias: Callable[[int], Any]) -> Sql:
    """The SQL condition that keeps every partition ``e`` may be TRUE for (see module doc).

    Returns True (keep everything), False (keep nothing), or ``(condition, key positions)``;
    the caller joins one key-value row per position, as ``alias(idx)``.
    """
    return _Translator(codecs, alias).tr(e, False)


# exact evaluation -----------------------------------------------------------------------

class Undecidable(Exception):
    """An atom whose truth the catalog cannot determine (Opaque, type mismatch, ...)."""

    def __init__(self, atom: Expr, reason: str) -> None:
        super().__init__(reason)
        self.atom = atom
        self.reason = reason


def _not3(v: bool | None) -> bool | None:
    return None if v is None else not v


def _float_key(f: float) -> tuple[int, float]:
    return (1, 0.0) if math.isnan(f) else (0, f)


def _cmp3(op: type[Comparison], x: Any, y: Any) -> bool:
    if op is EqualTo:
        return bool(x == y)
    if op is NotEqualTo:
        return bool(x != y)
    if op is LessThan:
        return bool(x < y)
    if op is LessThanOrEqual:
        return bool(x <= y)
    if op is GreaterThan:
        return bool(x > y)
    return bool(x >= y)


def _compare_value(e: Expr, op: type[Comparison], c: KeyCodec, x: Any, lit: Any) -> bool:
    """``x op lit`` for a non-NULL key value ``x``, the way Spark coerces the two sides."""
    if c.numeric:
        if isinstance(lit, bool) or not isinstance(lit, (int, float, Decimal)):
            raise Undecidable(e, f"{c.name} ({c.hive_type}) is compared with {lit!r}")
        if isinstance(lit, Decimal) and not lit.is_finite():
            raise Undecidable(e, f"{c.name} is compared with {lit!r}")
        if c.kind in _FLOAT_KINDS or isinstance(lit, float):
            return _cmp3(op, _float_key(float(x)), _float_key(float(lit)))
        return _cmp3(op, Decimal(x), Decimal(lit))
    text = c.text_literal(lit)
    if text is None:
        raise Undecidable(e, f"{c.name} ({c.hive_type}) is compared with {lit!r}")
    return _cmp3(op, x, text)


def evaluate(e: Expr, raw: dict[str, str | None], codecs: dict[str, KeyCodec]) -> bool | None:
    """Spark's three-valued result of ``e`` for one partition's raw values, by key name.

    Raises :class:`Undecidable` for an atom the catalog cannot evaluate.
    """
    if isinstance(e, Not):
        return _not3(evaluate(e.child, raw, codecs))
    if isinstance(e, And):
        left, right = evaluate(e.left, raw, codecs), evaluate(e.right, raw, codecs)
        return False if left is False or right is False else \
            None if left is None or right is None else True
    if isinstance(e, Or):
        left, right = evaluate(e.left, raw, codecs), evaluate(e.right, raw, codecs)
        return True if left is True or right is True else \
            None if left is None or right is None else False
    if isinstance(e, (AlwaysTrue, AlwaysFalse)):
        return isinstance(e, AlwaysTrue)
    if isinstance(e, Opaque):
        raise Undecidable(e, f"cannot evaluate {e.sql}")
    term = getattr(e, "term", None)
    c = codecs.get(term.lower()) if isinstance(term, str) else None
    if c is None:
        raise Undecidable(e, f"{term} is not a partition column")
    x = c.value(raw.get(c.name))
    if isinstance(e, (IsNull, NotNull)):
        return (x is None) == isinstance(e, IsNull)
    if isinstance(e, In) and not e.values:
        return False
    if x is None:
        return None  # every comparison with NULL is NULL
    if c.kind == "other":
        raise Undecidable(e, f"{c.name} has type {c.hive_type}, which cannot be compared")
    if isinstance(e, Comparison):
        return _compare_value(e, type(e), c, x, e.value)
    if isinstance(e, In):
        return any(_compare_value(e, EqualTo, c, x, v) for v in e.values)
    if isinstance(e, Like):
        regex = like_regex(e.pattern) if c.kind == "string" else None
        if regex is None:
            raise Undecidable(e, f"cannot evaluate LIKE {e.pattern!r} on {c.name}")
        return regex.fullmatch(x) is not None
    raise Undecidable(e, f"unsupported predicate {e!r}")


def opaque_atoms(e: Expr) -> list[Opaque]:
    """Every Opaque node in ``e``."""
    if isinstance(e, Opaque):
        return [e]
    if isinstance(e, Not):
        return opaque_atoms(e.child)
    if isinstance(e, (And, Or)):
        return opaque_atoms(e.left) + opaque_atoms(e.right)
    return []
