"""The runtime-pruning decision rule without Spark: hand-built plans and value sets in, the
scan's decisions and its EXPLAIN lines out."""

from __future__ import annotations

from hivepark.catalog.models import Column, Partition, Table
from hivepark.expr import In
from hivepark.plan.explain import render_scan
from hivepark.plan.nodes import (
    FilterShape,
    JoinKey,
    JoinReason,
    QueryPlan,
    RuntimeSource,
    TableScan,
    ValueSource,
)
from hivepark.plan.runtime_pruning import (
    RuntimeSettings,
    RuntimeValues,
    ValueRequest,
    apply_runtime_values,
    mark_runtime,
    value_requests,
)

FACT = Table("default", "sales", (Column("id", "bigint"), Column("store", "int")),
             (Column("ds", "date"), Column("region", "string")), location="/w/sales")
DIM = Table("default", "dates", (Column("ds", "date"), Column("store", "int"),
                                 Column("region", "string"), Column("code", "string")),
            location="/w/dates")
DAYS = Table("default", "days", (Column("note", "string"),), (Column("ds", "date"),),
             location="/w/days")


def source(col: str, big_col: str | None = None, small: int = 1, alias: str = "d",
           table: Table = DIM, from_metastore: bool = False) -> RuntimeSource:
    big_col = big_col or col
    return RuntimeSource(small, alias, table.qualified_name, col, big_col,
                         big_col in FACT.partition_key_names(), from_metastore)


def plan_of(*sources: RuntimeSource, small: TableScan | None = None) -> QueryPlan:
    big = TableScan(FACT, "s", runtime=sources, deferred=True, static_partitions=10,
                    total_partitions=12)
    return QueryPlan((big, small or TableScan(DIM, "d")))


def values(*tuples, source=ValueSource.PYARROW, domain=None) -> RuntimeValues:
    return RuntimeValues(frozenset(tuples), source, domain or {})


def lines(plan: QueryPlan) -> list[str]:
    return render_scan(plan.scans[0], analyzed=True)[3:]


def test_partition_key_values_become_the_runtime_filter():
    plan = plan_of(source("ds"))
    assert value_requests(plan) == [ValueRequest(0, 1, ("ds",))]
    out = apply_runtime_values(plan, {(0, 1): values(("2024-01-02",), ("2024-01-01",), (None,))})
    scan = out.scans[0]
    assert scan.runtime_filter == In("ds", ("2024-01-01", "2024-01-02"))  # NULL dropped, sorted
    assert scan.row_filters == ()
    assert lines(out) == ["  runtime pruning (d.ds -> s.ds): 2 distinct values from "
                          "default.dates (pyarrow)"]


def test_a_value_set_is_bound_once_and_another_set_gets_its_own_values():
    """The bound, sorted keys are kept per collected set (exec/ hands the same set out again
    while a small side is unchanged); a new set, even after the first is gone, is its own."""
    plan = plan_of(source("ds"))
    kept = values(("2024-01-02",), ("2024-01-01",))
    first = apply_runtime_values(plan, {(0, 1): kept}).scans[0].runtime_filter
    assert apply_runtime_values(plan, {(0, 1): kept}).scans[0].runtime_filter == first
    assert first == In("ds", ("2024-01-01", "2024-01-02"))
    for day in range(3, 20):  # sets made and dropped in turn: ids may repeat, answers may not
        got = apply_runtime_values(plan, {(0, 1): values((f"2024-01-{day:02d}",))})
        assert got.scans[0].runtime_filter == In("ds", (f"2024-01-{day:02d}",))


def test_two_partition_keys_keep_the_exact_tuples():
    plan = plan_of(source("ds"), source("region"))
    out = apply_runtime_values(plan, {(0, 1): values(("2024-01-02", "us"), ("2024-01-05", "eu"))})
    scan = out.scans[0]
    assert scan.runtime_tuples == ((("ds", "region"), frozenset({("2024-01-02", "us"),
                                                                 ("2024-01-05", "eu")})),)
    assert "runtime pruning (d.ds -> s.ds, d.region -> s.region): 2 distinct values" in lines(out)[0]


def test_a_few_values_of_a_data_column_reach_the_reader_as_in():
    out = apply_runtime_values(plan_of(source("store")), {(0, 1): values((1,), (2,), (3,))})
    (rf,) = out.scans[0].row_filters
    assert (rf.column, rf.values, rf.shape) == ("store", (1, 2, 3), FilterShape.IN)
    assert out.scans[0].runtime_values == (In("store", (1, 2, 3)),)  # for list bucketing
    assert lines(out)[-1] == "  row filter pushed to the reader: store IN (3 values)"


def test_over_200_values_reach_the_reader_as_a_range():
    got = values(*((v,) for v in range(10, 311)), domain={"store": (0, 10_000)})
    out = apply_runtime_values(plan_of(source("store")), {(0, 1): got})
    (rf,) = out.scans[0].row_filters
    assert rf.shape is FilterShape.RANGE
    assert lines(out)[-1] == ("  row filter pushed to the reader: store BETWEEN 10 AND 310 "
                              "(range of 301 values)")


def test_values_spanning_the_small_tables_range_are_not_pushed():
    got = values(*((v,) for v in range(0, 100, 2)), domain={"store": (0, 99)})
    out = apply_runtime_values(plan_of(source("store")), {(0, 1): got})
    assert out.scans[0].row_filters == ()
    assert lines(out)[-1] == ("  row filter not pushed (d.store -> s.store): 50 values span 99% of "
                              "the small table's key range, so no row group would be skipped; the "
                              "join keeps only matching rows")


class _Unread:
    """Key tuples the rule may count but must not read."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        raise AssertionError("the values were read")

    def __contains__(self, item: object) -> bool:
        raise AssertionError("the values were read")


def test_a_large_set_spanning_the_range_is_skipped_without_reading_its_values():
    got = RuntimeValues(_Unread(80_000), ValueSource.PYARROW, {"store": (1, 200_000)},
                        {"store": (3, 199_990)})
    out = apply_runtime_values(plan_of(source("store")), {(0, 1): got})
    assert out.scans[0].row_filters == () and out.scans[0].runtime_values == ()
    assert lines(out)[-1] == ("  row filter not pushed (d.store -> s.store): 80,000 values span 100% of "
                              "the small table's key range, so no row group would be skipped; the "
                              "join keeps only matching rows")


def test_a_large_set_in_a_narrow_range_is_read_and_pushed_as_a_range():
    tuples = frozenset((v,) for v in range(50_000, 70_001))
    got = RuntimeValues(tuples, ValueSource.PYARROW, {"store": (1, 200_000)},
                        {"store": (50_000, 70_000)})
    out = apply_runtime_values(plan_of(source("store")), {(0, 1): got})
    (rf,) = out.scans[0].row_filters
    assert rf.shape is FilterShape.RANGE and (rf.values[0], rf.values[-1]) == (50_000, 70_000)


def test_ten_values_are_pushed_whatever_their_range():
    got = values(*((v,) for v in range(0, 100, 10)), domain={"store": (0, 99)})
    out = apply_runtime_values(plan_of(source("store")), {(0, 1): got})
    assert [rf.shape for rf in out.scans[0].row_filters] == [FilterShape.IN]


def test_over_the_cap_prunes_nothing():
    got = values(("2024-01-01",), ("2024-01-02",), ("2024-01-03",))
    out = apply_runtime_values(plan_of(source("ds")), {(0, 1): got}, RuntimeSettings(max_values=2))
    assert out.scans[0].runtime_filter is None
    assert lines(out) == ["  runtime pruning not applied (d.ds -> s.ds): d has more than 2 distinct "
                          "key values (hive.mapjoin.partition.pruning.max.values)"]


def test_key_types_differ_are_never_collected():
    plan = plan_of(source("code", "ds"))  # string values for a date key
    assert value_requests(plan) == []
    out = apply_runtime_values(plan, {})
    assert out.scans[0].runtime_filter is None
    assert lines(out) == ["  runtime pruning not applied (d.code -> s.ds): the key types differ"]


def test_a_value_that_does_not_bind_prunes_nothing():
    out = apply_runtime_values(plan_of(source("ds")), {(0, 1): values(("not a date",))})
    assert out.scans[0].runtime_filter is None
    assert lines(out) == ["  runtime pruning not applied (d.ds -> s.ds): a value cannot be "
                          "compared with the key's type"]


def test_metastore_values_come_from_the_small_sides_partitions():
    days = TableScan(DAYS, "y", partitions=(
        Partition(("2024-01-03",), "/w/days/ds=2024-01-03"),
        Partition(("2024-01-04",), "/w/days/ds=2024-01-04"),
        Partition((None,), "/w/days/ds=__HIVE_DEFAULT_PARTITION__")))
    plan = plan_of(source("ds", alias="y", table=DAYS, from_metastore=True), small=days)
    assert value_requests(plan) == []
    out = apply_runtime_values(plan, {})
    assert out.scans[0].runtime_filter == In("ds", ("2024-01-03", "2024-01-04"))
    assert lines(out) == ["  runtime pruning (y.ds -> s.ds): 2 distinct values from "
                          "default.days (metastore)"]


def test_marks_and_reasons_at_plan_time():
    fact, dim = TableScan(FACT, "s"), TableScan(DIM, "d")
    plan = QueryPlan((fact, dim), ((0, JoinKey("s", "ds", "d", "ds")),
                                   (0, JoinKey("s", "region", "d", "region",
                                               JoinReason.FULL_OUTER))))
    out = mark_runtime(plan, RuntimeSettings(small_table_bytes=1000),
                       lambda s: 5000 if s.alias == "d" else None)
    assert out.scans[0].runtime == ()
    assert render_scan(out.scans[0])[-2:] == [
        "  runtime pruning not applied (d.ds -> s.ds): d is not a map-join side (5,000 bytes > "
        "hive.mapjoin.smalltable.filesize=1,000; hint /*+ MAPJOIN(d) */ to force)",
        "  runtime pruning not applied (d.region -> s.region): a FULL OUTER JOIN preserves "
        "both sides"]
    out = mark_runtime(plan, RuntimeSettings(enabled=False), lambda s: 10)
    assert render_scan(out.scans[0])[-2] == ("  runtime pruning off (d.ds -> s.ds): "
                                             "hive.optimize.mapjoin.partition.pruning=false")
    out = mark_runtime(plan, RuntimeSettings(), lambda s: 10)
    assert [src.small_alias for src in out.scans[0].runtime] == ["d"]
    assert out.scans[1].broadcast


def test_the_rules_run_in_one_named_order():
    from hivepark.plan.planner import RULES

    assert [name for name, _ in RULES] == [
        "partition filter", "runtime candidates", "static partition pruning", "list bucketing", "bucket pruning",
        "storage pushdown", "runtime marks", "runtime listing"]


def test_a_small_side_in_another_scope_is_found_by_its_own_scope():
    """A big table read through a subquery (scope 1) joined with a dimension of the outer query
    (scope 0) with the same alias as a table inside the subquery: the key names the small side's
    scope, so the dimension is the small side, broadcast; a small table read through a subquery
    of its own is not broadcast (the subquery's rows are not its table's)."""
    plan = QueryPlan((TableScan(FACT, "d", scope=1), TableScan(DIM, "d", scope=0)),
                     ((1, JoinKey("d", "ds", "d", "ds", small_scope=0)),))
    out = mark_runtime(plan, RuntimeSettings(), lambda s: 100 if s.table is DIM else 10_000)
    assert [(src.small, src.small_col) for src in out.scans[0].runtime] == [(1, "ds")]
    assert out.scans[1].broadcast
    inner = plan.evolve(joins=((1, JoinKey("d", "ds", "d", "ds", small_scope=0, small_direct=False)),))
    out = mark_runtime(inner, RuntimeSettings(), lambda s: 100 if s.table is DIM else 10_000)
    assert out.scans[0].runtime and not out.scans[1].broadcast


def test_a_join_through_a_subquery_says_why_it_does_not_prune():
    plan = QueryPlan((TableScan(FACT, "s", scope=1), TableScan(DIM, "d", scope=0)),
                     ((1, JoinKey("s", "ds", "d", "ds", JoinReason.DERIVED_LIMIT, "x", small_scope=0)),))
    out = mark_runtime(plan, RuntimeSettings(), lambda s: 100)
    assert not out.scans[0].runtime
    assert render_scan(out.scans[0], analyzed=True)[-1].strip() == (
        "runtime pruning not applied (d.ds -> s.ds): the big table is read through a subquery, a CTE or a view (x) "
        "with a LIMIT, which keeps rows whatever their key")
