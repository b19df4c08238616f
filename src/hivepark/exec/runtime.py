"""Runtime (map-join) partition pruning at execution: collecting the small sides' values.

Each value set ``plan.runtime_pruning.value_requests`` asks for is collected once: by
pyarrow reading the small side's files in-process when its filters translate exactly into
Arrow, else by Spark over the small side's cached scan (its own filters applied, at most
``hive.mapjoin.partition.pruning.max.values`` + 1 distinct key tuples). What the values
prune is decided by the plan rule ``apply_runtime_values``; the partitions are then listed
once (``plan.planner.list_runtime``). The cached small side then feeds the join itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import TimestampNTZType, TimestampType

from hivepark.exec.context import Context
from hivepark.exec.scan import FramedPartitions, scan_files, scan_size
from hivepark.expr.bind import bind
from hivepark.lru import Lru
from hivepark.plan.nodes import QueryPlan, TableScan, ValueSource
from hivepark.plan.planner import list_runtime
from hivepark.plan.runtime_pruning import (
    RuntimeSettings,
    RuntimeValues,
    apply_runtime_values,
    value_requests,
)
from hivepark.sql.analyzer import ScanSite
from hivepark.storage.arrow import arrow_type, to_arrow
from hivepark.storage.formats import read_arrow

SmallFrames = Callable[[int], DataFrame]


def resolve_runtime(ctx: Context, plan: QueryPlan, sites: Sequence[ScanSite],
                    frames: SmallFrames, settings: RuntimeSettings) -> QueryPlan:
    """Collects the values every scan with runtime sources needs, applies the rule that
    decides what they prune, and lists the pruned scans' partitions. ``frames(i)`` is the
    i-th scan's DataFrame, cached and reused by the join, for small sides pyarrow cannot
    evaluate."""
    cap = settings.max_values
    limit = ctx.conf.get_int("hive.mapjoin.smalltable.filesize")
    collected = {}
    for req in value_requests(plan):
        small = plan.scans[req.small]
        collected[(req.big, req.small)] = _collect_values(
            small, sites[req.small], partial(frames, req.small), list(req.columns), cap, limit)
    plan = apply_runtime_values(plan, collected, settings)
    return list_runtime(plan, FramedPartitions(ctx.catalog, ctx.table_frames()))


def _collect_values(small: TableScan, site: ScanSite, frame: Callable[[], DataFrame],
                    cols: list[str], cap: int, limit: int) -> RuntimeValues:
    arrow = _collect_arrow(small, site, cols, limit)
    if arrow is not None:  # NULL keys already dropped
        return arrow
    return RuntimeValues(frozenset(_collect(frame(), site, cols, cap)), ValueSource.SPARK)


class ArrowTuples(AbstractSet[tuple[Any, ...]]):
    """Distinct key tuples held by an Arrow table; the Python tuples are built on first use
    (a rule that decides on the count and range alone never pays for 80,000 of them)."""

    def __init__(self, table: pa.Table, cols: Sequence[str]) -> None:
        self._table, self._cols = table, list(cols)
        self._tuples: frozenset[tuple[Any, ...]] | None = None

    def _all(self) -> frozenset[tuple[Any, ...]]:
        if self._tuples is None:
            t = self._table
            self._tuples = frozenset(zip(*(t.column(c).to_pylist() for c in self._cols))) \
                if t.num_rows else frozenset()
        return self._tuples

    def __len__(self) -> int:
        return int(self._table.num_rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._all())

    def __contains__(self, item: object) -> bool:
        return item in self._all()


def _collect_arrow(small: TableScan, site: ScanSite, cols: list[str], limit: int
                   ) -> RuntimeValues | None:
    """The small side's distinct key tuples computed in-process by pyarrow, with no Spark
    job: only when its files total at most ``limit`` bytes, the keys and filters read
    data columns whose comparisons Arrow makes exactly as Spark does, and pyarrow reads
    the files as Spark would. None otherwise. Also each integer key's (min, max) over the
    whole small table and over the values found."""
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
    # the columns' Hive types too: a VARCHAR(n) is read cut (formats.read_cut), its Arrow type a string
    key = (table.format, tuple((f.path, f.size, f.mtime_ns) for f in files), schema,
           tuple(types[c] for c in needed))
    keys_key = (key, site.own, tuple(cols))
    found = _keys_cache.get(keys_key)
    if found is not None:  # the same filter over the same files: the same keys
        return found
    read = _read_cached(key, lambda: read_arrow(table, [f.path for f in files], schema))
    if read is None:
        return None
    every, whole = read
    domain = {c: whole[c] for c in cols if c in whole}
    keys = every.filter(where).select(cols).drop_null().group_by(cols).aggregate([])
    ranges = {}
    for c in domain:
        if keys.num_rows:
            low, high = pc.min_max(keys.column(c)).values()
            ranges[c] = (low.as_py(), high.as_py())
    # distinct non-NULL key tuples
    values = RuntimeValues(ArrowTuples(keys, cols), ValueSource.PYARROW, domain, ranges)
    _keys_cache.put(keys_key, values)
    return values


# The small sides' columns as last read, by (format, files with their sizes and modification
# times, schema): the dimensions of a star schema are read by every query. A commit writes
# new, uniquely named files; a file of an external table rewritten in place under the same
# name has a new modification time, even at the same size. At most 256 MB in all.
_read_cache: Lru[tuple[pa.Table, dict[str, tuple[Any, Any]]]] = Lru(256 << 20, lambda r: r[0].nbytes)
# Each small side's distinct key tuples, by (its read key, its own filter, the key columns):
# a star join run again (a dashboard's query) neither filters nor groups its dimensions
# again while their files are the same. At most 256 entries.
_keys_cache: Lru[RuntimeValues] = Lru(256, lambda _: 1)


def _read_cached(key: tuple[Any, ...], read: Callable[[], pa.Table | None]
                 ) -> tuple[pa.Table, dict[str, tuple[Any, Any]]] | None:
    """The rows ``read`` returns, and each integer column's (min, max), reused while the
    files are the same (see above); ``key`` is (format, files with their sizes and
    modification times, schema)."""
    hit = _read_cache.get(key)
    if hit is not None:
        return hit
    every = read()
    if every is None:
        return None
    domain = {}
    for field_ in key[2]:
        if pa.types.is_integer(field_.type) and every.num_rows:
            low, high = pc.min_max(every.column(field_.name)).values()
            if low.is_valid:
                domain[field_.name] = (low.as_py(), high.as_py())
    _read_cache.put(key, (every, domain))
    return every, domain


def _collect(frame: DataFrame, site: ScanSite, cols: list[str], cap: int) -> set[tuple[Any, ...]]:
    """The small side's distinct key tuples after its own filters (at most cap + 1). If a
    filter cannot be applied alone, it is left out: more values, never fewer. A TIMESTAMP
    key comes as the session time zone's wall clock (what a bound literal means), not as
    PySpark's conversion to this process's local time."""
    base = frame.alias(site.alias)
    keys = [F.col(f"`{site.alias}`.`{c}`") for c in cols]
    keys = [k.cast(TimestampNTZType()) if isinstance(f.dataType, TimestampType) else k
            for k, f in zip(keys, base.select(*keys).schema.fields)]
    for filters in (site.filter_sql, ()):
        df = base
        for cond in filters:
            df = df.where(F.expr(cond))
        try:
            return {tuple(r) for r in df.select(*keys).distinct().limit(cap + 1).collect()}
        except PySparkException:
            if not filters:
                raise
    return set()
