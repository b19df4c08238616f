"""Visitors over the predicate tree: filter strings, evaluation, NNF, projection.

One tree, many visitors: :class:`BooleanExpressionVisitor` walks a tree bottom-up and each
concrete visitor says what a node becomes given what its children became.
:func:`to_nnf` and :func:`project` rewrite top-down instead, because they must see a
``Not`` together with the atom below it.

Example:
    >>> from hivepark.expr.nodes import And, GreaterThanOrEqual, LessThan
    >>> e = And(GreaterThanOrEqual("key", 100), LessThan("key", 200))
    >>> to_filter_string(e)
    '((key >= 100) and (key < 200))'
    >>> evaluate(e, {"key": 150}), evaluate(e, {"key": None})
    (True, None)
"""

from __future__ import annotations

import datetime
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from decimal import Decimal
from functools import lru_cache, singledispatch
from typing import Any, Generic, TypeVar

from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    Expr,
    In,
    IsNull,
    Like,
    Not,
    NotNull,
    Opaque,
    Or,
    Unary,
)

T = TypeVar("T")


class BooleanExpressionVisitor(ABC, Generic[T]):
    """Bottom-up visitor: combine the results of children into the result of a node."""

    @abstractmethod
    def visit_true(self) -> T: ...

    @abstractmethod
    def visit_false(self) -> T: ...

    @abstractmethod
    def visit_not(self, child: T) -> T: ...

    @abstractmethod
    def visit_and(self, left: T, right: T) -> T: ...

    @abstractmethod
    def visit_or(self, left: T, right: T) -> T: ...

    @abstractmethod
    def visit_unary(self, node: Unary) -> T:
        """``IsNull`` or ``NotNull``."""

    @abstractmethod
    def visit_comparison(self, node: Comparison) -> T: ...

    @abstractmethod
    def visit_in(self, node: In) -> T: ...

    @abstractmethod
    def visit_like(self, node: Like) -> T: ...

    @abstractmethod
    def visit_opaque(self, node: Opaque) -> T: ...


@singledispatch
def visit(expr: Expr, visitor: BooleanExpressionVisitor[T]) -> T:
    """Walk ``expr`` bottom-up with ``visitor`` and return the root's result.

    Example:
        >>> from hivepark.expr.nodes import EqualTo
        >>> visit(EqualTo("ds", "a"), _FilterString())
        "(ds = 'a')"
    """
    raise TypeError(f"Cannot visit {type(expr).__name__}: not a predicate node")


@visit.register
def _(expr: AlwaysTrue, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_true()


@visit.register
def _(expr: AlwaysFalse, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_false()


@visit.register
def _(expr: Not, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_not(visit(expr.child, visitor))


@visit.register
def _(expr: And, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_and(visit(expr.left, visitor), visit(expr.right, visitor))


@visit.register
def _(expr: Or, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_or(visit(expr.left, visitor), visit(expr.right, visitor))


@visit.register
def _(expr: Unary, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_unary(expr)


@visit.register
def _(expr: Comparison, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_comparison(expr)


@visit.register
def _(expr: In, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_in(expr)


@visit.register
def _(expr: Like, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_like(expr)


@visit.register
def _(expr: Opaque, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_opaque(expr)


# ---------------------------------------------------------------- filter string

_SIMPLE_NAME = re.compile(r"[a-z_][a-z0-9_]*", re.ASCII)
_RESERVED = frozenset(
    """all alter and any array as asc between both by case cast char collate column
    commit create cross cube current current_date current_time current_timestamp
    current_user date decimal delete desc describe distinct div double drop else end
    escape except exists extract false fetch filter following for foreign from full
    function glob grant group grouping having if ilike in inner insert int intersect
    interval into is join lateral left like limit local localtime localtimestamp macro
    map minus natural none not null nulls of on or order out outer over partition
    percent preceding primary qualify range reduce references regexp revoke right rlike
    rollback rollup row rows select set similar some struct table tablesample then time
    timestamp to transform trigger true truncate unbounded union unique unknown update
    user using values view when where window with""".split()
)


def render_name(term: str) -> str:
    """A column name as it appears in a filter string: bare, or back-quoted if needed.

    Example:
        >>> render_name("ds"), render_name("date"), render_name("a`b")
        ('ds', '`date`', '`a``b`')
    """
    if _SIMPLE_NAME.fullmatch(term) and term not in _RESERVED:
        return term
    return "`" + term.replace("`", "``") + "`"


def _render_float(value: float) -> str:
    if math.isnan(value):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(value):
        return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
    text = repr(value)
    return text if "e" in text else text + "E0"  # exponent form: a DOUBLE in Spark


def render_literal(value: Any) -> str:
    """A literal as Hive and Spark SQL write it.

    Strings are single-quoted with ``\\`` and ``'`` backslash-escaped; ``Decimal`` is its
    plain text; ``float`` uses exponent form (a ``DOUBLE`` in Spark SQL); dates and
    timestamps are typed literals.

    Raises:
        ValueError: A non-finite ``Decimal``.
        TypeError: A value that is not a literal.

    Example:
        >>> render_literal("it's"), render_literal(Decimal("1.50")), render_literal(1.5)
        ("'it\\\\'s'", '1.50', '1.5E0')
        >>> render_literal(datetime.date(2008, 4, 8)), render_literal(True)
        ("DATE '2008-04-08'", 'true')
    """
    if value is None:
        return "null"  # only meaningful inside IN lists
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"Cannot write the decimal {value} as a SQL literal")
        return format(value, "f")
    if isinstance(value, float):
        return _render_float(value)
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE '{value.isoformat()}'"
    raise TypeError(f"Not a literal value: {value!r} ({type(value).__name__})")


class _FilterString(BooleanExpressionVisitor[str]):
    def visit_true(self) -> str:
        return "true"

    def visit_false(self) -> str:
        return "false"

    def visit_not(self, child: str) -> str:
        return f"(not {child})"

    def visit_and(self, left: str, right: str) -> str:
        return f"({left} and {right})"

    def visit_or(self, left: str, right: str) -> str:
        return f"({left} or {right})"

    def visit_unary(self, node: Unary) -> str:
        suffix = "is null" if isinstance(node, IsNull) else "is not null"
        return f"({render_name(node.term)} {suffix})"

    def visit_comparison(self, node: Comparison) -> str:
        return f"({render_name(node.term)} {node.op} {render_literal(node.value)})"

    def visit_in(self, node: In) -> str:
        values = ", ".join(render_literal(v) for v in node.values)
        return f"({render_name(node.term)} in ({values}))"

    def visit_like(self, node: Like) -> str:
        return f"({render_name(node.term)} like {render_literal(node.pattern)})"

    def visit_opaque(self, node: Opaque) -> str:
        return f"({node.sql})"


def to_filter_string(expr: Expr) -> str:
    """Hive's filter string form of a predicate; :func:`parse_filter_string` reads it back.

    Every node but ``true``/``false`` is parenthesised, so the text is unambiguous.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, In, IsNull, Not, Or
        >>> to_filter_string(Or(EqualTo("ds", "2008-04-08"), Not(In("hr", (1, 2)))))
        "((ds = '2008-04-08') or (not (hr in (1, 2))))"
        >>> to_filter_string(IsNull("ds"))
        '(ds is null)'
    """
    return visit(expr, _FilterString())


# ---------------------------------------------------------------- evaluation

TriBool = bool | None

@lru_cache(maxsize=512)
def like_regex(pattern: str) -> re.Pattern[str]:
    """Compile a SQL ``LIKE`` pattern (``%``, ``_``, backslash escape) to a regex.

    Raises:
        ValueError: A backslash before anything but ``%``, ``_`` or ``\\``, or at the end
            (Spark rejects these patterns too).

    Example:
        >>> bool(like_regex("2008-%").fullmatch("2008-04-08")), like_regex(r"a\\%").pattern
        (True, 'a%')
    """
    out: list[str] = []
    chars = iter(pattern)
    for c in chars:
        if c == "\\":
            nxt = next(chars, None)
            if nxt is None or nxt not in "%_\\":
                raise ValueError(f"Invalid LIKE pattern {pattern!r}: '\\' must be followed "
                                 "by '%', '_' or '\\'")
            out.append(re.escape(nxt))
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
    return re.compile("".join(out), re.DOTALL)


class _Evaluator(BooleanExpressionVisitor[TriBool]):
    def __init__(self, row: Mapping[str, Any]) -> None:
        self.row = row

    def visit_true(self) -> TriBool:
        return True

    def visit_false(self) -> TriBool:
        return False

    def visit_not(self, child: TriBool) -> TriBool:
        return None if child is None else not child

    def visit_and(self, left: TriBool, right: TriBool) -> TriBool:
        if left is False or right is False:
            return False
        return None if left is None or right is None else True

    def visit_or(self, left: TriBool, right: TriBool) -> TriBool:
        if left is True or right is True:
            return True
        return None if left is None or right is None else False

    def visit_unary(self, node: Unary) -> TriBool:
        return (self.row[node.term] is None) == isinstance(node, IsNull)

    def visit_comparison(self, node: Comparison) -> TriBool:
        value = self.row[node.term]
        if value is None or node.value is None:
            return None
        return node.holds(value, node.value)

    def visit_in(self, node: In) -> TriBool:
        value = self.row[node.term]
        if value is None:
            return None
        if any(v is not None and value == v for v in node.values):
            return True
        return None if any(v is None for v in node.values) else False

    def visit_like(self, node: Like) -> TriBool:
        value = self.row[node.term]
        if value is None:
            return None
        if not isinstance(value, str):
            raise TypeError(f"LIKE on a non-string value {value!r} of column {node.term!r}")
        return like_regex(node.pattern).fullmatch(value) is not None

    def visit_opaque(self, node: Opaque) -> TriBool:
        raise TypeError(f"Cannot evaluate an opaque predicate ({node.sql}); project it first")


def evaluate(expr: Expr, row: Mapping[str, Any]) -> bool | None:
    """Evaluate ``expr`` on one row with SQL's three-valued (Kleene) logic.

    ``row`` maps column names to Python values, ``None`` being NULL. Values are compared
    as they are, so bind the predicate to the column types first.

    Raises:
        TypeError: ``expr`` contains an :class:`Opaque` (use :func:`project` first).
        KeyError: ``row`` lacks a column the predicate reads.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, In, Or
        >>> evaluate(Or(EqualTo("a", 1), In("b", (2, None))), {"a": 0, "b": 3}) is None
        True
        >>> evaluate(Or(EqualTo("a", 1), In("b", (2,))), {"a": None, "b": 2})
        True
    """
    return visit(expr, _Evaluator(row))


Row = Mapping[str, Any]


def compile_predicate(expr: Expr) -> Callable[[Row], TriBool]:
    """``expr`` as a function of one row, with :func:`evaluate`'s result: the tree is walked
    once, and each IN is one hash lookup instead of a comparison per value (2,000 rows
    against a 2,000-value IN: 4,000,000 comparisons otherwise). Atoms other than IN, NOT,
    AND and OR are evaluated by :func:`evaluate`.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, In, Or
        >>> f = compile_predicate(Or(EqualTo("a", 1), In("b", (2, None))))
        >>> f({"a": 0, "b": 3}) is None, f({"a": 0, "b": 2})
        (True, True)
    """
    if isinstance(expr, (And, Or)):
        left, right = compile_predicate(expr.left), compile_predicate(expr.right)
        # OR is AND with the roles of TRUE and FALSE swapped (Kleene logic)
        stop = not isinstance(expr, And)

        def junction(row: Row) -> TriBool:
            a = left(row)
            if a is stop:
                return stop
            b = right(row)
            return stop if b is stop else None if a is None or b is None else not stop
        return junction
    if isinstance(expr, Not):
        child = compile_predicate(expr.child)

        def negated(row: Row) -> TriBool:
            v = child(row)
            return None if v is None else not v
        return negated
    if isinstance(expr, In):
        return _compiled_in(expr)
    return lambda row: evaluate(expr, row)


def in_members(values: Collection[Any]) -> frozenset[Any] | None:
    """The non-NULL ``values`` as the set an IN tests membership in (a row value, non-NULL
    and not NaN, is in the IN exactly when it is in this set); None when one is not
    hashable."""
    try:
        return frozenset(v for v in values if v is not None)
    except TypeError:
        return None


def _compiled_in(node: In) -> Callable[[Row], TriBool]:
    members = in_members(node.values)
    if members is None:  # an unhashable value: the tree's own evaluator
        return lambda row: evaluate(node, row)
    with_null = None in node.values
    term = node.term

    def within(row: Row) -> TriBool:
        value = row[term]
        if value is None:
            return None
        if value != value:  # NaN: equal to nothing, as evaluate compares (a set checks identity first)
            return evaluate(node, row)
        if value in members:
            return True
        return None if with_null else False
    return within


# ---------------------------------------------------------------- rewrites

class _Simplifier(BooleanExpressionVisitor[Expr]):
    def visit_true(self) -> Expr:
        return AlwaysTrue()

    def visit_false(self) -> Expr:
        return AlwaysFalse()

    def visit_not(self, child: Expr) -> Expr:
        if isinstance(child, AlwaysTrue):
            return AlwaysFalse()
        if isinstance(child, AlwaysFalse):
            return AlwaysTrue()
        return Not(child)

    def visit_and(self, left: Expr, right: Expr) -> Expr:
        if isinstance(left, AlwaysFalse) or isinstance(right, AlwaysFalse):
            return AlwaysFalse()
        if isinstance(left, AlwaysTrue):
            return right
        return left if isinstance(right, AlwaysTrue) else And(left, right)

    def visit_or(self, left: Expr, right: Expr) -> Expr:
        if isinstance(left, AlwaysTrue) or isinstance(right, AlwaysTrue):
            return AlwaysTrue()
        if isinstance(left, AlwaysFalse):
            return right
        return left if isinstance(right, AlwaysFalse) else Or(left, right)

    def visit_unary(self, node: Unary) -> Expr:
        return node

    def visit_comparison(self, node: Comparison) -> Expr:
        return node

    def visit_in(self, node: In) -> Expr:
        return node

    def visit_like(self, node: Like) -> Expr:
        return node

    def visit_opaque(self, node: Opaque) -> Expr:
        return node


def simplify(expr: Expr) -> Expr:
    """Fold ``AlwaysTrue``/``AlwaysFalse`` through ``And``, ``Or`` and ``Not``.

    Every rule holds in three-valued logic (``false and NULL`` is false, ``true or NULL``
    is true), so the result evaluates exactly like ``expr``.

    Example:
        >>> from hivepark.expr.nodes import EqualTo
        >>> simplify(And(AlwaysTrue(), Or(EqualTo("a", 1), Not(AlwaysTrue()))))
        EqualTo(term='a', value=1)
    """
    return visit(expr, _Simplifier())


def _negate(expr: Expr) -> Expr:
    """NNF of ``Not(expr)``."""
    if isinstance(expr, AlwaysTrue):
        return AlwaysFalse()
    if isinstance(expr, AlwaysFalse):
        return AlwaysTrue()
    if isinstance(expr, Not):
        return to_nnf(expr.child)
    if isinstance(expr, And):
        return Or(_negate(expr.left), _negate(expr.right))
    if isinstance(expr, Or):
        return And(_negate(expr.left), _negate(expr.right))
    if isinstance(expr, Comparison):
        return expr.negated()(expr.term, expr.value)
    if isinstance(expr, IsNull):
        return NotNull(expr.term)
    if isinstance(expr, NotNull):
        return IsNull(expr.term)
    return Not(expr)  # In, Like, Opaque


def to_nnf(expr: Expr) -> Expr:
    """Negation normal form: ``Not`` pushed down to the atoms.

    De Morgan's laws, ``not not x = x`` and ``not (a < v) = (a >= v)`` all hold in
    three-valued logic, so the result evaluates exactly like ``expr`` on every row.
    ``Not`` remains only directly above ``In``, ``Like`` and ``Opaque``.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, IsNull, Like
        >>> e = Not(Or(EqualTo("a", 1), And(IsNull("b"), Not(Like("c", "x%")))))
        >>> to_filter_string(to_nnf(e))
        "((a <> 1) and ((b is not null) or (c like 'x%')))"
    """
    if isinstance(expr, Not):
        return _negate(expr.child)
    if isinstance(expr, And):
        return And(to_nnf(expr.left), to_nnf(expr.right))
    if isinstance(expr, Or):
        return Or(to_nnf(expr.left), to_nnf(expr.right))
    return expr


def _weaken(expr: Expr, columns: frozenset[str]) -> Expr:
    """Replace atoms of an NNF tree that cannot be decided on ``columns`` by true."""
    if isinstance(expr, And):
        return And(_weaken(expr.left, columns), _weaken(expr.right, columns))
    if isinstance(expr, Or):
        return Or(_weaken(expr.left, columns), _weaken(expr.right, columns))
    if isinstance(expr, (AlwaysTrue, AlwaysFalse)):
        return expr
    atom = expr.child if isinstance(expr, Not) else expr
    if isinstance(atom, Opaque) or not atom.columns() <= columns:
        return AlwaysTrue()
    return expr


def project(expr: Expr, columns: Collection[str]) -> Expr:
    """A weaker predicate that reads only ``columns`` (for pruning on partition columns).

    Soundness invariant: for every row holding the columns both predicates read, if
    ``evaluate(expr, row)`` is True then ``evaluate(project(expr, columns), row)`` is
    True. So a partition whose values make the projection false or NULL holds no row
    that satisfies ``expr``. It holds because the NNF tree is monotone in its atoms and
    each dropped atom (any atom on another column, and every ``Opaque``) becomes true.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, GreaterThan
        >>> e = Not(And(EqualTo("ds", "a"), Or(GreaterThan("key", 5), Opaque("f(ds)"))))
        >>> project(e, {"ds"})
        AlwaysTrue()
        >>> project(And(EqualTo("ds", "a"), GreaterThan("key", 5)), {"ds"})
        EqualTo(term='ds', value='a')
    """
    wanted = frozenset(c.lower() for c in columns)
    return simplify(_weaken(to_nnf(expr), wanted))


def conjuncts(expr: Expr) -> list[Expr]:
    """The operands of a (nested) top-level ``And``, left to right.

    Example:
        >>> from hivepark.expr.nodes import EqualTo, Or
        >>> a, b, c = EqualTo("a", 1), EqualTo("b", 2), EqualTo("c", 3)
        >>> conjuncts(And(And(a, b), c)) == [a, b, c], conjuncts(Or(a, b)) == [Or(a, b)]
        (True, True)
    """
    if isinstance(expr, And):
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]
