"""Plan nodes: immutable descriptions of what a query reads and why."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hivepark.catalog.models import Partition, Table
from hivepark.expr import AlwaysTrue, Expr


@dataclass(frozen=True)
class TableScan:
    """A read of one table.

    ``predicate`` is everything known about the rows the query keeps from this scan;
    ``partition_filter`` is its sound projection onto the partition columns (bound to their
    types). ``partitions`` is ``None`` until pruning ran (or for unpartitioned tables).
    """

    table: Table
    alias: str
    predicate: Expr = field(default_factory=AlwaysTrue)
    partition_filter: Expr = field(default_factory=AlwaysTrue)
    partitions: tuple[Partition, ...] | None = None
    total_partitions: int = 0

    def evolve(self, **changes: Any) -> TableScan:
        return replace(self, **changes)


@dataclass(frozen=True)
class QueryPlan:
    """A query: its scans, in the order they appear in the text."""

    scans: tuple[TableScan, ...]
