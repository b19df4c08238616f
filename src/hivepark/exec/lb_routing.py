"""List-bucketing routing of writes: rows routed to one directory per skewed value plus a default
directory, inside each partition, in the same Spark write as the partitions themselves.

Each row gets an integer ``__lb`` computed with Spark expressions (a CASE over the skewed
values, compared in the column's type, or a broadcast join when partitions use different
value lists); Spark's ``partitionBy(<keys>, "__lb")`` writes ``.../ds=1/__lb=3/part-...``
into staging; :func:`staged_writes` turns ``__lb=3`` into ``x=30`` (``0`` is the default
directory, ``-1`` the partition itself for an append to a partition laid out without list
bucketing) and records each partition's layout with the commit.

Which values: the partition's own recorded layout for an append to a non-empty partition
(so a partition never mixes layouts); otherwise the table's SKEWED BY values, or, with
``hivepark.skew.auto.topk = K``, the K heaviest values of each partition, found by the
aggregation that also checks the dynamic-partition limits.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from hivepark import layout
from hivepark.catalog.buckets import spark_hash
from hivepark.catalog.models import Partition, Table
from hivepark.catalog.skew import (
    SKEW_LOCATIONS,
    SkewLayout,
    auto_topk,
    canonical_value,
    partition_layout,
    table_skew,
)
from hivepark.exec.context import Context
from hivepark.expr.visitors import render_literal
from hivepark.storage import fs
from hivepark.storage.commit import FILES_PARAM, PartitionWrite, listed_files
from hivepark.storage.formats import spark_type, sql_name

LB_COL = "hivepark_lb"  # not "_"-prefixed: such names are hidden from listings
PLAIN = -1
DEFAULT = 0

Values = tuple[str, ...]
PartValues = tuple[str | None, ...]


@dataclass
class LBPlan:
    """How a write lays rows out: skewed columns, the global list of skewed tuples (``__lb``
    i is ``tuples[i - 1]``), and per partition (by its key strings) the tuples it uses
    (None: the partition is written without list bucketing) and its existing layout."""

    columns: tuple[str, ...]
    tuples: list[Values]
    per_partition: dict[PartValues, list[Values] | None] = field(default_factory=dict)
    uniform: list[Values] | None = None
    existing: dict[PartValues, SkewLayout] = field(default_factory=dict)
    typed_keys: dict[PartValues, tuple[Any, ...]] = field(default_factory=dict)

    def index(self, values: Values) -> int:
        return self.tuples.index(values) + 1

    def directories(self, part: PartValues) -> list[int]:
        """The ``__lb`` numbers the rows of partition ``part`` (its key strings) can get from
        :func:`with_lb_column` (call it after that function, which settles the numbering)."""
        vals = self.uniform if self.uniform is not None else self.per_partition.get(part)
        if vals is None:
            return [PLAIN]
        return [DEFAULT] + [self.index(v) for v in vals]


def _non_empty(p: Partition | None) -> bool:
    return p is not None and (p.files is None or len(p.files) > 0)


def _table_non_empty(table: Table) -> bool:
    raw = table.properties.get(FILES_PARAM)
    if raw is not None:
        return bool(json.loads(raw))
    return bool(listed_files(table.location))


def _lb_enabled(table: Table) -> bool:
    spec = table_skew(table)
    return spec is not None and spec.stored_as_dirs


# ---------------------------------------------------------------- static (one partition)

def static_plan(ctx: Context, table: Table, data: DataFrame, existing: Partition | None,
                overwrite: bool) -> LBPlan | None:
    """The layout of a write into one partition (or an unpartitioned table); None: plain."""
    if not overwrite:
        if table.is_partitioned and _non_empty(existing):
            lay = partition_layout(existing.parameters)  # type: ignore[union-attr]
            return _from_layout(lay, existing.values) if lay else None  # type: ignore[union-attr]
        if not table.is_partitioned and _table_non_empty(table):
            lay = partition_layout(table.properties)
            return _from_layout(lay, ()) if lay else None
    if not _lb_enabled(table):
        return None
    spec = table_skew(table)
    assert spec is not None
    k = auto_topk(table)
    values = _top_values(data, table, spec.columns, k) if k else list(spec.values)
    return LBPlan(spec.columns, values, uniform=values)


def _from_layout(lay: SkewLayout, values: PartValues) -> LBPlan:
    plan = LBPlan(lay.columns, list(lay.values), uniform=list(lay.values))
    plan.existing[values] = lay
    return plan


def _top_values(data: DataFrame, table: Table, cols: Sequence[str], k: int) -> list[Values]:
    types = {c.name: c.type for c in table.columns}
    names = _names(cols)
    rows = _sql(data, f"SELECT {names} FROM {{rows}} WHERE {_candidates(cols)} GROUP BY {names} "
                      f"ORDER BY count(1) DESC, {names} LIMIT {int(k)}").collect()
    values = [tuple(canonical_value(_text(r[i]), types[c]) for i, c in enumerate(cols)) for r in rows]
    return _directories_apart(cols, values)


def _sql(rows: DataFrame, text: str) -> DataFrame:
    """``text`` over ``rows`` (named ``{rows}`` in it) as one Spark SQL statement: a Column
    costs several Py4J calls per operation (see :func:`_case`)."""
    return rows.sparkSession.sql(text, rows=rows)


def _names(cols: Sequence[str]) -> str:
    """The columns' names as Spark SQL text, braces doubled for ``_sql``'s formatting."""
    return ", ".join(sql_name(c) for c in cols).replace("{", "{{").replace("}", "}}")


def _all_not_null(cols: Sequence[str]) -> str:
    return " AND ".join(f"{_names([c])} IS NOT NULL" for c in cols) or "true"


def _candidates(cols: Sequence[str]) -> str:
    """The tuples auto top-K may choose: no NULL, and each value's text short enough for its
    directory name (``col=value``; escaping only lengthens it, :func:`_directories_apart` checks the
    rest): a longer heavy value stays in the default directory rather than fail the write."""
    room = [layout.MAX_NAME_BYTES - layout.name_bytes(c, "x") + 1 for c in cols]
    short = " AND ".join(f"octet_length(CAST({_names([c])} AS STRING)) <= {n}" for c, n in zip(cols, room))
    return f"{_all_not_null(cols)} AND {short}" if cols else "true"


def _directories_apart(cols: Sequence[str], values: Sequence[Values]) -> list[Values]:
    """``values`` (heaviest first) less those whose directory cannot be made (a name over 255
    bytes) or is an earlier one's: ``''`` and ``'__HIVE_DEFAULT_PARTITION__'`` are both written
    to ``s=__HIVE_DEFAULT_PARTITION__``, as in Hive, and two values in one directory would have
    their files written over each other's."""
    seen: set[str] = set()
    out = []
    for v in values:
        if any(layout.name_bytes(c, x) > layout.MAX_NAME_BYTES for c, x in zip(cols, v)):
            continue
        name = layout.lb_dir_name(list(cols), list(v))
        if name not in seen:
            seen.add(name)
            out.append(v)
    return out


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (datetime.date, Decimal)):
        return str(v)
    return str(v)


# ---------------------------------------------------------------- dynamic partitions

def dynamic_grouped(table: Table, out: DataFrame, keys: list[str]) -> DataFrame | None:
    """For auto-topk tables: rows counted per partition and skewed tuple, cached, so one
    pass over the input serves both the limit checks and the choice of heavy values."""
    if not _lb_enabled(table) or not auto_topk(table):
        return None
    spec = table_skew(table)
    assert spec is not None
    names = _names([*keys, *spec.columns])
    return _sql(out, f"SELECT {names}, count(1) AS __rows FROM {{rows}} GROUP BY {names}").persist()


def dynamic_plan(ctx: Context, table: Table, keys: list[str], parts: list[Any],
                 grouped: DataFrame | None, overwrite: bool) -> LBPlan | None:
    """The layout of a dynamic-partition write; ``parts`` are the preflight's rows (one per
    target partition, typed key values)."""
    typed = {_key_strings(r, keys): tuple(r[k] for k in keys) for r in parts}
    existing = ctx.catalog.get_partitions(table, list(typed)) if not overwrite else {}
    existing = {k: p for k, p in existing.items() if _non_empty(p)}
    layouts = {k: partition_layout(p.parameters) for k, p in existing.items()}
    if not _lb_enabled(table) and not any(layouts.values()):
        return None
    spec = table_skew(table)
    columns = spec.columns if spec is not None else next(
        lay.columns for lay in layouts.values() if lay is not None)
    tops = _dynamic_tops(table, keys, grouped, columns) if grouped is not None else {}
    plan = LBPlan(tuple(columns), [], typed_keys=typed)
    for k in typed:
        if k in existing:
            lay = layouts[k]
            if lay is not None and lay.columns != plan.columns:
                lay = None  # rare: mixing skew columns in one write; keep the partition plain
                plan.per_partition[k] = None
                continue
            plan.per_partition[k] = list(lay.values) if lay is not None else None
            if lay is not None:
                plan.existing[k] = lay
        elif _lb_enabled(table):
            plan.per_partition[k] = tops.get(typed[k], []) if grouped is not None \
                else list(spec.values)  # type: ignore[union-attr]
        else:
            plan.per_partition[k] = None
    for vals in plan.per_partition.values():
        for v in vals or []:
            if v not in plan.tuples:
                plan.tuples.append(v)
    lists = list(plan.per_partition.values())
    if lists and all(v is not None and v == lists[0] for v in lists):
        plan.uniform = lists[0]
    return plan


def _key_strings(row: Any, keys: list[str]) -> PartValues:
    return tuple(None if row[k] is None else _text(row[k]) for k in keys)


def _dynamic_tops(table: Table, keys: list[str], grouped: DataFrame,
                  cols: Sequence[str]) -> dict[tuple[Any, ...], list[Values]]:
    types = {c.name: c.type for c in table.columns}
    k = auto_topk(table)
    by, names = _names(keys), _names(cols)
    rows = _sql(grouped, f"SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY {by} "
                         f"ORDER BY __rows DESC, {names}) AS __rank FROM {{rows}} WHERE {_candidates(cols)}) "
                         f"WHERE __rank <= {int(k)} ORDER BY {by}, __rank").collect()
    out: dict[tuple[Any, ...], list[Values]] = {}
    for r in rows:
        out.setdefault(tuple(r[c] for c in keys), []).append(
            tuple(canonical_value(_text(r[c]), types[c]) for c in cols))
    return {part: _directories_apart(cols, values) for part, values in out.items()}


# ---------------------------------------------------------------- the __lb column

def directory_hashes(plan: LBPlan) -> list[tuple[PartValues, int]]:
    """Each (partition, directory) a dynamic write (``plan.typed_keys``: its partitions by
    their key strings) can fill, with Spark's hash of
    its (key strings..., ``__lb``) as the write's rows carry them (string keys, an int
    ``__lb``), the hash Spark's ``repartition`` by those columns sends its rows by, so that
    the write can be sized before it runs: computed here as the JVM does (:func:`spark_hash`;
    it was a small Spark job, 290 ms of a 1.4 s dynamic INSERT of 10 rows)."""
    out = []
    for part in plan.typed_keys:
        seed = spark_hash(part)  # the keys' hash is the directory number's seed
        out += [(part, spark_hash([d], seed)) for d in plan.directories(part)]
    return out


def with_lb_column(ctx: Context, table: Table, df: DataFrame, plan: LBPlan,
                   keys: list[str]) -> DataFrame:
    """``df`` with ``__lb``: which directory of its partition each row goes to."""
    types = {c.name: spark_type(c.type) for c in table.columns}
    if plan.uniform is not None:
        plan.tuples = list(dict.fromkeys(plan.tuples + plan.uniform))
        return df.withColumn(LB_COL, _case(plan, plan.uniform, types))
    key_types = {k: df.schema[k].dataType for k in keys}  # the partition values' text (write.py)
    rows, plain = [], []
    for part, vals in plan.per_partition.items():
        typed = plan.typed_keys[part]
        if vals is None:
            plain.append(typed)
            continue
        rows += [(*typed, *v, plan.index(v)) for v in vals]
    str_schema = StructType(
        [StructField(f"__k{i}", df.schema[k].dataType) for i, k in enumerate(keys)]
        + [StructField(f"__s{i}", StringType()) for i in range(len(plan.columns))]
        + [StructField("__i", IntegerType())])
    # Spark SQL text throughout: a Column costs several Py4J calls per operation (see _case)
    assign = ctx.spark.createDataFrame(rows, str_schema).selectExpr(
        *[f"__k{i}" for i in range(len(keys))],
        *[f"CAST(__s{i} AS {types[c]}) AS __s{i}" for i, c in enumerate(plan.columns)], "__i")
    cond = " AND ".join([*[f"{sql_name(k)} <=> __k{i}" for i, k in enumerate(keys)],
                         *[f"{sql_name(c)} = __s{i}" for i, c in enumerate(plan.columns)]])
    joined = df.join(F.broadcast(assign), F.expr(cond), "left")
    lb = f"coalesce(__i, {DEFAULT})"
    if plain:
        is_plain = " OR ".join(
            "(" + " AND ".join(f"{sql_name(k)} <=> CAST({render_literal(v)} AS {key_types[k].simpleString()})"
                               for k, v in zip(keys, typed)) + ")"
            for typed in plain)
        lb = f"CASE WHEN {is_plain} THEN {PLAIN} ELSE {lb} END"
    return joined.selectExpr(*[sql_name(c) for c in df.columns], f"CAST({lb} AS INT) AS {LB_COL}")


def _case(plan: LBPlan, values: list[Values], types: dict[str, str]) -> SparkColumn:
    """Each row's directory number: a CASE over the skewed tuples, each value compared in its
    column's type. Spark SQL text, one call into Spark: built from Columns, it took several
    Py4J calls per operation (161 ms for 3 tuples of 2 columns, 476 ms for 50; 28 ms as text)."""
    whens = " ".join(
        "WHEN " + " AND ".join(f"{sql_name(c)} = CAST({render_literal(x)} AS {types[c]})"
                               for c, x in zip(plan.columns, v)) + f" THEN {plan.index(v)}"
        for v in values)
    return F.expr(f"CAST(CASE {whens} ELSE {DEFAULT} END AS INT)" if whens else f"CAST({DEFAULT} AS INT)")


# ---------------------------------------------------------------- staging to commit

def staged_write(table: Table, leaf: str, values: PartValues, location: str,
                 plan: LBPlan, overwrite: bool, old_layout: SkewLayout | None,
                 count_rows: Callable[[Table, list[fs.FileEntry]], int]) -> PartitionWrite:
    """One partition's staged ``__lb=N`` subdirectories as a PartitionWrite whose files go
    to their list-bucketing directories, with the partition's new layout.

    ``old_layout`` is the layout of the non-empty partition an append adds to. The recorded
    layout is always sound: if the rows could not be routed by the partition's own layout,
    the layout is dropped and every file of the partition is read.
    """
    files: list[fs.FileEntry] = []
    rel_dirs: list[str] = []
    locations: dict[Values | None, str] = {}
    for sub in fs.list_files(leaf):
        name = sub.path.rstrip("/").rsplit("/", 1)[-1]
        if not sub.is_dir or not name.startswith(LB_COL + "="):
            continue
        n = int(name.split("=", 1)[1])
        rel = ""
        if n == DEFAULT:
            rel = locations[None] = layout.lb_default_dir_name(len(plan.columns))
        elif n != PLAIN:
            key = plan.tuples[n - 1]
            rel = locations[key] = layout.lb_dir_name(list(plan.columns), list(key))
        for f in fs.list_files(sub.path):
            if not f.is_dir:
                files.append(f)
                rel_dirs.append(rel)
    assigned = plan.per_partition[values] if values in plan.per_partition else plan.uniform
    params: dict[str, str | None] = {}
    if old_layout is not None:
        if assigned is not None and list(old_layout.values) == list(assigned):
            missing = {k: v for k, v in locations.items()
                       if (old_layout.default_location if k is None
                           else old_layout.location_of(k)) is None}
            params[SKEW_LOCATIONS] = old_layout.with_locations(missing).to_json()
        else:
            params[SKEW_LOCATIONS] = None
    elif locations or (assigned is not None and overwrite):
        vals = list(assigned or [])
        vals += [k for k in locations if k is not None and k not in vals]
        order = {v: i for i, v in enumerate(vals)}
        lay = SkewLayout(plan.columns, tuple(vals), tuple(sorted(
            locations.items(), key=lambda kv: len(vals) if kv[0] is None else order[kv[0]])))
        params[SKEW_LOCATIONS] = lay.to_json()
    return PartitionWrite(values, location, files, count_rows(table, files), overwrite,
                          rel_dirs=rel_dirs, parameters=params)


def old_layout(table: Table, existing: Partition | None, overwrite: bool) -> SkewLayout | None:
    """The layout an append must keep: that of the non-empty partition (or table) written to."""
    if overwrite:
        return None
    if table.is_partitioned:
        return partition_layout(existing.parameters) if _non_empty(existing) else None  # type: ignore[union-attr]
    return partition_layout(table.properties) if _table_non_empty(table) else None
