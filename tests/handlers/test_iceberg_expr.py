"""The predicate tree as pyiceberg expressions (no JVM): on every row, pyiceberg's own row
evaluator accepts exactly the rows on which the SQL predicate is TRUE (NULLs, NOT, NOT IN with
NULL, <> included), and a partial translation keeps every row the whole predicate keeps."""

from __future__ import annotations

import datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.expressions import AlwaysTrue as IceTrue
from pyiceberg.expressions.visitors import expression_evaluator
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import DateType, DecimalType, DoubleType, LongType, NestedField, StringType, TimestampType

from hivepark.expr.nodes import (
    And,
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
from hivepark.expr.visitors import evaluate
from hivepark.storage.handlers.iceberg_expr import Translator, iceberg_literal, to_iceberg

SCHEMA = Schema(*[NestedField(i + 1, name, typ, required=False) for i, (name, typ) in enumerate(
    [("n", LongType()), ("s", StringType()), ("d", DateType()), ("a", DecimalType(10, 2)), ("ts", TimestampType()),
     ("x", DoubleType())])])
TYPES = {f.name: f.field_type for f in SCHEMA.fields}
DAYS = [datetime.date(2026, 1, d) for d in (1, 2, 3)]
STAMPS = [datetime.datetime(2026, 1, 5, h) for h in (0, 6, 12)]
AMOUNTS = [Decimal("1.50"), Decimal("2.00"), Decimal("-3.25")]

values = {"n": st.one_of(st.none(), st.integers(-3, 3)),
          "s": st.one_of(st.none(), st.sampled_from(["ab", "abc", "b", ""])),
          "d": st.one_of(st.none(), st.sampled_from(DAYS)), "a": st.one_of(st.none(), st.sampled_from(AMOUNTS)),
          "ts": st.one_of(st.none(), st.sampled_from(STAMPS)), "x": st.one_of(st.none(), st.sampled_from([0.5, 2.0]))}
literal = {"n": st.integers(-3, 3), "s": st.sampled_from(["ab", "abc", "b"]),
           "d": st.sampled_from([d.isoformat() for d in DAYS]), "a": st.sampled_from(AMOUNTS),
           "ts": st.sampled_from(STAMPS), "x": st.sampled_from([0.5, 2.0])}
OPS = [EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual]


@st.composite
def atoms(draw) -> Expr:
    col = draw(st.sampled_from(list(TYPES)))
    kind = draw(st.sampled_from(["cmp", "in", "null", "notnull", "like", "opaque"]))
    if kind == "cmp":
        return draw(st.sampled_from(OPS))(col, draw(literal[col]))
    if kind == "in":
        vals = draw(st.lists(st.one_of(literal[col], st.none()), min_size=1, max_size=3))
        return In(col, tuple(vals))
    if kind == "null":
        return IsNull(col)
    if kind == "notnull":
        return NotNull(col)
    if kind == "like":
        return Like("s", draw(st.sampled_from(["ab%", "a_c", "%b"])))
    return Opaque(f"f({col})", frozenset({col}))


trees = st.recursive(atoms(), lambda sub: st.one_of(st.builds(And, sub, sub), st.builds(Or, sub, sub),
                                                     st.builds(Not, sub)), max_leaves=6)


def _row(draw_values: dict) -> Record:
    stored = []
    for f in SCHEMA.fields:
        v = draw_values[f.name]
        lit = iceberg_literal(v.isoformat() if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
                              else v, f.field_type) if v is not None else None
        stored.append(lit.value if lit is not None else None)
    return Record(*stored)


def _sql_row(r: dict) -> dict:
    # hivepark binds DATE literals as ISO strings; compare dates the same way
    return {k: (v.isoformat() if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime) else v)
            for k, v in r.items()}


def _contains_opaque(e: Expr) -> bool:
    if isinstance(e, Opaque):
        return True
    if isinstance(e, (And, Or)):
        return _contains_opaque(e.left) or _contains_opaque(e.right)
    if isinstance(e, Not):
        return _contains_opaque(e.child)
    return False


@settings(max_examples=400, deadline=None)
@given(trees, st.fixed_dictionaries(values))
def test_exact_translation_accepts_exactly_the_true_rows(expr, row):
    translated = Translator(TYPES).exact(expr)
    if translated is None:
        return
    accepts = expression_evaluator(SCHEMA, translated, case_sensitive=True)(_row(row))
    assert accepts == (evaluate(expr, _sql_row(row)) is True)


@settings(max_examples=400, deadline=None)
@given(trees, st.fixed_dictionaries(values))
def test_partial_translation_keeps_every_row_the_predicate_keeps(expr, row):
    translated = to_iceberg(expr, TYPES)
    if _contains_opaque(expr):
        # the opaque atoms are unknown: the translation must hold for any of their values
        return
    if evaluate(expr, _sql_row(row)) is True:
        assert expression_evaluator(SCHEMA, translated, case_sensitive=True)(_row(row))


def test_not_in_with_null_is_never_true_and_not_equal_skips_nulls():
    tr = Translator(TYPES)
    ev = expression_evaluator(SCHEMA, tr.exact(Not(In("n", (1, None)))), True)
    assert not ev(Record(2, None, None, None, None, None))
    ne = expression_evaluator(SCHEMA, tr.exact(NotEqualTo("n", 1)), True)
    assert not ne(Record(None, None, None, None, None, None)) and ne(Record(2, None, None, None, None, None))


def test_what_is_not_translated():
    tr = Translator(TYPES)
    assert tr.exact(GreaterThan("x", 1.0)) is None  # NaN orders above numbers in Spark
    assert tr.exact(EqualTo("x", 2.0)) is not None
    assert tr.exact(EqualTo("a", Decimal("1.234"))) is None  # more scale than the column
    assert tr.exact(EqualTo("n", 2**70)) is None
    assert tr.exact(Like("s", "a_c%")) is None
    assert tr.exact(Or(EqualTo("n", 1), Opaque("f(n)", frozenset({"n"})))) is None
    assert tr.translate(And(EqualTo("n", 1), Opaque("f(n)", frozenset({"n"})))) is not None
    assert to_iceberg(None, TYPES) == IceTrue()
