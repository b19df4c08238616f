"""Warehouse tables as Spark temporary views, so ``spark.sql("SELECT ... FROM t")`` reads them.

Each table of the current database is a temporary view of the same name over exactly the
files its latest commit holds (the same DataFrame as ``Warehouse.table``, so Spark prunes
partitions from a WHERE on the partition columns in memory). Spark cannot ask hivepark for a
table while it resolves a name, so the views are kept current instead: after every statement
that may change a table (and at connect(), after ``Warehouse.insert`` and on
``Warehouse.refresh_views()``), one metastore query gives each table's (uid, version); a view
whose table changed is rebuilt, one whose table is gone is dropped. A storage handler's table
is rebuilt when its handler's :meth:`~StorageHandler.state` changes too (an Iceberg snapshot).
A view whose table's files did not change is kept; one whose table changed a few partitions'
files is patched: the previous view without those partitions, and those partitions read from
their files alone (:func:`_patched`), so Spark lists the files of what changed, not of the table.

A hivepark view (CREATE VIEW) of the current database is a temporary view too, of the rows
``Warehouse.table(view)`` gives. Where every table it reads (through other views too) is a
table of the current database, it is Spark SQL over those tables' own views, by name
(:func:`_view_text`): Spark resolves it whenever it is read, so a commit costs the view
nothing (Spark prunes the tables' partitions by the view's filters, as for a table's view);
it is made again only when the view, or a view it reads, changes. Otherwise (a table of another
database) it is the view's query planned by hivepark on the latest commits of what it reads,
rebuilt when any of them changes (:func:`_reads`), without runtime (map-join) pruning, so
that bringing the views up to date never runs a Spark job.

Spark's temporary views belong to the SparkSession; a registry (exec/spark_registry.py) records which views
hivepark made, so a temporary view of the user's with a table's name is never replaced (it
hides the table from ``spark.sql``, and is left alone). Several warehouses in one session:
the one that synced last owns a name. ``hivepark.spark.views=false`` turns all of it off
(the CLI does: nobody can reach its session's ``spark.sql``).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from hivepark.catalog.models import Partition, Table
from hivepark.errors import NoSuchDatabase, NoSuchTable
from hivepark.exec.spark_registry import LOCK, MADE
from hivepark.lru import Lru
from hivepark.storage import fs
from hivepark.storage.commit import current_files
from hivepark.storage.handlers import handler_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hivepark.exec.context import Context
    from hivepark.plan.nodes import TableScan

SETTING = "hivepark.spark.views"


class SparkViewWarning(UserWarning):
    """A table's or view's Spark view could not be built (a recorded file is missing or
    unreadable, a table the view reads is gone): the statement that ran succeeded; spark.sql
    does not see the table or view until it is fixed."""



def enabled(ctx: Context) -> bool:
    return (ctx.conf.get(SETTING) or "true").strip().lower() != "false"


def sync(ctx: Context, relist: bool = False) -> None:
    """Makes the session's views match the current database's tables as committed now.
    ``relist`` (``Warehouse.refresh_views``): a table's view that reads a directory whole (a
    partition added with a LOCATION, an external table's directory: the metastore records no
    files for it) is built again where that directory holds other files than when it was built,
    even at the same version (another tool wrote there); only such directories are listed."""
    with LOCK:
        made = MADE.setdefault(ctx.spark, {})
        mine = {name for name, (owner, _) in made.items() if owner == id(ctx)}
        if not enabled(ctx):
            _drop(ctx.spark, made, mine)
            return
        try:
            versions = ctx.catalog.table_versions(ctx.current_db)
        except NoSuchDatabase:  # the current database was dropped
            versions = {}
        _drop(ctx.spark, made, {n for n in mine if n not in versions})
        by_db = {ctx.current_db: versions}

        def versions_of(db: str) -> dict[str, tuple[str, int]]:  # each database's read once a sync
            if db not in by_db:
                try:
                    by_db[db] = ctx.catalog.table_versions(db)
                except NoSuchDatabase:
                    by_db[db] = {}
            return by_db[db]

        views = [(name, version) for name, version in sorted(versions.items())
                 if _refresh(ctx, made, name, version, versions_of, views=False, relist=relist)]
        for name, version in views:  # after the tables: a view may read their Spark views by name
            _refresh(ctx, made, name, version, versions_of, views=True)


def drop_all(ctx: Context) -> None:
    """Removes this warehouse's views (Warehouse.close)."""
    with LOCK:
        made = MADE.get(ctx.spark, {})
        _drop(ctx.spark, made, {n for n, (owner, _) in made.items() if owner == id(ctx)})


def _refresh(ctx: Context, made: dict[str, tuple[int, object]], name: str,
             version: tuple[str, int], versions_of: Callable[[str], dict[str, tuple[str, int]]],
             views: bool, relist: bool = False) -> bool:
    """Brings the Spark view of ``name`` up to date if it is a table (``views``: a view);
    True for a view left for the pass over views. ``relist``: see :func:`sync`."""
    from hivepark.exec.scan import read_inputs, scan_dataframe
    from hivepark.plan.nodes import TableScan
    from hivepark.plan.planner import plan_scans

    known = made.get(name)
    if relist and not views and known is not None and _listing_moved(ctx, name):
        known = (known[0], ("listed again", known[1]))  # built again whole, below
    if known is not None and known[0] == id(ctx) and known[1] == (ctx.current_db, version, None):
        return False  # unchanged, and not a table whose handler's state moves on its own
    if known is None and not _is_identifier(name):
        return False  # a name Spark cannot take unquoted (made before CREATE TABLE refused such names)
    if known is None and ctx.spark.catalog.tableExists(name):
        return False  # the user's own view (or a Spark table) of that name: never replaced
    table = _table_at(ctx, ctx.current_db, name, version, fresh=True)
    if table is None:  # dropped since the versions were read: the next sync drops the view
        return False
    if table.is_view != views:
        return table.is_view
    by_name = False
    try:  # a storage handler's state is a load of its metadata (an Iceberg table's), which may fail
        if table.is_view:
            reads = _reads(ctx, table, versions_of)
            by_name = _tables_by_name(ctx, reads)
            token: object = _view_token(ctx, version, reads, by_name)
        else:
            handler = handler_for(table)
            token = (ctx.current_db, version, handler.state(table) if handler is not None else None)
    except Exception as e:  # noqa: BLE001 - the statement that ran succeeded: never fail it here
        token = (ctx.current_db, version, "no state")
        if known != (id(ctx), ("unreadable", token)):
            _unreadable(ctx, made, name, table, token, e)
        return False
    if known in ((id(ctx), token), (id(ctx), ("unreadable", token))):
        return False  # current, or found unreadable at this same version (warned once)
    try:
        text = _view_text(ctx, table) if by_name else None
        if text is not None:  # resolved by Spark when read: follows its tables' views by itself
            ctx.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS {text}")
            made[name] = (id(ctx), token)
            _built_from(ctx.spark).pop(name, None)
            return False
        if by_name:  # rare (see _view_text): planned now, so rebuilt when a table it reads commits
            token = _view_token(ctx, version, reads, False)
        inputs = None
        patches = 0
        listed: tuple[Any, ...] = ()
        zone = ctx.spark.conf.get("spark.sql.session.timeZone") or "UTC"
        if table.is_view:
            df = _view_dataframe(ctx, table)
        else:
            plan = plan_scans([TableScan(table, table.name)], ctx.catalog)
            scan = plan.scans[0]
            inputs = read_inputs(scan) if handler_for(table) is None else None
            listed = _listing(_whole_dirs(table, scan))
            own = inputs is not None and _own_table_view(ctx, known, name)
            if own and _built_from(ctx.spark)[name].inputs == inputs and fs.all_exist(_recorded_files(scan.partitions)):
                made[name] = (id(ctx), token)  # the same files read the same way: the same rows
                return False
            patched = _patched(ctx, name, table, scan, inputs, zone) if own else None
            if patched is not None:
                df, patches = patched
            else:  # its own DataFrame, not the warm whole-table frames hivepark's queries share
                # (exec/scan.TableFrames): building a view never changes what a query plans
                df = scan_dataframe(ctx.spark, scan, settings=ctx.conf)
        (df if table.is_view else _wall_clock(df, table, zone)).createOrReplaceTempView(name)
    except Exception as e:  # noqa: BLE001 - the statement that ran succeeded: never fail it here
        _unreadable(ctx, made, name, table, token, e)
        return False
    made[name] = (id(ctx), token)
    _built_from(ctx.spark)[name] = _Built(id(ctx), inputs, df if inputs is not None else None, patches, listed, zone)
    return False


@dataclasses.dataclass(frozen=True, eq=False)
class _Built:
    """What a table's Spark view was built from: the warehouse that built it, what it reads
    (exec/scan.read_inputs, None if not known), its DataFrame (when that is known) and how
    many patches it carries; the directories it reads whole with their files as listed before
    it was built (:func:`_whole_dirs`), and the session time zone it was built in (Spark's
    partition discovery read a TIMESTAMP partition's value in it: :func:`_wall_clock`)."""

    owner: int
    inputs: object
    df: DataFrame | None = None
    patches: int = 0
    listed: tuple[Any, ...] = ()
    zone: str = "UTC"


def _whole_dirs(table: Table, scan: TableScan) -> list[str]:
    """The directories a table's view reads whole, Spark listing them when it is built: a
    partition (or an unpartitioned table) whose files the metastore does not record (ADD
    PARTITION ... LOCATION, an external table over a directory). None for a table whose
    partitions all record their files: nothing to list again."""
    from hivepark.storage.commit import FILES_PARAM

    if handler_for(table) is not None:
        return []
    if not table.is_partitioned:
        return [table.location] if FILES_PARAM not in table.properties else []
    return [p.location for p in scan.partitions or () if p.files is None]


def _listing(dirs: list[str]) -> tuple[Any, ...]:
    """Each directory with its files, sizes and times as listed now."""
    return tuple((d, fs.stamps(d)) for d in dirs)


def _listing_moved(ctx: Context, name: str) -> bool:
    """Whether a directory the table's view reads whole holds other files now than when the
    view was built (another tool wrote there): Spark's listing in the view is of that moment."""
    built = _built_from(ctx.spark).get(name)
    if built is None or built.owner != id(ctx) or not built.listed:
        return False
    return _listing([d for d, _ in built.listed]) != built.listed


def _wall_clock(df: DataFrame, table: Table, zone: str) -> DataFrame:
    """The table's view of ``df``, whose TIMESTAMP partition columns Spark read as wall-clock
    times of session time zone ``zone``, as wall-clock times of the session's zone whenever
    it is read (as Hive's timestamps and ``wh.sql``: ``2024-01-05 10:00:00`` reads the same in
    every zone). ``current_timezone()`` is fixed when a query is planned, not when the view
    was made; the expressions name zones, so Spark still prunes partitions by them."""
    stamps = {k.name for k in table.partition_keys if k.hive_type.kind == "timestamp"}
    if not stamps:
        return df
    from hivepark.expr.visitors import render_literal
    from hivepark.storage.formats import sql_name

    zone_sql = render_literal(zone)
    return df.selectExpr(*[
        f"to_utc_timestamp(from_utc_timestamp({sql_name(c)}, {zone_sql}), current_timezone()) AS {sql_name(c)}"
        if c in stamps else sql_name(c) for c in df.columns])


def _own_table_view(ctx: Context, known: tuple[int, object] | None, name: str) -> bool:
    """Whether the table's Spark view was made by this warehouse, in this database, from
    files whose inputs are known (:class:`_Built`), and is still there."""
    if known is None or known[0] != id(ctx) or not isinstance(known[1], tuple) or len(known[1]) != 3 \
            or known[1][0] != ctx.current_db or known[1][2] is not None:
        return False
    built = _built_from(ctx.spark).get(name)
    return built is not None and built.owner == id(ctx) and built.inputs is not None \
        and bool(ctx.spark.catalog.tableExists(name))


def _patched(ctx: Context, name: str, table: Table, scan: TableScan,
             inputs: Any, zone: str) -> tuple[DataFrame, int] | None:
    """The table's new Spark view as its previous one patched (exec/scan.patched: the
    partitions whose files changed taken out, those read from their own files), or None
    (build it from all its files): only where the table is read the same way (no schema or
    format change, the same table, the same session time zone), at most PATCHES times in a row, and while every recorded
    file of the partitions it keeps is still there (a whole build would warn of a missing one)."""
    from hivepark.exec.scan import PATCHES, patched, scan_dataframe

    built = _built_from(ctx.spark)[name]
    before = built.inputs
    if built.df is None or built.patches >= PATCHES or not isinstance(before, tuple) or before[:3] != inputs[:3] \
            or built.zone != zone:
        return None
    old = {entry[0]: entry[1:] for entry in before[3]}
    new = {entry[0]: entry[1:] for entry in inputs[3]}
    kept = [p for p in scan.partitions or () if p.values in new and old.get(p.values) == new[p.values]]
    if not fs.all_exist(_recorded_files(kept)):
        return None

    def read(values: set[tuple[str | None, ...]]) -> DataFrame:
        parts = tuple(p for p in scan.partitions or () if p.values in values)
        return scan_dataframe(ctx.spark, dataclasses.replace(scan, partitions=parts), settings=ctx.conf)

    df = patched(built.df, table.partition_keys, old, new, read)
    return (df, built.patches + 1) if df is not None else None


def _recorded_files(parts: Iterable[Partition] | None) -> list[str]:
    """The paths of the files the metastore records for ``parts`` (none for a listed one)."""
    return [path for p in parts or () if p.files for path in current_files(p.location, p.files)]


#: per SparkSession: a table's Spark view name -> what it was built from
_INPUTS: weakref.WeakKeyDictionary[SparkSession, dict[str, _Built]] = weakref.WeakKeyDictionary()


def _built_from(spark: SparkSession) -> dict[str, _Built]:
    return _INPUTS.setdefault(spark, {})


def _unreadable(ctx: Context, made: dict[str, tuple[int, object]], name: str, table: Table, token: object,
                e: Exception) -> None:
    """The Spark view of ``name`` cannot be built: dropped (an old one would read old files),
    recorded as unreadable at ``token`` (warned once), and a :class:`SparkViewWarning`."""
    from hivepark.exec.failures import translate

    ctx.spark.catalog.dropTempView(name)
    made[name] = (id(ctx), ("unreadable", token))
    _built_from(ctx.spark).pop(name, None)
    kind = "view" if table.is_view else "table"
    warnings.warn(f"spark.sql cannot read {kind} {table.qualified_name} until this is fixed: "
                  f"{translate(e, ctx)}", SparkViewWarning, stacklevel=3)


def _is_identifier(name: str) -> bool:
    """A name Spark's catalog takes as a view's (``tableExists``, ``createOrReplaceTempView``)."""
    return bool(_IDENTIFIER.fullmatch(name))


_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")


#: what a view's Spark view is planned with: no Spark job while the views are brought up to date
#: (Spark's own dynamic partition pruning still prunes its joins when spark.sql reads it), and
#: none of Hive's strict-mode refusals, which are for queries, not for a view's whole rows
_VIEW_SETTINGS = {"hive.optimize.mapjoin.partition.pruning": "false", "hive.mapred.mode": "nonstrict",
                  "hive.strict.checks.no.partition.filter": "false",
                  "hive.strict.checks.orderby.no.limit": "false",
                  "hive.strict.checks.cartesian.product": "false",
                  "hive.strict.checks.type.safety": "false"}


def _view_text(ctx: Context, view: Table) -> str | None:
    """A view's query as Spark SQL over its tables' Spark views (each reference to a table
    becomes the table's name in the current database), for a Spark temporary view that Spark
    resolves each time it is read, so a commit to a table it reads needs no rebuild: its
    table's view is rebuilt, and the view reads it by name. None where the text needs what only
    a query run by hivepark sets up (TABLESAMPLE by Hive's hash through a Python function)."""
    from hivepark.sql.rewrite import SAMPLE_FUNCTION, analyze, spark_sql
    from hivepark.sql.views import expand

    with ctx.same_tables():
        analysis = analyze(expand(_all_rows(view), ctx.find_view), ctx.find)
    if any(site.table.db != ctx.current_db or site.table.is_view for site in analysis.sites):
        return None  # another database's table (or an Iceberg metadata table): no Spark view
    text = spark_sql(analysis, [site.table.name for site in analysis.sites], [False] * len(analysis.sites))
    return None if SAMPLE_FUNCTION in text else text


#: a table or view a view reads: (db, name, its (uid, version), its metastore row); None, None: missing
Read = tuple[str, str, tuple[str, int] | None, Table | None]


def _view_token(ctx: Context, version: tuple[str, int], reads: tuple[Read, ...], by_name: bool) -> object:
    """What a view's Spark view was built from: the view's version, and what it reads (for a
    view reading its tables by name, a table's identity and whether its own Spark view could be
    built: that view follows the table's commits, and Spark resolves the view over it; else each
    one's version and, for a storage handler's table, its state, read only then: an Iceberg
    table's state is a load of its metadata, and the session time zone)."""
    made = MADE.get(ctx.spark, {})

    def readable(name: str) -> bool:
        known = made.get(name)
        return known is not None and not (isinstance(known[1], tuple) and known[1][:1] == ("unreadable",))

    def state(table: Table | None) -> object:
        handler = handler_for(table) if table is not None and not table.is_view else None
        return handler.state(table) if handler is not None and table is not None else None

    # planned by hivepark: its TIMESTAMP partition values were read in the session time zone of then
    zone = None if by_name else ctx.spark.conf.get("spark.sql.session.timeZone")
    return (ctx.current_db, version, by_name, zone,
            tuple((db, n, (v[0] if v else None), readable(n)) if by_name and not (t is not None and t.is_view)
                  else (db, n, v, state(t)) for db, n, v, t in reads))


def _tables_by_name(ctx: Context, reads: tuple[Read, ...]) -> bool:
    """Whether every table a view reads is in the current database with a Spark view of
    hivepark's (not hidden by a temporary view of the user's), so the view can read them by
    name (:func:`_view_text`)."""
    if (ctx.conf.get("hive.support.quoted.identifiers") or "column").strip().lower() == "none":
        return False  # Hive's regular-expression column names: Spark's own switch, set per query
    made = MADE.get(ctx.spark, {})
    for db, name, version, table in reads:
        if table is not None and table.is_view:
            continue
        if db != ctx.current_db or version is None:
            return False
        if name not in made and ctx.spark.catalog.tableExists(name):
            return False
    return True


def _view_dataframe(ctx: Context, view: Table) -> DataFrame:
    """A hivepark view's rows as ``wh.table(view)`` gives them, planned now: each table it
    reads (through other views too) on its latest commit, pruned by the view's own filters."""
    from hivepark.config import Config
    from hivepark.exec.query import run_query

    conf = Config()
    for key, value in [*ctx.conf.items(), *_VIEW_SETTINGS.items()]:
        conf.set(key, value)
    return run_query(dataclasses.replace(ctx, conf=conf), _all_rows(view))[0]


def _all_rows(view: Table) -> Any:
    """``SELECT * FROM db.view`` as a query tree (what ``Warehouse.table(view)`` runs)."""
    from hivepark.sql.parser import parse_one
    from hivepark.sql.statements import Query

    query = parse_one(f"SELECT * FROM `{view.db}`.`{view.name}`").statement
    assert isinstance(query, Query)
    return query.tree


#: tables and views by (db, name, uid, version): a view and what it reads are found without a
#: metastore query per sync unless one of them changed
_TABLES: Lru[Table] = Lru(512, lambda _: 1)


def _table_at(ctx: Context, db: str, name: str, version: tuple[str, int],
              fresh: bool = False) -> Table | None:
    """Table ``db.name`` as it is at ``version`` (its uid and version); None if it is gone.
    ``fresh``: a table (not a view) is read from the metastore again (a storage handler's
    properties may move on with its own commits)."""
    key = (db, name, *version)
    table = _TABLES.get(key)
    if table is not None and (table.is_view or not fresh):
        return table
    try:
        table = ctx.catalog.get_table(db, name)
    except (NoSuchTable, NoSuchDatabase):
        return None
    if (table.uid, table.version) == version:  # not a later one (read after the versions)
        _TABLES.put(key, table)
    return table


def _reads(ctx: Context, view: Table, versions_of: Callable[[str], dict[str, tuple[str, int]]]
           ) -> tuple[Read, ...]:
    """Each table and view ``view`` reads, directly or through views."""
    from hivepark.sql import views as sql_views

    def find(db: str | None, name: str) -> Table | None:
        db, name = (db or ctx.current_db).lower(), name.lower()
        version = versions_of(db).get(name)
        table = _table_at(ctx, db, name, version) if version is not None else None
        return table if table is not None and table.is_view else None

    def read(db: str, name: str) -> Read:
        version = versions_of(db).get(name)
        table = _table_at(ctx, db, name, version) if version is not None else None
        return (db, name, version, table) if table is not None else (db, name, None, None)

    found = {((db or ctx.current_db).lower(), name) for db, name in sql_views.view_dependencies(view, find)}
    return tuple(read(db, name) for db, name in sorted(found))


def _drop(spark: SparkSession, made: dict[str, tuple[int, object]], names: set[str]) -> None:
    for name in names:
        spark.catalog.dropTempView(name)
        made.pop(name, None)
        _built_from(spark).pop(name, None)
