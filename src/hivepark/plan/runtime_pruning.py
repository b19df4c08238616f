"""Rule: map-join partition pruning (HIVE-5119), marked at plan time, resolved at execution.

For each equi-join ``big.k = small.c`` where ``small`` is a map-join side (hinted with
MAPJOIN/BROADCAST, or under ``hive.mapjoin.smalltable.filesize`` with
``hive.auto.convert.join``) and the join lets ``small``'s values restrict ``big`` (see
:mod:`hivepark.sql.joins`), the big scan gets a :class:`RuntimeSource`. At execution the
small side's distinct key values are collected and the metastore is asked which partitions
of ``big`` hold them (one IN query per key), intersected with static pruning.

Sound: a partition is dropped only if its key value equals none of the small side's values,
so no row of it can satisfy the equality (NULL equals nothing: the default partition goes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hivepark.plan.nodes import JoinKey, RuntimeSource, TableScan


@dataclass(frozen=True)
class RuntimeSettings:
    enabled: bool = True
    auto_convert: bool = True
    small_table_bytes: int = 25_000_000


def runtime_candidates(scans: Sequence[TableScan], scopes: Sequence[int],
                       joins: Sequence[tuple[int, JoinKey]]) -> set[int]:
    """Indexes of the scans runtime pruning may narrow: the big side of an eligible join
    on one of their partition keys. Static pruning only counts these (listed at execution).

    >>> from hivepark.catalog.models import Column, Table
    >>> fact = Table("default", "f", (Column("v", "int"),), (Column("ds", "string"),))
    >>> dim = Table("default", "d", (Column("ds", "string"),))
    >>> runtime_candidates([TableScan(fact, "f"), TableScan(dim, "d")], [0, 0],
    ...                    [(0, JoinKey("f", "ds", "d", "ds")), (0, JoinKey("d", "ds", "f", "ds"))])
    {0}
    """
    return {i for i, scan in enumerate(scans)
            if any(scope == scopes[i] and k.eligible and k.big.lower() == scan.alias.lower()
                   and k.big_col in scan.table.partition_key_names() for scope, k in joins)}


def mark_runtime_sources(scans: Sequence[TableScan], scopes: Sequence[int],
                         joins: Sequence[tuple[int, JoinKey]], hinted: Sequence[bool],
                         sizes: Sequence[int | None], settings: RuntimeSettings
                         ) -> list[TableScan]:
    """Returns the scans with their runtime sources and the reasons pruning does not apply.

    >>> from hivepark.catalog.models import Column, Table
    >>> fact = Table("default", "f", (Column("v", "int"),), (Column("ds", "string"),))
    >>> dim = Table("default", "d", (Column("ds", "string"), Column("h", "boolean")))
    >>> out = mark_runtime_sources([TableScan(fact, "f"), TableScan(dim, "d")], [0, 0],
    ...     [(0, JoinKey("f", "ds", "d", "ds"))], [False, False], [None, 100], RuntimeSettings())
    >>> out[0].runtime[0].small_alias, out[1].broadcast
    ('d', True)
    """
    out = list(scans)
    index = {(scopes[i], s.alias.lower()): i for i, s in enumerate(scans)}
    for scope, key in joins:
        b, sm = index.get((scope, key.big.lower())), index.get((scope, key.small.lower()))
        if b is None or sm is None:
            continue
        big, small = out[b], out[sm]
        is_part = key.big_col in big.table.partition_key_names()
        label = f"{small.alias}.{key.small_col} -> {big.alias}.{key.big_col}"
        if not settings.enabled:
            if is_part:
                out[b] = _note(big, f"runtime pruning off ({label}): "
                                    "hive.optimize.mapjoin.partition.pruning=false")
            continue
        if not key.eligible:
            if is_part:
                out[b] = _note(big, f"runtime pruning not applied ({label}): {key.reason}")
            continue
        why_not = _not_small(small, hinted[sm], sizes[sm], settings)
        if not why_not and not hinted[sm] and _bigger(sizes[sm], sizes[b]):
            why_not = f"{small.alias} is larger than {big.alias}, so {big.alias} is the small side"
        if why_not:
            if is_part:
                out[b] = _note(big, f"runtime pruning not applied ({label}): {why_not}")
            continue
        src = RuntimeSource(sm, small.alias, small.table.qualified_name, key.small_col,
                            key.big_col, is_part, _from_metastore(small, key.small_col))
        out[b] = big.evolve(runtime=big.runtime + (src,))
        if not hinted[sm]:
            out[sm] = out[sm].evolve(broadcast=True)
    return out


def _note(scan: TableScan, note: str) -> TableScan:
    return scan if note in scan.notes else scan.evolve(notes=scan.notes + (note,))


def _not_small(small: TableScan, hinted: bool, size: int | None,
               settings: RuntimeSettings) -> str:
    if hinted:
        return ""
    if not settings.auto_convert:
        return (f"{small.alias} is not a map-join side (hive.auto.convert.join=false; "
                f"hint /*+ MAPJOIN({small.alias}) */ to force)")
    if size is None or size > settings.small_table_bytes:
        shown = "unknown" if size is None else f"{size:,} bytes"
        return (f"{small.alias} is not a map-join side ({shown} > "
                f"hive.mapjoin.smalltable.filesize={settings.small_table_bytes:,}; hint "
                f"/*+ MAPJOIN({small.alias}) */ to force)")
    return ""


def _bigger(a: int | None, b: int | None) -> bool:
    return a is not None and b is not None and a > b


def _from_metastore(small: TableScan, col: str) -> bool:
    """The small key is a partition key and the small side's predicate reads only
    partition keys: its values are exactly its chosen partitions' values."""
    keys = set(small.table.partition_key_names())
    return col in keys and small.predicate.columns() <= keys
