"""Skewed tables and list bucketing: the DDL (SKEWED BY, NOT SKEWED, NOT STORED AS
DIRECTORIES, SET SKEWED LOCATION), its validation with Hive's codes and texts, and the
``DESCRIBE FORMATTED`` lines. Writes are in :mod:`hivepark.exec.lb_write`."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame
from sqlglot import exp

from hivepark import layout
from hivepark.catalog.models import Column, Partition, Table
from hivepark.catalog.skew import (
    RESERVED,
    SKEW_AUTO_TOPK,
    SKEW_LOCATIONS,
    SkewLayout,
    SkewSpec,
    canonical_value,
    cleared_properties,
    lb_directories,
    partition_layout,
    skewable,
    table_skew,
)
from hivepark.errors import NoSuchPartition, SemanticError, UnsupportedError
from hivepark.exec.context import Context
from hivepark.sql.analyzer import literal_value, partition_spec
from hivepark.sql.dialect import (
    AlterNot,
    AlterSkewed,
    AnalyzeSkew,
    SetSkewedLocation,
    SkewedByProperty,
)
from hivepark.storage import fs
from hivepark.storage.commit import FILES_PARAM

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def skew_spec(columns: tuple[Column, ...] | list[Column], prop: SkewedByProperty,
              part_keys: tuple[Column, ...] | list[Column] = ()) -> SkewSpec:
    """Validates a SKEWED BY clause against the table's data columns (Hive's checks, in
    Hive's order) and returns it with each value in its column's canonical text."""
    names = [c.name.lower() for c in prop.expressions]
    tuples = [list(t.expressions) for t in prop.args.get("values") or []]
    if not names and tuples:
        raise SemanticError("Skewed column name is empty but skewed value is not.", code=10204)
    if names and not tuples:
        raise SemanticError("Skewed column value is empty but skewed name is not.", code=10205)
    if not names:
        raise SemanticError("No skewed column name.", code=10200)
    dups = [n for i, n in enumerate(names) if n in names[:i]]
    if dups:
        raise SemanticError(f"Duplicate skewed column name: {dups[0]}", code=10202)
    types = {c.name: c.type for c in columns}
    bad = [n for n in names if n not in types]
    if bad:
        keys = {c.name for c in part_keys}
        why = ("a partition column cannot be skewed" if set(bad) & keys
               else "skewed columns must be data columns")
        raise SemanticError(f"Invalid skewed column name: {' '.join(bad)} ({why}; the data "
                            f"columns are: {', '.join(types)})", code=10203)
    for n in names:
        if not skewable(types[n]):
            raise SemanticError(f"Invalid skewed column name: {n} (a {types[n]} column cannot "
                                "be skewed: use a column of a scalar type)", code=10203)
    values: list[tuple[str, ...]] = []
    for tup in tuples:
        if len(tup) != len(names):
            raise SemanticError("The number of skewed column names and the number of skewed "
                                f"column values are different: {len(names)} : {len(tup)}",
                                code=10206)
        value = tuple(_value(n, types[n], node) for n, node in zip(names, tup))
        if value not in values:
            values.append(value)
    dirs = lb_directories(names, values)
    clash = [d for i, d in enumerate(dirs) if d in dirs[:i]]
    if clash:
        raise SemanticError(f"Two skewed values map to the same directory {clash[0]}: an "
                            "empty string and __HIVE_DEFAULT_PARTITION__ cannot both be skewed")
    return SkewSpec(tuple(names), tuple(values), bool(prop.args.get("stored_as_dirs")))


def _value(col: str, typ: str, node: exp.Expression) -> str:
    try:
        text = literal_value(node)
    except SemanticError:
        raise SemanticError(f"Skewed value {node.sql(dialect='hive')} for column {col} must "
                            "be a constant: write a string or number literal") from None
    if text is None:
        raise SemanticError(f"Skewed value NULL for column {col} is not allowed: rows whose "
                            "skewed column is NULL always go to the default directory")
    try:
        return canonical_value(text, typ)
    except ValueError:
        raise SemanticError(f"Skewed value '{text}' for column {col} is not a valid {typ}: "
                            f"give a {typ} value") from None


def check_create(props: list[exp.Expression], table: Table) -> None:
    """LB combinations hivepark cannot keep correct: bucketing (CLUSTERED BY)."""
    if table_skew(table) and any(isinstance(p, exp.ClusteredByProperty) for p in props):
        raise SemanticError("A list bucketing (SKEWED BY) table cannot also be bucketed "
                            "(CLUSTERED BY): remove one of the two clauses")


def alter_skewed(ctx: Context, table: Table, action: AlterSkewed) -> Table:
    """ALTER TABLE t SKEWED BY ... ON ... [STORED AS DIRECTORIES] (table level only)."""
    if table.partition_keys and "partition" in action.args:
        raise SemanticError("ALTER TABLE ... SKEWED BY applies to the table, not a partition")
    spec = skew_spec(table.columns, action.this, table.partition_keys)
    return _set_properties(ctx, table, spec.properties())


def alter_not(ctx: Context, table: Table, action: AlterNot) -> Table:
    """NOT SKEWED (drops the skew and list bucketing) or NOT STORED AS DIRECTORIES."""
    spec = table_skew(table)
    if action.args["kind"] == "SKEWED":
        return _set_properties(ctx, table, cleared_properties())
    if spec is None:
        raise SemanticError(f"This operation is only valid on skewed table. "
                            f"{table.qualified_name}", code=10196)
    return _set_properties(ctx, table, SkewSpec(spec.columns, spec.values, False).properties())


def _set_properties(ctx: Context, table: Table, changes: dict[str, str | None]) -> Table:
    props = {**table.properties, **changes}
    props = {k: v for k, v in props.items() if v is not None}
    return ctx.catalog.alter_table(table.evolve(properties=props), table.version)


def check_column_change(table: Table, action: exp.Expression) -> None:
    """10207: a skewed column cannot be renamed or retyped."""
    spec = table_skew(table)
    if spec is None or not isinstance(action, exp.AlterColumn):
        return
    col = action.this.name.lower()
    if col not in spec.columns:
        return
    new_name = action.args.get("rename_to")
    dtype = action.args.get("dtype")
    current = next((c.type for c in table.columns if c.name == col), None)
    renamed = new_name is not None and new_name.name.lower() != col
    from hivepark.sql.analyzer import hive_type
    retyped = dtype is not None and hive_type(dtype) != current
    if renamed or retyped:
        raise SemanticError(f"{col} is a skewed column. It's not allowed to rename skewed "
                            "column or change skewed column type.", code=10207)


def set_skewed_location(ctx: Context, table: Table, action: SetSkewedLocation,
                        partition_node: exp.Expression | None) -> Table:
    """ALTER TABLE t [PARTITION (...)] SET SKEWED LOCATION (key='uri', ...): changes the
    location map of one partition (or of an unpartitioned table's data)."""
    from hivepark.exec.ddl import full_spec

    if not action.args.get("mapped"):
        raise SemanticError("Alter table skewed location doesn't have location map.", code=10198)
    if not action.expressions:
        raise SemanticError("Alter table skewed location doesn't have locations.", code=10197)
    part: Partition | None = None
    if partition_node is not None:
        values = full_spec(table, partition_spec(partition_node))
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
    spec = table_skew(table)
    if current is None and spec is None:
        raise SemanticError(f"This operation is only valid on skewed table. "
                            f"{table.qualified_name}", code=10196)
    base = current or SkewLayout(spec.columns, spec.values, ())  # type: ignore[union-attr]
    changes = _location_changes(table, base, action)
    new = base.with_locations(changes).to_json()
    # The map is now the truth, as in Hive: the data is found by listing its directories.
    if part is not None:
        put = part.evolve(parameters={**part.parameters, SKEW_LOCATIONS: new}, files=None)
        return ctx.catalog.commit(table, table.version, put=[put])
    return ctx.catalog.commit(table, table.version,
                              table_parameters={SKEW_LOCATIONS: new, FILES_PARAM: None})


def _location_changes(table: Table, base: SkewLayout, action: SetSkewedLocation
                      ) -> dict[tuple[str, ...] | None, str]:
    types = {c.name: c.type for c in table.columns}
    out: dict[tuple[str, ...] | None, str] = {}
    for entry in action.expressions:
        key_node, loc_node = entry.expressions
        loc = loc_node.name if isinstance(loc_node, exp.Literal) else ""
        if not loc:
            raise SemanticError("Alter table skewed location doesn't have locations.",
                                code=10197)
        if not _URI.match(loc):
            raise SemanticError(f"{loc} is not absolute or has no scheme information. Please "
                                "specify a complete absolute uri with scheme information.")
        items = key_node.expressions
        if len(items) == 1 and isinstance(items[0], exp.Literal) and items[0].is_string \
                and items[0].name == layout.LB_DEFAULT_KEY:
            out[None] = fs.normalize(loc)
            continue
        if len(items) != len(base.columns):
            raise SemanticError("The number of skewed column names and the number of skewed "
                                f"column values are different: {len(base.columns)} : "
                                f"{len(items)}", code=10206)
        key = tuple(_value(c, types.get(c, "string"), n) for c, n in zip(base.columns, items))
        if key not in base.values:
            shown = ", ".join(key)
            raise SemanticError(f"Skewed value ({shown}) is not one of the skewed values of "
                                f"this data ({', '.join('(' + ', '.join(v) + ')' for v in base.values)}): "
                                "a location can be set only for a skewed value, or for "
                                f"'{layout.LB_DEFAULT_KEY}'")
        out[key] = fs.normalize(loc)
    return out


def copy_for_like(src: Table) -> dict[str, str]:
    """The skew properties CREATE TABLE ... LIKE copies."""
    return {k: v for k, v in src.properties.items()
            if k in RESERVED[:3] or k == SKEW_AUTO_TOPK}


def describe_lines(ctx: Context, table: Table, part: Partition | None) -> list[tuple]:
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
    if lay is not None and lay.locations:
        base = part.location if part is not None else table.location
        full = [(_key_text(k), layout.resolve_location(base, loc)) for k, loc in lay.locations]
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


def analyze(ctx: Context, node: exp.Analyze) -> DataFrame:
    """ANALYZE TABLE t [PARTITION (...)] COMPUTE SKEW FOR COLUMNS c[, ...]: per partition,
    the heaviest values of the columns and their share of the partition's rows (the K of
    ``hivepark.skew.auto.topk``, else 10), computed by one Spark aggregation."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from hivepark.exec.ddl import spec_filter
    from hivepark.exec.scan import scan_dataframe
    from hivepark.plan.nodes import TableScan
    from hivepark.plan.planner import plan_scans

    inner = node.args.get("expression")
    if not isinstance(inner, AnalyzeSkew):
        raise UnsupportedError("ANALYZE TABLE ... COMPUTE STATISTICS is not supported: hivepark "
                               "keeps numRows/totalSize at every commit. ANALYZE TABLE t "
                               "COMPUTE SKEW FOR COLUMNS c reports skew")
    table = ctx.table(node.args["tables"][0])
    cols = [c.name.lower() for c in inner.expressions]
    data_cols = [c.name for c in table.columns]
    bad = [c for c in cols if c not in data_cols]
    if bad or not cols:
        raise SemanticError(f"Invalid skewed column name: {' '.join(bad)} (COMPUTE SKEW needs "
                            f"data columns of {table.qualified_name}: {', '.join(data_cols)})",
                            code=10203)
    spec = partition_spec(node.args.get("partition"))
    pred = spec_filter(table, spec) if spec else None
    from hivepark.expr import AlwaysTrue
    scan = plan_scans([TableScan(table, table.name, pred or AlwaysTrue())],
                      ctx.catalog).scans[0]
    df = scan_dataframe(ctx.spark, scan)
    keys = list(table.partition_key_names())
    k = int(table.properties.get(SKEW_AUTO_TOPK) or 0) or 10
    counted = df.groupBy(*[F.col(f"`{c}`") for c in keys + cols]).agg(
        F.count(F.lit(1)).alias("num_rows"))
    by_part = Window.partitionBy(*[F.col(f"`{c}`") for c in keys])
    ranked = counted.withColumn("share", F.col("num_rows") / F.sum("num_rows").over(by_part)) \
        .withColumn("rank", F.row_number().over(by_part.orderBy(
            F.desc("num_rows"), *[F.col(f"`{c}`") for c in cols]))) \
        .where(F.col("rank") <= k)
    name = F.concat_ws("/", *[F.concat(F.lit(f"{c}="), F.coalesce(
        F.col(f"`{c}`").cast("string"), F.lit(layout.DEFAULT_PARTITION_NAME))) for c in keys]) \
        if keys else F.lit("")
    value = F.concat(F.lit("["), F.concat_ws(", ", *[F.coalesce(
        F.col(f"`{c}`").cast("string"), F.lit("NULL")) for c in cols]), F.lit("]"))
    return ranked.select(name.alias("partition"), "rank", value.alias("skewed_value"),
                         "num_rows", F.round("share", 4).alias("share")) \
        .orderBy("partition", "rank")
