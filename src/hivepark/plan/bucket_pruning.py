"""Bucket pruning: the Hive bucket files a scan of a bucketed table must read.

Hive (bucketing_version 2) puts each row of a table ``CLUSTERED BY (c, ...) INTO n BUCKETS``
in the file of bucket ``hive_bucket(c, ...)`` (:mod:`hivepark.catalog.buckets`). When the scan's
predicate fixes every bucket column to a few values (``c = v``, ``c IN (...)`` conjuncts of a
value of the column's own type), only those values' buckets can hold a matching row, so the
other files are left unread; so too for a TABLESAMPLE (BUCKET x OUT OF y) on the bucket columns
when y and the bucket count divide one another. Anything else (another shape, a value of another type, a type
the hash is not known for here, a table without Hive's version 2) reads every file."""

from __future__ import annotations

from itertools import product

from hivepark.catalog.buckets import HASHED_TYPES, Bucketing, hive_bucket, prunes_buckets, table_buckets
from hivepark.expr import EqualTo, Expr, In, Or
from hivepark.expr.visitors import conjuncts
from hivepark.plan.nodes import TableScan
from hivepark.types import HiveType

MAX_COMBINATIONS = 10_000  # value tuples hashed at most; more read every bucket


def prune_buckets(scan: TableScan) -> TableScan:
    """``scan`` with ``buckets`` set to (the buckets to read, the table's count) when its
    predicate decides them, else unchanged.

    >>> from hivepark.catalog.buckets import Bucketing
    >>> from hivepark.catalog.models import Column, Table
    >>> props = {**Bucketing(("k",), (), 4).properties(), "bucketing_version": "2"}
    >>> t = Table("db", "t", (Column("k", "int"),), properties=props)
    >>> prune_buckets(TableScan(t, "t", EqualTo("k", 3))).buckets
    (frozenset({2}), 4)
    >>> prune_buckets(TableScan(t, "t", EqualTo("k", "3"))).buckets is None  # a string: Spark casts it
    True
    """
    b = prunes_buckets(scan.table)
    if b is None:
        return scan
    chosen = _by_predicate(scan, b)
    sampled = scan.sample.buckets_read(b) if scan.sample is not None else None
    if sampled is not None:
        chosen = sampled if chosen is None else chosen & sampled
    return scan if chosen is None else scan.evolve(buckets=(chosen, b.count))


def _by_predicate(scan: TableScan, b: Bucketing) -> frozenset[int] | None:
    """The buckets the scan's predicate leaves, None when it does not decide them."""
    allowed: dict[str, set[object]] = {}
    for atom in conjuncts(scan.predicate):
        fixed = _fixed(atom)
        if fixed is None:
            continue
        term, values = fixed
        if term in b.columns:
            allowed[term] = allowed[term] & values if term in allowed else values
    if set(allowed) != set(b.columns):
        return None
    sizes = 1
    for c in b.columns:
        sizes *= max(len(allowed[c]), 1)
    if sizes > MAX_COMBINATIONS:
        return None
    types = {c.name: HiveType.parse(c.type) for c in scan.table.columns}
    chosen: set[int] = set()
    for combo in product(*(sorted(allowed[c], key=repr) for c in b.columns)):
        k = hive_bucket(combo, [types[c] for c in b.columns], b.count)
        if k is None:
            return None
        chosen.add(k)
    return frozenset(chosen)


def _fixed(atom: Expr) -> tuple[str, set[object]] | None:
    """``(column, values)`` when ``atom`` holds only where the column is one of the values:
    ``c = v``, ``c IN (...)``, or an OR of them on one column (``c = 1 OR c = 2``).

    >>> from hivepark.expr import Or
    >>> _fixed(Or(EqualTo("k", 1), In("k", (2, 3)))) == ("k", {1, 2, 3})
    True
    >>> _fixed(Or(EqualTo("k", 1), EqualTo("j", 2))) is None
    True
    """
    if isinstance(atom, EqualTo) and isinstance(atom.term, str):
        return atom.term, {atom.value}
    if isinstance(atom, In):
        return atom.term, set(atom.values)
    if isinstance(atom, Or):
        left, right = _fixed(atom.left), _fixed(atom.right)
        if left is not None and right is not None and left[0] == right[0]:
            return left[0], left[1] | right[1]
    return None


def every_bucket_read(scan: TableScan) -> str | None:
    """Why a scan of a bucketed table reads every bucket's files (EXPLAIN says it, so that
    pruning never silently fails to happen), or None: the scan reads only some, or the table
    is not bucketed.

    >>> from hivepark.catalog.models import Column, Table
    >>> props = {**Bucketing(("k",), (), 4).properties(), "bucketing_version": "2"}
    >>> t = Table("db", "t", (Column("k", "int"),), properties=props)
    >>> every_bucket_read(TableScan(t, "t"))
    'the filter does not fix k to values of its type (k = v, k IN (...))'
    >>> every_bucket_read(TableScan(t, "t", buckets=(frozenset({1}), 4))) is None
    True
    """
    b = table_buckets(scan.table)
    if b is None or scan.buckets is not None:
        return None
    version = scan.table.properties.get("bucketing_version")
    if prunes_buckets(scan.table) is None:
        return (f"bucketing_version={version}: Hive 1 and 2's hash, which hivepark does not compute" if version else
                "no bucketing_version=2 in TBLPROPERTIES (Hive 3 records it; without it the files may be Hive 1 "
                "or 2's hash)")
    types = {c.name: HiveType.parse(c.type).base for c in scan.table.columns}
    other = [f"{c} {types[c]}" for c in b.columns if types[c] not in HASHED_TYPES]
    if other:
        return f"hivepark does not take the bucket of {', '.join(other)} values from a filter"
    names = " and ".join(b.columns)
    forms = ", ".join(f"{c} = v, {c} IN (...)" for c in b.columns)
    return f"the filter does not fix {names} to values of {'its' if len(b.columns) == 1 else 'their'} type ({forms})"

