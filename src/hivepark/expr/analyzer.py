"""IndexPredicateAnalyzer: Hive's helper that finds the sargable part of a predicate.

A storage handler registers the comparison operators its source can satisfy and the
columns it may compare, then :meth:`IndexPredicateAnalyzer.analyze_predicate` splits a
predicate into *search conditions* (``column op constant``, each keeping its original
expression) and a *residual* that Spark must still apply. Only top-level conjunctions are
decomposed: an ``Or`` or ``Not`` is kept whole in the residual. The tree always holds the
column on the left (``5 < x`` is built as ``x > 5``, the constant flipped), and
:func:`flip_operator` gives the flipped operator for handlers that build conditions
themselves. :meth:`IndexPredicateAnalyzer.translate_search_conditions` turns conditions
back into a predicate (a balanced conjunction, :func:`~hivepark.expr.nodes.and_all`).

Operators are the filter string's symbols: ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``, and
also ``in``, ``is null``, ``is not null`` and ``like`` (whose constant is the value tuple,
``None`` and the pattern).

Example:
    >>> from hivepark.expr.nodes import And, EqualTo, GreaterThan, Opaque
    >>> a = IndexPredicateAnalyzer()
    >>> a.add_comparison_op("="); a.add_comparison_op(">")
    >>> conds: list[IndexSearchCondition] = []
    >>> residual = a.analyze_predicate(And(GreaterThan("key", 3), Opaque("upper(y) = 'XYZ'", frozenset({"y"}))), conds)
    >>> [(c.column, c.operator, c.constant) for c in conds], residual
    ([('key', '>', 3)], Opaque(sql="upper(y) = 'XYZ'", refs=frozenset({'y'})))
    >>> a.translate_search_conditions(conds)
    GreaterThan(term='key', value=3)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hivepark.expr.nodes import (
    AlwaysTrue,
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
    NotEqualTo,
    NotNull,
    and_all,
)
from hivepark.expr.visitors import conjuncts

COMPARISON_OPS: dict[str, type[Comparison]] = {
    "=": EqualTo, "<>": NotEqualTo, "<": LessThan, "<=": LessThanOrEqual,
    ">": GreaterThan, ">=": GreaterThanOrEqual,
}
OTHER_OPS = ("in", "is null", "is not null", "like")
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def flip_operator(op: str) -> str:
    """The operator that keeps ``constant op column`` true when written ``column op' constant``.

    >>> flip_operator("<"), flip_operator("=")
    ('>', '=')
    """
    try:
        return _FLIP[op]
    except KeyError:
        raise ValueError(f"{op!r} is not a comparison operator") from None


@dataclass(frozen=True)
class IndexSearchCondition:
    """``column operator constant``; ``expr`` is the original comparison it came from."""

    column: str
    operator: str
    constant: Any
    expr: Expr


def _operator_of(atom: Expr) -> str | None:
    if isinstance(atom, Comparison):
        return atom.op
    if isinstance(atom, In):
        return "in"
    if isinstance(atom, IsNull):
        return "is null"
    if isinstance(atom, NotNull):
        return "is not null"
    if isinstance(atom, Like):
        return "like"
    return None


def condition_of(atom: Expr) -> IndexSearchCondition | None:
    """The search condition an atom is, or None (``And``/``Or``/``Not``/``Opaque``...)."""
    op = _operator_of(atom)
    if op is None:
        return None
    column: str = atom.term  # type: ignore[attr-defined]
    if isinstance(atom, Comparison):
        constant: Any = atom.value
    elif isinstance(atom, In):
        constant = atom.values
    elif isinstance(atom, Like):
        constant = atom.pattern
    else:
        constant = None
    return IndexSearchCondition(column, op, constant, atom)


class IndexPredicateAnalyzer:
    """Detects simple sargable conditions in a predicate (Hive's class of the same name)."""

    def __init__(self) -> None:
        self._ops: set[str] = set()
        self._columns: set[str] | None = None  # None: every column is allowed

    def add_comparison_op(self, op: str) -> None:
        """Registers an operator an index search can satisfy. Unless this is called,
        :meth:`analyze_predicate` never finds a condition."""
        op = " ".join(op.lower().split())
        if op not in COMPARISON_OPS and op not in OTHER_OPS:
            raise ValueError(f"Unknown comparison operator {op!r}; known: "
                             f"{', '.join([*COMPARISON_OPS, *OTHER_OPS])}")
        self._ops.add(op)

    def clear_allowed_column_names(self) -> None:
        """No column is allowed until :meth:`allow_column_name` (initially all are)."""
        self._columns = set()

    def allow_column_name(self, column: str) -> None:
        if self._columns is None:
            self._columns = set()
        self._columns.add(column.lower())

    def allow_column_names(self, columns: Iterable[str]) -> None:
        for c in columns:
            self.allow_column_name(c)

    def _accepts(self, cond: IndexSearchCondition) -> bool:
        return cond.operator in self._ops and (self._columns is None or cond.column in self._columns)

    def analyze_predicate(self, predicate: Expr,
                          search_conditions: list[IndexSearchCondition]) -> Expr | None:
        """Appends the conditions found in the top-level conjunction of ``predicate`` to
        ``search_conditions`` and returns the residual (None when nothing is left)."""
        rest: list[Expr] = []
        for part in conjuncts(predicate):
            cond = condition_of(part)
            if cond is not None and self._accepts(cond):
                search_conditions.append(cond)
            elif not isinstance(part, AlwaysTrue):
                rest.append(part)
        return and_all(*rest) if rest else None

    def translate_search_conditions(self, search_conditions: Iterable[IndexSearchCondition]) -> Expr:
        """The conditions as a predicate: a conjunction of their expressions (balanced)
        (``AlwaysTrue`` when there are none)."""
        return and_all(*(c.expr for c in search_conditions))
