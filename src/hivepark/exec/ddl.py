"""DDL: databases, tables, partitions (ADD/DROP), RENAME."""

from __future__ import annotations

import posixpath
import time

from pyspark.sql import DataFrame
from sqlglot import exp

from hivepark import layout
from hivepark.catalog.models import EXTERNAL, MANAGED, Column, Database, Partition, Table
from hivepark.errors import (
    AlreadyExistsError,
    InvalidPartitionSpec,
    NoSuchPartition,
    NoSuchTable,
    SemanticError,
    UnsupportedError,
)
from hivepark.exec import skew
from hivepark.exec.context import Context
from hivepark.expr import EqualTo, Expr, IsNull, and_all
from hivepark.sql.analyzer import column_defs, partition_spec, table_name
from hivepark.sql.dialect import (
    AddPartitions,
    AlterNot,
    AlterSkewed,
    Concatenate,
    SetSkewedLocation,
    SkewedByProperty,
)
from hivepark.storage import fs
from hivepark.storage.formats import normalize_format


def database_location(ctx: Context, db: str) -> str:
    return ctx.warehouse if db == "default" else layout.database_location(ctx.warehouse, db)


def create_database(ctx: Context, node: exp.Create) -> DataFrame:
    name = node.this.name.lower()
    props = node.args.get("properties")
    location = database_location(ctx, name)
    comment = None
    for p in props.expressions if props else []:
        if isinstance(p, exp.LocationProperty):
            location = fs.normalize(p.this.name)
        elif isinstance(p, exp.SchemaCommentProperty):
            comment = p.this.name
    ctx.catalog.create_database(Database(name, location, comment),
                                if_not_exists=bool(node.args.get("exists")))
    fs.makedirs(location)
    return ctx.empty()


def _drop_target(node: exp.Drop) -> exp.Table:
    tables = node.args.get("tables") or []
    return tables[0] if tables else node.this


def drop_database(ctx: Context, node: exp.Drop) -> DataFrame:
    name = _drop_target(node).name.lower()
    if name == "default":
        raise SemanticError("Can not drop default database")
    try:
        db = ctx.catalog.get_database(name)
    except SemanticError:
        if node.args.get("exists"):
            return ctx.empty()
        raise
    dropped = ctx.catalog.drop_database(name, cascade=bool(node.args.get("cascade")))
    for t in dropped:
        _delete_table_data(ctx, t, partitions=None)
    fs.delete_dir_if_empty(db.location)
    if ctx.current_db == name:
        ctx.current_db = "default"
    return ctx.empty()


def create_table(ctx: Context, node: exp.Create) -> tuple[Table, exp.Expression | None]:
    """Builds the table a CREATE TABLE describes (not yet stored) and its AS query, if any."""
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    db, name = table_name(target, ctx.current_db)
    ctx.catalog.get_database(db)
    columns = column_defs(node.this) if isinstance(node.this, exp.Schema) else []
    props = node.args.get("properties")
    kw: dict = {"format": normalize_format(ctx.conf.get("hive.default.fileformat") or "textfile")}
    tblprops: dict[str, str] = {}
    like: exp.Table | None = None
    part_keys: list[Column] = []
    skewed: SkewedByProperty | None = None
    for p in props.expressions if props else []:
        if isinstance(p, SkewedByProperty):
            skewed = p
        elif isinstance(p, exp.ClusteredByProperty):
            pass  # rejected below (with skew: Hive's LB + bucketing restriction)
        elif isinstance(p, exp.PartitionedByProperty):
            part_keys = column_defs(p.this) + _untyped_partition_keys(
                ctx, p.this, node.args.get("expression"))
        elif isinstance(p, exp.RowFormatDelimitedProperty):
            if p.args.get("fields") is not None:
                kw["field_delim"] = p.args["fields"].name
        elif isinstance(p, exp.FileFormatProperty):
            kw["format"] = normalize_format(p.this.name)
        elif isinstance(p, exp.LocationProperty):
            kw["location"] = fs.normalize(p.this.name)
        elif isinstance(p, exp.ExternalProperty):
            kw["table_type"] = EXTERNAL
        elif isinstance(p, exp.LikeProperty):
            like = p.this
        elif isinstance(p, exp.Property):
            tblprops[p.name] = p.args["value"].name
        elif isinstance(p, exp.SchemaCommentProperty):
            tblprops["comment"] = p.this.name
        elif isinstance(p, exp.TemporaryProperty):
            raise UnsupportedError("CREATE TEMPORARY TABLE is not supported: use a Spark temp view")
    if like is not None:
        src = ctx.table(like)
        columns, part_keys = list(src.columns), list(src.partition_keys)
        kw.setdefault("field_delim", src.field_delim)
        if not any(isinstance(p, exp.FileFormatProperty) for p in props.expressions):
            kw["format"] = src.format
        tblprops = {**skew.copy_for_like(src), **tblprops}
    dup = {c.name for c in columns} & {c.name for c in part_keys}
    if dup:
        raise SemanticError(f"Column repeated in partitioning columns: {sorted(dup)[0]}. A "
                            "partition column is not also a data column: remove it from one list.")
    kw.setdefault("location", layout.table_location(ctx.warehouse, db, name)
                  if db == "default" else f"{database_location(ctx, db)}/{name}")
    kw.setdefault("table_type", MANAGED)
    if skewed is not None:
        if not columns and node.args.get("expression") is not None:
            columns = _query_columns(ctx, node.args["expression"], len(part_keys))
        tblprops.update({k: v for k, v in skew.skew_spec(columns, skewed, part_keys)
                         .properties().items() if v is not None})
    table = Table(db, name, tuple(columns), tuple(part_keys), properties=tblprops,
                  create_time=int(time.time()), **kw)
    skew.check_create(list(props.expressions) if props else [], table)
    if props and any(isinstance(p, exp.ClusteredByProperty) for p in props.expressions):
        raise UnsupportedError("CLUSTERED BY ... INTO n BUCKETS (bucketed tables) is not "
                               "supported by hivepark: remove the clause")
    return table, node.args.get("expression")


def _query_columns(ctx: Context, query: exp.Expression, n_keys: int) -> list[Column]:
    """The data columns a CTAS query gives (its schema; no Spark job runs)."""
    from hivepark.exec.query import run_query

    fields = run_query(ctx, query)[0].schema.fields
    return [Column(f.name.lower(), f.dataType.simpleString())
            for f in fields[:len(fields) - n_keys]]


def _untyped_partition_keys(ctx: Context, schema: exp.Schema,
                            query: exp.Expression | None) -> list[Column]:
    """``PARTITIONED BY (p)`` without types: allowed in CTAS, typed from the query."""
    names = [e.name.lower() for e in schema.expressions if not isinstance(e, exp.ColumnDef)]
    if not names:
        return []
    if query is None:
        raise SemanticError(f"Partition column {names[0]} has no type: give it one, e.g. "
                            f"PARTITIONED BY ({names[0]} STRING)")
    from hivepark.exec.query import run_query

    fields = run_query(ctx, query)[0].schema.fields
    last = [f.name.lower() for f in fields[len(fields) - len(names):]]
    if len(fields) <= len(names) or last != names:
        raise SemanticError(
            f"The partition columns ({', '.join(names)}) of CREATE TABLE ... AS SELECT must be "
            f"the last columns of the SELECT, in PARTITIONED BY order; the SELECT ends with "
            f"({', '.join(last)}). Reorder the SELECT list.")
    return [Column(f.name.lower(), f.dataType.simpleString())
            for f in fields[len(fields) - len(names):]]


def _partition_location(table: Table, given: str) -> str:
    """ADD PARTITION ... LOCATION: absolute paths and URIs as given; a relative path is
    resolved against the table's directory, as Hive does (``new Path(tbl.getPath(), loc)``)."""
    if "://" in given or given.startswith(("/", "file:")):
        return fs.normalize(given)
    joined = f"{table.location.rstrip('/')}/{given}"
    if "://" not in joined:
        return fs.normalize(joined)
    scheme, _, rest = joined.partition("://")
    authority, _, path = rest.partition("/")
    return f"{scheme}://{authority}{posixpath.normpath('/' + path)}"


def store_table(ctx: Context, table: Table, if_not_exists: bool) -> Table | None:
    """Registers a new table and creates its directory; None if it existed (IF NOT EXISTS)."""
    try:
        existing = ctx.catalog.get_table(table.db, table.name)
    except NoSuchTable:
        existing = None
    if existing is not None:
        if if_not_exists:
            return None
        raise AlreadyExistsError(f"Table already exists: {table.qualified_name}. Use CREATE "
                                 "TABLE IF NOT EXISTS, or DROP TABLE first.")
    if not table.columns:
        raise SemanticError(f"Table {table.qualified_name} needs at least one data column")
    stored = ctx.catalog.create_table(table)
    fs.makedirs(stored.location)
    return stored


def drop_table(ctx: Context, node: exp.Drop) -> DataFrame:
    target = _drop_target(node)
    db, name = table_name(target, ctx.current_db)
    try:
        table = ctx.catalog.get_table(db, name)
    except NoSuchTable:
        if node.args.get("exists"):
            return ctx.empty()
        raise
    parts = ctx.catalog.list_partitions(table) if table.is_partitioned else []
    ctx.catalog.drop_table(db, name)
    _delete_table_data(ctx, table, parts)
    return ctx.empty()


def _delete_table_data(ctx: Context, table: Table, partitions: list[Partition] | None) -> None:
    if table.is_external:
        return
    for p in partitions or []:
        if not layout.is_within(table.location, p.location):
            fs.delete_dir(p.location)
    fs.delete_dir(table.location)


def alter_table(ctx: Context, node: exp.Alter) -> DataFrame:
    table = ctx.table(node.this)
    part_node = node.this.args.get("partition")
    for action in node.args.get("actions") or []:
        if isinstance(action, SetSkewedLocation):
            table = skew.set_skewed_location(ctx, table, action, part_node)
            continue
        if isinstance(action, Concatenate):
            from hivepark.exec.lb_write import concatenate
            table = concatenate(ctx, table, part_node)
            continue
        if part_node is not None:
            raise UnsupportedError(f"ALTER TABLE ... PARTITION (...) {action.key.upper()} is "
                                   "not supported: this ALTER applies to the whole table")
        if isinstance(action, AlterSkewed):
            table = skew.alter_skewed(ctx, table, action)
            continue
        if isinstance(action, AlterNot):
            table = skew.alter_not(ctx, table, action)
            continue
        skew.check_column_change(table, action)
        if isinstance(action, AddPartitions):
            add_partitions(ctx, table, action)
        elif isinstance(action, exp.DropPartition):
            drop_partitions(ctx, table, action, bool(node.args.get("exists")) or
                            bool(action.args.get("exists")))
        elif isinstance(action, exp.AlterRename):
            rename_table(ctx, table, action.this)
        else:
            raise UnsupportedError(f"ALTER TABLE ... {action.key.upper()} is not supported yet")
        table = ctx.catalog.get_table(table.db, table.name) if not isinstance(
            action, exp.AlterRename) else table
    return ctx.empty()


def full_spec(table: Table, spec: list[tuple[str, str | None, bool]],
              what: str = "partition") -> tuple[str | None, ...]:
    """Values for every partition key from a fully static spec, validated and normalised."""
    check_spec_columns(table, spec)
    given = {c: v for c, v, _ in spec}
    missing = [k for k in table.partition_key_names() if k not in given]
    if missing or any(not static for _, _, static in spec):
        raise InvalidPartitionSpec(
            f"Partition spec for {what} must give a value for every partition column "
            f"({', '.join(table.partition_key_names())}); missing: "
            f"{', '.join(missing or [c for c, _, s in spec if not s])}")
    return tuple(normalize_value(table, k, given[k]) for k in table.partition_key_names())


def check_spec_columns(table: Table, spec: list[tuple[str, str | None, bool]]) -> None:
    if not table.is_partitioned and spec:
        raise InvalidPartitionSpec(f"Table {table.qualified_name} is not partitioned but "
                                   "partition spec exists: remove the PARTITION clause")
    keys = set(table.partition_key_names())
    bad = [(c, v) for c, v, _ in spec if c not in keys]
    if bad:
        shown = ", ".join(f"{c}={v if v is not None else 'null'}" for c, v in bad)
        raise InvalidPartitionSpec(
            f"Partition spec {{{shown}}} contains non-partition columns. The partition "
            f"columns of {table.qualified_name} are: {', '.join(table.partition_key_names())}")
    names = [c for c, _, _ in spec]
    if len(set(names)) != len(names):
        raise InvalidPartitionSpec(f"Partition spec names a column twice: {names}")


def normalize_value(table: Table, key: str, value: str | None) -> str | None:
    """A static partition value checked against its column's type (Hive's typecheck)."""
    import datetime
    from decimal import Decimal, InvalidOperation

    from hivepark.catalog.models import type_family

    if value is None or value == "" or value == layout.DEFAULT_PARTITION_NAME:
        return None
    typ = table.partition_types()[key]
    fam = type_family(typ)
    base = typ.split("(")[0]
    try:
        if fam == "numeric" and base in ("tinyint", "smallint", "int", "integer", "bigint"):
            return str(int(value.strip()))
        if fam == "numeric":
            return str(Decimal(value.strip()))
        if fam == "date":
            return datetime.date.fromisoformat(value.strip()).isoformat()
    except (ValueError, InvalidOperation):
        raise InvalidPartitionSpec(
            f"Partition value '{value}' for column {key} is not a valid {typ}: give a "
            f"{typ} value, e.g. PARTITION ({key}={'1' if fam == 'numeric' else chr(39) + '2024-01-31' + chr(39)})"
        ) from None
    for ch in (key,):
        layout.check_part_value(ch, value)
    return value


def add_partitions(ctx: Context, table: Table, action: AddPartitions) -> None:
    if not table.is_partitioned:
        raise InvalidPartitionSpec(f"Table {table.qualified_name} is not partitioned: it has "
                                   "no partitions to add")
    parts = []
    for tup in action.expressions:
        spec_node, loc_node = tup.expressions
        values = full_spec(table, partition_spec(spec_node))
        location = (_partition_location(table, loc_node.name) if isinstance(loc_node, exp.Literal)
                    else layout.partition_path(table.location, table.partition_key_names(), values))
        parts.append(Partition(values, location, {"transient_lastDdlTime": str(int(time.time()))},
                               None, int(time.time())))
    added = ctx.catalog.add_partitions(table, parts, if_not_exists=bool(action.args.get("exists")))
    for p in added:
        fs.makedirs(p.location)


def spec_filter(table: Table, spec: list[tuple[str, str | None, bool]]):
    check_spec_columns(table, spec)
    atoms: list[Expr] = []
    for c, v, _ in spec:
        nv = normalize_value(table, c, v)
        if nv is None:
            atoms.append(IsNull(c))
        else:
            from hivepark.catalog.models import type_family
            fam = type_family(table.partition_types()[c])
            from decimal import Decimal
            atoms.append(EqualTo(c, Decimal(nv) if fam == "numeric" else nv))
    return and_all(*atoms)


def drop_partitions(ctx: Context, table: Table, action: exp.DropPartition, if_exists: bool) -> None:
    for spec_node in action.expressions:
        spec = partition_spec(spec_node)
        dropped = ctx.catalog.drop_partitions(table, spec_filter(table, spec))
        if not dropped and not if_exists:
            raise NoSuchPartition(
                f"No partition matches the specification {spec_node.sql(dialect='hive')} in "
                f"{table.qualified_name}. Use DROP IF EXISTS PARTITION to ignore this; "
                f"SHOW PARTITIONS {table.name} lists them.")
        if not table.is_external:
            for p in dropped:
                fs.delete_dir(p.location)


def rename_table(ctx: Context, table: Table, target: exp.Table) -> None:
    new_db, new_name = table_name(target, table.db)
    ctx.catalog.get_database(new_db)
    new_location = None
    if not table.is_external and layout.is_within(ctx.warehouse, table.location):
        new_location = (layout.table_location(ctx.warehouse, new_db, new_name) if new_db == "default"
                        else f"{database_location(ctx, new_db)}/{new_name}")
        if fs.exists(new_location):
            raise AlreadyExistsError(f"Cannot rename {table.qualified_name}: the directory "
                                     f"{new_location} already exists. Remove it first.")
    ctx.catalog.rename_table(table.db, table.name, new_db, new_name, new_location)
    if new_location is not None and fs.exists(table.location):
        try:
            fs.move(table.location, new_location)
        except Exception:
            ctx.catalog.rename_table(new_db, new_name, table.db, table.name, table.location)
            raise
