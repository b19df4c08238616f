"""Predicates translated to pyarrow keep exactly the rows on which SQL says TRUE."""

from __future__ import annotations

import datetime

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.expr.test_expr_properties import SMALL_TREES

from hivepark.expr import And, EqualTo, Expr, GreaterThan, In, Like, Not, Opaque, evaluate
from hivepark.storage.arrow import arrow_type, to_arrow

TYPES = {"a": "int", "b": "bigint", "c": "tinyint"}
SMALL = st.one_of(st.none(), st.integers(0, 2))
TABLES = st.lists(st.fixed_dictionaries({"a": SMALL, "b": SMALL, "c": SMALL}), max_size=12)


def _table(rows: list[dict[str, int | None]]) -> pa.Table:
    return pa.table({c: pa.array([r[c] for r in rows], arrow_type(t))
                     for c, t in TYPES.items()})


@settings(max_examples=300, deadline=None)
@given(SMALL_TREES, TABLES)
def test_arrow_filter_keeps_exactly_the_true_rows(expr: Expr,
                                                   rows: list[dict[str, int | None]]) -> None:
    """Three-valued logic: NULL comparisons, NOT IN with NULL, NOT above AND/OR."""
    arrow = to_arrow(expr, TYPES)
    assert arrow is not None, expr
    got = _table(rows).filter(arrow).to_pylist()
    assert got == [r for r in rows if evaluate(expr, r) is True]


def test_strings_dates_and_booleans() -> None:
    t = pa.table({"s": ["a", "b", None], "d": pa.array([datetime.date(2020, 1, 1), None,
                                                          datetime.date(2021, 5, 5)]),
                  "f": [True, False, None]})
    types = {"s": "varchar(5)", "d": "date", "f": "boolean"}
    keep = to_arrow(And(GreaterThan("d", "2020-06-01"), Not(EqualTo("f", True))), types)
    assert keep is not None and t.filter(keep).num_rows == 0
    keep = to_arrow(Not(In("s", ("a", None))), types)
    assert keep is not None and t.filter(keep).num_rows == 0  # NOT IN (.., NULL) is never TRUE
    keep = to_arrow(In("s", ("b", "z")), types)
    assert keep is not None and t.filter(keep).column("s").to_pylist() == ["b"]


def test_inexact_atoms_are_refused() -> None:
    """Spark's meaning could differ: the caller runs the small side in Spark instead."""
    assert to_arrow(Like("s", "a%"), {"s": "string"}) is None
    assert to_arrow(Opaque("f(x) = 1", frozenset({"x"})), {"x": "int"}) is None
    assert to_arrow(EqualTo("x", 1.5), {"x": "double"}) is None
    assert to_arrow(EqualTo("x", 1.5), {"x": "int"}) is None  # not bound to an integer
    assert to_arrow(EqualTo("x", "a"), {"x": "char(3)"}) is None  # CHAR pads
    assert to_arrow(EqualTo("x", 1), {"x": "decimal(10,2)"}) is None
    assert to_arrow(EqualTo("x", 1), {}) is None  # unknown column
