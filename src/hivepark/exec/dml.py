"""Writes: INSERT (static and dynamic partitions), CTAS, LOAD DATA, MSCK REPAIR TABLE.

Every write goes through :class:`hivepark.storage.commit.Commit`: Spark writes to a staging
directory, then one metastore transaction makes the result visible.
"""

from __future__ import annotations

import os
import shutil
import time

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from hivepark import layout
from hivepark.catalog.models import Column, Partition, Table
from hivepark.catalog.skew import partition_layout, table_skew
from hivepark.errors import HiveParkError, LimitExceeded, SemanticError, UserInputError
from hivepark.exec import lb_write
from hivepark.exec.context import Context
from hivepark.exec.ddl import (
    check_spec_columns,
    create_table,
    full_spec,
    normalize_value,
    store_table,
)
from hivepark.exec.query import run_query, spark_error
from hivepark.exec.scan import spark_type
from hivepark.sql.analyzer import partition_spec
from hivepark.storage import fs
from hivepark.storage.commit import Commit, PartitionWrite
from hivepark.storage.formats import writer

Spec = list[tuple[str, str | None, bool]]


def insert(ctx: Context, node: exp.Insert) -> DataFrame:
    target = node.this
    if isinstance(target, exp.Schema):
        raise SemanticError("INSERT with a column list is not supported: select the columns "
                            "in table order instead")
    table = ctx.table(target)
    spec = partition_spec(target.args.get("partition"))
    df, _ = run_query(ctx, node.expression)
    part_node = target.args.get("partition")
    if_not_exists = bool(node.args.get("exists")) or bool(
        part_node is not None and part_node.meta.get("if_not_exists"))
    write_rows(ctx, table, df, spec, overwrite=bool(node.args.get("overwrite")),
               if_not_exists=if_not_exists)
    return ctx.empty()


def multi_insert(ctx: Context, node: exp.MultitableInserts) -> DataFrame:
    """``FROM s INSERT ... SELECT ... INSERT ... SELECT ...``: the source is read once
    (pruned by the OR of the branches' WHERE clauses, then cached) and feeds every insert."""
    source = node.args["source"]
    alias = source.alias_or_name
    branches = list(node.expressions)
    wheres = [b.expression.args.get("where") for b in branches]
    src_query = exp.select("*").from_(source.copy())
    if all(w is not None for w in wheres):
        src_query = src_query.where(exp.or_(*[exp.paren(w.this.copy()) for w in wheres]))
    src_df, _ = run_query(ctx, src_query)
    src_df = src_df.persist()
    view = f"__hivepark_multi_{abs(hash(node.sql())) % 10**8}"
    src_df.createOrReplaceTempView(view)
    try:
        for branch in branches:
            select = branch.expression.copy()
            select.set("from_", exp.From(this=exp.Table(
                this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(alias)))))
            target = branch.this
            table = ctx.table(target)
            df, _ = run_query(ctx, select)
            write_rows(ctx, table, df, partition_spec(target.args.get("partition")),
                       overwrite=bool(branch.args.get("overwrite")),
                       if_not_exists=bool(branch.args.get("exists")))
    finally:
        ctx.spark.catalog.dropTempView(view)
        src_df.unpersist()
    return ctx.empty()


def dynamic_columns(ctx: Context, table: Table, spec: Spec) -> list[str]:
    """Checks a PARTITION clause as Hive does and returns its dynamic columns, in order."""
    if not table.is_partitioned:
        check_spec_columns(table, spec)
        return []
    if not spec:
        spec = [(k, None, False) for k in table.partition_key_names()]
    dyn = [c for c, _, static in spec if not static]
    if dyn and not ctx.conf.get_bool("hive.exec.dynamic.partition"):
        raise SemanticError("Dynamic partition is disabled. Either enable it by setting "
                            "hive.exec.dynamic.partition=true or specify partition column values",
                            code=10095)
    check_spec_columns(table, spec)
    if dyn and len(dyn) == len(spec) and \
            (ctx.conf.get("hive.exec.dynamic.partition.mode") or "").lower() == "strict":
        raise SemanticError("Dynamic partition strict mode requires at least one static "
                            "partition column. To turn this off set "
                            "hive.exec.dynamic.partition.mode=nonstrict", code=10096)
    names = [c for c, _, _ in spec]
    if names != list(table.partition_key_names()):
        raise SemanticError(
            "Partition columns in partition specification are not the same as that defined in "
            "the table schema. The names and orders have to be exactly the same. Partition "
            f"columns in the table schema are: ({', '.join(table.partition_key_names())}), while "
            f"the partitions specified in the query are: ({', '.join(names)}).", code=10125)
    seen_dynamic = False
    for c, _, static in spec:
        if static and seen_dynamic:
            raise SemanticError(f"Dynamic partition cannot be the parent of a static partition "
                                f"'{c}'", code=10094)
        seen_dynamic = seen_dynamic or not static
    return dyn


def write_rows(ctx: Context, table: Table, df: DataFrame, spec: Spec, overwrite: bool,
               if_not_exists: bool = False) -> Table:
    """Writes ``df`` (data columns, then the dynamic partition columns) into ``table``."""
    dyn = dynamic_columns(ctx, table, spec)
    if dyn and if_not_exists:
        raise SemanticError("Dynamic partitions do not support IF NOT EXISTS. Specified "
                            f"partitions with value : {{{', '.join(f'{c}=null' for c in dyn)}}}",
                            code=10127)
    expected = len(table.columns) + len(dyn)
    if len(df.columns) != expected:
        raise SemanticError(
            f"Cannot insert into target table because column number/types are different "
            f"'{table.name}': Table insclause-0 has {expected} columns, but query has "
            f"{len(df.columns)} columns.", code=10044)
    static = {c: v for c, v, s in spec if s}
    if not dyn:
        values = full_spec(table, spec) if table.is_partitioned else ()
        if if_not_exists and table.is_partitioned and ctx.catalog.get_partition(table, values):
            return table
        return _write_static(ctx, table, df, values, overwrite)
    for k, v in static.items():
        static[k] = normalize_value(table, k, v)
    return _write_dynamic(ctx, table, df, static, dyn, overwrite)


def _data_columns(table: Table, df: DataFrame) -> list:
    cols = df.columns
    fields = df.schema.fields
    for i, c in enumerate(table.columns):
        if not _castable(fields[i].dataType.simpleString(), spark_type(c.type)):
            raise SemanticError(
                f"Cannot insert into target table because column number/types are different "
                f"'{table.name}': column {i + 1} of the query is {fields[i].dataType.simpleString()}"
                f", which cannot be converted to {c.name} {c.type}. Convert it in the SELECT.",
                code=10044)
    return [F.col(f"`{cols[i]}`").cast(spark_type(c.type)).alias(c.name)
            for i, c in enumerate(table.columns)]


def _castable(src: str, dst: str) -> bool:
    """Whether Spark can cast a value of type ``src`` to ``dst`` at all."""
    complex_src, complex_dst = src.split("<")[0] in ("array", "map", "struct"), \
        dst.split("<")[0] in ("array", "map", "struct")
    if complex_src or complex_dst:
        return src.split("<")[0] == dst.split("<")[0] or dst == "string"
    return True


def _write_static(ctx: Context, table: Table, df: DataFrame, values: tuple, overwrite: bool) -> Table:
    existing = ctx.catalog.get_partition(table, values) if table.is_partitioned else None
    if table.is_partitioned:
        location = existing.location if existing else layout.partition_path(
            table.location, table.partition_key_names(), values)
    else:
        location = table.location
    data = df.select(*_data_columns(table, df))
    lb = lb_write.static_plan(ctx, table, data, existing, overwrite)
    commit = Commit(ctx.warehouse, table)
    try:
        if lb is None:
            _spark_write(writer(data.repartition(1), table), commit.staging + "/data")
            files = fs.list_files(commit.staging + "/data")
            w = PartitionWrite(values, location, files, _count_rows(table, files), overwrite)
        else:
            data = lb_write.with_lb_column(ctx, table, data, lb, [])
            _spark_write(writer(data.repartition(1), table).partitionBy(lb_write.LB_COL),
                         commit.staging + "/data")
            w = lb_write.staged_write(table, commit.staging + "/data", values, location, lb,
                                      overwrite, lb_write.old_layout(table, existing, overwrite),
                                      _count_rows)
    except BaseException:
        commit.abort()
        raise
    return commit.finish(ctx.catalog, [w])


def _write_dynamic(ctx: Context, table: Table, df: DataFrame, static: dict, dyn: list[str],
                   overwrite: bool) -> Table:
    cols = df.columns
    n = len(table.columns)
    types = table.partition_types()
    part_cols = []
    for k in table.partition_key_names():
        if k in static:
            part_cols.append(F.lit(static[k]).cast(spark_type(types[k])).alias(k))
        else:
            part_cols.append(F.col(f"`{cols[n + dyn.index(k)]}`").cast(spark_type(types[k])).alias(k))
    out = df.select(*_data_columns(table, df), *part_cols)
    keys = list(table.partition_key_names())
    grouped = lb_write.dynamic_grouped(table, out, keys)
    try:
        tasks, rows = _preflight(ctx, out, keys, grouped)
        lb = lb_write.dynamic_plan(ctx, table, keys, rows, grouped, overwrite) if tasks else None
    finally:
        if grouped is not None:
            grouped.unpersist()
    if tasks == 0:
        return table
    commit = Commit(ctx.warehouse, table)
    try:
        if lb is not None:
            out = lb_write.with_lb_column(ctx, table, out, lb, keys)
        by = keys + ([lb_write.LB_COL] if lb is not None else [])
        w = writer(out.repartition(tasks, *[F.col(k) for k in keys]), table).partitionBy(*by)
        per_file = _rows_per_file(ctx)
        if per_file:
            w = w.option("maxRecordsPerFile", per_file)
        _spark_write(w, commit.staging + "/data")
        writes = _staged_partitions(ctx, table, commit.staging + "/data", overwrite, lb)
    except BaseException:
        commit.abort()
        raise
    return commit.finish(ctx.catalog, writes)


def _rows_per_file(ctx: Context) -> int:
    raw = ctx.conf.get("hivepark.max.rows.per.file") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        raise UserInputError(f"hivepark.max.rows.per.file must be a whole number, got '{raw}'") \
            from None


def preflight(ctx: Context, out: DataFrame, keys: list[str]) -> int:
    """See :func:`_preflight`; returns the number of write tasks."""
    return _preflight(ctx, out, keys)[0]


def _preflight(ctx: Context, out: DataFrame, keys: list[str],
               grouped: DataFrame | None = None) -> tuple[int, list]:
    """Checks Hive's limits with one Spark aggregation before anything is written.

    Counts the distinct partitions and the files they will need; raises LimitExceeded with
    Hive's texts over hive.exec.max.dynamic.partitions or hive.exec.max.created.files.
    Returns the number of write tasks: enough that, with rows hash-distributed by the
    partition keys (exactly as Spark's repartition does it), no task writes more than
    hive.exec.max.dynamic.partitions.pernode partitions. 0 means there are no rows. Also
    returns one row per partition (its typed key values). ``grouped`` (rows already counted
    in ``__rows`` by finer groups, for auto-topk list bucketing) is aggregated instead of
    ``out`` when given, so the input is read once for both.
    """
    max_parts = ctx.conf.get_int("hive.exec.max.dynamic.partitions")
    max_files = ctx.conf.get_int("hive.exec.max.created.files")
    pernode = ctx.conf.get_int("hive.exec.max.dynamic.partitions.pernode")
    per_file = _rows_per_file(ctx)
    rows_expr = F.sum("__rows") if grouped is not None else F.count(F.lit(1))
    agg = (grouped if grouped is not None else out).groupBy(*keys).agg(
        rows_expr.alias("__rows"), F.first(F.hash(*[F.col(k) for k in keys])).alias("__h"))
    try:
        rows = agg.limit(max_parts + 1).collect()
    except PySparkException as e:
        raise spark_error(e) from None
    if len(rows) > max_parts:
        total = agg.count()
        raise LimitExceeded(
            f"Number of dynamic partitions created is {total}, which is more than {max_parts}. "
            f"To solve this try to set hive.exec.max.dynamic.partitions to at least {total}.")
    for r in rows:  # a value too long for a directory name fails here, before any write
        for k in keys:
            layout.check_part_value(k, None if r[k] is None else str(r[k]))
    files = sum(-(-r["__rows"] // per_file) if per_file else 1 for r in rows)
    if files > max_files:
        raise LimitExceeded(
            f"total number of created files now is {files}, which exceeds {max_files}. To solve "
            f"this try to set hive.exec.max.created.files to at least {files}, or raise "
            "hivepark.max.rows.per.file.")
    return _task_count(ctx, [r["__h"] for r in rows], pernode), rows


def _task_count(ctx: Context, hashes: list[int], pernode: int) -> int:
    if not hashes:
        return 0
    base = int(ctx.spark.conf.get("spark.sql.shuffle.partitions") or "1")
    n = max(1, min(len(hashes), base))
    while True:
        counts: dict[int, int] = {}
        for h in hashes:
            counts[h % n] = counts.get(h % n, 0) + 1
        if max(counts.values()) <= pernode:
            return n
        if n >= 4 * len(hashes):
            raise LimitExceeded(
                "Fatal error occurred when node tried to create too many dynamic partitions. The "
                "maximum number of dynamic partitions is controlled by "
                "hive.exec.max.dynamic.partitions and hive.exec.max.dynamic.partitions.pernode. "
                f"Maximum was set to: {pernode}", code=20004)
        n = min(4 * len(hashes), n * 2)


def _staged_partitions(ctx: Context, table: Table, root: str, overwrite: bool,
                       lb: lb_write.LBPlan | None = None) -> list[PartitionWrite]:
    keys = table.partition_key_names()
    leaves = [(leaf, tuple(v for _, v in layout.parse_part_name(leaf[len(root):].strip("/"))))
              for leaf in _leaf_dirs(root, len(keys))]
    existing = ctx.catalog.get_partitions(table, [values for _, values in leaves])
    writes = []
    for leaf, values in leaves:
        old = existing.get(values)
        location = old.location if old else layout.partition_path(table.location, keys, values)
        if lb is not None:
            writes.append(lb_write.staged_write(
                table, leaf, values, location, lb, overwrite,
                lb_write.old_layout(table, old, overwrite), _count_rows))
            continue
        files = [f for f in fs.list_files(leaf) if not f.is_dir]
        writes.append(PartitionWrite(values, location, files, _count_rows(table, files), overwrite))
    return writes


def _leaf_dirs(root: str, depth: int) -> list[str]:
    level = [root]
    for _ in range(depth):
        level = [e.path for d in level for e in fs.list_files(d) if e.is_dir]
    return sorted(level)


def _spark_write(w, path: str) -> None:
    try:
        w.mode("overwrite").save(fs.to_spark_path(path))
    except PySparkException as e:
        raise spark_error(e) from None


def _count_rows(table: Table, files: list[fs.FileEntry]) -> int:
    """Rows in the written files, from their footers (parquet, orc) or lines (text)."""
    total = 0
    try:
        for f in files:
            if table.format == "parquet":
                import pyarrow.parquet as pq
                total += pq.read_metadata(f.path).num_rows
            elif table.format == "orc":
                import pyarrow.orc as po
                total += po.ORCFile(f.path).nrows
            else:
                with open(f.path, "rb") as fh:
                    total += sum(1 for _ in fh)
    except (OSError, ValueError):
        return -1
    return total


def create_table_statement(ctx: Context, node: exp.Create) -> DataFrame:
    table, query = create_table(ctx, node)
    if query is None:
        store_table(ctx, table, bool(node.args.get("exists")))
        return ctx.empty()
    return ctas(ctx, table, query, bool(node.args.get("exists")))


def ctas(ctx: Context, table: Table, query: exp.Expression, if_not_exists: bool) -> DataFrame:
    """CREATE TABLE ... AS SELECT: the table exists only if its data was written."""
    if table.is_external:
        raise SemanticError("CREATE TABLE AS SELECT cannot create an EXTERNAL table: create "
                            "it first, then INSERT")
    df, _ = run_query(ctx, query)
    if not table.columns:
        n = len(df.columns) - len(table.partition_keys)
        table = table.evolve(columns=tuple(
            Column(f.name.lower(), f.dataType.simpleString()) for f in df.schema.fields[:n]))
    stored = store_table(ctx, table, if_not_exists)
    if stored is None:
        return ctx.empty()
    try:
        spec: list[tuple[str, str | None, bool]] = [(k, None, False) for k in stored.partition_key_names()]
        saved = ctx.conf.get("hive.exec.dynamic.partition.mode")
        ctx.conf.set("hive.exec.dynamic.partition.mode", "nonstrict")
        try:
            write_rows(ctx, stored, df, spec, overwrite=True)
        finally:
            ctx.conf.set("hive.exec.dynamic.partition.mode", saved or "strict")
    except BaseException:
        ctx.catalog.drop_table(stored.db, stored.name)
        fs.delete_dir(stored.location)
        raise
    return ctx.empty()


def load_data(ctx: Context, node: exp.LoadData) -> DataFrame:
    table = ctx.table(node.this)
    spec_ = table_skew(table)
    if spec_ is not None and spec_.stored_as_dirs:
        raise SemanticError("A stored-as-directories table cannot be used as target for LOAD: "
                            "LOAD moves files as they are, so rows cannot be routed to their "
                            "skewed-value directories. LOAD into a staging table, then INSERT "
                            "... SELECT from it", code=10195)
    src = node.args["inpath"].name
    src = src[len("file://"):] if src.startswith("file://") else src
    if not fs.exists(src):
        raise UserInputError(f"Invalid path '{src}': No files matching path. Check the path "
                             "after INPATH.")
    spec = partition_spec(node.args.get("partition"))
    values = full_spec(table, spec) if table.is_partitioned else ()
    if not table.is_partitioned and spec:
        check_spec_columns(table, spec)
    entries = fs.list_files(src)
    if not entries:
        raise UserInputError(f"No files to load in '{src}'")
    local = bool(node.args.get("local"))
    commit = Commit(ctx.warehouse, table)
    try:
        fs.makedirs(commit.staging + "/data")
        for i, e in enumerate(x for x in entries if not x.is_dir):
            dst = f"{commit.staging}/data/{i:05d}_{os.path.basename(e.path)}"
            if local:
                shutil.copyfile(e.path, dst)
            else:
                fs.move(e.path, dst)
        files = fs.list_files(commit.staging + "/data")
        if table.is_partitioned:
            existing = ctx.catalog.get_partition(table, values)
            location = existing.location if existing else layout.partition_path(
                table.location, table.partition_key_names(), values)
        else:
            location = table.location
        w = PartitionWrite(values, location, files, _count_rows(table, files),
                           bool(node.args.get("overwrite")))
    except BaseException:
        commit.abort()
        raise
    commit.finish(ctx.catalog, [w])
    return ctx.empty()


def msck_repair(ctx: Context, node: exp.Expression) -> DataFrame:
    """Registers partition directories found on disk and refreshes each partition's files."""
    table = ctx.table(node.this)
    if not table.is_partitioned:
        return ctx.rows(["result"], [])
    keys = table.partition_key_names()
    known = {p.values: p for p in ctx.catalog.list_partitions(table)}
    put: list[Partition] = []
    added: list[str] = []
    now = int(time.time())
    for leaf in _leaf_dirs(table.location, len(keys)):
        rel = leaf[len(fs.normalize(table.location)):].strip("/")
        try:
            parsed = layout.parse_part_name(rel)
        except HiveParkError:
            continue
        if [k for k, _ in parsed] != list(keys):
            continue
        values = tuple(v for _, v in parsed)
        old = known.get(values)
        params = dict(old.parameters) if old else {}
        files = [f for f in fs.list_files(leaf) if not f.is_dir]
        lay = partition_layout(params)
        names = [os.path.basename(f.path) for f in files]
        if lay is not None:  # list-bucketing subdirectories inside the partition
            for _, loc in lay.locations:
                if not layout.is_absolute(loc):
                    sub = [f for f in fs.list_files(f"{leaf}/{loc}") if not f.is_dir]
                    files += sub
                    names += [f"{loc}/{os.path.basename(f.path)}" for f in sub]
        params.update(numFiles=str(len(files)), totalSize=str(sum(f.size for f in files)),
                      numRows=str(_count_rows(table, files)), transient_lastDdlTime=str(now))
        put.append(Partition(values, old.location if old else leaf, params,
                             tuple(sorted(names)), now))
        if old is None:
            added.append(f"{table.name}:{rel}")
    if put:
        ctx.catalog.commit(table, table.version, put=put)
    return ctx.rows(["result"], [(f"Repair: Added partition to metastore {a}",) for a in added])
