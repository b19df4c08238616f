"""Plan nodes: immutable descriptions of what a query reads and why."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from hivepark.catalog.models import Partition, Table
from hivepark.expr import AlwaysFalse, AlwaysTrue, And, Expr, GreaterThanOrEqual, In, LessThanOrEqual

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
class KeyPair:
    """``small_alias.small_col -> big_alias.big_col``: a join key runtime pruning reads."""

    small_alias: str
    small_col: str
    big_alias: str
    big_col: str


class SkipReason(Enum):
    """Why runtime pruning does not apply to a join key (``plan.explain`` words each)."""

    OFF = "off"  # hive.optimize.mapjoin.partition.pruning=false
    JOIN = "join"  # the join does not let the small side restrict the big one (JoinKey.reason)
    NO_AUTO_CONVERT = "no auto convert"  # not hinted and hive.auto.convert.join=false
    TOO_BIG = "too big"  # not hinted and over hive.mapjoin.smalltable.filesize
    SMALL_IS_LARGER = "small is larger"  # the "small" side is larger than the big one
    KEY_TYPES_DIFFER = "key types differ"
    TOO_MANY_VALUES = "too many values"  # over hive.mapjoin.partition.pruning.max.values
    NOT_COMPARABLE = "not comparable"  # a value does not bind to the big key's type


@dataclass(frozen=True)
class RuntimeSkipped:
    """Runtime pruning by ``keys`` (one small side) does not apply, and why.

    ``join`` and ``detail`` are the join's own reason (``SkipReason.JOIN``); ``size`` and ``limit`` are
    the small side's bytes and the threshold (``TOO_BIG``) or the value cap
    (``TOO_MANY_VALUES``, in ``limit``); ``join`` is the join's reason (``JOIN``)."""

    keys: tuple[KeyPair, ...]
    reason: SkipReason
    join: JoinReason | None = None
    detail: str = ""
    size: int | None = None
    limit: int = 0


class ValueSource(Enum):
    """Where a small side's runtime values came from."""

    METASTORE = "metastore"  # the small side's chosen partitions (no Spark job)
    PYARROW = "pyarrow"  # its files read in-process
    SPARK = "spark"  # a Spark job over its cached scan


@dataclass(frozen=True)
class RuntimeApplied:
    """Runtime pruning by ``keys`` applied: ``values`` distinct key tuples of ``small_table``."""

    keys: tuple[KeyPair, ...]
    values: int
    small_table: str
    source: ValueSource


@dataclass(frozen=True)
class RowFilterSkipped:
    """A runtime value set of ``key`` not pushed to the reader: its ``values`` span
    ``span_percent`` of the small table's key range, so no row group would be skipped."""

    key: KeyPair
    values: int
    span_percent: float


@dataclass(frozen=True)
class HandlerScan:
    """What a storage handler's scan asks its source: ``handler`` (its Hive class name or
    its own), ``text`` (the handler's own form, e.g. JDBC's exact SQL; never a secret),
    and, after EXPLAIN ANALYZE, ``rows``: the rows the source returned."""

    handler: str
    text: str
    rows: int | None = None


Fact = RuntimeSkipped | RuntimeApplied | RowFilterSkipped | HandlerScan
"""What the planner decided about a scan and why; ``plan.explain`` turns each into a line."""


class FilterShape(Enum):
    """How a runtime value set reaches the reader."""

    IN = "in"  # col IN (values)
    RANGE = "range"  # col BETWEEN min AND max (over IN_LIST_MAX values)


@dataclass(frozen=True)
class RowFilter:
    """A reader filter on ``column`` from a small side's runtime values, its shape decided
    once (by ``plan.runtime_pruning``) for the reader and for EXPLAIN alike."""

    column: str
    values: tuple[Any, ...]
    shape: FilterShape

    def expr(self) -> Expr:
        """The filter as a predicate tree: ``column IN (values)`` or the values' range."""
        if not self.values:
            return AlwaysFalse()
        if self.shape is FilterShape.RANGE:
            low, high = self.bounds()
            if high is None:
                return GreaterThanOrEqual(self.column, low)
            return And(GreaterThanOrEqual(self.column, low), LessThanOrEqual(self.column, high))
        return In(self.column, tuple(self.values))

    def bounds(self) -> tuple[Any, Any]:
        """The range of the values (not empty) as ``(low, high)``: their least and greatest
        but NaN, and ``high`` None when NaN is one of them. Spark's join matches NaN with NaN
        and orders NaN above every number, so ``column >= low`` keeps the NaN rows.

        >>> nan = float("nan")
        >>> RowFilter.of("x", (2.0, nan, 1.0)).bounds(), RowFilter.of("x", (nan,)).bounds()
        ((1.0, None), (nan, None))
        """
        numbers = [v for v in self.values if v == v]  # NaN is the one value unequal to itself
        if len(numbers) == len(self.values):
            return min(numbers), max(numbers)
        return (min(numbers) if numbers else float("nan")), None

    @staticmethod
    def of(column: str, values: tuple[Any, ...]) -> RowFilter:
        """IN up to IN_LIST_MAX values, else the values' range."""
        return RowFilter(column, values,
                         FilterShape.RANGE if len(values) > IN_LIST_MAX else FilterShape.IN)


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
    facts: tuple[Fact, ...] = ()
    static_partitions: int | None = None
    row_filters: tuple[RowFilter, ...] = ()
    broadcast: bool = False
    list_bucketing: tuple[Any, ...] = ()  # plan.list_bucketing.LBChoice per skewed partition
    buckets: tuple[frozenset[int], int] | None = None  # Hive bucket files read (chosen, of), plan.bucket_pruning
    sample: Any = None  # catalog.buckets.BucketSample: TABLESAMPLE (BUCKET x OUT OF y ON c), by Hive's hash
    sampled: bool = False  # Spark's TABLESAMPLE (ROWS, PERCENT, random BUCKET): before any filter, nothing pruned
    deferred: bool = False  # partitions listed at execution, after runtime pruning
    deferred_size: int = 0  # of a deferred scan: its statically chosen partitions' bytes
    scope: int = 0  # the SELECT scope the reference is in (join keys are per scope)
    hinted: bool = False  # named in a MAPJOIN / BROADCAST hint
    runtime_candidate: bool = False  # runtime pruning may narrow it: static pruning only counts
    runtime_filter: Expr | None = None  # runtime values on partition keys, listed with the static filter
    runtime_tuples: tuple[tuple[tuple[str, ...], frozenset[tuple[Any, ...]]], ...] = ()
    """exact multi-key tuples a partition's values must form (runtime pruning on 2+ keys)"""
    runtime_values: tuple[Expr, ...] = ()  # runtime value sets that choose list-bucketing dirs
    pushdown: Any = None
    columns: tuple[str, ...] | None = None  # the columns the query reads (handler scans); None: all
    filter_parts: tuple[Expr, ...] = ()  # the scan's own WHERE/ON conjuncts, as written
    source_applied: tuple[int, ...] = ()  # of ``filter_parts``: applied exactly by the storage handler

    @property
    def read_columns(self) -> list[str]:
        """The columns a handler scan asks its source for."""
        return list(self.columns) if self.columns else [c.name for c in self.table.columns]
    """A storage handler's decision (pushed and residual predicates), set by the
    ``storage_pushdown`` rule of ``plan.planner``; None for tables without a handler."""

    def lb_choice(self, values: tuple[str | None, ...]) -> Any:
        """The list-bucketing choice for the partition with ``values``, or None."""
        return self._lb_index.get(tuple(values))

    @functools.cached_property
    def _lb_index(self) -> dict[tuple[str | None, ...], Any]:
        """``list_bucketing`` by partition values (a scan of thousands of partitions asks
        for each one's choice: a search each would be quadratic)."""
        index: dict[tuple[str | None, ...], Any] = {}
        for choice in self.list_bucketing:
            index.setdefault(choice.values, choice)
        return index

    def evolve(self, **changes: Any) -> TableScan:
        return replace(self, **changes)


@dataclass(frozen=True)
class QueryPlan:
    """A query: its scans, in the order they appear in the text, and the equi-join keys
    between them (each with the SELECT scope it belongs to)."""

    scans: tuple[TableScan, ...]
    joins: tuple[tuple[int, JoinKey], ...] = ()

    def evolve(self, **changes: Any) -> QueryPlan:
        return replace(self, **changes)


class JoinReason(Enum):
    """Why a join's key cannot carry one side's values to the other (``plan.explain``
    words each)."""

    ANTI = "anti"  # an ANTI JOIN keeps the big side's rows that do not match
    FULL_OUTER = "full outer"  # a FULL OUTER JOIN preserves both sides
    LEFT_PRESERVED = "left preserved"  # the big side is the preserved side of a LEFT JOIN
    RIGHT_PRESERVED = "right preserved"  # ... of a RIGHT JOIN
    NULL_SUPPLYING = "null supplying"  # a WHERE equality on an outer join's null-supplying side
    KEY_IN_FUNCTION = "key in function"  # detail: the key (alias.column) inside a function
    OTHER_SIDE_EXPRESSION = "other side expression"  # detail: the expression, in HiveQL
    SAMPLED = "sampled"  # the big side is sampled by Spark (TABLESAMPLE n ROWS/PERCENT) before the join
    NOT_A_TABLE = "not a table"  # detail: the other side's key (alias.column), not a table's column passed through
    THROUGH_DERIVED = "through derived"  # detail: the subquery, CTE or view the big table is read through
    # the big table read through a subquery, a CTE or a view (detail: its alias) that mixes its rows' keys:
    DERIVED_LIMIT = "derived limit"  # a LIMIT
    DERIVED_GROUPED = "derived grouped"  # grouped by other columns, or ROLLUP, CUBE, GROUPING SETS
    DERIVED_WINDOW = "derived window"  # a window not partitioned by the key
    DERIVED_RANDOM = "derived random"  # random values (rand(), a UDF)
    DERIVED_SHARED = "derived shared"  # a CTE read more than once
    DERIVED_SAMPLED = "derived sampled"  # a TABLESAMPLE of the subquery, CTE or view itself
    DERIVED_UNION = "derived union"  # a UNION (EXCEPT, INTERSECT) whose branches do not all pass the key through
    DERIVED_EXPRESSION = "derived expression"  # detail: alias.column, an expression of the big table's key


@dataclass(frozen=True)
class JoinKey:
    """``big.big_col = small.small_col`` in a join; ``reason`` (with its ``detail``) says
    why it cannot prune, None when it can."""

    big: str
    big_col: str
    small: str
    small_col: str
    reason: JoinReason | None = None
    detail: str = ""
    small_scope: int | None = None  # the small side's scope when it is not the big side's (a subquery, ...)
    small_direct: bool = True  # False: the small table is read through a subquery, a CTE or a view

    @property
    def eligible(self) -> bool:
        return self.reason is None
