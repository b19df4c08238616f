"""Bind literals to column types, keeping only comparisons that mean what Spark means.

A query writes ``hr = '11'`` or ``ds = DATE '2008-04-08'``; Spark SQL coerces one side
before comparing. :func:`bind` rewrites each atom's literal into the value hivepark will
compare with (a number for numeric columns, an ISO string for date columns), but only
when the result provably agrees with Spark in both ANSI and legacy mode. Any other atom
becomes :class:`Opaque`, which never prunes anything: binding is sound, not complete.

Spark's coercion rules this relies on (``TypeCoercion`` / ``AnsiTypeCoercion``):

* string vs integral column: the string is cast to the column type (legacy) or both to
  BIGINT (ANSI); a plain integer string inside the column's range is exact in both;
* string vs DOUBLE: both modes compare as DOUBLE; vs FLOAT: legacy casts the string to
  FLOAT, so only small integers (exact in FLOAT) are bound;
* string vs DECIMAL: both modes compare as DOUBLE (SPARK-22469), exact only for
  ``decimal(p, 0)`` with ``p <= 15`` and integer strings;
* string vs DATE: the string is cast to DATE; ``YYYY-MM-DD`` casts to the same day, and
  ISO strings order like dates;
* numeric literal vs string column: Spark casts the column, so ``'01' = 1`` is true:
  never bound.

Example:
    >>> from hivepark.expr.nodes import And, EqualTo, GreaterThan
    >>> bind(And(EqualTo("ds", "2008-04-08"), GreaterThan("hr", "9")),
    ...      {"ds": "date", "hr": "int"})
    And(left=EqualTo(term='ds', value='2008-04-08'), right=GreaterThan(term='hr', value=9))
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal

from hivepark.catalog.models import type_family
from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    Expr,
    In,
    Like,
    Not,
    Opaque,
    Or,
    Unary,
    Value,
)
from hivepark.expr.visitors import to_filter_string

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_REAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)

_INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32, "bigint": 64}
_FLOAT_EXACT = 2**24
_DECIMAL = re.compile(r"decimal\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?", re.ASCII)


def _base_type(hive_type: str) -> str:
    return hive_type.strip().lower().split("(")[0].strip()


def _integer_in_range(text: str, hive_type: str) -> int | None:
    if not _INTEGER.fullmatch(text):
        return None
    n = int(text)
    base = _base_type(hive_type)
    if base in _INTEGRAL_BITS:
        half = 2 ** (_INTEGRAL_BITS[base] - 1)
        return n if -half <= n < half else None
    if base in ("float", "real"):
        return n if abs(n) <= _FLOAT_EXACT else None
    m = _DECIMAL.fullmatch(hive_type.strip().lower())
    if m:  # compared as DOUBLE: exact only for small integral decimals
        precision, scale = int(m.group(1) or 10), int(m.group(2) or 0)
        return n if scale == 0 and precision <= 15 and len(str(abs(n))) <= precision else None
    return None


def _numeric_from_string(text: str, hive_type: str) -> Value | None:
    base = _base_type(hive_type)
    if base in ("double", "double precision"):
        if not _REAL.fullmatch(text):
            return None
        number = float(text)
        return number if number not in (float("inf"), float("-inf")) else None
    return _integer_in_range(text, hive_type)


def _bind_numeric(value: Value, hive_type: str) -> Value | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, Decimal)):
        return value
    if isinstance(value, str):
        return _numeric_from_string(value, hive_type)
    return None


def _bind_string(value: Value, hive_type: str) -> Value | None:
    # CHAR(n) pads values before comparing: left to Spark.
    if isinstance(value, str) and _base_type(hive_type) != "char":
        return value
    return None


def _bind_date(value: Value, hive_type: str) -> Value | None:
    if isinstance(value, datetime.datetime):
        return None
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return datetime.date.fromisoformat(value).isoformat()
        except ValueError:
            return None
    return None


def _bind_boolean(value: Value, hive_type: str) -> Value | None:
    return value if isinstance(value, bool) else None


_BINDERS: dict[str, Callable[[Value, str], Value | None]] = {
    "numeric": _bind_numeric,
    "string": _bind_string,
    "date": _bind_date,
    "boolean": _bind_boolean,
}


def bind_literal(value: Value, hive_type: str) -> Value | None:
    """The value to compare a column of ``hive_type`` with, or None when not provably safe.

    Example:
        >>> bind_literal("10", "int"), bind_literal(1, "string"), bind_literal("1.5", "int")
        (10, None, None)
        >>> bind_literal(datetime.date(2008, 4, 8), "date"), bind_literal("300", "tinyint")
        ('2008-04-08', None)
    """
    binder = _BINDERS.get(type_family(hive_type))
    return binder(value, hive_type) if binder is not None else None


def binds_unchanged(values: Iterable[Value], hive_type: str) -> bool:
    """True when :func:`bind_literal` would return every value as it is: Python integers
    within an integral type's range, or strings for a STRING/VARCHAR column. Lets a large
    value set skip the per-value work.

    Example:
        >>> binds_unchanged([1, 2], "int"), binds_unchanged([2**40], "int")
        (True, False)
        >>> binds_unchanged(["a"], "varchar(3)"), binds_unchanged(["a"], "char(3)")
        (True, False)
    """
    base = _base_type(hive_type)
    if base in _INTEGRAL_BITS:
        half = 2 ** (_INTEGRAL_BITS[base] - 1)
        return all(type(v) is int and -half <= v < half for v in values)
    if base in ("string", "varchar"):
        return all(type(v) is str for v in values)
    return False


def _opaque(atom: Expr) -> Opaque:
    return Opaque(sql=to_filter_string(atom), refs=atom.columns())


def _bind_atom(atom: Expr, hive_type: str) -> Expr:
    if isinstance(atom, Comparison):
        value = bind_literal(atom.value, hive_type)
        return _opaque(atom) if value is None else type(atom)(atom.term, value)
    if isinstance(atom, In):
        values = tuple(bind_literal(v, hive_type) for v in atom.values)
        if any(v is None for v in values):
            return _opaque(atom)
        return In(atom.term, values)  # type: ignore[arg-type]
    if isinstance(atom, Like):
        string_column = type_family(hive_type) == "string" and _base_type(hive_type) != "char"
        return atom if string_column and isinstance(atom.pattern, str) else _opaque(atom)
    return atom


def bind(expr: Expr, types: Mapping[str, str]) -> Expr:
    """Coerce each atom's literals to its column's Hive type; unsafe atoms become Opaque.

    Args:
        expr: The predicate, literals as written in the query.
        types: Column name to Hive type (e.g. ``{"hr": "int"}``); atoms on other columns
            are left unchanged.

    Returns:
        A tree of the same shape. A bound atom compares exactly as Spark SQL would; an
        atom that cannot be bound soundly (``s = 1`` on a string column, a LIKE on a
        number, a timestamp comparison, ...) is :class:`Opaque` with its SQL and columns.
        ``IsNull``/``NotNull`` never need binding.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, In
        >>> bind(In("hr", ("1", 2)), {"hr": "bigint"})
        In(term='hr', values=(1, 2))
        >>> bind(EqualTo("s", 1), {"s": "string"})
        Opaque(sql='(s = 1)', refs=frozenset({'s'}))
    """
    lowered = {name.lower(): hive_type for name, hive_type in types.items()}
    return _bind(expr, lowered)


def _bind(expr: Expr, types: Mapping[str, str]) -> Expr:
    if isinstance(expr, And):
        return And(_bind(expr.left, types), _bind(expr.right, types))
    if isinstance(expr, Or):
        return Or(_bind(expr.left, types), _bind(expr.right, types))
    if isinstance(expr, Not):
        return Not(_bind(expr.child, types))
    if isinstance(expr, (AlwaysTrue, AlwaysFalse, Opaque, Unary)):
        return expr
    term: str = getattr(expr, "term")
    if term not in types:
        return expr
    return _bind_atom(expr, types[term])
