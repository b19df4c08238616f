"""Rules: map-join partition pruning (HIVE-5119), marked at plan time, decided on the values.

For each equi-join ``big.k = small.c`` where ``small`` is a map-join side (hinted with
MAPJOIN/BROADCAST, or under ``hive.mapjoin.smalltable.filesize`` with
``hive.auto.convert.join``) and the join lets ``small``'s values restrict ``big`` (the
:class:`JoinKey` eligibility, found by ``sql/joins.py``), the big scan gets a
:class:`RuntimeSource` (:func:`mark_runtime`). At execution ``exec/`` collects the small
side's distinct key values (:func:`value_requests` says which), and
:func:`apply_runtime_values`, a pure rule, decides everything they do: which values prune
partitions (an ``In`` on each partition key, exact tuples on several keys), which become
reader filters (IN list or range, decided here once), which choose list-bucketing
directories, and why pruning did not apply. The partitions are then listed once, with the
static and runtime filters together (``plan.planner.list_runtime``).

Sound: a partition is dropped only if its key value equals none of the small side's values,
so no row of it can satisfy the equality (NULL equals nothing: the default partition goes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hivepark.expr import In, and_all
from hivepark.expr.bind import bind, bind_literal, binds_unchanged
from hivepark.lru import Lru
from hivepark.plan.nodes import (
    KeyPair,
    QueryPlan,
    RowFilter,
    RowFilterSkipped,
    RuntimeApplied,
    RuntimeSkipped,
    RuntimeSource,
    SkipReason,
    TableScan,
    ValueSource,
)
from hivepark.types import type_family


@dataclass(frozen=True)
class RuntimeSettings:
    enabled: bool = True
    auto_convert: bool = True
    small_table_bytes: int = 25_000_000
    max_values: int = 100_000  # hive.mapjoin.partition.pruning.max.values


def runtime_candidates(plan: QueryPlan, settings: RuntimeSettings) -> QueryPlan:
    """Marks the scans runtime pruning may narrow (``runtime_candidate``): the big side of
    an eligible join on one of their partition keys. Static pruning only counts these
    (listed at execution).

    >>> from hivepark.catalog.models import Column, Table
    >>> from hivepark.plan.nodes import JoinKey
    >>> fact = Table("default", "f", (Column("v", "int"),), (Column("ds", "string"),))
    >>> dim = Table("default", "d", (Column("ds", "string"),))
    >>> plan = QueryPlan((TableScan(fact, "f"), TableScan(dim, "d")),
    ...                  ((0, JoinKey("f", "ds", "d", "ds")), (0, JoinKey("d", "ds", "f", "ds"))))
    >>> [s.runtime_candidate for s in runtime_candidates(plan, RuntimeSettings()).scans]
    [True, False]
    """
    if not settings.enabled or not plan.joins:
        return plan
    return plan.evolve(scans=tuple(
        scan.evolve(runtime_candidate=True) if any(
            scope == scan.scope and k.eligible and k.big.lower() == scan.alias.lower()
            and k.big_col in scan.table.partition_key_names() for scope, k in plan.joins)
        else scan for scan in plan.scans))


def mark_runtime(plan: QueryPlan, settings: RuntimeSettings,
                 size: Callable[[TableScan], int | None]) -> QueryPlan:
    """Gives each big scan its runtime sources, and records why pruning does not apply
    where it does not; a small side chosen without a hint is broadcast. ``size`` is the
    bytes a scan reads (asked only of small sides).

    >>> from hivepark.catalog.models import Column, Table
    >>> from hivepark.plan.nodes import JoinKey
    >>> fact = Table("default", "f", (Column("v", "int"),), (Column("ds", "string"),))
    >>> dim = Table("default", "d", (Column("ds", "string"), Column("h", "boolean")))
    >>> plan = QueryPlan((TableScan(fact, "f"), TableScan(dim, "d")),
    ...                  ((0, JoinKey("f", "ds", "d", "ds")),))
    >>> out = mark_runtime(plan, RuntimeSettings(), lambda s: 100 if s.alias == "d" else None)
    >>> out.scans[0].runtime[0].small_alias, out.scans[1].broadcast
    ('d', True)
    """
    if not plan.joins:
        return plan
    out = list(plan.scans)
    small_aliases = {k.small.lower() for _, k in plan.joins}
    sizes = [size(scan) if scan.alias.lower() in small_aliases else None for scan in out]
    index = {(s.scope, s.alias.lower()): i for i, s in enumerate(out)}
    for scope, key in plan.joins:
        small_scope = scope if key.small_scope is None else key.small_scope
        b, sm = index.get((scope, key.big.lower())), index.get((small_scope, key.small.lower()))
        if b is None:
            continue
        if sm is None:  # a subquery's, a CTE's or a view's column that is no table's: never prunes
            if key.reason is not None and settings.enabled \
                    and key.big_col in out[b].table.partition_key_names():
                keys = (KeyPair(key.small, key.small_col, out[b].alias, key.big_col),)
                out[b] = _fact(out[b], RuntimeSkipped(keys, SkipReason.JOIN, key.reason, key.detail))
            continue
        big, small = out[b], out[sm]
        is_part = key.big_col in big.table.partition_key_names()
        keys = (KeyPair(small.alias, key.small_col, big.alias, key.big_col),)
        if not settings.enabled:
            if is_part:
                out[b] = _fact(big, RuntimeSkipped(keys, SkipReason.OFF))
            continue
        if not key.eligible:
            if is_part:
                out[b] = _fact(big, RuntimeSkipped(keys, SkipReason.JOIN, key.reason, key.detail))
            continue
        why_not = _not_small(keys, small.hinted, sizes[sm], settings)
        if why_not is None and not small.hinted and _bigger(sizes[sm], sizes[b]):
            why_not = RuntimeSkipped(keys, SkipReason.SMALL_IS_LARGER)
        if why_not is not None:
            if is_part:
                out[b] = _fact(big, why_not)
            continue
        src = RuntimeSource(sm, small.alias, small.table.qualified_name, key.small_col,
                            key.big_col, is_part, _from_metastore(small, key.small_col))
        if src not in big.runtime:  # ON f.ds = d.ds AND f.ds = d.ds: one source
            out[b] = big.evolve(runtime=big.runtime + (src,))
        if not small.hinted and key.small_direct:  # a subquery's table: its rows are not the join's side
            out[sm] = out[sm].evolve(broadcast=True)
    return plan.evolve(scans=tuple(out))


def _fact(scan: TableScan, fact: Any) -> TableScan:
    return scan if fact in scan.facts else scan.evolve(facts=scan.facts + (fact,))


def _not_small(keys: tuple[KeyPair, ...], hinted: bool, size: int | None,
               settings: RuntimeSettings) -> RuntimeSkipped | None:
    if hinted:
        return None
    if not settings.auto_convert:
        return RuntimeSkipped(keys, SkipReason.NO_AUTO_CONVERT)
    if size is None or size > settings.small_table_bytes:
        return RuntimeSkipped(keys, SkipReason.TOO_BIG, size=size, limit=settings.small_table_bytes)
    return None


def _bigger(a: int | None, b: int | None) -> bool:
    return a is not None and b is not None and a > b


def _from_metastore(small: TableScan, col: str) -> bool:
    """The small key is a partition key and the small side's predicate reads only
    partition keys: its values are exactly its chosen partitions' values."""
    keys = set(small.table.partition_key_names())
    return col in keys and small.predicate.columns() <= keys


# -- at execution: which values to collect, and what they decide --------------------------


@dataclass(frozen=True)
class ValueRequest:
    """The distinct ``columns`` tuples of scan ``small`` that big scan ``big`` needs.

    ``exec/`` answers each with :class:`RuntimeValues` (keyed ``(big, small)``)."""

    big: int
    small: int
    columns: tuple[str, ...]


@dataclass(frozen=True)
class RuntimeValues:
    """A small side's distinct key tuples as collected (at most ``max_values + 1`` of them;
    tuples holding NULL may be included), where they came from, and, when known, each
    integer key's (min, max) over the whole small table (``domain``) and over the collected
    values (``ranges``). ``values`` may be a lazy collection (``exec/`` builds 80,000 Python
    tuples only if the rule reads them): its ``len`` is the number of tuples."""

    values: Collection[tuple[Any, ...]]
    source: ValueSource
    domain: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    ranges: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)


def _groups(scan: TableScan) -> dict[int, list[RuntimeSource]]:
    groups: dict[int, list[RuntimeSource]] = {}
    for src in scan.runtime:
        groups.setdefault(src.small, []).append(src)
    return groups


def _types_differ(big: TableScan, small: TableScan, sources: Sequence[RuntimeSource]) -> bool:
    types = {c.name: c.type for c in big.table.all_columns}
    small_types = {c.name: c.type for c in small.table.all_columns}
    return any(type_family(types[s.big_col]) != type_family(small_types[s.small_col])
               for s in sources)


def value_requests(plan: QueryPlan) -> list[ValueRequest]:
    """The value sets :func:`apply_runtime_values` needs from execution: one per (big
    scan, small side), except small sides whose values the metastore gave (their chosen
    partitions, already in the plan) and keys whose types differ (they never prune).

    >>> from hivepark.catalog.models import Column, Table
    >>> fact = Table("default", "f", (Column("v", "int"),), (Column("ds", "string"),))
    >>> dim = Table("default", "d", (Column("ds", "string"),))
    >>> src = RuntimeSource(1, "d", "default.d", "ds", "ds", True)
    >>> value_requests(QueryPlan((TableScan(fact, "f", runtime=(src,)), TableScan(dim, "d"))))
    [ValueRequest(big=0, small=1, columns=('ds',))]
    """
    out = []
    for i, scan in enumerate(plan.scans):
        for small, sources in _groups(scan).items():
            if all(s.from_metastore for s in sources) or \
                    _types_differ(scan, plan.scans[small], sources):
                continue
            out.append(ValueRequest(i, small, _request_columns(sources)))
    return out


def _request_columns(sources: Sequence[RuntimeSource]) -> tuple[str, ...]:
    """The small side's key columns asked for, each once (``f.ds = d.ds AND f.pad = d.ds``
    compares one small column with two big ones)."""
    return tuple(dict.fromkeys(s.small_col for s in sources))


def _per_source(got: RuntimeValues, sources: Sequence[RuntimeSource]) -> RuntimeValues:
    """The collected tuples (over :func:`_request_columns`) as one value per source."""
    columns = _request_columns(sources)
    if len(columns) == len(sources):
        return got
    idx = [columns.index(s.small_col) for s in sources]
    return replace(got, values=frozenset(tuple(t[k] for k in idx) for t in got.values))


_LB_VALUES_MAX = 10_000  # larger sets do not choose list-bucketing directories
_EXACT_PUSHDOWN = 10  # up to this many values Parquet gets exact equalities (dictionary skips)


def apply_runtime_values(plan: QueryPlan, collected: Mapping[tuple[int, int], RuntimeValues],
                         settings: RuntimeSettings = RuntimeSettings()) -> QueryPlan:
    """The rule that decides what the collected values do to each scan with runtime sources.

    ``collected[(big, small)]`` answers each of :func:`value_requests`. Each small side is
    applied, or skipped with its reason (key types differ, over ``max_values`` values, a
    value that does not bind to the big key's type). Values of a partition key become
    ``runtime_filter`` (an ``In`` per key, bound) and, on two keys or more, exact
    ``runtime_tuples``; values of any other column become a reader filter (IN, or a range
    over IN_LIST_MAX values) unless their range covers most of the small table's key range,
    and choose list-bucketing directories (``runtime_values``). Partitions are listed
    afterwards, by ``plan.planner.list_runtime``.
    """
    scans = list(plan.scans)
    for i, scan in enumerate(plan.scans):
        if scan.runtime:
            scans[i] = _decide(i, scan, plan.scans, collected, settings.max_values)
    return plan.evolve(scans=tuple(scans))


def _decide(i: int, scan: TableScan, scans: Sequence[TableScan],
            collected: Mapping[tuple[int, int], RuntimeValues], cap: int) -> TableScan:
    part_filters: list[In] = []
    exact: list[tuple[tuple[str, ...], frozenset[tuple[Any, ...]]]] = []
    rows, facts = list(scan.row_filters), list(scan.facts)
    lb_values: list[In] = []
    types = {c.name: c.type for c in scan.table.all_columns}
    for small, sources in _groups(scan).items():
        keys = tuple(KeyPair(s.small_alias, s.small_col, scan.alias, s.big_col) for s in sources)
        if _types_differ(scan, scans[small], sources):
            facts.append(RuntimeSkipped(keys, SkipReason.KEY_TYPES_DIFFER))
            continue
        got = (_metastore_values(scans[small], sources)
               if all(s.from_metastore for s in sources)
               else _per_source(collected[(i, small)], sources))
        if len(got.values) > cap:
            facts.append(RuntimeSkipped(keys, SkipReason.TOO_MANY_VALUES, limit=cap))
            continue
        span = _skipped_span(sources, got)
        if span is not None:  # decided on the range alone: the values themselves are not read
            facts.append(RuntimeApplied(keys, len(got.values), scans[small].table.qualified_name,
                                        got.source))
            facts.append(RowFilterSkipped(keys[0], len(got.values), span))
            continue
        prepared = _prepared(got.values, tuple(types[s.big_col] for s in sources))
        if prepared is None:
            facts.append(RuntimeSkipped(keys, SkipReason.NOT_COMPARABLE))
            continue
        bound, columns = prepared
        facts.append(RuntimeApplied(keys, len(bound), scans[small].table.qualified_name,
                                    got.source))
        for j, s in enumerate(sources):
            column_values = columns[j]
            if s.big_is_partition_key:
                part_filters.append(In(s.big_col, column_values))
                continue
            if len(column_values) <= _LB_VALUES_MAX:
                lb_values.append(In(s.big_col, column_values))
            span = _span_percent(len(column_values), (column_values[0], column_values[-1])
                                 if column_values else None, got.domain.get(s.small_col))
            if span is not None:
                facts.append(RowFilterSkipped(keys[j], len(column_values), span))
            else:
                rows.append(RowFilter.of(s.big_col, column_values))
        pk = [j for j, s in enumerate(sources) if s.big_is_partition_key]
        if len(pk) > 1:
            exact.append((tuple(sources[j].big_col for j in pk),
                          frozenset(tuple(t[j] for j in pk) for t in bound)))
    runtime_filter = None
    if part_filters and scan.table.is_partitioned:
        runtime_filter = bind(and_all(*part_filters), scan.table.partition_types())
    return scan.evolve(facts=tuple(facts), row_filters=tuple(rows), runtime_filter=runtime_filter,
                       runtime_tuples=tuple(exact), runtime_values=tuple(lb_values))


def _metastore_values(small: TableScan, sources: Sequence[RuntimeSource]) -> RuntimeValues:
    """The small side's key tuples from its chosen partitions (its predicate reads only
    partition keys, so they are exactly its rows' keys)."""
    keys = small.table.partition_key_names()
    idx = [keys.index(s.small_col) for s in sources]
    return RuntimeValues(frozenset(tuple(p.values[k] for k in idx) for p in small.partitions or ()),
                         ValueSource.METASTORE)


def _sorted(values: set[Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(values))
    except TypeError:  # mixed types cannot be ordered: any fixed order will do
        return tuple(sorted(values, key=repr))


def _skipped_span(sources: Sequence[RuntimeSource], got: RuntimeValues) -> float | None:
    """The span of a reader filter :func:`_span_percent` would skip, known before the values
    are read: one key, not a partition key, more values than choose list-bucketing
    directories, all non-NULL (as collected in-process), their range and the small table's
    known. None otherwise (the values decide)."""
    if len(sources) != 1 or sources[0].big_is_partition_key or len(got.values) <= _LB_VALUES_MAX:
        return None
    col = sources[0].small_col
    rng, domain = got.ranges.get(col), got.domain.get(col)
    if rng is None or domain is None:
        return None
    return _span_percent(len(got.values), rng, domain)


def _span_percent(count: int, values_range: tuple[Any, Any] | None,
                  domain: tuple[Any, Any] | None) -> float | None:
    """How much of the small table's key range a reader filter on ``count`` values in
    ``values_range`` would span, when that makes it skip nothing (None when worth pushing).
    A set of more than 10 values
    reaches the Parquet reader as its min/max range (Spark's
    ``parquet.pushdown.inFilterThreshold``; beyond IN_LIST_MAX hivepark sends the range
    itself), and when that range covers most of the small table's own key range, every row
    group of the big table overlaps it, while the scan still pays to test each one and
    each row."""
    if count <= _EXACT_PUSHDOWN or domain is None or values_range is None:
        return None
    low, high = domain
    span, full = values_range[1] - values_range[0], high - low
    if full <= 0 or span * 2 <= full:
        return None
    return 100 * span / full


Prepared = tuple[frozenset[tuple[Any, ...]], tuple[tuple[Any, ...], ...]]

# A collected set's tuples as bound and sorted, by (the set's identity, the big side's key
# types): at most 1,000,000 tuples in all (about 125 MB at the most).
_prepared_cache: Lru[tuple[Collection[tuple[Any, ...]], Prepared | None]] = Lru(
    1_000_000, lambda entry: len(entry[0]))


def _prepared(values: Collection[tuple[Any, ...]], types: tuple[str, ...]) -> Prepared | None:
    """A small side's non-NULL key tuples bound to the big side's key ``types``, and each
    key's sorted distinct values; None if a value cannot be compared. Computed once per
    collected set (``exec/`` hands the same set out again while that side's files and filter
    are unchanged): a query repeated over unchanged small sides binds nothing again
    (binding 8,000 SSB keys had cost about 5 ms per query). The entry holds the set itself,
    so its id is not reused while it is cached."""
    key = (id(values), types)
    hit = _prepared_cache.get(key)
    if hit is not None and hit[0] is values:
        return hit[1]
    bound = _bind_tuples({t for t in values if None not in t}, list(types))
    prepared = None if bound is None else (
        frozenset(bound), tuple(_sorted({t[j] for t in bound}) for j in range(len(types))))
    _prepared_cache.put(key, (values, prepared))
    return prepared


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
