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

:func:`filter_sql` turns a predicate tree into a SQL condition: a visitor of the tree
(:class:`hivepark.expr.visitors.BooleanExpressionVisitor`). SOUNDNESS: a partition whose
values make the predicate TRUE under Spark's three-valued logic is always kept. Each node
becomes a condition for both polarities (``Not`` swaps them, De Morgan's laws combine them),
and an atom that cannot be expressed (``Opaque``, a column that is not a partition key, a
literal of another type family, ``LIKE`` on a non-string key) keeps every partition in either
polarity. Since AND and OR are monotone, the result keeps a superset of the matching
partitions, and is exact when every atom is expressible.

``DROP PARTITION`` is decided exactly with the tree's own evaluator
(:func:`hivepark.expr.visitors.evaluate`): :func:`bind_to_keys` binds each literal to the
value its key is compared in, and :func:`key_values` gives one partition's values in the
same terms.
"""

from __future__ import annotations

import datetime
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any

from sqlalchemy import Boolean, ColumnElement, and_, any_, bindparam, literal_column, not_, or_
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import BinaryExpression, BooleanClauseList, Grouping

from hivepark.catalog.models import Table
from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
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
    Unary,
    or_all,
)
from hivepark.expr.visitors import BooleanExpressionVisitor, compile_predicate, like_regex, visit
from hivepark.expr.visitors import evaluate as evaluate_tree
from hivepark.types import HiveType, spark_string_date

#: IN lists longer than this are rendered inline instead of as bound parameters outside
#: PostgreSQL (where an IN list is one array parameter): see :class:`InValues`.
INLINE_IN_THRESHOLD = 1000

_FLOAT_KINDS = ("float32", "float64")
_EXACT_LIMIT = 2 ** 53
_MAX_DOUBLE_INT = 2 ** 1023


def key_kind(hive_type: str | HiveType) -> str:
    """How a partition key is stored and compared: int, decimal, float32, float64, string,
    date, timestamp, boolean or other (:attr:`hivepark.types.HiveType.kind`; CHAR is stored
    as a string).

    >>> key_kind("BIGINT"), key_kind("decimal(10,2)"), key_kind("varchar(4)"), key_kind("real")
    ('int', 'decimal', 'string', 'float32')
    """
    kind = HiveType.parse(hive_type).kind
    return "string" if kind == "char" else kind


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


def _canonical_timestamp(value: datetime.datetime) -> str | None:
    if value.tzinfo is not None:
        return None
    return value.isoformat(sep=" ", timespec="microseconds")


def _parse_timestamp(raw: str) -> str | None:
    try:
        return _canonical_timestamp(datetime.datetime.fromisoformat(raw.strip()))
    except ValueError:
        return None


@dataclass(frozen=True)
class KeyCodec:
    """One partition key: its position, type and how its values are stored and compared."""

    idx: int
    name: str
    hive_type: str
    kind: str

    @cached_property
    def type(self) -> HiveType:
        return HiveType.parse(self.hive_type)

    @cached_property
    def numeric(self) -> bool:
        return self.type.family == "numeric"

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
        if self.kind == "timestamp":  # stored with microseconds, so that the text sorts
            return _parse_timestamp(raw)
        if self.kind == "boolean":
            b = self.type.decode(raw)
            return None if b is None else "true" if b else "false"
        if self.kind == "date":
            return self.type.decode(raw)
        return raw

    def value(self, raw: str | None) -> Any:
        """The value Spark reads, for exact evaluation: Decimal, float, str or None."""
        if raw is None:
            return None
        if self.kind in _FLOAT_KINDS:
            return self.type.decode(raw)
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
            return spark_string_date(value) if isinstance(value, str) else None
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


# SQL translation ------------------------------------------------------------------------

#: True, False, or a SQL condition with the key positions it reads.
Sql = bool | tuple[ColumnElement[bool], frozenset[int]]

#: A node's translation in either polarity: ``polar(False)`` keeps every partition where the
#: node may be TRUE, ``polar(True)`` every partition where it may be FALSE. Built lazily, so
#: each node is translated only in the polarity its ancestors ask for.
Polar = Callable[[bool], Sql]


def _junction(op: Any, a: ColumnElement[bool], b: ColumnElement[bool]) -> ColumnElement[bool]:
    """``a op b`` (AND or OR) keeping the tree's shape in the SQL text: an operand that is
    itself an ``op`` is parenthesized, where ``and_``/``or_`` would flatten it into one chain
    of n terms, which SQLite parses n deep (its limit is 1,000); the predicate trees are
    balanced (:func:`hivepark.expr.nodes.balanced`), so their SQL is log2(n) deep."""
    def side(x: ColumnElement[bool]) -> ColumnElement[bool]:
        if isinstance(x, (BooleanClauseList, BinaryExpression)) and x.operator is op:
            return Grouping(x)
        return x.self_group(against=op)
    return BinaryExpression(side(a), side(b), op, type_=Boolean())


def _and(a: Sql, b: Sql) -> Sql:
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    assert not isinstance(a, bool) and not isinstance(b, bool)
    return _junction(operators.and_, a[0], b[0]), a[1] | b[1]


def _or(a: Sql, b: Sql) -> Sql:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    assert not isinstance(a, bool) and not isinstance(b, bool)
    return _junction(operators.or_, a[0], b[0]), a[1] | b[1]


class InValues(ColumnElement[bool]):
    """``col IN (values)`` (``col NOT IN (values)`` when ``negated``), rendered for the dialect
    of the statement it is compiled in, so that no statement passes the database's limit on
    bound parameters however many IN lists a filter ORs (PostgreSQL's 65,535 had been
    reached by 66 lists of 1,000 values, and the driver's error reached the user):

    * PostgreSQL: ``col = ANY(%s)``, the values bound as one array (the planner takes it as
      it takes an IN list, and one statement text serves every list length);
    * others (SQLite): an IN list of bound parameters, or of inline values once the list is
      longer than :data:`INLINE_IN_THRESHOLD` or the statement's IN lists have already bound
      :data:`IN_PARAMS_PER_STATEMENT` values (SQLite's limit is 32,766 by default).
    """

    inherit_cache = False  # the values are the statement's own: never reused from a cache
    type = Boolean()
    _is_implicitly_boolean = True  # a condition, not a boolean column to compare with true

    def __init__(self, col: Any, values: Sequence[Any], negated: bool = False) -> None:
        self.col, self.values, self.negated = col, list(values), negated

    def _negate(self) -> ColumnElement[Any]:
        return InValues(self.col, self.values, not self.negated)


#: at most this many values of one statement's IN lists are bound as parameters outside
#: PostgreSQL (the rest are inline): SQLite's default limit is 32,766 parameters in all
IN_PARAMS_PER_STATEMENT = 20_000


@compiles(InValues)
def _compile_in_values(e: InValues, compiler: Any, **kw: Any) -> str:
    values, col = e.values, e.col
    bound = getattr(compiler, "_hivepark_in_params", 0)
    if len(values) <= INLINE_IN_THRESHOLD and bound + len(values) <= IN_PARAMS_PER_STATEMENT:
        compiler._hivepark_in_params = bound + len(values)
        cond = col.not_in(values) if e.negated else col.in_(values)
    elif all(type(v) is float and math.isfinite(v) for v in values):
        # finite doubles written as SQL numbers here (repr round-trips exactly): 2,500 values
        # rendered one by one through the dialect cost more than the query itself
        cond = col.op("NOT IN" if e.negated else "IN")(
            literal_column("(" + ", ".join(map(repr, values)) + ")"))
    else:
        param = bindparam(None, values, expanding=True, literal_execute=True, type_=col.type)
        cond = col.not_in(param) if e.negated else col.in_(param)
    return str(compiler.process(cond.self_group(), **kw))


@compiles(InValues, "postgresql")
def _compile_in_values_pg(e: InValues, compiler: Any, **kw: Any) -> str:
    cond = e.col == any_(bindparam(None, e.values, type_=ARRAY(e.col.type)))
    return str(compiler.process(not_(cond) if e.negated else cond.self_group(), **kw))


def _in(col: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    return InValues(col, values)


def _valid_like(pattern: Any) -> bool:
    if not isinstance(pattern, str):
        return False
    try:
        like_regex(pattern)
    except ValueError:
        return False
    return True


class _SqlFilter(BooleanExpressionVisitor[Polar]):
    """The metastore's SQL for one predicate tree; ``alias(idx)`` is the key-value row of key
    ``idx``. Each node becomes a :data:`Polar`: ``Not`` swaps the polarity, and ``And``/``Or``
    exchange roles in the negative one (De Morgan), which is negation normal form without
    rewriting the tree."""

    def __init__(self, codecs: dict[str, KeyCodec], alias: Callable[[int], Any]) -> None:
        self.codecs = codecs
        self.alias = alias

    def visit_true(self) -> Polar:
        return lambda neg: not neg

    def visit_false(self) -> Polar:
        return lambda neg: neg

    def visit_not(self, child: Polar) -> Polar:
        return lambda neg: child(not neg)

    def visit_and(self, left: Polar, right: Polar) -> Polar:
        return lambda neg: _or(left(neg), right(neg)) if neg else _and(left(neg), right(neg))

    def visit_or(self, left: Polar, right: Polar) -> Polar:
        return lambda neg: _and(left(neg), right(neg)) if neg else _or(left(neg), right(neg))

    def visit_unary(self, node: Unary) -> Polar:
        return self._atom(node)

    def visit_comparison(self, node: Comparison) -> Polar:
        return self._atom(node)

    def visit_in(self, node: In) -> Polar:
        return self._atom(node)

    def visit_like(self, node: Like) -> Polar:
        return self._atom(node)

    def visit_opaque(self, node: Opaque) -> Polar:
        return lambda neg: True

    def _atom(self, e: Unary | Comparison | In | Like) -> Polar:
        codec = self.codecs.get(e.term.lower()) if isinstance(e.term, str) else None
        if codec is None:
            return lambda neg: True
        c: KeyCodec = codec

        def polar(neg: bool) -> Sql:
            cond = self.atom(e, c, neg)
            if cond is None:
                # Not expressible, but any comparison with NULL is NULL in either polarity:
                # only the partitions where the key is NULL can be dropped.
                cond = _value_column(self.alias(c.idx), c).is_not(None)
            if isinstance(cond, bool):
                return cond
            return cond, frozenset({c.idx})

        return polar

    def atom(self, e: Expr, c: KeyCodec, neg: bool) -> ColumnElement[bool] | bool | None:
        """The atom's condition in polarity ``neg``; None when it cannot be expressed."""
        a = self.alias(c.idx)
        if isinstance(e, (IsNull, NotNull)):
            col = _value_column(a, c)
            return col.is_(None) if isinstance(e, IsNull) != neg else col.is_not(None)
        if c.kind == "other":
            return None
        if isinstance(e, Comparison):
            op = e.negated() if neg else type(e)
            if c.numeric:
                return self.num_compare(op, a, e.value)
            lit = c.text_literal(e.value)
            return None if lit is None else op.apply(a.str_value, lit)
        if isinstance(e, In):
            return self.num_in(e, a, neg) if c.numeric else self.text_in(e, c, a, neg)
        if isinstance(e, Like):
            if c.kind != "string" or not _valid_like(e.pattern):
                return None
            if neg:
                return a.str_value.not_like(e.pattern, escape="\\")
            return a.str_value.like(e.pattern, escape="\\")
        return None

    @staticmethod
    def num_compare(op: type[Comparison], a: Any,
                    value: Any) -> ColumnElement[bool] | bool | None:
        """``num_value <op> value``; rows flagged inexact (a double that does not order the
        stored value exactly) are kept on the boundary."""
        lit = num_literal(value)
        if lit is None:
            return None
        f, exact = lit
        col, inexact_row = a.num_value, a.num_exact.is_(False)
        if op is NotEqualTo:
            if not exact:
                return col.is_not(None)
            return and_(col.is_not(None), or_(col != f, inexact_row))
        if op in (GreaterThan, LessThan):
            loose = (GreaterThanOrEqual if op is GreaterThan else LessThanOrEqual).apply(col, f)
            return and_(loose, or_(op.apply(col, f), inexact_row)) if exact else loose
        return op.apply(col, f)  # =, >=, <=

    @staticmethod
    def num_in(e: In, a: Any, neg: bool) -> ColumnElement[bool] | bool | None:
        if neg and None in e.values:
            return False  # x NOT IN (..., NULL) is never TRUE: the IN is TRUE or NULL
        lits = [num_literal(v) for v in e.values if v is not None]  # NULL: never TRUE
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
        if neg and None in e.values:
            return False  # x NOT IN (..., NULL) is never TRUE: the IN is TRUE or NULL
        lits = [c.text_literal(v) for v in e.values if v is not None]  # NULL: never TRUE
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


def filter_sql(e: Expr, codecs: dict[str, KeyCodec], alias: Callable[[int], Any]) -> Sql:
    """The SQL condition that keeps every partition ``e`` may be TRUE for (see module doc).

    Returns True (keep everything), False (keep nothing), or ``(condition, key positions)``;
    the caller joins one key-value row per position, as ``alias(idx)``.
    """
    return visit(e, _SqlFilter(codecs, alias))(False)


# exact evaluation (DROP PARTITION) --------------------------------------------------------

class Undecidable(Exception):
    """An atom whose truth the catalog cannot determine (Opaque, type mismatch, ...)."""

    def __init__(self, atom: Expr, reason: str) -> None:
        super().__init__(reason)
        self.atom = atom
        self.reason = reason


_DOUBLE = "\x00double"
"""Suffix of a numeric key's name in :func:`key_values` for its value as a Spark double (what
an exact key is compared in against a floating-point literal); no column name holds NUL."""


def _float_key(f: float) -> tuple[int, float]:
    """A double ordered as Spark orders it: NaN equals NaN and is above every other value."""
    return (1, 0.0) if math.isnan(f) else (0, f)


def _bind_value(e: Expr, c: KeyCodec, lit: Any) -> tuple[str, Any]:
    """``(row name, value)``: the literal as the value the key is compared with in Spark, and
    the name under which :func:`key_values` holds the key's value in the same terms."""
    if c.numeric:
        if isinstance(lit, bool) or not isinstance(lit, (int, float, Decimal)):
            raise Undecidable(e, f"{c.name} ({c.hive_type}) is compared with {lit!r}")
        if isinstance(lit, Decimal) and not lit.is_finite():
            raise Undecidable(e, f"{c.name} is compared with {lit!r}")
        if c.kind in _FLOAT_KINDS:
            return c.name, _float_key(float(lit))
        if isinstance(lit, float):
            return c.name + _DOUBLE, _float_key(lit)
        return c.name, Decimal(lit)
    text = c.text_literal(lit)
    if text is None:
        raise Undecidable(e, f"{c.name} ({c.hive_type}) is compared with {lit!r}")
    return c.name, text


def _bind_atom(e: Expr, codecs: Mapping[str, KeyCodec]) -> Expr:
    if isinstance(e, Opaque):
        raise Undecidable(e, f"cannot evaluate {e.sql}")
    term = getattr(e, "term", None)
    c = codecs.get(term.lower()) if isinstance(term, str) else None
    if c is None:
        raise Undecidable(e, f"{term} is not a partition column")
    if isinstance(e, (IsNull, NotNull)):
        return type(e)(c.name)
    if isinstance(e, In) and not e.values:
        return AlwaysFalse()
    if c.kind == "other":
        raise Undecidable(e, f"{c.name} has type {c.hive_type}, which cannot be compared")
    if isinstance(e, Comparison):
        name, value = _bind_value(e, c, e.value)
        return type(e)(name, value)
    if isinstance(e, In):
        by_name: dict[str, list[Any]] = {c.name: []}
        for v in e.values:
            if v is None:  # stays NULL: the IN is NULL where the value is none of the others
                by_name[c.name].append(None)
                continue
            name, value = _bind_value(e, c, v)
            by_name.setdefault(name, []).append(value)
        return or_all(*(In(name, tuple(values)) for name, values in by_name.items() if values))
    if isinstance(e, Like):
        if c.kind != "string" or not _valid_like(e.pattern):
            raise Undecidable(e, f"cannot evaluate LIKE {e.pattern!r} on {c.name}")
        return Like(c.name, e.pattern)
    raise Undecidable(e, f"unsupported predicate {e!r}")


def bind_to_keys(e: Expr, codecs: Mapping[str, KeyCodec]) -> Expr:
    """``e`` with every literal bound to the value its partition key is compared with, so
    that :func:`hivepark.expr.visitors.evaluate` over :func:`key_values` gives Spark's
    three-valued result exactly.

    Raises:
        Undecidable: an atom the catalog cannot decide (Opaque, a column that is not a
            partition key, a literal of another type, an invalid LIKE pattern).
    """
    if isinstance(e, Not):
        return Not(bind_to_keys(e.child, codecs))
    if isinstance(e, (And, Or)):
        return type(e)(bind_to_keys(e.left, codecs), bind_to_keys(e.right, codecs))
    if isinstance(e, (AlwaysTrue, AlwaysFalse)):
        return e
    return _bind_atom(e, codecs)


def key_values(raw: Mapping[str, str | None], codecs: Mapping[str, KeyCodec]) -> dict[str, Any]:
    """One partition's raw values (by key name) as the row :func:`bind_to_keys`'s tree is
    evaluated on: NULL for the default partition and for text that is not of the key's type."""
    row: dict[str, Any] = {}
    for c in codecs.values():
        x = c.value(raw.get(c.name))
        if x is not None and c.numeric:
            row[c.name + _DOUBLE] = _float_key(float(x))
            if c.kind in _FLOAT_KINDS:
                x = _float_key(float(x))
        else:
            row[c.name + _DOUBLE] = None
        row[c.name] = x
    return row


def compile_filter(e: Expr, codecs: Mapping[str, KeyCodec]) -> Callable[[Mapping[str, Any]], bool | None]:
    """``e`` as a function of a partition's :func:`key_values` row, with the three-valued
    result of :func:`evaluate` (:func:`~hivepark.expr.visitors.compile_predicate`: each IN
    one hash lookup).

    Raises:
        Undecidable: as :func:`bind_to_keys`.
    """
    return compile_predicate(bind_to_keys(e, codecs))


def evaluate(e: Expr, raw: dict[str, str | None], codecs: dict[str, KeyCodec]) -> bool | None:
    """Spark's three-valued result of ``e`` for one partition's raw values, by key name: the
    tree's own evaluator over :func:`bind_to_keys` and :func:`key_values`.

    Raises :class:`Undecidable` for an atom the catalog cannot evaluate.
    """
    return evaluate_tree(bind_to_keys(e, codecs), key_values(raw, codecs))


def opaque_atoms(e: Expr) -> list[Opaque]:
    """Every Opaque node in ``e``."""
    if isinstance(e, Opaque):
        return [e]
    if isinstance(e, Not):
        return opaque_atoms(e.child)
    if isinstance(e, (And, Or)):
        return opaque_atoms(e.left) + opaque_atoms(e.right)
    return []
