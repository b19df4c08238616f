"""Views (Hive's VIRTUAL_VIEW): a query kept in the metastore with its columns. CREATE VIEW
and ALTER VIEW ... AS plan the query for its columns and store it; a query that names a view
reads the view's query in its place (``hivepark.sql.views``), so the view's filters, and the
outer query's filters on its columns, prune its tables' partitions as if it had been written
out."""

from __future__ import annotations

from pyspark.sql import DataFrame

from hivepark.catalog.models import VIEW, VIEW_EXPANDED_TEXT, VIEW_ORIGINAL_TEXT, Column, Table
from hivepark.errors import AlreadyExistsError, NoSuchTable, SemanticError
from hivepark.exec.context import Context
from hivepark.exec.locations import check_object_name
from hivepark.exec.query import run_query
from hivepark.exec.tables import alter_properties
from hivepark.sql import statements as s
from hivepark.sql import views


def create_view(ctx: Context, stmt: s.CreateView) -> DataFrame:
    """CREATE VIEW [IF NOT EXISTS] and ALTER VIEW ... AS: the query is planned (its tables
    must exist) for its columns; no Spark job reads a row."""
    db, name = stmt.table.resolve(ctx.current_db)
    if not stmt.alter:
        check_object_name(name, "view")
    ctx.catalog.get_database(db)
    try:
        existing: Table | None = ctx.catalog.get_table(db, name)
    except NoSuchTable:
        existing = None
    if stmt.alter:
        if existing is None:
            raise NoSuchTable(f"Table not found '{db}.{name}': ALTER VIEW changes an existing view. "
                              f"CREATE VIEW {name} AS SELECT ... makes one.")
        if not existing.is_view:
            raise SemanticError("To alter a base table you need to use the ALTER TABLE command: "
                                f"{db}.{name} is a table, not a view", code=10132)
    elif existing is not None and stmt.replace and not existing.is_view:
        raise SemanticError(f"CREATE OR REPLACE VIEW replaces a view: {db}.{name} is a table. DROP TABLE it "
                            "first, or give the view another name")
    elif existing is not None and not stmt.replace:
        if stmt.if_not_exists:
            return ctx.empty()
        raise AlreadyExistsError(f"Table already exists: {db}.{name}. Use CREATE VIEW IF NOT EXISTS, "
                                 f"ALTER VIEW {name} AS SELECT ... to change a view's query, or DROP it first.")
    query = views.qualified(stmt.query.tree, ctx.current_db, lambda t: _exists(ctx, t),
                            ctx.spark.catalog.tableExists)
    views.check_no_loop(query, ctx.find_view, f"{db}.{name}")
    fields = run_query(ctx, query)[0].schema.fields
    out = [f.name for f in fields]
    names = [c for c, _ in stmt.columns] if stmt.columns else [n.lower() for n in out]
    if stmt.columns and len(names) != len(out):
        raise SemanticError("The number of columns produced by the SELECT clause does not match the number of "
                            f"column names specified by CREATE VIEW: {len(out)} ({', '.join(out)}) against "
                            f"{len(names)} ({', '.join(names)})", code=10089)
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise SemanticError(f"Duplicate column name: {dup} in view {db}.{name}. Give the SELECT's columns "
                            "distinct aliases (... AS other_name), or name them in CREATE VIEW v (a, b, ...)",
                            code=10036)
    if len({o.lower() for o in out}) < len(out):  # SELECT a.k, b.k: named by position
        query, out = views.named_by_position(query, names), names
    comments = dict(stmt.columns)
    columns = tuple(Column(n, f.dataType.simpleString(), comments.get(n)) for n, f in zip(names, fields))
    texts = {VIEW_ORIGINAL_TEXT: views.text(stmt.query.tree),
             VIEW_EXPANDED_TEXT: views.expanded_text(query, out, names)}
    props = dict(stmt.properties)
    if stmt.comment is not None:
        props["comment"] = stmt.comment
    if existing is not None:  # ALTER VIEW keeps its comment and properties, OR REPLACE does not
        kept = dict(existing.properties) if stmt.alter else props
        ctx.catalog.alter_table(existing.evolve(columns=columns, properties={**kept, **texts}), existing.version)
        return ctx.empty()
    ctx.catalog.create_table(Table(db, name, columns, location="", format="", table_type=VIEW,
                                   properties={**props, **texts}))
    return ctx.empty()


def _exists(ctx: Context, name: str) -> bool:
    try:
        ctx.catalog.get_table(ctx.current_db, name)
    except NoSuchTable:
        return False
    return True


def alter_view(ctx: Context, stmt: s.AlterTable) -> DataFrame:
    """ALTER VIEW v SET / UNSET TBLPROPERTIES (...) and RENAME TO w: the view's metastore row
    alone (a view has no files). A view that names the renamed one then reports it missing at
    its next read, as in Hive: ALTER VIEW it AS SELECT ... with the new name."""
    view = ctx.table(stmt.table, view_ok=True)
    if not view.is_view:
        raise SemanticError("To alter a base table you need to use the ALTER TABLE command: "
                            f"{view.qualified_name} is a table, not a view", code=10132)
    for action in stmt.actions:
        if isinstance(action, s.RenameTable):
            db, name = action.target.resolve(view.db)
            view = ctx.catalog.rename_table(view.db, view.name, db, name, None)
            continue
        assert isinstance(action, (s.SetTableProperties, s.UnsetTableProperties))
        view = alter_properties(ctx, view, action)  # EXTERNAL and hivepark's keys refused there
    return ctx.empty()
