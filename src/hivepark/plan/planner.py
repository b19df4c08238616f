"""The planner: applies the rules to each scan, in a fixed order."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from hivepark.catalog.base import Catalog
from hivepark.plan.list_bucketing import prune_list_bucketing
from hivepark.plan.nodes import QueryPlan, TableScan
from hivepark.plan.partition_pruning import partition_filter, prune_partitions


def plan_scans(scans: Sequence[TableScan], catalog: Catalog,
               defer: Collection[int] = ()) -> QueryPlan:
    """Rules in order: partition filter derivation, static partition pruning, then
    list-bucketing directory pruning. Scans in ``defer`` (indexes; runtime pruning may
    narrow them) are only counted: see :func:`finish_deferred`."""
    out = []
    for i, scan in enumerate(scans):
        scan = partition_filter(scan)
        scan = prune_partitions(scan, catalog, defer=i in defer)
        scan = prune_list_bucketing(scan)
        out.append(scan)
    return QueryPlan(tuple(out))
