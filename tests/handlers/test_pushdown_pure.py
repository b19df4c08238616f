"""The pushdown machinery without a JVM: the analyzer, the serialized form, the decision
rule and its invariant (``pushed AND residual`` keeps exactly the rows of the filter)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hivepark.errors import UserInputError
from hivepark.expr import (
    AlwaysTrue,
    And,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IndexPredicateAnalyzer,
    IndexSearchCondition,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Like,
    Not,
    NotEqualTo,
    NotNull,
    Opaque,
    Or,
    evaluate,
    flip_operator,
    from_json,
    to_json,
)
from hivepark.plan.pushdown import DecomposedPredicate, push_filters

# ---------------------------------------------------------------- analyzer


def _analyzer(*ops: str, columns: tuple[str, ...] | None = None) -> IndexPredicateAnalyzer:
    a = IndexPredicateAnalyzer()
    for op in ops:
        a.add_comparison_op(op)
    if columns is not None:
        a.clear_allowed_column_names()
        for c in columns:
            a.allow_column_name(c)
    return a


def test_analyzer_finds_nothing_until_an_operator_is_registered():
    e = And(EqualTo("a", 1), GreaterThan("b", 2))
    conds: list[IndexSearchCondition] = []
    assert IndexPredicateAnalyzer().analyze_predicate(e, conds) == e
    assert conds == []


def test_analyzer_splits_top_level_conjunction_only():
    disj = Or(EqualTo("a", 1), EqualTo("a", 2))
    opaque = Opaque("upper(y) = 'XYZ'", frozenset({"y"}))
    e = And(And(GreaterThanOrEqual("a", 1000), disj), And(LessThanOrEqual("a", 2000), opaque))
    conds: list[IndexSearchCondition] = []
    residual = _analyzer(">=", "<=", "=").analyze_predicate(e, conds)
    assert [(c.column, c.operator, c.constant) for c in conds] == [("a", ">=", 1000), ("a", "<=", 2000)]
    assert conds[0].expr == GreaterThanOrEqual("a", 1000)
    assert residual == And(disj, opaque)


def test_analyzer_honours_allowed_columns_and_other_ops():
    e = And(And(EqualTo("a", 1), EqualTo("b", 2)), And(In("a", (1, 2)), IsNull("a")))
    conds: list[IndexSearchCondition] = []
    residual = _analyzer("=", "in", columns=("A",)).analyze_predicate(e, conds)
    assert [c.operator for c in conds] == ["=", "in"]
    assert conds[1].constant == (1, 2)
    assert residual == And(EqualTo("b", 2), IsNull("a"))


def test_analyzer_whole_predicate_pushed_leaves_no_residual_and_translates_back():
    e = And(GreaterThan("k", 3), LessThan("k", 9))
    conds: list[IndexSearchCondition] = []
    a = _analyzer("<", ">")
    assert a.analyze_predicate(e, conds) is None
    assert a.translate_search_conditions(conds) == e
    assert a.translate_search_conditions([]) == AlwaysTrue()


def test_flip_and_unknown_operator():
    assert [flip_operator(o) for o in ("<", "<=", ">", ">=", "=", "<>")] == [">", ">=", "<", "<=", "=", "<>"]
    with pytest.raises(ValueError, match="Unknown comparison operator"):
        IndexPredicateAnalyzer().add_comparison_op("~=")


def test_constant_on_the_left_is_flipped_when_the_tree_is_built():
    from hivepark.expr.from_sqlglot import parse_filter_string

    conds: list[IndexSearchCondition] = []
    _analyzer("<").analyze_predicate(parse_filter_string("(5 > key)"), conds)
    assert [(c.column, c.operator, c.constant) for c in conds] == [("key", "<", 5)]


# ---------------------------------------------------------------- predicates and rows

COLUMNS = ("a", "b", "s")
INTS = st.one_of(st.none(), st.integers(-3, 3))
STRS = st.one_of(st.none(), st.sampled_from(["", "x", "X", "x ", "it's", "a\\b"]))
COMPARISONS = [EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual]


def _atoms() -> st.SearchStrategy[Expr]:
    col = st.sampled_from(["a", "b"])
    ints = st.integers(-3, 3)
    return st.one_of(
        st.builds(lambda c, op, v: op(c, v), col, st.sampled_from(COMPARISONS), ints),
        st.builds(lambda op, v: op("s", v), st.sampled_from(COMPARISONS), st.sampled_from(["", "x", "it's"])),
        st.builds(lambda c, vs: In(c, tuple(vs)), col, st.lists(st.one_of(st.none(), ints), max_size=4)),
        st.builds(IsNull, st.sampled_from(COLUMNS)),
        st.builds(NotNull, st.sampled_from(COLUMNS)),
        st.builds(lambda p: Like("s", p), st.sampled_from(["x%", "_", "%'%"])),
        st.builds(lambda c: Opaque(f"upper({c}) = 'X'", frozenset({c})), st.sampled_from(COLUMNS)),
    )


PREDICATES = st.recursive(
    _atoms(),
    lambda kids: st.one_of(st.builds(And, kids, kids), st.builds(Or, kids, kids), st.builds(Not, kids)),
    max_leaves=8,
)
ROWS = st.fixed_dictionaries({"a": INTS, "b": INTS, "s": STRS})


def _eval_opaque(expr: Expr, row: dict) -> bool | None:
    """Evaluate with each Opaque ``upper(c) = 'X'`` computed by hand (the tree cannot)."""
    if isinstance(expr, Opaque):
        (c,) = expr.refs
        v = row[c]
        return None if v is None else str(v).upper() == "X"
    if isinstance(expr, And):
        left, right = _eval_opaque(expr.left, row), _eval_opaque(expr.right, row)
        return False if False in (left, right) else None if None in (left, right) else True
    if isinstance(expr, Or):
        left, right = _eval_opaque(expr.left, row), _eval_opaque(expr.right, row)
        return True if True in (left, right) else None if None in (left, right) else False
    if isinstance(expr, Not):
        v = _eval_opaque(expr.child, row)
        return None if v is None else not v
    return evaluate(expr, row)


class AnalyzerHandler:
    """A handler that pushes what the analyzer accepts on columns a and b."""

    def decompose_predicate(self, table, predicate):
        a = _analyzer("=", "<>", "<", "<=", ">", ">=", "in", "is null", "is not null", columns=("a", "b"))
        conds: list[IndexSearchCondition] = []
        residual = a.analyze_predicate(predicate, conds)
        return DecomposedPredicate(a.translate_search_conditions(conds), residual) if conds else None


class GreedyHandler:
    """A (wrong) handler that claims everything, Opaque included: the rule must not push Opaque."""

    def decompose_predicate(self, table, predicate):
        return DecomposedPredicate(predicate, None)


class PlainHandler:
    """A handler without decompose_predicate."""


def _keeps(expr: Expr | None, row: dict) -> bool:
    return expr is None or _eval_opaque(expr, row) is True


@settings(max_examples=400, deadline=None)
@given(PREDICATES, st.lists(ROWS, min_size=1, max_size=8),
       st.sampled_from([AnalyzerHandler(), GreedyHandler(), PlainHandler()]))
def test_pushed_and_residual_keep_exactly_the_rows_of_the_filter(pred, rows, handler):
    d = push_filters(handler, None, pred, {})
    for part in (d.pushed,):
        assert part is None or "upper(" not in to_json(part), "an Opaque was pushed"
    for row in rows:
        assert (_keeps(d.pushed, row) and _keeps(d.residual, row)) == (_eval_opaque(pred, row) is True), row
        # the source may drop only rows the filter drops
        if _eval_opaque(pred, row) is True:
            assert _keeps(d.pushed, row)


def test_empty_residual_means_no_spark_filter():
    e = And(GreaterThan("a", 1), In("b", (1, None)))
    d = push_filters(AnalyzerHandler(), None, e, {})
    assert d.pushed == e and d.residual is None


def test_switches_turn_pushdown_off():
    e = GreaterThan("a", 1)
    for key in ("hive.optimize.ppd", "hive.optimize.ppd.storage"):
        d = push_filters(AnalyzerHandler(), None, e, {key: "FALSE"})
        assert d.pushed is None and d.residual == e and key in d.reason
    assert push_filters(AnalyzerHandler(), None, e, {"hive.optimize.ppd": "true"}).residual is None


def test_handler_without_decompose_gets_filter_and_spark_applies_all():
    opaque = Opaque("upper(s) = 'X'", frozenset({"s"}))
    e = And(GreaterThan("a", 1), opaque)
    d = push_filters(PlainHandler(), None, e, {})
    assert d.pushed == GreaterThan("a", 1) and d.residual == e


def test_declined_and_no_filter():
    d = push_filters(AnalyzerHandler(), None, Opaque("f(a)", frozenset({"a"})), {})
    assert d.pushed is None and d.residual == Opaque("f(a)", frozenset({"a"}))
    assert push_filters(AnalyzerHandler(), None, None, {}).residual is None
    assert push_filters(AnalyzerHandler(), None, AlwaysTrue(), {}).pushed is None


# ---------------------------------------------------------------- serialized form

LITERALS = st.one_of(
    st.integers(), st.text(), st.booleans(), st.floats(allow_nan=False),
    st.decimals(allow_nan=False, allow_infinity=False), st.dates(),
    st.datetimes(), st.none())


@settings(max_examples=300, deadline=None)
@given(st.recursive(
    st.one_of(_atoms(), st.builds(lambda v: EqualTo("c", v), LITERALS),
              st.builds(lambda vs: In("c", tuple(vs)), st.lists(LITERALS, max_size=3))),
    lambda kids: st.one_of(st.builds(And, kids, kids), st.builds(Or, kids, kids), st.builds(Not, kids)),
    max_leaves=6))
def test_serialized_form_round_trips(e):
    back = from_json(to_json(e))
    assert back == e
    assert to_json(back) == to_json(e)


def test_serialized_form_keeps_literal_types():
    e = And(EqualTo("d", Decimal("1.50")), In("t", (datetime.datetime(2024, 1, 2, 3, 4, 5, 6), 2**70)))
    back = from_json(to_json(e))
    assert back == e
    assert isinstance(back.left.value, Decimal) and str(back.left.value) == "1.50"  # type: ignore[attr-defined]
    with pytest.raises(UserInputError, match="Not a serialized predicate"):
        from_json('{"op": "nope"}')
