"""EXPLAIN rendering: deterministic text, one block per table scan."""

from __future__ import annotations

from hivepark import layout
from hivepark.expr import AlwaysTrue
from hivepark.expr.visitors import render_literal, to_filter_string
from hivepark.plan.nodes import IN_LIST_MAX, QueryPlan, TableScan


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
    if not t.is_partitioned:
        lines.append("  partitioned: false")
        choice = scan.lb_choice(())
        if choice is None:
            return lines + [f"  directories: {t.location}"]
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
    if not isinstance(scan.partition_filter, AlwaysTrue):
        lines.append(f"  partition filter: {to_filter_string(scan.partition_filter)}")
    elif scan.static_partitions is None:
        lines.append("  partition filter: none (all partitions read)")
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
    if extended and not isinstance(scan.predicate, AlwaysTrue):
        lines.append(f"  scan predicate: {to_filter_string(scan.predicate)}")
    return lines + _runtime_lines(scan, analyzed)


def _dir_line(dirs: list[str], max_dirs: int) -> str:
    shown = dirs[:max_dirs]
    more = f" ... (+{len(dirs) - max_dirs} more)" if len(dirs) > max_dirs else ""
    return "  directories: " + (", ".join(shown) if shown else "(none)") + more


def _runtime_lines(scan: TableScan, analyzed: bool) -> list[str]:
    lines = []
    if not analyzed:
        for src in scan.runtime:
            how = ("values from the metastore" if src.from_metastore
                   else "values collected at execution")
            what = "partitions" if src.big_is_partition_key else "rows (IN filter pushed to the reader)"
            lines.append(f"  runtime pruning of {what}: {scan.alias}.{src.big_col} IN "
                         f"({src.small_alias}.{src.small_col} of {src.small_table}; {how})")
    lines += [f"  {note}" for note in scan.notes]
    if scan.row_filters:
        for col, vals in scan.row_filters:
            if len(vals) > IN_LIST_MAX:
                lines.append(f"  row filter pushed to the reader: {col} BETWEEN "
                             f"{render_literal(min(vals))} AND {render_literal(max(vals))} "
                             f"(range of {len(vals):,} values)")
            else:
                lines.append(f"  row filter pushed to the reader: {col} IN ({len(vals):,} "
                             "values)")
    if scan.broadcast:
        lines.append("  map-join: broadcast to the other side")
    return lines


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
