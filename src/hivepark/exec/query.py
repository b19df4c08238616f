"""Queries: each warehouse-table reference becomes a pruned Spark scan; Spark SQL runs the
rest of the query (joins, aggregates, windows) unchanged."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hivepark.catalog.models import Table
from hivepark.errors import HiveParkError
from hivepark.exec.context import Context
from hivepark.exec.failures import spark_error
from hivepark.exec.runtime import resolve_runtime
from hivepark.exec.scan import Relation, pushed_filter, scan_dataframe, scan_relation, scan_size
from hivepark.plan import planner
from hivepark.plan.nodes import FilterShape, HandlerScan, QueryPlan, RowFilter, TableScan
from hivepark.plan.runtime_pruning import RuntimeSettings
from hivepark.sql import in_subquery, views
from hivepark.sql.analyzer import QueryAnalysis
from hivepark.sql.rewrite import SAMPLE_FUNCTION, analyze, check_strict, filters_inline, spark_sql
from hivepark.storage.bucket_files import row_buckets
from hivepark.storage.formats import spark_literal
from hivepark.storage.handlers import handler_for
from hivepark.types import HiveType


@dataclass
class PlannedQuery:
    """A query's scan sites (its syntax tree, opaque here, inside ``analysis``) and the
    plan for its scans."""

    analysis: QueryAnalysis
    plan: QueryPlan
    settings: RuntimeSettings


def type_safety(conf: Any) -> bool:
    """Hive 3's ``hive.strict.checks.type.safety`` (true by default there, and here): as Hive's
    StrictChecks, ``hive.mapred.mode=strict`` turns it on whatever the setting."""
    if (conf.get("hive.mapred.mode") or "").strip().lower() == "strict":
        return True
    return (conf.get("hive.strict.checks.type.safety") or "true").strip().lower() != "false"


def plan_query(ctx: Context, tree: Any) -> PlannedQuery:
    """Finds the scans of ``tree`` (a query; a copy is analyzed) and plans them with the
    planner's rules; runtime (map-join) pruning is only marked here and resolved at
    execution, where a scan it may narrow is listed once."""
    with ctx.same_tables():
        tree = views.expand(tree, ctx.find_view, _column_type(ctx))
        tree = in_subquery.as_semi_joins(tree, ctx.find)
        check_strict(tree, planner.strict_check(ctx.conf, "hive.strict.checks.orderby.no.limit"),
                     planner.strict_check(ctx.conf, "hive.strict.checks.cartesian.product"))
        analysis = analyze(tree, ctx.find, type_safety(ctx.conf), _at_version)
    scans = [TableScan(s.table, s.alias, s.predicate, scope=s.scope, hinted=s.hinted, columns=s.columns,
                       filter_parts=s.own_trees, sample=s.sample, sampled=s.sampled)
             for s in analysis.sites]
    settings = _settings(ctx)
    env = planner.Planning(ctx.catalog, settings, scan_size, handler_for=handler_for, conf=ctx.conf)
    return PlannedQuery(analysis, planner.plan_query(scans, analysis.joins, env), settings)


def _column_type(ctx: Context) -> views.ColumnTyper:
    """The Hive type of a warehouse table's column, for the filters pushed into UNION branches."""
    def typer(db: str | None, name: str, column: str) -> str | None:
        try:
            table = ctx.find(db, name)
        except HiveParkError:
            return None
        if table is None:
            return None
        return next((c.type for c in table.all_columns if c.name == column), None)
    return typer


def describe_handler_scans(plan: QueryPlan) -> QueryPlan:
    """For EXPLAIN: each handler scan gets the handler's own form of what it asks its source
    (a ``HandlerScan`` fact; for JDBC this may ask the database for its columns, so only
    EXPLAIN pays for it)."""
    return plan.evolve(scans=tuple(_describe_handler_scan(s) for s in plan.scans))


def _describe_handler_scan(scan: TableScan) -> TableScan:
    """A handler scan gets the handler's own form of what it asks its source (EXPLAIN)."""
    if scan.pushdown is None:
        return scan
    handler = handler_for(scan.table)
    assert handler is not None
    fact = HandlerScan(handler.aliases[0] if handler.aliases else handler.name,
                       handler.describe_scan(scan.table, scan.read_columns, pushed_filter(scan)))
    return scan.evolve(facts=scan.facts + (fact,))


def handler_dataframe(ctx: Context, scan: TableScan) -> DataFrame:
    """A handler table's scan: the handler reads its source with the pushed filter (Spark
    applies the rest: the query's own WHERE stays in the Spark SQL, so the residual, and
    anything the handler returns beyond the pushed filter, is filtered there)."""
    try:
        return scan_dataframe(ctx.spark, scan, settings=ctx.conf)
    except PySparkException as e:
        raise spark_error(e) from None


def _settings(ctx: Context) -> RuntimeSettings:
    return RuntimeSettings(
        enabled=ctx.conf.get_bool("hive.optimize.mapjoin.partition.pruning"),
        auto_convert=ctx.conf.get_bool("hive.auto.convert.join"),
        small_table_bytes=ctx.conf.get_int("hive.mapjoin.smalltable.filesize"),
        max_values=ctx.conf.get_int("hive.mapjoin.partition.pruning.max.values"))


def resolve(ctx: Context, planned: PlannedQuery) -> tuple[QueryPlan, list[DataFrame]]:
    """Runs the small sides that runtime pruning needs, prunes, and returns every scan's
    DataFrame (a small side Spark had to run is cached, so the join reuses it)."""
    plan, relations = resolve_relations(ctx, planned)
    return plan, [r.dataframe() for r in relations]


def resolve_relations(ctx: Context, planned: PlannedQuery) -> tuple[QueryPlan, list[Relation]]:
    """:func:`resolve`, each scan's rows as a :class:`~hivepark.exec.scan.Relation`."""
    ctx.release_cached()
    plan = planned.plan
    frames: dict[int, DataFrame] = {}

    def small_frame(i: int) -> DataFrame:
        if i not in frames:
            frames[i] = ctx.cache(scan_dataframe(ctx.spark, plan.scans[i], ctx.table_frames()))
        return frames[i]

    if any(scan.runtime for scan in plan.scans):
        try:
            plan = resolve_runtime(ctx, plan, planned.analysis.sites, small_frame,
                                   planned.settings)
        except PySparkException as e:
            raise spark_error(e) from None
    out = []
    zone = _session_zone(ctx) if any(_is_timestamp(rf, scan.table) for scan in plan.scans
                                     for rf in scan.row_filters) else None
    for i, scan in enumerate(plan.scans):
        if scan.pushdown is not None:
            rel = Relation(handler_dataframe(ctx, scan))
        elif i in frames:
            rel = Relation(frames[i])
        else:
            rel = scan_relation(ctx.spark, scan, ctx.table_frames())
        # the reader filters (a handler chose files with them too; rows are filtered here)
        conds = [c for c in (rel.where, *(in_filter_sql(rf, scan.table, zone) for rf in scan.row_filters))
                 if c is not None]
        if len(conds) > 1:
            rel = replace(rel, where=" AND ".join(f"({c})" for c in conds))
        elif conds:
            rel = replace(rel, where=conds[0])
        out.append(rel)
    return plan, out


def _at_version(table: Table) -> Table:
    """A time-travel reference's table with the columns it had then (its handler's; a table of
    files refuses time travel when it is read)."""
    handler = handler_for(table)
    return handler.at_version(table) if handler is not None else table


def in_filter_sql(rf: RowFilter, table: Table, zone: ZoneInfo | None = None) -> str:
    """The reader filter for a runtime value set, in the shape the plan chose:
    ``col IN (values)``, or ``col BETWEEN min AND max`` for a large set (what Parquet and
    ORC skip row groups by; Spark itself turns an IN of over 10 values into that range for
    Parquet, and Iceberg drops IN lists over 200 values altogether). The join keeps only
    matching rows either way; the range costs nothing to parse at 100,000 values. Spark SQL
    text: one call into Spark, or none (a part of the query's text).

    TIMESTAMP values are the session time zone's wall clock (as partition values are); in
    ``zone`` (that time zone) a wall-clock time the clocks went back over is two instants,
    and a literal is one of them, so each value is given as every instant it names."""
    col, values = rf.column, rf.values
    typ = next(c.type for c in table.all_columns if c.name == col)
    if not values:
        return "false"
    if zone is not None and _is_timestamp(rf, table):
        return _instant_filter(rf, zone)
    if rf.shape is FilterShape.RANGE:
        lo, hi = rf.bounds()
        if hi is None:  # NaN among the values: Spark orders it above every number
            return f"`{col}` >= {spark_literal(lo, typ)}"
        return f"`{col}` BETWEEN {spark_literal(lo, typ)} AND {spark_literal(hi, typ)}"
    return f"`{col}` IN ({', '.join(spark_literal(v, typ) for v in values)})"


def _is_timestamp(rf: RowFilter, table: Table) -> bool:
    return any(c.name == rf.column and HiveType.parse(c.type).family == "timestamp" for c in table.all_columns)


def _session_zone(ctx: Context) -> ZoneInfo | None:
    """The session time zone as a time zone with daylight saving rules; None for an offset
    (``+02:00``, ``UTC``: no clock goes back) or a name Python's zone database lacks."""
    name = ctx.spark.conf.get("spark.sql.session.timeZone") or ""
    try:
        return ZoneInfo(name) if "/" in name else None
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _instant_filter(rf: RowFilter, zone: ZoneInfo) -> str:
    """``rf`` over wall-clock values as instants (``timestamp_micros``, a constant Spark folds
    into a literal Parquet filters by): each value's one or two instants, or from the first
    instant of the least to the last instant of the greatest (every instant whose wall clock
    lies between them is inside: clocks go back only over wall times seen once already)."""
    def instant(v: datetime.datetime, fold: int) -> str:
        at = v.replace(tzinfo=zone, fold=fold)
        micros = (at - _EPOCH) // datetime.timedelta(microseconds=1)
        return f"timestamp_micros({micros})"

    col = f"`{rf.column}`"
    if rf.shape is FilterShape.RANGE:
        lo, hi = rf.bounds()
        return f"{col} BETWEEN {instant(lo, 0)} AND {instant(hi, 1)}"
    lits = dict.fromkeys(instant(v, fold) for v in rf.values for fold in (0, 1))
    return f"{col} IN ({', '.join(lits)})"


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def run_query(ctx: Context, tree: Any) -> tuple[DataFrame, QueryPlan]:
    """The query's rows as a DataFrame, and the plan that chose what it reads."""
    planned = plan_query(ctx, tree)
    plan, relations = resolve_relations(ctx, planned)
    views: list[str] = []
    wheres: list[str | None] = []
    for rel, site in zip(relations, planned.analysis.sites):
        if rel.view is not None and (rel.where is None or filters_inline(site)):
            views.append(rel.view)  # kept across queries (TableFrames): nothing to register
            wheres.append(rel.where)
            continue
        view = ctx.new_view_name()
        rel.dataframe().createOrReplaceTempView(view)
        views.append(view)
        wheres.append(None)
    text = spark_sql(planned.analysis, views, [scan.broadcast for scan in plan.scans],
                     [scan.source_applied for scan in plan.scans], wheres)
    if SAMPLE_FUNCTION in text:  # a TABLESAMPLE ON a column whose hash Spark's own cannot give
        ctx.spark.udf.register(SAMPLE_FUNCTION, F.arrow_udf(row_buckets(), "int"))  # type: ignore[call-overload]
    regex = (ctx.conf.get("hive.support.quoted.identifiers") or "column").strip().lower() == "none"
    try:
        if regex:  # Hive's regular-expression column names: Spark's own switch, for this query only
            ctx.spark.conf.set(_REGEX_COLUMNS, "true")
        df = ctx.spark.sql(text)
    except PySparkException as e:
        raise spark_error(e) from None
    finally:
        if regex:
            ctx.spark.conf.unset(_REGEX_COLUMNS)
        ctx.drop_temp_views()
    return df, plan


#: Spark's setting for Hive's ``hive.support.quoted.identifiers=none``: a back-quoted name in a
#: SELECT list is a regular expression over the column names (`(ds|hr)?+.+`: all but ds and hr)
_REGEX_COLUMNS = "spark.sql.parser.quotedRegexColumnNames"
