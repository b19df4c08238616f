"""hivepark's predicate tree as pyiceberg expressions, with SQL's meaning kept.

A query's filter is true, false or NULL on a row, and a row is kept only when it is true.
pyiceberg's expressions follow Iceberg's (Java's) rules, which differ on NULL: Iceberg's
``notEqual(x, 5)`` and ``notIn`` accept a row whose ``x`` is NULL. So every translation here
accepts exactly the rows on which the SQL predicate is TRUE: ``x <> 5`` becomes
``x IS NOT NULL AND x != 5``, a NOT is pushed down to the atoms first (De Morgan, with the
same care), ``x IN (1, NULL)`` keeps ``x IN (1)``, and ``x NOT IN (1, NULL)`` is never true.

What cannot be translated exactly returns None: an AND keeps the translatable conjuncts (a
weaker filter, still every row the whole filter keeps), an OR or a NOT needs every part.

Ordering comparisons (``<``, ``<=``, ``>``, ``>=``) are not translated on FLOAT and DOUBLE
columns: Spark orders NaN above every number (``NaN > 5`` is true) while Iceberg's file
statistics leave NaN out of a file's bounds, so such a filter could drop a file whose NaN rows
Spark would return. FLOAT equality is not translated either (a DOUBLE literal rarely equals a
FLOAT value as Spark compares them).

Literals are typed as the column: ``'2026-01-05'`` against a DATE column is a date, a
``TIMESTAMP '...'`` a timestamp (microseconds, the session's wall clock, which is UTC),
decimals keep their scale (a literal with more digits after the point than the column is not
translated), integers outside the column's range are not translated.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pyiceberg import expressions as ie
from pyiceberg.expressions.literals import (
    BooleanLiteral,
    DateLiteral,
    DecimalLiteral,
    DoubleLiteral,
    Literal,
    LongLiteral,
    StringLiteral,
    TimestampLiteral,
)
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
)

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

_EPOCH = datetime.datetime(1970, 1, 1)
_INT_RANGE = {IntegerType: (-(2**31), 2**31 - 1), LongType: (-(2**63), 2**63 - 1)}


def iceberg_literal(value: Any, typ: IcebergType) -> Literal[Any] | None:
    """``value`` (a bound hivepark literal) as a literal of the column's Iceberg type, or None
    when it has no exact counterpart.

    >>> iceberg_literal("2026-01-05", DateType()).value, iceberg_literal(7, LongType()).value
    (20458, 7)
    >>> iceberg_literal(Decimal("12.345"), DecimalType(10, 2)) is None
    True
    """
    if value is None:
        return None
    if isinstance(typ, (IntegerType, LongType)):
        if type(value) is not int:
            return None
        lo, hi = _INT_RANGE[type(typ)]
        return LongLiteral(value) if lo <= value <= hi else None
    if isinstance(typ, DoubleType):  # NaN: pyiceberg makes no literal of it (Spark's NaN = NaN is true)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            return None
        return DoubleLiteral(float(value))
    if isinstance(typ, DecimalType):
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            return None
        d = Decimal(value)
        exponent = d.as_tuple().exponent
        if not isinstance(exponent, int) or -exponent > typ.scale:
            return None
        q = d.quantize(Decimal(1).scaleb(-typ.scale))
        return DecimalLiteral(q) if len(q.as_tuple().digits) <= typ.precision else None
    if isinstance(typ, StringType):
        return StringLiteral(value) if isinstance(value, str) else None
    if isinstance(typ, BooleanType):
        return BooleanLiteral(value) if isinstance(value, bool) else None
    if isinstance(typ, DateType):
        day = _as_date(value)
        return DateLiteral((day - datetime.date(1970, 1, 1)).days) if day is not None else None
    if isinstance(typ, (TimestampType, TimestamptzType)):
        if isinstance(value, datetime.datetime) and value.tzinfo is None:
            delta = value - _EPOCH
            return TimestampLiteral((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)
        return None
    return None


def _as_date(value: Any) -> datetime.date | None:
    if isinstance(value, datetime.datetime):
        return None
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            return None
    return None


_ORDERING = (LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual)


class Translator:
    """Translates trees over one table's columns (``types``: lower-case name -> Iceberg type;
    ``names``: lower-case name -> the Iceberg column's own name)."""

    def __init__(self, types: Mapping[str, IcebergType], names: Mapping[str, str] | None = None) -> None:
        self.types = {k.lower(): v for k, v in types.items()}
        self.names = {k.lower(): v for k, v in (names or {k: k for k in types}).items()}

    def translate(self, expr: Expr) -> ie.BooleanExpression | None:
        """The rows on which ``expr`` is TRUE, as a pyiceberg expression; None when that
        cannot be said exactly. An AND keeps its translatable conjuncts: use
        :meth:`exact` to know whether anything was left out."""
        return self._tr(expr, negate=False, partial=True)

    def exact(self, expr: Expr) -> ie.BooleanExpression | None:
        """Like :meth:`translate`, but None unless the whole of ``expr`` is translated."""
        return self._tr(expr, negate=False, partial=False)

    # ``negate``: translate NOT expr (the rows on which expr is FALSE)
    def _tr(self, e: Expr, negate: bool, partial: bool) -> ie.BooleanExpression | None:
        if isinstance(e, AlwaysTrue):
            return ie.AlwaysFalse() if negate else ie.AlwaysTrue()
        if isinstance(e, AlwaysFalse):
            return ie.AlwaysTrue() if negate else ie.AlwaysFalse()
        if isinstance(e, Not):
            return self._tr(e.child, not negate, partial)
        if isinstance(e, (And, Or)):
            # NOT (a AND b) is true when a or b is false: (NOT a) OR (NOT b); likewise for OR
            conj = isinstance(e, And) != negate
            left = self._tr(e.left, negate, partial and conj)
            right = self._tr(e.right, negate, partial and conj)
            if conj:
                if left is None or right is None:
                    return (left if right is None else right) if partial else None
                return ie.And(left, right)
            if left is None or right is None:
                return None
            return ie.Or(left, right)
        if isinstance(e, Opaque):
            return None
        return self._atom(e, negate)

    def _ref(self, term: str) -> tuple[str, IcebergType] | None:
        key = term.lower()
        typ = self.types.get(key)
        return (self.names[key], typ) if typ is not None else None

    def _atom(self, e: Expr, negate: bool) -> ie.BooleanExpression | None:
        if isinstance(e, (IsNull, NotNull)):
            ref = self._ref(e.term)
            if ref is None:
                return None
            is_null = isinstance(e, IsNull) != negate
            return ie.IsNull(ref[0]) if is_null else ie.NotNull(ref[0])
        if isinstance(e, Comparison):
            return self._comparison(e.negated() if negate else type(e), e.term, e.value)
        if isinstance(e, In):
            return self._in(e, negate)
        if isinstance(e, Like):
            return self._like(e, negate)
        return None

    def _comparison(self, op: type[Comparison], term: str, value: Any) -> ie.BooleanExpression | None:
        ref = self._ref(term)
        if ref is None:
            return None
        name, typ = ref
        if isinstance(typ, FloatType) or (isinstance(typ, DoubleType) and op in _ORDERING):
            return None
        lit = iceberg_literal(value, typ)
        if lit is None:
            return None
        if op is EqualTo:
            return ie.EqualTo(name, lit)
        if op is NotEqualTo:
            return ie.And(ie.NotNull(name), ie.NotEqualTo(name, lit))
        cls = {LessThan: ie.LessThan, LessThanOrEqual: ie.LessThanOrEqual, GreaterThan: ie.GreaterThan,
               GreaterThanOrEqual: ie.GreaterThanOrEqual}[op]
        return ie.And(ie.NotNull(name), cls(name, lit))

    def _in(self, e: In, negate: bool) -> ie.BooleanExpression | None:
        ref = self._ref(e.term)
        if ref is None:
            return None
        name, typ = ref
        if isinstance(typ, FloatType):
            return None
        has_null = any(v is None for v in e.values)
        lits = [iceberg_literal(v, typ) for v in e.values if v is not None]
        if any(lit is None for lit in lits):
            return None
        values = tuple({lit.value: lit for lit in lits if lit is not None}.values())
        if negate:  # x NOT IN (..., NULL) is never true; otherwise x is not NULL and not listed
            if has_null:
                return ie.AlwaysFalse()
            if not values:
                return ie.NotNull(name)
            return ie.And(ie.NotNull(name), ie.NotIn(name, values))
        if not values:
            return ie.AlwaysFalse()
        return ie.In(name, values)

    def _like(self, e: Like, negate: bool) -> ie.BooleanExpression | None:
        """``LIKE 'abc%'`` (a prefix without other wildcards or escapes) is STARTS WITH."""
        ref = self._ref(e.term)
        if ref is None or not isinstance(ref[1], StringType):
            return None
        prefix = e.pattern[:-1]
        if not e.pattern.endswith("%") or any(ch in prefix for ch in "%_\\") or not prefix:
            return None
        if negate:
            return ie.And(ie.NotNull(ref[0]), ie.NotStartsWith(ref[0], prefix))
        return ie.StartsWith(ref[0], prefix)


def to_iceberg(expr: Expr | None, types: Mapping[str, IcebergType]) -> ie.BooleanExpression:
    """The translatable part of ``expr`` (AlwaysTrue when none, or for None).

    >>> to_iceberg(And(GreaterThan("id", 10), Opaque("f(x)")), {"id": LongType()})
    And(left=NotNull(term=Reference(name='id')), right=GreaterThan(term=Reference(name='id'), literal=LongLiteral(10)))
    """
    if expr is None:
        return ie.AlwaysTrue()
    out = Translator(types).translate(expr)
    return ie.AlwaysTrue() if out is None else out
