"""The planner: one ordered list of rules, each a function from plan to plan.

A rule reads the plan and the planning environment (:class:`Planning`: the metastore, the
runtime-pruning settings, a scan's size) and returns a new plan; nodes are immutable, so a
rule never changes what another rule saw. :data:`RULES`, in order:

1. ``partition filter``        the predicate's sound projection on the partition keys
2. ``runtime candidates``      scans a map-join small side may narrow: step 3 only counts them
3. ``static partition pruning`` the metastore answers in one indexed SQL query
4. ``list bucketing``          the skewed-value directories each partition's scan must read
5. ``storage pushdown``        a storage handler's pushed + residual split (``TableScan.pushdown``)
6. ``runtime marks``           which small side prunes which scan, or why none does
7. ``runtime listing``         scans no runtime pruning narrows are listed now

At execution ``exec/`` collects the small sides' values and applies
:func:`hivepark.plan.runtime_pruning.apply_runtime_values`, then :func:`list_runtime`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hivepark.catalog.base import Catalog, PartitionLister
from hivepark.catalog.models import Partition, Table
from hivepark.errors import SemanticError
from hivepark.expr import and_all
from hivepark.expr.bind import bind, bind_literal
from hivepark.expr.visitors import conjuncts
from hivepark.plan.bucket_pruning import prune_buckets
from hivepark.plan.list_bucketing import prune_list_bucketing, table_layouts
from hivepark.plan.nodes import JoinKey, QueryPlan, TableScan
from hivepark.plan.partition_pruning import list_pruned, partition_filter, prune_partitions
from hivepark.plan.pushdown import push_filters
from hivepark.plan.runtime_pruning import RuntimeSettings, mark_runtime, runtime_candidates


def _unknown_size(scan: TableScan) -> int | None:
    return None


def _no_handler(table: Table) -> Any:
    return None


@dataclass(frozen=True)
class Planning:
    """What rules may read besides the plan: the metastore, the runtime-pruning settings,
    the bytes a scan reads (``exec/`` measures files; unknown by default), a table's storage
    handler (``handler_for``: ``exec/`` supplies the registry's lookup, as ``plan/`` may not
    import ``storage/``; None for a table of files) and the session's settings (``conf``:
    ``hive.optimize.ppd`` and ``hive.optimize.ppd.storage``)."""

    catalog: Catalog
    settings: RuntimeSettings = field(default_factory=RuntimeSettings)
    scan_size: Callable[[TableScan], int | None] = _unknown_size
    handler_for: Callable[[Table], Any] = _no_handler
    conf: Any = None


Rule = Callable[[QueryPlan, Planning], QueryPlan]


def _each(plan: QueryPlan, fn: Callable[[TableScan], TableScan]) -> QueryPlan:
    return plan.evolve(scans=tuple(fn(scan) for scan in plan.scans))


def _files(env: Planning, fn: Callable[[TableScan], TableScan]) -> Callable[[TableScan], TableScan]:
    """``fn`` for a scan of files; a handler table's scan (no partitions, no directories:
    its rows live in the handler's source) is returned unchanged."""
    return lambda s: s if env.handler_for(s.table) is not None else fn(s)


def partition_filter_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    plan = _each(plan, _files(env, partition_filter))
    if strict_check(env.conf, "hive.strict.checks.no.partition.filter"):
        for scan in plan.scans:
            keys = set(scan.table.partition_key_names())
            if keys and env.handler_for(scan.table) is None and not _names_partitions(scan, keys) \
                    and not _joined_on_partition(plan, scan, keys):
                raise SemanticError(
                    "Queries against partitioned tables without a partition filter are disabled for safety "
                    "reasons. If you know what you are doing, please set hive.strict.checks.no.partition.filter "
                    "to false and make sure that hive.mapred.mode is not set to 'strict' to proceed. Note that "
                    "you may get errors or incorrect results if you make a mistake while using some of the unsafe "
                    f"features. No partition predicate for Alias \"{scan.alias}\" Table \"{scan.table.name}\""
                    + (" (its TABLESAMPLE samples every partition's rows before the query's filters: sample "
                       f"in a subquery that filters first, FROM (SELECT * FROM {scan.table.name} WHERE ...) s "
                       "TABLESAMPLE (...))" if scan.sampled else ""),
                    code=10056)
    return plan


def _names_partitions(scan: TableScan, keys: set[str]) -> bool:
    """Whether strict mode takes ``scan`` as filtered on its partitions, as Hive's pruner
    does: the predicate's projection on the partition columns mentions one (``ds = 'x' OR a
    = 1`` projects to nothing: every partition is read, and Hive refuses it), or a conjunct
    reads only partition columns, though hivepark does not evaluate all of it (``upper(ds) =
    'X'``, ``NOT (hr <=> 1)``, ``upper(ds) = 'X' OR hr = 1``: Hive's pruner evaluates any such
    expression on each partition's values, and Spark prunes by it; or an inner join on a
    partition key, for which Hive adds ``ds IS NOT NULL``).

    >>> from hivepark.catalog.models import Column, Table
    >>> from hivepark.expr import And, EqualTo, Not, Opaque, Or
    >>> t = Table("default", "f", (Column("a", "int"),), (Column("ds", "string"),))
    >>> [_names_partitions(partition_filter(TableScan(t, "f", p)), {"ds"}) for p in (
    ...     Or(EqualTo("ds", "x"), EqualTo("a", 1)), And(EqualTo("ds", "x"), EqualTo("a", 1)),
    ...     And(Opaque("f.ds = d.ds", frozenset({"ds"})), EqualTo("a", 1)),
    ...     Not(Opaque("ds <=> 'x'", frozenset({"ds"}))), Or(Opaque("upper(ds) = 'X'", frozenset({"ds"})),
    ...     Opaque("a + 1 = 2", frozenset({"a"}))))]
    [False, True, True, True, False]
    """
    if scan.partition_filter.columns() & keys:
        return True
    return any(c.columns() and c.columns() <= keys for c in conjuncts(scan.predicate))


def _joined_on_partition(plan: QueryPlan, scan: TableScan, keys: set[str]) -> bool:
    """Whether ``scan`` is read through a subquery, a CTE or a view joined on one of its partition
    keys where that join's values may prune it: Hive's plan adds ``ds IS NOT NULL`` to such a join's
    key and pushes it down to the table, as for a table joined directly (whose join condition is in
    its predicate, :func:`_names_partitions`)."""
    return any(scope == scan.scope and k.eligible and k.small_scope is not None and k.big_col in keys
               and k.big.lower() == scan.alias.lower() for scope, k in plan.joins)


def strict_check(conf: Any, key: str) -> bool:
    """Hive's StrictChecks: a check is on when ``hive.mapred.mode`` is strict or its own
    ``hive.strict.checks.*`` setting is true."""
    if conf is None:
        return False
    mode = (conf.get("hive.mapred.mode") or "").strip().lower()
    return mode == "strict" or (conf.get(key) or "").strip().lower() == "true"


def _handler_aliases(plan: QueryPlan, env: Planning, narrowable: bool = False) -> set[tuple[int, str]]:
    """The scans of handler tables (with ``narrowable``: only those whose handler takes no
    runtime filters)."""
    out = set()
    for s in plan.scans:
        handler = env.handler_for(s.table)
        if s.pushdown is None and handler is None:
            continue
        if narrowable and getattr(handler, "accepts_runtime_filters", False):
            continue
        out.add((s.scope, s.alias.lower()))
    return out


def _without_handler_joins(plan: QueryPlan, env: Planning,
                           rule: Callable[[QueryPlan], QueryPlan]) -> QueryPlan:
    """``rule`` applied as if the joins touching a handler table were not there, but for a
    handler table that takes runtime filters as the big side (Iceberg: the small side's values
    choose its files): a handler table's values are never collected as a small side."""
    handled = _handler_aliases(plan, env)
    if not handled:
        return rule(plan)
    fixed = _handler_aliases(plan, env, narrowable=True)
    joins = tuple((scope, k) for scope, k in plan.joins
                  if (scope, k.big.lower()) not in fixed
                  and (scope if k.small_scope is None else k.small_scope, k.small.lower()) not in handled)
    return rule(plan.evolve(joins=joins)).evolve(joins=plan.joins)


def runtime_candidates_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    return _without_handler_joins(plan, env, lambda p: runtime_candidates(p, env.settings))


def static_pruning_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    return _each(plan, _files(env, lambda s: prune_partitions(s, env.catalog, defer=s.runtime_candidate)))


def list_bucketing_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    return _each(plan, _files(env, prune_list_bucketing))


def bucket_pruning_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    return _each(plan, prune_buckets)


def storage_pushdown(plan: QueryPlan, env: Planning) -> QueryPlan:
    """The storage-handler slot: for a table with a storage handler, the handler's decision
    (the predicate it takes and the residual Spark applies) is stored on the scan as
    ``TableScan.pushdown``. Tables without a handler are returned unchanged.

    The predicate offered is the scan's whole predicate, its literals bound to the column
    types (an atom that cannot be bound soundly is ``Opaque``, so never pushed)."""
    return _each(plan, lambda s: _push_one(s, env))


def _push_one(scan: TableScan, env: Planning) -> TableScan:
    handler = env.handler_for(scan.table)
    if handler is None:
        return scan
    types = {c.name: c.type for c in scan.table.columns}
    decision = push_filters(handler, scan.table, bind(scan.predicate, types), env.conf)
    applied = decision.applied_by_source([bind(p, types) for p in scan.filter_parts])
    return scan.evolve(pushdown=decision, source_applied=applied)


def runtime_marks_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    return _without_handler_joins(plan, env, lambda p: mark_runtime(p, env.settings, env.scan_size))


def runtime_listing_rule(plan: QueryPlan, env: Planning) -> QueryPlan:
    """Lists (and prunes the directories of) every deferred scan but those a runtime
    source narrows on a partition key; a scan another scan's runtime pruning reads as its
    small side is listed too (its partitions are needed before execution narrows them)."""
    smalls = {src.small for scan in plan.scans for src in scan.runtime}
    return plan.evolve(scans=tuple(
        scan if i not in smalls and any(src.big_is_partition_key for src in scan.runtime)
        or scan.pushdown is not None
        else prune_list_bucketing(list_pruned(scan, env.catalog))
        for i, scan in enumerate(plan.scans)))


RULES: tuple[tuple[str, Rule], ...] = (
    ("partition filter", partition_filter_rule),
    ("runtime candidates", runtime_candidates_rule),
    ("static partition pruning", static_pruning_rule),
    ("list bucketing", list_bucketing_rule),
    ("bucket pruning", bucket_pruning_rule),
    ("storage pushdown", storage_pushdown),
    ("runtime marks", runtime_marks_rule),
    ("runtime listing", runtime_listing_rule),
)


def optimize(plan: QueryPlan, env: Planning,
             rules: Sequence[tuple[str, Rule]] = RULES) -> QueryPlan:
    """``plan`` after each rule, in order."""
    for _, rule in rules:
        plan = rule(plan, env)
    return plan


def plan_query(scans: Sequence[TableScan], joins: Sequence[tuple[int, JoinKey]],
               env: Planning) -> QueryPlan:
    """A query's plan from its scans (with their scopes and hints) and join keys."""
    return optimize(QueryPlan(tuple(scans), tuple(joins)), env)


def plan_scans(scans: Sequence[TableScan], catalog: Catalog,
               defer: Collection[int] = ()) -> QueryPlan:
    """Scans with no joins between them: partition filter, static pruning, list bucketing.
    Scans in ``defer`` (indexes) are only counted: see :func:`list_runtime`."""
    plan = QueryPlan(tuple(s.evolve(runtime_candidate=True) if i in defer else s
                           for i, s in enumerate(scans)))
    rules = [r for r in RULES if r[0] in ("partition filter", "static partition pruning",
                                          "list bucketing", "storage pushdown")]
    return optimize(plan, Planning(catalog), rules)


def list_runtime(plan: QueryPlan, catalog: PartitionLister) -> QueryPlan:
    """After :func:`~hivepark.plan.runtime_pruning.apply_runtime_values`: each scan with
    runtime sources gets its partitions, listed once with the static and runtime filters
    together (then the exact key tuples), and its list-bucketing directories, chosen with
    the runtime value sets too."""
    return _each(plan, lambda s: _list_one(s, catalog) if s.runtime else s)


def _list_one(scan: TableScan, catalog: PartitionLister) -> TableScan:
    if scan.pushdown is not None:  # a handler table: its runtime filters go to the handler
        return scan
    if scan.runtime_filter is not None:
        scan = list_pruned(scan, catalog, scan.runtime_filter, _keep(scan))
    else:
        scan = list_pruned(scan, catalog)
    if scan.runtime_values and table_layouts(scan):
        scan = scan.evolve(predicate=and_all(scan.predicate, *scan.runtime_values))
    return prune_list_bucketing(scan)


def _keep(scan: TableScan) -> Callable[[Partition], bool] | None:
    if not scan.runtime_tuples:
        return None
    keys = scan.table.partition_key_names()
    types = scan.table.partition_types()

    def keep(p: Partition) -> bool:
        return all(_tuple_of(p, cols, keys, types) in want for cols, want in scan.runtime_tuples)

    return keep


def _tuple_of(p: Partition, cols: Sequence[str], keys: Sequence[str],
              types: Mapping[str, str]) -> tuple[Any, ...]:
    raw = [p.values[keys.index(c)] for c in cols]
    return tuple(bind_literal(v, types[c]) if v is not None else None for v, c in zip(raw, cols))
