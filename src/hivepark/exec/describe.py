"""SHOW, DESCRIBE and SET: small results as DataFrames, in Hive's shapes."""

from __future__ import annotations

import datetime
import fnmatch
import json
import re
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame

from hivepark import layout
from hivepark.catalog.buckets import KEYS as BUCKET_KEYS
from hivepark.catalog.buckets import table_buckets
from hivepark.catalog.filters import Undecidable
from hivepark.catalog.models import VIEW, VIEW_EXPANDED_TEXT, VIEW_ORIGINAL_TEXT, Column, Partition, Table
from hivepark.catalog.skew import RESERVED, SKEW_AUTO_TOPK, partition_layout, table_skew
from hivepark.config import DEFAULTS, TYPED
from hivepark.errors import MASK, NoSuchPartition, NoSuchTable, SemanticError, UserInputError
from hivepark.exec import column_stats
from hivepark.exec.context import Context
from hivepark.exec.session import set_spark_setting
from hivepark.expr import and_all
from hivepark.plan.nodes import QueryPlan
from hivepark.sql import statements as s
from hivepark.sql import views as sql_views
from hivepark.sql.validate import exactly, full_spec, spec_filter
from hivepark.storage import fs
from hivepark.storage.commit import COLUMN_STATS, FILES_PARAM
from hivepark.storage.formats import (
    COLLECTION_DELIM,
    DEFAULT_TEXT_DELIM,
    ESCAPE_DELIM,
    MAPKEY_DELIM,
    NULL_FORMAT,
    SERDE_DELIMITERS,
)
from hivepark.storage.handlers import handler_for, handler_properties
from hivepark.types import HiveType


def _like(names: list[str], pattern: str | None) -> list[str]:
    if pattern is None:
        return names
    alts = [fnmatch.translate(p.strip().lower()) for p in pattern.split("|")]
    rx = re.compile("|".join(alts))
    return [n for n in names if rx.fullmatch(n)]


def show_databases(ctx: Context, stmt: s.ShowDatabases) -> DataFrame:
    names = _like(ctx.catalog.list_databases(), stmt.like)
    return ctx.rows(["database_name"], [(n,) for n in names])


def show_tables(ctx: Context, stmt: s.ShowTables) -> DataFrame:
    """SHOW TABLES (the views too, as Hive) and SHOW VIEWS (the views alone)."""
    names = _like(ctx.catalog.list_tables(stmt.db or ctx.current_db, VIEW if stmt.views else None), stmt.like)
    return ctx.rows(["tab_name"], [(n,) for n in names])


# Hive's names of column types in SHOW TABLE EXTENDED's struct (its Thrift names)
_THRIFT_TYPES = {"tinyint": "byte", "smallint": "i16", "int": "i32", "bigint": "i64", "boolean": "bool"}


def _struct(name: str, cols: Sequence[Column]) -> str:
    if not cols:
        return ""
    fields = ", ".join(f"{re.sub(r'[a-z]+', lambda m: _THRIFT_TYPES.get(m[0], m[0]), c.type)} {c.name}"
                       for c in cols)
    return f"struct {name} {{ {fields}}}"


def show_table_extended(ctx: Context, stmt: s.ShowTableExtended) -> DataFrame:
    """Hive's SHOW TABLE EXTENDED [IN db] LIKE 'p' [PARTITION (...)]: for each table (and
    view) the pattern matches, lines of ``key:value`` (``tab_name``): where it lives, its
    formats, columns, partition columns, and its files' count, total, largest and smallest
    size and latest access and update times (milliseconds), listed from its directories (a
    partition's alone with PARTITION), then an empty line."""
    db = stmt.db or ctx.current_db
    names = _like(ctx.catalog.list_tables(db), stmt.like)
    if stmt.partition and not names:
        raise NoSuchTable(f"Table not found {db}.{stmt.like}: SHOW TABLES IN {db} lists its tables")
    lines: list[str] = []
    for name in names:
        table = ctx.catalog.get_table(db, name)
        locations = [table.location] if not table.is_view and table.location else []
        if stmt.partition:
            locations = [_partition(ctx, table, stmt.partition).location]
        elif table.is_partitioned:  # a partition's own LOCATION may be outside the table's directory
            locations += [p.location for p in ctx.catalog.list_partitions(table)
                          if not layout.is_within(table.location, p.location)]
        files = [f for loc in locations for f in fs.list_files(loc, recursive=True) if not f.is_dir]
        sizes = [f.size for f in files]
        updated = max((f.mtime_ns or 0 for f in files), default=0) // 1_000_000
        serde = _SERDE.get(table.format, ("", "", "")) if not table.is_view and handler_for(table) is None \
            else ("", "", "")
        lines += [f"tableName:{table.name}", "owner:", f"location:{locations[0] if locations else ''}",
                  f"inputformat:{serde[1]}", f"outputformat:{serde[2]}", f"columns:{_struct('columns', table.columns)}",
                  f"partitioned:{str(table.is_partitioned).lower()}",
                  f"partitionColumns:{_struct('partition_columns', table.partition_keys)}",
                  f"totalNumberFiles:{len(files)}", f"totalFileSize:{sum(sizes)}",
                  f"maxFileSize:{max(sizes, default=0)}", f"minFileSize:{min(sizes, default=0)}",
                  f"lastAccessTime:{updated}", f"lastUpdateTime:{updated}", ""]
    return ctx.rows(["tab_name"], [(line,) for line in lines], masked=False)


def show_columns(ctx: Context, stmt: s.ShowColumns) -> DataFrame:
    """Hive's SHOW COLUMNS IN t: the ``field`` of each column, the partition columns last
    (a view's too), those LIKE the pattern when one is given (``*`` any text, ``|`` or)."""
    table = ctx.table(stmt.table, view_ok=True)
    names = [c.name for c in (*table.columns, *table.partition_keys)]
    shown = set(_like(names, stmt.like))
    return ctx.rows(["field"], [(n,) for n in names if n in shown], masked=False)


def describe_database(ctx: Context, stmt: s.DescribeDatabase) -> DataFrame:
    """Hive's DESCRIBE DATABASE [EXTENDED] db: one row of ``db_name``, ``comment``,
    ``location``, ``owner_name``, ``owner_type`` and, with EXTENDED, ``parameters``
    (``{k=v, ...}``)."""
    db = ctx.catalog.get_database(stmt.name)
    row = [db.name, db.comment or "", db.location, "", ""]
    columns = ["db_name", "comment", "location", "owner_name", "owner_type"]
    if stmt.extended:
        columns.append("parameters")
        row.append("{" + ", ".join(f"{k}={v}" for k, v in sorted(db.properties.items())) + "}"
                   if db.properties else "")
    return ctx.rows(columns, [tuple(row)])


def show_functions(ctx: Context, stmt: s.ShowFunctions) -> DataFrame:
    """Hive's SHOW FUNCTIONS [LIKE 'p'] (column ``tab_name``): the functions a query can call,
    which are Spark's (built-in and registered in the session)."""
    names = sorted({r[0] for r in ctx.spark.sql("SHOW FUNCTIONS").collect()})
    return ctx.rows(["tab_name"], [(n,) for n in _like(names, stmt.like)], masked=False)


def describe_function(ctx: Context, stmt: s.DescribeFunction) -> DataFrame:
    """Hive's DESCRIBE FUNCTION [EXTENDED] f (column ``tab_name``): Spark's description of
    the function a query calls; a name no function has says so, as Hive does."""
    if not ctx.spark.catalog.functionExists(stmt.name):
        return ctx.rows(["tab_name"], [(f"Function '{stmt.name}' does not exist.",)], masked=False)
    name = stmt.name.replace("`", "``")
    text = [str(r[0]) for r in ctx.spark.sql(
        f"DESCRIBE FUNCTION {'EXTENDED ' if stmt.extended else ''}`{name}`").collect()]
    return ctx.rows(["tab_name"], [(line,) for line in text], masked=False)


def show_partitions(ctx: Context, stmt: s.ShowPartitions) -> DataFrame:
    table = ctx.table(stmt.table)
    handler = handler_for(table)
    if handler is not None:  # an Iceberg table's partitions are its spec's, in its Iceberg metadata
        shown = handler.aliases[0] if handler.aliases else handler.name
        raise UserInputError(f"SHOW PARTITIONS lists the partitions the metastore keeps, and table "
                             f"{table.qualified_name} keeps its rows in the source of its storage handler {shown}, "
                             "so the metastore has none of them (an Iceberg table's are in its Iceberg metadata: "
                             "SELECT DISTINCT of its partition columns lists their values)")
    if not table.is_partitioned:
        raise UserInputError(f"Table {table.qualified_name} is not a partitioned table: "
                             "SHOW PARTITIONS needs a table with PARTITIONED BY")
    spec = stmt.partition
    keys = table.partition_key_names()
    for name in sorted((stmt.where.columns() if stmt.where is not None else set()) | {k for k, _ in stmt.order}):
        if name not in keys:
            raise SemanticError(f"Invalid column reference {name}: SHOW PARTITIONS ... WHERE and ORDER BY name "
                                f"partition columns of {table.qualified_name} ({', '.join(keys)})", code=10002)
    given = [f for f in (spec_filter(table, spec) if spec else None, stmt.where) if f is not None]
    parts = ctx.catalog.list_partitions(table, and_all(*given) if given else None)
    if given:  # the metastore's answer may keep more: each partition decided exactly
        try:
            parts = exactly(table, and_all(*given), parts)
        except Undecidable as e:
            raise SemanticError(f"SHOW PARTITIONS ... WHERE cannot decide {e.reason}: compare partition columns "
                                "with constants (=, <, IN, BETWEEN, LIKE, IS NULL, AND, OR, NOT)") from None
    for key, desc in reversed(stmt.order):  # stable sorts; Hive's NULLS FIRST ascending, LAST descending
        i, typ = keys.index(key), HiveType.parse(table.partition_types()[key])
        parts = sorted(parts, key=lambda p: _ordered(typ.decode(p.values[i])), reverse=desc)
    if stmt.limit is not None:
        parts = parts[:stmt.limit]
    names = [layout.make_part_name(keys, p.values) for p in parts]
    if ctx.conf.get_bool("hive.decode.partition.name"):  # Hive: the names unescaped (a%2Fb shown as a/b)
        names = [layout.unescape_path_name(n) for n in names]
    return ctx.rows(["partition"], [(n,) for n in names], masked=False)  # data: a column may be named pwd


def _ordered(value: Any) -> tuple[bool, Any]:
    """A partition value's sort key: NULL (and text not of the key's type) before every value."""
    return (False, 0) if value is None else (True, value)


# Hive's hive.conf.hidden.list: settings whose values SET never shows (nor does any key that
# names a password, a secret or a credential)
HIDDEN_SETTINGS = frozenset({
    "javax.jdo.option.connectionpassword", "hive.server2.keystore.password", "fs.s3.awsaccesskeyid",
    "fs.s3.awssecretaccesskey", "fs.s3n.awsaccesskeyid", "fs.s3n.awssecretaccesskey", "fs.s3a.access.key",
    "fs.s3a.secret.key", "fs.s3a.proxy.password", "dfs.adls.oauth2.credential", "fs.adl.oauth2.credential",
    "fs.azure.account.oauth2.client.secret", "hive.sql.dbcp.password"})
_SECRET_KEY = re.compile(r"password|passwd|pwd|secret|credential|access\.?key", re.IGNORECASE)


def _shown_setting(key: str, value: str) -> str:
    """``key=value`` as SET shows it: the value of a hidden setting masked."""
    if key.lower() in HIDDEN_SETTINGS or _SECRET_KEY.search(key):
        return f"{key}={MASK}"
    return f"{key}={value}"


def set_command(ctx: Context, cmd: s.Set) -> DataFrame:
    if cmd.key is None or cmd.key == "-v" and cmd.value is None:  # SET -v: every setting, as SET
        settings = dict(ctx.conf.items())
        in_force = getattr(ctx.spark.conf, "getAll", None)  # Spark's settings as Spark uses them
        settings.update({k: v for k, v in (in_force or {}).items() if k.startswith("spark.")})
        return ctx.rows(["set"], [(_shown_setting(k, v),) for k, v in sorted(settings.items())])
    if cmd.value is None:
        # a Spark setting shows the value Spark uses, not the one last asked for
        v = ctx.spark.conf.get(cmd.key, None) if cmd.key.startswith("spark.") else ctx.conf.get(cmd.key)
        return ctx.rows(["set"], [(_shown_setting(cmd.key, v) if v is not None else
                                   f"{cmd.key} is undefined",)])
    if cmd.key.startswith("spark."):
        before = ctx.spark.conf.get(cmd.key, None)
        set_spark_setting(ctx.spark, cmd.key, cmd.value)  # refused before it is recorded
        ctx.spark_before_set.setdefault(cmd.key, before)
    ctx.conf.set(cmd.key, cmd.value)
    return ctx.empty()


def create_macro(ctx: Context, stmt: s.CreateMacro) -> DataFrame:
    """CREATE TEMPORARY MACRO: a Spark SQL temporary function of this session (Hive's macros
    are the session's too), which queries call by its name."""
    params = ", ".join(f"`{n}` {t}" for n, t in stmt.params)
    ctx.spark.sql(f"CREATE OR REPLACE TEMPORARY FUNCTION `{stmt.name}`({params}) RETURN {stmt.body}")
    return ctx.empty()


def drop_macro(ctx: Context, stmt: s.DropMacro) -> DataFrame:
    """DROP TEMPORARY MACRO [IF EXISTS]: a missing macro is an error only without IF EXISTS
    and with ``hive.exec.drop.ignorenonexistent`` false, as Hive's."""
    quiet = stmt.if_exists or ctx.conf.get_bool("hive.exec.drop.ignorenonexistent")
    ctx.spark.sql(f"DROP TEMPORARY FUNCTION {'IF EXISTS ' if quiet else ''}`{stmt.name}`")
    return ctx.empty()


def show_conf(ctx: Context, stmt: s.ShowConf) -> DataFrame:
    """Hive's SHOW CONF 'key': one row of the setting's default, type and description, for
    the settings hivepark knows (config.DEFAULTS); another key is an error naming SET."""
    key = stmt.key.strip()
    if key not in DEFAULTS:
        raise SemanticError(f"hive configuration {key} does not exists (hivepark knows its defaults of "
                            f"{len(DEFAULTS)} settings). SET {key} shows its value in this session.")
    kind = TYPED.get(key, "STRING")
    return ctx.rows(["default", "type", "desc"], [(DEFAULTS[key], kind, "")], masked=False)


def reset_command(ctx: Context, cmd: s.Reset) -> DataFrame:
    """RESET [k]: the settings SET changed back to their values at connect (Hive's RESET);
    a Spark setting (``spark.*``) SET changed back to its value in the session before."""
    ctx.conf.reset(cmd.key)
    for key in [cmd.key] if cmd.key is not None else list(ctx.spark_before_set):
        if key in ctx.spark_before_set:
            value = ctx.spark_before_set.pop(key)
            if value is None:
                ctx.spark.conf.unset(key)
            else:
                set_spark_setting(ctx.spark, key, value)
    return ctx.empty()


def _col_rows(cols) -> list[tuple]:
    return [(c.name, c.type, c.comment or "") for c in cols]


def _partition(ctx: Context, table: Table, spec: s.PartitionSpec) -> Partition:
    """The partition a full PARTITION (...) clause names; NoSuchPartition when it has none."""
    values = full_spec(table, spec)
    part = ctx.catalog.get_partition(table, values)
    if part is None:
        raise NoSuchPartition(f"Partition not found {layout.make_part_name(table.partition_key_names(), values)} "
                              f"in {table.qualified_name}: SHOW PARTITIONS {table.name} lists them")
    return part


def describe(ctx: Context, stmt: s.Describe) -> DataFrame:
    table = ctx.table(stmt.table, view_ok=not stmt.partition)
    style = stmt.style or ""
    spec = stmt.partition
    part = _partition(ctx, table, spec) if spec else None
    rows = _col_rows(table.columns) + _col_rows(table.partition_keys)
    if stmt.column is not None:  # Hive's DESCRIBE t col: its name, type and comment
        rows = [r for r in rows if r[0] == stmt.column]
        if not rows:
            raise SemanticError(f"Invalid column reference {stmt.column}: {table.qualified_name} has no such column. "
                                f"DESCRIBE {table.name} lists its columns.", code=10002)
        col = next((c for c in table.columns if c.name == stmt.column), None)
        if style == "FORMATTED" and col is not None and not table.is_view:  # with its statistics
            parts = ctx.catalog.list_partitions(table) if table.is_partitioned and part is None else None
            return ctx.rows(["column_property", "value"], column_stats.described(table, col, part, parts))
        return ctx.rows(["col_name", "data_type", "comment"], rows[:1])
    if table.is_partitioned:
        rows += [("", "", ""), ("# Partition Information", "", ""),
                 ("# col_name", "data_type", "comment")] + _col_rows(table.partition_keys)
    if style == "FORMATTED" and table.is_view:
        rows += [("", "", "")] + _table_info(table) + [
            ("", "", ""), ("# View Information", "", ""),
            ("View Original Text:", table.properties.get(VIEW_ORIGINAL_TEXT, ""), ""),
            ("View Expanded Text:", table.properties.get(VIEW_EXPANDED_TEXT, ""), "")]
    elif style == "FORMATTED":
        rows += [("", "", "")] + (_partition_info(table, part) if part else _table_info(table))
        rows += _storage_info(table, skew_lines(ctx, table, part))
    elif style == "EXTENDED":
        rows += [("", "", ""), ("Detailed Table Information" if part is None else
                                "Detailed Partition Information", _extended(table, part), "")]
    return ctx.rows(["col_name", "data_type", "comment"], rows)


def _time(ts: int) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%a %b %d %H:%M:%S UTC %Y") if ts else "UNKNOWN"


_VIEW_TEXTS = (VIEW_ORIGINAL_TEXT, VIEW_EXPANDED_TEXT)  # shown in lines of their own
# parameters shown otherwise (skew lines, view texts, DESCRIBE FORMATTED t col) or not at all
_HIDDEN = frozenset({FILES_PARAM, COLUMN_STATS, *RESERVED, *_VIEW_TEXTS, *BUCKET_KEYS, *SERDE_DELIMITERS})


def _params(params) -> list[tuple]:
    return [("", k, v) for k, v in sorted(params.items()) if k not in _HIDDEN]


def _shown_properties(table: Table) -> dict[str, str]:
    """The table's properties, every secret of a handler table masked."""
    handler = handler_for(table)
    return dict(table.properties) if handler is None else handler.masked_properties(table.properties)


def _table_info(table: Table) -> list[tuple]:
    handler = handler_for(table) is not None
    return [("# Detailed Table Information", "", ""), ("Database:", table.db, ""),
            ("OwnerType:", "USER", ""), ("CreateTime:", _time(table.create_time), ""),
            *([] if handler or table.is_view else [("Location:", table.location, "")]),
            ("Table Type:", table.table_type, ""),
            ("Table Parameters:", "", "")] + _params(_shown_properties(table))


def _partition_info(table: Table, part: Partition) -> list[tuple]:
    return [("# Detailed Partition Information", "", ""),
            ("Partition Value:", "[" + ", ".join(v if v is not None else layout.DEFAULT_PARTITION_NAME
                                                 for v in part.values) + "]", ""),
            ("Database:", table.db, ""), ("Table:", table.name, ""),
            ("CreateTime:", _time(part.create_time), ""), ("Location:", part.location, ""),
            ("Partition Parameters:", "", "")] + _params(part.parameters)


_SERDE = {
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcSerde", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"),
    "textfile": ("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                 "org.apache.hadoop.mapred.TextInputFormat",
                 "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"),
}


def _storage_info(table: Table, skewed: list[tuple] | None = None) -> list[tuple]:
    handler = handler_for(table)
    if handler is not None:
        return [("", "", ""), ("# Storage Information", "", ""),
                ("Storage Handler:", handler.aliases[0] if handler.aliases else handler.name, ""),
                ("Storage Handler Params:", "", "")] + [
            ("", k, v) for k, v in sorted(handler_properties(table.evolve(
                properties=handler.masked_properties(table.properties))).items())] + [
            (k, v, "") for k, v in handler.describe_table(table)]
    serde, inf, outf = _SERDE[table.format]
    rows = [("", "", ""), ("# Storage Information", "", ""), ("SerDe Library:", serde, ""),
            ("InputFormat:", inf, ""), ("OutputFormat:", outf, "")]
    buckets = table_buckets(table)
    if buckets is not None:  # Hive's rows (Order's order: 1 ascending, 0 descending)
        rows += [("Num Buckets:", str(buckets.count), ""), ("Bucket Columns:", f"[{', '.join(buckets.columns)}]", ""),
                 ("Sort Columns:", "[" + ", ".join(f"Order(col:{c}, order:{int(asc)})"
                                                   for c, asc in buckets.sorted_by) + "]", "")]
    rows += list(skewed or [])
    if table.format == "textfile":  # LazySimpleSerDe's parameters, in Hive's order (by name)
        delim = table.field_delim or DEFAULT_TEXT_DELIM
        params = {"field.delim": delim, "serialization.format": delim,
                  **{k: v for k, v in table.properties.items() if k in (NULL_FORMAT, *SERDE_DELIMITERS)}}
        rows += [("Storage Desc Params:", "", "")] + [("", k, v) for k, v in sorted(params.items())]
    return rows


def _extended(table: Table, part: Partition | None) -> str:
    cols = ", ".join(f"FieldSchema(name:{c.name}, type:{c.type}, comment:{_java(c.comment)})"
                     for c in table.columns)
    if part is not None:
        return (f"Partition(values:[{', '.join(str(v) for v in part.values)}], dbName:{table.db}, "
                f"tableName:{table.name}, location:{part.location}, parameters:"
                f"{{{', '.join(f'{k}={v}' for k, v in sorted(part.parameters.items()) if k not in _HIDDEN)}}})")
    keys = ", ".join(f"FieldSchema(name:{c.name}, type:{c.type}, comment:{_java(c.comment)})"
                     for c in table.partition_keys)
    params = ", ".join(f"{k}={v}" for k, v in sorted(_shown_properties(table).items()) if k not in _HIDDEN)
    if table.is_view:
        return (f"Table(tableName:{table.name}, dbName:{table.db}, createTime:{table.create_time}, "
                f"sd:StorageDescriptor(cols:[{cols}]), partitionKeys:[], parameters:{{{params}}}, "
                f"viewOriginalText:{table.properties.get(VIEW_ORIGINAL_TEXT)}, "
                f"viewExpandedText:{table.properties.get(VIEW_EXPANDED_TEXT)}, tableType:{table.table_type})")
    return (f"Table(tableName:{table.name}, dbName:{table.db}, createTime:{table.create_time}, "
            f"sd:StorageDescriptor(cols:[{cols}], location:{table.location}, "
            f"inputFormat:{_SERDE[table.format][1]}), partitionKeys:[{keys}], "
            f"parameters:{{{params}}}, tableType:{table.table_type})")


def _java(value: object) -> str:
    """A value as Hive's Thrift objects print it: no value is ``null``."""
    return "null" if value is None else str(value)


def skew_lines(ctx: Context, table: Table, part: Partition | None) -> list[tuple]:
    """Hive's Stored As SubDirectories / Skewed ... lines of DESCRIBE FORMATTED."""
    spec = table_skew(table)
    lay = partition_layout(part.parameters if part is not None else table.properties)
    if part is None and spec is None or part is not None and spec is None and lay is None:
        return []
    rows: list[tuple] = []
    if spec is not None and spec.stored_as_dirs:
        rows.append(("Stored As SubDirectories:", "Yes", ""))
    use_layout = part is not None and lay is not None
    cols = lay.columns if use_layout else spec.columns  # type: ignore[union-attr]
    values = lay.values if use_layout else spec.values  # type: ignore[union-attr]
    rows.append(("Skewed Columns:", "[" + ", ".join(sorted(cols)) + "]", ""))
    rows.append(("Skewed Values:", "[" + ", ".join(
        "[" + ", ".join(v) + "]" for v in sorted(values, key=list)) + "]", ""))
    # Hive's map holds the directories a write found holding a skewed value's rows, and the
    # default directory only when SET SKEWED LOCATION named it (list_bucket_dml_1.q.out): the
    # default directory a write made (a relative location here) is not shown.
    shown = [(k, loc) for k, loc in lay.locations
             if k is not None or layout.is_absolute(loc)] if lay is not None else []
    if lay is not None and shown:
        base = part.location if part is not None else table.location
        full = [(_key_text(k), layout.resolve_location(base, loc)) for k, loc in shown]
        full.sort(key=lambda kv: (kv[0] == f"[{layout.LB_DEFAULT_KEY}]", kv[0]))
        rows.append(("Skewed Value to Path:",
                     "{" + ", ".join(f"{k}={v}" for k, v in full) + "}", ""))
        root = fs.normalize(ctx.warehouse)
        rows.append(("Skewed Value to Truncated Path:", "{" + ", ".join(
            f"{k}={v[len(root):] if v.startswith(root + '/') else v}" for k, v in full) + "}",
            ""))
    return rows


def _key_text(key: tuple[str, ...] | None) -> str:
    return f"[{layout.LB_DEFAULT_KEY}]" if key is None else "[" + ", ".join(key) + "]"


# ---------------------------------------------------------------- SHOW CREATE TABLE

# Properties hivepark keeps for itself: recomputed by the table's next writes (statistics and
# file lists), or shown by a clause of their own (skew, the handler).
_NOT_DDL = {FILES_PARAM, COLUMN_STATS, *RESERVED, *BUCKET_KEYS, *SERDE_DELIMITERS, "numFiles", "numRows", "totalSize",
            "rawDataSize",
            "COLUMN_STATS_ACCURATE", "storage_handler", "EXTERNAL", "comment"}
_STORED_AS = {"parquet": "PARQUET", "orc": "ORC", "textfile": "TEXTFILE"}


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _char_literal(c: str) -> str:
    """A delimiter as a HiveQL string: a control character as its octal escape (``'\\001'``)."""
    return f"'\\{ord(c):03o}'" if ord(c) < 32 or ord(c) == 127 else _quote(c)


def _row_format_lines(table: Table) -> list[str]:
    """SHOW CREATE TABLE's ROW FORMAT DELIMITED of a TEXTFILE table, in the grammar's order: the
    delimiters and escape character it was given (none: no line)."""
    props = table.properties
    clauses = [(clause, props.get(key)) for clause, key in (("COLLECTION ITEMS TERMINATED BY", COLLECTION_DELIM),
                                                            ("MAP KEYS TERMINATED BY", MAPKEY_DELIM))]
    given = [f"{clause} {_char_literal(v)}" for clause, v in clauses if v]
    escape = props.get(ESCAPE_DELIM)
    if not (table.field_delim or escape or given):
        return []
    fields = f"FIELDS TERMINATED BY {_char_literal(table.field_delim or DEFAULT_TEXT_DELIM)}"
    if escape:  # ESCAPED BY is part of the FIELDS clause
        fields += f" ESCAPED BY {_char_literal(escape)}"
    return [f"ROW FORMAT DELIMITED {fields}" + "".join(f" {g}" for g in given)]


def _column_lines(cols: tuple) -> list[str]:
    lines = []
    for i, c in enumerate(cols):
        comment = f" COMMENT {_quote(c.comment)}" if c.comment else ""
        lines.append(f"  `{c.name}` {c.type}{comment}{', ' if i < len(cols) - 1 else ')'}")
    return lines


def _view_ddl(table: Table) -> list[str]:
    """Hive's SHOW CREATE TABLE of a view: ``CREATE VIEW `db`.`v` (cols) [COMMENT] AS query``."""
    cols = ", ".join(f"`{c.name}`" + (f" COMMENT {_quote(c.comment)}" if c.comment else "")
                     for c in table.columns)
    return [f"CREATE VIEW `{table.db}`.`{table.name}` ({cols})", *_comment_line(table), *_tblproperties_lines(table),
            f"AS {table.properties.get(VIEW_ORIGINAL_TEXT, '')}"]


def _comment_line(table: Table) -> list[str]:
    comment = table.properties.get("comment")
    return [f"COMMENT {_quote(comment)}"] if comment else []


def _tblproperties_lines(table: Table) -> list[str]:
    """The TBLPROPERTIES clause of SHOW CREATE TABLE: the properties a user set (a handler's
    secrets masked), not those hivepark keeps for itself."""
    props = {k: v for k, v in sorted(_shown_properties(table).items())
             if k not in _NOT_DDL and not k.startswith("hivepark.") or k == SKEW_AUTO_TOPK}
    if not props:
        return []
    items = [f"  {_quote(k)}={_quote(v)}" for k, v in props.items()]
    return ["TBLPROPERTIES ("] + [x + ", " for x in items[:-1]] + [items[-1] + ")"]


def show_tblproperties(ctx: Context, stmt: s.ShowTblProperties) -> DataFrame:
    """Hive's SHOW TBLPROPERTIES t [('key')]: ``prpt_name``, ``prpt_value`` rows, sorted, the
    parameters DESCRIBE FORMATTED shows (a handler's secrets masked). A key the table does not
    have gives Hive's one row ``Table db.t does not have property: key``."""
    table = ctx.table(stmt.table, view_ok=True)
    shown = {k: v for _, k, v in _params(_shown_properties(table))}
    if stmt.key is not None:
        if stmt.key not in shown:
            rows = [(f"Table {table.qualified_name} does not have property: {stmt.key}", None)]
        else:
            rows = [(stmt.key, shown[stmt.key])]
    else:
        rows = sorted(shown.items())
    return ctx.rows(["prpt_name", "prpt_value"], rows)


def show_create_table(ctx: Context, stmt: s.ShowCreateTable) -> DataFrame:
    """Hive's SHOW CREATE TABLE: the DDL that re-creates the table (columns, partitioning,
    skew, ROW FORMAT, STORED AS or STORED BY, LOCATION, TBLPROPERTIES), one row per line in
    the column ``createtab_stmt``. A handler table's secrets are masked, as in DESCRIBE."""
    table = ctx.table(stmt.table, view_ok=True)
    if table.is_view:
        return ctx.rows(["createtab_stmt"], [(line,) for line in _view_ddl(table)])
    handler = handler_for(table)
    external = "EXTERNAL " if table.is_external else ""
    lines = [f"CREATE {external}TABLE `{table.db}`.`{table.name}`("]
    lines += _column_lines(table.columns) + _comment_line(table)
    if table.partition_keys:
        lines += ["PARTITIONED BY ( "] + _column_lines(table.partition_keys)
    spec = handler.partitioning_ddl(table) if handler is not None else None
    if spec is not None:
        lines.append(spec)
    buckets = table_buckets(table)
    if buckets is not None:  # Hive's lines
        lines += ["CLUSTERED BY ( ", "  " + ", ".join(f"`{c}`" for c in buckets.columns) + ") "]
        if buckets.sorted_by:
            lines += ["SORTED BY ( ", "  " + ", ".join(f"`{c}` {'ASC' if asc else 'DESC'}"
                                                     for c, asc in buckets.sorted_by) + ") "]
        lines.append(f"INTO {buckets.count} BUCKETS")
    skew = table_skew(table)
    if skew is not None:
        types = {c.name: HiveType.parse(c.type) for c in table.columns}

        def literal(col: str, v: str) -> str:
            t = types.get(col)
            return v if t is not None and t.family == "numeric" else _quote(v)

        values = ",".join("(" + ",".join(literal(c, v) for c, v in zip(skew.columns, vals)) + ")"
                          for vals in skew.values)
        lines += [f"SKEWED BY ({', '.join(f'`{c}`' for c in skew.columns)}) ", f"  ON ({values})"]
        if skew.stored_as_dirs:
            lines.append("  STORED AS DIRECTORIES")
    if handler is not None:
        shown = handler.aliases[0] if handler.aliases else handler.name
        lines.append(f"STORED BY {_quote(shown)}")
    else:
        if table.format == "textfile":
            lines += _row_format_lines(table)
        lines.append(f"STORED AS {_STORED_AS.get(table.format, table.format.upper())}")
        lines += ["LOCATION", f"  {_quote(table.location)}"]
    lines += _tblproperties_lines(table)
    return ctx.rows(["createtab_stmt"], [(line,) for line in lines])


def dependencies(ctx: Context, tree: Any, plan: QueryPlan) -> str:
    """EXPLAIN DEPENDENCY, as Hive prints it: one line of JSON naming the views and tables a
    query reads (``input_tables``: ``db@name``, its type, and ``tableParents``, the views it
    is read through) and the partitions it reads after static pruning (``input_partitions``:
    ``db@name@k=v/...``; a runtime-pruned scan's static choice, as Hive's)."""
    scanned = {scan.table.qualified_name: scan.table for scan in plan.scans}
    views_out: list[dict[str, str]] = []
    tables_out: list[dict[str, str]] = []
    for (db, name), (view, parents) in sql_views.dependencies(tree, ctx.find_view).items():
        table = view if view is not None else scanned.get(f"{(db or ctx.current_db).lower()}.{name.lower()}")
        if table is None:  # a Spark view of the user's, an Iceberg metadata table
            continue
        entry = {"tablename": table.qualified_name.replace(".", "@", 1),
                 "tabletype": table.table_type}
        if parents:
            entry["tableParents"] = "[" + ", ".join(p.replace(".", "@", 1) for p in parents) + "]"
        (views_out if view is not None else tables_out).append(entry)
    names: set[str] = set()
    for scan in plan.scans:
        t = scan.table
        if not t.is_partitioned or scan.pushdown is not None:
            continue
        parts = scan.partitions if not scan.deferred and scan.partitions is not None \
            else ctx.catalog.list_partitions(t, scan.partition_filter)
        keys = t.partition_key_names()
        names |= {f"{t.db}@{t.name}@{layout.make_part_name(keys, p.values)}" for p in parts}
    out = {"input_tables": views_out + sorted(tables_out, key=lambda e: e["tablename"]),
           "input_partitions": [{"partitionName": n} for n in sorted(names)]}
    return json.dumps(out, separators=(",", ":"))
