"""Runtime (map-join) partition pruning, resolved at execution.

The small sides run first, each once: their scan is cached, their own filters applied, and
the distinct join-key values collected (capped by hive.mapjoin.partition.pruning.max.values).
The metastore is asked, in one query with one IN per key, which partitions of the big table
hold those values, intersected with static pruning. The cached small side then feeds the
join itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hivepark.catalog.models import Partition, type_family
from hivepark.exec.context import Context
from hivepark.exec.scan import scan_files, scan_size
from hivepark.expr import In, and_all
from hivepark.expr.bind import bind, bind_literal, binds_unchanged
from hivepark.plan.list_bucketing import prune_list_bucketing, table_layouts
from hivepark.plan.nodes import QueryPlan, RuntimeSource, TableScan
from hivepark.plan.partition_pruning import list_pruned
from hivepark.sql.analyzer import ScanSite
from hivepark.storage.arrow import arrow_type, to_arrow
from hivepark.storage.formats import read_arrow

SmallFrames = Callable[[int], DataFrame]


def resolve_runtime(ctx: Context, plan: QueryPlan, sites: Sequence[ScanSite],
                    frames: SmallFrames) -> QueryPlan:
    """Prunes every scan that has runtime sources; ``frames(i)`` is the i-th scan's
    DataFrame, cached and reused by the join, for small sides pyarrow cannot evaluate."""
    scans = list(plan.scans)
    cap = ctx.conf.get_int("hive.mapjoin.partition.pruning.max.values")
    for i, scan in enumerate(scans):
        if scan.runtime:
            scans[i] = _prune_one(ctx, scan, scans, sites, frames, cap)
    return QueryPlan(tuple(scans))


def _prune_one(ctx: Context, scan: TableScan, scans: list[TableScan],
               sites: Sequence[ScanSite], frames: SmallFrames, cap: int) -> TableScan:
    groups: dict[int, list[RuntimeSource]] = defaultdict(list)
    for src in scan.runtime:
        groups[src.small].append(src)
    part_filters, exact, rows, notes = [], [], list(scan.row_filters), list(scan.notes)
    lb_values: list[tuple[str, tuple[Any, ...]]] = []
    types = {c.name: c.type for c in scan.table.all_columns}
    for small, sources in groups.items():
        label = ", ".join(f"{s.small_alias}.{s.small_col} -> {scan.alias}.{s.big_col}"
                          for s in sources)
        small_types = {c.name: c.type for c in scans[small].table.all_columns}
        bad = [s for s in sources if type_family(types[s.big_col]) !=
               type_family(small_types[s.small_col])]
        if bad:
            notes.append(f"runtime pruning not applied ({label}): the key types differ")
            continue
        values, source_kind, domain = _values(ctx, scans[small], sites[small], frames,
                                              sources, cap)
        if values is None:
            notes.append(f"runtime pruning not applied ({label}): {scans[small].alias} has more "
                         f"than {cap:,} distinct key values "
                         "(hive.mapjoin.partition.pruning.max.values)")
            continue
        bound = _bind_tuples(values, [types[s.big_col] for s in sources])
        if bound is None:
            notes.append(f"runtime pruning not applied ({label}): a value cannot be compared "
                         "with the key's type")
            continue
        notes.append(f"runtime pruning ({label}): {len(bound):,} distinct values "
                     f"from {scans[small].table.qualified_name} ({source_kind})")
        keys = [s.big_col for s in sources]
        for j, s in enumerate(sources):
            column_values = _sorted({t[j] for t in bound})
            if s.big_is_partition_key:
                part_filters.append(In(s.big_col, column_values))
                continue
            lb_values.append((s.big_col, column_values))
            why_not = _range_too_wide(column_values, domain.get(s.small_col))
            if why_not:
                notes.append(f"row filter not pushed ({s.small_alias}.{s.small_col} -> "
                             f"{scan.alias}.{s.big_col}): {why_not}; the join keeps only "
                             "matching rows")
            else:
                rows.append((s.big_col, column_values))
        pk = [j for j, s in enumerate(sources) if s.big_is_partition_key]
        if len(pk) > 1:
            exact.append(([keys[j] for j in pk], {tuple(t[j] for j in pk) for t in bound}))
    scan = scan.evolve(notes=tuple(notes), row_filters=tuple(rows))
    if part_filters and scan.table.is_partitioned:
        flt = bind(and_all(*part_filters), scan.table.partition_types())

        def keep(p: Partition) -> bool:
            return all(_matches(scan, p, cols, want) for cols, want in exact)

        scan = list_pruned(scan, ctx.catalog, flt, keep)
    else:
        scan = list_pruned(scan, ctx.catalog)
    small_sets = [In(c, vals) for c, vals in lb_values if len(vals) <= _LB_VALUES_MAX]
    if small_sets and table_layouts(scan):
        # the values also choose list-bucketing directories of a skewed column
        scan = scan.evolve(predicate=and_all(scan.predicate, *small_sets))
    return prune_list_bucketing(scan)


_LB_VALUES_MAX = 10_000
_EXACT_PUSHDOWN = 10  # up to this many values Parquet gets exact equalities (dictionary skips)


def _sorted(values: set[Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(values))
    except TypeError:  # mixed types cannot be ordered: any fixed order will do
        return tuple(sorted(values, key=repr))


def _range_too_wide(values: tuple[Any, ...], domain: tuple[Any, Any] | None) -> str:
    """Why a reader filter would skip nothing: a set of more than 10 values reaches the
    Parquet reader as its min/max range (Spark's ``parquet.pushdown.inFilterThreshold``;
    beyond IN_LIST_MAX hivepark sends the range itself), and when that range covers most
    of the small table's own key range, every row group of the big table overlaps it,
    while the scan still pays to test each one and each row. Empty when worth pushing."""
    if len(values) <= _EXACT_PUSHDOWN or domain is None:
        return ""
    low, high = domain
    span, full = values[-1] - values[0], high - low
    if full <= 0 or span * 2 <= full:
        return ""
    return (f"{len(values):,} values span {100 * span / full:.0f}% of the small table's key "
            "range, so no row group would be skipped")


def _values(ctx: Context, small: TableScan, site: ScanSite, frames: SmallFrames,
            sources: list[RuntimeSource], cap: int
            ) -> tuple[set[tuple[Any, ...]] | None, str, dict[str, tuple[Any, Any]]]:
    """Distinct non-NULL key tuples of the small side (None when over ``cap``), where they
    came from (the metastore, pyarrow reading the small side's files, or Spark), and, when
    pyarrow read them, each numeric key's (min, max) over the whole small table."""
    cols = [s.small_col for s in sources]
    if all(s.from_metastore for s in sources):
        keys = small.table.partition_key_names()
        idx = [keys.index(c) for c in cols]
        found = {tuple(p.values[k] for k in idx) for p in small.partitions or ()}
        kind, domain = "metastore", dict[str, tuple[Any, Any]]()
    else:
        limit = ctx.conf.get_int("hive.mapjoin.smalltable.filesize")
        arrow = _collect_arrow(small, site, cols, limit)
        kind = "pyarrow" if arrow is not None else "spark"
        if arrow is not None:  # NULL keys already dropped
            found, domain = arrow
            return (found if len(found) <= cap else None), kind, domain
        found, domain = _collect(frames(sources[0].small), site, cols, cap), {}
    if len(found) > cap:
        return None, kind, domain
    return {t for t in found if all(v is not None for v in t)}, kind, domain


def _collect_arrow(small: TableScan, site: ScanSite, cols: list[str], limit: int
                   ) -> tuple[set[tuple[Any, ...]], dict[str, tuple[Any, Any]]] | None:
    """The small side's distinct key tuples computed in-process by pyarrow, with no Spark
    job: only when its files total at most ``limit`` bytes, the keys and filters read
    data columns whose comparisons Arrow makes exactly as Spark does, and pyarrow reads
    the files as Spark would. None otherwise."""
    table = small.table
    types = {c.name: c.type for c in table.columns}
    needed = sorted(set(cols) | site.own.columns())
    size = scan_size(small)
    if size is None or size > limit or any(arrow_type(types.get(c, "")) is None
                                          for c in needed):
        return None
    where = to_arrow(bind(site.own, types), types)
    files = scan_files(small) if where is not None else None
    if where is None or files is None:
        return None
    schema = pa.schema([(c, arrow_type(types[c])) for c in needed])
    every = read_arrow(table, files, schema)
    if every is None:
        return None
    domain = {}
    for c in cols:
        if pa.types.is_integer(schema.field(c).type) and every.num_rows:
            low, high = pc.min_max(every.column(c)).values()
            if low.is_valid:
                domain[c] = (low.as_py(), high.as_py())
    keys = every.filter(where).select(cols).drop_null().group_by(cols).aggregate([])
    found = set(zip(*(keys.column(c).to_pylist() for c in cols))) if keys.num_rows else set()
    return found, domain  # distinct non-NULL key tuples


def _collect(frame: DataFrame, site: ScanSite, cols: list[str], cap: int) -> set[tuple[Any, ...]]:
    """The small side's distinct key tuples after its own filters (at most cap + 1). If a
    filter cannot be applied alone, it is left out: more values, never fewer."""
    base = frame.alias(site.alias)
    keys = [F.col(f"`{site.alias}`.`{c}`") for c in cols]
    for filters in (site.filters, ()):
        df = base
        for cond in filters:
            df = df.where(F.expr(cond.sql(dialect="spark")))
        try:
            return {tuple(r) for r in df.select(*keys).distinct().limit(cap + 1).collect()}
        except PySparkException:
            if not filters:
                raise
    return set()


def _bind_tuples(values: set[tuple[Any, ...]], types: list[str]) -> set[tuple[Any, ...]] | None:
    """The tuples bound to the big side's key types; None if a value cannot be compared."""
    if all(binds_unchanged({t[j] for t in values}, typ) for j, typ in enumerate(types)):
        return values
    out = set()
    for t in values:
        bound = tuple(bind_literal(v, typ) for v, typ in zip(t, types))
        if any(b is None for b in bound):
            return None
        out.add(bound)
    return out


def _matches(scan: TableScan, p: Partition, cols: list[str], want: set[tuple[Any, ...]]) -> bool:
    keys = scan.table.partition_key_names()
    types = scan.table.partition_types()
    raw = [p.values[keys.index(c)] for c in cols]
    got = tuple(bind_literal(v, types[c]) if v is not None else None for v, c in zip(raw, cols))
    return got in want
