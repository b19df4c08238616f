"""Translating sqlglot conditions, and parsing the filter string form."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
import sqlglot
from sqlglot import exp

from hivepark.errors import ParseError
from hivepark.expr import (
    AlwaysFalse,
    AlwaysTrue,
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
from hivepark.expr.from_sqlglot import from_sqlglot, parse_filter_string

SCAN = {"ds", "hr", "key", "value"}


def resolve(column: exp.Column) -> str | None:
    """Columns of table ``t`` (qualified or not); ``u.*`` belongs to another scan."""
    if column.table and column.table.lower() != "t":
        return None
    name = column.name.lower()
    return name if name in SCAN else None


def translate(sql: str, dialect: str = "hive") -> Expr:
    return from_sqlglot(sqlglot.parse_one(sql, read=dialect), resolve)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("ds = '2008-04-08'", EqualTo("ds", "2008-04-08")),
        ("HR <> 1", NotEqualTo("hr", 1)),
        ("hr != 1", NotEqualTo("hr", 1)),
        ("t.hr < 1", LessThan("hr", 1)),
        ("hr <= 1", LessThanOrEqual("hr", 1)),
        ("hr > 1", GreaterThan("hr", 1)),
        ("hr >= 1", GreaterThanOrEqual("hr", 1)),
        ("9 < hr", GreaterThan("hr", 9)),
        ("9 >= hr", LessThanOrEqual("hr", 9)),
        ("'a' = ds", EqualTo("ds", "a")),
        ("(hr) = (1)", EqualTo("hr", 1)),
        ("hr = -5", EqualTo("hr", -5)),
        ("hr = 1.5", EqualTo("hr", Decimal("1.5"))),
        ("hr = -1.50", EqualTo("hr", Decimal("-1.50"))),
        ("hr = 1.5E0", EqualTo("hr", 1.5)),
        ("hr = 10L", EqualTo("hr", 10)),
        ("hr = 10Y", EqualTo("hr", 10)),
        ("hr = 1.5D", EqualTo("hr", 1.5)),
        ("hr = 1.5BD", EqualTo("hr", Decimal("1.5"))),
        ("ds = DATE '2008-04-08'", EqualTo("ds", datetime.date(2008, 4, 8))),
        ("ds = CAST('2008-04-08' AS DATE)", EqualTo("ds", datetime.date(2008, 4, 8))),
        ("ds < TIMESTAMP '2008-04-08 01:02:03'",
         LessThan("ds", datetime.datetime(2008, 4, 8, 1, 2, 3))),
        ("hr in (1, 2)", In("hr", (1, 2))),
        ("hr not in (1, 2)", Not(In("hr", (1, 2)))),
        ("not hr in (1)", Not(In("hr", (1,)))),
        ("hr between 1 and 3",
         And(GreaterThanOrEqual("hr", 1), LessThanOrEqual("hr", 3))),
        ("hr not between 1 and 3",
         Not(And(GreaterThanOrEqual("hr", 1), LessThanOrEqual("hr", 3)))),
        ("ds like '2008%'", Like("ds", "2008%")),
        ("ds not like '2008%'", Not(Like("ds", "2008%"))),
        ("ds is null", IsNull("ds")),
        ("ds is not null", NotNull("ds")),
        ("not ds is null", NotNull("ds")),
        ("not (ds is null)", Not(IsNull("ds"))),
        ("ds = 'a' and (hr = 1 or not key = 2)",
         And(EqualTo("ds", "a"), Or(EqualTo("hr", 1), Not(EqualTo("key", 2))))),
        ("true", AlwaysTrue()),
        ("false and ds = 'a'", And(AlwaysFalse(), EqualTo("ds", "a"))),
        ("ds = true", EqualTo("ds", True)),
        ("ds", EqualTo("ds", True)),  # a bare condition column; bind keeps it for BOOLEAN only
        ("not hr", Not(EqualTo("hr", True))),
        # null-safe equality is never NULL
        ("hr <=> null", IsNull("hr")),
        ("null <=> t.hr", IsNull("hr")),
        ("hr <=> 1", And(NotNull("hr"), EqualTo("hr", 1))),
        ("-1.5 <=> hr", And(NotNull("hr"), EqualTo("hr", Decimal("-1.5")))),
        ("hr is distinct from 1", Not(And(NotNull("hr"), EqualTo("hr", 1)))),
        ("hr is not distinct from null", IsNull("hr")),
        ("hr in (1, null)", In("hr", (1, None))),
    ],
)
def test_translates_atoms(sql: str, expected: Expr) -> None:
    assert translate(sql) == expected


@pytest.mark.parametrize(
    ("sql", "refs"),
    [
        ("upper(ds) = 'A'", {"ds"}),
        ("CAST(hr AS STRING) = '1'", {"hr"}),
        ("hr = key", {"hr", "key"}),
        ("hr = NULL", {"hr"}),
        ("hr <=> '1'", {"hr"}),  # a string may be NULL once compared (hr <=> 'x' on an INT hr)
        ("hr <=> key", {"hr", "key"}),
        ("ds ilike 'a%'", {"ds"}),
        ("ds rlike 'a'", {"ds"}),
        ("ds like 'a!%' escape '!'", {"ds"}),
        ("ds like key", {"ds", "key"}),
        ("hr in (1, key)", {"hr", "key"}),
        ("hr in (select x from z)", {"hr"}),
        ("other = 1", set()),
        ("u.hr = 1", set()),
        ("hr between 1 and key", {"hr", "key"}),
        ("ds = CAST('2008-4-8' AS DATE)", {"ds"}),
        ("hr = CAST(1.5 AS INT)", {"hr"}),
        ("hr = CAST(300 AS TINYINT)", {"hr"}),
        ("hr = CAST('1.55' AS DECIMAL(3,1))", {"hr"}),
        ("hr is true", {"hr"}),
        ("1 = 1", set()),
    ],
)
def test_unmodelled_becomes_opaque(sql: str, refs: set[str]) -> None:
    result = translate(sql)
    assert isinstance(result, Opaque), result
    assert result.refs == frozenset(refs)
    sqlglot.parse_one(result.sql, read="spark")  # valid Spark SQL


def test_opaque_keeps_spark_sql_and_nests_under_connectives() -> None:
    result = translate("ds = 'a' and not upper(ds) = 'B'")
    assert result == And(EqualTo("ds", "a"), Not(Opaque("UPPER(ds) = 'B'", frozenset({"ds"}))))


def test_spark_dialect_input() -> None:
    assert translate("ds = DATE'2008-04-08' AND hr IN (1, 2)", "spark") == And(
        EqualTo("ds", datetime.date(2008, 4, 8)), In("hr", (1, 2))
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("((key >= 100) and (key < 200))",
         And(GreaterThanOrEqual("key", 100), LessThan("key", 200))),
        ("(ds = '2008-04-08')", EqualTo("ds", "2008-04-08")),
        ("(hr in (1, 2))", In("hr", (1, 2))),
        ("(ds like '2%')", Like("ds", "2%")),
        ("(ds is null)", IsNull("ds")),
        ("(ds is not null)", NotNull("ds")),
        ("(not (ds = 'a'))", Not(EqualTo("ds", "a"))),
        ("(s = 'it\\'s \\\\')", EqualTo("s", "it's \\")),
        ("(`date` = DATE '2008-04-08')", EqualTo("date", datetime.date(2008, 4, 8))),
        ("(Key = 1)", EqualTo("key", 1)),
        ("(x in ())", In("x", ())),
    ],
)
def test_parse_filter_string(text: str, expected: Expr) -> None:
    assert parse_filter_string(text) == expected


def test_parse_filter_string_error_has_position() -> None:
    with pytest.raises(ParseError) as info:
        parse_filter_string("(x = ")
    assert info.value.line == 1
    assert info.value.column is not None
    assert isinstance(info.value, ValueError)
