"""ANALYZE TABLE t [PARTITION (...)] COMPUTE SKEW FOR COLUMNS: how skewed a table's
columns are (the list-bucketing metadata itself is in :mod:`hivepark.catalog.skew`)."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from hivepark import layout
from hivepark.catalog.skew import SKEW_AUTO_TOPK
from hivepark.exec.context import Context
from hivepark.exec.scan import scan_dataframe
from hivepark.expr import AlwaysTrue
from hivepark.plan.nodes import TableScan
from hivepark.plan.planner import plan_scans
from hivepark.sql.statements import AnalyzeSkew
from hivepark.sql.validate import check_skew_columns, spec_filter


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
    df = scan_dataframe(ctx.spark, scan)
    keys = list(table.partition_key_names())
    k = int(table.properties.get(SKEW_AUTO_TOPK) or 0) or 10
    counted = df.groupBy(*[F.col(f"`{c}`") for c in keys + cols]).agg(
        F.count(F.lit(1)).alias("num_rows"))
    by_part = Window.partitionBy(*[F.col(f"`{c}`") for c in keys])
    ranked = counted.withColumn("share", F.col("num_rows") / F.sum("num_rows").over(by_part)) \
        .withColumn("rank", F.row_number().over(by_part.orderBy(
            F.desc("num_rows"), *[F.col(f"`{c}`") for c in cols]))) \
        .where(F.col("rank") <= k)
    name = F.concat_ws("/", *[F.concat(F.lit(f"{c}="), F.coalesce(
        F.col(f"`{c}`").cast("string"), F.lit(layout.DEFAULT_PARTITION_NAME))) for c in keys]) \
        if keys else F.lit("")
    value = F.concat(F.lit("["), F.concat_ws(", ", *[F.coalesce(
        F.col(f"`{c}`").cast("string"), F.lit("NULL")) for c in cols]), F.lit("]"))
    return ranked.select(name.alias("partition"), "rank", value.alias("skewed_value"),
                         "num_rows", F.round("share", 4).alias("share")) \
        .orderBy("partition", "rank")
