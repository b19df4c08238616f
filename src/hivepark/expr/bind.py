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
  never bound;
* any other string vs a numeric column (``hr = '5.0'``, ``hr IN ('1.5', 2)``): hivepark runs
  Hive's comparison, ``TRY_CAST(x AS DOUBLE)`` on every side (``sql.analyzer.hive_comparisons``),
  so the literals bind to those doubles (:meth:`hivepark.types.HiveType.bind_as_double`);
* a NULL member of an IN stays: the IN is NULL where the value is none of the others;
* TIMESTAMP literal vs DATE column: Spark compares the date's midnight, so a midnight literal is
  its date and another lies between two dates (:func:`_date_vs_timestamp`).

Example:
    >>> from hivepark.expr.nodes import And, EqualTo, GreaterThan
    >>> bind(And(EqualTo("ds", "2008-04-08"), GreaterThan("hr", "9")),
    ...      {"ds": "date", "hr": "int"})
    And(left=EqualTo(term='ds', value='2008-04-08'), right=GreaterThan(term='hr', value=9))
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    EqualTo,
    Expr,
    GreaterThan,
    In,
    LessThan,
    LessThanOrEqual,
    Like,
    Not,
    NotEqualTo,
    Opaque,
    Or,
    Unary,
    Value,
)
from hivepark.expr.visitors import to_filter_string
from hivepark.types import HiveType


def bind_literal(value: Value, hive_type: str | HiveType) -> Value | None:
    """The value to compare a column of ``hive_type`` with, or None when not provably safe
    (the rules are :meth:`hivepark.types.HiveType.bind_literal`'s).

    Example:
        >>> import datetime
        >>> bind_literal("10", "int"), bind_literal(1, "string"), bind_literal("1.5", "int")
        (10, None, None)
        >>> bind_literal(datetime.date(2008, 4, 8), "date"), bind_literal("300", "tinyint")
        ('2008-04-08', None)
    """
    return HiveType.parse(hive_type).bind_literal(value)


def binds_unchanged(values: Iterable[Value], hive_type: str | HiveType) -> bool:
    """True when :func:`bind_literal` would return every value as it is: Python integers
    within an integral type's range, or strings for a STRING/VARCHAR column. Lets a large
    value set skip the per-value work.

    Example:
        >>> binds_unchanged([1, 2], "int"), binds_unchanged([2**40], "int")
        (True, False)
        >>> binds_unchanged(["a"], "varchar(3)"), binds_unchanged(["a"], "char(3)")
        (True, False)
    """
    return HiveType.parse(hive_type).binds_unchanged(values)


def _opaque(atom: Expr) -> Opaque:
    return Opaque(sql=to_filter_string(atom), refs=atom.columns())


def _date_vs_timestamp(atom: Comparison) -> Expr:
    """A DATE column compared with a TIMESTAMP literal ``v``: Spark compares the date's midnight
    with ``v``, both in the session's time zone, which keeps their order as wall-clock times,
    so a midnight ``v`` is its date, and any other lies between two dates (``d < v`` is ``d <=
    v's date``, ``d = v`` holds for no date).

    >>> _date_vs_timestamp(LessThan("d", datetime.datetime(2024, 1, 5, 10)))
    LessThanOrEqual(term='d', value='2024-01-05')
    >>> from hivepark.expr.nodes import GreaterThanOrEqual
    >>> _date_vs_timestamp(GreaterThanOrEqual("d", datetime.datetime(2024, 1, 5)))
    GreaterThanOrEqual(term='d', value='2024-01-05')
    """
    v = atom.value
    assert isinstance(v, datetime.datetime)
    day = v.date().isoformat()
    if v == datetime.datetime(v.year, v.month, v.day):
        return type(atom)(atom.term, day)
    if isinstance(atom, (EqualTo, NotEqualTo)):  # after day and before the next: FALSE, NULL for NULL
        try:
            after = (v.date() + datetime.timedelta(days=1)).isoformat()
        except OverflowError:
            after = day
        never = And(GreaterThan(atom.term, day), LessThan(atom.term, after))
        return never if isinstance(atom, EqualTo) else Not(never)
    if isinstance(atom, (LessThan, LessThanOrEqual)):
        return LessThanOrEqual(atom.term, day)
    return GreaterThan(atom.term, day)


def _bind_atom(atom: Expr, hive_type: str) -> Expr:
    if isinstance(atom, Comparison) and HiveType.parse(hive_type).kind == "date" \
            and isinstance(atom.value, datetime.datetime) and atom.value.tzinfo is None:
        return _date_vs_timestamp(atom)
    if isinstance(atom, Comparison):
        value = bind_literal(atom.value, hive_type)
        if value is None and isinstance(atom.value, str):  # Hive's comparison: both sides as DOUBLE
            value = HiveType.parse(hive_type).bind_as_double(atom.value)
        return _opaque(atom) if value is None else type(atom)(atom.term, value)
    if isinstance(atom, In):
        if binds_unchanged(atom.values, hive_type):  # thousands of runtime keys: no per-value work
            return atom
        return _bind_in(atom, HiveType.parse(hive_type))
    if isinstance(atom, Like):
        string_column = HiveType.parse(hive_type).kind == "string"
        return atom if string_column and isinstance(atom.pattern, str) else _opaque(atom)
    return atom


def _bind_in(atom: In, t: HiveType) -> Expr:
    """``x IN (...)`` bound: a NULL member stays (the IN is then NULL, not FALSE, where ``x``
    is none of the others: ``x NOT IN (1, NULL)`` is never TRUE); a string that does not bind
    exactly to a numeric column makes Hive's comparison of every member as DOUBLE."""
    members = [v for v in atom.values if v is not None]
    if t.kind == "date":  # a TIMESTAMP member equals a date's midnight, or no date (_date_vs_timestamp)
        members = [v.date() if isinstance(v, datetime.datetime) and v.tzinfo is None
                   and v == datetime.datetime(v.year, v.month, v.day) else v for v in members]
        nulls = (None,) if len(members) < len(atom.values) else ()
        never = [v for v in members if isinstance(v, datetime.datetime) and v.tzinfo is None]
        members = [v for v in members if not (isinstance(v, datetime.datetime) and v.tzinfo is None)]
        if never and not members and not nulls:  # equal to no date (an empty IN would be FALSE for NULL too)
            return _date_vs_timestamp(EqualTo(atom.term, never[0]))
        atom = In(atom.term, (*members, *nulls))
    bound = [t.bind_literal(v) for v in members]
    if any(b is None and isinstance(v, str) for v, b in zip(members, bound)):
        bound = [t.bind_as_double(v) for v in members]
    if any(b is None for b in bound):
        return _opaque(atom)
    nulls = (None,) if len(members) < len(atom.values) else ()
    return In(atom.term, (*bound, *nulls))  # type: ignore[arg-type]


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
        >>> bind(EqualTo("hr", "5.0"), {"hr": "int"}), bind(In("hr", ("1.5", 2, None)), {"hr": "int"})
        (EqualTo(term='hr', value=5.0), In(term='hr', values=(1.5, 2.0, None)))
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
    term: str = expr.term  # type: ignore[attr-defined]
    if term not in types:
        return expr
    return _bind_atom(expr, types[term])
