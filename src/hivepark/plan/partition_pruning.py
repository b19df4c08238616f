"""Rule: static partition pruning, answered by the metastore in one SQL query.

Sound: a partition is dropped only when no row in it can satisfy the scan's predicate,
because ``project`` only weakens the predicate and the catalog evaluates the rest with
SQL's three-valued logic (the default partition is NULL).
"""

from __future__ import annotations

from hivepark.catalog.base import Catalog
from hivepark.expr.bind import bind
from hivepark.expr.visitors import project
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


def prune_partitions(scan: TableScan, catalog: Catalog) -> TableScan:
    """Asks the metastore for the partitions that may hold matching rows."""
    if not scan.table.is_partitioned:
        return scan
    parts = catalog.list_partitions(scan.table, scan.partition_filter)
    total = catalog.count_partitions(scan.table)
    return scan.evolve(partitions=tuple(parts), total_partitions=total)
