"""Plan nodes: immutable descriptions of what a query reads and why."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hivepark.catalog.models import Partition, Table
from hivepark.expr import AlwaysTrue, Expr

IN_LIST_MAX = 200
"""A runtime value set larger than this reaches the reader as its min/max range, not IN."""


@dataclass(frozen=True)
class RuntimeSource:
    """Runtime pruning of a scan by the join-key values of a small (map-join) side.

    ``small`` indexes the small side's scan in the plan; ``big_col`` is the pruned scan's
    column (a partition key: partitions are pruned; any other column: an ``In`` filter is
    pushed into the scan). ``from_metastore`` means the small key is a partition key of the
    small side whose own filters touch only partition keys, so its values are known from
    the metastore at compile time (no Spark job).
    """

    small: int
    small_alias: str
    small_table: str
    small_col: str
    big_col: str
    big_is_partition_key: bool
    from_metastore: bool = False


@dataclass(frozen=True)
class TableScan:
    """A read of one table.

    ``predicate`` is everything known about the rows the query keeps from this scan;
    ``partition_filter`` is its sound projection onto the partition columns (bound to their
    types). ``partitions`` is ``None`` until pruning ran (or for unpartitioned tables).
    A ``deferred`` scan is the big side of a runtime-pruned join: static pruning only
    counted its partitions (``static_partitions``), and they are listed once, at execution,
    with the static and runtime filters together.
    """

    table: Table
    alias: str
    predicate: Expr = field(default_factory=AlwaysTrue)
    partition_filter: Expr = field(default_factory=AlwaysTrue)
    partitions: tuple[Partition, ...] | None = None
    total_partitions: int = 0
    runtime: tuple[RuntimeSource, ...] = ()
    notes: tuple[str, ...] = ()
    static_partitions: int | None = None
    row_filters: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    broadcast: bool = False
    list_bucketing: tuple[Any, ...] = ()  # plan.list_bucketing.LBChoice per skewed partition
    deferred: bool = False  # partitions listed at execution, after runtime pruning
    deferred_size: int = 0  # of a deferred scan: its statically chosen partitions' bytes

    def lb_choice(self, values: tuple[str | None, ...]) -> Any:
        """The list-bucketing choice for the partition with ``values``, or None."""
        for choice in self.list_bucketing:
            if choice.values == tuple(values):
                return choice
        return None

    def evolve(self, **changes: Any) -> TableScan:
        return replace(self, **changes)


@dataclass(frozen=True)
class QueryPlan:
    """A query: its scans, in the order they appear in the text."""

    scans: tuple[TableScan, ...]


@dataclass(frozen=True)
class JoinKey:
    """``big.big_col = small.small_col`` in a join; ``reason`` says why it cannot prune."""

    big: str
    big_col: str
    small: str
    small_col: str
    reason: str = ""

    @property
    def eligible(self) -> bool:
        return not self.reason
