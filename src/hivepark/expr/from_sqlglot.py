"""Translate sqlglot expressions into the predicate tree (the only sqlglot user in expr/).

What the tree can model becomes atoms; everything else becomes :class:`Opaque` carrying
its Spark SQL text and the columns of interest it reads, so it can only land in a
residual. Literals keep Spark's typing: ``1`` is an ``int``, ``1.5`` a ``Decimal``,
``1.5E0`` a ``float`` and ``DATE '2008-04-08'`` a ``datetime.date``.

Example:
    >>> parse_filter_string("((ds = '2008-04-08') and (9 < hr))")
    And(left=EqualTo(term='ds', value='2008-04-08'), right=GreaterThan(term='hr', value=9))
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Final

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import SqlglotError

from hivepark.errors import ParseError
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
    Value,
    balanced,
)
from hivepark.types import HiveType

Resolver = Callable[[exp.Column], "str | None"]


class _NoLiteral:
    """Marker: the node is not a literal the tree can hold."""


_NO: Final = _NoLiteral()

_COMPARISONS: dict[type[exp.Expression], type[Comparison]] = {
    exp.EQ: EqualTo,
    exp.NEQ: NotEqualTo,
    exp.LT: LessThan,
    exp.LTE: LessThanOrEqual,
    exp.GT: GreaterThan,
    exp.GTE: GreaterThanOrEqual,
}
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_ISO_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?", re.ASCII
)
_INTEGER = re.compile(r"[0-9]+", re.ASCII)
_NUMBER = re.compile(r"([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _number(text: str) -> Value | _NoLiteral:
    if _INTEGER.fullmatch(text):
        return int(text)
    if not _NUMBER.fullmatch(text):
        return _NO
    if "e" in text.lower():
        value = float(text)  # Spark reads exponent literals as DOUBLE
        return value if abs(value) != float("inf") else _NO
    return Decimal(text)


def _negate(value: Value | _NoLiteral) -> Value | _NoLiteral:
    if isinstance(value, Decimal):
        return value.copy_negate()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return -value
    return _NO


def _hive_type(to: exp.DataType) -> HiveType:
    return HiveType.parse(to.sql(dialect="hive"))


def _parse_temporal(text: str, to: HiveType) -> Value | _NoLiteral:
    try:
        if to.kind == "date" and _ISO_DATE.fullmatch(text):
            return datetime.date.fromisoformat(text)
        if to.kind == "timestamp" and _ISO_TIMESTAMP.fullmatch(text):
            return datetime.datetime.fromisoformat(text)
    except ValueError:
        return _NO
    return _NO


def _decimal_fits(value: Decimal, to: HiveType) -> bool:
    precision, scale = to.precision_scale
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int) or (exponent < 0 and -exponent > scale):
        return False
    integer_digits = len(digits) + exponent if value != 0 else 0
    return integer_digits <= precision - scale


def _cast_number(value: Value | _NoLiteral, to: HiveType) -> Value | _NoLiteral:
    """``CAST(<number> AS <type>)`` as Spark computes it, when that is exact."""
    if isinstance(value, _NoLiteral) or isinstance(value, bool):
        return _NO
    rng = to.integral_range()
    if rng is not None:
        exact = isinstance(value, int) or (isinstance(value, Decimal) and value == int(value))
        n = int(value) if exact else None  # type: ignore[arg-type]
        return n if n is not None and rng[0] <= n <= rng[1] else _NO
    if to.kind == "float64" and isinstance(value, (int, float, Decimal)):
        return float(value)
    if to.kind == "decimal" and isinstance(value, (int, Decimal)):
        as_decimal = Decimal(value)
        return as_decimal if _decimal_fits(as_decimal, to) else _NO
    return _NO


def _signed_number(text: str) -> Value | _NoLiteral:
    negative = text.startswith("-")
    value = _number(text[1:] if negative else text)
    return _negate(value) if negative else value


def _cast_literal(node: exp.Cast) -> Value | _NoLiteral:
    inner, to = _unparen(node.this), _hive_type(node.to)
    if isinstance(inner, exp.Literal) and inner.is_string:
        if to.kind == "decimal":  # 1.5BD is CAST('1.5' AS DECIMAL(2,1))
            return _cast_number(_signed_number(inner.this), to)
        return _parse_temporal(inner.this, to)
    return _cast_number(_literal(inner), to)


def _literal(node: exp.Expression) -> Value | _NoLiteral:
    """The Python value of a literal node, or ``_NO``."""
    node = _unparen(node)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(node.this)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        return _negate(_literal(node.this))
    if isinstance(node, exp.Cast):
        return _cast_literal(node)
    return _NO


def _column(node: exp.Expression, resolve: Resolver) -> str | None:
    node = _unparen(node)
    return resolve(node) if isinstance(node, exp.Column) else None


def _comparison(node: exp.Binary, resolve: Resolver) -> Expr | None:
    cls = _COMPARISONS[type(node)]
    column = _column(node.this, resolve)
    if column is not None:
        value = _literal(node.expression)
        return None if isinstance(value, _NoLiteral) else cls(column, value)
    column = _column(node.expression, resolve)
    if column is not None:
        value = _literal(node.this)
        return None if isinstance(value, _NoLiteral) else cls.flipped()(column, value)
    return None


def _in(node: exp.In, resolve: Resolver) -> Expr | None:
    if any(node.args.get(k) for k in ("query", "unnest", "field")):
        return None
    column = _column(node.this, resolve)
    values = [None if isinstance(v, exp.Null) else _literal(v) for v in node.expressions]
    if column is None or any(isinstance(v, _NoLiteral) for v in values):
        return None
    return In(column, tuple(values))  # type: ignore[arg-type]


def _between(node: exp.Between, resolve: Resolver) -> Expr | None:
    column = _column(node.this, resolve)
    low, high = _literal(node.args["low"]), _literal(node.args["high"])
    if column is None or node.args.get("symmetric") or isinstance(low, _NoLiteral) \
            or isinstance(high, _NoLiteral):
        return None
    return And(GreaterThanOrEqual(column, low), LessThanOrEqual(column, high))


def _like(node: exp.Like, resolve: Resolver) -> Expr | None:
    column = _column(node.this, resolve)
    pattern = _unparen(node.expression)
    if column is None or not (isinstance(pattern, exp.Literal) and pattern.is_string):
        return None
    like = Like(column, pattern.this)
    return Not(like) if node.args.get("negate") else like


def _is_null(node: exp.Is, resolve: Resolver) -> Expr | None:
    column = _column(node.this, resolve)
    if column is None or not isinstance(node.expression, exp.Null):
        return None
    return NotNull(column) if node.args.get("negate") else IsNull(column)


def _null_safe(node: exp.NullSafeEQ | exp.NullSafeNEQ, resolve: Resolver) -> Expr | None:
    """``x <=> v`` (``x IS NOT DISTINCT FROM v``), never NULL: ``x IS NULL`` for a NULL ``v``,
    else ``x IS NOT NULL AND x = v``; ``IS DISTINCT FROM`` is its negation. Only for a ``v`` that
    is surely not NULL once compared: a string may compare as NULL (``hr <=> 'abc'`` is Hive's
    ``TRY_CAST('abc' AS DOUBLE)``, so TRUE where ``hr`` is NULL), so that is left to Spark."""
    column, other = _column(node.this, resolve), node.expression
    if column is None:
        column, other = _column(node.expression, resolve), node.this
    if column is None:
        return None
    if isinstance(_unparen(other), exp.Null):
        same: Expr = IsNull(column)
    else:
        value = _literal(other)
        if isinstance(value, (_NoLiteral, str)):
            return None
        same = And(NotNull(column), EqualTo(column, value))
    return same if isinstance(node, exp.NullSafeEQ) else Not(same)


def _atom(node: exp.Expression, resolve: Resolver) -> Expr | None:
    if type(node) in _COMPARISONS:
        return _comparison(node, resolve)
    if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
        return _null_safe(node, resolve)
    if isinstance(node, exp.In):
        return _in(node, resolve)
    if isinstance(node, exp.Between):
        return _between(node, resolve)
    if type(node) is exp.Like:
        return _like(node, resolve)
    if isinstance(node, exp.Is):
        return _is_null(node, resolve)
    if isinstance(node, exp.Column):  # a bare condition column: ``WHERE d.holiday``
        column = resolve(node)  # binding keeps it only for a BOOLEAN column
        return EqualTo(column, True) if column is not None else None
    return None


_NONDETERMINISTIC = (exp.Rand, exp.Randn, exp.Uuid, exp.Shuffle, exp.Uniform, exp.Randstr)


def maybe_nondeterministic(node: exp.Expression) -> bool:
    """A random function (``rand()``, ``uuid()``, ...), or one sqlglot does not know (a UDF,
    ``monotonically_increasing_id()``, ``input_file_name()``), which may be non-deterministic.

    >>> [maybe_nondeterministic(sqlglot.parse_one(f"SELECT {f}", read="hive"))
    ...  for f in ("upper(x)", "rand(1) < 0.5", "uuid()", "my_udf(x)")]
    [False, True, True, True]
    """
    return any(isinstance(f, _NONDETERMINISTIC + (exp.Anonymous,)) for f in node.find_all(exp.Func))


class ConditionFacts:
    """What a query's analysis asks of its condition nodes, worked out once per node for
    all the query's tables (the same conjunct is translated for each table, with another
    resolver), while the nodes are unchanged: each node's Spark SQL text and the columns it
    reads. Kept by ``id(node)`` with the node held, so that its id is not reused."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[exp.Expression, str]] = {}
        self._columns: dict[int, tuple[exp.Expression, list[exp.Column], bool]] = {}

    def text(self, node: exp.Expression) -> str:
        hit = self._texts.get(id(node))
        if hit is None:
            hit = self._texts[id(node)] = (node, node.sql(dialect="spark"))
        return hit[1]

    def columns(self, node: exp.Expression) -> tuple[list[exp.Column], bool]:
        """The columns in ``node`` (in subqueries too) and whether it holds a subquery."""
        hit = self._columns.get(id(node))
        if hit is None:
            cols: list[exp.Column] = []
            nested = False
            for n in node.walk():
                if isinstance(n, exp.Column):
                    cols.append(n)
                elif isinstance(n, (exp.Subquery, exp.Exists, exp.Select)):
                    nested = True
            hit = self._columns[id(node)] = (node, cols, nested)
        return hit[1], hit[2]


def spark_text(node: exp.Expression, texts: ConditionFacts | None = None) -> str:
    """``node`` as Spark SQL; with ``texts``, rendered once and reused for the same node."""
    return node.sql(dialect="spark") if texts is None else texts.text(node)


def _opaque(node: exp.Expression, resolve: Resolver, texts: ConditionFacts | None) -> Opaque:
    cols = texts.columns(node)[0] if texts is not None else node.find_all(exp.Column)
    refs = (resolve(c) for c in cols)
    return Opaque(sql=spark_text(node, texts), refs=frozenset(r for r in refs if r))


def from_sqlglot(node: exp.Expression, resolve: Resolver, texts: ConditionFacts | None = None) -> Expr:
    """Translate a sqlglot boolean expression into the predicate tree.

    Args:
        node: A condition, e.g. a WHERE clause's ``this``.
        resolve: Returns the lower-case column name for a column of the scan of
            interest, else None (such columns are not modelled).
        texts: opaque sub-expressions' Spark SQL texts and columns (:class:`ConditionFacts`),
            filled and reused when given: the same condition translated for each table
            of a query (with another ``resolve``) is rendered once, while the nodes are
            unchanged.

    Returns:
        The tree: comparisons, IN, BETWEEN (as ``>= and <=``), LIKE, IS [NOT] NULL, ``<=>``,
        AND/OR/NOT and TRUE/FALSE between one resolved column and literals; every other
        sub-expression is :class:`Opaque` (Spark SQL text plus resolved columns read).

    Example:
        >>> import sqlglot
        >>> cond = sqlglot.parse_one("hr BETWEEN 1 AND 2 OR upper(ds) = 'X'", read="hive")
        >>> from_sqlglot(cond, lambda c: c.name.lower())  # doctest: +NORMALIZE_WHITESPACE
        Or(left=And(left=GreaterThanOrEqual(term='hr', value=1),
                    right=LessThanOrEqual(term='hr', value=2)),
           right=Opaque(sql="UPPER(ds) = 'X'", refs=frozenset({'ds'})))
    """
    if isinstance(node, exp.Paren):
        return from_sqlglot(node.this, resolve, texts)
    if isinstance(node, (exp.And, exp.Or)):
        # sqlglot's chain of n ANDs (ORs) is n deep: its operands, as a balanced tree
        return balanced(And if isinstance(node, exp.And) else Or,
                        [from_sqlglot(n, resolve, texts) for n in _operands(node)])
    if isinstance(node, exp.Not):
        return _not(node, resolve, texts)
    if isinstance(node, exp.Boolean):
        return AlwaysTrue() if node.this else AlwaysFalse()
    atom = _atom(node, resolve)
    return atom if atom is not None else _opaque(node, resolve, texts)


def _operands(node: exp.And | exp.Or) -> list[exp.Expression]:
    """The operands of a chain of one connector as written, without parentheses (``a OR b
    OR c``: a, b, c; ``(a OR b) OR c``: the parenthesized OR, c), in order, found without
    recursion."""
    kind, out, todo = type(node), [], [node]
    while todo:
        n = todo.pop()
        if type(n) is kind:
            todo += [n.expression, n.this]  # popped left first
        else:
            out.append(n)
    return out


def _not(node: exp.Not, resolve: Resolver, texts: ConditionFacts | None) -> Expr:
    """``x IS NOT NULL`` (Not directly over Is) is NotNull; ``NOT (x IS NULL)`` stays Not."""
    child = node.this
    if isinstance(child, exp.Is) and not child.args.get("negate"):
        atom = _is_null(child, resolve)
        if isinstance(atom, IsNull):
            return NotNull(atom.term)
    return Not(from_sqlglot(child, resolve, texts))


def parse_filter_string(text: str) -> Expr:
    """Parse Hive's filter string form (as :func:`to_filter_string` writes it).

    Column names are lower-cased. ``parse_filter_string(to_filter_string(e)) == e`` for
    every tree without :class:`Opaque`.

    Raises:
        ParseError: The text is not a boolean expression; carries line and column.

    Example:
        >>> parse_filter_string("(not (hr in (1, -2.5)))")
        Not(child=In(term='hr', values=(1, Decimal('-2.5'))))
    """
    try:
        node = sqlglot.parse_one(text, read="hive")
    except SqlglotParseError as e:
        where = e.errors[0] if e.errors else {}
        raise ParseError(f"cannot parse filter {text!r}: {where.get('description', e)}",
                         where.get("line"), where.get("col")) from e
    except SqlglotError as e:
        raise ParseError(f"cannot parse filter {text!r}: {e}") from e
    if node is None:
        raise ParseError(f"cannot parse filter {text!r}: empty")
    return from_sqlglot(node, lambda column: column.name.lower())
