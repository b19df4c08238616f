"""Tables and databases: CREATE/DROP DATABASE, USE, CREATE TABLE (LIKE, AS SELECT), DROP
TABLE, ALTER TABLE (partitions, rename, skew and list bucketing, CONCATENATE), MSCK REPAIR."""

from __future__ import annotations

import bisect
import dataclasses
import functools
import json
import os
import posixpath
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import (
    ArrayType,
    CharType,
    DataType,
    DecimalType,
    MapType,
    StructType,
    TimestampNTZType,
    VarcharType,
)

from hivepark import layout
from hivepark.catalog.buckets import KEYS as BUCKET_KEYS
from hivepark.catalog.buckets import Bucketing, table_buckets
from hivepark.catalog.models import EXTERNAL, MANAGED, Column, Database, Partition, Table
from hivepark.catalog.skew import (
    RESERVED,
    SKEW_AUTO_TOPK,
    SKEW_COLUMNS,
    SKEW_LOCATIONS,
    SKEW_STORED_AS_DIRS,
    SKEW_VALUES,
    SkewLayout,
    SkewSpec,
    cleared_properties,
    partition_layout,
    table_skew,
)
from hivepark.errors import (
    AlreadyExistsError,
    CommitConflict,
    HiveParkError,
    InvalidPartitionSpec,
    NoSuchPartition,
    NoSuchTable,
    SemanticError,
    UnmatchedFilter,
    UnsupportedError,
)
from hivepark.exec.concatenate import concatenate
from hivepark.exec.context import Context, refuse_unwritable_buckets
from hivepark.exec.locations import absolute, check_location, check_object_name, check_table_name
from hivepark.exec.query import run_query
from hivepark.exec.relocate import (
    delete_empty_parents,
    exchange_partitions,
    given_spec_text,
    rename_partition,
    spec_text,
)
from hivepark.exec.write import count_rows, cut_foreign_files, cut_properties, sized_string_columns, write_rows
from hivepark.expr import or_all
from hivepark.sql import statements as s
from hivepark.sql.rewrite import hive_output_names
from hivepark.sql.validate import (
    check_column_change,
    check_create_skew,
    check_not_default_partition,
    check_partition_key_types,
    check_skewed_location,
    full_spec,
    location_changes,
    named_partitions,
    not_partitioned,
    skew_spec,
    spec_filter,
)
from hivepark.storage import fs
from hivepark.storage.commit import (
    COLUMN_STATS,
    COLUMN_STATS_ACCURATE,
    COLUMNS_CHANGED,
    FILES_PARAM,
    CreatedTable,
    MovedTable,
    PartitionWrite,
    current_files,
    delete_owned,
    fault_point,
    listed_files,
    moving_from,
    own_lb_dirs,
    table_files,
    writers_in,
)
from hivepark.storage.formats import (
    CUT_COLUMNS,
    DROPPED_COLUMNS,
    ESCAPE_CRLF,
    FILE_TYPES,
    NULL_FORMAT,
    SERDE_DELIMITERS,
    check_text_delimiter,
    normalize_format,
    reads_as,
)
from hivepark.storage.handlers import (
    PARTITION_SPEC_KEY,
    STORAGE_HANDLER_KEY,
    StorageHandler,
    get_handler,
    handler_for,
    handler_name,
)
from hivepark.types import HiveType, PartitionValueError, hive_allows_type_change

# ---------------------------------------------------------------- databases


def database_location(ctx: Context, db: str) -> str:
    """A new database's location when CREATE DATABASE gives none: ``<warehouse>/<db>.db``."""
    return ctx.warehouse if db == "default" else layout.database_location(ctx.warehouse, db)


def new_table_location(ctx: Context, db: str, name: str) -> str:
    """A new managed table's directory, as Hive's Warehouse places it: in the warehouse for
    the default database, else in the database's location (``<warehouse>/<db>.db`` unless
    CREATE DATABASE ... LOCATION or ALTER DATABASE ... SET LOCATION gave another)."""
    if db == "default":
        return layout.table_location(ctx.warehouse, db, name)
    return layout.table_dir(ctx.catalog.get_database(db).location, name)


def create_database(ctx: Context, stmt: s.CreateDatabase) -> DataFrame:
    check_object_name(stmt.name, "database")
    location = absolute(stmt.location) if stmt.location else database_location(ctx, stmt.name)
    if stmt.name not in ctx.catalog.list_databases():  # else IF NOT EXISTS, or Hive's error
        # the default <warehouse>/<db>.db too: a table's or partition's directory there (a
        # LOCATION) would be the new database's, whose tables CREATE TABLE would then refuse
        if stmt.location:
            check_location(ctx, location, f"LOCATION of database {stmt.name}", own_db=stmt.name)
        else:
            try:
                check_location(ctx, location, f"The directory of database {stmt.name}", own_db=stmt.name)
            except SemanticError as e:
                raise SemanticError(f"{e} Or give the database another with CREATE DATABASE {stmt.name} "
                                    "LOCATION '...'.") from None
    ctx.catalog.create_database(Database(stmt.name, location, stmt.comment, dict(stmt.properties)),
                                if_not_exists=stmt.if_not_exists)
    fs.makedirs(location)
    return ctx.empty()


def alter_database(ctx: Context, stmt: s.AlterDatabase) -> DataFrame:
    """ALTER DATABASE db SET DBPROPERTIES: merged into the database's properties, as Hive.
    SET LOCATION: where the database's new tables go, as Hive (its tables stay where they are)."""
    location = None
    if stmt.location is not None:
        if stmt.name == "default":
            raise SemanticError("The default database's location is the warehouse, given to hivepark.connect() or "
                                "--warehouse: connect to another warehouse, or create a database with LOCATION.")
        ctx.catalog.get_database(stmt.name)
        location = absolute(stmt.location)
        check_location(ctx, location, f"LOCATION of database {stmt.name}", own_db=stmt.name)
    ctx.catalog.alter_database(stmt.name, dict(stmt.properties), location)
    if location is not None:
        fs.makedirs(location)
    return ctx.empty()


def drop_database(ctx: Context, stmt: s.DropDatabase) -> DataFrame:
    name = stmt.name
    if name == "default":
        raise SemanticError("Can not drop default database")
    try:
        db = ctx.catalog.get_database(name)
    except SemanticError:
        if stmt.if_exists:
            return ctx.empty()
        raise
    # CASCADE: each partitioned table's partitions, read before the metastore forgets them, so
    # that their files go too (as DROP TABLE's)
    parts: dict[str, list[Partition]] = {}
    for table_name in ctx.catalog.list_tables(name) if stmt.cascade else []:
        try:
            t = ctx.catalog.get_table(name, table_name)
        except NoSuchTable:
            continue
        if t.is_partitioned and not t.is_external and not is_handler_table(t):
            parts[t.name] = ctx.catalog.list_partitions(t)
    dropped = ctx.catalog.drop_database(name, cascade=stmt.cascade)
    for t in dropped:
        handler = handler_for(t)
        if handler is not None:
            handler.drop_table(t, delete_data=not t.is_external)
        _delete_table_data(ctx, t, parts.get(t.name))
    fs.delete_dir_if_empty(db.location)
    if ctx.current_db == name:
        ctx.current_db = "default"
    return ctx.empty()


def use(ctx: Context, stmt: s.Use) -> DataFrame:
    ctx.catalog.get_database(stmt.name)
    ctx.current_db = stmt.name
    return ctx.empty()


# ---------------------------------------------------------------- CREATE / DROP TABLE


def create_table_statement(ctx: Context, stmt: s.CreateTable) -> DataFrame:
    if stmt.like is not None and stmt.storage_handler is None:
        stmt = _like_handler_table(ctx, stmt)
    if stmt.storage_handler is not None:
        table = handler_table(ctx, stmt)
        if stmt.as_select is not None:
            return ctas(ctx, table, stmt.as_select, stmt.if_not_exists)
        store_table(ctx, table, stmt.if_not_exists)
        return ctx.empty()
    table = new_table(ctx, stmt)
    if stmt.as_select is None:
        store_table(ctx, table, stmt.if_not_exists)
        return ctx.empty()
    return ctas(ctx, table, stmt.as_select, stmt.if_not_exists)


def _like_handler_table(ctx: Context, stmt: s.CreateTable) -> s.CreateTable:
    """CREATE TABLE t LIKE src of a storage handler's table is, as in Hive, a table of the same
    handler with src's columns and properties (the handler says which, StorageHandler.like_properties:
    an Iceberg table's spec, not its identifier): CREATE TABLE t (...) STORED BY ... TBLPROPERTIES
    (...). A table of files LIKE src stays as it was."""
    assert stmt.like is not None
    src = ctx.table(stmt.like, for_view="CREATE TABLE ... LIKE copies a table's definition; for a view's "
                    "columns use CREATE TABLE t AS SELECT * FROM the view LIMIT 0")
    handler = handler_for(src)
    if handler is None:
        return stmt
    for clause, given in (("STORED AS", stmt.format is not None), ("ROW FORMAT", stmt.field_delim is not None)):
        if given:
            raise UnsupportedError(
                f"CREATE TABLE {stmt.table.name} LIKE {src.qualified_name} copies its storage handler "
                f"({handler.name}), as Hive does, whose rows live in its source: it cannot have {clause}. Remove "
                "the clause, or make a "
                f"table of files with its columns: CREATE TABLE {stmt.table.name} {clause} ... AS SELECT * FROM "
                f"{src.qualified_name} LIMIT 0.")
    props = handler.like_properties(src)
    spec = json.loads(props.pop(PARTITION_SPEC_KEY, "") or "[]")
    transforms = tuple(s.PartitionTransform(t, c, p) for t, c, p in spec)
    return dataclasses.replace(
        stmt, like=None, columns=src.columns, partition_columns=src.partition_keys, storage_handler=handler.name,
        partition_transforms=transforms, properties=tuple({**props, **dict(stmt.properties)}.items()))


def new_table(ctx: Context, stmt: s.CreateTable) -> Table:
    """The table a CREATE TABLE describes (not yet stored)."""
    db, name = stmt.table.resolve(ctx.current_db)
    ctx.catalog.get_database(db)
    if stmt.partition_transforms:
        raise SemanticError("PARTITIONED BY SPEC (...) partitions Iceberg tables: add STORED BY ICEBERG, or use "
                            "PARTITIONED BY (column type, ...) for a table of files")
    columns = list(stmt.columns)
    part_keys = list(stmt.partition_columns)
    if stmt.untyped_partition_columns:
        assert stmt.as_select is not None
        part_keys += _untyped_partition_keys(ctx, list(stmt.untyped_partition_columns),
                                             stmt.as_select)
    kw: dict = {"format": normalize_format(stmt.format or ctx.conf.get("hive.default.fileformat")
                                           or "textfile")}
    if stmt.field_delim is not None:
        kw["field_delim"] = stmt.field_delim
    check_table_name(name)
    if stmt.location is not None:
        kw["location"] = absolute(stmt.location)
        check_location(ctx, kw["location"], f"LOCATION of table {db}.{name}")
    if stmt.external:
        kw["table_type"] = EXTERNAL
    tblprops = dict(stmt.properties)
    if stmt.like is not None:
        src = ctx.table(stmt.like, for_view="CREATE TABLE ... LIKE copies a table's definition; for a view's "
                        "columns use CREATE TABLE t AS SELECT * FROM the view LIMIT 0")
        columns, part_keys = list(src.columns), list(src.partition_keys)
        kw.setdefault("field_delim", src.field_delim)
        if stmt.format is None:
            kw["format"] = src.format
        # LazySimpleSerDe's other separators and escape go with the field delimiter
        serde = {k: v for k, v in src.properties.items() if k in (*SERDE_DELIMITERS, ESCAPE_CRLF)}
        tblprops = {**copy_for_like(src), **(serde if stmt.field_delim is None else {}), **tblprops}
    for key in part_keys:  # its directories would be hidden: written, then never found
        layout.check_partition_column_name(key.name)
    check_partition_key_types(part_keys)
    dup = {c.name for c in columns} & {c.name for c in part_keys}
    if dup:
        raise SemanticError(f"Column repeated in partitioning columns: {sorted(dup)[0]}. A "
                            "partition column is not also a data column: remove it from one list.")
    default_location = "location" not in kw
    kw.setdefault("location", new_table_location(ctx, db, name))
    kw.setdefault("table_type", MANAGED)
    if (stmt.skew is not None or stmt.bucketing is not None) and not columns and stmt.as_select is not None:
        columns = _query_columns(ctx, stmt.as_select, len(part_keys))
    if stmt.skew is not None:
        tblprops.update({k: v for k, v in skew_spec(columns, stmt.skew, part_keys)
                         .properties().items() if v is not None})
    if stmt.bucketing is not None:
        tblprops.update(_bucketing(columns, part_keys, stmt))
    if sized_string_columns(Table(db, name, tuple(columns))) and (stmt.location is not None or (
            stmt.as_select is None and fs.exists(kw["location"])  # (files another tool left at its default
            and any(not e.is_dir for e in fs.list_files(kw["location"], recursive=True)))):  # directory: its own)
        # its files are another tool's: read as Hive reads them (exec.write.cut_foreign_files)
        tblprops[CUT_COLUMNS] = json.dumps(sorted(sized_string_columns(Table(db, name, tuple(columns)))))
    table = Table(db, name, tuple(columns), tuple(part_keys), properties=tblprops,
                  create_time=int(time.time()), **kw)
    if default_location:  # no other table's or partition's (one given that LOCATION) directory
        check_location(ctx, table.location, f"The directory of table {table.qualified_name}", own=table, own_db=db)
    check_create_skew(table, stmt.bucketing is not None)
    return table


def _bucketing(columns: Sequence[Column], part_keys: Sequence[Column], stmt: s.CreateTable) -> dict[str, str]:
    """CLUSTERED BY ... INTO n BUCKETS, kept for hivepark's writes and reads and for Hive, with
    Hive 3's ``bucketing_version`` 2 (its hash) unless TBLPROPERTIES give one, as Hive does."""
    b = stmt.bucketing
    assert b is not None
    names = {c.name for c in columns}
    for c in (*b.columns, *(c for c, _ in b.sorted_by)):
        if c not in names:
            what = "a partition column" if c in {k.name for k in part_keys} else "not a column of the table"
            raise SemanticError(f"Invalid column reference {c} in CLUSTERED BY / SORTED BY: {what}; bucket and sort "
                                f"columns are data columns ({', '.join(sorted(names))}).", code=10002)
    return {"bucketing_version": dict(stmt.properties).get("bucketing_version", "2"), **b.properties()}


def handler_table(ctx: Context, stmt: s.CreateTable) -> Table:
    """The table a CREATE TABLE ... STORED BY describes: its handler (an unknown name is an
    error here) validates the properties (TBLPROPERTIES and SERDEPROPERTIES, kept together in
    the table's properties) and gives the columns when CREATE omits them. No directory is
    ever created for it: its rows live in the handler's source."""
    assert stmt.storage_handler is not None
    db, name = stmt.table.resolve(ctx.current_db)
    ctx.catalog.get_database(db)
    check_table_name(name)
    handler = get_handler(stmt.storage_handler)
    shown = handler.aliases[0] if handler.aliases else handler.name
    for clause, present in (("PARTITIONED BY", stmt.partition_columns or stmt.untyped_partition_columns
                             or stmt.partition_transforms),
                            ("SKEWED BY", stmt.skew is not None), ("CLUSTERED BY", stmt.bucketing is not None),
                            ("AS SELECT", stmt.as_select is not None), ("LIKE", stmt.like is not None),
                            ("STORED AS", stmt.format is not None), ("LOCATION", stmt.location is not None),
                            ("ROW FORMAT", stmt.field_delim is not None)):
        if present and clause not in handler.create_clauses:
            raise UnsupportedError(f"CREATE TABLE ... STORED BY '{stmt.storage_handler}' cannot have "
                                   f"{clause}: the rows of a {shown} table live in its source. "
                                   "Remove the clause.")
    props = {**dict(stmt.serde_properties), **dict(stmt.properties)}
    props = {k: v for k, v in props.items() if k.lower() != STORAGE_HANDLER_KEY}
    handler.validate(props)
    props[STORAGE_HANDLER_KEY] = handler.name
    if stmt.partition_transforms:  # read (and removed) by the handler's create_table hook
        props[PARTITION_SPEC_KEY] = json.dumps([[t.transform, t.column, t.param] for t in stmt.partition_transforms])
    # partition columns stay partition keys until the handler's create_table hook says how it
    # stores them (untyped ones, of CTAS, are typed from the query there)
    keys = tuple(stmt.partition_columns) + tuple(Column(n, "") for n in stmt.untyped_partition_columns)
    return Table(db, name, tuple(stmt.columns), keys, properties=props, create_time=int(time.time()),
                 location=new_table_location(ctx, db, name),
                 table_type=EXTERNAL if stmt.external else MANAGED)


def is_handler_table(table: Table) -> bool:
    return handler_name(table) is not None


def copy_for_like(src: Table) -> dict[str, str]:
    """The skew and bucketing properties CREATE TABLE ... LIKE copies."""
    return {k: v for k, v in src.properties.items()
            if k in RESERVED[:3] or k == SKEW_AUTO_TOPK or k in BUCKET_KEYS or k == "bucketing_version"}


def _query_columns(ctx: Context, query: s.Query, n_keys: int) -> list[Column]:
    """The data columns a CTAS query gives (its schema; no Spark job runs)."""
    columns = ctas_columns(run_query(ctx, query.tree)[0], query.tree)
    return columns[:len(columns) - n_keys]


def _untyped_partition_keys(ctx: Context, names: list[str], query: s.Query) -> list[Column]:
    """``PARTITIONED BY (p)`` without types: allowed in CTAS, typed from the query."""
    columns = ctas_columns(run_query(ctx, query.tree)[0], query.tree)
    last = [c.name for c in columns[len(columns) - len(names):]]
    if len(columns) <= len(names):
        raise SemanticError(
            f"CREATE TABLE ... AS SELECT with PARTITIONED BY ({', '.join(names)}) needs at least one data "
            f"column before them in the SELECT, which gives only ({', '.join(c.name for c in columns)}). Add "
            "the data columns before the partition columns.")
    if last != names:
        raise SemanticError(
            f"The partition columns ({', '.join(names)}) of CREATE TABLE ... AS SELECT must be "
            f"the last columns of the SELECT, in PARTITIONED BY order; the SELECT ends with "
            f"({', '.join(last)}). Reorder the SELECT list.")
    return columns[len(columns) - len(names):]


def ctas_columns(df: DataFrame, tree: Any) -> list[Column]:
    """The columns CREATE TABLE ... AS SELECT gives its table, named as Hive names them: an
    expression without an alias is ``_c<position>`` (Spark would call it ``(a + 1)``). A column
    of no type (an untyped NULL) is refused as Hive refuses it (10305): no format can hold it."""
    names = hive_output_names(tree, [f.name.lower() for f in df.schema.fields])
    out = []
    for name, f in zip(names, df.schema.fields):
        if f.dataType.typeName() == "void":
            raise SemanticError(f"CREATE-TABLE-AS-SELECT creates a VOID type, please use CAST to specify the "
                                f"type, near field: {name}. CAST it, e.g. CAST(NULL AS STRING) AS {name}.",
                                code=10305)
        out.append(Column(name, hive_column_type(f.dataType, name)))
    return out


_HIVE_ATOMS = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string",
                         "binary", "date", "timestamp"})


def hive_column_type(dt: DataType, name: str) -> str:
    """The Hive type a query's column of Spark type ``dt`` is kept as (CTAS): Spark's text for
    the types Hive has, ``timestamp`` for Spark's TIMESTAMP_NTZ (``localtimestamp()``,
    ``to_timestamp_ntz``: a wall-clock time, as Hive's TIMESTAMP is), nested ones too. A type
    Hive has not (an INTERVAL, VARIANT, TIME) is refused naming the column: the metastore would
    hold a type Hive cannot read."""
    def text(t: DataType) -> str | None:
        if isinstance(t, ArrayType):
            inner = text(t.elementType)
            return None if inner is None else f"array<{inner}>"
        if isinstance(t, MapType):
            k, v = text(t.keyType), text(t.valueType)
            return None if k is None or v is None else f"map<{k},{v}>"
        if isinstance(t, StructType):
            fields = [(f.name, text(f.dataType)) for f in t.fields]
            if any(ft is None for _, ft in fields):
                return None
            return "struct<" + ",".join(f"{n}:{ft}" for n, ft in fields) + ">"
        if isinstance(t, TimestampNTZType):
            return "timestamp"
        simple = t.simpleString()
        return simple if simple in _HIVE_ATOMS or isinstance(t, (DecimalType, CharType, VarcharType)) else None

    out = text(dt)
    if out is None:
        raise SemanticError(f"CREATE TABLE ... AS SELECT: column {name} is of Spark type {dt.simpleString()}, which no "
                            f"Hive column type holds. Convert it in the SELECT, e.g. CAST({name} AS STRING).")
    return out


def store_table(ctx: Context, table: Table, if_not_exists: bool, uid: str | None = None) -> Table | None:
    """Registers a new table (of that ``uid``, given one) and creates its directory; None if
    it existed (IF NOT EXISTS)."""
    try:
        existing = ctx.catalog.get_table(table.db, table.name)
    except NoSuchTable:
        existing = None
    if existing is not None:
        if if_not_exists:
            return None
        raise AlreadyExistsError(f"Table already exists: {table.qualified_name}. Use CREATE "
                                 "TABLE IF NOT EXISTS, or DROP TABLE first.")
    handler = handler_for(table)
    if handler is None:
        if not table.columns:
            raise SemanticError(f"Table {table.qualified_name} needs at least one data column")
        check_text_delimiter(table)
        stored = ctx.catalog.create_table(table, uid=uid)
        fs.makedirs(stored.location)
        return stored
    table = handler.create_table(table)
    if not table.columns:
        raise SemanticError(f"Table {table.qualified_name} needs at least one data column")
    try:
        return ctx.catalog.create_table(table)
    except BaseException:
        handler.rollback_create_table(table)
        raise


def ctas(ctx: Context, table: Table, query: s.Query, if_not_exists: bool) -> DataFrame:
    """CREATE TABLE ... AS SELECT: the table exists only if its data was written."""
    if table.is_external:
        raise SemanticError("CREATE TABLE AS SELECT cannot create an EXTERNAL table: create "
                            "it first, then INSERT")
    df, _ = run_query(ctx, query.tree)
    handler = handler_for(table)
    if handler is not None:
        # the columns named as Hive names them (_c1 for an unaliased expression), as for a table of files
        df = df.toDF(*[c.name for c in ctas_columns(df, query.tree)])
        return _handler_ctas(ctx, handler, table, df, if_not_exists)
    if not table.columns:
        n = len(df.columns) - len(table.partition_keys)
        table = table.evolve(columns=tuple(ctas_columns(df, query.tree)[:n]))
    refuse_unwritable_buckets(table)
    # The table is registered before its rows are written (they are committed to it as an
    # INSERT's are). A failure, or a recover() after a kill, drops it again only if nothing was
    # committed to it meanwhile (by this statement or another, which saw it) and deletes only
    # the directories that left empty: a LOCATION given, another's files in flight, stay.
    with CreatedTable(ctx.warehouse, ctx.catalog, table.db, table.name, table.location) as created:
        stored = store_table(ctx, table, if_not_exists, uid=created.uid)
        if stored is None:
            created.done()  # (IF NOT EXISTS: the table is another's)
            return ctx.empty()
        spec = s.PartitionSpec.all_dynamic(stored.partition_key_names())
        # Hive's partitioned CTAS makes its dynamic-partition context itself (GenFileSinkPlan),
        # checking neither hive.exec.dynamic.partition nor its strict mode: those guard an
        # INSERT's PARTITION clause. Its limits (max.dynamic.partitions, ...) still apply.
        saved = {k: ctx.conf.get(k) for k in ("hive.exec.dynamic.partition.mode", "hive.exec.dynamic.partition")}
        ctx.conf.set("hive.exec.dynamic.partition.mode", "nonstrict")
        ctx.conf.set("hive.exec.dynamic.partition", "true")
        try:
            write_rows(ctx, stored, df, spec, overwrite=True)
        finally:
            ctx.conf.set("hive.exec.dynamic.partition.mode", saved["hive.exec.dynamic.partition.mode"] or "strict")
            ctx.conf.set("hive.exec.dynamic.partition", saved["hive.exec.dynamic.partition"] or "true")
        created.done()
    return ctx.empty()




def _handler_ctas(ctx: Context, handler: StorageHandler, table: Table, df: DataFrame,
                  if_not_exists: bool) -> DataFrame:
    """CREATE TABLE ... STORED BY ... AS SELECT: the query's columns (a PARTITIONED BY column
    names one of them); the table exists only if its rows were written."""
    fields = {f.name.lower(): f.dataType.simpleString() for f in df.schema.fields}
    missing = [k.name for k in table.partition_keys if k.name not in fields]
    if missing:
        raise SemanticError(f"PARTITIONED BY ({', '.join(missing)}) of CREATE TABLE ... AS SELECT names no column "
                            f"of the SELECT ({', '.join(fields)}). Name a column the SELECT returns.")
    if not table.columns:
        keys = {k.name for k in table.partition_keys}
        table = table.evolve(columns=tuple(Column(n, t) for n, t in fields.items() if n not in keys),
                             partition_keys=tuple(Column(k.name, fields[k.name]) for k in table.partition_keys))
    stored = store_table(ctx, table, if_not_exists)
    if stored is None:
        return ctx.empty()
    try:
        by_name = {f.lower(): f for f in df.columns}  # the table's order (partition columns last)
        write_rows(ctx, stored, df.select(*[f"`{by_name[c.name]}`" for c in stored.columns]),
                   s.PartitionSpec.all_dynamic(()), overwrite=True)
    except BaseException:
        ctx.catalog.drop_table(stored.db, stored.name)
        handler.drop_table(stored, delete_data=True)
        raise
    return ctx.empty()


def drop_table(ctx: Context, stmt: s.DropTable) -> DataFrame:
    db, name = stmt.table.resolve(ctx.current_db)
    try:
        table = ctx.catalog.get_table(db, name)
    except NoSuchTable:
        # Hive: hive.exec.drop.ignorenonexistent (true by default) makes DROP TABLE of a missing
        # table succeed, as IF EXISTS does
        if stmt.if_exists or ctx.conf.get_bool("hive.exec.drop.ignorenonexistent"):
            return ctx.empty()
        raise
    if table.is_view != stmt.view:
        if table.is_view:
            raise SemanticError(f"Cannot drop a view with DROP TABLE: {db}.{name} is a view. Use DROP VIEW {name}")
        raise SemanticError(f"Cannot drop a base table with DROP VIEW: {db}.{name} is a table. Use DROP TABLE {name}")
    parts = ctx.catalog.list_partitions(table) if table.is_partitioned else []
    ctx.catalog.drop_table(db, name)
    handler = handler_for(table)
    if handler is not None:
        handler.drop_table(table, delete_data=not table.is_external)
    _delete_table_data(ctx, table, parts)
    return ctx.empty()


def _delete_table_data(ctx: Context, table: Table, partitions: list[Partition] | None) -> None:
    if table.is_external or table.is_view or is_handler_table(table):  # a handler's source is never touched
        return
    # Only what the metastore records as the table's own goes (issue 13): a file of a
    # statement still in flight, or one put there by hand, keeps its directory.
    owned = [(p.location, current_files(p.location, p.files, p.parameters)) for p in partitions or []]
    fs.each_at_once(lambda o: delete_owned(*o), owned)  # the files listed first: a listing may ask the metastore
    delete_owned(table.location, [] if table.is_partitioned else table_files(table))


def truncate_table(ctx: Context, stmt: s.TruncateTable) -> DataFrame:
    """TRUNCATE TABLE t [PARTITION (...)], as Hive: the files of the table, or of every partition
    the (possibly partial) spec names, are removed; the partitions stay, empty. One commit
    (storage/commit.py, an overwrite with no files): the metastore's file lists and stats change
    in one transaction, then the old files go (or wait out ``hivepark.files.retention.seconds``).
    Hive's errors: 10147 for a storage handler's table, 10146 for an external one, 10148 for a
    spec on an unpartitioned table, 10006 for a full spec naming no partition."""
    table = ctx.table(stmt.table)
    named = f"{stmt.table.db}.{stmt.table.name}" if stmt.table.db else stmt.table.name
    if is_handler_table(table):
        raise SemanticError(f"Cannot truncate non-native table {named}. Its storage handler keeps the rows.",
                            code=10147)
    if table.is_external:
        raise SemanticError(f"Cannot truncate non-managed table {named}. An external table's files are not "
                            "hivepark's to delete: remove them where they are, or make the table managed "
                            "(ALTER TABLE ... SET TBLPROPERTIES ('EXTERNAL'='FALSE')).", code=10146)
    spec = stmt.partition
    if spec is not None and not table.is_partitioned:
        raise SemanticError(f"Partition spec for non partitioned table {named}.", code=10148)
    if not table.is_partitioned:
        writes = [PartitionWrite((), table.location, [], num_rows=0, overwrite=True)]
    else:
        if spec is None:
            parts = ctx.catalog.list_partitions(table)
        elif spec.dynamic:
            raise InvalidPartitionSpec(f"TRUNCATE TABLE {named} PARTITION needs a value for "
                                       f"{', '.join(spec.dynamic)}: name the partitions with k='v'.")
        elif len(spec.static) == len(table.partition_keys):
            values = full_spec(table, spec)
            found = ctx.catalog.get_partition(table, values)
            if found is None:
                raise NoSuchPartition(f"Partition not found {spec_text(table.partition_key_names(), values)}: "
                                      f"{table.qualified_name} has no such partition to truncate. SHOW PARTITIONS "
                                      f"{table.name} lists them.", code=10006)
            parts = [found]
        else:
            parts = named_partitions(table, spec, ctx.catalog.list_partitions(table, spec_filter(table, spec)))
        writes = [PartitionWrite(p.values, p.location, [], num_rows=0, overwrite=True, if_present=True)
                  for p in parts]
    if writes:
        with ctx.begin_commit(table, keeps_buckets=True) as commit:
            commit.finish(ctx.catalog, writes)
    return ctx.empty()


# ---------------------------------------------------------------- ALTER TABLE


def alter_table(ctx: Context, stmt: s.AlterTable) -> DataFrame:
    table = ctx.table(stmt.table, for_view="To alter a view you need to use the ALTER VIEW command", code=10131)
    spec = stmt.partition
    for action in stmt.actions:
        if isinstance(action, s.SetSkewedLocation):
            table = set_skewed_location(ctx, table, action, spec)
            continue
        if isinstance(action, s.Concatenate):
            table = concatenate(ctx, table, spec)
            continue
        if isinstance(action, s.SetLocation):
            table = set_location(ctx, table, spec, action.location)
            continue
        if isinstance(action, s.ExchangePartition):
            table = exchange_partitions(ctx, table, action)
            continue
        if isinstance(action, s.Touch):
            table = touch(ctx, table, action)
            continue
        if isinstance(action, s.RenamePartition):
            if spec is None:
                raise SemanticError("RENAME TO PARTITION (...) renames one partition: name it first, "
                                    "ALTER TABLE t PARTITION (k='old') RENAME TO PARTITION (k='new')")
            table = rename_partition(ctx, table, spec, action.target)
            continue
        if spec is not None:
            raise _partition_alter_refused(table, spec, action)
        if isinstance(action, s.SetSkewed):
            table = _set_properties(ctx, table, skew_spec(table.columns, action.skew,
                                                          table.partition_keys).properties())
            continue
        if isinstance(action, (s.NotSkewed, s.NotStoredAsDirectories)):
            table = alter_not(ctx, table, action)
            continue
        if isinstance(action, (s.SetTableProperties, s.UnsetTableProperties)):
            table = alter_properties(ctx, table, action)
            continue
        if isinstance(action, (s.AddColumns, s.ChangeColumn)):
            table = change_columns(ctx, table, action)
            continue
        if isinstance(action, s.AddPartitions):
            add_partitions(ctx, table, action)
        elif isinstance(action, s.DropPartitions):
            drop_partitions(ctx, table, action)
        elif isinstance(action, s.RenameTable):
            rename_table(ctx, table, action.target)
        elif isinstance(action, s.SetFileFormat):
            table = set_file_format(ctx, table, action.format)
            continue
        elif isinstance(action, s.SetSerdeProperties):
            table = set_serde_properties(ctx, table, action.properties)
            continue
        else:
            raise UnsupportedError(f"ALTER TABLE ... {action.keyword} is not supported by hivepark")
        table = ctx.catalog.get_table(table.db, table.name) if not isinstance(
            action, s.RenameTable) else table
    return ctx.empty()


def _partition_alter_refused(table: Table, spec: s.PartitionSpec, action: s.AlterAction) -> UnsupportedError:
    """The error for an ALTER TABLE ... PARTITION (...) action hivepark applies to whole tables only,
    naming what to run instead. Nothing is changed."""
    name, part = table.qualified_name, spec.text
    if isinstance(action, (s.AddColumns, s.ChangeColumn)):
        clause = ("REPLACE COLUMNS (...)" if isinstance(action, s.AddColumns) and action.replace
                  else "ADD COLUMNS (...)" if isinstance(action, s.AddColumns) else "CHANGE COLUMN ...")
        return UnsupportedError(
            f"ALTER TABLE {table.name} {part} {clause} is not supported: hivepark keeps one column list for "
            f"{name} and all its partitions, whose files are read with it (Parquet and ORC by column name, "
            f"TEXTFILE by position), as after Hive's CASCADE. Nothing was changed; run it on the table, without "
            f"{part}: ALTER TABLE {table.name} {clause} changes the columns of every partition.")
    if isinstance(action, s.SetFileFormat):
        return UnsupportedError(
            f"ALTER TABLE {table.name} {part} SET FILEFORMAT is not supported: every partition of {name} is "
            f"read as the table's format, {table.format.upper()}, so a partition of another format would fail "
            "every read. Nothing was changed; to store the table in another format, make a new table "
            f"(CREATE TABLE t2 ... STORED AS {action.format.upper()}, then INSERT OVERWRITE "
            f"TABLE t2 PARTITION (...) SELECT ... FROM {table.name}).")
    return UnsupportedError(f"ALTER TABLE ... PARTITION (...) {action.keyword} is "
                            "not supported: this ALTER applies to the whole table; run it without PARTITION (...)")


def set_file_format(ctx: Context, table: Table, fmt: str) -> Table:
    """ALTER TABLE t SET FILEFORMAT: the format of the table's files, while it has none. Hive
    changes it whatever the files are (they are then read in the new format, and fail);
    here a table with files keeps its format, naming the way to convert it."""
    new = normalize_format(fmt)
    if is_handler_table(table):
        raise UnsupportedError(f"{table.qualified_name}'s files are its storage handler's: it has no FILEFORMAT to set")
    if new == table.format:
        return table
    if _has_files(ctx, table):
        holds = (f"has partitions, which may hold {table.format.upper()} files (an empty one counts: DROP it first)"
                 if table.is_partitioned else f"holds {table.format.upper()} files")
        raise UnsupportedError(
            f"{table.qualified_name} {holds}, which would not be read as {new.upper()}: "
            f"make a new table, CREATE TABLE t2 ... STORED AS {new.upper()} AS SELECT * FROM {table.name} (or "
            "INSERT OVERWRITE a new partitioned table from it), then drop this one and rename t2.")
    return ctx.catalog.alter_table(table.evolve(format=new, field_delim=None), table.version)


# the SERDEPROPERTIES of a TEXTFILE table hivepark reads: Hive sets both to the field delimiter
_DELIMITER_PROPERTIES = ("field.delim", "serialization.format")
_SERDE_PROPERTIES = (*_DELIMITER_PROPERTIES, NULL_FORMAT, *SERDE_DELIMITERS, ESCAPE_CRLF)


def set_serde_properties(ctx: Context, table: Table, props: Sequence[tuple[str, str]]) -> Table:
    """ALTER TABLE t SET SERDEPROPERTIES ('field.delim'='c'): a TEXTFILE table's field
    delimiter, with which its files (those already written too, as in Hive) are read from then
    on: the way to fix a table declared with the wrong delimiter."""
    other = [k for k, _ in props if k not in _SERDE_PROPERTIES]
    if table.format != "textfile" or other:
        raise UnsupportedError(
            f"SERDEPROPERTIES {other or [k for k, _ in props]} of {table.qualified_name} ({table.format.upper()}) "
            "would change nothing hivepark reads: it reads 'field.delim' (and 'serialization.format', the same), "
            "'colelction.delim', 'mapkey.delim', 'escape.delim', 'serialization.escape.crlf' and "
            "'serialization.null.format' of TEXTFILE tables only.")
    changed = table
    kept = {k: v for k, v in props if k in (NULL_FORMAT, *SERDE_DELIMITERS, ESCAPE_CRLF)}
    if kept:  # what the files are read (and written) with from then on, as in Hive
        changed = changed.evolve(properties={**changed.properties, **kept})
    delims = {v for k, v in props if k in _DELIMITER_PROPERTIES}
    if delims and (len(delims) != 1 or not next(iter(delims))):
        raise SemanticError(f"SET SERDEPROPERTIES gives {table.qualified_name} more than one field delimiter, or an "
                            f"empty one ({sorted(delims)}): give one, e.g. ('field.delim'=',').")
    if delims:
        changed = changed.evolve(field_delim=delims.pop())
    check_text_delimiter(changed)
    return ctx.catalog.alter_table(changed, table.version)


def _given_partition_location(ctx: Context, table: Table, given: str, values: Sequence[str | None]) -> str:
    """A partition's LOCATION (ADD PARTITION, SET LOCATION) resolved as Hive does and checked:
    not its own table's directory or one containing it, nor overlapping another table or
    another partition (of any table: two partitions on one directory would read each other's
    rows, and a DROP of one delete the other's)."""
    location = _partition_location(table, given)
    if layout.is_within(location, table.location):
        raise SemanticError(f"Partition LOCATION '{given}' is or contains the directory of its own table "
                            f"({table.location}): DROP PARTITION would delete the whole table. Give the "
                            "partition a directory of its own.")
    taken = layout.default_partition_at(table.location, table.partition_key_names(), location)
    if taken is not None and (taken[1] or tuple(taken[0]) != tuple(values)):
        keys = table.partition_key_names()
        whose = (f"every partition {spec_text(keys[:len(taken[0])], taken[0])[:-1]}, ...}}" if taken[1]
                 else f"partition {spec_text(keys, taken[0])}")
        raise SemanticError(f"Partition LOCATION '{given}' ({location}) is where {whose} of {table.qualified_name} "
                            "is made by default: an INSERT or ADD PARTITION making it would share this partition's "
                            "directory, each reading and overwriting the other's files. Give a directory that is not "
                            "named like a partition of the table (e.g. outside its directory).")
    check_location(ctx, location, f"Partition LOCATION '{given}'", own=table, own_partition=values)
    return location


def _partition_location(table: Table, given: str) -> str:
    """ADD PARTITION ... LOCATION: absolute paths and URIs as given; a relative path is
    resolved against the table's directory, as Hive does (``new Path(tbl.getPath(), loc)``); a
    ``file:`` URI of a relative path is refused as a relative LOCATION is (Hadoop's "Relative
    path in absolute URI")."""
    if given.startswith("file:"):
        return absolute(given)
    if "://" in given or given.startswith("/"):
        return fs.normalize(given)
    joined = f"{table.location.rstrip('/')}/{given}"
    if "://" not in joined:
        return fs.normalize(joined)
    scheme, _, rest = joined.partition("://")
    authority, _, path = rest.partition("/")
    return f"{scheme}://{authority}{posixpath.normpath('/' + path)}"


def set_location(ctx: Context, table: Table, spec: s.PartitionSpec | None, given: str) -> Table:
    """ALTER TABLE t [PARTITION (...)] SET LOCATION: where the table or the partition is read
    from, as Hive: no file is moved (the files there are listed at the next read, as for ADD
    PARTITION ... LOCATION). A location overlapping another table, the warehouse or, for a
    partition, its own table's directory is refused."""
    if is_handler_table(table):
        raise UnsupportedError(f"{table.qualified_name} keeps its data where its storage handler's source does: "
                               "SET LOCATION does not apply")
    if spec is None:
        location = absolute(given)
        check_location(ctx, location, "Table LOCATION", own=table)
        props = {k: v for k, v in cut_properties(table).items()  # another tool's files, maybe: read as Hive
                 if k != FILES_PARAM}  # reads them (cut_foreign_files); listed there at the next read
        return ctx.catalog.alter_table(table.evolve(location=location, properties=props), table.version)
    values = full_spec(table, spec)
    part = ctx.catalog.get_partition(table, values)
    if part is None:
        raise NoSuchPartition(f"Partition not found {spec_text(table.partition_key_names(), values)}: "
                              f"{table.qualified_name} has no such partition. SHOW PARTITIONS {table.name} "
                              "lists them.", code=10006)
    absolute(given)  # as Hive's SET LOCATION: a relative path is 10244 (ADD PARTITION resolves one)
    location = _given_partition_location(ctx, table, given, part.values)
    table = cut_foreign_files(ctx, table)  # another tool's files, maybe, as at ADD PARTITION ... LOCATION
    return ctx.catalog.commit(table, table.version, put=[part.evolve(location=location, files=None)])


def add_partitions(ctx: Context, table: Table, action: s.AddPartitions) -> None:
    if not table.is_partitioned:
        raise InvalidPartitionSpec(f"{not_partitioned(table)}: it has no partitions to add")
    parts = []
    for spec, loc in action.partitions:
        check_not_default_partition(table, spec)
        values = full_spec(table, spec)
        ctx.check_partition_names(values, table)
        location = (_given_partition_location(ctx, table, loc, values) if loc is not None
                    else layout.partition_path(table.location, table.partition_key_names(), values))
        parts.append(Partition(values, location, {"transient_lastDdlTime": str(int(time.time()))},
                               None, int(time.time())))
    if any(loc is not None for _, loc in action.partitions):  # another tool's files, maybe
        table = cut_foreign_files(ctx, table)
    # the directories first: a path the file system refuses (a file in the way, too long a
    # name) fails the statement before the metastore records anything
    made = [p.location for p in parts if not fs.exists(p.location)]
    try:
        for p in parts:
            fs.makedirs(p.location)
        ctx.catalog.add_partitions(table, parts, if_not_exists=action.if_not_exists)
    except BaseException:
        for loc in reversed(made):  # the directories this statement made, if still empty
            if fs.exists(loc) and not fs.list_files(loc):
                fs.delete_dir_if_empty(loc)
        delete_empty_parents(table, made)
        raise


def drop_partitions(ctx: Context, table: Table, action: s.DropPartitions) -> None:
    """Every spec's partitions in one metastore transaction; as Hive, a spec that matches no
    partition (without IF EXISTS) fails the statement before anything is dropped."""
    filters = [spec_filter(table, spec) for spec in action.specs]
    try:
        dropped = ctx.catalog.drop_partitions(table, or_all(*filters), () if action.if_exists else filters)
    except UnmatchedFilter as e:
        spec = action.specs[e.index]
        raise NoSuchPartition(
            f"Partition not found {given_spec_text(spec)}: no partition of {table.qualified_name} matches "
            f"{spec.text}, so none was dropped. Use DROP IF EXISTS PARTITION to ignore this; SHOW PARTITIONS "
            f"{table.name} lists them.", code=10006) from None
    if not table.is_external:
        # the files first (a listing may ask the metastore), then the deletes, several at once
        owned = [(p.location, current_files(p.location, p.files, p.parameters)) for p in dropped]
        fs.each_at_once(lambda o: delete_owned(*o), owned)
        delete_empty_parents(table, [p.location for p in dropped])


def rename_table(ctx: Context, table: Table, target: s.TableRef) -> None:
    new_db, new_name = target.resolve(table.db)
    check_table_name(new_name)  # as CREATE TABLE: `x.db` would take database x's directory
    ctx.catalog.get_database(new_db)
    handler = handler_for(table)
    if handler is not None:  # the handler's data stays where it is; the handler renames its own
        ctx.catalog.rename_table(table.db, table.name, new_db, new_name, None)
        try:
            handler.rename_table(table, new_db, new_name)
        except BaseException:
            ctx.catalog.rename_table(new_db, new_name, table.db, table.name, None)
            raise
        return
    new_location = None
    # as Hive: a managed table in its default place (its database's directory and its name) moves
    # with its name; one given a LOCATION, or made before ALTER DATABASE SET LOCATION, stays
    if not table.is_external and fs.normalize(table.location) == fs.normalize(
            new_table_location(ctx, table.db, table.name)):
        new_location = new_table_location(ctx, new_db, new_name)
        moving = moving_from(ctx.warehouse, new_location, ctx.catalog)  # (a killed RENAME's move finished first)
        if moving is not None:
            raise CommitConflict(f"Cannot rename {table.qualified_name} now: its new directory {new_location} "
                                 f"overlaps {moving}, which another ALTER TABLE ... RENAME TO is moving right now. "
                                 "Nothing was changed; run the statement again once it finished.")
        if fs.exists(new_location):
            raise AlreadyExistsError(f"Cannot rename {table.qualified_name}: the directory "
                                     f"{new_location} already exists. Remove it first.")
        _refuse_writers(ctx, table)
    if new_location is None:
        ctx.catalog.rename_table(table.db, table.name, new_db, new_name, None)
        return
    # the metastore first, then the directory: a journal lets the next connect() finish the
    # move of a statement killed in between (the table was recorded where its files were not)
    moved = MovedTable(ctx.warehouse, table, new_db, new_name, new_location)
    try:
        ctx.catalog.rename_table(table.db, table.name, new_db, new_name, new_location)
    except BaseException:
        moved.close()
        raise
    try:
        _refuse_writers(ctx, table)  # one that began before the rename: its commit fails now
        fault_point("table_renamed")
        if fs.exists(table.location):
            fs.move(table.location, new_location)
    except Exception:
        try:
            ctx.catalog.rename_table(new_db, new_name, table.db, table.name, table.location)
        except BaseException:
            moved.release()  # the rename stands: the next connect() moves the files
            raise
        moved.close()
        raise
    except BaseException:
        moved.release()
        raise
    moved.close()


def _refuse_writers(ctx: Context, table: Table) -> None:
    """A RENAME that moves the table's directory waits for no statement writing into it: its
    files in flight (moved in, not committed) would move with the directory and stay there,
    recorded nowhere, once it failed."""
    if writers_in(ctx.warehouse, table.location, ctx.catalog):
        raise CommitConflict(
            f"Cannot rename {table.qualified_name} now: another statement is writing into it (its files are in "
            f"{table.location}, not committed yet), and they would move with the directory. Nothing was changed; "
            "run the statement again once it finished.")


def change_columns(ctx: Context, table: Table, action: s.AddColumns | s.ChangeColumn) -> Table:
    """ALTER TABLE ADD COLUMNS, REPLACE COLUMNS and CHANGE COLUMN: the table's columns in the
    metastore; no file is rewritten. Files are read by column name (Parquet, ORC) or by
    position (TEXTFILE), so a column added reads NULL from the files written before it, and a
    column REPLACE COLUMNS leaves out is no longer read. A type changes only as Hive's
    metastore allows (``hive.metastore.disallow.incompatible.col.type.changes``: to a wider
    number or a string type). What would make a Parquet or ORC table's existing files read
    wrong is refused, where Hive reads NULL or fails later: renaming a column, or changing its
    type to one Spark's reader does not convert it to (storage.formats.reads_as), while files
    hold it."""
    name = table.qualified_name
    if is_handler_table(table):
        return _change_handler_columns(ctx, table, action)
    check_column_change(table, action)
    old = list(table.columns)
    new, moved = _new_columns(table, action)
    has_files = functools.cache(functools.partial(_has_files, ctx, table))  # one metastore question at most
    _refuse_duplicates(name, [c.name for c in new] + [k.name for k in table.partition_keys])
    skew = table_skew(table)
    kept = {c.name for c in new}
    if skew is not None and any(c not in kept for c in skew.columns):
        raise SemanticError(f"A skewed column of {name} cannot be dropped: ALTER TABLE {table.name} NOT SKEWED "
                            "first.", code=10207)
    if table.format == "textfile" and isinstance(action, s.AddColumns) and action.replace:
        _refuse_text_shift(has_files, table, old, new)
    if table.format == "textfile" and moved and has_files():
        raise UnsupportedError(f"{name} is stored as TEXTFILE, whose files give the columns by position: after "
                               "moving a column its existing files would read into the wrong columns. Make a new "
                               "table with the columns in the new order (CREATE TABLE ... AS SELECT ...).")
    retyped = _retyped(table, old, new, action)
    buckets = table_buckets(table)
    was = {(action.new_name or action.column): action.column} if isinstance(action, s.ChangeColumn) else {}
    rebucket = [n for n in retyped if buckets is not None and was.get(n, n) in buckets.columns]
    if rebucket and buckets is not None and has_files():
        a, b = retyped[rebucket[0]]
        bucket_col = was.get(rebucket[0], rebucket[0])
        raise UnsupportedError(
            f"{bucket_col} is a bucketing column of {name} (CLUSTERED BY), whose files hold each row in the bucket "
            f"of its {a} value's hash; as {b} the hash differs, so bucket pruning and TABLESAMPLE would read the "
            f"wrong files and miss rows. Make a new table with the new type (CREATE TABLE ... CLUSTERED BY "
            f"({bucket_col}) INTO {buckets.count} BUCKETS AS SELECT CAST({bucket_col} AS {b}) ...).")
    if ctx.conf.get_bool("hive.metastore.disallow.incompatible.col.type.changes"):
        bad = [n for n, (a, b) in retyped.items() if not hive_allows_type_change(a, b)]
        if bad:
            a, b = retyped[bad[0]]
            raise SemanticError(
                "Unable to alter table. The following columns have types incompatible with the existing columns in "
                f"their respective positions : {','.join(bad)} ({bad[0]} of {name} is {a}, and {b} does not hold "
                "every such value: Hive changes a column only to a wider number or to a string type). Make a new "
                f"table with CAST({bad[0]} AS {b}), or SET hive.metastore.disallow.incompatible.col.type.changes"
                "=false to change it anyway.")
    if table.format in ("parquet", "orc"):
        renamed = isinstance(action, s.ChangeColumn) and action.new_name not in (None, action.column)
        unread = [n for n, (a, b) in retyped.items() if not reads_as(table.format, a, b)]
        if (renamed or unread) and has_files():
            if isinstance(action, s.ChangeColumn) and renamed:
                change = f"renaming column {action.column}"
            else:
                a, b = retyped[unread[0]]
                change = f"changing column {unread[0]} from {a} to {b}, which Spark's reader does not convert,"
            raise UnsupportedError(
                f"{name} is stored as {table.format.upper()}, whose files name and type each column: after "
                f"{change} its existing files would read NULL, wrong values or fail. Make a new table with the new "
                "columns (CREATE TABLE ... AS SELECT ..., CAST(c AS type) AS new_name), or ADD COLUMNS for a new one.")
    properties = dict(_rebucketed(table, action, kept))
    if table.format in ("parquet", "orc"):
        properties = _dropped_columns(has_files, table, old, new, properties)
    if table.format == "orc":
        properties = _file_types(has_files, table, action, retyped, new, properties)
    properties = _cut_columns(has_files, table, action, retyped, new, properties)
    properties = _columns_changed(table, old, new, retyped, properties)
    changed = table.evolve(columns=tuple(new), properties=properties)
    check_text_delimiter(changed)
    return ctx.catalog.alter_table(changed, table.version)


def _dropped_columns(has_files: Callable[[], bool], table: Table, old: list[Column], new: list[Column],
                     properties: dict[str, str]) -> dict[str, str]:
    """The table's properties with the dropped columns' record brought up to date, after
    refusing a column of ``new`` that the table's files hold under a type of the record that
    Spark's reader does not read as the column's type (storage.formats.reads_as): REPLACE
    COLUMNS (a INT) then ADD COLUMNS (b INT) over files holding b STRING made every later read
    fail, which CHANGE b b INT is refused for. The record is kept when the columns are dropped:
    the metastore has no other trace of them, and reading the files' footers to find them would
    cost a read per file of the table on each ALTER."""
    recorded: dict[str, list[str]] = json.loads(table.properties.get(DROPPED_COLUMNS) or "{}")
    kept = {c.name for c in new}
    dropped = [c for c in old if c.name not in kept]
    if not (recorded or dropped) or not has_files():
        properties.pop(DROPPED_COLUMNS, None)  # no file holds them
        return properties
    name = table.qualified_name
    for c in new:
        bad = next((t for t in recorded.get(c.name, ()) if not reads_as(table.format, t, c.type)), None)
        if bad is not None:
            raise UnsupportedError(
                f"{name} is stored as {table.format.upper()}, whose files name and type each column: its files hold "
                f"column {c.name} as {bad} (dropped by REPLACE COLUMNS), which Spark's reader does not read as "
                f"{c.type}, so every read of the table would fail or read wrong values. Give the column another "
                f"name, or its type {bad}, or make a new table with the new columns (CREATE TABLE ... AS SELECT ...).")
    for c in dropped:
        types = recorded.setdefault(c.name, [])
        if c.type not in types:
            types.append(c.type)
    properties[DROPPED_COLUMNS] = json.dumps(recorded, sort_keys=True)
    return properties


def _file_types(has_files: Callable[[], bool], table: Table, action: s.AddColumns | s.ChangeColumn,
                retyped: Mapping[str, tuple[str, str]], new: list[Column], properties: dict[str, str]
                ) -> dict[str, str]:
    """An ORC table's properties with its record of the other types its files may hold for each
    column (storage.formats.FILE_TYPES) brought up to date: a column retyped while the table holds
    files keeps its old type there (under its new name when renamed), one REPLACE COLUMNS dropped
    and ADD COLUMNS brought back the types it was dropped with, so that no filter on it is pushed
    into Spark's ORC reader, which fails on a literal of another kind than the file's column."""
    if not has_files():
        properties.pop(FILE_TYPES, None)
        return properties
    held: dict[str, list[str]] = json.loads(table.properties.get(FILE_TYPES) or "{}")
    if isinstance(action, s.ChangeColumn) and action.new_name not in (None, action.column):
        held = {(action.new_name or k) if k == action.column else k: v for k, v in held.items()}
    dropped: dict[str, list[str]] = json.loads(properties.get(DROPPED_COLUMNS) or "{}")
    before = {c.name for c in table.columns}
    for c in new:
        types = held.setdefault(c.name, [])
        more = [retyped[c.name][0]] if c.name in retyped else []
        more += dropped.get(c.name, []) if c.name not in before else []
        types.extend(t for t in more if t not in types)
    kept = {c.name: c.type for c in new}
    held = {k: [t for t in v if HiveType.parse(t) != HiveType.parse(kept[k])] for k, v in held.items() if k in kept}
    held = {k: v for k, v in held.items() if v}
    if held:
        properties[FILE_TYPES] = json.dumps(held, sort_keys=True)
    else:
        properties.pop(FILE_TYPES, None)
    return properties


def _cut_columns(has_files: Callable[[], bool], table: Table, action: s.AddColumns | s.ChangeColumn,
                 retyped: Mapping[str, tuple[str, str]], new: list[Column], properties: dict[str, str]
                 ) -> dict[str, str]:
    """The table's properties with its record of the columns read cut (storage.formats.CUT_COLUMNS)
    brought up to date: a column given a VARCHAR(n) or CHAR(n) type its files' values may not fit
    (a STRING, a longer VARCHAR, a VARCHAR's trailing spaces under CHAR) while the table holds
    files joins it, so that its old files read as Hive reads them ('one' as VARCHAR(2) is 'on');
    a renamed column keeps its place under its new name, a dropped one leaves."""
    cut = set(json.loads(table.properties.get(CUT_COLUMNS) or "[]"))
    if isinstance(action, s.ChangeColumn) and action.new_name not in (None, action.column) and action.column in cut:
        cut.discard(action.column)
        cut.add(action.new_name or action.column)
    added = {n for n, (a, b) in retyped.items() if n not in cut and _may_not_fit(a, b)}
    if added and has_files():
        cut |= added
    cut &= {c.name for c in new}
    if cut:
        properties[CUT_COLUMNS] = json.dumps(sorted(cut))
    else:
        properties.pop(CUT_COLUMNS, None)
    return properties


def _columns_changed(table: Table, old: list[Column], new: list[Column], retyped: Mapping[str, tuple[str, str]],
                     properties: dict[str, str]) -> dict[str, str]:
    """The table's properties with the time of this change recorded for each column whose
    statistics no longer describe it (storage.commit.COLUMNS_CHANGED): dropped, renamed (both
    names), retyped, added (a name dropped before), and in a TEXTFILE table (read by position)
    any column that moved."""
    before, after = [c.name for c in old], [c.name for c in new]
    changed = (set(before) ^ set(after)) | set(retyped)
    if table.format == "textfile":
        changed |= {n for i, n in enumerate(after) if i >= len(before) or before[i] != n}
    if not changed:
        return properties
    record: dict[str, int] = json.loads(table.properties.get(COLUMNS_CHANGED) or "{}")
    now = time.time_ns() // 1_000_000
    record.update((n, now) for n in changed)
    properties[COLUMNS_CHANGED] = json.dumps(record, sort_keys=True)
    if properties.get(COLUMN_STATS):  # an unpartitioned table's own: taken out (a partition's are ignored)
        properties[COLUMN_STATS] = json.dumps({k: v for k, v in json.loads(properties[COLUMN_STATS]).items()
                                               if k not in changed}, sort_keys=True)
    if properties.get(COLUMN_STATS_ACCURATE):
        claims = json.loads(properties[COLUMN_STATS_ACCURATE])
        if isinstance(claims.get("COLUMN_STATS"), dict):
            claims["COLUMN_STATS"] = {k: v for k, v in claims["COLUMN_STATS"].items() if k not in changed}
            properties[COLUMN_STATS_ACCURATE] = json.dumps(claims, separators=(",", ":"), sort_keys=True)
    return properties


def _may_not_fit(old: str, new: str) -> bool:
    """Whether a value of type ``old`` may read differently as ``new`` once cut (VARCHAR(n),
    CHAR(n): HiveVarchar, HiveChar)."""
    a, b = HiveType.parse(old), HiveType.parse(new)
    if b.base not in ("varchar", "char") or not b.params:
        return False
    if a.base in ("varchar", "char") and a.params and a.params[0] <= b.params[0]:
        return a.base == "varchar" and b.base == "char"  # a VARCHAR's trailing spaces
    return True


def _new_columns(table: Table, action: s.AddColumns | s.ChangeColumn) -> tuple[list[Column], bool]:
    """The table's columns after ADD/REPLACE COLUMNS or CHANGE COLUMN, and whether CHANGE moved
    its column (FIRST / AFTER c2)."""
    name = table.qualified_name
    old = list(table.columns)
    if isinstance(action, s.AddColumns):
        new, moved = (list(action.columns) if action.replace else [*old, *action.columns]), False
    else:
        at = next((i for i, c in enumerate(old) if c.name == action.column), None)
        if at is None:
            raise SemanticError(f"Invalid column reference {action.column}: {name} has no such column. "
                                f"DESCRIBE {name} lists its columns.", code=10002)
        col = old[at]
        changed = Column(action.new_name or col.name, action.new_type or col.type,
                         action.comment if action.comment is not None else col.comment)
        new = [*old[:at], changed, *old[at + 1:]]
        if action.first or action.after is not None:  # Hive's FIRST / AFTER c2
            new.remove(changed)
            to = 0 if action.first else next((i + 1 for i, c in enumerate(new) if c.name == action.after), None)
            if to is None:
                raise SemanticError(f"Invalid column reference {action.after}: {name} has no such column to put "
                                    f"{changed.name} after. DESCRIBE {name} lists its columns.", code=10002)
            new.insert(to, changed)
        moved = new.index(changed) != at
    return new, moved


def _refuse_text_shift(has_files: Callable[[], bool], table: Table, old: list[Column], new: list[Column]) -> None:
    """REPLACE COLUMNS of a TEXTFILE table with files that puts a column it keeps at another place
    (dropping a column before it): its files give the fields by position, so the column would read
    another column's field, silently (Hive reads so)."""
    at = {c.name: i for i, c in enumerate(old)}
    shifted = next(((i, c) for i, c in enumerate(new) if c.name in at and at[c.name] != i), None)
    if shifted is None or not has_files():
        return
    i, c = shifted
    held = old[i].name if i < len(old) else None
    reads = f"the field its files hold for {held}" if held else "a field its files do not hold"
    raise UnsupportedError(
        f"{table.qualified_name} is stored as TEXTFILE, whose files give the columns by position: REPLACE COLUMNS "
        f"would put column {c.name} at position {i + 1}, where it was {at[c.name] + 1}, so it would read {reads}. "
        "Nothing was changed. Keep the columns before it (REPLACE COLUMNS drops the last columns in place), or make "
        f"a new table without the column (CREATE TABLE t2 ... AS SELECT {', '.join(x.name for x in new)} "
        f"FROM {table.name}).")


def _refuse_duplicates(table_name: str, names: list[str]) -> None:
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise SemanticError(f"Duplicate column name: {dup} in table {table_name}: a column (or partition column) of "
                            "that name exists. Choose another name.", code=10036)


def _change_handler_columns(ctx: Context, table: Table, action: s.AddColumns | s.ChangeColumn) -> Table:
    """ADD, REPLACE COLUMNS and CHANGE COLUMN of a storage handler's table, by its handler (Hive 4
    changes an Iceberg table's schema so; a JDBC source's columns are its own)."""
    name = table.qualified_name
    handler = handler_for(table)
    assert handler is not None
    if isinstance(action, s.AddColumns) and not action.replace:
        _refuse_duplicates(name, [c.name for c in (*table.columns, *action.columns)])
        return ctx.catalog.alter_table(handler.add_columns(table, action.columns), table.version)
    new, _ = _new_columns(table, action)
    _refuse_duplicates(name, [c.name for c in new])
    changed = (handler.replace_columns(table, new) if isinstance(action, s.AddColumns)
               else handler.change_column(table, action.column, new))
    return ctx.catalog.alter_table(changed, table.version)


def _rebucketed(table: Table, action: s.AddColumns | s.ChangeColumn, kept: set[str]) -> Mapping[str, str]:
    """The table's properties after a column change: as Hive, a bucket or sort column renamed
    keeps its role under its new name; one REPLACE COLUMNS drops is refused."""
    b = table_buckets(table)
    if b is None:
        return table.properties
    if isinstance(action, s.ChangeColumn) and action.new_name not in (None, action.column):
        def to(c: str) -> str:
            return action.new_name if c == action.column and action.new_name else c
        b = Bucketing(tuple(to(c) for c in b.columns), tuple((to(c), asc) for c, asc in b.sorted_by), b.count)
    lost = [c for c in (*b.columns, *(c for c, _ in b.sorted_by)) if c not in kept]
    if lost:
        raise SemanticError(f"Invalid column reference {lost[0]}: it is a bucket or sort column of "
                            f"{table.qualified_name} (CLUSTERED BY / SORTED BY), which REPLACE COLUMNS cannot drop.",
                            code=10002)
    return {**table.properties, **b.properties()}


def _retyped(table: Table, old: list[Column], new: list[Column],
             action: s.AddColumns | s.ChangeColumn) -> dict[str, tuple[str, str]]:
    """The columns whose type changes, new name -> (old type, new type), each compared with
    the column its files hold for it: CHANGE's column with itself; for REPLACE COLUMNS, the
    column of the same name (Parquet, ORC: read by name) or place (TEXTFILE: by position).
    Hive compares by place whatever the format, so moving a column past one of another type
    fails there; here a column is compared with itself."""
    if isinstance(action, s.ChangeColumn):
        was = next(c for c in old if c.name == action.column)
        now = next(c for c in new if c.name == (action.new_name or action.column))
        pairs = [(was, now)]
    elif table.format == "textfile":
        pairs = list(zip(old, new))
    else:
        before = {c.name: c for c in old}
        pairs = [(before[c.name], c) for c in new if c.name in before]
    return {b.name: (a.type, b.type) for a, b in pairs if HiveType.parse(a.type) != HiveType.parse(b.type)}


def _has_files(ctx: Context, table: Table) -> bool:
    """Whether the table may hold files: an unpartitioned one's own, or any partition (counted
    in the metastore, not listed: a partition emptied by TRUNCATE counts, on the safe side)."""
    if not table.is_partitioned:
        return bool(table_files(table))
    return ctx.catalog.count_partitions(table) > 0


def alter_not(ctx: Context, table: Table, action: s.NotSkewed | s.NotStoredAsDirectories) -> Table:
    """NOT SKEWED (drops the skew and list bucketing) or NOT STORED AS DIRECTORIES."""
    spec = table_skew(table)
    if isinstance(action, s.NotSkewed):
        return _set_properties(ctx, table, cleared_properties())
    if spec is None:
        raise SemanticError(f"This operation is only valid on skewed table. "
                            f"{table.qualified_name}", code=10196)
    return _set_properties(ctx, table, SkewSpec(spec.columns, spec.values, False).properties())


# Table properties hivepark keeps for itself, changed only by their own statements.
_OWN_PROPERTY_FIX = {
    SKEW_COLUMNS: "ALTER TABLE t SKEWED BY (...) ON (...) [STORED AS DIRECTORIES] or NOT SKEWED",
    SKEW_VALUES: "ALTER TABLE t SKEWED BY (...) ON (...) [STORED AS DIRECTORIES] or NOT SKEWED",
    SKEW_STORED_AS_DIRS: "ALTER TABLE t SKEWED BY ... STORED AS DIRECTORIES or NOT STORED AS DIRECTORIES",
    SKEW_LOCATIONS: "ALTER TABLE t [PARTITION (...)] SET SKEWED LOCATION (...)",
    FILES_PARAM: "INSERT, LOAD DATA or MSCK REPAIR TABLE (it lists the table's files)",
}
# Keys of a storage-handler table that name its source or were fixed by CREATE TABLE ... STORED BY
_HANDLER_FIXED = ("iceberg.", "hivepark.iceberg.", "hivepark.write-id", PARTITION_SPEC_KEY)


def _check_property(table: Table, key: str, value: str | None) -> None:
    """Refuses a change to a property hivepark interprets that would not take effect (or would
    break the table); checks the value of one that does."""
    verb = "set" if value is not None else "unset"
    lower = key.lower()
    if table.is_view and lower == "external":
        raise SemanticError(f"Table property 'EXTERNAL' makes a table's data outlive it: {table.qualified_name} "
                            "is a view, with no data. Set another property.")
    if lower == STORAGE_HANDLER_KEY:
        raise UnsupportedError(f"Table property '{key}' cannot be {verb} with ALTER TABLE: a table's storage "
                               "handler is chosen by CREATE TABLE ... STORED BY. Create a new table instead.")
    if key in _OWN_PROPERTY_FIX:
        raise UnsupportedError(f"Table property '{key}' is kept by hivepark itself and cannot be {verb} with "
                               f"SET/UNSET TBLPROPERTIES: use {_OWN_PROPERTY_FIX[key]}.")
    if key == SKEW_AUTO_TOPK:
        if value is not None and not value.strip().isdigit():
            raise SemanticError(f"Table property '{key}' is the number of heaviest values each write "
                                f"stores in directories of their own: a whole number >= 0, got '{value}'.")
        return
    if is_handler_table(table):
        if any(lower.startswith(p) for p in _HANDLER_FIXED):
            raise UnsupportedError(f"Table property '{key}' of {table.qualified_name} was fixed by CREATE TABLE "
                                   f"... STORED BY (it names the table's source) and cannot be {verb}. "
                                   "Create a new table for another source.")
        return
    if lower.startswith("hivepark."):
        raise UnsupportedError(f"Table property '{key}' is reserved for hivepark's own metadata (keys starting "
                               f"with 'hivepark.') and cannot be {verb} on {table.qualified_name}. Choose "
                               "another name.")


def alter_properties(ctx: Context, table: Table,
                     action: s.SetTableProperties | s.UnsetTableProperties) -> Table:
    """ALTER TABLE t SET TBLPROPERTIES (...) / UNSET TBLPROPERTIES [IF EXISTS] (...), as Hive:
    stored in the metastore; ``EXTERNAL`` ('TRUE'/'FALSE') changes the table's type (Hive's
    metastore does the same), ``hivepark.skew.auto.topk`` takes effect at the next write; the
    properties hivepark keeps for itself are refused (:func:`_check_property`). A storage
    handler validates its table's new properties."""
    changes: dict[str, str | None]
    if isinstance(action, s.SetTableProperties):
        changes = dict(action.properties)
    else:
        if not action.if_exists:
            for key in action.keys:
                if key not in table.properties:
                    raise SemanticError(
                        "Please use the following syntax if not sure whether the property existed or not:\n"
                        "ALTER TABLE tableName UNSET TBLPROPERTIES IF EXISTS (key1, key2, ...)\n"
                        f" The following property {key} does not exist in {table.name}", code=10215)
        changes = {k: None for k in action.keys}
    for key, value in changes.items():
        _check_property(table, key, value)
    merged: dict[str, str | None] = {**table.properties, **changes}
    props = {k: v for k, v in merged.items() if v is not None}
    new = table.evolve(properties=props)
    if "EXTERNAL" in changes:  # Hive's ObjectStore: the EXTERNAL parameter decides the type
        new = new.evolve(table_type=EXTERNAL if (changes["EXTERNAL"] or "").strip().lower() == "true"
                         else MANAGED)
    handler = handler_for(table)
    if handler is not None:
        handler.validate({k: v for k, v in props.items() if k.lower() != STORAGE_HANDLER_KEY})
    check_text_delimiter(new)  # a TEXTFILE's escape or separators, which its reads and writes take
    return ctx.catalog.alter_table(new, table.version)


def touch(ctx: Context, table: Table, action: s.Touch) -> Table:
    """ALTER TABLE t TOUCH [PARTITION (...) ...], as Hive: the ``transient_lastDdlTime`` of the
    table, or of each partition the (partial) specs match, set to now; no file and no other
    field changes. A spec matching no partition is Hive's 10006."""
    now = str(int(time.time()))
    if not action.specs:
        return _set_properties(ctx, table, {"transient_lastDdlTime": now})
    if handler_name(table) is not None:
        raise SemanticError(f"{table.qualified_name} has no metastore partitions to touch: its storage handler "
                            "keeps its own. ALTER TABLE t TOUCH (without PARTITION) touches the table.")
    touched: dict[tuple[str | None, ...], Partition] = {}
    for spec in action.specs:
        found = named_partitions(table, spec, ctx.catalog.list_partitions(table, spec_filter(table, spec)))
        if not found:
            raise NoSuchPartition(f"Partition not found {given_spec_text(spec)}: no partition "
                                  f"of {table.qualified_name} matches it. SHOW PARTITIONS {table.name} lists them.",
                                  code=10006)
        touched.update((p.values, p._replace(parameters={**p.parameters, "transient_lastDdlTime": now}))
                       for p in found)
    return ctx.catalog.commit(table, table.version, put=list(touched.values()))


def _set_properties(ctx: Context, table: Table, changes: dict[str, str | None]) -> Table:
    props = {**table.properties, **changes}
    props = {k: v for k, v in props.items() if v is not None}
    return ctx.catalog.alter_table(table.evolve(properties=props), table.version)


def set_skewed_location(ctx: Context, table: Table, action: s.SetSkewedLocation,
                        spec: s.PartitionSpec | None) -> Table:
    """ALTER TABLE t [PARTITION (...)] SET SKEWED LOCATION (key='uri', ...): changes the
    location map of one partition (or of an unpartitioned table's data)."""
    check_skewed_location(action)
    part: Partition | None = None
    if spec is not None:
        values = full_spec(table, spec)
        part = ctx.catalog.get_partition(table, values)
        if part is None:
            raise NoSuchPartition(
                f"Partition not found {layout.make_part_name(table.partition_key_names(), values)}"
                f" in {table.qualified_name}: SHOW PARTITIONS {table.name} lists them")
    elif table.is_partitioned:
        raise SemanticError(f"{table.qualified_name} is partitioned: give the partition whose "
                            "skewed locations change, ALTER TABLE t PARTITION (...) SET SKEWED "
                            "LOCATION (...)")
    params = part.parameters if part is not None else table.properties
    current = partition_layout(params)
    skew = table_skew(table)
    if current is None and skew is None:
        raise SemanticError(f"This operation is only valid on skewed table. "
                            f"{table.qualified_name}", code=10196)
    if current is None:
        # Hive reads the default directory by its conventional name when the map has no
        # HIVE_DEFAULT_LIST_BUCKETING_KEY entry (ListBucketingPruner), so a map that names only
        # skewed values must keep it, or the rows of every other value would not be read.
        cols = skew.columns  # type: ignore[union-attr]
        current = SkewLayout(cols, skew.values,  # type: ignore[union-attr]
                             ((None, layout.lb_default_dir_name(len(cols))),))
    base = current
    given = location_changes(table, base, action)
    if part is not None:
        for key, loc in given.items():
            _check_skewed_location(ctx, table, part, key, loc)
    changes = {k: fs.normalize(v) for k, v in given.items()}
    new = base.with_locations(changes).to_json()
    # The map is now the truth, as in Hive: the data is found by listing its directories.
    if part is not None:
        put = part.evolve(parameters={**part.parameters, SKEW_LOCATIONS: new}, files=None)
        return ctx.catalog.commit(table, table.version, put=[put])
    return ctx.catalog.commit(table, table.version,
                              table_parameters={SKEW_LOCATIONS: new, FILES_PARAM: None})


def _check_skewed_location(ctx: Context, table: Table, part: Partition, key: tuple[str, ...] | None,
                           given: str) -> None:
    """A partition's skewed location may lie anywhere, as in Hive (its tests point one into
    another table's directory), but not where another partition of its own table has (or would
    get, by default) its files, nor where another partition's skewed location is: each file's
    partition is found from its directory, so a file there would be read as both partitions' rows
    and never once as its own (and an INSERT writing both would write one file over the other)."""
    location = fs.normalize(given)
    keys = table.partition_key_names()
    value = "the default directory" if key is None else f"skewed value ({', '.join(key)})"
    what = (f"SET SKEWED LOCATION '{given}' for {value} of partition {spec_text(keys, part.values)} of "
            f"{table.qualified_name}")
    fix = (f"Give a directory outside the table's other partitions (e.g. below this partition's own, "
           f"{part.location.rstrip('/')}/...).")
    if layout.is_within(location, table.location):
        raise SemanticError(f"{what} is or contains the directory of the table ({table.location}), which holds every "
                            f"partition's: its files would be read as rows of this partition and of theirs. {fix}")
    taken = layout.default_partition_at(table.location, keys, location)
    if taken is not None and (taken[1] or tuple(taken[0]) != tuple(part.values)):
        whose = (f"every partition {spec_text(keys[:len(taken[0])], taken[0])[:-1]}, ...}}" if taken[1]
                 else f"partition {spec_text(keys, taken[0])}")
        raise SemanticError(f"{what} is, holds or lies in the directory where {whose} is made by default: its "
                            "files would be read as rows of both partitions (and an INSERT writing both would write "
                            f"one file over the other). {fix}")
    others = [(values, where, "directory") for db, name, values, where in ctx.catalog.locations_overlapping(location)
              if (db, name) == (table.db, table.name) and values is not None and tuple(values) != part.values]
    others += [(values, where, "skewed location") for db, name, values, where
               in ctx.catalog.skewed_locations_overlapping(location)
               if (db, name) == (table.db, table.name) and values is not None and tuple(values) != part.values]
    if others:
        values, where, kind = others[0]
        raise SemanticError(f"{what} is, holds or lies in the {kind} of partition {spec_text(keys, values)} "
                            f"({where}): its files would be read as rows of both partitions (and an INSERT writing "
                            f"both would write one file over the other). {fix}")


# ---------------------------------------------------------------- MSCK REPAIR TABLE


def msck_repair(ctx: Context, stmt: s.MsckRepair) -> DataFrame:
    """Registers partition directories found on disk and refreshes each partition's files. As
    Hive's checker, every MSCK first lists the directories the metastore lacks (``Partitions not
    in metastore:``) and the partitions whose directory is gone (``Partitions missing from
    filesystem:``), whatever its mode; ``MSCK TABLE t`` without REPAIR changes nothing. With
    REPAIR, ADD PARTITIONS (the default) registers the directories, DROP PARTITIONS (Hive 3)
    forgets the partitions whose directory is gone, and SYNC PARTITIONS does both.

    Every directory down to the partition depth is checked as Hive's checker does: a key is its
    column whatever its case (registered in that directory); a name that is not ``column=value``,
    a key out of place, or files in a directory above the partition depth (``ds=f/`` holding files
    in a table partitioned by (ds, hr), Hive's "MSCK finds a file rather than a directory") cannot
    be registered (below). An empty directory above the partition depth holds no row and is
    passed over (Hive's checker fails on it: "MSCK is missing partition columns").

    A directory's values are bound to the partition columns' types as a static value is
    (:meth:`hivepark.types.HiveType.partition_text`): ``n=12.50`` of a DECIMAL(10,2) column is the
    partition ``n=12.5``, registered with that directory as its location. A directory whose value
    does not fit its column (``n=300`` of a TINYINT), or that names the value of another partition,
    cannot be registered: by default (``hive.msck.path.validation=throw``) the statement fails,
    naming each such directory, and registers nothing; with ``skip`` (or Hive's ``ignore``) the
    other directories are registered and each skipped one is reported in the output."""
    table = ctx.table(stmt.table)
    if not table.is_partitioned:
        return ctx.rows(["result"], [])
    if stmt.repair:  # the files it records are another tool's
        table = cut_foreign_files(ctx, table)
    keys = table.partition_key_names()
    types = [k.hive_type for k in table.partition_keys]
    partitions = ctx.catalog.list_partitions(table)
    known = {p.values: p for p in partitions}
    at = {fs.normalize(p.location): p for p in partitions}
    registered = _Locations(at)
    claimed: dict[tuple[str | None, ...], str] = {}
    put: list[Partition] = []
    added: list[str] = []
    root = fs.normalize(table.location)
    leaves, misplaced = _partition_dirs(root, len(keys))
    name_pattern = ctx.partition_name_pattern()
    problems: list[tuple[str, str]] = [
        (rel, f"it holds files ({name}) where the directories of partition column {keys[depth]} go (the table "
              f"is partitioned by {', '.join(keys)}): they are never read. Move them into a partition directory "
              f"({layout.make_part_name(keys, ['...'] * len(keys))})")
        for path, rel, depth, name in misplaced if not registered.holds(path)]
    now = int(time.time())
    for leaf in leaves:
        rel = leaf[len(root):].strip("/")
        old = at.get(fs.normalize(leaf))
        try:
            parsed = layout.parse_part_name(rel)
        except HiveParkError:
            parsed = []
        # as Hive's checker: a key matches its column whatever its case (Spark's
        # partitionBy("DS") writes DS=...), and a name that is not column=value or a key out
        # of place is reported, not skipped (unless a registered partition's directory holds
        # it or lies in it: a partition given its own LOCATION)
        found = [k.lower() for k, _ in parsed]
        if old is None and found != list(keys):
            if not registered.near(fs.normalize(leaf)):
                wrong = next((i for i, k in enumerate(found) if k != keys[i]), None)
                problems.append((rel, "Invalid partition name: each directory level is column=value"
                                 if wrong is None else
                                 f"Unexpected partition key {parsed[wrong][0]} found where the table's partition "
                                 f"column {keys[wrong]} goes (its columns: {', '.join(keys)})"))
            continue
        live = None  # the leaf's files less other statements' uncommitted ones, from one listing
        if old is None:
            entries = fs.list_files(leaf)
            live = listed_files(leaf, [e for e in entries if not e.is_dir])
            if entries and not any(e.is_dir for e in entries) and not live:
                continue  # another statement's write in flight (or killed): its commit registers it
        if old is not None:
            values = old.values  # a registered partition's directory: its files are refreshed
        else:
            values, problem = _directory_values(keys, types, [v for _, v in parsed])
            if problem is None:  # Hive's metastore refuses such a partition (Msck: "invalid characters")
                problem = layout.partition_name_problem(name_pattern, values)
            if problem is None and values in known:
                problem = (f"it holds the same value as partition {layout.make_part_name(keys, values)}, "
                           f"whose directory is {known[values].location}")
            elif problem is None and values in claimed:
                problem = f"it holds the same value as directory {claimed[values]}"
            if problem is not None:
                problems.append((rel, problem))
                continue
            claimed[values] = rel
        if old is None:
            name = layout.make_part_name(keys, values)
            added.append(f"{table.name}:{name}" + (f" (directory {rel})" if name != rel else ""))
        if not stmt.repair or stmt.mode == "DROP":
            continue  # nothing registered or refreshed: the files need not be read
        params = dict(old.parameters) if old else {}
        files = live if live is not None else listed_files(leaf)  # less other statements' uncommitted files
        names = [os.path.basename(f.path) for f in files]
        for loc in own_lb_dirs(leaf, params):  # list-bucketing directories inside the partition (SET SKEWED
            sub = listed_files(f"{leaf}/{loc}")  # LOCATION's inside it too: the files were dropped from its list)
            files += sub
            names += [f"{loc}/{os.path.basename(f.path)}" for f in sub]
        params.update(_file_stats(table, files, str(now)))
        put.append(Partition(values, old.location if old else leaf, params,
                             tuple(sorted(names)), now))
    mode = (ctx.conf.get("hive.msck.path.validation") or "throw").strip().lower()
    statement = f"MSCK {'REPAIR ' if stmt.repair else ''}TABLE {table.qualified_name}"
    if problems and mode not in ("skip", "ignore"):
        shown = "; ".join(f"{rel or '.'}: {why}" for rel, why in problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise InvalidPartitionSpec(
            f"{statement} {'registered nothing' if stmt.repair else 'failed'}: these partition directories cannot "
            f"be registered: {shown}{more}. Rename or remove them, or SET hive.msck.path.validation=skip to "
            f"{'register the other directories and skip these' if stmt.repair else 'check the others'}.")
    # the registered partitions whose directory is gone (DROP / SYNC PARTITIONS forget them)
    gone = [p for p in partitions if not fs.exists(p.location)]
    gone_names = [f"{table.name}:{layout.make_part_name(keys, p.values)}" for p in gone]
    missing = [a.split(" (directory ")[0] for a in added]
    checked = ([("\t".join(["Partitions not in metastore:", *missing]),)] if missing else []) \
        + ([("\t".join(["Partitions missing from filesystem:", *gone_names]),)] if gone else [])
    skipped = [(f"{'Repair: ' if stmt.repair else ''}Skipped directory {table.name}:{rel or '.'} ({why})",)
               for rel, why in problems]
    if not stmt.repair:  # MSCK TABLE t only checks, as Hive's: nothing is registered or refreshed
        return ctx.rows(["result"], checked + skipped)
    if stmt.mode == "DROP":
        added = []
    if stmt.mode == "ADD":
        gone, gone_names = [], []
    if put or gone:
        ctx.catalog.commit(table, table.version, put=put, drop=[p.values for p in gone])
    return ctx.rows(["result"], checked + [(f"Repair: Added partition to metastore {a}",) for a in added]
                    + [(f"Repair: Dropped partition from metastore {n}",) for n in gone_names] + skipped)


def _partition_dirs(root: str, depth: int) -> tuple[list[str], list[tuple[str, str, int, str]]]:
    """The directories ``depth`` levels below ``root`` (a table's partition directories), and
    each directory above that depth that holds files, as (path, path relative to ``root``,
    its depth, a file's name): files no partition reads."""
    level, misplaced = [root], []
    for d in range(depth):
        below = []
        for path in level:
            entries = fs.list_files(path)
            stray = sorted(os.path.basename(e.path) for e in entries if not e.is_dir)
            if stray:
                rel = path[len(root):].strip("/")
                misplaced.append((fs.normalize(path), rel, d, stray[0] + (f", {len(stray) - 1} more"
                                                                          if len(stray) > 1 else "")))
            below += [e.path for e in entries if e.is_dir]
        level = below
    return sorted(level), misplaced


class _Locations:
    """The registered partitions' directories (normalized), indexed for MSCK's questions about
    a directory it found: each answered by a few lookups rather than a pass over every location
    (with 24,000 partitions and 3,000 misnamed directories, that pass took most of a minute).

    >>> at = _Locations(["/w/t/ds=1", "/w/t/ds=2/hr=3", "/elsewhere/p"])
    >>> at.near("/w/t/ds=2"), at.near("/w/t/ds=1/x"), at.near("/w/t/ds=3"), at.near("/w/t/ds")
    (True, True, False, False)
    >>> at.holds("/w/t/ds=1"), at.holds("/w/t/ds=1/a/b"), at.holds("/w/t"), at.holds("/elsewhere")
    (True, True, False, False)
    """

    def __init__(self, locations: Iterable[str]) -> None:
        self._sorted = sorted(locations)
        self._set = set(self._sorted)

    def _ancestors(self, path: str) -> Iterator[str]:
        return (path[:i] for i, ch in enumerate(path) if ch == "/" and i)

    def near(self, path: str) -> bool:
        """Whether a registered directory holds ``path`` or lies inside it (not ``path``
        itself)."""
        below = path + "/"
        i = bisect.bisect_left(self._sorted, below)  # the locations starting so sort from here
        if i < len(self._sorted) and self._sorted[i].startswith(below):
            return True
        return any(a in self._set for a in self._ancestors(path))

    def holds(self, path: str) -> bool:
        """Whether ``path`` is a registered directory or lies inside one."""
        return path in self._set or any(a in self._set for a in self._ancestors(path))


def _file_stats(table: Table, files: Sequence[fs.FileEntry], now: str, rows: bool = True) -> dict[str, str]:
    """The statistics a partition's (or table's) files give (MSCK REPAIR, ANALYZE): numFiles,
    totalSize and, with ``rows``, numRows counted in them."""
    out = {"numFiles": str(len(files)), "totalSize": str(sum(f.size for f in files)), "transient_lastDdlTime": now}
    if rows:
        out["numRows"] = str(count_rows(table, files))
    return out


def analyze_statistics(ctx: Context, stmt: s.AnalyzeStatistics) -> DataFrame:
    """ANALYZE TABLE t [PARTITION (...)] COMPUTE STATISTICS [NOSCAN], as Hive: the table's (or
    each partition's the spec names; ``PARTITION (ds)`` all) ``numFiles`` and ``totalSize``
    from its files, and ``numRows`` counted in them (Parquet and ORC footers, text lines)
    unless NOSCAN, into the metastore. Writes keep these current; ANALYZE is for the files
    added by hand, and the partitions ALTER TABLE ADD PARTITION or a LOCATION holding files
    registered without them."""
    table = ctx.table(stmt.table)
    if is_handler_table(table):
        raise UnsupportedError(f"{table.qualified_name}'s statistics are its storage handler's source's: "
                               "ANALYZE works on warehouse tables.")
    now = str(int(time.time()))

    def stats(params: Mapping[str, str], paths: Sequence[str]) -> dict[str, str]:
        files = [e for p in paths for e in fs.list_files(p) if not e.is_dir]
        return {**params, **_file_stats(table, files, now, rows=not stmt.noscan)}

    if not table.is_partitioned:
        if stmt.partition:
            raise SemanticError(f"Table {table.qualified_name} is not partitioned but partition spec exists: "
                                f"{stmt.partition.text}. Remove the PARTITION clause.", code=10241)
        ctx.catalog.alter_table(table.evolve(properties=stats(table.properties, table_files(table))),
                                table.version)
        return ctx.empty()
    static = s.PartitionSpec(tuple(e for e in stmt.partition.entries if not e[2]), stmt.partition.text)
    parts = (named_partitions(table, static, ctx.catalog.list_partitions(table, spec_filter(table, static)))
             if static.entries else ctx.catalog.list_partitions(table))
    if not parts and len(static.entries) == len(table.partition_keys):
        raise NoSuchPartition(f"Partition not found {spec_text(table.partition_key_names(), full_spec(table, static))}"
                              f" in {table.qualified_name}: SHOW PARTITIONS {table.name} lists them")
    put = [p.evolve(parameters=stats(p.parameters, current_files(p.location, p.files, p.parameters)))
           for p in parts]
    if put:
        ctx.catalog.commit(table, table.version, put=put)
    return ctx.empty()


def _directory_values(keys: Sequence[str], types: Sequence[HiveType], raw: Sequence[str | None]
                      ) -> tuple[tuple[str | None, ...], str | None]:
    """A partition directory's values bound to the key types, in their canonical text, and
    why they cannot be (None when they can)."""
    values: list[str | None] = []
    for key, typ, value in zip(keys, types, raw):
        if value is not None and "\x00" in value:  # as a static value (sql/validate.py)
            return (), (f"value of column {key} contains a NUL character (\\0, %00 in the directory's name), which "
                        "a partition value cannot hold")
        try:
            values.append(typ.partition_text(value))
        except PartitionValueError as e:
            return (), f"value '{value}' of column {key} is not a valid {typ.text} ({e.reason})"
        except ValueError as e:
            return (), f"value '{value}' of column {key}: {e}"
    return tuple(values), None
