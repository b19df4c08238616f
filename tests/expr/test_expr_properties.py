"""Hypothesis properties: escaping, path containment, filter-string round trip, soundness."""

from __future__ import annotations

import datetime
import posixpath
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from hivepark.errors import UserInputError
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
    evaluate,
    project,
    simplify,
    to_filter_string,
    to_nnf,
)
from hivepark.expr.from_sqlglot import parse_filter_string
from hivepark.expr.visitors import compile_predicate
from hivepark.layout import (
    DEFAULT_PARTITION_NAME,
    escape_path_name,
    is_within,
    make_part_name,
    parse_part_name,
    partition_path,
    unescape_path_name,
)

COMPARISONS: list[Callable[[str, object], Expr]] = [  # type: ignore[list-item]
    EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual,
]
TRICKY = st.sampled_from(
    ["", "..", "../x", "a/b", "%", "%2F", "\n", "'", '"', "\\", " ", "=", "x" * 4096]
)
ANY_TEXT = st.one_of(st.text(), TRICKY)

# ---------------------------------------------------------------- layout


@given(ANY_TEXT)
def test_escape_round_trips(text: str) -> None:
    escaped = escape_path_name(text)
    assert "/" not in escaped
    if text == "":
        assert escaped == DEFAULT_PARTITION_NAME
    else:
        assert unescape_path_name(escaped) == text


@given(st.text())
def test_unescape_never_fails(text: str) -> None:
    unescape_path_name(text)


PART_SPECS = st.lists(
    st.tuples(st.text(min_size=1, max_size=20), st.one_of(st.none(), ANY_TEXT)), max_size=5
)


@given(PART_SPECS)
def test_part_names_round_trip(spec: list[tuple[str, str | None]]) -> None:
    cols, values = [c for c, _ in spec], [v for _, v in spec]
    name = make_part_name(cols, values)
    assert len(name.split("/")) == len(cols) or (not cols and name == "")
    expected = [
        (c.lower(), None if v in (None, "", DEFAULT_PARTITION_NAME) else v) for c, v in spec
    ]
    assert parse_part_name(name) == expected


@given(
    st.sampled_from(["/wh/t", "/wh/t/", "s3://bucket/w/t", "hdfs://nn:8020/w/db.db/t", "rel/t"]),
    PART_SPECS.filter(bool),
)
def test_partition_paths_stay_inside_the_table(
    location: str, spec: list[tuple[str, str | None]]
) -> None:
    cols, values = [c for c, _ in spec], [v for _, v in spec]
    try:
        path = partition_path(location, cols, values)
    except UserInputError:
        return  # a component longer than 255 bytes
    assert is_within(location, path)
    relative = path[len(location.rstrip("/")) + 1 :]
    assert path.startswith(location.rstrip("/") + "/")
    parts = relative.split("/")
    assert len(parts) == len(cols)
    assert all(p not in ("", ".", "..") for p in parts)
    if "://" not in location:
        assert posixpath.normpath(path).startswith(posixpath.normpath(location) + "/")


# ---------------------------------------------------------------- filter strings

NAMES = st.one_of(
    st.sampled_from(["a", "ds", "hr", "key", "date", "select", "a b", "x`y", "_1", "1a"]),
    st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
)
VALUES = st.one_of(
    st.text(),
    TRICKY,
    st.integers(),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False, places=4),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(),
)


def _atoms(
    names: st.SearchStrategy[str], values: st.SearchStrategy[object]
) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.builds(lambda op, n, v: op(n, v), st.sampled_from(COMPARISONS), names, values),
        st.builds(In, names, st.lists(values | st.none(), max_size=4).map(tuple)),
        st.builds(IsNull, names),
        st.builds(NotNull, names),
        st.just(AlwaysTrue()),
        st.just(AlwaysFalse()),
    )


def _trees(atoms: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.recursive(
        atoms,
        lambda kids: st.one_of(
            st.builds(And, kids, kids), st.builds(Or, kids, kids), st.builds(Not, kids)
        ),
        max_leaves=12,
    )


FILTER_TREES = _trees(st.one_of(_atoms(NAMES, VALUES), st.builds(Like, NAMES, ANY_TEXT)))


@settings(max_examples=150, deadline=None)
@given(FILTER_TREES)
def test_filter_string_round_trips(expr: Expr) -> None:
    assert parse_filter_string(to_filter_string(expr)) == expr


# ---------------------------------------------------------------- soundness

SMALL = st.one_of(st.none(), st.integers(0, 2))
ROWS = st.fixed_dictionaries({"a": SMALL, "b": SMALL, "c": SMALL})
ABC = st.sampled_from(["a", "b", "c"])
SMALL_TREES = _trees(
    _atoms(ABC, st.integers(0, 2)) | st.builds(In, ABC, st.lists(SMALL, max_size=3).map(tuple))
)


@st.composite
def _with_opaque(draw: st.DrawFn) -> tuple[Expr, Expr]:
    """A tree and the same tree with some atoms hidden behind Opaque (same meaning)."""
    expr = draw(SMALL_TREES)
    return expr, _hide(expr, draw)


def _hide(expr: Expr, draw: st.DrawFn) -> Expr:
    if isinstance(expr, (And, Or)):
        return type(expr)(_hide(expr.left, draw), _hide(expr.right, draw))
    if isinstance(expr, Not):
        return Not(_hide(expr.child, draw))
    if draw(st.booleans()):
        return Opaque(to_filter_string(expr), expr.columns())
    return expr


@settings(max_examples=200, deadline=None)
@given(_with_opaque(), ROWS, st.sampled_from([set(), {"a"}, {"a", "b"}, {"a", "b", "c"}]))
def test_project_is_sound(
    pair: tuple[Expr, Expr], row: dict[str, int | None], cols: set[str]
) -> None:
    meaning, shown = pair
    projected = project(shown, cols)
    assert projected.columns() <= cols
    if evaluate(meaning, row) is True:
        assert evaluate(projected, row) is True


@settings(max_examples=200, deadline=None)
@given(SMALL_TREES, ROWS)
def test_nnf_and_simplify_preserve_meaning(expr: Expr, row: dict[str, int | None]) -> None:
    nnf = to_nnf(expr)
    assert evaluate(nnf, row) is evaluate(expr, row)
    assert evaluate(simplify(expr), row) is evaluate(expr, row)
    assert _nots_only_above_atoms(nnf)


@settings(max_examples=300, deadline=None)
@given(SMALL_TREES, ROWS)
def test_compiled_predicate_gives_the_three_valued_result(expr: Expr, row: dict[str, int | None]) -> None:
    """The compiled form (IN as a hash lookup, AND/OR short-circuit) gives SQL's three-valued
    result: TRUE, FALSE or NULL exactly where the tree's evaluator does."""
    assert compile_predicate(expr)(row) is evaluate(expr, row)


def _nots_only_above_atoms(expr: Expr) -> bool:
    if isinstance(expr, (And, Or)):
        return _nots_only_above_atoms(expr.left) and _nots_only_above_atoms(expr.right)
    if isinstance(expr, Not):
        return isinstance(expr.child, (In, Like, Opaque))
    return True


@given(st.text(max_size=10), st.text(alphabet="ab%_\\", max_size=6))
def test_like_agrees_with_a_naive_matcher(value: str, pattern: str) -> None:
    try:
        got = evaluate(Like("s", pattern), {"s": value})
    except ValueError:
        return  # dangling or bad escape, which Spark rejects too
    assert got is _naive_like(value, pattern)


def _naive_like(value: str, pattern: str) -> bool:
    if not pattern:
        return value == ""
    head, rest = pattern[0], pattern[1:]
    if head == "%":
        return any(_naive_like(value[i:], rest) for i in range(len(value) + 1))
    if head == "\\":
        head, rest = rest[0], rest[1:]
    elif head == "_":
        return bool(value) and _naive_like(value[1:], rest)
    return bool(value) and value[0] == head and _naive_like(value[1:], rest)


def test_dates_compare_like_iso_strings() -> None:
    a, b = datetime.date(999, 12, 31), datetime.date(1000, 1, 1)
    assert (a < b) == (a.isoformat() < b.isoformat())
