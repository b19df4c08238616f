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
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

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
    """``term <op> value``. Each subclass carries its operator: ``op`` is its SQL text
    (also the filter string's), and :meth:`holds`, :meth:`negated` and :meth:`flipped`
    derive from it, so no other module keeps a table of comparison operators.

    >>> GreaterThan.op, GreaterThan.negated().op, GreaterThan.flipped().op
    ('>', '<=', '<')
    >>> LessThan("hr", 9).holds(3, 9), COMPARISONS["<>"]
    (True, <class 'hivepark.expr.nodes.NotEqualTo'>)
    """

    term: str
    value: Value
    op: ClassVar[str] = "?"

    def columns(self) -> frozenset[str]:
        return frozenset({self.term})

    @classmethod
    def apply(cls, left: Any, right: Any) -> Any:
        """``left <op> right`` with Python's operator: a bool for plain values, an expression
        for operands that build one (pyarrow fields, SQLAlchemy columns)."""
        return _PYTHON_OPERATORS[cls.op](left, right)

    @classmethod
    def holds(cls, left: Any, right: Any) -> bool:
        """``left <op> right`` on two non-NULL Python values."""
        return bool(cls.apply(left, right))

    @classmethod
    def negated(cls) -> type[Comparison]:
        """The comparison true exactly when this one is false (for non-NULL operands)."""
        return COMPARISONS[_NEGATED_OPS[cls.op]]

    @classmethod
    def flipped(cls) -> type[Comparison]:
        """The comparison with its operands swapped: ``v < x`` is ``x > v``."""
        return COMPARISONS[_FLIPPED_OPS[cls.op]]


@dataclass(frozen=True)
class EqualTo(Comparison):
    op: ClassVar[str] = "="


@dataclass(frozen=True)
class NotEqualTo(Comparison):
    op: ClassVar[str] = "<>"


@dataclass(frozen=True)
class LessThan(Comparison):
    op: ClassVar[str] = "<"


@dataclass(frozen=True)
class LessThanOrEqual(Comparison):
    op: ClassVar[str] = "<="


@dataclass(frozen=True)
class GreaterThan(Comparison):
    op: ClassVar[str] = ">"


@dataclass(frozen=True)
class GreaterThanOrEqual(Comparison):
    op: ClassVar[str] = ">="


COMPARISONS: dict[str, type[Comparison]] = {
    c.op: c for c in (EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan,
                      GreaterThanOrEqual)}
"""Each comparison node class by its operator."""

_PYTHON_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge}
_NEGATED_OPS = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_FLIPPED_OPS = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


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
    c: c.negated() for c in COMPARISONS.values()}
"""Each comparison class and its negation (derived from the operators on the nodes)."""


def balanced(junction: type[And] | type[Or], exprs: Sequence[Expr]) -> Expr:
    """``exprs`` (at least one) joined by ``junction`` as a balanced tree, of depth log2 of
    their number: thousands of ORs (a WHERE of many branches, DROP PARTITION of many specs)
    are walked, hashed and compiled recursively without reaching Python's recursion limit,
    where a left-deep chain of them would. AND and OR are associative (in three-valued logic
    too), so the shape does not change the result. Built without recursion.

    >>> balanced(Or, [EqualTo("a", 1), EqualTo("a", 2), EqualTo("a", 3)])  # doctest: +NORMALIZE_WHITESPACE
    Or(left=Or(left=EqualTo(term='a', value=1), right=EqualTo(term='a', value=2)),
       right=EqualTo(term='a', value=3))
    """
    if not exprs:
        raise ValueError("balanced() needs at least one expression")
    level = list(exprs)
    while len(level) > 1:  # pairs, level by level: the leftmost pairs first
        paired: list[Expr] = [junction(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def and_all(*exprs: Expr) -> Expr:
    """Conjunction as a balanced tree (:func:`balanced`), dropping ``AlwaysTrue``.

    >>> and_all()
    AlwaysTrue()
    >>> and_all(EqualTo("a", 1), AlwaysTrue())
    EqualTo(term='a', value=1)
    """
    kept: list[Expr] = []
    for e in exprs:
        if isinstance(e, AlwaysTrue):
            continue
        if isinstance(e, AlwaysFalse):
            return AlwaysFalse()
        kept.append(e)
    return balanced(And, kept) if kept else AlwaysTrue()


def or_all(*exprs: Expr) -> Expr:
    """Disjunction as a balanced tree (:func:`balanced`), dropping ``AlwaysFalse``.

    >>> or_all()
    AlwaysFalse()
    """
    kept: list[Expr] = []
    for e in exprs:
        if isinstance(e, AlwaysFalse):
            continue
        if isinstance(e, AlwaysTrue):
            return AlwaysTrue()
        kept.append(e)
    return balanced(Or, kept) if kept else AlwaysFalse()
