"""Queries: each warehouse-table reference becomes a pruned Spark scan; Spark SQL runs the
rest of the query (joins, aggregates, windows) unchanged."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from hivepark.catalog.models import Table
from hivepark.errors import DataError, ExecutionError, SemanticError
from hivepark.exec.context import Context
from hivepark.exec.runtime import resolve_runtime
from hivepark.exec.scan import scan_dataframe, scan_size
from hivepark.plan.list_bucketing import prune_list_bucketing
from hivepark.plan.nodes import IN_LIST_MAX, QueryPlan, TableScan
from hivepark.plan.partition_pruning import list_pruned
from hivepark.plan.planner import plan_scans
from hivepark.plan.runtime_pruning import RuntimeSettings, mark_runtime_sources, runtime_candidates
from hivepark.sql.analyzer import ScanSite, analyze_query
from hivepark.storage.formats import spark_literal


@dataclass
class PlannedQuery:
    """A query copy whose table references are known, and the plan for its scans."""

    query: exp.Expression
    sites: list[ScanSite]
    plan: QueryPlan


def plan_query(ctx: Context, query: exp.Expression) -> PlannedQuery:
    """Finds the scans of ``query`` (a copy) and plans them: static pruning, then the
    runtime (map-join) pruning sources, which are resolved only at execution. A scan that
    runtime pruning may narrow is only counted here and listed once, at execution."""
    query = query.copy()
    analysis = analyze_query(query, ctx.lookup)
    sites = analysis.sites
    scans = [TableScan(s.table, s.alias, s.predicate) for s in sites]
    settings = _settings(ctx)
    defer = (runtime_candidates(scans, [s.scope for s in sites], analysis.joins)
             if settings.enabled else set())
    plan = plan_scans(scans, ctx.catalog, defer)
    if analysis.joins:
        small_aliases = {k.small.lower() for _, k in analysis.joins}
        sizes = [scan_size(scan) if scan.alias.lower() in small_aliases else None
                 for scan in plan.scans]
        marked = mark_runtime_sources(plan.scans, [s.scope for s in sites], analysis.joins,
                                      [s.hinted for s in sites], sizes, settings)
        plan = QueryPlan(tuple(marked))
    # listed now: scans no runtime source prunes, and scans another scan's runtime pruning
    # reads as its small side (their partitions are needed before execution narrows them)
    smalls = {src.small for scan in plan.scans for src in scan.runtime}
    plan = QueryPlan(tuple(
        scan if i not in smalls and any(src.big_is_partition_key for src in scan.runtime)
        else prune_list_bucketing(list_pruned(scan, ctx.catalog))
        for i, scan in enumerate(plan.scans)))
    return PlannedQuery(query, sites, plan)


def _settings(ctx: Context) -> RuntimeSettings:
    return RuntimeSettings(
        enabled=ctx.conf.get_bool("hive.optimize.mapjoin.partition.pruning"),
        auto_convert=ctx.conf.get_bool("hive.auto.convert.join"),
        small_table_bytes=ctx.conf.get_int("hive.mapjoin.smalltable.filesize"))


def resolve(ctx: Context, planned: PlannedQuery) -> tuple[QueryPlan, list[DataFrame]]:
    """Runs the small sides that runtime pruning needs, prunes, and returns every scan's
    DataFrame (a small side Spark had to run is cached, so the join reuses it)."""
    ctx.release_cached()
    plan = planned.plan
    frames: dict[int, DataFrame] = {}

    def small_frame(i: int) -> DataFrame:
        if i not in frames:
            frames[i] = ctx.cache(scan_dataframe(ctx.spark, plan.scans[i], ctx.table_frames()))
        return frames[i]

    if any(scan.runtime for scan in plan.scans):
        try:
            plan = resolve_runtime(ctx, plan, planned.sites, small_frame)
        except PySparkException as e:
            raise spark_error(e) from None
    dfs = []
    for i, scan in enumerate(plan.scans):
        df = frames[i] if i in frames else scan_dataframe(ctx.spark, scan, ctx.table_frames())
        for col, values in scan.row_filters:
            df = df.where(in_filter(col, values, scan.table))
        dfs.append(df)
    return plan, dfs


def in_filter(col: str, values: tuple, table: Table) -> Column:
    """The reader filter for a runtime value set: ``col IN (values)`` up to 200 values, and
    beyond that ``col BETWEEN min AND max`` instead (what Parquet and ORC skip row groups
    by; Spark itself turns an IN of over 10 values into that range for Parquet, and Iceberg
    drops IN lists over 200 values altogether). The join keeps only matching rows either
    way; the range costs nothing to parse at 100,000 values. Built as SQL text: one call
    into Spark."""
    typ = next(c.type for c in table.all_columns if c.name == col)
    if not values:
        return F.lit(False)
    if len(values) > IN_LIST_MAX:
        lo, hi = min(values), max(values)
        return F.expr(f"`{col}` BETWEEN {spark_literal(lo, typ)} AND {spark_literal(hi, typ)}")
    return F.expr(f"`{col}` IN ({', '.join(spark_literal(v, typ) for v in values)})")


def run_query(ctx: Context, query: exp.Expression) -> tuple[DataFrame, QueryPlan]:
    """The query's rows as a DataFrame, and the plan that chose what it reads."""
    planned = plan_query(ctx, query)
    plan, dfs = resolve(ctx, planned)
    for site, scan, df in zip(planned.sites, plan.scans, dfs):
        view = ctx.new_view_name()
        df.createOrReplaceTempView(view)
        site.node.replace(exp.Table(this=exp.to_identifier(view),
                                    alias=exp.TableAlias(this=exp.to_identifier(site.alias))))
        if scan.broadcast:
            _add_broadcast_hint(site, scan.alias)
    text = planned.query.sql(dialect="spark")
    try:
        df = ctx.spark.sql(text)
    except PySparkException as e:
        raise spark_error(e) from None
    finally:
        ctx.drop_temp_views()
    return df, plan


def _add_broadcast_hint(site: ScanSite, alias: str) -> None:
    select = site.node.find_ancestor(exp.Select)
    if select is None:
        return
    hint = select.args.get("hint") or exp.Hint(expressions=[])
    hint.append("expressions", exp.Anonymous(this="BROADCAST",
                                             expressions=[exp.to_identifier(alias)]))
    select.set("hint", hint)


def spark_error(e: Exception) -> Exception:
    """Spark's error as a hivepark error: the first line of its message, no JVM trace."""
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    name = type(e).__name__
    if name in ("AnalysisException", "ParseException"):
        return SemanticError(f"{msg}. Check the column and table names in the statement.")
    text = str(e)
    for cls in _DATA_ERRORS:
        if cls in text:
            inner = re.search(r"\[" + cls + r"[^\]]*\][^\n]*", text)
            return DataError(f"{inner.group(0) if inner else msg} Fix the values, or convert "
                             "them explicitly in the SELECT (try_cast returns NULL instead).")
    return ExecutionError(f"Spark failed: {msg}")


_DATA_ERRORS = ("CAST_INVALID_INPUT", "CAST_OVERFLOW", "NUMERIC_VALUE_OUT_OF_RANGE",
                "ARITHMETIC_OVERFLOW", "DIVIDE_BY_ZERO", "INVALID_FRACTION_OF_SECOND")
