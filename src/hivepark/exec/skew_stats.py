"""ANALYZE TABLE t [PARTITION (...)] COMPUTE SKEW FOR COLUMNS: how skewed a table's
columns are (the list-bucketing metadata itself is in :mod:`hivepark.catalog.skew`)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hivepark import layout
from hivepark.catalog.skew import SKEW_AUTO_TOPK
from hivepark.exec.context import Context
from hivepark.exec.scan import scan_dataframe
from hivepark.expr import AlwaysTrue
from hivepark.expr.visitors import render_literal
from hivepark.plan.nodes import TableScan
from hivepark.plan.planner import plan_scans
from hivepark.sql.statements import AnalyzeSkew
from hivepark.sql.validate import check_skew_columns, exactly, spec_filter
from hivepark.storage.formats import sql_name


def analyze(ctx: Context, stmt: AnalyzeSkew) -> DataFrame:
    """ANALYZE TABLE t [PARTITION (...)] COMPUTE SKEW FOR COLUMNS c[, ...]: per partition,
    the heaviest values of the columns and their share of the partition's rows (the K of
    ``hivepark.skew.auto.topk``, else 10), computed by one Spark aggregation."""
    table = ctx.table(stmt.table, for_view="ANALYZE is not supported for views", code=10091)
    cols = list(stmt.columns)
    check_skew_columns(table, stmt.columns)
    pred = spec_filter(table, stmt.partition) if stmt.partition else None
    scan = plan_scans([TableScan(table, table.name, pred or AlwaysTrue())],
                      ctx.catalog).scans[0]
    if pred is not None and scan.partitions is not None:  # the metastore's answer may keep more
        scan = scan.evolve(partitions=tuple(exactly(table, pred, scan.partitions)))
    df = scan_dataframe(ctx.spark, scan)
    keys = list(table.partition_key_names())
    k = int(table.properties.get(SKEW_AUTO_TOPK) or 0) or 10
    # Spark SQL text: a few calls into Spark, where Columns took several per operation
    q = [sql_name(c) for c in keys]
    v = [sql_name(c) for c in cols]
    over = f"PARTITION BY {', '.join(q)}" if keys else ""
    ranked = (df.groupBy(*[F.col(c) for c in q + v]).agg(F.expr("count(1) AS num_rows"))
              .selectExpr("*", f"num_rows / sum(num_rows) OVER ({over}) AS share",
                          f"row_number() OVER ({over} ORDER BY num_rows DESC, {', '.join(v)}) AS rank")
              .where(f"rank <= {k}"))
    default = render_literal(layout.DEFAULT_PARTITION_NAME)
    name = ("concat_ws('/', " + ", ".join(
        f"concat({render_literal(c + '=')}, coalesce(CAST({n} AS STRING), {default}))" for c, n in zip(keys, q))
        + ")") if keys else "''"
    value = "concat('[', concat_ws(', ', " + ", ".join(f"coalesce(CAST({n} AS STRING), 'NULL')" for n in v) + "), ']')"
    return ranked.selectExpr(f"{name} AS partition", "rank", f"{value} AS skewed_value", "num_rows",
                             "round(share, 4) AS share").orderBy("partition", "rank")
