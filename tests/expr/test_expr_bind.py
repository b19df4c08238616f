"""Binding literals to column types: only comparisons Spark would make the same way."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from hivepark.expr import (
    And,
    EqualTo,
    Expr,
    GreaterThan,
    In,
    IsNull,
    LessThan,
    Like,
    Not,
    Opaque,
    Or,
    bind,
    bind_literal,
)

TYPES = {
    "hr": "int",
    "t": "tinyint",
    "big": "bigint",
    "dbl": "double",
    "flt": "float",
    "dec": "decimal(10,2)",
    "deci": "decimal(12,0)",
    "s": "string",
    "v": "varchar(10)",
    "c": "char(5)",
    "ds": "date",
    "ts": "timestamp",
    "b": "boolean",
    "arr": "array<int>",
}


@pytest.mark.parametrize(
    ("value", "hive_type", "bound"),
    [
        (9, "int", 9),
        (Decimal("1.5"), "int", Decimal("1.5")),
        (1.5, "double", 1.5),
        ("10", "int", 10),
        ("-10", "bigint", -10),
        ("+7", "int", 7),
        ("127", "tinyint", 127),
        ("128", "tinyint", None),
        ("2147483648", "int", None),
        ("2147483648", "bigint", 2147483648),
        ("1.5", "int", None),
        (" 1", "int", None),
        ("1_0", "int", None),
        ("١", "int", None),  # non-ASCII digit
        ("abc", "int", None),
        ("1.5", "double", 1.5),
        ("1e3", "double", 1000.0),
        ("NaN", "double", None),
        ("1e999", "double", None),
        ("16777216", "float", 16777216),
        ("16777217", "float", None),
        ("0.1", "float", None),
        ("12", "decimal(12,0)", 12),
        ("12", "decimal", 12),
        ("12", "decimal(10,2)", None),
        ("12", "decimal(20,0)", None),
        (True, "int", None),
        (datetime.date(2008, 4, 8), "int", None),
        ("x", "string", "x"),
        ("x", "varchar(3)", "x"),
        ("x", "char(5)", None),
        (1, "string", None),
        (Decimal("1"), "string", None),
        (True, "string", None),
        ("2008-04-08", "date", "2008-04-08"),
        (datetime.date(2008, 4, 8), "date", "2008-04-08"),
        (datetime.datetime(2008, 4, 8, 1), "date", None),
        ("2008-4-8", "date", "2008-04-08"),
        ("2008-02-30", "date", None),
        ("20080408", "date", None),
        (20080408, "date", None),
        (True, "boolean", True),
        ("true", "boolean", None),
        (1, "boolean", None),
        ("2008-04-08 00:00:00", "timestamp", datetime.datetime(2008, 4, 8)),
            ("2008-04-08", "timestamp", None),
        (datetime.datetime(2008, 4, 8), "timestamp", datetime.datetime(2008, 4, 8)),
        (1, "array<int>", None),
    ],
)
def test_bind_literal(value: object, hive_type: str, bound: object) -> None:
    result = bind_literal(value, hive_type)  # type: ignore[arg-type]
    assert result == bound
    assert type(result) is type(bound)


def test_bind_keeps_shape_and_binds_each_atom() -> None:
    expr = And(EqualTo("ds", datetime.date(2008, 4, 8)), Or(GreaterThan("hr", "9"), IsNull("s")))
    assert bind(expr, TYPES) == And(
        EqualTo("ds", "2008-04-08"), Or(GreaterThan("hr", 9), IsNull("s"))
    )


def test_bind_makes_unsafe_atoms_opaque() -> None:
    assert bind(EqualTo("s", 1), TYPES) == Opaque("(s = 1)", frozenset({"s"}))
    assert bind(Not(LessThan("ts", "2008-01-01")), TYPES) == Not(
        Opaque("(ts < '2008-01-01')", frozenset({"ts"}))
    )


def test_bare_condition_column_binds_only_when_boolean() -> None:
    assert bind(EqualTo("f", True), {"f": "boolean"}) == EqualTo("f", True)
    assert isinstance(bind(EqualTo("s", True), {"s": "string"}), Opaque)
    assert isinstance(bind(EqualTo("n", True), {"n": "int"}), Opaque)


def test_bind_in() -> None:
    assert bind(In("hr", ("1", 2)), TYPES) == In("hr", (1, 2))
    assert bind(In("hr", ("1", "x")), TYPES) == Opaque("(hr in ('1', 'x'))", frozenset({"hr"}))
    assert bind(In("s", ()), TYPES) == In("s", ())


def test_bind_like() -> None:
    assert bind(Like("s", "a%"), TYPES) == Like("s", "a%")
    assert bind(Like("v", "a%"), TYPES) == Like("v", "a%")
    assert isinstance(bind(Like("hr", "1%"), TYPES), Opaque)
    assert isinstance(bind(Like("ds", "2008%"), TYPES), Opaque)
    assert isinstance(bind(Like("c", "a%"), TYPES), Opaque)


def test_bind_leaves_unknown_columns_and_opaque_alone() -> None:
    expr: Expr = And(EqualTo("other", 1), Opaque("f(hr)", frozenset({"hr"})))
    assert bind(expr, TYPES) == expr


def test_bind_column_names_are_case_insensitive() -> None:
    assert bind(EqualTo("hr", "3"), {"HR": "INT"}) == EqualTo("hr", 3)
