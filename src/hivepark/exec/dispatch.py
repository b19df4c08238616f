"""Runs one statement against a Context: each statement kind to the function that runs it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pyspark.sql import DataFrame

from hivepark.errors import CommitConflict, DataFileError
from hivepark.exec import column_stats, describe, skew_stats, spark_views, tables, views, write
from hivepark.exec.context import Context
from hivepark.exec.failures import translated
from hivepark.exec.query import describe_handler_scans, plan_query, resolve, run_query
from hivepark.plan.explain import render
from hivepark.plan.nodes import HandlerScan, QueryPlan
from hivepark.sql import statements as s
from hivepark.sql.parser import ParsedStatement


def execute(ctx: Context, stmt: ParsedStatement | s.Statement) -> DataFrame:
    """Runs one statement. Spark's, the JVM's and the file system's failures come out as
    hivepark errors naming the file, the table and the fix (:func:`failures.translate`)."""
    with translated(ctx):
        out = _execute(ctx, stmt)
        statement = stmt.statement if isinstance(stmt, ParsedStatement) else stmt
        if not isinstance(statement, _READ_ONLY):
            _sync_views(ctx)
        return out


def _sync_views(ctx: Context) -> None:
    """spark.sql's views brought up to date after a statement that ran (and committed): a view
    that cannot be (a table's own is warned of in spark_views) never makes it report failure."""
    import warnings

    from hivepark.exec.failures import translate

    try:
        with ctx.handler_scope():
            spark_views.sync(ctx)
    except Exception as e:  # noqa: BLE001 - the statement succeeded
        warnings.warn(f"spark.sql's views of database {ctx.current_db} could not be brought up to date (the "
                      f"statement succeeded; Warehouse.refresh_views() tries again): {translate(e, ctx)}",
                      spark_views.SparkViewWarning, stacklevel=3)


# Statements that change no table: no need to bring spark.sql's views up to date after them.
_READ_ONLY = (s.Query, s.Explain, s.ShowDatabases, s.ShowTables, s.ShowTableExtended, s.ShowConf, s.ShowPartitions,
              s.ShowCreateTable, s.ShowTblProperties, s.ShowColumns, s.ShowFunctions, s.Describe, s.DescribeFunction,
              s.InsertDirectory, s.DescribeDatabase)


def _execute(ctx: Context, stmt: ParsedStatement | s.Statement) -> DataFrame:
    statement = stmt.statement if isinstance(stmt, ParsedStatement) else stmt
    if isinstance(statement, s.Failed):
        statement.throw()
    with ctx.handler_scope():
        if isinstance(statement, s.Query):
            return run_query(ctx, statement.tree)[0]
        if isinstance(statement, s.Explain):
            return ctx.rows(["plan"], [(line,) for line in explain(ctx, statement).splitlines()])
        run = _HANDLERS[type(statement)]
        for attempt in range(REPLANS + 1):
            try:
                return run(ctx, statement)
            except Exception as e:
                if not (isinstance(statement, _REPLANNED) and attempt < REPLANS
                        and (read_a_replaced_file(e) or isinstance(e, CommitConflict))):
                    raise
        raise AssertionError("unreachable")


# A write whose Spark job read a file that a concurrent INSERT OVERWRITE replaced after this
# statement planned, or whose commit met another statement's in a way a commit cannot re-plan
# (CommitConflict: its query read the table, the table was created again or altered, a partition
# moved), runs again from its text on the table as it now is, up to REPLANS times: its writer
# rolled back, so nothing of the failed run is left, and the new run reads what the other wrote.
REPLANS = 3
_REPLANNED = (s.Insert, s.CreateTable)  # one commit each: a failed run left nothing


def read_a_replaced_file(e: BaseException) -> bool:
    """Whether Spark failed because a file it planned to read is gone (replaced by a
    concurrent commit): ``FILE_NOT_EXIST`` when a task opens it, ``PATH_NOT_FOUND`` when the
    scan is built."""
    if isinstance(e, DataFileError):
        return e.reason == "missing"
    text = str(e)
    return any(m in text for m in ("FILE_NOT_EXIST", "PATH_NOT_FOUND", "FileNotFoundException"))


_HANDLERS: dict[type, Callable[[Context, Any], DataFrame]] = {
    s.Set: describe.set_command,
    s.Reset: describe.reset_command,
    s.CreateMacro: describe.create_macro,
    s.DropMacro: describe.drop_macro,
    s.CreateDatabase: tables.create_database,
    s.AlterDatabase: tables.alter_database,
    s.DescribeDatabase: describe.describe_database,
    s.DropDatabase: tables.drop_database,
    s.Use: tables.use,
    s.CreateTable: tables.create_table_statement,
    s.CreateView: views.create_view,
    s.DropTable: tables.drop_table,
    s.TruncateTable: tables.truncate_table,
    s.AlterTable: lambda ctx, stmt: (views.alter_view if stmt.view else tables.alter_table)(ctx, stmt),
    s.MsckRepair: tables.msck_repair,
    s.Insert: write.insert,
    s.InsertDirectory: write.insert_directory,
    s.MultiInsert: write.multi_insert,
    s.LoadData: write.load_data,
    s.ShowDatabases: describe.show_databases,
    s.ShowTables: describe.show_tables,
    s.ShowTableExtended: describe.show_table_extended,
    s.ShowConf: describe.show_conf,
    s.ShowPartitions: describe.show_partitions,
    s.ShowCreateTable: describe.show_create_table,
    s.ShowTblProperties: describe.show_tblproperties,
    s.ShowColumns: describe.show_columns,
    s.ShowFunctions: describe.show_functions,
    s.DescribeFunction: describe.describe_function,
    s.Describe: describe.describe,
    s.AnalyzeSkew: skew_stats.analyze,
    s.AnalyzeColumns: column_stats.analyze_columns,
    s.AnalyzeStatistics: tables.analyze_statistics,
}


def _source_rows(plan: QueryPlan, dfs: list[DataFrame]) -> QueryPlan:
    """Each handler scan's facts with the rows its source returned (a count of its read)."""
    scans = []
    for scan, df in zip(plan.scans, dfs):
        if scan.pushdown is not None:
            rows = df.count()
            scan = scan.evolve(facts=tuple(replace(f, rows=rows) if isinstance(f, HandlerScan) else f
                                           for f in scan.facts))
        scans.append(scan)
    return plan.evolve(scans=tuple(scans))


def explain(ctx: Context, stmt: s.Explain) -> str:
    """EXPLAIN text: the scans hivepark chose. ANALYZE also runs the small sides of runtime
    pruning and shows its result; EXTENDED also shows Spark's physical plan."""
    with translated(ctx), ctx.handler_scope():
        return _explain(ctx, stmt)


def _explain(ctx: Context, stmt: s.Explain) -> str:
    tree = stmt.query.tree
    style = stmt.style or ""
    max_dirs = ctx.conf.get_int("hivepark.explain.max.directories")
    if style in ("EXTENDED", "FORMATTED"):
        df, plan = run_query(ctx, tree)
        spark_plan = df._jdf.queryExecution().executedPlan().toString()
        return render(describe_handler_scans(plan), spark_plan=spark_plan, max_dirs=max_dirs, extended=True)
    planned = plan_query(ctx, tree)
    if style == "DEPENDENCY":
        return describe.dependencies(ctx, tree, planned.plan)
    if style == "ANALYZE":
        plan, dfs = resolve(ctx, planned)
        return render(_source_rows(describe_handler_scans(plan), dfs), max_dirs=max_dirs, analyzed=True)
    return render(describe_handler_scans(planned.plan), max_dirs=max_dirs)
