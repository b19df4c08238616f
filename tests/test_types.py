"""hivepark.types.HiveType: parsing, classification, literal binding, canonical partition text
and decoding; properties with Hypothesis, and one Spark test that the canonical text is
Spark's ``CAST(CAST(v AS t) AS STRING)``."""

from __future__ import annotations

import datetime
import math
import re
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hivepark.types import DEFAULT_PARTITION_NAME, HiveType, PartitionValueError, type_family

# -- parsing --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "canonical", "base", "params"), [
    ("INT", "int", "int", ()),
    (" Integer ", "int", "int", ()),
    ("BigInt", "bigint", "bigint", ()),
    ("double precision", "double", "double", ()),
    ("REAL", "float", "float", ()),
    ("DECIMAL( 10 , 2 )", "decimal(10,2)", "decimal", (10, 2)),
    ("decimal", "decimal", "decimal", ()),
    ("numeric(5)", "decimal(5)", "decimal", (5,)),
    (" varchar( 5 )", "varchar(5)", "varchar", (5,)),
    ("CHAR(3)", "char(3)", "char", (3,)),
    ("array< integer >", "array<int>", "array", ()),
    ("map<string, array<int>>", "map<string,array<int>>", "map", ()),
    ("struct<a: int, b : string>", "struct<a:int,b:string>", "struct", ()),
])
def test_parse_canonical_text(text: str, canonical: str, base: str, params: tuple[int, ...]) -> None:
    t = HiveType.parse(text)
    assert (t.text, t.base, t.params) == (canonical, base, params)
    assert HiveType.parse(t.text) == t  # the canonical text parses to the same type
    assert HiveType.parse(t) is t


@given(st.sampled_from(["int", "tinyint", "decimal(10,2)", "varchar(7)", "timestamp", "date",
                        "array<int>", "map<string,int>", "double", "boolean", "string"]),
       st.data())
def test_parse_ignores_case_and_spaces(canonical: str, data: st.DataObject) -> None:
    spaced = "".join(c + data.draw(st.sampled_from(["", " ", "  "])) if c in "(,<>" else c
                     for c in canonical)
    text = "".join(data.draw(st.sampled_from([c.lower(), c.upper()])) for c in spaced)
    assert HiveType.parse(text).text == canonical


@pytest.mark.parametrize(("text", "family", "kind"), [
    ("tinyint", "numeric", "int"), ("smallint", "numeric", "int"), ("int", "numeric", "int"),
    ("bigint", "numeric", "int"), ("decimal(10,2)", "numeric", "decimal"),
    ("float", "numeric", "float32"), ("real", "numeric", "float32"),
    ("double", "numeric", "float64"), ("string", "string", "string"),
    ("varchar(4)", "string", "string"), ("char(4)", "string", "char"), ("date", "date", "date"),
    ("timestamp", "timestamp", "timestamp"), ("boolean", "boolean", "boolean"),
    ("array<int>", "other", "other"), ("binary", "other", "other"), ("nonsense", "other", "other"),
])
def test_family_and_kind(text: str, family: str, kind: str) -> None:
    t = HiveType.parse(text)
    assert (t.family, t.kind, type_family(text)) == (family, kind, family)
    assert t.is_scalar == (kind != "other")


def test_ranges_precision_and_spark_ddl() -> None:
    assert HiveType.parse("tinyint").integral_range() == (-128, 127)
    assert HiveType.parse("bigint").integral_range() == (-(2 ** 63), 2 ** 63 - 1)
    assert HiveType.parse("double").integral_range() is None
    assert HiveType.parse("decimal(7,3)").precision_scale == (7, 3)
    assert HiveType.parse("decimal").precision_scale == (10, 0)
    assert HiveType.parse("VARCHAR(5)").spark_ddl == "string"
    assert HiveType.parse("struct<a:char(2),b:int>").spark_ddl == "struct<a:string,b:int>"


# -- binding --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value", "bound"), [
    ("int", "10", 10), ("int", "-3", -3), ("int", "1.5", None), ("tinyint", "300", None),
    ("int", 7, 7), ("int", True, None), ("bigint", "x", None),
    ("double", "1.5", 1.5), ("double", "1e400", None), ("float", "3", 3), ("float", "1.5", None),
    ("decimal(10,0)", "12", 12), ("decimal(10,2)", "12", None), ("decimal(20,0)", "12", None),
    ("string", "a", "a"), ("string", 1, None), ("char(3)", "a", None),
    ("date", "2008-04-08", "2008-04-08"), ("date", datetime.date(2008, 4, 8), "2008-04-08"),
    ("date", "2008-4-8", "2008-04-08"), ("date", " 2008-04-08 10:00", "2008-04-08"), ("date", "2008", "2008-01-01"),
    ("date", "2008-02-30", None), ("date", "2008-4", "2008-04-01"), ("date", "2008-4x", None),
    ("date", datetime.datetime(2008, 4, 8), None),
    ("boolean", True, True), ("boolean", "true", None), ("timestamp", "2008-04-08", None),
    ("array<int>", 1, None),
])
def test_bind_literal(text: str, value: Any, bound: Any) -> None:
    got = HiveType.parse(text).bind_literal(value)
    assert got == bound and type(got) is type(bound)


# -- partition text -------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value", "canonical"), [
    ("int", "007", "7"), ("int", " -007 ", "-7"), ("bigint", "+42", "42"), ("int", 7, "7"),
    ("smallint", 7.0, "7"), ("decimal(5,2)", "1.5", "1.5"), ("decimal(5,2)", "1.50", "1.5"),
    ("decimal(5,2)", "-0.125", "-0.13"), ("decimal(5,2)", "7", "7"), ("decimal(5,2)", "-0.001", "0"),
    ("decimal(5,2)", "100.00", "100"), ("decimal(5,0)", Decimal("2.5"), "3"),
    ("double", 2, "2.0"), ("double", "1e20", "1.0E20"),
    ("double", "0.0001", "1.0E-4"), ("double", "-0", "-0.0"), ("float", "1.1", "1.1"),
    ("boolean", True, "true"), ("boolean", "TRUE", "true"), ("boolean", "0", "false"),
    ("date", "2008-4-8", "2008-04-08"), ("date", datetime.datetime(2008, 4, 8, 10), "2008-04-08"),
    ("timestamp", "2024-01-05T10:00:00.500", "2024-01-05 10:00:00.5"),
    ("timestamp", datetime.date(2024, 1, 5), "2024-01-05 00:00:00"),
    ("string", True, "true"), ("string", 1.5, "1.5"), ("varchar(3)", " a ", " a "),
    ("int", None, None), ("string", "", None), ("date", DEFAULT_PARTITION_NAME, None),
])
def test_partition_text(text: str, value: Any, canonical: str | None) -> None:
    assert HiveType.parse(text).partition_text(value) == canonical


@pytest.mark.parametrize(("text", "value", "message"), [
    ("int", "x", "'x' is not a valid int value"),
    ("tinyint", "128", "'128' is not a valid tinyint value"),
    ("int", 1.5, "'1.5' is not a valid int value"),
    ("int", True, "'True' is not a valid int value"),
    ("decimal(3,1)", "100", "'100' is not a valid decimal(3,1) value"),
    ("double", "NaN", "'NaN' is not a valid double value"),
    ("boolean", "maybe", "'maybe' is not a valid boolean value"),
    ("date", "2008-02-30", "'2008-02-30' is not a valid date value"),
    ("timestamp", "yesterday", "'yesterday' is not a valid timestamp value"),
    ("array<int>", "1", "a array<int> column cannot be a partition key"),
    # the reason, after the value and the type
    ("tinyint", 300, "'300' is not a valid tinyint value (out of range: a tinyint holds -128 to 127)"),
    ("int", "99999999999", "(out of range: an int holds -2147483648 to 2147483647)"),
    ("double", "1e400", "'1e400' is not a valid double value (out of range: it overflows a double)"),
    ("float", "1e39", "(out of range: it overflows a float)"),
    ("double", float("inf"), "(NaN and infinity cannot be partition values)"),
    ("double", "-Infinity", "(NaN and infinity cannot be partition values)"),
    ("decimal(10,2)", "123456789.5", "(out of range: a decimal(10,2) holds at most 8 digits before the point)"),
    ("decimal(2,2)", "1", "(out of range: a decimal(2,2) holds only values between -1 and 1)"),
    ("decimal(10,2)", "12,5", "(not a number: a decimal(10,2) is written like 12.5)"),
    ("boolean", "maybe", "(a boolean is true or false)"),
    ("timestamp", "not a time", "(a timestamp is written yyyy-mm-dd hh:mm:ss[.fffffffff])"),
    ("date", "2024-02-30", "(a date is written yyyy-mm-dd, and must exist in the calendar)"),
])
def test_partition_text_errors_name_the_problem(text: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        HiveType.parse(text).partition_text(value)


def test_partition_value_error_carries_the_reason() -> None:
    with pytest.raises(PartitionValueError) as e:
        HiveType.parse("tinyint").partition_text("300")
    assert (e.value.value, e.value.type_text) == ("300", "tinyint")
    assert e.value.reason == "out of range: a tinyint holds -128 to 127"
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(("text", "value", "canonical"), [
    ("tinyint", "12", True), ("tinyint", "300", False), ("tinyint", "012", False), ("int", None, True),
    ("decimal(10,2)", "12.5", True), ("decimal(10,2)", "12.50", False), ("decimal(10,2)", "0", True),
    ("boolean", "true", True), ("boolean", "TRUE", False), ("boolean", "maybe", False),
    ("double", "2.0", True), ("double", "2", False), ("double", "Infinity", False),
    ("date", "2024-01-05", True), ("date", "2024-1-5", False),
    ("timestamp", "2024-01-05 10:00:00", True), ("timestamp", "2024-01-05", False),
    ("string", "anything", True),
])
def test_is_canonical_partition_text(text: str, value: str | None, canonical: bool) -> None:
    assert HiveType.parse(text).is_canonical_partition_text(value) is canonical


def _ints(text: str) -> st.SearchStrategy[Any]:
    rng = HiveType.parse(text).integral_range()
    assert rng is not None
    n = st.integers(*rng)
    padded = st.tuples(st.sampled_from(["", "+", "-"]), st.text("0", max_size=3),
                       st.integers(0, rng[1])).map(lambda t: f"{t[0]}{t[1]}{t[2]}")
    return st.one_of(n, n.map(str), padded)


_FINITE = st.floats(allow_nan=False, allow_infinity=False)
_DATES = st.dates(min_value=datetime.date(1, 1, 1))
_TIMESTAMPS = st.datetimes(min_value=datetime.datetime(1, 1, 1))
_DECIMALS = st.decimals(min_value=-999, max_value=999, allow_nan=False, allow_infinity=False,
                        places=4)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "tinyint": _ints("tinyint"), "smallint": _ints("smallint"), "int": _ints("int"),
    "bigint": _ints("bigint"),
    "decimal(7,2)": st.one_of(_DECIMALS, _DECIMALS.map(str), st.integers(-99999, 99999)),
    "decimal(38,6)": st.decimals(min_value=Decimal("-1e31"), max_value=Decimal("1e31"),
                                 allow_nan=False, places=8),
    "double": st.one_of(_FINITE, _FINITE.map(repr), st.integers(-(2 ** 60), 2 ** 60)),
    "float": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "boolean": st.one_of(st.booleans(), st.sampled_from(["TRUE", "false", "t", "N", "yes", "0"])),
    "date": st.one_of(_DATES, _DATES.map(lambda d: d.isoformat()), _TIMESTAMPS),
    "timestamp": st.one_of(_TIMESTAMPS, _TIMESTAMPS.map(lambda t: t.isoformat()), _DATES),
    "string": st.one_of(st.text(min_size=1), st.integers(), st.booleans()),
}
_TYPED = st.sampled_from(sorted(VALUES)).flatmap(
    lambda t: st.tuples(st.just(t), st.lists(VALUES[t], min_size=2, max_size=2)))


@settings(max_examples=400)
@given(_TYPED)
def test_partition_text_is_idempotent(case: tuple[str, list[Any]]) -> None:
    text, values = case
    t = HiveType.parse(text)
    for v in values:
        once = t.partition_text(v)
        assert once is None or t.partition_text(once) == once


def _python_value(t: HiveType, v: Any) -> Any:
    """The value ``v`` means in type ``t``, to order the originals by."""
    if t.kind == "int":
        return int(v.strip()) if isinstance(v, str) else v
    if t.kind == "decimal":
        return Decimal(v) if isinstance(v, str) else Decimal(v)
    if t.kind in ("float32", "float64"):
        return float(v)
    if t.kind == "boolean":
        return v if isinstance(v, bool) else v.strip().lower() in ("true", "t", "yes", "y", "1")
    if t.kind == "date":
        d = datetime.date.fromisoformat(v) if isinstance(v, str) else v
        return d.date() if isinstance(d, datetime.datetime) else d
    if t.kind == "timestamp":
        ts = datetime.datetime.fromisoformat(v) if isinstance(v, str) else v
        return ts if isinstance(ts, datetime.datetime) else datetime.datetime(ts.year, ts.month, ts.day)
    return t.partition_text(v)  # strings order by their text


@settings(max_examples=400)
@given(_TYPED)
def test_decoded_partition_text_orders_like_the_values(case: tuple[str, list[Any]]) -> None:
    """Canonical text decodes to values ordered like the originals: strictly for exact types,
    weakly where the type rounds (decimal scale, float precision)."""
    text, (a, b) = case
    t = HiveType.parse(text)
    x, y = _python_value(t, a), _python_value(t, b)
    da, db = t.decode(t.partition_text(a)), t.decode(t.partition_text(b))
    assert da is not None and db is not None
    if x > y:
        (x, y), (da, db) = (y, x), (db, da)
    rounds = t.kind in ("decimal", "float32")
    if x == y:
        assert da == db
    elif rounds:
        assert da <= db
    else:
        assert da < db


# -- Spark ----------------------------------------------------------------------------------

# (type, Python value, the same value as a Spark SQL literal). Not here: doubles that JDK 17's
# Double.toString prints longer than the shortest text (1e23 is "9.999999999999999E22"
# there, "1.0E23" from JDK 19 on); hivepark writes the shortest.
SPARK_CASES: list[tuple[str, Any, str]] = [
    ("boolean", True, "true"), ("boolean", "TRUE", "'TRUE'"), ("boolean", "0", "'0'"),
    ("boolean", "yes", "'yes'"),
    ("tinyint", "-0012", "'-0012'"), ("smallint", "+007", "'+007'"), ("int", "007", "'007'"),
    ("int", " -42 ", "' -42 '"), ("int", 7, "7"), ("bigint", "-09223372036854775808",
                                                   "'-09223372036854775808'"),
    ("bigint", 2 ** 63 - 1, str(2 ** 63 - 1)),
    ("decimal(5,2)", "1.5", "'1.5'"), ("decimal(5,2)", "-0.125", "'-0.125'"),
    ("decimal(5,2)", Decimal("0.005"), "0.005BD"), ("decimal(5,0)", "2.5", "'2.5'"),
    ("decimal(38,10)", "1234567890123456789012345678.5", "'1234567890123456789012345678.5'"),
    ("decimal(10,2)", 3, "3"),
    ("float", "1.1", "'1.1'"), ("float", 16777217, "16777217"), ("float", "3.4e38", "'3.4e38'"),
    ("float", "1e-7", "'1e-7'"), ("float", 0.1, "0.1D"), ("float", "1.4e-45", "'1.4e-45'"),
    ("float", "1e10", "'1e10'"), ("double", 2e-323, "2e-323D"),
    ("double", 2, "2"), ("double", "1e20", "'1e20'"), ("double", "0.001", "'0.001'"),
    ("double", 0.0001, "0.0001D"), ("double", "1e7", "'1e7'"), ("double", 1234567.0, "1234567.0D"),
    ("double", "-0.0", "'-0.0'"), ("double", 0.1 + 0.2, repr(0.1 + 0.2) + "D"),
    ("double", 1.7976931348623157e308, "1.7976931348623157E308D"), ("double", 5e-324, "5e-324D"),
    ("date", "2008-4-8", "'2008-4-8'"), ("date", datetime.date(2008, 4, 8), "DATE '2008-04-08'"),
    ("date", "2008-04-08T10:00:00", "'2008-04-08T10:00:00'"),
    ("date", datetime.date(999, 1, 2), "DATE '0999-01-02'"),
    ("timestamp", "2024-01-05T10:00:00.500", "'2024-01-05T10:00:00.500'"),
    ("timestamp", "2024-01-05 10:00", "'2024-01-05 10:00'"),
    ("timestamp", datetime.datetime(2024, 1, 5, 10, 0, 0, 120),
     "TIMESTAMP '2024-01-05 10:00:00.000120'"),
    ("timestamp", datetime.date(2024, 1, 5), "DATE '2024-01-05'"),
    ("string", "a b", "'a b'"), ("string", True, "true"), ("string", 7, "7"),
    ("string", datetime.date(2008, 4, 8), "DATE '2008-04-08'"), ("string", 1.5, "1.5D"),
    # the default partition: NULL, '' and its name, also as the text a VARCHAR value is cut to
    ("string", "", "''"), ("string", "__HIVE_DEFAULT_PARTITION__", "'__HIVE_DEFAULT_PARTITION__'"),
    ("string", "__HIVE_DEFAULT_PARTITION__x", "'__HIVE_DEFAULT_PARTITION__x'"), ("string", None, "NULL"),
    ("varchar(26)", "__HIVE_DEFAULT_PARTITION__x", "'__HIVE_DEFAULT_PARTITION__x'"),
    ("varchar(3)", "__HIVE_DEFAULT_PARTITION__", "'__HIVE_DEFAULT_PARTITION__'"),
    ("varchar(3)", "abcd", "'abcd'"), ("varchar(3)", "a  ", "'a  '"),
    # a CHAR value is cut, then stored without trailing spaces (HiveChar's stripped value)
    ("char(3)", "a  ", "'a  '"), ("char(3)", "a", "'a'"), ("char(3)", "b c d", "'b c d'"),
    ("char(3)", " b", "' b'"), ("char(3)", "   ", "'   '"), ("char(3)", "a\t", "'a\\t'"),
]


def test_partition_text_is_the_dynamic_insert_text(spark: Any) -> None:
    """``partition_text(v)`` is exactly the text a dynamic partition insert writes for
    ``CAST(v AS t)`` (``exec.write.partition_text_sql``: Spark's ``CAST ... AS STRING``, a
    DECIMAL without trailing zeros as Hive's HiveDecimal), one query for the whole table of
    values, so a static and a dynamic value name the same partition."""
    from hivepark.exec.write import partition_text_sql

    select = ", ".join(f"CAST({lit} AS {t}) AS c{i}" for i, (t, _, lit) in enumerate(SPARK_CASES))
    typed = spark.sql(f"SELECT {select}")
    row = typed.selectExpr(*[f"{partition_text_sql(f'c{i}', HiveType.parse(t))} AS c{i}"
                             for i, (t, _, _) in enumerate(SPARK_CASES)]).collect()[0]
    got = [HiveType.parse(t).partition_text(v) for t, v, _ in SPARK_CASES]
    expected = [row[f"c{i}"] for i in range(len(SPARK_CASES))]
    mismatches = [(SPARK_CASES[i][:2], g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not mismatches, mismatches
    assert all(not isinstance(v, float) or math.isfinite(v) for _, v, _ in SPARK_CASES)


DATE_TEXTS = ["2024-1-6", "2024-01-06", " 2024-01-06 ", "\t2024-01-06\n", "2024-01-06T10:00", "2024-01-06 anything",
              "2024-01-06x", "2024", "2024-1", "2024-1 ", "2024-1T", "2024-13-01", "2024-02-30", "2024-02-29",
              "2023-02-29", "+2024-01-06", "-2024-01-06", "24-01-06", "02024-01-06", "2024-001-06", "2024-01-006",
              "2024--06", "2024-01-", "", " ", "T", "2024/01/06", "20240106", "2024-01-06-07", "２０２４-01-06",
              "2024-1-6 T", "0000-01-01", "12345-01-01"]


def test_a_string_binds_to_the_date_spark_casts_it_to(spark: Any) -> None:
    """A string compared with a DATE column (``dt < '2024-1-6'``) binds to the date Spark's
    cast gives it, or to nothing where Spark's is NULL or a year Python cannot hold."""
    select = ", ".join(f"CAST(try_cast({_sql_text(t)} AS DATE) AS STRING) AS c{i}" for i, t in enumerate(DATE_TEXTS))
    row = spark.sql(f"SELECT {select}").collect()[0]
    for i, text in enumerate(DATE_TEXTS):
        sparks = row[f"c{i}"]
        ours = HiveType.parse("date").bind_literal(text)
        assert ours == sparks or (ours is None and sparks is not None and not 1 <= int(sparks[:-6]) <= 9999), \
            (text, ours, sparks)


def _sql_text(text: str) -> str:
    return "'" + "".join(f"\\u{ord(c):04x}" if not c.isalnum() and c not in " -+:" else c for c in text) + "'"
