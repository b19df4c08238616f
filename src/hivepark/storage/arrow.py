"""Predicates as pyarrow compute expressions, for the small sides of runtime pruning
(storage code: the Arrow translation lives with the readers it filters).

A map-join's small side is at most ``hive.mapjoin.smalltable.filesize`` bytes; when its own
filters translate exactly, pyarrow reads its files and applies them in-process, and the
distinct join keys are known in milliseconds instead of after a Spark job. The translation
is exact or nothing: :func:`to_arrow` returns None for any atom whose meaning could differ
from Spark's (floating point, decimals, CHAR padding, LIKE, timestamps, anything Opaque),
and the caller falls back to Spark.

Three-valued logic: the expression is put in negation normal form first, where ``And`` and
``Or`` are monotone, so a row is kept exactly when the SQL predicate is TRUE (pyarrow's
Kleene ``and``/``or`` and a dataset filter that drops NULL agree with SQL's WHERE there).
``NOT IN`` becomes ``NOT IN AND IS NOT NULL``, and is never true when the list holds NULL.

Example:
    >>> import pyarrow as pa
    >>> from hivepark.expr.nodes import And, EqualTo, Not, In
    >>> t = pa.table({"y": pa.array([1993, 1994, None], pa.int32()), "m": ["a", "b", "c"]})
    >>> e = to_arrow(And(EqualTo("y", 1994), Not(In("m", ("a",)))), {"y": "int", "m": "string"})
    >>> t.filter(e).to_pylist()
    [{'y': 1994, 'm': 'b'}]
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    Expr,
    In,
    IsNull,
    Not,
    NotNull,
    Or,
)
from hivepark.expr.visitors import simplify, to_nnf
from hivepark.types import HiveType

_TYPES: dict[str, pa.DataType] = {  # by HiveType.base; CHAR pads, so it has none
    "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
    "string": pa.string(), "varchar": pa.string(), "boolean": pa.bool_(), "date": pa.date32(),
}

def arrow_type(hive_type: str | HiveType) -> pa.DataType | None:
    """The Arrow type whose comparisons mean what Spark's do for ``hive_type``, or None.

    >>> arrow_type("INT"), arrow_type("varchar(10)"), arrow_type("double"), arrow_type("char(2)")
    (DataType(int32), DataType(string), None, None)
    """
    return _TYPES.get(HiveType.parse(hive_type).base)


def to_arrow(expr: Expr, types: Mapping[str, str]) -> pc.Expression | None:
    """A pyarrow filter keeping exactly the rows on which ``expr`` is TRUE, or None.

    Args:
        expr: A predicate bound to the column types (:func:`hivepark.expr.bind.bind`).
        types: Column name to Hive type for every column ``expr`` reads.

    Returns:
        The expression, or None when some atom has no exact Arrow counterpart.

    Example:
        >>> from hivepark.expr.nodes import GreaterThan, Like
        >>> str(to_arrow(GreaterThan("y", 1992), {"y": "int"}))
        '(y > 1992)'
        >>> to_arrow(Like("s", "a%"), {"s": "string"}) is None
        True
    """
    try:
        return _convert(to_nnf(simplify(expr)), {k.lower(): v for k, v in types.items()})
    except (_Untranslatable, pa.ArrowException, OverflowError):
        return None


class _Untranslatable(Exception):
    pass


def _convert(e: Expr, types: Mapping[str, str]) -> pc.Expression:
    if isinstance(e, AlwaysTrue):
        return pc.scalar(True)
    if isinstance(e, AlwaysFalse):
        return pc.scalar(False)
    if isinstance(e, And):
        return _convert(e.left, types) & _convert(e.right, types)
    if isinstance(e, Or):
        return _convert(e.left, types) | _convert(e.right, types)
    if isinstance(e, IsNull):
        return pc.field(_term(e.term, types)).is_null()
    if isinstance(e, NotNull):
        return pc.field(_term(e.term, types)).is_valid()
    if isinstance(e, Comparison):
        return e.apply(pc.field(_term(e.term, types)), _value(e.value, types[_term(e.term, types)]))
    if isinstance(e, In):
        return _in(e, types)
    if isinstance(e, Not) and isinstance(e.child, In):
        if any(v is None for v in e.child.values):
            return pc.scalar(False)  # x NOT IN (..., NULL) is never TRUE
        field = pc.field(_term(e.child.term, types))
        return ~_in(e.child, types) & field.is_valid()
    raise _Untranslatable(repr(e))  # Like, Opaque, Not above them


def _term(term: str, types: Mapping[str, str]) -> str:
    if term not in types or arrow_type(types[term]) is None:
        raise _Untranslatable(term)
    return term


def _in(e: In, types: Mapping[str, str]) -> pc.Expression:
    term = _term(e.term, types)
    values = [_value(v, types[term]) for v in e.values if v is not None]
    if not values:
        return pc.scalar(False)
    typ = arrow_type(types[term])
    return pc.field(term).isin(pa.array(values, type=pa.int64() if pa.types.is_integer(typ)
                                        else typ))


def _value(value: Any, hive_type: str) -> Any:
    """A bound literal as the Arrow scalar to compare with (exact types only)."""
    typ = arrow_type(hive_type)
    if pa.types.is_integer(typ) and isinstance(value, int) and not isinstance(value, bool):
        return pa.scalar(value, type=pa.int64())
    if pa.types.is_string(typ) and isinstance(value, str):
        return pa.scalar(value, type=pa.string())
    if pa.types.is_boolean(typ) and isinstance(value, bool):
        return pa.scalar(value)
    if pa.types.is_date(typ) and isinstance(value, str):
        try:
            return pa.scalar(datetime.date.fromisoformat(value), type=pa.date32())
        except ValueError:
            raise _Untranslatable(value) from None
    raise _Untranslatable(repr(value))
