"""EXPLAIN rendering: deterministic text, one block per table scan."""

from __future__ import annotations

from hivepark import layout
from hivepark.catalog.buckets import table_buckets
from hivepark.expr import AlwaysTrue, Opaque
from hivepark.expr.bind import bind
from hivepark.expr.visitors import conjuncts, project, render_literal, to_filter_string
from hivepark.plan.bucket_pruning import every_bucket_read
from hivepark.plan.nodes import (
    Fact,
    FilterShape,
    HandlerScan,
    JoinReason,
    KeyPair,
    QueryPlan,
    RowFilter,
    RowFilterSkipped,
    RuntimeApplied,
    RuntimeSkipped,
    SkipReason,
    TableScan,
)


def render_scan(scan: TableScan, max_dirs: int = 5, extended: bool = False,
                analyzed: bool = False) -> list[str]:
    """The lines describing one scan.

    >>> from hivepark.catalog.models import Column, Table
    >>> t = Table("default", "t", (Column("a", "int"),), location="/w/t")
    >>> render_scan(TableScan(t, "t"))
    ['TableScan default.t', '  partitioned: false', '  directories: /w/t']
    """
    t = scan.table
    head = f"TableScan {t.qualified_name}" + (f" AS {scan.alias}" if scan.alias != t.name else "")
    lines = [head]
    if scan.sampled:  # Spark's TABLESAMPLE: no filter of the query narrows what it samples
        lines.append("  sampled by Spark before the query's filters (TABLESAMPLE): nothing pruned or pushed")
    if scan.pushdown is not None:
        return lines + handler_lines(scan) + _runtime_lines(scan, analyzed, handler=True)
    if not t.is_partitioned:
        lines.append("  partitioned: false")
        choice = scan.lb_choice(())
        if choice is None:  # the runtime lines too: a big side's reader filter, a broadcast
            return lines + [f"  directories: {t.location}"] + _bucket_lines(scan) + _runtime_lines(scan, analyzed)
        lines.append(f"  list bucketing: directories={len(choice.chosen)}/{choice.total}")
        return lines + [_dir_line([layout.resolve_location(t.location, loc)
                                   for loc in choice.chosen], max_dirs)] + _runtime_lines(scan, analyzed)
    parts = scan.partitions or ()
    if scan.deferred:
        lines.append(f"  partitions={scan.static_partitions}/{scan.total_partitions} after static "
                     "pruning; runtime pruning chooses at execution")
        if not isinstance(scan.partition_filter, AlwaysTrue):
            lines.append(f"  partition filter: {to_filter_string(scan.partition_filter)}")
        lines.append("  directories: chosen at execution (EXPLAIN ANALYZE shows them)")
        return lines + _runtime_lines(scan, analyzed)
    if scan.static_partitions is not None:
        lines.append(f"  partitions={len(parts)}/{scan.total_partitions} (static pruning: "
                     f"{scan.static_partitions}/{scan.total_partitions}, then runtime pruning)")
    else:
        lines.append(f"  partitions={len(parts)}/{scan.total_partitions}")
    left = spark_partition_filters(scan)
    if not isinstance(scan.partition_filter, AlwaysTrue):
        lines.append(f"  partition filter: {to_filter_string(scan.partition_filter)}")
    elif scan.static_partitions is None:
        lines.append("  partition filter: none (all partitions read)" if not left else
                     "  partition filter: none that hivepark evaluates (all partitions listed)")
    if left:
        lines.append(f"  left to Spark on the partition columns: {' and '.join(left)} (Spark applies it as it "
                     "reads, and can skip the partitions it rules out: EXPLAIN EXTENDED shows its plan)")
    if scan.list_bucketing:
        dirs: list[str] = []
        chosen = total = 0
        for p in parts:
            choice = scan.lb_choice(p.values)
            if choice is None:
                dirs.append(p.location)
                chosen, total = chosen + 1, total + 1
                continue
            dirs += [layout.resolve_location(p.location, loc) for loc in choice.chosen]
            chosen, total = chosen + len(choice.chosen), total + choice.total
        lines.append(f"  list bucketing: directories={chosen}/{total}")
        lines.append(_dir_line(dirs, max_dirs))
    else:
        lines.append(_dir_line([p.location for p in parts], max_dirs))
    lines += _bucket_lines(scan)
    if extended and not isinstance(scan.predicate, AlwaysTrue):
        lines.append(f"  scan predicate: {to_filter_string(scan.predicate)}")
    return lines + _runtime_lines(scan, analyzed)


def spark_partition_filters(scan: TableScan) -> list[str]:
    """The conjuncts of the scan's predicate on its partition columns alone that hivepark's
    pruning does not evaluate (a function of them, ``upper(ds) = 'X'``, ``ds <=> NULL``, an IN
    list holding NULL), in the filter-string form: Spark applies them to the partitions'
    values as it reads, so EXPLAIN names them rather than saying every partition is read.

    >>> from hivepark.catalog.models import Column, Table
    >>> from hivepark.expr import And, EqualTo, Opaque
    >>> t = Table("default", "t", (Column("a", "int"),), (Column("ds", "string"),))
    >>> other = And(EqualTo("ds", "x"), Opaque("a > f(ds)", frozenset({"a", "ds"})))
    >>> parts = (Opaque("upper(ds) = 'X'", frozenset({"ds"})), other)
    >>> spark_partition_filters(TableScan(t, "t", And(*parts), filter_parts=parts))
    ["(upper(ds) = 'X')"]
    """
    keys = scan.table.partition_key_names()
    if not keys or not scan.filter_parts:
        return []
    types = scan.table.partition_types()
    out = []
    own = [c for part in scan.filter_parts for c in conjuncts(part)]  # a join's condition reads another table
    for c in own:
        cols = c.columns()
        if cols and cols <= set(keys) and isinstance(bind(project(c, keys), types), (AlwaysTrue, Opaque)):
            out.append(to_filter_string(c))
    return out


def _bucket_lines(scan: TableScan) -> list[str]:
    """A bucketed table's files read: those of the buckets chosen, or every one and why."""
    if scan.buckets is not None:
        return [f"  buckets={len(scan.buckets[0])}/{scan.buckets[1]} (Hive bucket files read)"]
    why = every_bucket_read(scan)
    b = table_buckets(scan.table)
    return [] if why is None or b is None else [f"  buckets={b.count}/{b.count} (every file read: {why})"]


def handler_lines(scan: TableScan) -> list[str]:
    """A storage handler scan: its handler, the whole filter, the pushed part (Hive's filter
    string form), the residual Spark applies (no line when there is none), why, and the
    handler's own form of what it asks its source (with the rows it returned, once known).

    >>> from hivepark.catalog.models import Column, Table
    >>> from hivepark.expr.nodes import GreaterThan, Opaque, And
    >>> from hivepark.plan.pushdown import PushdownDecision
    >>> t = Table("default", "o", (Column("a", "int"),))
    >>> d = PushdownDecision(And(GreaterThan("a", 1), Opaque("upper(s) = 'X'")), GreaterThan("a", 1),
    ...                      Opaque("upper(s) = 'X'"), "decomposed by the handler")
    >>> for line in handler_lines(TableScan(t, "o", pushdown=d)): print(line)
      filter: ((a > 1) and (upper(s) = 'X'))
      pushed: (a > 1)
      residual: (upper(s) = 'X')
      pushdown: decomposed by the handler
    """
    d = scan.pushdown
    facts = [f for f in scan.facts if isinstance(f, HandlerScan)]
    lines = [f"  storage handler: {f.handler}" for f in facts[:1]]
    lines.append(f"  filter: {to_filter_string(d.full) if d.full is not None else 'none'}")
    lines.append(f"  pushed: {to_filter_string(d.pushed) if d.pushed is not None else 'none'}")
    if d.residual is not None:
        lines.append(f"  residual: {to_filter_string(d.residual)}")
    lines.append(f"  pushdown: {d.reason}")
    for f in facts:
        lines.append(f"  handler: {f.text}")
        if f.rows is not None:
            lines.append(f"  rows from the source: {f.rows:,}")
    return lines


def _dir_line(dirs: list[str], max_dirs: int) -> str:
    shown = dirs[:max_dirs]
    more = f" ... (+{len(dirs) - max_dirs} more)" if len(dirs) > max_dirs else ""
    return "  directories: " + (", ".join(shown) if shown else "(none)") + more


def _runtime_lines(scan: TableScan, analyzed: bool, handler: bool = False) -> list[str]:
    lines = []
    if not analyzed:
        for src in scan.runtime:
            how = ("values from the metastore" if src.from_metastore
                   else "values collected at execution")
            what = ("files (IN filter pushed to the storage handler)" if handler else
                    "partitions" if src.big_is_partition_key else "rows (IN filter pushed to the reader)")
            lines.append(f"  runtime pruning of {what}: {scan.alias}.{src.big_col} IN "
                         f"({src.small_alias}.{src.small_col} of {src.small_table}; {how})")
    lines += [f"  {fact_text(fact)}" for fact in scan.facts if not (handler and isinstance(fact, HandlerScan))]
    lines += [f"  {row_filter_text(rf)}" for rf in scan.row_filters]
    if scan.broadcast:
        lines.append("  map-join: broadcast to the other side")
    return lines


def _label(keys: tuple[KeyPair, ...]) -> str:
    return ", ".join(f"{k.small_alias}.{k.small_col} -> {k.big_alias}.{k.big_col}" for k in keys)


def _hint(small: str) -> str:
    return f"hint /*+ MAPJOIN({small}) */ to force"


def _skip_text(fact: RuntimeSkipped) -> str:
    small, big = fact.keys[0].small_alias, fact.keys[0].big_alias
    reason = fact.reason
    if reason is SkipReason.JOIN:
        return join_reason_text(fact.join, fact.detail)
    if reason is SkipReason.NO_AUTO_CONVERT:
        return f"{small} is not a map-join side (hive.auto.convert.join=false; {_hint(small)})"
    if reason is SkipReason.TOO_BIG:
        shown = "unknown" if fact.size is None else f"{fact.size:,} bytes"
        return (f"{small} is not a map-join side ({shown} > "
                f"hive.mapjoin.smalltable.filesize={fact.limit:,}; {_hint(small)})")
    if reason is SkipReason.SMALL_IS_LARGER:
        return f"{small} is larger than {big}, so {big} is the small side"
    if reason is SkipReason.KEY_TYPES_DIFFER:
        return "the key types differ"
    if reason is SkipReason.TOO_MANY_VALUES:
        return (f"{small} has more than {fact.limit:,} distinct key values "
                "(hive.mapjoin.partition.pruning.max.values)")
    if reason is SkipReason.NOT_COMPARABLE:
        return "a value cannot be compared with the key's type"
    raise ValueError(reason)


_JOIN_REASONS = {
    JoinReason.ANTI: "an ANTI JOIN keeps the rows that do not match",
    JoinReason.FULL_OUTER: "a FULL OUTER JOIN preserves both sides",
    JoinReason.LEFT_PRESERVED: "the big table is on the preserved side of a LEFT OUTER JOIN",
    JoinReason.RIGHT_PRESERVED: "the big table is on the preserved side of a RIGHT OUTER JOIN",
    JoinReason.NULL_SUPPLYING: "the join key is on the null-supplying side of an outer join",
    JoinReason.KEY_IN_FUNCTION: "the join key {} is inside a function",
    JoinReason.OTHER_SIDE_EXPRESSION: "the other side of the join ({}) is an expression, not a column",
    JoinReason.SAMPLED: "the big table is sampled (TABLESAMPLE) before the join",
    JoinReason.NOT_A_TABLE: ("the other side's key ({}) is not a table's column passed through a subquery, a CTE "
                             "or a view (an expression, an aggregate or a UNION): only a table's values are "
                             "collected"),
    JoinReason.THROUGH_DERIVED: ("the big table is read through a subquery, a CTE or a view ({}): a join's values "
                                 "prune only a table joined directly"),
    JoinReason.DERIVED_LIMIT: ("the big table is read through a subquery, a CTE or a view ({}) with a LIMIT, which "
                               "keeps rows whatever their key"),
    JoinReason.DERIVED_GROUPED: ("the big table is read through a subquery, a CTE or a view ({}) that aggregates "
                                 "rows of several key values (its GROUP BY does not name the key, or has ROLLUP, "
                                 "CUBE or GROUPING SETS)"),
    JoinReason.DERIVED_WINDOW: ("the big table is read through a subquery, a CTE or a view ({}) with a window not "
                                "partitioned by the key"),
    JoinReason.DERIVED_RANDOM: ("the big table is read through a subquery, a CTE or a view ({}) with random values "
                                "(rand(), a UDF), which pruning would draw differently"),
    JoinReason.DERIVED_SHARED: ("the big table is read through a CTE ({}) read more than once: its rows are read "
                                "elsewhere too"),
    JoinReason.DERIVED_SAMPLED: "the big table is read through a subquery, a CTE or a view ({}) sampled (TABLESAMPLE)",
    JoinReason.DERIVED_UNION: ("the big table is read through a UNION, EXCEPT or INTERSECT ({}) whose branches do "
                               "not all pass the key through as one type"),
    JoinReason.DERIVED_EXPRESSION: ("the key ({}) is an expression of the big table's column in a subquery, a CTE "
                                    "or a view, not the column itself"),
}


def join_reason_text(reason: JoinReason | None, detail: str = "") -> str:
    """Why a join key cannot prune, in words.

    >>> join_reason_text(JoinReason.KEY_IN_FUNCTION, "s.ds")
    'the join key s.ds is inside a function'
    """
    return _JOIN_REASONS[reason].format(detail) if reason is not None else ""


def fact_text(fact: Fact) -> str:
    """One planner fact as its EXPLAIN line (without indentation).

    >>> from hivepark.plan.nodes import ValueSource
    >>> fact_text(RuntimeApplied((KeyPair("d", "ds", "s", "ds"),), 4, "default.dates",
    ...                          ValueSource.PYARROW))
    'runtime pruning (d.ds -> s.ds): 4 distinct values from default.dates (pyarrow)'
    """
    if isinstance(fact, RuntimeSkipped):
        if fact.reason is SkipReason.OFF:
            return (f"runtime pruning off ({_label(fact.keys)}): "
                    "hive.optimize.mapjoin.partition.pruning=false")
        return f"runtime pruning not applied ({_label(fact.keys)}): {_skip_text(fact)}"
    if isinstance(fact, RuntimeApplied):
        return (f"runtime pruning ({_label(fact.keys)}): {fact.values:,} distinct values "
                f"from {fact.small_table} ({fact.source.value})")
    if isinstance(fact, HandlerScan):
        return f"handler: {fact.text}"
    if isinstance(fact, RowFilterSkipped):
        return (f"row filter not pushed ({_label((fact.key,))}): {fact.values:,} values span "
                f"{fact.span_percent:.0f}% of the small table's key range, so no row group "
                "would be skipped; the join keeps only matching rows")
    raise TypeError(f"not a plan fact: {fact!r}")


def row_filter_text(rf: RowFilter) -> str:
    """A runtime reader filter as its EXPLAIN line (without indentation).

    >>> row_filter_text(RowFilter.of("store", (1, 2, 3)))
    'row filter pushed to the reader: store IN (3 values)'
    """
    if rf.shape is FilterShape.RANGE:
        low, high = rf.bounds()
        shown = f">= {render_literal(low)}" if high is None else \
            f"BETWEEN {render_literal(low)} AND {render_literal(high)}"
        return (f"row filter pushed to the reader: {rf.column} {shown} "
                f"(range of {len(rf.values):,} values{', NaN included' if high is None else ''})")
    return f"row filter pushed to the reader: {rf.column} IN ({len(rf.values):,} values)"


def render(plan: QueryPlan, spark_plan: str | None = None, max_dirs: int = 5,
           extended: bool = False, analyzed: bool = False) -> str:
    """The whole EXPLAIN text: hivepark's scans, then Spark's physical plan if given."""
    lines = ["== hivepark plan =="]
    if not plan.scans:
        lines.append("(no warehouse tables read)")
    for scan in plan.scans:
        lines += render_scan(scan, max_dirs, extended, analyzed or spark_plan is not None)
    if spark_plan:
        lines += ["", "== Spark plan ==", spark_plan.rstrip()]
    return "\n".join(lines)
