"""Which directories a statement may take as its own (issue 13): a LOCATION, an ADD PARTITION
... LOCATION, a CREATE DATABASE ... LOCATION, or the source of LOAD DATA INPATH must not be or
contain the warehouse root, the metastore file or hivepark's own ``.hivepark`` directory, and
must not overlap another table's or database's directory, or a later OVERWRITE, DROP or LOAD
would delete or move what it does not own. Checked before anything is written."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from hivepark import layout
from hivepark.catalog.models import Table
from hivepark.errors import CommitConflict, SemanticError
from hivepark.exec.context import Context
from hivepark.storage import fs
from hivepark.storage.commit import moving_from


def is_relative(location: str) -> bool:
    """Whether ``location`` is relative to the directory hivepark runs in: a path such as
    ``x/y``, or a ``file:`` URI of one (``file:x/y``, which Hadoop refuses: "Relative path in
    absolute URI").

    >>> is_relative("x/y"), is_relative("file:x/y"), is_relative("file:/x"), is_relative("s3a://b/x")
    (True, True, False, False)
    """
    if location.startswith("file:"):
        return not location[len("file:"):].startswith("/")
    return not layout.is_absolute(location)


def absolute(location: str) -> str:
    """A LOCATION as given, normalized; a relative one (``x``, ``file:x``) is Hive's error 10244."""
    if is_relative(location):
        raise SemanticError(f"{location}  is not absolute.  Please specify a complete absolute uri. A relative "
                            "LOCATION would depend on the directory hivepark runs in: give the full path.",
                            code=10244)
    return fs.normalize(location)


def _metastore_file(ctx: Context) -> str | None:
    url = str(getattr(ctx.catalog, "url", ""))
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):].split("?", 1)[0]
        return fs.normalize(path if path.startswith("/") else "/" + path)
    return None


def _whose(db_name: str, name: str, values: Sequence[str | None] | None) -> str:
    """A table, or one of its partitions, as an error names it."""
    return f"table {db_name}.{name}" if values is None else \
        f"partition ({', '.join(map(str, values))}) of table {db_name}.{name}"


def check_location(ctx: Context, location: str, what: str, own: Table | None = None,
                   own_db: str | None = None, directory: bool = True,
                   own_partition: Sequence[str | None] | None = None) -> None:
    """Refuses ``location`` (normalized) for ``what`` (words for the message) when it is the
    file-system root, is or contains the warehouse root, the metastore or ``.hivepark``, or
    overlaps the directory of a table other than ``own`` or of a partition of another table
    (with ``own_partition``, a partition of ``own`` other than that one: two partitions never
    share a directory), or a list-bucketing directory given by SET SKEWED LOCATION (of any table
    but ``own``; with ``own_partition``, of any partition but that one), or, for a database, of
    another database than ``own_db``, or, with ``directory``, is an existing file."""
    loc = fs.normalize(location)
    warehouse = fs.normalize(ctx.warehouse)
    scheme, sep, rest = loc.partition("://")
    path = ("/" + rest.split("/", 1)[1] if "/" in rest else "/") if sep else scheme
    if posixpath.normpath(path) == "/":
        raise SemanticError(f"{what} cannot be '{location}', the root of the file system: give a directory of "
                            "its own.")
    if layout.is_within(loc, warehouse):
        raise SemanticError(f"{what} '{location}' is or contains the warehouse root {warehouse}: writing or "
                            "dropping there would touch every table and the metastore. Give a directory of its own.")
    reserved = [f"{warehouse}/.hivepark"] + [p for p in [_metastore_file(ctx)] if p]
    for r in reserved:
        if layout.is_within(r, loc) or layout.is_within(loc, r):
            raise SemanticError(f"{what} '{location}' overlaps hivepark's own file {r}: give a directory of its "
                                "own.")
    moving = moving_from(ctx.warehouse, loc, ctx.catalog)  # (a killed RENAME's move finished first)
    if moving is not None:
        raise CommitConflict(f"{what} '{location}' overlaps {moving}, the directory of a table that ALTER TABLE ... "
                             "RENAME TO is moving right now. Nothing was changed; run the statement again once it "
                             "finished.")
    for db_name in ctx.catalog.list_databases():
        db = ctx.catalog.get_database(db_name)
        if db_name != own_db and db_name != "default" and \
                (layout.is_within(db.location, loc) or (own_db is not None and layout.is_within(loc, db.location))):
            raise SemanticError(f"{what} '{location}' overlaps the directory of database {db_name} "
                                f"({db.location}): give a directory of its own.")
    for db_name, name, values, where in ctx.catalog.locations_overlapping(loc):
        if own is not None and (own.db, own.name) == (db_name, name) and (
                values is None or own_partition is None or tuple(values) == tuple(own_partition)):
            continue  # the table itself; for a table's LOCATION also its partitions
        raise SemanticError(f"{what} '{location}' overlaps the directory of {_whose(db_name, name, values)} "
                            f"({where}): a write or DROP of "
                            "one would delete the other's files. Give a directory of its own.")
    for db_name, name, values, where in ctx.catalog.skewed_locations_overlapping(loc):
        if own is not None and (own.db, own.name) == (db_name, name) and (
                own_partition is None or values is None or tuple(values) == tuple(own_partition)):
            continue  # the table's (or this partition's) own list-bucketing directory
        raise SemanticError(f"{what} '{location}' overlaps a list-bucketing directory of "
                            f"{_whose(db_name, name, values)} ({where}, given by "
                            "ALTER TABLE ... SET SKEWED LOCATION): that table reads the files there as its own "
                            "rows, and a write or DROP of one would delete the other's files. Give a directory of "
                            "its own, or point the skewed location elsewhere first.")
    if directory and fs.is_file(loc):
        raise SemanticError(f"{what} '{location}' is a file, not a directory: give a directory (new or "
                            "existing) for the table's files.")


def check_table_name(name: str) -> None:
    """A table's name is its directory's: a '.' would collide with a database directory
    (``x.db``) or with hivepark's own (``.hivepark``)."""
    if "." in name:
        raise SemanticError(f"Table name '{name}' cannot contain '.': its directory would collide with a "
                            "database's (x.db) or hivepark's own (.hivepark). Choose another name.")
    check_object_name(name)


def check_object_name(name: str, kind: str = "table") -> None:
    """Hive's metastore names (``MetaStoreUtils.validateName``: letters, digits and '_'),
    which Spark's catalog takes as a view's name too."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        suggestion = re.sub(r"[^A-Za-z0-9_]", "_", name) or "t"
        raise SemanticError(f"InvalidObjectException(message:{name} is not a valid object name): a {kind}'s name "
                            f"is letters, digits and '_', as Hive's metastore takes them. Choose another name, "
                            f"e.g. {suggestion}.")
