"""Rule: list-bucketing directory pruning (Hive's ListBucketingPruner, made sound).

Each partition of a skewed table records its own layout (:class:`SkewLayout`): one
directory per skewed value that received rows, and a default directory for every other
row (including rows whose skewed columns are NULL). Given the scan's predicate, the rule
keeps the directories that can hold a matching row.

* A skewed value's directory holds exactly the rows with that value. It is read unless
  the predicate, projected on the skewed columns and bound to their types, is not true
  for that value (``project`` only weakens the predicate, so this is sound).
* The default directory holds rows whose value is not skewed. It is skipped only when
  the projected predicate implies that the skewed columns take values from a finite set of
  tuples, all of them skewed (equality, IN, AND and OR, as Hive's rule); anything else
  (a range, NOT, IS NULL, a predicate on only some of the skewed columns) keeps it.
* Files of a partition that lie in no recorded directory are always read (see exec/scan).

Sound: a directory is dropped only when no row in it can satisfy the predicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any

from hivepark.catalog.models import Table
from hivepark.catalog.skew import SKEW_LOCATIONS, SkewLayout, partition_layout, typed_value
from hivepark.expr import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    Expr,
    In,
    Or,
    bind,
    evaluate,
    project,
)
from hivepark.plan.nodes import TableScan

_MAX_CANDIDATES = 10_000


@dataclass(frozen=True)
class LBChoice:
    """The directories of one partition (``values``; ``()`` for an unpartitioned table) that
    a scan reads: ``chosen`` out of ``total`` recorded locations."""

    values: tuple[str | None, ...]
    chosen: tuple[str, ...]
    total: int


def choose_directories(lay: SkewLayout, predicate: Expr, types: Mapping[str, str]
                       ) -> tuple[str, ...]:
    """The recorded locations of ``lay`` that may hold a row satisfying ``predicate``.

    Args:
        lay: the partition's layout.
        predicate: the scan predicate, literals as written (any columns).
        types: Hive type of each skewed column.

    >>> lay = SkewLayout(("x",), (("6",), ("30",)),
    ...                  ((("6",), "x=6"), (("30",), "x=30"), (None, "DEFAULT")))
    >>> choose_directories(lay, EqualTo("x", 30), {"x": "int"})
    ('x=30',)
    >>> choose_directories(lay, EqualTo("x", 50), {"x": "int"})
    ('DEFAULT',)
    >>> choose_directories(lay, In("x", (6, 50)), {"x": "int"})
    ('x=6', 'DEFAULT')
    """
    cols = lay.columns
    col_types = {c: types[c] for c in cols}
    pred = project(bind(project(predicate, cols), col_types), cols)
    if isinstance(pred, AlwaysTrue):
        return tuple(loc for _, loc in lay.locations)
    skewed = [tuple(typed_value(v, col_types[c]) for c, v in zip(cols, vals))
              for vals in lay.values]
    chosen = []
    for key, loc in lay.locations:
        if key is None:
            keep = _default_may_match(pred, cols, skewed)
        else:
            keep = _value_may_match(pred, dict(zip(cols, (typed_value(v, col_types[c])
                                                           for c, v in zip(cols, key)))))
        if keep:
            chosen.append(loc)
    return tuple(chosen)


def _value_may_match(pred: Expr, row: dict[str, Any]) -> bool:
    try:
        return evaluate(pred, row) is True
    except (TypeError, KeyError, ValueError):
        return True


def _default_may_match(pred: Expr, cols: tuple[str, ...], skewed: list[tuple]) -> bool:
    cands = _candidates(pred)
    if cands is None:
        return True
    for cand in cands:
        if set(cand) != set(cols):
            return True  # a column left free can be NULL, which is never skewed
        tup = tuple(cand[c] for c in cols)
        if not any(_same(tup, s) for s in skewed):
            return True
    return False


def _same(a: tuple, b: tuple) -> bool:
    return all(x == y for x, y in zip(a, b))


def _candidates(pred: Expr) -> list[dict[str, Any]] | None:
    """Partial assignments covering every row on which ``pred`` is true, or None when the
    predicate does not restrict the columns to finitely many values."""
    if isinstance(pred, AlwaysFalse):
        return []
    if isinstance(pred, EqualTo):
        return [{pred.term: pred.value}] if pred.value is not None else []
    if isinstance(pred, In):
        return [{pred.term: v} for v in dict.fromkeys(pred.values) if v is not None]
    if isinstance(pred, Or):
        left, right = _candidates(pred.left), _candidates(pred.right)
        if left is None or right is None or len(left) + len(right) > _MAX_CANDIDATES:
            return None
        return left + right
    if isinstance(pred, And):
        left, right = _candidates(pred.left), _candidates(pred.right)
        if left is None or right is None:
            return left if right is None else right
        if len(left) * len(right) > _MAX_CANDIDATES:
            return left if len(left) <= len(right) else right
        out = []
        for a, b in product(left, right):
            if all(a[k] == b[k] for k in a.keys() & b.keys()):
                out.append({**a, **b})
        return out
    return None


def table_layouts(scan: TableScan) -> list[tuple[tuple[str | None, ...], SkewLayout]]:
    """(partition values, layout) of each chosen partition that has one."""
    t = scan.table
    if not t.is_partitioned:
        lay = partition_layout(t.properties)
        return [((), lay)] if lay is not None else []
    out = []
    for p in scan.partitions or ():
        if SKEW_LOCATIONS in p.parameters:
            lay = partition_layout(p.parameters)
            if lay is not None:
                out.append((p.values, lay))
    return out


def prune_list_bucketing(scan: TableScan) -> TableScan:
    """Sets ``list_bucketing``: for each partition with a layout, the directories to read."""
    layouts = table_layouts(scan)
    if not layouts:
        return scan
    types = _types(scan.table)
    choices = []
    # one choice per distinct layout: partitions written alike share one (their directories
    # are relative), and the predicate is the scan's
    memo: dict[SkewLayout, tuple[str, ...]] = {}
    for values, lay in layouts:
        chosen = memo.get(lay)
        if chosen is None:
            if any(c not in types for c in lay.columns):
                chosen = tuple(loc for _, loc in lay.locations)
            else:
                chosen = choose_directories(lay, scan.predicate, types)
            memo[lay] = chosen
        choices.append(LBChoice(values, chosen, len(lay.locations)))
    return scan.evolve(list_bucketing=tuple(choices))


def _types(table: Table) -> dict[str, str]:
    return {c.name: c.type for c in table.columns}
