"""The Iceberg storage handler (Hive 4's ``STORED BY ICEBERG``,
``org.apache.iceberg.mr.hive.HiveIcebergStorageHandler``), on nothing but PyPI packages.

pyiceberg keeps the catalog, plans which data files a scan reads and commits snapshots; Spark
reads and writes the rows (a pip-installed PySpark has no Iceberg runtime jar).

* **Catalog.** By default a pyiceberg ``SqlCatalog`` named ``hivepark`` in the metastore's own
  database (its tables ``iceberg_tables`` and ``iceberg_namespace_properties`` beside
  hivepark's), so one ``--metastore`` URL serves both; the table property ``iceberg.catalog``
  names another pyiceberg catalog instead (configured as pyiceberg configures catalogs:
  ``~/.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__<NAME>__...`` variables), and
  ``iceberg.mr.table.identifier`` (``namespace.table``) the table in it (default: the hivepark
  database and table name). An Iceberg namespace is the hivepark database.
* **Reads.** The pushed filter becomes pyiceberg's expression
  (:mod:`hivepark.storage.handlers.iceberg_expr`), pyiceberg's scan planning chooses the data
  files (partition values, then column statistics), and Spark reads exactly those Parquet
  files, matching columns by Iceberg field id (``spark.sql.parquet.fieldId.read.enabled``), so
  renamed columns read right and dropped-then-added ones read as NULL. A file with delete files
  (row-level deletes) is refused, never read wrong.
* **What Spark filters again.** File pruning keeps whole files, so a pushed conjunct is in
  general filtered again by Spark (Hive 4 keeps the whole predicate as residual). The one
  exception, provably safe: a conjunct on identity-partition columns only, when the table has
  one partition spec: each data file holds one partition value, so every row of a chosen file
  satisfies it (the translation keeps SQL's NULL semantics).
* **Writes.** Spark writes Parquet files (with field ids; rows grouped so that each partition
  value is written by one task, one file per partition) under ``<table>/data/hp-<write id>/``;
  pyiceberg reads each file's footer for its statistics, its first row gives its partition
  (never the statistics, which leave out long values' bounds), and one Iceberg commit
  (an append, or an overwrite of the whole table or of the partitions that receive rows) makes
  them visible. A commit that loses a race with another writer is retried on the new snapshot;
  a failed write deletes its files. A marker ``<warehouse>/.hivepark/iceberg/<write id>.json``
  names the write's directory until it ends (a journal with a heartbeat, as for tables of files),
  so the next ``connect()`` deletes the files of a write whose process is proven dead
  (:func:`recover_writes`), unless its snapshot was committed.
* **Time travel.** ``FOR SYSTEM_VERSION AS OF <snapshot id>`` and ``FOR SYSTEM_TIME AS OF
  '<timestamp>'`` (the newest snapshot at or before it, UTC); ``SELECT * FROM t.snapshots`` (or
  ``db.t.snapshots``) lists the snapshots.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog as IcebergCatalog
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError, ValidationError, ValidationException
from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.io.pyarrow import (
    _check_pyarrow_schema_compatible,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.typedef import Record
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    UUIDType,
)
from pyiceberg.utils.datetime import date_to_days, datetime_to_micros

from hivepark.catalog.models import AS_OF_TIME, AS_OF_VERSION, Column, Table
from hivepark.errors import CommitConflict, NoSuchTable, SemanticError, UnsupportedError, UserInputError
from hivepark.expr.nodes import Expr, and_all
from hivepark.expr.visitors import conjuncts
from hivepark.plan.pushdown import DecomposedPredicate
from hivepark.storage import fs
from hivepark.storage.commit import Journal, abandoned_journals, fault_point, state_dir
from hivepark.storage.handlers.base import (
    PARTITION_SPEC_KEY,
    STORAGE_HANDLER_KEY,
    HandlerEnvironment,
    PushedFilter,
    StorageHandler,
    current_environment,
)
from hivepark.storage.handlers.iceberg_expr import Translator
from hivepark.types import HiveType

if TYPE_CHECKING:
    from pyiceberg.table import Table as IcebergTable
    from pyspark.sql import DataFrame, SparkSession

CATALOG = "iceberg.catalog"
IDENTIFIER = "iceberg.mr.table.identifier"
OWN_CATALOG = "hivepark"
# transient properties of a table as a query names it (never stored)
SNAPSHOT_ID = AS_OF_VERSION
METADATA_TABLE = "hivepark.iceberg.metadata-table"
WRITE_ID = "hivepark.write-id"
FIELD_IDS = "hivepark.iceberg.field-ids"  # the Iceberg field id of each hivepark column, as JSON
MAX_COMMIT_RETRIES = 8

METADATA_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "snapshots": (("committed_at", "timestamp"), ("snapshot_id", "bigint"), ("parent_id", "bigint"),
                  ("operation", "string"), ("manifest_list", "string"), ("summary", "map<string,string>")),
}

_lock = threading.Lock()
_catalogs: dict[str, IcebergCatalog] = {}


# ------------------------------------------------------------------ types

def iceberg_type(hive_type: str, column: str) -> IcebergType:
    """The Iceberg type a Hive column is stored as (Hive 4's mapping: TINYINT and SMALLINT
    are INT, CHAR and VARCHAR are STRING).

    >>> iceberg_type("smallint", "x"), iceberg_type("decimal(12,2)", "x")
    (IntegerType(), DecimalType(precision=12, scale=2))
    """
    t = HiveType.parse(hive_type)
    base = t.base
    if base in ("tinyint", "smallint", "int", "integer"):
        return IntegerType()
    simple: dict[str, IcebergType] = {"bigint": LongType(), "float": FloatType(), "double": DoubleType(),
                                      "string": StringType(), "varchar": StringType(), "char": StringType(),
                                      "boolean": BooleanType(), "date": DateType(),
                                      "timestamp": TimestampType(), "binary": BinaryType()}
    if base in simple:
        return simple[base]
    if base == "decimal":
        p, s = t.precision_scale
        return DecimalType(p, s)
    raise UnsupportedError(f"Column '{column}' has type {hive_type}, which hivepark cannot store in an Iceberg "
                           "table yet (supported: boolean, integers, float, double, decimal, string, date, "
                           "timestamp, binary). Store it as STRING (for example to_json(...)) or use a table "
                           "of files.")


def hive_type(typ: IcebergType, column: str) -> str:
    """The Hive type an Iceberg column reads as (TIMESTAMPTZ as TIMESTAMP in the session's
    time zone, UTC; UUID as STRING; FIXED as BINARY)."""
    if isinstance(typ, DecimalType):
        return f"decimal({typ.precision},{typ.scale})"
    names = {IntegerType: "int", LongType: "bigint", FloatType: "float", DoubleType: "double",
             StringType: "string", BooleanType: "boolean", DateType: "date", TimestampType: "timestamp",
             TimestamptzType: "timestamp", BinaryType: "binary", FixedType: "binary", UUIDType: "string"}
    for cls, name in names.items():
        if isinstance(typ, cls):
            return name
    raise UnsupportedError(f"Iceberg column '{column}' has type {typ}, which hivepark cannot read yet: "
                           "select the other columns, or store it as a string")


def _spark_type(typ: IcebergType) -> Any:
    """The Spark type a Parquet column of ``typ`` is read or written as."""
    from pyspark.sql import types as T

    if isinstance(typ, DecimalType):
        return T.DecimalType(typ.precision, typ.scale)
    table = {IntegerType: T.IntegerType(), LongType: T.LongType(), FloatType: T.FloatType(),
             DoubleType: T.DoubleType(), StringType: T.StringType(), BooleanType: T.BooleanType(),
             DateType: T.DateType(), TimestampType: T.TimestampNTZType(), TimestamptzType: T.TimestampType(),
             BinaryType: T.BinaryType(), FixedType: T.BinaryType(), UUIDType: T.StringType()}
    for cls, st in table.items():
        if isinstance(typ, cls):
            return st
    raise UnsupportedError(f"Iceberg type {typ} cannot be read by hivepark yet")


# ------------------------------------------------------------------ catalogs and tables

def _props(table: Table) -> dict[str, str]:
    return {k.lower(): v for k, v in table.properties.items()}


class _OwnCatalog(SqlCatalog):
    """pyiceberg's SqlCatalog, but a commit that loses its compare-and-swap to another writer
    deletes the metadata file it wrote for it (pyiceberg leaves it in the table's metadata
    directory, referenced by nothing: one orphan per lost race; the retry writes a new one)."""

    _written = threading.local()

    def _write_metadata(self, metadata: Any, io: Any, metadata_path: str) -> None:
        SqlCatalog._write_metadata(metadata, io, metadata_path)
        self._written.file = (io, metadata_path)

    def commit_table(self, table: Any, requirements: Any, updates: Any) -> Any:
        self._written.file = None
        try:
            return super().commit_table(table, requirements, updates)
        except CommitFailedException:
            written = self._written.file
            if written is not None:  # raised after the file was written: the swap failed, nothing points to it
                try:
                    written[0].delete(written[1])
                except OSError:
                    pass
            raise
        finally:
            self._written.file = None


def _own_catalog(env: HandlerEnvironment) -> IcebergCatalog:
    url = env.metastore_url
    with _lock:
        cat = _catalogs.get(url)
        if cat is None:
            uri = url
            if uri.startswith("sqlite") and "timeout=" not in uri:
                uri += ("&" if "?" in uri else "?") + "timeout=60"
            cat = _catalogs[url] = _OwnCatalog(OWN_CATALOG, uri=uri, warehouse=_file_uri(env.warehouse))
    return cat


def _named_catalog(name: str) -> IcebergCatalog:
    key = f"named:{name}"
    with _lock:
        cat = _catalogs.get(key)
        if cat is None:
            try:
                cat = _catalogs[key] = load_catalog(name, **_env_properties(name))
            except Exception as e:  # noqa: BLE001 - pyiceberg raises several kinds for a bad config
                raise UserInputError(
                    f"Cannot load the Iceberg catalog '{name}' named by {CATALOG}: {e}. Configure it as "
                    f"pyiceberg does (~/.pyiceberg.yaml, or PYICEBERG_CATALOG__{name.upper()}__URI=...), or "
                    f"remove {CATALOG} to use the warehouse's own catalog.") from None
    return cat


def _env_properties(name: str) -> dict[str, str]:
    """A catalog's ``PYICEBERG_CATALOG__<NAME>__<KEY>`` variables as they are now (pyiceberg
    reads the environment once, at import)."""
    prefix = f"PYICEBERG_CATALOG__{name.upper()}__"
    return {k[len(prefix):].lower().replace("__", "-"): v for k, v in os.environ.items() if k.startswith(prefix)}


def catalog_for(table: Table, env: HandlerEnvironment | None = None) -> IcebergCatalog:
    name = _props(table).get(CATALOG)
    if name and name != OWN_CATALOG:
        return _named_catalog(name)
    return _own_catalog(env or current_environment())


def identifier(table: Table) -> tuple[str, str]:
    raw = _props(table).get(IDENTIFIER)
    if raw:
        ns, _, name = raw.rpartition(".")
        if not ns or not name:
            raise UserInputError(f"{IDENTIFIER} must be 'namespace.table', got '{raw}'")
        return ns, name
    name = table.name.split(".")[0] if METADATA_TABLE in table.properties else table.name
    return table.db, name


def load(table: Table) -> IcebergTable:
    ident = identifier(table)
    try:
        return catalog_for(table).load_table(ident)
    except NoSuchTableError:
        raise SemanticError(f"The Iceberg table {'.'.join(ident)} of {table.qualified_name} is missing from its "
                            "catalog: it was dropped outside hivepark. DROP TABLE and create it again.") from None


def _file_uri(path: str) -> str:
    """A path as pyiceberg is given it (a table's location, the catalog's warehouse, a data
    file): a local one as a ``file://`` URI, except one holding '#' or '?', as the path itself.
    pyiceberg's file IO reads a location without a scheme as the path it is, but splits a URI
    at '#' and '?' (writing every file of the table to one file outside the warehouse), and
    never decodes a %-escape (a percent-encoded URI names another directory)."""
    local = fs.normalize(path)
    if "://" not in local and ("#" in local or "?" in local):
        return local
    return fs.to_spark_path(local)


def _with_field_ids(table: Table, ids: Sequence[tuple[str, int]]) -> dict[str, str]:
    return {**dict(table.properties), FIELD_IDS: json.dumps(dict(ids), separators=(",", ":"))}


def columns_of(table: Table, schema: Schema) -> dict[str, NestedField]:
    """Each hivepark column's Iceberg field in ``schema``: by the field id recorded at CREATE
    (so a column renamed in Iceberg still reads its own data), else by name; a column the
    schema no longer has (dropped, or not yet added at a past snapshot) is absent."""
    raw = table.properties.get(FIELD_IDS)
    ids: dict[str, int] = json.loads(raw) if raw else {}
    by_id = {f.field_id: f for f in schema.fields}
    by_name = {f.name.lower(): f for f in schema.fields}
    out: dict[str, NestedField] = {}
    for c in table.columns:
        f = by_id.get(ids[c.name]) if c.name in ids else by_name.get(c.name.lower())
        if f is not None:
            out[c.name] = f
    return out


_TRANSFORMS: dict[str, Any] = {"year": YearTransform, "month": MonthTransform, "day": DayTransform,
                               "hour": HourTransform, "bucket": BucketTransform, "truncate": TruncateTransform}
_FIELD_SUFFIX = {"truncate": "trunc"}


def _spec(schema: Schema, transforms: Sequence[tuple[str, str, int | None]]) -> PartitionSpec:
    """The partition spec of PARTITIONED BY (identity columns) or PARTITIONED BY SPEC (...);
    field names follow Iceberg's (``ts_day``, ``id_bucket``, ``s_trunc``)."""
    fields = []
    for i, (kind, name, param) in enumerate(transforms):
        try:
            f = schema.find_field(name, case_sensitive=False)
        except ValueError:
            raise SemanticError(f"The partition spec names column {name}, which the table does not have") from None
        if kind == "identity":
            transform: Any = IdentityTransform()
            field_name = f.name
        else:
            cls = _TRANSFORMS[kind]
            transform = cls(param) if param is not None else cls()
            field_name = f"{f.name}_{_FIELD_SUFFIX.get(kind, kind)}"
            if not transform.can_transform(f.field_type):
                raise SemanticError(f"Cannot partition by {kind} of {f.name} ({f.field_type}): {kind} applies to "
                                    + ("dates and timestamps" if kind in ("year", "month", "day", "hour")
                                       else "integers, decimals, strings and binary"))
        fields.append(PartitionField(source_id=f.field_id, field_id=1000 + i, transform=transform, name=field_name))
    return PartitionSpec(*fields)


def metadata_table(base: Table, kind: str) -> Table:
    """The table ``base.<kind>`` (``snapshots``) as a query reads it."""
    cols = tuple(Column(n, t) for n, t in METADATA_TABLES[kind])
    props = {**dict(base.properties), METADATA_TABLE: kind}
    return base.evolve(name=f"{base.name}.{kind}", columns=cols, partition_keys=(), properties=props)


# ------------------------------------------------------------------ the handler

class IcebergStorageHandler(StorageHandler):
    name = "iceberg"
    aliases = ("org.apache.iceberg.mr.hive.HiveIcebergStorageHandler",)
    supports_writes = True
    create_clauses = frozenset({"PARTITIONED BY", "AS SELECT"})
    accepts_runtime_filters = True

    # -- DDL (Hive's HiveIcebergMetaHook)
    def create_table(self, table: Table) -> Table:
        env = current_environment()
        cat = catalog_for(table, env)
        ident = identifier(table)
        transforms = [(t, c, p) for t, c, p in json.loads(table.properties.get(PARTITION_SPEC_KEY, "[]"))]
        transforms += [("identity", c.name, None) for c in table.partition_keys]
        table = table.evolve(properties={k: v for k, v in table.properties.items() if k != PARTITION_SPEC_KEY})
        columns = list(table.columns) + [c for c in table.partition_keys
                                         if c.name not in {x.name for x in table.columns}]
        exists = cat.table_exists(ident)
        if exists and not table.is_external:
            raise SemanticError(f"The Iceberg table {'.'.join(ident)} already exists in its catalog: use CREATE "
                                "EXTERNAL TABLE to read it, or choose another name.")
        if exists:
            itbl = cat.load_table(ident)
            schema_cols = [Column(f.name.lower(), hive_type(f.field_type, f.name)) for f in itbl.schema().fields]
            if columns and [c.name for c in columns] != [c.name for c in schema_cols]:
                raise SemanticError(f"The columns given ({', '.join(c.name for c in columns)}) are not those of the "
                                    f"Iceberg table {'.'.join(ident)} ({', '.join(c.name for c in schema_cols)}): "
                                    "omit the column list to take the table's own.")
            return table.evolve(columns=tuple(schema_cols), partition_keys=(),
                                properties=_with_field_ids(table, [(c.name, f.field_id) for c, f in
                                                                   zip(schema_cols, itbl.schema().fields)]))
        own = _props(table).get(CATALOG) in (None, OWN_CATALOG)
        if own and fs.list_files(table.location):
            raise SemanticError(f"Cannot create Iceberg table {table.qualified_name}: its directory {table.location} "
                                "already holds files (of a table renamed away, or of another tool). Choose another "
                                "name, or remove the directory.")
        if not columns:
            raise SemanticError(f"CREATE TABLE {table.qualified_name} STORED BY ICEBERG needs its columns: no "
                                f"Iceberg table {'.'.join(ident)} exists to take them from.")
        fields = [NestedField(i + 1, c.name, iceberg_type(c.type, c.name), required=False)
                  for i, c in enumerate(columns)]
        schema = Schema(*fields)
        stored = [Column(c.name, hive_type(f.field_type, c.name), c.comment) for c, f in zip(columns, fields)]
        ns = ident[0]
        cat.create_namespace_if_not_exists(ns)
        location = _file_uri(table.location) if own else None
        props = {"format-version": "2", "write.parquet.compression-codec": "snappy"}
        cat.create_table(ident, schema, location=location, partition_spec=_spec(schema, transforms),
                         properties=props)
        return table.evolve(columns=tuple(stored), partition_keys=(),
                            properties=_with_field_ids(table, [(c.name, f.field_id) for c, f in zip(stored, fields)]))

    def like_properties(self, table: Table) -> dict[str, str]:
        """Hive 4's CREATE TABLE ... LIKE of an Iceberg table: a new, empty Iceberg table in the same
        catalog with the same columns and partition spec (``table``'s identifier, field ids and
        snapshot are its own)."""
        props = {k: v for k, v in table.properties.items()
                 if k.lower() not in (STORAGE_HANDLER_KEY, IDENTIFIER) and k not in (
                     FIELD_IDS, METADATA_TABLE, WRITE_ID, SNAPSHOT_ID, AS_OF_TIME)}
        itbl = load(table)
        spec = []
        for f in itbl.spec().fields:
            name = itbl.schema().find_field(f.source_id).name.lower()
            t = f.transform
            if isinstance(t, IdentityTransform):
                spec.append(["identity", name, None])
            elif isinstance(t, (BucketTransform, TruncateTransform)):
                spec.append(["bucket" if isinstance(t, BucketTransform) else "truncate", name,
                             t.num_buckets if isinstance(t, BucketTransform) else t.width])
            elif str(t) in ("year", "month", "day", "hour"):
                spec.append([str(t), name, None])  # (a void field, a dropped one, partitions nothing)
        if spec:
            props[PARTITION_SPEC_KEY] = json.dumps(spec)
        return props

    def add_columns(self, table: Table, columns: Sequence[Column]) -> Table:
        """Hive 4's ALTER TABLE ... ADD COLUMNS of an Iceberg table: one schema update (new
        field ids: files written before read NULL for them). A column the Iceberg table already
        has under that name (added by another engine, or by this statement before the metastore
        could record it) is taken as it is when its type is the one asked for."""
        itbl = load(table)
        have = {f.name.lower(): f for f in itbl.schema().fields}
        for c in columns:
            f = have.get(c.name)
            if f is not None and f.field_type != iceberg_type(c.type, c.name):
                raise SemanticError(
                    f"The Iceberg table {'.'.join(identifier(table))} already has a column {f.name} of type "
                    f"{hive_type(f.field_type, f.name)}: ADD COLUMNS ({c.name} {hive_type(f.field_type, f.name)}) "
                    "takes it as it is, or choose another name.", code=10036)
        fresh = [c for c in columns if c.name not in have]
        if fresh:
            with itbl.update_schema() as update:
                for c in fresh:
                    update.add_column(c.name, iceberg_type(c.type, c.name), doc=c.comment)
            have = {f.name.lower(): f for f in itbl.schema().fields}  # the commit refreshed itbl
        stored = [Column(c.name, hive_type(have[c.name].field_type, c.name), c.comment) for c in columns]
        ids = json.loads(table.properties.get(FIELD_IDS) or "{}")
        ids.update((c.name, have[c.name].field_id) for c in columns)
        return table.evolve(columns=(*table.columns, *stored), properties=_with_field_ids(table, list(ids.items())))

    def at_version(self, table: Table) -> Table:
        """Hive 4's time travel: the snapshot's own schema (a column dropped since is read, one
        added since is not there), each column its field of that schema by id."""
        itbl = load(table)
        schema = _schema_at(itbl, _snapshot_id(itbl, table))
        if schema.schema_id == itbl.schema().schema_id:
            return table
        now = {c.name: c for c in table.columns}
        by_id = {fid: name for name, fid in json.loads(table.properties.get(FIELD_IDS) or "{}").items()}
        columns = []
        for f in schema.fields:
            name = by_id.get(f.field_id, f.name.lower())  # a field renamed since: the name it has now
            then = now.get(name)
            columns.append(Column(f.name.lower(), hive_type(f.field_type, f.name),
                                  then.comment if then is not None else f.doc))
        ids = [(c.name, f.field_id) for c, f in zip(columns, schema.fields)]
        return table.evolve(columns=tuple(columns), properties=_with_field_ids(table, ids))

    def change_column(self, table: Table, column: str, columns: Sequence[Column]) -> Table:
        """Hive 4's ALTER TABLE ... CHANGE COLUMN of an Iceberg table: one schema update of the
        column's field (by field id, so the files written before read it under its new name):
        a rename (and its identity partition field's), a type Iceberg promotes (INT to BIGINT,
        FLOAT to DOUBLE, a DECIMAL to a wider precision of the same scale), the comment, FIRST /
        AFTER. A step already made (by this statement before the metastore could record it) is
        not made again."""
        old_at = [c.name for c in table.columns].index(column)
        names = {c.name for c in table.columns}  # the changed column: renamed, the one name not among them
        new_at = next(i for i, c in enumerate(columns) if c.name == column or c.name not in names)
        before, after = table.columns[old_at], columns[new_at]
        itbl = load(table)
        fields = columns_of(table, itbl.schema())
        f = fields.get(column)
        if f is None:
            raise SemanticError(f"The Iceberg table {'.'.join(identifier(table))} no longer has a field for column "
                                f"{column} (another engine dropped it): nothing to change.", code=10002)
        typ = iceberg_type(after.type, after.name)
        renamed = f.name != after.name
        try:
            with itbl.transaction() as tx:
                with tx.update_schema() as update:
                    if typ != f.field_type or (after.comment is not None and after.comment != f.doc):
                        update.update_column(f.name, field_type=typ if typ != f.field_type else None,
                                             doc=after.comment if after.comment != f.doc else None)
                    if renamed:
                        update.rename_column(f.name, after.name)
                    if new_at != old_at:
                        if new_at == 0:
                            update.move_first(f.name)
                        else:
                            update.move_after(f.name, fields[columns[new_at - 1].name].name)
                identity = [pf for pf in itbl.spec().fields
                            if pf.source_id == f.field_id and isinstance(pf.transform, IdentityTransform)
                            and pf.name == f.name]
                if renamed and identity:
                    with tx.update_spec() as spec:
                        spec.rename_field(f.name, after.name)
        except ValidationError as e:
            raise SemanticError(
                f"Iceberg cannot change column {column} of {table.qualified_name} from {before.type} to {after.type} "
                f"({e}): it promotes INT to BIGINT, FLOAT to DOUBLE and a DECIMAL to a wider precision of the same "
                "scale only, so that the files written before read as the new type. Add a column of the new type "
                "(ADD COLUMNS) and fill it with INSERT OVERWRITE, or make a new table (CREATE TABLE ... STORED BY "
                "ICEBERG AS SELECT ...).") from None
        ids = json.loads(table.properties.get(FIELD_IDS) or "{}")
        ids.pop(column, None)
        ids[after.name] = f.field_id
        props = _with_field_ids(table, list(ids.items()))
        return table.evolve(columns=tuple(columns), properties=props)

    def replace_columns(self, table: Table, columns: Sequence[Column]) -> Table:
        """Hive 4's ALTER TABLE ... REPLACE COLUMNS of an Iceberg table: it drops columns only
        (the others given as they are, in their order); their fields leave the schema (a past
        snapshot still reads them). A column a partition field is made from is refused: Iceberg
        would lose the partition's source."""
        old = list(table.columns)
        kept = [c for c in old if c.name in {x.name for x in columns}]
        if kept != list(columns):
            raise UnsupportedError(
                "Unsupported operation to use REPLACE COLUMNS for adding a column, changing a column type, column "
                "comment, column default or reordering columns. Only use REPLACE COLUMNS for dropping columns. For "
                "the other operations, consider using the ADD COLUMNS or CHANGE COLUMN commands "
                f"({table.qualified_name} is an Iceberg table; DESCRIBE lists its columns as they are).")
        dropped = [c for c in old if c not in kept]
        if not dropped:
            raise SemanticError("No schema change detected from REPLACE COLUMNS operations: it gives every column of "
                                f"{table.qualified_name} as it is. Leave out the columns to drop.")
        itbl = load(table)
        fields = columns_of(table, itbl.schema())
        sources = {pf.source_id: pf.name for pf in itbl.spec().fields}
        for c in dropped:
            if c.name in fields and fields[c.name].field_id in sources:
                raise SemanticError(
                    f"Column {c.name} of {table.qualified_name} is the source of the Iceberg table's partition field "
                    f"{sources[fields[c.name].field_id]}: REPLACE COLUMNS cannot drop it while the table is "
                    "partitioned by it.")
        gone = [fields[c.name].name for c in dropped if c.name in fields]
        if gone:
            with itbl.update_schema() as update:
                for name in gone:
                    update.delete_column(name)
        ids = {k: v for k, v in json.loads(table.properties.get(FIELD_IDS) or "{}").items()
               if k in {c.name for c in kept}}
        return table.evolve(columns=tuple(kept), properties=_with_field_ids(table, list(ids.items())))

    def rename_table(self, table: Table, new_db: str, new_name: str) -> None:
        if IDENTIFIER in _props(table):
            return  # an explicit identifier names the Iceberg table whatever hivepark calls it
        cat = catalog_for(table)
        cat.create_namespace_if_not_exists(new_db)
        cat.rename_table(identifier(table), (new_db, new_name))

    def rollback_create_table(self, table: Table) -> None:
        if table.is_external:
            return
        try:
            catalog_for(table).purge_table(identifier(table))
        except NoSuchTableError:
            pass

    def drop_table(self, table: Table, delete_data: bool) -> None:
        if not delete_data:
            return  # an EXTERNAL table: the Iceberg table (catalog entry and files) stays
        cat = catalog_for(table)
        try:
            cat.purge_table(identifier(table))
        except NoSuchTableError:
            pass
        if _props(table).get(CATALOG) in (None, OWN_CATALOG):
            fs.delete_dir(table.location)

    def state(self, table: Table) -> str | None:
        return str(load(table).metadata_location)

    def describe_table(self, table: Table) -> list[tuple[str, str]]:
        itbl = load(table)
        snap = itbl.current_snapshot()
        spec = itbl.spec()
        parts = ", ".join(f"{itbl.schema().find_field(f.source_id).name} {f.transform}" for f in spec.fields)
        return [("Iceberg Table:", ".".join(identifier(table))),
                ("Iceberg Location:", itbl.location()),
                ("Metadata File:", itbl.metadata_location),
                ("Partition Spec:", parts or "unpartitioned"),
                ("Current Snapshot:", str(snap.snapshot_id) if snap else "none"),
                ("Format Version:", str(itbl.format_version))]

    def partitioning_ddl(self, table: Table) -> str | None:
        """``PARTITIONED BY SPEC (...)`` of the table's current spec, in Hive 4's transforms, so that
        SHOW CREATE TABLE re-creates it partitioned alike (None when unpartitioned)."""
        itbl = load(table)
        items = []
        for f in itbl.spec().fields:
            name = f"`{itbl.schema().find_field(f.source_id).name}`"
            t = f.transform
            if isinstance(t, IdentityTransform):
                items.append(name)
            elif isinstance(t, (BucketTransform, TruncateTransform)):
                width = t.num_buckets if isinstance(t, BucketTransform) else t.width
                items.append(f"{'bucket' if isinstance(t, BucketTransform) else 'truncate'}({width}, {name})")
            elif str(t) in ("year", "month", "day", "hour"):
                items.append(f"{t}({name})")
            else:  # a transform Hive's DDL has no name for (void): the clause would not re-create it
                return None
        return f"PARTITIONED BY SPEC ({', '.join(items)})" if items else None

    def metadata_table(self, table: Table, kind: str) -> Table | None:
        return metadata_table(table, kind) if kind in METADATA_TABLES else None

    # -- filter negotiation
    def decompose_predicate(self, table: Table, predicate: Expr) -> DecomposedPredicate | None:
        if METADATA_TABLE in table.properties:
            return None
        itbl = load(table)
        fields = _planning_fields(itbl, table, _schema_at(itbl, _snapshot_id(itbl, table)))
        translator = _translator(fields)
        identity: set[str] = set()
        if len(itbl.specs()) == 1:
            source_ids = {f.source_id for f in itbl.spec().fields if isinstance(f.transform, IdentityTransform)}
            identity = {name.lower() for name, f in fields.items() if f.field_id in source_ids}
        pushed: list[Expr] = []
        residual: list[Expr] = []
        for part in conjuncts(predicate):
            if translator.exact(part) is None:
                residual.append(part)
                continue
            pushed.append(part)
            if not identity or not {c.lower() for c in part.columns()} <= identity:
                residual.append(part)
        return DecomposedPredicate(and_all(*pushed) if pushed else None,
                                   and_all(*residual) if residual else None)

    # -- reads
    def plan(self, table: Table, pushed: PushedFilter | None) -> Planned:
        """The data files a scan reads (pyiceberg's planning with the pushed filter)."""
        itbl = load(table)
        snapshot_id = _snapshot_id(itbl, table)
        schema = _schema_at(itbl, snapshot_id)
        expr: BooleanExpression = AlwaysTrue()
        if pushed is not None:
            expr = _translator(_planning_fields(itbl, table, schema)).translate(pushed.expr) or AlwaysTrue()
        scan = itbl.scan(row_filter=expr, snapshot_id=snapshot_id, case_sensitive=False)
        tasks = list(scan.plan_files()) if (snapshot_id is not None or itbl.current_snapshot()) else []
        with_deletes = [t for t in tasks if t.delete_files]
        if with_deletes:
            raise UnsupportedError(
                f"Iceberg table {'.'.join(identifier(table))} has row-level deletes ({len(with_deletes)} data "
                "file(s) with delete files) that hivepark cannot apply yet; reading it would return deleted "
                "rows. Rewrite the table without delete files (for example INSERT OVERWRITE it from a copy, "
                "or compact it with Iceberg's rewrite_data_files), then query it.")
        snap = itbl.snapshot_by_id(snapshot_id) if snapshot_id is not None else itbl.current_snapshot()
        summary = snap.summary if snap is not None else None
        total_files = int(summary["total-data-files"]) if summary and "total-data-files" in summary else len(tasks)
        total_bytes = int(summary["total-files-size"]) if summary and "total-files-size" in summary else 0
        return Planned(itbl, schema, snap.snapshot_id if snap else None, expr,
                       [t.file.file_path for t in tasks], sum(t.file.file_size_in_bytes for t in tasks),
                       total_files, total_bytes)

    def read(self, spark: SparkSession, table: Table, columns: Sequence[str],
             pushed: PushedFilter | None, settings: Any) -> DataFrame:
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        kind = table.properties.get(METADATA_TABLE)
        if kind is not None:
            return _snapshots_frame(spark, load(table), columns)
        planned = self.plan(table, pushed)
        types = {c.name: HiveType.parse(c.type).spark_ddl for c in table.columns}
        fields = columns_of(table, planned.schema)
        wanted = list({fields[c].field_id: fields[c] for c in columns if c in fields}.values())
        if not planned.files:
            empty = T.StructType([T.StructField(c, T._parse_datatype_string(types[c]), True) for c in columns])
            return spark.createDataFrame([], empty)
        if not wanted:  # a count of rows: read the narrowest column
            wanted = planned.schema.fields[:1]
        read_schema = T.StructType([T.StructField(f.name, _spark_type(f.field_type), True,
                                                  {"parquet.field.id": f.field_id}) for f in wanted])
        spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
        df = spark.read.schema(read_schema).parquet(*[fs.to_spark_path(fs.strip_file_scheme(p)) for p in planned.files])
        out = []
        for c in columns:
            f = fields.get(c)
            col = F.col(f"`{f.name}`") if f is not None else F.lit(None)
            out.append(col.cast(types[c]).alias(c))
        return df.select(*out)

    def describe_scan(self, table: Table, columns: Sequence[str], pushed: PushedFilter | None) -> str:
        if METADATA_TABLE in table.properties:
            return f"iceberg metadata table {table.name}"
        p = self.plan(table, pushed)
        return (f"iceberg scan of {'.'.join(identifier(table))} snapshot={p.snapshot_id} "
                f"files={len(p.files)}/{p.total_files} bytes={p.bytes}/{p.total_bytes} "
                f"iceberg filter: {p.expr}")

    # -- writes
    def write(self, spark: SparkSession, table: Table, df: DataFrame, overwrite: bool) -> None:
        if METADATA_TABLE in table.properties or SNAPSHOT_ID in table.properties or AS_OF_TIME in table.properties:
            raise SemanticError(f"{table.qualified_name} is read-only (a metadata table or a past snapshot)")
        env = current_environment()
        itbl = load(table)
        write_id = uuid.uuid4().hex
        staging = f"{fs.strip_file_scheme(itbl.location())}/data/hp-{write_id}"
        journal = Journal(_marker_path(env.warehouse, write_id), {
            "write_id": write_id, "staging": staging, "table": [table.db, table.name],
            "catalog": _props(table).get(CATALOG) or OWN_CATALOG, "identifier": list(identifier(table))})
        try:
            files = _write_files(spark, itbl, table, df, staging)
            fault_point("iceberg_before_commit")
            _commit(itbl, files, overwrite, write_id)
            fault_point("iceberg_after_commit")
        except BaseException:
            fs.delete_dir(staging)
            journal.close()
            if _dropped(table):  # a DROP TABLE while Spark wrote: pyiceberg's error names a file or nothing
                if _props(table).get(CATALOG) in (None, OWN_CATALOG):
                    # what this write made there since (manifests of its commit, data/) is nobody's
                    fs.delete_dir(fs.strip_file_scheme(itbl.location()))
                raise NoSuchTable(f"Table {table.qualified_name} was dropped while the statement wrote to it; "
                                  "nothing was written.") from None
            raise
        journal.close()


def _dropped(table: Table) -> bool:
    """Whether the Iceberg table is no longer in its catalog (False when that cannot be told)."""
    try:
        return not catalog_for(table).table_exists(identifier(table))
    except Exception:  # noqa: BLE001 - the catalog cannot answer: the write's own error stands
        return False


class Planned:
    """What a scan of an Iceberg table reads: the files chosen, out of the snapshot's."""

    def __init__(self, itbl: Any, schema: Schema, snapshot_id: int | None, expr: BooleanExpression,
                 files: list[str], size: int, total_files: int, total_bytes: int) -> None:
        self.table, self.schema, self.snapshot_id, self.expr = itbl, schema, snapshot_id, expr
        self.files, self.bytes, self.total_files, self.total_bytes = files, size, total_files, total_bytes


def _planning_fields(itbl: Any, table: Table, schema: Schema) -> dict[str, NestedField]:
    """Each column's field as pyiceberg plans a scan with it: bound to the table's current schema
    whatever snapshot is read, so a time-travel read's column is its field of today (by id; one
    dropped since is not planned with, its filter left to Spark)."""
    current = {f.field_id: f for f in itbl.schema().fields}
    return {c: current[f.field_id] for c, f in columns_of(table, schema).items() if f.field_id in current}


def _translator(fields: Mapping[str, NestedField]) -> Translator:
    """Translates trees over hivepark's column names into expressions over the Iceberg names."""
    return Translator({c: f.field_type for c, f in fields.items()}, {c: f.name for c, f in fields.items()})


def _schema_at(itbl: Any, snapshot_id: int | None) -> Schema:
    if snapshot_id is None:
        return itbl.schema()
    snap = itbl.snapshot_by_id(snapshot_id)
    if snap is not None and snap.schema_id is not None:
        for s in itbl.metadata.schemas:
            if s.schema_id == snap.schema_id:
                return s
    return itbl.schema()


def _snapshot_id(itbl: Any, table: Table) -> int | None:
    """The snapshot a query names (FOR SYSTEM_VERSION / SYSTEM_TIME AS OF), else None (current)."""
    props = table.properties
    name = table.qualified_name
    if SNAPSHOT_ID in props:
        raw = props[SNAPSHOT_ID]
        try:
            sid = int(raw)
        except ValueError:
            raise UserInputError(f"FOR SYSTEM_VERSION AS OF needs a snapshot id (a number), got {raw!r}") from None
        if itbl.snapshot_by_id(sid) is None:
            ids = ", ".join(str(s.snapshot_id) for s in itbl.snapshots()[-5:]) or "none"
            raise UserInputError(f"Table {name} has no snapshot {sid}. Its latest snapshots: {ids} "
                                 f"(SELECT * FROM {name}.snapshots lists them all).")
        return sid
    if AS_OF_TIME in props:
        raw = props[AS_OF_TIME]
        try:
            when = datetime.datetime.fromisoformat(raw.strip())
        except ValueError:
            raise UserInputError(f"FOR SYSTEM_TIME AS OF needs a timestamp such as '2026-01-05 10:00:00', "
                                 f"got {raw!r}") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        snap = itbl.snapshot_as_of_timestamp(int(when.timestamp() * 1000))
        if snap is None:
            raise UserInputError(f"Table {name} has no snapshot at or before {raw} (UTC): its first snapshot is "
                                 f"later. SELECT * FROM {name}.snapshots lists them.")
        return int(snap.snapshot_id)
    return None


def _snapshots_frame(spark: SparkSession, itbl: Any, columns: Sequence[str]) -> DataFrame:
    from pyspark.sql import types as T

    rows = []
    for snap in itbl.snapshots():
        summary = snap.summary
        # an aware time: PySpark reads a naive one in the Python process's time zone (TZ), so on a
        # machine outside UTC committed_at was off by its offset
        rows.append({"committed_at": datetime.datetime.fromtimestamp(snap.timestamp_ms / 1000, datetime.UTC),
                     "snapshot_id": snap.snapshot_id, "parent_id": snap.parent_snapshot_id,
                     "operation": summary.operation.value if summary is not None else None,
                     "manifest_list": snap.manifest_list,
                     "summary": {k: str(v) for k, v in summary.additional_properties.items()}
                     if summary is not None else {}})
    schema = T.StructType([T.StructField(n, T._parse_datatype_string(t), True)
                           for n, t in METADATA_TABLES["snapshots"]])
    df = spark.createDataFrame([tuple(r[n] for n, _ in METADATA_TABLES["snapshots"]) for r in rows], schema)
    return df.select(*columns)


# ------------------------------------------------------------------ the write path

def _write_files(spark: SparkSession, itbl: Any, table: Table, df: DataFrame, staging: str) -> list[Any]:
    """Spark writes ``df`` (the table's columns, in order) as Parquet under ``staging``;
    returns each file as a pyiceberg DataFile (statistics and partition from its footer)."""
    from pyspark.sql import functions as F

    schema = itbl.schema()
    fields = columns_of(table, schema)
    cols = []
    ntz_only = True
    for src, c in zip(df.columns, table.columns):
        f = fields.get(c.name)
        if f is None:
            raise SemanticError(f"Column {c.name} of {table.qualified_name} is not in its Iceberg schema any more: "
                                "recreate the hivepark table definition (DROP, then CREATE EXTERNAL TABLE).")
        ntz_only = ntz_only and not isinstance(f.field_type, TimestamptzType)
        cols.append(F.col(f"`{src}`").cast(_spark_type(f.field_type)).alias(f.name, metadata={"parquet.field.id":
                                                                                                f.field_id}))
    given_ids = {f.field_id for f in fields.values()}
    for f in schema.fields:  # columns hivepark's definition lacks (added in Iceberg later) are NULL
        if f.field_id not in given_ids:
            cols.append(F.lit(None).cast(_spark_type(f.field_type)).alias(f.name, metadata={"parquet.field.id":
                                                                                            f.field_id}))
    out = df.select(*cols)
    spec = itbl.spec()
    hidden: list[str] = []
    taken = {f.name.lower() for f in schema.fields}
    for pf in spec.fields:
        name = f"{pf.name}_part"
        if name.startswith(("_", ".")):  # a hidden directory for Spark's writer and our listing
            name = f"p{name}"
        while name.lower() in taken:
            name += "_"
        taken.add(name.lower())
        source = schema.find_field(pf.source_id)
        if isinstance(pf.transform, BucketTransform):
            out = _with_bucket(out, source, pf.transform.num_buckets, name)
        else:
            out = out.withColumn(name, _transform_column(pf, source))
        hidden.append(name)
    writer_df = out.repartition(*[F.col(h) for h in hidden]) if hidden else out
    conf = spark.conf
    saved = conf.get("spark.sql.parquet.outputTimestampType")
    try:
        if not ntz_only:
            conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        writer = writer_df.write.mode("errorifexists").option("compression", "snappy")
        if hidden:
            writer = writer.partitionBy(*hidden)
        writer.parquet(fs.to_spark_path(staging))
    finally:
        if saved is not None:
            conf.set("spark.sql.parquet.outputTimestampType", saved)
    written = sorted(e.path for e in fs.list_files(staging, recursive=True)
                     if e.path.endswith(".parquet") and not os.path.basename(e.path).startswith((".", "_")))
    # flattened into the write's directory: a path like day_part=2026-01-05/ would make readers
    # that discover partitions from paths (pyarrow, DuckDB) invent a column
    files = []
    for i, path in enumerate(written):
        flat = f"{staging}/{i:05d}-{os.path.basename(path)}"
        if os.path.dirname(path) != staging:
            fs.move(path, flat)
        else:
            flat = path
        files.append(flat)
    for entry in fs.list_files(staging):
        if entry.is_dir:
            fs.delete_dir(entry.path)
    for marker in ("_SUCCESS", "._SUCCESS.crc"):  # Spark's job marker: not the table's
        fs.delete_file(f"{staging}/{marker}")
    return [_data_file(itbl, _file_uri(p)) for p in files]


def _data_file(itbl: Any, path: str) -> Any:
    """The Iceberg DataFile of a Parquet file Spark wrote: statistics from its footer, the
    partition from the file's rows (Spark grouped the rows by partition, so each file holds one:
    its first row's values, through the partition transforms). Never from the statistics: Parquet
    leaves out the bounds of long values (a missing bound is no NULL partition), and a NaN's
    bounds cannot be compared."""
    import pyarrow.parquet as pq

    schema = itbl.schema()
    local = fs.strip_file_scheme(path)
    pfile = pq.ParquetFile(local)
    meta = pfile.metadata
    _check_pyarrow_schema_compatible(schema, meta.schema.to_arrow_schema(),
                                     format_version=itbl.metadata.format_version)
    stats = data_file_statistics_from_parquet_metadata(
        parquet_metadata=meta, stats_columns=compute_statistics_plan(schema, itbl.metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema))
    spec = itbl.spec()
    values: list[Any] = []
    if spec.fields:
        sources = [schema.find_field(pf.source_id) for pf in spec.fields]
        names = list(dict.fromkeys(f.name for f in sources))
        first: dict[str, Any] = dict.fromkeys(names)
        if meta.num_rows:
            batch = next(pfile.iter_batches(batch_size=1, columns=names))
            first = {n: batch.column(n)[0].as_py() for n in names}
        for pf, source in zip(spec.fields, sources):
            value = _internal(first[source.name], source.field_type)
            values.append(pf.transform.transform(source.field_type)(value) if value is not None else None)
            _check_range(pf, source, values[-1], value)
    return DataFile.from_args(content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET,
                              partition=Record(*values), file_size_in_bytes=os.path.getsize(local),
                              sort_order_id=None, spec_id=itbl.metadata.default_spec_id, equality_ids=None,
                              key_metadata=None, **stats.to_serialized_dict())


_INT_RANGES = {IntegerType: (-(2**31), 2**31 - 1), LongType: (-(2**63), 2**63 - 1)}


def _check_range(pf: PartitionField, source: NestedField, part: Any, value: Any) -> None:
    """Refuses a truncate partition outside its type's range (truncate(10) of INT -2147483648 is
    -2147483650 by pyiceberg's transform, which no manifest can hold; Java's Iceberg wraps it to
    2147483646, which pyiceberg's scan planning, ours, would then prune wrongly)."""
    bounds = _INT_RANGES.get(type(source.field_type))
    if bounds is None or part is None or not isinstance(pf.transform, TruncateTransform):
        return
    if not bounds[0] <= part <= bounds[1]:
        raise UnsupportedError(
            f"The value {value} of column {source.name} has no Iceberg partition {pf.name}: {pf.transform} of it is "
            f"{part}, outside {hive_type(source.field_type, source.name).upper()}'s range. Filter out or change "
            "that value in the SELECT, or partition the table otherwise.")


def _internal(value: Any, typ: IcebergType) -> Any:
    """A value pyarrow read as Iceberg holds it internally (a date as days, a timestamp as
    microseconds since the epoch), which the partition transforms take."""
    if value is None:
        return None
    if isinstance(typ, DateType):
        return date_to_days(value)
    if isinstance(typ, (TimestampType, TimestamptzType)):
        return datetime_to_micros(value)
    return value


def _transform_column(pf: PartitionField, source: NestedField) -> Any:
    """A column whose value is the same for every row of one partition (files are split by it,
    Spark's ``partitionBy`` writing a directory per value). A string's is its SHA-256: Spark
    writes NULL and '' to one directory (Hive's default partition), which Iceberg keeps apart,
    and a long value would be a directory name longer than the file system takes."""
    from pyspark.sql import functions as F

    col = F.col(f"`{source.name}`")
    t = pf.transform
    if isinstance(t, IdentityTransform):
        return F.sha2(col, 256) if isinstance(source.field_type, StringType) else col
    if isinstance(t, (YearTransform, MonthTransform, DayTransform, HourTransform)):
        unit = {YearTransform: "year", MonthTransform: "month", DayTransform: "day", HourTransform: "hour"}[type(t)]
        return F.date_trunc(unit, col)
    if isinstance(t, TruncateTransform) and isinstance(source.field_type, StringType):
        return F.sha2(F.substring(col, 1, t.width), 256)
    if isinstance(t, TruncateTransform) and isinstance(source.field_type, (IntegerType, LongType)):
        # wider than the column: a truncation can leave its type's range (pyiceberg's value for INT_MIN by 10
        # is -2147483650), which would fail under ANSI; _data_file refuses such a partition clearly
        wide = col.cast("decimal(21,0)")
        return wide - F.pmod(wide, F.lit(t.width).cast("decimal(21,0)"))
    raise UnsupportedError(f"hivepark cannot write Iceberg tables partitioned by {t}({source.name}) yet: it "
                           "writes identity, year, month, day, hour and bucket partitions, and truncate of "
                           "strings and integers")


def _with_bucket(df: DataFrame, source: NestedField, buckets: int, name: str) -> DataFrame:
    """``df`` with a column ``name`` holding Iceberg's bucket of ``source`` (murmur3, as
    pyiceberg computes it; Spark has no such function, so the values go through a Python UDF)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    typ = source.field_type
    if not isinstance(typ, (IntegerType, LongType, StringType, DateType)):
        raise UnsupportedError(f"hivepark writes bucket partitions of integer, string and date columns; "
                               f"{source.name} is {typ}")
    kind = "long" if isinstance(typ, (IntegerType, LongType)) else "date" if isinstance(typ, DateType) else "string"
    bucket = F.udf(_bucket_function(buckets, kind), T.IntegerType(), useArrow=False)
    return df.withColumn(name, bucket(F.col(f"`{source.name}`")))


def _bucket_function(buckets: int, kind: str) -> Any:
    state: dict[str, Any] = {}

    def bucket(value: Any) -> int | None:
        fn = state.get("fn")
        if fn is None:
            from pyiceberg.transforms import BucketTransform as Bucket
            from pyiceberg.types import DateType as D
            from pyiceberg.types import LongType as L
            from pyiceberg.types import StringType as S

            fn = state["fn"] = Bucket(buckets).transform({"long": L(), "date": D(), "string": S()}[kind])
        if value is None:
            return None
        if kind == "date":
            value = (value - datetime.date(1970, 1, 1)).days
        return int(fn(value))

    return bucket


def _commit(itbl: Any, files: list[Any], overwrite: bool, write_id: str) -> None:
    """One Iceberg commit of ``files``: an append, or an overwrite of the whole table
    (unpartitioned) or of the partitions the files belong to; retried on a newer snapshot
    when another writer committed first."""
    props = {WRITE_ID: write_id}
    for attempt in range(MAX_COMMIT_RETRIES):
        if attempt:
            itbl = itbl.refresh()
        try:
            with itbl.transaction() as tx:
                if overwrite:
                    spec = itbl.spec()
                    touched = {_key(f.partition) for f in files}
                    obsolete = []
                    if itbl.current_snapshot() is not None:
                        for task in itbl.scan().plan_files():
                            if not spec.fields or (task.file.spec_id == spec.spec_id
                                                   and _key(task.file.partition) in touched):
                                obsolete.append(task.file)
                    if not files and not obsolete:
                        return
                    with tx.update_snapshot(snapshot_properties=props).overwrite() as ow:
                        if any(_NAN in _key(f.partition) for f in obsolete):
                            _prune_no_manifests(ow)
                        for f in obsolete:
                            ow.delete_data_file(f)
                        for f in files:
                            ow.append_data_file(f)
                else:
                    if not files:
                        return
                    with tx.update_snapshot(snapshot_properties=props).fast_append() as fa:
                        for f in files:
                            fa.append_data_file(f)
            return
        except (CommitFailedException, ValidationException):
            # pyiceberg retries a lost race itself, but refuses an overwrite whose partitions
            # another writer changed meanwhile (ValidationException): plan it again on the new
            # snapshot (its obsolete files are those of the partitions as they are now)
            continue
    raise CommitConflict(f"Could not commit to Iceberg table {itbl.name()}: other writers committed first "
                         f"{MAX_COMMIT_RETRIES} times. Nothing was written; run the statement again.")


def _key(record: Any) -> tuple[Any, ...]:
    """A partition's values as a key that equals itself: a NaN (which equals nothing, itself
    included) becomes a marker, so an overwrite of the NaN partition finds its old files."""
    if record is None:
        return ()
    return tuple(_NAN if isinstance(v, float) and math.isnan(v) else v for v in (record[i] for i in range(len(record))))


def _prune_no_manifests(overwrite: Any) -> None:
    """pyiceberg prunes the manifests an overwrite rewrites by a predicate of the deleted files'
    partition values (``part = value``), which it cannot build for NaN (no literal); with a NaN
    partition among them, every manifest is read instead (the files deleted are still exactly
    those named)."""
    def every_manifest() -> None:
        for spec_id in {f.spec_id for f in overwrite._deleted_data_files}:
            overwrite.partition_filters[spec_id] = AlwaysTrue()

    overwrite._build_delete_files_partition_predicate = every_manifest


class _NaN:
    def __repr__(self) -> str:
        return "NaN"


_NAN = _NaN()


# ------------------------------------------------------------------ recovery

def marker_dir(warehouse: str) -> str:
    return f"{state_dir(fs.normalize(warehouse))}/iceberg"


def _marker_path(warehouse: str, write_id: str) -> str:
    return f"{marker_dir(warehouse)}/{write_id}.json"


def recover_writes(warehouse: str, metastore_url: str) -> int:
    """Deletes the files of Iceberg writes that died before their commit (their journal is
    left and their owner is proven dead); a write whose snapshot was committed keeps its files.
    Returns how many writes were cleaned up.

    Raises:
        JournalError: a journal cannot be read (it names the file)."""
    env = HandlerEnvironment(warehouse, metastore_url)
    cleaned = 0
    for path, m in abandoned_journals(marker_dir(warehouse)):
        props = {} if m.get("catalog") in (None, OWN_CATALOG) else {CATALOG: m["catalog"]}
        ident = tuple(m.get("identifier") or ())
        committed = False
        try:
            cat = _own_catalog(env) if not props else _named_catalog(props[CATALOG])
            itbl = cat.load_table(ident)
            committed = any(s.summary is not None and s.summary.additional_properties.get(WRITE_ID) == m["write_id"]
                            for s in itbl.snapshots())
        except NoSuchTableError:
            committed = False
        if not committed:
            fs.delete_dir(m.get("staging", ""))
        fs.delete_file(path)
        cleaned += 1
    return cleaned


def is_iceberg(table: Table) -> bool:
    return any(k.lower() == STORAGE_HANDLER_KEY and v.lower() in ("iceberg", IcebergStorageHandler.aliases[0].lower())
               for k, v in table.properties.items())
