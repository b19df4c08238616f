"""Filter strings, three-valued evaluation, NNF, projection and simplification."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from hivepark.expr import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
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
    conjuncts,
    evaluate,
    project,
    simplify,
    to_filter_string,
    to_nnf,
)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (And(GreaterThanOrEqual("key", 100), LessThan("key", 200)),
         "((key >= 100) and (key < 200))"),
        (EqualTo("ds", "2008-04-08"), "(ds = '2008-04-08')"),
        (In("hr", (1, 2)), "(hr in (1, 2))"),
        (Like("ds", "2%"), "(ds like '2%')"),
        (IsNull("ds"), "(ds is null)"),
        (NotNull("ds"), "(ds is not null)"),
        (Not(EqualTo("ds", "a")), "(not (ds = 'a'))"),
        (Or(EqualTo("a", 1), NotEqualTo("b", 2)), "((a = 1) or (b <> 2))"),
        (AlwaysTrue(), "true"),
        (AlwaysFalse(), "false"),
        (Opaque("upper(ds) = 'X'", frozenset({"ds"})), "(upper(ds) = 'X')"),
        (EqualTo("s", "it's a \\ back"), "(s = 'it\\'s a \\\\ back')"),
        (EqualTo("d", datetime.date(2008, 4, 8)), "(d = DATE '2008-04-08')"),
        (EqualTo("d", Decimal("1.50")), "(d = 1.50)"),
        (EqualTo("d", Decimal("-2.5")), "(d = -2.5)"),
        (EqualTo("f", 1.5), "(f = 1.5E0)"),
        (EqualTo("b", True), "(b = true)"),
        (LessThanOrEqual("date", 3), "(`date` <= 3)"),
        (GreaterThan("a b", 3), "(`a b` > 3)"),
        (EqualTo("t", datetime.datetime(2008, 4, 8, 1, 2, 3)),
         "(t = TIMESTAMP '2008-04-08 01:02:03')"),
    ],
)
def test_to_filter_string(expr: object, text: str) -> None:
    assert to_filter_string(expr) == text  # type: ignore[arg-type]


def test_to_filter_string_rejects_non_literals() -> None:
    with pytest.raises(TypeError):
        to_filter_string(EqualTo("a", object()))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        to_filter_string(EqualTo("a", Decimal("NaN")))


@pytest.mark.parametrize(
    ("expr", "row", "result"),
    [
        (EqualTo("a", 1), {"a": 1}, True),
        (EqualTo("a", 1), {"a": 2}, False),
        (EqualTo("a", 1), {"a": None}, None),
        (NotEqualTo("a", 1), {"a": None}, None),
        (GreaterThan("a", 1), {"a": 2}, True),
        (LessThanOrEqual("a", 1), {"a": 2}, False),
        (IsNull("a"), {"a": None}, True),
        (NotNull("a"), {"a": None}, False),
        (In("a", (1, 2)), {"a": 2}, True),
        (In("a", (1, 2)), {"a": 3}, False),
        (In("a", (1, None)), {"a": 3}, None),
        (In("a", (1, None)), {"a": 1}, True),
        (In("a", ()), {"a": 1}, False),
        (In("a", (1,)), {"a": None}, None),
        (Not(In("a", (1, None))), {"a": 3}, None),
        (And(EqualTo("a", 1), EqualTo("b", 1)), {"a": None, "b": 2}, False),
        (And(EqualTo("a", 1), EqualTo("b", 1)), {"a": None, "b": 1}, None),
        (Or(EqualTo("a", 1), EqualTo("b", 1)), {"a": None, "b": 1}, True),
        (Or(EqualTo("a", 1), EqualTo("b", 1)), {"a": None, "b": 2}, None),
        (Not(EqualTo("a", 1)), {"a": None}, None),
        (Not(AlwaysTrue()), {}, False),
        (Like("s", "2008-%"), {"s": "2008-04-08"}, True),
        (Like("s", "a_c"), {"s": "abc"}, True),
        (Like("s", "a_c"), {"s": "ac"}, False),
        (Like("s", "A%"), {"s": "abc"}, False),
        (Like("s", "a\\%"), {"s": "a%"}, True),
        (Like("s", "a\\%"), {"s": "ab"}, False),
        (Like("s", "a\\\\"), {"s": "a\\"}, True),
        (Like("s", "a.*"), {"s": "abc"}, False),
        (Like("s", "%"), {"s": "multi\nline"}, True),
        (Like("s", "x"), {"s": None}, None),
    ],
)
def test_evaluate(expr: object, row: dict[str, object], result: bool | None) -> None:
    assert evaluate(expr, row) is result  # type: ignore[arg-type]


def test_evaluate_refuses_opaque_and_bad_patterns() -> None:
    with pytest.raises(TypeError, match="project"):
        evaluate(Opaque("f(a)"), {"a": 1})
    with pytest.raises(ValueError):
        evaluate(Like("s", "a\\"), {"s": "a"})
    with pytest.raises(ValueError):
        evaluate(Like("s", "\\a"), {"s": "a"})
    with pytest.raises(KeyError):
        evaluate(EqualTo("a", 1), {})


def test_to_nnf() -> None:
    a, b = EqualTo("a", 1), IsNull("b")
    assert to_nnf(Not(And(a, b))) == Or(NotEqualTo("a", 1), NotNull("b"))
    assert to_nnf(Not(Or(LessThan("a", 1), NotNull("b")))) == And(
        GreaterThanOrEqual("a", 1), IsNull("b")
    )
    assert to_nnf(Not(Not(a))) == a
    assert to_nnf(Not(In("a", (1,)))) == Not(In("a", (1,)))
    assert to_nnf(Not(Like("s", "x"))) == Not(Like("s", "x"))
    assert to_nnf(Not(Opaque("f(a)"))) == Not(Opaque("f(a)"))
    assert to_nnf(Not(AlwaysTrue())) == AlwaysFalse()
    assert to_nnf(And(Not(GreaterThan("a", 1)), b)) == And(LessThanOrEqual("a", 1), b)


def test_project() -> None:
    ds, key = EqualTo("ds", "a"), GreaterThan("key", 5)
    assert project(And(ds, key), {"ds"}) == ds
    assert project(Or(ds, key), {"ds"}) == AlwaysTrue()
    assert project(And(ds, Opaque("f(ds)", frozenset({"ds"}))), {"ds"}) == ds
    assert project(Not(Or(ds, key)), {"ds"}) == NotEqualTo("ds", "a")
    assert project(And(ds, Not(In("ds", ("b",)))), {"DS"}) == And(ds, Not(In("ds", ("b",))))
    assert project(Not(Opaque("f(ds)")), {"ds"}) == AlwaysTrue()
    assert project(AlwaysFalse(), {"ds"}) == AlwaysFalse()


def test_simplify() -> None:
    a = EqualTo("a", 1)
    assert simplify(And(AlwaysTrue(), a)) == a
    assert simplify(And(a, AlwaysFalse())) == AlwaysFalse()
    assert simplify(Or(a, AlwaysTrue())) == AlwaysTrue()
    assert simplify(Or(AlwaysFalse(), a)) == a
    assert simplify(Not(AlwaysFalse())) == AlwaysTrue()
    assert simplify(Not(And(AlwaysTrue(), AlwaysTrue()))) == AlwaysFalse()
    assert simplify(Not(a)) == Not(a)


def test_conjuncts() -> None:
    a, b, c = EqualTo("a", 1), EqualTo("b", 2), EqualTo("c", 3)
    assert conjuncts(And(a, And(b, c))) == [a, b, c]
    assert conjuncts(Or(a, b)) == [Or(a, b)]
    assert conjuncts(a) == [a]
