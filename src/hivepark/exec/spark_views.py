"""Warehouse tables as Spark temporary views, so ``spark.sql("SELECT ... FROM t")`` reads them.

Each table of the current database is a temporary view of the same name over exactly the
files its latest commit holds (the same DataFrame as ``Warehouse.table``, so Spark prunes
partitions from a WHERE on the partition columns in memory). Spark cannot ask hivepark for a
table while it resolves a name, so the views are kept current instead: after every statement
that may change a table (and at connect(), after ``Warehouse.insert`` and on
``Warehouse.refresh_views()``), one metastore query gives each table's (uid, version); a view
whose table changed is rebuilt, one whose table is gone is dropped. A storage handler's table
is rebuilt when its handler's :meth:`~StorageHandler.state` changes too (an Iceberg snapshot).

Spark's temporary views belong to the SparkSession; the registry below records which views
hivepark made, so a temporary view of the user's with a table's name is never replaced (it
hides the table from ``spark.sql``, and is left alone). Several warehouses in one session:
the one that synced last owns a name. ``hivepark.spark.views=false`` turns all of it off
(the CLI does: nobody can reach its session's ``spark.sql``).
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import TYPE_CHECKING

from hivepark.errors import NoSuchDatabase, NoSuchTable
from hivepark.storage.handlers import handler_for

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hivepark.exec.context import Context

SETTING = "hivepark.spark.views"


class SparkViewWarning(UserWarning):
    """A table's Spark view could not be built (a recorded file is missing or unreadable): the
    statement that ran succeeded; spark.sql does not see the table until it is fixed."""

# Per SparkSession: view name -> (owner registry id, token). Only hivepark's views are here.
_MADE: weakref.WeakKeyDictionary[SparkSession, dict[str, tuple[int, object]]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def enabled(ctx: Context) -> bool:
    return (ctx.conf.get(SETTING) or "true").strip().lower() != "false"


def sync(ctx: Context) -> None:
    """Makes the session's views match the current database's tables as committed now."""
    with _LOCK:
        made = _MADE.setdefault(ctx.spark, {})
        mine = {name for name, (owner, _) in made.items() if owner == id(ctx)}
        if not enabled(ctx):
            _drop(ctx.spark, made, mine)
            return
        try:
            versions = ctx.catalog.table_versions(ctx.current_db)
        except NoSuchDatabase:  # the current database was dropped
            versions = {}
        _drop(ctx.spark, made, {n for n in mine if n not in versions})
        for name, version in sorted(versions.items()):
            _refresh(ctx, made, name, version)


def made_by_hivepark(spark: SparkSession, name: str) -> bool:
    """Whether the session's temporary view ``name`` is one of hivepark's table views."""
    return name.lower() in _MADE.get(spark, {})


def drop_all(ctx: Context) -> None:
    """Removes this warehouse's views (Warehouse.close)."""
    with _LOCK:
        made = _MADE.get(ctx.spark, {})
        _drop(ctx.spark, made, {n for n, (owner, _) in made.items() if owner == id(ctx)})


def _refresh(ctx: Context, made: dict[str, tuple[int, object]], name: str,
             version: tuple[str, int]) -> None:
    from hivepark.exec.scan import scan_dataframe
    from hivepark.plan.nodes import TableScan
    from hivepark.plan.planner import plan_scans

    known = made.get(name)
    if known is not None and known[0] == id(ctx) and known[1] == (ctx.current_db, version, None):
        return  # unchanged, and not a table whose handler's state moves on its own
    if known is None and ctx.spark.catalog.tableExists(name):
        return  # the user's own view (or a Spark table) of that name: never replaced
    try:
        table = ctx.catalog.get_table(ctx.current_db, name)
    except NoSuchTable:  # dropped since the versions were read: the next sync drops the view
        return
    if table.is_view:  # read through hivepark (wh.sql, wh.table): no Spark view of its own, and
        if known is not None and known[0] == id(ctx):  # none left of a table of that name
            _drop(ctx.spark, made, {name})
        return
    handler = handler_for(table)
    token = (ctx.current_db, version, handler.state(table) if handler is not None else None)
    if known in ((id(ctx), token), (id(ctx), ("unreadable", token))):
        return  # current, or found unreadable at this same version (warned once)
    try:
        plan = plan_scans([TableScan(table, table.name)], ctx.catalog)
        # its own DataFrame, not the warm whole-table frames hivepark's queries share
        # (exec/scan.TableFrames): building a view never changes what a query plans
        df = scan_dataframe(ctx.spark, plan.scans[0], settings=ctx.conf)
    except Exception as e:  # noqa: BLE001 - the statement that ran succeeded: never fail it here
        from hivepark.exec.failures import translate

        ctx.spark.catalog.dropTempView(name)  # an old view would read the old files
        made[name] = (id(ctx), ("unreadable", token))
        warnings.warn(f"spark.sql cannot read table {table.qualified_name} until this is fixed: "
                      f"{translate(e, ctx)}", SparkViewWarning, stacklevel=2)
        return
    df.createOrReplaceTempView(name)
    made[name] = (id(ctx), token)


def _drop(spark: SparkSession, made: dict[str, tuple[int, object]], names: set[str]) -> None:
    for name in names:
        spark.catalog.dropTempView(name)
        made.pop(name, None)
