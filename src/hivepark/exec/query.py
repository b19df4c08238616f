"""Queries: each warehouse-table reference becomes a pruned Spark scan; Spark SQL runs the
rest of the query (joins, aggregates, windows) unchanged."""

from __future__ import annotations

import re

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from sqlglot import exp

from hivepark.errors import DataError, ExecutionError, SemanticError
from hivepark.exec.context import Context
from hivepark.exec.scan import scan_dataframe
from hivepark.plan.nodes import QueryPlan, TableScan
from hivepark.plan.planner import plan_scans
from hivepark.sql.analyzer import find_scans


def plan_query(ctx: Context, query: exp.Expression) -> tuple[exp.Expression, QueryPlan]:
    """Finds the scans of ``query`` (a copy) and plans them."""
    query = query.copy()
    sites = find_scans(query, ctx.lookup)
    scans = [TableScan(s.table, s.alias, s.predicate) for s in sites]
    plan = plan_scans(scans, ctx.catalog)
    return _attach(query, sites), plan


def _attach(query: exp.Expression, sites: list) -> exp.Expression:
    query.meta["hivepark_sites"] = sites
    return query


def run_query(ctx: Context, query: exp.Expression) -> tuple[DataFrame, QueryPlan]:
    """The query's rows as a DataFrame, and the plan that chose what it reads."""
    query, plan = plan_query(ctx, query)
    sites = query.meta.pop("hivepark_sites")
    for site, scan in zip(sites, plan.scans):
        view = ctx.new_view_name()
        scan_dataframe(ctx.spark, scan).createOrReplaceTempView(view)
        site.node.replace(exp.Table(this=exp.to_identifier(view),
                                    alias=exp.TableAlias(this=exp.to_identifier(site.alias))))
    text = query.sql(dialect="spark")
    try:
        df = ctx.spark.sql(text)
    except PySparkException as e:
        raise spark_error(e) from None
    finally:
        ctx.drop_temp_views()
    return df, plan


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
