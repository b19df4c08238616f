"""Writes: INSERT (static and dynamic partitions, list-bucketing routing), LOAD DATA.

Every write goes through :class:`hivepark.storage.commit.Commit`: Spark writes to a staging
directory, then one metastore transaction makes the result visible.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, DataFrameWriter
from pyspark.sql import functions as F

from hivepark import layout
from hivepark.catalog.base import Catalog
from hivepark.catalog.buckets import Bucketing, hashed_input, spark_bucket_sql, spark_hash, table_buckets
from hivepark.catalog.models import Column as TableColumn
from hivepark.catalog.models import Table
from hivepark.catalog.skew import table_skew
from hivepark.errors import (
    HiveParkError,
    InvalidPartitionSpec,
    LimitExceeded,
    SemanticError,
    UnsupportedError,
    UserInputError,
)
from hivepark.exec import lb_routing, running
from hivepark.exec.context import Context, refuse_bucketed
from hivepark.exec.locations import check_location, is_relative
from hivepark.exec.query import run_query, spark_error
from hivepark.exec.scan import spark_type
from hivepark.expr.visitors import render_literal
from hivepark.plan.nodes import QueryPlan
from hivepark.sql.statements import Insert, InsertDirectory, LoadData, MultiInsert, PartitionSpec
from hivepark.sql.validate import (
    check_if_not_exists,
    check_spec_columns,
    dynamic_columns,
    full_spec,
    partition_value,
)
from hivepark.storage import fs
from hivepark.storage.bucket_files import BUCKET_COL, name_staged, row_buckets
from hivepark.storage.commit import DirectoryWrite, PartitionWrite, ReadsTarget
from hivepark.storage.formats import CUT_COLUMNS, check_text_delimiter, normalize_format, read_cut, sql_name, writer
from hivepark.storage.handlers import StorageHandler, handler_for
from hivepark.types import DEFAULT_PARTITION_NAME, HiveType, PartitionValueError


def insert(ctx: Context, stmt: Insert) -> DataFrame:
    table = ctx.target(stmt.table)
    listed = listed_columns(table, stmt)
    df, plan = run_query(ctx, stmt.query.tree)
    df = by_column_list(table, df, listed)
    write_rows(ctx, table, df, stmt.partition, overwrite=stmt.overwrite,
               if_not_exists=stmt.if_not_exists, reads_target=reads_table(plan, table))
    return ctx.empty()


def reads_table(plan: QueryPlan, table: Table) -> bool:
    """Whether the query of ``plan`` reads ``table`` (in a view, a subquery, anywhere): its rows
    then depend on the table, and its write cannot simply be committed again on the table as
    another statement left it (storage/commit.py ``Commit.finish``)."""
    return any(scan.table.db == table.db and scan.table.name == table.name for scan in plan.scans)


def reads_files_of(table: Table, df: DataFrame, catalog: Catalog) -> bool:
    """Whether ``df`` (a Python caller's DataFrame, whose query hivepark did not plan) reads
    files of ``table`` (``df.inputFiles()`` under its directory or a partition's LOCATION of
    its own); True when Spark cannot tell. Asked on a commit conflict only. A read of a table
    without files is not seen."""
    try:
        files = [fs.normalize(f) for f in df.inputFiles()]
    except Exception:  # noqa: BLE001 - not known: its rows may depend on the table
        return True
    if not files:
        return False
    base = fs.normalize(table.location)
    bases = {base + "/"}
    if table.is_partitioned:
        bases |= {fs.normalize(p.location) + "/" for p in catalog.list_partitions(table)
                  if not fs.normalize(p.location).startswith(base + "/")}
    return any(f.startswith(b) for f in files for b in bases)


def multi_insert(ctx: Context, stmt: MultiInsert) -> DataFrame:
    """``FROM s INSERT ... SELECT ... INSERT ... SELECT ...``: the source is read once
    (pruned by the OR of the branches' WHERE clauses, then cached) and feeds every insert.
    Two branches that write one output are refused before anything is written
    (:func:`_check_outputs`)."""
    # every target refused before any is written (each commits on its own)
    branches = [(ctx.target(branch.table), branch) for branch in stmt.inserts]
    compare = _check_outputs(ctx, branches)
    src_df, src_plan = run_query(ctx, stmt.source.tree)
    src_df = src_df.persist()
    src_df.createOrReplaceTempView(stmt.view)
    try:
        if compare:
            _check_written_partitions(ctx, branches, compare)
        for branch in stmt.inserts:
            table = ctx.target(branch.table)  # as an earlier branch's commit left it
            df, plan = _branch_rows(ctx, table, branch)
            write_rows(ctx, table, df, branch.partition, overwrite=branch.overwrite,
                       if_not_exists=branch.if_not_exists,
                       reads_target=reads_table(src_plan, table) or reads_table(plan, table))
    finally:
        ctx.spark.catalog.dropTempView(stmt.view)
        src_df.unpersist()
    return ctx.empty()


def _branch_rows(ctx: Context, table: Table, branch: Insert) -> tuple[DataFrame, QueryPlan]:
    listed = listed_columns(table, branch)
    df, plan = run_query(ctx, branch.query.tree)
    return by_column_list(table, df, listed), plan


def _branch_spec(ctx: Context, table: Table, branch: Insert) -> tuple[dict[str, str | None], list[str]]:
    """A multi-insert branch's static partition values (canonical texts, None for the default
    partition) and dynamic columns, checked as its write will check them."""
    if handler_for(table) is not None or not table.is_partitioned:
        return {}, []
    dyn = _dynamic_columns(ctx, table, branch.partition, branch.if_not_exists)
    return {k: partition_value(table, k, v) for k, v in branch.partition.static.items()}, dyn


def _output_name(table: Table, values: Sequence[str | None] | None) -> str:
    """An output as Hive's 10087 names it: ``t`` or ``t@ds=1/hr=2``."""
    if values is None:
        return table.name
    return f"{table.name}@{layout.make_part_name(table.partition_key_names(), tuple(values))}"


def _same_output(name: str, first: int, second: int) -> SemanticError:
    return SemanticError(
        f"The same output cannot be present multiple times: {name}. INSERT {first + 1} and INSERT "
        f"{second + 1} of this multi-table insert both write it, and one would replace or mix with "
        "the other's rows; nothing was written. Write each output from one INSERT (join the SELECTs "
        "with UNION ALL).", code=10087)


def _check_outputs(ctx: Context, branches: list[tuple[Table, Insert]]) -> set[int]:
    """Hive's 10087 at compile time: two branches naming one output (the same table without
    partitions, or the same fully static partition), INTO or OVERWRITE (Hive refuses two of a
    kind; hivepark, whose branches commit one after another, refuses a mix too, as its outcome
    would depend on their order). Returns the branches whose dynamic partitions may meet
    another branch's where one of them overwrites (same table, no static value apart): their
    partitions are compared on the rows before anything is written
    (:func:`_check_written_partitions`)."""
    specs = [_branch_spec(ctx, table, branch) for table, branch in branches]
    compare: set[int] = set()
    for i, ((ti, bi), (si, di)) in enumerate(zip(branches, specs)):
        for j in range(i):
            (tj, bj), (sj, dj) = branches[j], specs[j]
            if ti.qualified_name.lower() != tj.qualified_name.lower():
                continue
            if any(si[k] != sj[k] for k in si.keys() & sj.keys()):
                continue  # a static value apart: never one partition
            if not di and not dj:
                values = [si[k] for k in ti.partition_key_names()] if si else None
                raise _same_output(_output_name(ti, values), j, i)
            if bi.overwrite or bj.overwrite:
                compare |= {i, j}
    return compare


def _check_written_partitions(ctx: Context, branches: list[tuple[Table, Insert]], compare: set[int]) -> None:
    """The partitions each branch of ``compare`` writes (a dynamic branch's from its rows, with
    its preflight's checks), refused as Hive's 10087 where two branches into one table write
    one partition and one of them overwrites it: the later commit would replace or mix with the
    earlier's rows."""
    written: dict[int, set[tuple[str | None, ...]]] = {}
    for i in sorted(compare):
        table, branch = branches[i]
        static, dyn = _branch_spec(ctx, table, branch)
        keys = table.partition_key_names()
        if not dyn:
            written[i] = {tuple(static[k] for k in keys)}
            continue
        df, _ = _branch_rows(ctx, table, branch)
        df = df.toDF(*[f"_hp_col{n}" for n in range(len(df.columns))])
        _check_column_count(table, df, dyn)
        out = _partitioned_rows(table, df, static, dyn)
        _, rows = _preflight(ctx, out, list(keys), None, table.partition_types())
        written[i] = {tuple(r[k] for k in keys) for r in rows}
    for i in sorted(compare):
        for j in sorted(compare):
            ti, bi = branches[i]
            tj, bj = branches[j]
            if j >= i or ti.qualified_name.lower() != tj.qualified_name.lower() or not (bi.overwrite or bj.overwrite):
                continue
            both = sorted(written[i] & written[j], key=repr)
            if both:
                raise _same_output(_output_name(ti, both[0]), j, i)


def listed_columns(table: Table, stmt: Insert) -> tuple[list[str], list[str]] | None:
    """Hive's checks of INSERT ... (c1, c2, ...): each name once, each a data column or a
    dynamic partition column of the target. Gives (the columns the rows are written as: the
    data columns, then the dynamic partition columns; the listed names), or None without a list."""
    if stmt.columns is None:
        return None
    name = table.qualified_name
    if len(set(stmt.columns)) != len(stmt.columns):
        dup = next(c for c in stmt.columns if stmt.columns.count(c) > 1)
        raise SemanticError(f"Duplicate column name detected in {name} table schema specification: "
                            f"'{dup}' is listed twice. Name each column once.")
    static = set(stmt.partition.static) if stmt.partition else set()
    dynamic = [k for k in table.partition_key_names() if k not in static]
    targets = [c.name for c in table.columns] + dynamic
    unknown = [c for c in stmt.columns if c not in targets]
    if unknown:
        shown = unknown[0] if len(unknown) == 1 else "[" + ", ".join(unknown) + "]"
        raise SemanticError(
            f"'{shown}' in insert schema specification {'is' if len(unknown) == 1 else 'are'} not found "
            f"among regular columns of {name} nor dynamic partition columns. The list may name "
            f"{', '.join(targets)}.")
    return targets, list(stmt.columns)


def by_column_list(table: Table, df: DataFrame, listed: tuple[list[str], list[str]] | None) -> DataFrame:
    """The query's rows in the target's column order: the i-th listed column takes the query's
    i-th column, every column not listed is NULL (Hive's INSERT with a column list)."""
    if listed is None:
        return df
    targets, names = listed
    if len(df.columns) != len(names):
        raise SemanticError(
            f"Expected {len(names)} columns for insclause-0/{table.qualified_name}; select produces "
            f"{len(df.columns)} columns. The column list ({', '.join(names)}) and the SELECT give one "
            "column each, in the same order.")
    types = {c.name: c.type for c in (*table.columns, *table.partition_keys)}
    position = {n: i for i, n in enumerate(names)}
    df = df.toDF(*[f"_hp_listed{i}" for i in range(len(names))])  # the query's names may repeat
    return df.select(*[F.col(f"_hp_listed{position[t]}").alias(t) if t in position
                       else F.lit(None).cast(spark_type(types[t])).alias(t) for t in targets])


def frame_for_insert(table: Table, df: object, spec: PartitionSpec, by_position: bool) -> DataFrame:
    """``Warehouse.insert``'s DataFrame in the order an INSERT takes columns (the data columns,
    then the dynamic partition columns in key order): matched by name (case-insensitive) when
    its names are exactly those columns, taken as they are with ``by_position``; anything else
    is refused with both lists of names, so that (v, k) never lands in a (k, v) table."""
    if not isinstance(df, DataFrame):
        raise UserInputError(
            f"Warehouse.insert takes a Spark DataFrame, got {type(df).__name__}. Make one first, "
            f"for example spark.createDataFrame(rows, \"{', '.join(f'{c.name} {c.type}' for c in table.columns)}\").")
    keys = table.partition_key_names()
    if by_position or any(c not in keys for c, _, _ in spec.entries):
        return df  # a partition spec naming no key gets write_rows' error, which says so
    static = set(spec.static) if spec else set()
    dynamic = [k for k in table.partition_key_names() if k not in static]
    wanted = [c.name.lower() for c in table.columns] + dynamic
    names = {c.lower(): c for c in df.columns}
    missing = [w for w in wanted if w not in names]
    extra = [c for c in df.columns if c.lower() not in wanted]
    if not missing and not extra and len(names) == len(df.columns):
        return df.select(*[F.col(f"`{names[w]}`") for w in wanted])
    what = "; ".join(x for x in (f"missing {', '.join(missing)}" if missing else "",
                                 f"not in the table: {', '.join(extra)}" if extra else "") if x)
    raise UserInputError(
        f"The DataFrame's columns ({', '.join(df.columns)}) do not match the columns "
        f"{table.qualified_name} takes here ({', '.join(wanted)}): {what or 'a name is repeated'}. "
        f"Rename them (df.toDF(...) or aliases), or pass by_position=True to insert them in order.")


def write_rows(ctx: Context, table: Table, df: DataFrame, spec: PartitionSpec, overwrite: bool,
               if_not_exists: bool = False, reads_target: ReadsTarget = False) -> Table:
    """Writes ``df`` (data columns, then the dynamic partition columns) into ``table``.
    ``reads_target``: ``df`` is computed from ``table``'s rows (its commit then fails rather
    than being planned again when another statement commits first: storage/commit.py)."""
    df = df.toDF(*[f"_hp_col{i}" for i in range(len(df.columns))])  # Hive inserts by position, not name
    handler = handler_for(table)
    if handler is not None:
        _write_handler(ctx, handler, table, df, spec, overwrite)
        return table
    dyn = _dynamic_columns(ctx, table, spec, if_not_exists)
    _check_column_count(table, df, dyn)
    if not dyn:
        values = full_spec(table, spec) if table.is_partitioned else ()
        ctx.check_partition_names(values, table)
        if if_not_exists and table.is_partitioned and ctx.catalog.get_partition(table, values):
            return table
        return _write_static(ctx, table, df, values, overwrite, if_absent=if_not_exists and table.is_partitioned,
                             reads_target=reads_target)
    static = {k: partition_value(table, k, v) for k, v in spec.static.items()}
    return _write_dynamic(ctx, table, df, static, dyn, overwrite, reads_target)


def _dynamic_columns(ctx: Context, table: Table, spec: PartitionSpec, if_not_exists: bool) -> list[str]:
    """An INSERT's dynamic partition columns, after Hive's checks of its PARTITION clause."""
    dyn = dynamic_columns(
        table, spec, ctx.conf.get_bool("hive.exec.dynamic.partition"),
        (ctx.conf.get("hive.exec.dynamic.partition.mode") or "").lower() == "strict")
    check_if_not_exists(dyn, if_not_exists, spec)
    return dyn


def _check_column_count(table: Table, df: DataFrame, dyn: list[str]) -> None:
    """Hive's 10044 when the query's columns are not the table's data columns and its dynamic
    partition columns."""
    got = len(df.columns)
    expected = len(table.columns) + len(dyn)
    if got != expected:
        raise SemanticError(
            f"Cannot insert into target table because column number/types are different "
            f"'{table.name}': Table insclause-0 has {expected} columns, but query has "
            f"{got} columns.", code=10044)


def _load_values(table: Table, spec: PartitionSpec) -> tuple[str | None, ...]:
    """LOAD DATA's partition: a value for every key and no other column; otherwise Hive's
    10006 (Partition not found), with what is wrong and the table's partition columns."""
    try:
        return full_spec(table, spec)
    except InvalidPartitionSpec as e:
        if e.code is not None:
            raise
        named = "{" + ", ".join(f"{c}={v}" for c, v, _ in spec) + "}"
        raise InvalidPartitionSpec(f"Partition not found {named}: {e}", code=10006) from None


def _write_handler(ctx: Context, handler: StorageHandler, table: Table, df: DataFrame,
                   spec: PartitionSpec, overwrite: bool) -> None:
    """INSERT INTO / OVERWRITE a handler table: the handler writes the rows (all or nothing)."""
    shown = handler.aliases[0] if handler.aliases else handler.name
    if spec:
        raise SemanticError(f"INSERT into {table.qualified_name} takes no PARTITION clause: its rows live in the "
                            f"source of its storage handler {shown}, which places each row itself (an Iceberg "
                            "table by its partition spec). Remove the PARTITION clause and give the partition "
                            "columns' values as the SELECT's columns, as for any other column.")
    if not handler.supports_writes:
        raise UnsupportedError(f"Table {table.qualified_name} is read-only: its storage handler {shown} "
                               "does not support writes")
    if len(df.columns) != len(table.columns):
        raise SemanticError(
            f"Cannot insert into target table because column number/types are different "
            f"'{table.name}': Table insclause-0 has {len(table.columns)} columns, but query has "
            f"{len(df.columns)} columns.", code=10044)
    out = _cast_rows(table, df, _data_columns(table, df), [])
    try:
        handler.write(ctx.spark, table, out, overwrite)
    except PySparkException as e:
        raise spark_error(e) from None


def _data_columns(table: Table, df: DataFrame) -> list[str]:
    """The table's data columns, from ``df``'s first columns each cast to its column's type, as
    Spark SQL for one ``selectExpr``: a Column built in Python costs several Py4J calls per
    operation, which on a table of 40 columns was most of a small INSERT's own time."""
    fields = df.schema.fields
    for i, c in enumerate(table.columns):
        if not _castable(fields[i].dataType.simpleString(), spark_type(c.type)):
            raise SemanticError(
                f"Cannot insert into target table because column number/types are different "
                f"'{table.name}': column {i + 1} of the query is {fields[i].dataType.simpleString()}"
                f", which cannot be converted to {c.name} {c.type}. Convert it in the SELECT.",
                code=10044)
    return [f"{_cast_to(sql_name(fields[i].name), c.type)} AS {sql_name(c.name)}" for i, c in enumerate(table.columns)]


def _cast_to(value: str, hive_type: str) -> str:
    """``value`` (Spark SQL) cast to a column's type; a CHAR(n) or VARCHAR(n) value cut to n
    characters, as Hive's HiveChar and HiveVarchar cut it (Spark reads both as STRING), and
    a CHAR value without its trailing spaces, as Hive's writers store it (HiveChar's stripped
    value): `'ab'` and `'ab  '` are one CHAR value, equal to `'ab'` in a comparison.

    >>> _cast_to("`c`", "varchar(3)"), _cast_to("`h`", "char(2)"), _cast_to("`n`", "int")
    ('substring(CAST(`c` AS STRING), 1, 3)', 'rtrim(substring(CAST(`h` AS STRING), 1, 2))', 'CAST(`n` AS int)')
    """
    typ = HiveType.parse(hive_type)
    if typ.base in ("varchar", "char") and typ.params:
        cut = f"substring(CAST({value} AS STRING), 1, {typ.params[0]})"
        return f"rtrim({cut})" if typ.base == "char" else cut
    return f"CAST({value} AS {spark_type(hive_type)})"


def _castable(src: str, dst: str) -> bool:
    """Whether Spark can cast a value of type ``src`` to ``dst`` at all (a NULL, ``void``, to any)."""
    if src == "void":
        return True
    complex_src, complex_dst = src.split("<")[0] in ("array", "map", "struct"), \
        dst.split("<")[0] in ("array", "map", "struct")
    if complex_src or complex_dst:
        return src.split("<")[0] == dst.split("<")[0] or dst == "string"
    return True


def _cast_rows(table: Table, df: DataFrame, exprs: list[str], dynamic: list[tuple[str, str]]) -> DataFrame:
    """``df`` (columns ``_hp_col<i>``) as ``exprs``, each casting a query column to its target
    column's type. A column Spark cannot cast (a STRUCT of other fields, an INT into a DATE, a
    STRING into an ARRAY) is Hive's 10044 naming the query's column, its type and the target
    column (the data columns, then the ``dynamic`` partition columns), where Spark's analysis
    error named hivepark's own alias ``_hp_col<i>``."""
    try:
        return df.selectExpr(*exprs)
    except PySparkException as e:
        m = re.search(r"\b_hp_col(\d+)\b", str(e))
        targets = [(c.name, c.type) for c in table.columns] + dynamic
        if m is None or "DATATYPE_MISMATCH" not in str(e) or int(m.group(1)) >= len(targets):
            raise
        i = int(m.group(1))
        name, typ = targets[i]
        source = df.schema.fields[i].dataType.simpleString()
        how = " (a STRUCT: named_struct(...) with the column's fields, in order)" if typ.startswith("struct<") else ""
        raise SemanticError(
            f"Cannot insert into target table because column number/types are different '{table.name}': column "
            f"{i + 1} of the query is {source}, which cannot be converted to {name} {typ}. Convert it in the "
            f"SELECT{how}.", code=10044) from None


def _write_static(ctx: Context, table: Table, df: DataFrame, values: tuple, overwrite: bool,
                  if_absent: bool = False, reads_target: ReadsTarget = False) -> Table:
    """A write into one partition (or an unpartitioned table); ``if_absent``: IF NOT EXISTS,
    nothing is written if another statement creates the partition meanwhile."""
    existing = ctx.catalog.get_partition(table, values) if table.is_partitioned else None
    if table.is_partitioned:
        location = existing.location if existing else layout.partition_path(
            table.location, table.partition_key_names(), values)
    else:
        location = table.location
    data = _cast_rows(table, df, _data_columns(table, df), [])
    buckets = table_buckets(table)
    lb = lb_routing.static_plan(ctx, table, data, existing, overwrite) if buckets is None else None
    with ctx.begin_commit(table, keeps_buckets=True) as commit:
        if buckets is not None:  # each bucket one task's one file
            data = with_buckets(table, buckets, data).repartition(buckets.count, F.col(BUCKET_COL))
            spark_write(writer(data.sortWithinPartitions(*bucket_order(buckets, [])), table).partitionBy(BUCKET_COL),
                        commit.staging + "/data")
            name_staged([commit.staging + "/data"])
            files = fs.list_files(commit.staging + "/data")
            w = PartitionWrite(values, location, files, count_rows(table, files), overwrite, bucket_files=True)
            _check_staged_files(ctx, [w])
        elif lb is None:
            spark_write(_split(ctx, writer(data.repartition(1), table)), commit.staging + "/data")
            files = fs.list_files(commit.staging + "/data")
            w = PartitionWrite(values, location, files, count_rows(table, files), overwrite)
            _check_staged_files(ctx, [w])
        else:
            data = lb_routing.with_lb_column(ctx, table, data, lb, [])
            # by directory: each directory one task's one file, the directories in parallel
            spark_write(_split(ctx, writer(_by_directory(data, len(lb.directories(values))), table)
                                .partitionBy(lb_routing.LB_COL)), commit.staging + "/data")
            w = lb_routing.staged_write(table, commit.staging + "/data", values, location, lb,
                                      overwrite, lb_routing.old_layout(table, existing, overwrite),
                                      count_rows)
            _check_staged_files(ctx, [w])
        w.if_absent = if_absent
        return commit.finish(ctx.catalog, [w], reads_target=reads_target)


#: a list-bucketed or bucketed write whose input Spark estimates at most this size takes as few tasks
#: as its limits allow (a static partition: one)
SMALL_WRITE_BYTES = 16 << 20


def _small(data: DataFrame) -> bool:
    """Whether Spark's optimizer estimates ``data`` at :data:`SMALL_WRITE_BYTES` or less (a
    VALUES list, a few files): a write spreading a partition's directories or buckets over
    tasks then needs no more tasks than its limits ask for (eleven tasks for ten rows of ten
    skewed values cost ~100 ms more than one)."""
    try:
        size = int(str(data._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # noqa: BLE001 - no estimate (a Spark Connect session): not small
        return False
    return size <= SMALL_WRITE_BYTES


def _by_directory(data: DataFrame, dirs: int) -> DataFrame:
    """A static list-bucketed write's rows, each directory's in one task (its one file): one
    task writes every directory of a small input (:func:`_small`), else a task per directory,
    in parallel."""
    return data.repartition(1 if _small(data) else dirs, F.col(lb_routing.LB_COL))


def _partitioned_rows(table: Table, df: DataFrame, static: dict, dyn: list[str]) -> DataFrame:
    """A dynamic insert's rows: the data columns cast to their types, then every partition
    column as its canonical text (the static values given, the dynamic ones computed)."""
    cols = df.columns
    n = len(table.columns)
    types = table.partition_types()
    part_cols = []
    for k in table.partition_key_names():
        layout.check_partition_column_name(k)  # a table created before names were checked
        if k in static:  # already its canonical text; None (NULL, '') is the default partition
            text = "CAST(NULL AS STRING)" if static[k] is None else render_literal(static[k])
            part_cols.append(f"{text} AS {sql_name(k)}")
        else:
            value = f"CAST({sql_name(cols[n + dyn.index(k)])} AS {spark_type(types[k])})"
            # '' and the default partition's name are the default partition, as NULL (Hive's
            # and Spark's writers): one value, so that one task writes its directory's file
            # and the limits count one partition
            text = partition_text_sql(value, HiveType.parse(types[k]))
            part_cols.append(f"{text} AS {sql_name(k)}")
    return _cast_rows(table, df, [*_data_columns(table, df), *part_cols], [(k, types[k]) for k in dyn])


def _write_dynamic(ctx: Context, table: Table, df: DataFrame, static: dict, dyn: list[str],
                   overwrite: bool, reads_target: ReadsTarget = False) -> Table:
    types = table.partition_types()
    out = _partitioned_rows(table, df, static, dyn)
    keys = list(table.partition_key_names())
    grouped = lb_routing.dynamic_grouped(table, out, keys)
    try:
        tasks, rows = _preflight(ctx, out, keys, grouped, types)
        lb = lb_routing.dynamic_plan(ctx, table, keys, rows, grouped, overwrite) if tasks.number else None
    finally:
        if grouped is not None:
            grouped.unpersist()
    if tasks.number == 0:
        return table
    buckets = table_buckets(table)
    with ctx.begin_commit(table, keeps_buckets=True) as commit:
        by, dirs = keys, keys
        if lb is not None:
            small = _small(out)  # the rows', not their routing's (a join with Python data: no estimate)
            out = lb_routing.with_lb_column(ctx, table, out, lb, keys)
            by = dirs = keys + [lb_routing.LB_COL]
            tasks = _directory_task_count(ctx, lb, small)
        elif buckets is not None:  # each (partition, bucket) one task's one file, in parallel
            small = _small(out)
            out = with_buckets(table, buckets, out)
            by = dirs = keys + [BUCKET_COL]
            tasks = _bucket_task_count(ctx, rows, keys, buckets.count, small)
        out = _distributed(out, tasks, by)
        if buckets is not None:
            out = out.sortWithinPartitions(*bucket_order(buckets, keys))
        w = writer(out, table).partitionBy(*dirs)
        spark_write(w if buckets is not None else _split(ctx, w), commit.staging + "/data")
        if buckets is not None:
            name_staged(leaf_dirs(commit.staging + "/data", len(keys)))
        writes = _staged_partitions(ctx, table, commit.staging + "/data", overwrite, lb, buckets is not None)
        if lb is not None or buckets is not None:
            _check_staged_files(ctx, writes)
        return commit.finish(ctx.catalog, writes, reads_target=reads_target)


def with_buckets(table: Table, buckets: Bucketing, df: DataFrame) -> DataFrame:
    """``df`` (the table's data columns by name, then any partition columns) with each row's
    Hive bucket in :data:`BUCKET_COL`: a Spark expression where Spark's hash gives Hive's (INT,
    BIGINT, DATE, TINYINT, BOOLEAN columns: ``catalog.buckets.spark_bucket_sql``), else computed
    in Spark's Python workers (storage/bucket_files.py)."""
    types = {c.name: HiveType.parse(c.type).base for c in table.columns}
    sql = spark_bucket_sql([f"`{c}`" for c in buckets.columns], [types[c] for c in buckets.columns], buckets.count)
    if sql is not None:
        return df.withColumn(BUCKET_COL, F.expr(sql))
    udf = F.arrow_udf(row_buckets(), "int")  # type: ignore[call-overload]  # (pyspark's stubs miss *arrays)
    inputs = [F.expr(hashed_input(f"`{c}`", types[c])) for c in buckets.columns]
    return df.withColumn(BUCKET_COL, udf(F.lit(buckets.count), *inputs))


def bucket_order(buckets: Bucketing, keys: list[str]) -> list[Column]:
    """The order of a write task's rows: by partition, bucket, then the table's SORTED BY (each
    bucket's file sorted, as Hive's)."""
    return [*[F.col(f"`{k}`") for k in keys], F.col(BUCKET_COL),
            *[F.col(f"`{c}`").asc() if asc else F.col(f"`{c}`").desc() for c, asc in buckets.sorted_by]]


def partition_text_sql(value: str, typ: HiveType) -> str:
    """A dynamic partition value (Spark SQL ``value``, already cast to its column's type) as its
    canonical text, the text :meth:`HiveType.partition_text` gives a static value: Spark's ``CAST
    AS STRING``, a VARCHAR(n) cut to n characters (Hive's HiveVarchar), a CHAR(n) cut to n
    characters without trailing spaces (Hive's HiveChar stripped, so ``'a '`` is ``'a'``), a DECIMAL without trailing
    zeros (Hive's HiveDecimal text: ``12.50`` is ``12.5``, ``0.00`` is ``0``); NULL for the default
    partition: NULL, ``''`` and the default partition's name (``__HIVE_DEFAULT_PARTITION__``, the
    directory Hive's and Spark's writers give NULL and ``''``), so that rows of one directory are
    one value, which one write task gets. The partition directories are written from this text,
    so the metastore records exactly it; the preflight checks each value against the type
    (:func:`_check_dynamic_values`).

    >>> partition_text_sql("v", HiveType.parse("varchar(3)"))  # doctest: +NORMALIZE_WHITESPACE
    "CASE WHEN CAST(v AS STRING) = '__HIVE_DEFAULT_PARTITION__' THEN NULL
     ELSE nullif(nullif(substring(CAST(v AS STRING), 1, 3), ''), '__HIVE_DEFAULT_PARTITION__') END"
    """
    text = f"CAST({value} AS STRING)"
    if typ.kind in ("string", "char"):  # the only texts that can be '' or the default name
        cut = text
        if typ.base in ("varchar", "char") and typ.params:
            cut = f"substring({text}, 1, {typ.params[0]})"
        if typ.base == "char":  # without trailing spaces, as _cast_to stores a CHAR column's value
            cut = f"rtrim({cut})"
        default = render_literal(DEFAULT_PARTITION_NAME)
        canonical = f"nullif(nullif({cut}, ''), {default})"
        if cut == text:
            return canonical
        # the name given whole is the default partition before it is cut, as a static value
        return f"CASE WHEN {text} = {default} THEN NULL ELSE {canonical} END"
    if typ.kind == "decimal" and typ.precision_scale[1] > 0:
        return f"CASE WHEN {value} = 0 THEN '0' ELSE regexp_replace(regexp_replace({text}, '0+$', ''), '[.]$', '') END"
    return text


def _check_dynamic_values(rows: list, keys: list[str], types: dict[str, str]) -> None:
    """Each dynamic partition's values (the preflight's rows, as the text Spark will write)
    are values of their columns' types, in the canonical text a static value would have: so
    nothing Spark computes (an overflowing DOUBLE is ``Infinity``) lands in a partition that no
    static value names, or that reads back as another value."""
    for r in rows:
        for k in keys:
            text = r[k]
            typ = HiveType.parse(types[k])
            try:
                canonical = typ.partition_text(text)
            except PartitionValueError as e:
                raise InvalidPartitionSpec(
                    f"Dynamic partition value '{text}' for column {k} is not a valid {typ.text} ({e.reason}): "
                    "nothing was written. Filter those rows out, or convert the value, in the SELECT.") from None
            if text is not None and canonical is not None and canonical != text:
                raise HiveParkError(
                    f"Dynamic partition value '{text}' for column {k} ({typ.text}) would be written as Spark "
                    f"writes it, but its canonical text is '{canonical}', which a static value names: nothing "
                    "was written. This is a hivepark bug; as a workaround give the partition statically.")


def _split(ctx: Context, w: DataFrameWriter) -> DataFrameWriter:
    """``w`` writing a new file every ``hivepark.max.rows.per.file`` rows, when that is set
    (not for Hive's bucket files: a bucket is one file)."""
    per_file = _rows_per_file(ctx)
    return w.option("maxRecordsPerFile", per_file) if per_file else w


def _rows_per_file(ctx: Context) -> int:
    raw = ctx.conf.get("hivepark.max.rows.per.file") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        raise UserInputError(f"hivepark.max.rows.per.file must be a whole number, got '{raw}'") \
            from None


def preflight(ctx: Context, out: DataFrame, keys: list[str]) -> int:
    """See :func:`_preflight`; returns the number of write tasks."""
    return _preflight(ctx, out, keys)[0].number


def _preflight(ctx: Context, out: DataFrame, keys: list[str],
               grouped: DataFrame | None = None,
               types: dict[str, str] | None = None) -> tuple[Tasks, list]:
    """Checks Hive's limits with one Spark aggregation before anything is written.

    Counts the distinct partitions and the files they will need; raises LimitExceeded with
    Hive's texts over hive.exec.max.dynamic.partitions or hive.exec.max.created.files.
    Returns the write tasks (:func:`_task_count`): enough that no task writes more than
    hive.exec.max.dynamic.partitions.pernode partitions; a count of 0 means there are no rows. Also
    returns one row per partition (its key values, as the text the directories are written
    with; checked against the key ``types`` when given). ``grouped`` (rows already counted
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
    if types is not None:  # a value that does not fit its type fails here, before any write
        _check_dynamic_values(rows, keys, types)
    for r in rows:  # a value too long for a directory name, or not one the whitelist allows, fails here
        for k in keys:
            layout.check_part_value(k, None if r[k] is None else str(r[k]))
        ctx.check_partition_names([None if r[k] is None else str(r[k]) for k in keys])
    files = sum(-(-r["__rows"] // per_file) if per_file else 1 for r in rows)
    if files > max_files:
        raise _too_many_files(files, max_files)
    return _task_count(ctx, [r["__h"] for r in rows], pernode), rows


def _too_many_files(files: int, max_files: int) -> LimitExceeded:
    return LimitExceeded(
        f"total number of created files now is {files}, which exceeds {max_files}. To solve "
        f"this try to set hive.exec.max.created.files to at least {files}, or raise "
        "hivepark.max.rows.per.file.")


def _check_staged_files(ctx: Context, writes: list[PartitionWrite]) -> None:
    """hive.exec.max.created.files for a list-bucketed write, counted on its staged files:
    which of a partition's directories get rows is known only once they are written (the
    preflight counts each partition's files as if it had one directory). Over the limit the
    statement fails here, before anything is visible, and its staging is removed."""
    max_files = ctx.conf.get_int("hive.exec.max.created.files")
    files = sum(len(w.files) for w in writes)
    if files > max_files:
        raise _too_many_files(files, max_files)


def _directory_task_count(ctx: Context, plan: lb_routing.LBPlan, small: bool = False) -> Tasks:
    """Write tasks for a list-bucketed write, whose rows go to the tasks by (partition,
    directory) rather than by partition: a partition's directories are written by several
    tasks at once (each directory by one, so still one file each), and the skewed values'
    large directories no longer queue behind each other in one task (10,000,000 rows, 7
    partitions of 11 directories: 1.39 -> 1.24 times the plain table's write). As many tasks
    as directories, up to 8 per core (or spark.sql.shuffle.partitions if more), doubled
    until no task writes into more than hive.exec.max.dynamic.partitions.pernode partitions;
    for a ``small`` input (:func:`_small`), from one task."""
    groups = lb_routing.directory_hashes(plan)
    return _task_count(ctx, [h for _, h in groups],
                       ctx.conf.get_int("hive.exec.max.dynamic.partitions.pernode"),
                       parts=[p for p, _ in groups], start=1 if small else _spread_start(ctx))


def _spread_start(ctx: Context) -> int:
    """The task count a write spreading a partition over tasks starts from: up to 8 per core,
    or spark.sql.shuffle.partitions if more."""
    return max(int(ctx.spark.conf.get("spark.sql.shuffle.partitions") or "1"),
               8 * ctx.spark.sparkContext.defaultParallelism)


def _bucket_task_count(ctx: Context, rows: list, keys: list[str], count: int, small: bool = False) -> Tasks:
    """Write tasks for a bucketed write, whose rows go to the tasks by (partition, bucket), so
    that one partition's buckets are written in parallel (by partition alone, a one-partition
    INSERT was one task): Spark's hash of every (partition, bucket) pair (the partitions the
    preflight found, each with every bucket: their key texts and the int bucket, hashed as the
    JVM does, catalog.buckets.spark_hash), then as many tasks as :func:`_directory_task_count`
    starts from (one for a ``small`` input), doubled until no task writes into more than
    hive.exec.max.dynamic.partitions.pernode partitions."""
    pairs = [(part, spark_hash([b], seed)) for part, seed in
             ((p, spark_hash(p)) for p in (tuple(r[k] for k in keys) for r in rows)) for b in range(count)]
    return _task_count(ctx, [h for _, h in pairs], ctx.conf.get_int("hive.exec.max.dynamic.partitions.pernode"),
                       parts=[p for p, _ in pairs], start=1 if small else _spread_start(ctx))


class Tasks(NamedTuple):
    """A write's tasks: ``number`` of them; rows go to task ``h mod number`` by Spark's hash ``h``
    of the columns they are distributed by (``repartition``), or, when ``by_hash`` is given, to
    task ``by_hash[h]`` (:func:`_distributed`)."""

    number: int
    by_hash: dict[int, int] | None = None


#: the column a write's rows carry their task in while they are distributed (:func:`_distributed`)
TASK_COL = "__hp_task"


def _task_count(ctx: Context, hashes: list[int], pernode: int, parts: list | None = None,
                start: int | None = None) -> Tasks:
    """The write tasks when the rows of hash ``h`` go to task ``h mod n`` (Spark's hash
    partitioning): from ``start`` (default spark.sql.shuffle.partitions; at most one per
    hash), doubled until no task gets rows of more than ``pernode`` partitions. ``parts[i]`` is
    the partition of the rows of ``hashes[i]`` (default: each hash is one partition). When no
    count up to 4 per hash does (a small ``pernode``: hashes meet modulo every count), each hash
    is given its task (:func:`_assigned_tasks`), so the limit never fails a statement."""
    if not hashes:
        return Tasks(0)
    if pernode < 1:  # no task may write a partition: every write with rows fails, as in Hive
        raise LimitExceeded(
            "Fatal error occurred when node tried to create too many dynamic partitions. The "
            "maximum number of dynamic partitions is controlled by "
            "hive.exec.max.dynamic.partitions and hive.exec.max.dynamic.partitions.pernode. "
            f"Maximum was set to: {pernode} (no task may write a partition at all; set "
            "hive.exec.max.dynamic.partitions.pernode to at least 1, 100 by default)", code=20004)
    if start is None:
        start = int(ctx.spark.conf.get("spark.sql.shuffle.partitions") or "1")
    owners: list = parts if parts is not None else list(range(len(hashes)))
    n = max(1, min(len(hashes), start))
    while True:
        per_task: dict[int, set] = {}
        for h, p in zip(hashes, owners):
            per_task.setdefault(h % n, set()).add(p)
        if max(len(s) for s in per_task.values()) <= pernode:
            return Tasks(n)
        if n >= 4 * len(hashes):
            return _assigned_tasks(hashes, owners, pernode, min(len(set(hashes)), start))
        n = min(4 * len(hashes), n * 2)


def _assigned_tasks(hashes: list[int], owners: list, pernode: int, start: int) -> Tasks:
    """Each hash's task, chosen: the partitions whose rows share a hash (a partition's hashes,
    and partitions whose hashes are equal) go to one task, and each task takes such groups
    while it has at most ``pernode`` partitions, the largest groups first, each to the task
    with the fewest (``start`` tasks at least, more when they fill). Only a group of more than
    ``pernode`` partitions with one 32-bit hash between them cannot be split (Hive's 20004)."""
    group: dict[object, object] = {}  # union-find over hashes and partitions

    def root(x: object) -> object:
        while group.setdefault(x, x) != x:
            group[x] = group[group[x]]
            x = group[x]
        return x

    for h, p in zip(hashes, owners):
        group[root(("h", h))] = root(("p", p))
    members: dict[object, tuple[set, set]] = {}
    for h, p in zip(hashes, owners):
        hs, ps = members.setdefault(root(("h", h)), (set(), set()))
        hs.add(h)
        ps.add(p)
    loads = [0] * max(1, start)
    by_task: dict[int, int] = {}
    for hs, ps in sorted(members.values(), key=lambda m: -len(m[1])):
        if len(ps) > pernode:
            raise LimitExceeded(
                "Fatal error occurred when node tried to create too many dynamic partitions. The "
                "maximum number of dynamic partitions is controlled by "
                "hive.exec.max.dynamic.partitions and hive.exec.max.dynamic.partitions.pernode. "
                f"Maximum was set to: {pernode} ({len(ps)} partitions have one Spark hash, so one "
                "task writes them all; raise hive.exec.max.dynamic.partitions.pernode to at least "
                f"{len(ps)})", code=20004)
        fits = [i for i, load in enumerate(loads) if load + len(ps) <= pernode]
        task = min(fits, key=lambda i: loads[i]) if fits else len(loads)
        if not fits:
            loads.append(0)
        loads[task] += len(ps)
        by_task.update((h, task) for h in hs)
    return Tasks(len(loads), by_task)


def _task_values(n: int) -> list[int]:
    """For each task ``j`` of ``n``, an INT whose Spark hash is ``j`` modulo ``n``: a row
    carrying it is sent to task ``j`` by ``repartition(n, column)``."""
    values: list[int | None] = [None] * n
    missing, v = n, 0
    while missing:
        j = spark_hash([v]) % n
        if values[j] is None:
            values[j] = v
            missing -= 1
        v += 1
    return [x for x in values if x is not None]


def _distributed(out: DataFrame, tasks: Tasks, by: list[str]) -> DataFrame:
    """``out``'s rows in ``tasks.number`` tasks by the columns ``by``: Spark's hash partitioning,
    or each row to the task :func:`_assigned_tasks` chose for its hash (carried as an INT that
    hashes to it, looked up in a map of the hashes, then dropped)."""
    if tasks.by_hash is None:
        return out.repartition(tasks.number, *[F.col(k) for k in by])
    values = _task_values(tasks.number)
    hashes = ", ".join(str(h) for h in tasks.by_hash)
    chosen = ", ".join(str(values[t]) for t in tasks.by_hash.values())
    task = (f"try_element_at(map_from_arrays(array({hashes}), array({chosen})), "
            f"hash({', '.join(sql_name(k) for k in by)}))")
    return out.withColumn(TASK_COL, F.expr(task)).repartition(tasks.number, F.col(TASK_COL)).drop(TASK_COL)


def _staged_partitions(ctx: Context, table: Table, root: str, overwrite: bool,
                       lb: lb_routing.LBPlan | None = None, hive_buckets: bool = False) -> list[PartitionWrite]:
    keys = table.partition_key_names()
    leaves = [(leaf, tuple(v for _, v in layout.parse_part_name(leaf[len(root):].strip("/"))))
              for leaf in leaf_dirs(root, len(keys))]
    existing = ctx.catalog.get_partitions(table, [values for _, values in leaves])
    writes = []
    for leaf, values in leaves:
        old = existing.get(values)
        location = old.location if old else layout.partition_path(table.location, keys, values)
        if lb is not None:
            writes.append(lb_routing.staged_write(
                table, leaf, values, location, lb, overwrite,
                lb_routing.old_layout(table, old, overwrite), count_rows))
            continue
        files = [f for f in fs.list_files(leaf) if not f.is_dir]
        writes.append(PartitionWrite(values, location, files, count_rows(table, files), overwrite,
                                     bucket_files=hive_buckets))
    return writes


def leaf_dirs(root: str, depth: int) -> list[str]:
    level = [root]
    for _ in range(depth):
        level = [e.path for d in level for e in fs.list_files(d) if e.is_dir]
    return sorted(level)


def spark_write(w, path: str) -> None:
    """Spark writes into a staging directory. In a statement that was cancelled (exec/running.py)
    the failure waits until the job's tasks have stopped, so that the commit's abort deletes a
    directory no task writes into any more; a cancel that came after the job ended still stops
    the statement before it commits."""
    try:
        w.mode("overwrite").save(fs.to_spark_path(path))
    except PySparkException as e:
        running.settle()
        raise spark_error(e) from None
    except BaseException:
        running.settle()
        raise
    running.check_cancelled()


def count_rows(table: Table, files: Sequence[fs.FileEntry]) -> int:
    """Rows in the written files, from their footers (parquet, orc) or lines (text); -1 when a
    file cannot be read so."""
    try:
        return sum(_file_rows(table, f.path) for f in files)
    except (OSError, ValueError):
        return -1


def _file_rows(table: Table, path: str) -> int:
    """The rows of one file of ``table``'s format (OSError or ValueError: not such a file)."""
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    if table.format == "parquet":
        with fs.open_input(path) as fh:
            return int(pq.read_metadata(fh).num_rows)
    if table.format == "orc":
        with fs.open_input(path) as fh:
            return int(po.ORCFile(fh).nrows)
    return fs.count_lines(path)


def _check_load_format(table: Table, files: Sequence[fs.FileEntry]) -> int:
    """The rows of LOAD's files, each checked to be of the table's format first (Hive checks
    ORC's; a Parquet table is checked too): a file of another format would make every query
    of the table fail after the load."""
    total = 0
    for f in files:
        try:
            total += _file_rows(table, f.path)
        except (OSError, ValueError) as e:
            fmt = table.format.upper()
            raise SemanticError(
                "The file that you are trying to load does not match the file format of the destination "
                f"table. Destination table is stored as {fmt} but {f.path} is not a valid {fmt} file ({e}); "
                "nothing was loaded. Load it into a table stored as its own format (TEXTFILE for delimited "
                "text), then INSERT ... SELECT from that table.", code=30019) from None
    return total


def sized_string_columns(table: Table) -> list[str]:
    """The table's CHAR(n) and VARCHAR(n) columns (read cut when :data:`CUT_COLUMNS` names them)."""
    return [c.name for c in table.columns if read_cut("x", c.type) != "x"]


def cut_foreign_files(ctx: Context, table: Table) -> Table:
    """``table`` with its CHAR(n) and VARCHAR(n) columns recorded as read cut
    (:data:`hivepark.storage.formats.CUT_COLUMNS`), before files hivepark did not write become its
    files (LOAD DATA, MSCK REPAIR, ADD PARTITION ... LOCATION): such a file may hold longer values,
    or a CHAR's padding (Hive's ORC writer pads CHAR values), which Hive reads cut to the column's
    length, so ``c = 'abc'`` finds a CHAR(3) file value 'abcdef' as in Hive. A filter on those
    columns is then applied by Spark after the read, not pushed into the Parquet or ORC reader."""
    properties = cut_properties(table)
    if properties == table.properties:
        return table
    return ctx.catalog.alter_table(table.evolve(properties=properties), table.version)


def cut_properties(table: Table) -> dict[str, str]:
    """``table``'s properties with its CHAR(n) and VARCHAR(n) columns recorded as read cut
    (:func:`cut_foreign_files`), for a statement that alters the table itself (SET LOCATION)."""
    sized = set(sized_string_columns(table))
    cut = set(json.loads(table.properties.get(CUT_COLUMNS) or "[]"))
    if sized <= cut:
        return dict(table.properties)
    return {**table.properties, CUT_COLUMNS: json.dumps(sorted(cut | sized))}


def load_data(ctx: Context, stmt: LoadData) -> DataFrame:
    """LOAD DATA [LOCAL] INPATH: the files moved (copied, for LOCAL) into the table. The move
    is undone when the statement fails, or, killed, by the next ``connect()``: the source files
    are back where they were (Commit.take_files); once committed, they are the table's."""
    table = ctx.target(stmt.table)
    if handler_for(table) is not None:
        raise SemanticError(f"LOAD DATA cannot load files into {table.qualified_name}: its rows live in the "
                            "source of its storage handler. Load them into a table of files, then INSERT "
                            "... SELECT from it.")
    spec_ = table_skew(table)
    if spec_ is not None and spec_.stored_as_dirs:
        raise SemanticError("A stored-as-directories table cannot be used as target for LOAD: "
                            "LOAD moves files as they are, so rows cannot be routed to their "
                            "skewed-value directories. LOAD into a staging table, then INSERT "
                            "... SELECT from it", code=10195)
    refuse_bucketed(table, "LOAD DATA moves files as they are, which would not place each row in its bucket's file. "
                    "LOAD into a table without CLUSTERED BY, then INSERT ... SELECT from it")
    src = stmt.path
    if not stmt.local:  # files are moved: never out of the warehouse's own or another table's
        check_location(ctx, fs.normalize(src), f"LOAD DATA INPATH '{src}'", directory=False)
    if not fs.exists(src):
        raise UserInputError(f"Invalid path '{src}': No files matching path. Check the path "
                             "after INPATH.")
    spec = stmt.partition
    values = _load_values(table, spec) if table.is_partitioned else ()
    ctx.check_partition_names(values, table)
    if not table.is_partitioned and spec:
        check_spec_columns(table, spec)
    entries = fs.list_files(src)
    if not entries:
        raise UserInputError(f"No files to load in '{src}'")
    rows = _check_load_format(table, [x for x in entries if not x.is_dir]) if table.format in ("parquet", "orc") \
        else None
    table = cut_foreign_files(ctx, table)
    with ctx.begin_commit(table) as commit:
        fs.makedirs(commit.staging + "/data")
        staged = [(e.path, f"{commit.staging}/data/{i:05d}_{os.path.basename(e.path)}")
                  for i, e in enumerate(x for x in entries if not x.is_dir)]
        if stmt.local:
            for src, dst in staged:
                fs.copy(src, dst)
        else:  # moved, as Hive moves them; a LOAD that fails or is killed moves them back
            commit.take_files(staged)
        files = fs.list_files(commit.staging + "/data")
        if table.is_partitioned:
            existing = ctx.catalog.get_partition(table, values)
            location = existing.location if existing else layout.partition_path(
                table.location, table.partition_key_names(), values)
        else:
            location = table.location
        w = PartitionWrite(values, location, files, count_rows(table, files) if rows is None else rows,
                           stmt.overwrite)
        commit.finish(ctx.catalog, [w])
    return ctx.empty()


def insert_directory(ctx: Context, stmt: InsertDirectory) -> DataFrame:
    """INSERT OVERWRITE [LOCAL] DIRECTORY: the query's rows as files of the given format
    (TEXTFILE by default: Hive's \\x01-delimited text with ``\\N`` for NULL, or the ROW FORMAT's
    delimiters, escape character and NULL text) in the directory, which they replace whole.
    Better than Hive, which empties the directory before writing: the rows are written beside it
    first and swapped in under a journal (storage.commit.DirectoryWrite), so a failed or killed
    query leaves the directory as it was, or, killed during the swap, the new one. The
    warehouse, hivepark's own files, a table's or a database's directory and the root are
    refused (check_location)."""
    path = stmt.path
    if is_relative(path):
        raise SemanticError(f"INSERT OVERWRITE DIRECTORY '{path}' needs an absolute path (or a URI): a relative one "
                            "would depend on the directory hivepark runs in. Give the full path.")
    target = fs.normalize(path).rstrip("/")
    what = f"INSERT OVERWRITE {'LOCAL ' if stmt.local else ''}DIRECTORY"
    check_location(ctx, target, what)
    df = run_query(ctx, stmt.query.tree)[0]
    # the columns by position (_col0, ...), as Hive names them; NULL literals written as strings
    df = df.select(*[(F.col(f"`{f.name}`").cast("string") if f.dataType.typeName() == "void"
                      else F.col(f"`{f.name}`")).alias(f"_col{i}") for i, f in enumerate(df.schema.fields)])
    columns = tuple(TableColumn(f.name, f.dataType.simpleString()) for f in df.schema.fields)
    out = Table("", "directory", columns, location=target, format=normalize_format(stmt.format),
                field_delim=stmt.field_delim, properties=dict(stmt.serde))
    check_text_delimiter(out)
    with DirectoryWrite(ctx.warehouse, target) as directory:
        writer(df, out).mode("errorifexists").save(fs.to_spark_path(directory.staging))
        fs.delete_markers(directory.staging)  # Spark's _SUCCESS and checksums: the directory holds the rows alone
        directory.swap()
    return ctx.empty()
