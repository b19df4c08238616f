"""The list-bucketing pruning rule without Spark: Hive's cases, and a Hypothesis property
that a directory holding a matching row is never skipped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hivepark import layout
from hivepark.catalog.models import Column, Partition, Table
from hivepark.catalog.skew import SKEW_LOCATIONS, SkewLayout
from hivepark.expr import (
    AlwaysTrue,
    And,
    EqualTo,
    Expr,
    GreaterThan,
    In,
    IsNull,
    LessThan,
    Not,
    NotEqualTo,
    NotNull,
    Opaque,
    Or,
    evaluate,
)
from hivepark.plan.explain import render_scan
from hivepark.plan.list_bucketing import choose_directories, prune_list_bucketing
from hivepark.plan.nodes import TableScan

D1 = layout.lb_default_dir_name(1)
D2 = layout.lb_default_dir_name(2)


def one_col(values=("6", "20", "30", "40")) -> SkewLayout:
    locs = tuple(((v,), f"x={v}") for v in values) + ((None, D1),)
    return SkewLayout(("x",), tuple((v,) for v in values), locs)


def two_col() -> SkewLayout:
    vals = (("10", "a"), ("10", "b"), ("20", "c"))
    locs = tuple((v, f"x={v[0]}/y={v[1]}") for v in vals) + ((None, D2),)
    return SkewLayout(("x", "y"), vals, locs)


TYPES = {"x": "int", "y": "string", "z": "int"}


def dirs(lay: SkewLayout, pred: Expr) -> set[str]:
    return set(choose_directories(lay, pred, TYPES))


def test_equality_reads_one_directory():
    assert dirs(one_col(), EqualTo("x", 30)) == {"x=30"}
    assert dirs(one_col(), EqualTo("x", 50)) == {D1}
    assert dirs(one_col(), EqualTo("x", "30")) == {"x=30"}  # bound to the column type


def test_in_or_not_and():
    assert dirs(one_col(), In("x", (6, 20))) == {"x=6", "x=20"}
    assert dirs(one_col(), In("x", (6, 50))) == {"x=6", D1}
    assert dirs(one_col(), Or(EqualTo("x", 6), EqualTo("x", 40))) == {"x=6", "x=40"}
    assert dirs(one_col(), Not(EqualTo("x", 6))) == {"x=20", "x=30", "x=40", D1}
    assert dirs(one_col(), NotEqualTo("x", 6)) == {"x=20", "x=30", "x=40", D1}
    assert dirs(one_col(), And(EqualTo("x", 6), EqualTo("x", 20))) == set()
    assert dirs(one_col(), And(EqualTo("x", 6), GreaterThan("z", 1))) == {"x=6"}
    # A predicate on other columns only, a range, IS NULL: nothing is known.
    everything = {"x=6", "x=20", "x=30", "x=40", D1}
    assert dirs(one_col(), GreaterThan("z", 1)) == everything
    assert dirs(one_col(), Or(EqualTo("x", 6), GreaterThan("z", 1))) == everything
    assert dirs(one_col(), LessThan("x", 25)) == {"x=6", "x=20", D1}
    assert dirs(one_col(), IsNull("x")) == {D1}
    assert dirs(one_col(), Opaque("f(x) = 1", frozenset({"x"}))) == everything


def test_multi_column_full_and_partial_key():
    lay = two_col()
    assert dirs(lay, And(EqualTo("x", 10), EqualTo("y", "b"))) == {"x=10/y=b"}
    assert dirs(lay, And(EqualTo("x", 10), EqualTo("y", "z"))) == {D2}
    # Part of the key (the spec's examples): x=10 prunes (20, 'c'); y='b' keeps only (10, 'b').
    assert dirs(lay, EqualTo("x", 10)) == {"x=10/y=a", "x=10/y=b", D2}
    assert dirs(lay, EqualTo("y", "b")) == {"x=10/y=b", D2}
    assert dirs(lay, Or(And(EqualTo("x", 10), EqualTo("y", "a")),
                        And(EqualTo("x", 20), EqualTo("y", "c")))) == {"x=10/y=a", "x=20/y=c"}


def test_values_compare_exactly_in_the_column_type():
    lay = SkewLayout(("s",), (("ABC",),), ((("ABC",), "s=ABC"), (None, D1)))
    assert set(choose_directories(lay, EqualTo("s", "ABC"), {"s": "string"})) == {"s=ABC"}
    assert set(choose_directories(lay, EqualTo("s", "abc"), {"s": "string"})) == {D1}
    # A number compared with a string column is Spark's cast: nothing is pruned.
    assert set(choose_directories(lay, EqualTo("s", 1), {"s": "string"})) == {"s=ABC", D1}


def test_skewed_value_without_rows_has_no_directory():
    lay = SkewLayout(("x",), (("51",), ("484",)), ((("484",), "x=484"), (None, D1)))
    assert choose_directories(lay, EqualTo("x", 51), {"x": "int"}) == ()


def test_planner_rule_and_explain_count_directories():
    t = Table("default", "t", (Column("a", "int"), Column("x", "int")),
              (Column("ds", "string"),), location="/w/t")
    p1 = Partition(("1",), "/w/t/ds=1", {SKEW_LOCATIONS: one_col().to_json()}, ())
    p2 = Partition(("2",), "/w/t/ds=2", {SKEW_LOCATIONS: one_col(("7",)).to_json()}, ())
    p3 = Partition(("3",), "/w/t/ds=3", {}, ())
    scan = TableScan(t, "t", EqualTo("x", 30), partitions=(p1, p2, p3), total_partitions=3)
    out = prune_list_bucketing(scan)
    assert out.lb_choice(("1",)).chosen == ("x=30",)
    assert out.lb_choice(("2",)).chosen == (D1,)
    assert out.lb_choice(("3",)) is None
    text = "\n".join(render_scan(out))
    assert "list bucketing: directories=3/8" in text
    assert "/w/t/ds=1/x=30, /w/t/ds=2/" + D1 + ", /w/t/ds=3" in text


# ---------------------------------------------------------------- soundness property

SMALL = st.integers(0, 5)
ATOMS = st.one_of(
    st.builds(EqualTo, st.sampled_from(["x", "y", "z"]), SMALL),
    st.builds(NotEqualTo, st.sampled_from(["x", "y", "z"]), SMALL),
    st.builds(LessThan, st.sampled_from(["x", "y", "z"]), SMALL),
    st.builds(GreaterThan, st.sampled_from(["x", "y", "z"]), SMALL),
    st.builds(In, st.sampled_from(["x", "y", "z"]), st.lists(
        st.one_of(SMALL, st.none()), max_size=4).map(tuple)),
    st.builds(IsNull, st.sampled_from(["x", "y", "z"])),
    st.builds(NotNull, st.sampled_from(["x", "y", "z"])),
    st.just(AlwaysTrue()),
)
PREDICATES = st.recursive(ATOMS, lambda sub: st.one_of(
    st.builds(And, sub, sub), st.builds(Or, sub, sub), st.builds(Not, sub)), max_leaves=8)
ROWS = st.lists(st.fixed_dictionaries({"x": st.one_of(SMALL, st.none()),
                                       "y": st.one_of(SMALL, st.none()),
                                       "z": st.one_of(SMALL, st.none())}), max_size=30)


@settings(max_examples=400, deadline=None)
@given(PREDICATES, st.lists(st.tuples(SMALL, SMALL), max_size=6, unique=True),
       st.integers(1, 2), ROWS)
def test_pruning_never_loses_a_row(pred, skewed, n_cols, rows):
    """Every row the predicate keeps lies in a directory the rule reads."""
    cols = ("x", "y")[:n_cols]
    values = list(dict.fromkeys(tuple(str(v) for v in s[:n_cols]) for s in skewed))
    locs = tuple((v, layout.lb_dir_name(cols, v)) for v in values) + \
        ((None, layout.lb_default_dir_name(n_cols)),)
    lay = SkewLayout(cols, tuple(values), locs)
    types = {"x": "int", "y": "int", "z": "int"}
    chosen = set(choose_directories(lay, pred, types))
    for row in rows:
        if evaluate(pred, row) is not True:  # int literals on int columns: already bound
            continue
        key = tuple(str(row[c]) if row[c] is not None else None for c in cols)
        where = lay.location_of(key) if key in lay.values else lay.default_location
        assert where in chosen, (pred, row, where, chosen)
