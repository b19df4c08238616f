"""Rule: static partition pruning, answered by the metastore in one SQL query.

Sound: a partition is dropped only when no row in it can satisfy the scan's predicate,
because ``project`` only weakens the predicate and the catalog evaluates the rest with
SQL's three-valued logic (the default partition is NULL).
"""

from __future__ import annotations

from collections.abc import Callable

from hivepark.catalog.base import Catalog, PartitionLister
from hivepark.catalog.models import Partition, Table
from hivepark.expr import AlwaysTrue, Expr, and_all
from hivepark.expr.bind import bind
from hivepark.expr.visitors import project
from hivepark.lru import Lru
from hivepark.plan.nodes import TableScan


def partition_filter(scan: TableScan) -> TableScan:
    """Sets ``partition_filter``: the predicate projected on the partition keys and bound.

    >>> from hivepark.catalog.models import Column, Table
    >>> from hivepark.expr import And, EqualTo, GreaterThan
    >>> t = Table("default", "pv", (Column("v", "int"),), (Column("hr", "int"),))
    >>> partition_filter(TableScan(t, "pv", And(EqualTo("v", 1), GreaterThan("hr", "9")))
    ...                  ).partition_filter
    GreaterThan(term='hr', value=9)
    """
    keys = scan.table.partition_key_names()
    if not keys:
        return scan
    projected = project(scan.predicate, keys)
    return scan.evolve(partition_filter=bind(projected, scan.table.partition_types()))


def prune_partitions(scan: TableScan, catalog: Catalog, defer: bool = False) -> TableScan:
    """Asks the metastore for the partitions that may hold matching rows; with ``defer``
    (runtime pruning will narrow them at execution) only counts them."""
    if not scan.table.is_partitioned:
        return scan
    # no filter: the partitions chosen are all of them, so they are also the table's count
    unfiltered = isinstance(scan.partition_filter, AlwaysTrue)
    if defer:
        static, size = _stats(catalog, scan.table, scan.partition_filter)
        if size is not None:  # else listed now: the map-join choice needs the size
            total = static if unfiltered else _stats(catalog, scan.table, AlwaysTrue())[0]
            return scan.evolve(deferred=True, static_partitions=static, deferred_size=size,
                               total_partitions=total)
    parts = catalog.list_partitions(scan.table, scan.partition_filter)
    total = len(parts) if unfiltered else catalog.count_partitions(scan.table)
    return scan.evolve(partitions=tuple(parts), total_partitions=total)


# A table's partition count and summed size under a static filter, by (its uid, its version,
# the filter): every change to a table's partitions, their files or statistics moves its
# version on, and a table created again gets a new uid, so an entry never goes stale. As
# Hive's metastore keeps aggregate statistics of partition sets (AggregateStatsCache): a
# query planned again over an unchanged table (a dashboard's) does not aggregate the
# statistics of its thousands of partitions again (2,406 partitions: about 2 ms).
_stats_cache: Lru[tuple[int, int | None]] = Lru(4096, lambda _: 1)


def _stats(catalog: Catalog, table: Table, flt: Expr) -> tuple[int, int | None]:
    """``catalog.partition_stats`` of ``table`` as the planner read it (its uid and version)."""
    if not table.uid:  # not read from a metastore: nothing identifies its state
        return catalog.partition_stats(table, flt)
    key = (table.uid, table.version, flt)
    hit = _stats_cache.get(key)
    if hit is None:
        hit = catalog.partition_stats(table, flt)
        _stats_cache.put(key, hit)
    return hit


def list_pruned(scan: TableScan, catalog: PartitionLister, runtime: Expr | None = None,
                keep: Callable[[Partition], bool] | None = None) -> TableScan:
    """The scan's partitions after runtime pruning: the static filter AND ``runtime``
    (bound) in one metastore query, then ``keep`` (exact multi-column tuples), with
    ``static_partitions`` set to what static pruning chose. Without ``runtime`` a deferred
    scan gets static pruning's partitions, and any other scan is returned as it is."""
    if runtime is None:
        if not scan.deferred:
            return scan
        parts = catalog.list_partitions(scan.table, scan.partition_filter)
        return scan.evolve(partitions=tuple(parts), deferred=False, static_partitions=None)
    static = scan.static_partitions if scan.deferred else len(scan.partitions or ())
    flt = and_all(scan.partition_filter, runtime)
    parts = [p for p in catalog.list_partitions(scan.table, flt) if keep is None or keep(p)]
    return scan.evolve(partitions=tuple(parts), deferred=False, static_partitions=static)
