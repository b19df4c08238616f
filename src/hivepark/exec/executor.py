"""Runs one parsed statement against a Context."""

from __future__ import annotations

from pyspark.sql import DataFrame
from sqlglot import exp

from hivepark.errors import SemanticError, UnsupportedError
from hivepark.exec import ddl, dml, show, skew
from hivepark.exec.context import Context
from hivepark.exec.query import plan_query, resolve, run_query
from hivepark.plan.explain import render
from hivepark.sql.dialect import Explain, MsckRepair, Show
from hivepark.sql.parser import SetCommand, Statement


def execute(ctx: Context, stmt: Statement) -> DataFrame:
    tree = stmt.tree
    if isinstance(tree, SetCommand):
        return show.set_command(ctx, tree)
    if isinstance(tree, exp.Query):
        return run_query(ctx, tree)[0]
    if isinstance(tree, Explain):
        return ctx.rows(["plan"], [(line,) for line in explain(ctx, tree).splitlines()])
    handler = _HANDLERS.get(type(tree))
    if handler is None:
        raise UnsupportedError(f"{tree.key.upper()} statements are not supported by hivepark")
    return handler(ctx, tree)


def _create(ctx: Context, node: exp.Create) -> DataFrame:
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA"):
        return ddl.create_database(ctx, node)
    if kind == "TABLE":
        return dml.create_table_statement(ctx, node)
    raise UnsupportedError(f"CREATE {kind} is not supported by hivepark")


def _drop(ctx: Context, node: exp.Drop) -> DataFrame:
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA"):
        return ddl.drop_database(ctx, node)
    if kind == "TABLE":
        return ddl.drop_table(ctx, node)
    raise UnsupportedError(f"DROP {kind} is not supported by hivepark")


def _use(ctx: Context, node: exp.Use) -> DataFrame:
    name = node.this.name.lower()
    ctx.catalog.get_database(name)
    ctx.current_db = name
    return ctx.empty()


_HANDLERS = {
    exp.Create: _create,
    exp.Drop: _drop,
    exp.Use: _use,
    exp.Alter: ddl.alter_table,
    exp.Insert: dml.insert,
    exp.MultitableInserts: dml.multi_insert,
    exp.LoadData: dml.load_data,
    MsckRepair: dml.msck_repair,
    Show: show.show,
    exp.Describe: show.describe,
    exp.Analyze: skew.analyze,
}


def explain(ctx: Context, node: Explain) -> str:
    """EXPLAIN text: the scans hivepark chose. ANALYZE also runs the small sides of runtime
    pruning and shows its result; EXTENDED also shows Spark's physical plan."""
    inner = node.this
    style = (node.args.get("extended") or "").upper()
    if isinstance(inner, exp.Insert):
        inner = inner.expression
    elif isinstance(inner, exp.Create) and inner.args.get("expression") is not None:
        inner = inner.args["expression"]
    if not isinstance(inner, exp.Query):
        raise SemanticError("EXPLAIN works on queries (SELECT, INSERT ... SELECT, CREATE TABLE "
                            "AS SELECT)")
    max_dirs = ctx.conf.get_int("hivepark.explain.max.directories")
    if style in ("EXTENDED", "FORMATTED"):
        df, plan = run_query(ctx, inner)
        spark_plan = df._jdf.queryExecution().executedPlan().toString()
        return render(plan, spark_plan=spark_plan, max_dirs=max_dirs, extended=True)
    planned = plan_query(ctx, inner)
    if style == "ANALYZE":
        plan, _ = resolve(ctx, planned)
        return render(plan, max_dirs=max_dirs, analyzed=True)
    return render(planned.plan, max_dirs=max_dirs)
