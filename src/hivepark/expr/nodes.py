"""The one predicate tree: frozen nodes named like Spark's data source filters.

Atoms compare one column (``term``, a lower-case column name) with literal values.
Anything hivepark cannot model is :class:`Opaque`; it only ever lands in a residual and
never drops a partition. Literal values are Python values as written in the query
(``str``, ``int``, ``float``, ``Decimal``, ``bool``, ``datetime.date``); binding them to a
column's type happens in :mod:`hivepark.expr.bind`.

Example:
    >>> from hivepark.expr.nodes import And, EqualTo, GreaterThan
    >>> sorted(And(EqualTo("ds", "2008-04-08"), GreaterThan("hr", 9)).columns())
    ['ds', 'hr']
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

Value = str | int | float | Decimal | bool | datetime.date | datetime.datetime


class Expr:
    """Base of every node. Nodes are immutable and hashable."""

    def columns(self) -> frozenset[str]:
        """The column names this predicate reads."""
        raise NotImplementedError

    def __and__(self, other: Expr) -> Expr:
        return And(self, other)

    def __or__(self, other: Expr) -> Expr:
        return Or(self, other)

    def __invert__(self) -> Expr:
        return Not(self)


@dataclass(frozen=True)
class AlwaysTrue(Expr):
    def columns(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True)
class AlwaysFalse(Expr):
    def columns(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True)
class Unary(Expr):
    term: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.term})


@dataclass(frozen=True)
class IsNull(Unary):
    pass


@dataclass(frozen=True)
class NotNull(Unary):
    pass


@dataclass(frozen=True)
class Comparison(Expr):
    """``term <op> value``; ``symbol`` is the operator in the filter string."""

    term: str
    value: Value
    symbol = "?"

    def columns(self) -> frozenset[str]:
        return frozenset({self.term})


@dataclass(frozen=True)
class EqualTo(Comparison):
    symbol = "="


@dataclass(frozen=True)
class NotEqualTo(Comparison):
    symbol = "<>"


@dataclass(frozen=True)
class LessThan(Comparison):
    symbol = "<"


@dataclass(frozen=True)
class LessThanOrEqual(Comparison):
    symbol = "<="


@dataclass(frozen=True)
class GreaterThan(Comparison):
    symbol = ">"


@dataclass(frozen=True)
class GreaterThanOrEqual(Comparison):
    symbol = ">="


@dataclass(frozen=True)
class In(Expr):
    """``term IN (values)``; an empty tuple never matches."""

    term: str
    values: tuple[Value, ...]

    def columns(self) -> frozenset[str]:
        return frozenset({self.term})


@dataclass(frozen=True)
class Like(Expr):
    """SQL ``LIKE`` with ``%``, ``_`` and backslash as the escape character (Spark's rules)."""

    term: str
    pattern: str

    def columns(self) -> frozenset[str]:
        return frozenset({self.term})


@dataclass(frozen=True)
class And(Expr):
    left: Expr
    right: Expr

    def columns(self) -> frozenset[str]:
        return self.left.columns() | self.right.columns()


@dataclass(frozen=True)
class Or(Expr):
    left: Expr
    right: Expr

    def columns(self) -> frozenset[str]:
        return self.left.columns() | self.right.columns()


@dataclass(frozen=True)
class Not(Expr):
    child: Expr

    def columns(self) -> frozenset[str]:
        return self.child.columns()


@dataclass(frozen=True)
class Opaque(Expr):
    """A predicate hivepark cannot evaluate: ``sql`` is its Spark SQL text."""

    sql: str
    refs: frozenset[str] = frozenset()

    def columns(self) -> frozenset[str]:
        return self.refs


NEGATED_COMPARISON: dict[type[Comparison], type[Comparison]] = {
    EqualTo: NotEqualTo,
    NotEqualTo: EqualTo,
    LessThan: GreaterThanOrEqual,
    GreaterThanOrEqual: LessThan,
    GreaterThan: LessThanOrEqual,
    LessThanOrEqual: GreaterThan,
}


def and_all(*exprs: Expr) -> Expr:
    """Left-deep conjunction, dropping ``AlwaysTrue``.

    >>> and_all()
    AlwaysTrue()
    >>> and_all(EqualTo("a", 1), AlwaysTrue())
    EqualTo(term='a', value=1)
    """
    out: Expr | None = None
    for e in exprs:
        if isinstance(e, AlwaysTrue):
            continue
        if isinstance(e, AlwaysFalse):
            return AlwaysFalse()
        out = e if out is None else And(out, e)
    return out if out is not None else AlwaysTrue()


def or_all(*exprs: Expr) -> Expr:
    """Left-deep disjunction, dropping ``AlwaysFalse``.

    >>> or_all()
    AlwaysFalse()
    """
    out: Expr | None = None
    for e in exprs:
        if isinstance(e, AlwaysFalse):
            continue
        if isinstance(e, AlwaysTrue):
            return AlwaysTrue()
        out = e if out is None else Or(out, e)
    return out if out is not None else AlwaysFalse()
