"""Skew metadata kept in the existing models (no schema change).

Table level, in ``Table.properties`` (what ``SKEWED BY ... ON ... [STORED AS DIRECTORIES]``
declared; applies to partitions written from then on):

* ``hivepark.skew.columns``: JSON list of column names;
* ``hivepark.skew.values``: JSON list of lists of values, as strings in the column's
  canonical text (``'06'`` on an ``int`` column is ``'6'``);
* ``hivepark.skew.stored_as_dirs``: ``'true'`` for a list-bucketing table;
* ``hivepark.skew.auto.topk``: K > 0 makes every write choose each partition's K heaviest
  values itself (a user-visible table property).

Per partition, in ``Partition.parameters`` (for an unpartitioned table, in its properties),
``hivepark.skew.locations`` records how that partition was laid out: a JSON object with
``columns``, ``values`` (every skewed value at write time) and ``locations``: a list of
``[values or null for the default directory, directory]``; directories are relative to the
partition (``x=30``) unless absolute (``SET SKEWED LOCATION``). A skewed value without a
location had no rows. A partition is read with its own layout, so ALTERs change only
partitions written after them.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from hivepark import layout
from hivepark.catalog.models import Table
from hivepark.types import HiveType

SKEW_COLUMNS = "hivepark.skew.columns"
SKEW_VALUES = "hivepark.skew.values"
SKEW_STORED_AS_DIRS = "hivepark.skew.stored_as_dirs"
SKEW_LOCATIONS = "hivepark.skew.locations"
SKEW_AUTO_TOPK = "hivepark.skew.auto.topk"
RESERVED = (SKEW_COLUMNS, SKEW_VALUES, SKEW_STORED_AS_DIRS, SKEW_LOCATIONS)
"""Keys shown through DESCRIBE's Skewed lines rather than as parameters."""



@dataclass(frozen=True)
class SkewSpec:
    """A table's declared skew: columns, values (canonical text) and STORED AS DIRECTORIES."""

    columns: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    stored_as_dirs: bool = False

    def properties(self) -> dict[str, str | None]:
        """The table properties that store this spec (None removes a key)."""
        return {SKEW_COLUMNS: json.dumps(list(self.columns)),
                SKEW_VALUES: json.dumps([list(v) for v in self.values]),
                SKEW_STORED_AS_DIRS: "true" if self.stored_as_dirs else None}


def cleared_properties() -> dict[str, str | None]:
    """Table property changes for NOT SKEWED."""
    return {SKEW_COLUMNS: None, SKEW_VALUES: None, SKEW_STORED_AS_DIRS: None}


def table_skew(table: Table) -> SkewSpec | None:
    """The declared skew of ``table``, or None."""
    raw = table.properties.get(SKEW_COLUMNS)
    if not raw:
        return None
    values = json.loads(table.properties.get(SKEW_VALUES) or "[]")
    return SkewSpec(tuple(json.loads(raw)), tuple(tuple(v) for v in values),
                    table.properties.get(SKEW_STORED_AS_DIRS) == "true")


def auto_topk(table: Table) -> int:
    """``hivepark.skew.auto.topk`` of a list-bucketing table, 0 when unset or not LB."""
    spec = table_skew(table)
    raw = (table.properties.get(SKEW_AUTO_TOPK) or "0").strip()
    if spec is None or not spec.stored_as_dirs:
        return 0
    try:
        return max(0, int(raw))
    except ValueError:
        return 0


@dataclass(frozen=True)
class SkewLayout:
    """How one partition (or unpartitioned table) was laid out in directories.

    >>> lay = SkewLayout(("x",), (("30",), ("6",)), ((("30",), "x=30"), (None, "D")))
    >>> lay.default_location, lay.location_of(("6",)) is None
    ('D', True)
    """

    columns: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    locations: tuple[tuple[tuple[str, ...] | None, str], ...]

    @property
    def default_location(self) -> str | None:
        return next((loc for key, loc in self.locations if key is None), None)

    def location_of(self, values: tuple[str, ...]) -> str | None:
        return next((loc for key, loc in self.locations if key == tuple(values)), None)

    def to_json(self) -> str:
        return json.dumps({"columns": list(self.columns),
                           "values": [list(v) for v in self.values],
                           "locations": [[None if k is None else list(k), loc]
                                         for k, loc in self.locations]})

    def with_locations(self, changes: Mapping[tuple[str, ...] | None, str]) -> SkewLayout:
        """A copy whose locations for the keys in ``changes`` are replaced or added."""
        locs = dict(self.locations)
        locs.update(changes)
        values = self.values + tuple(k for k in changes if k is not None and k not in self.values)
        return SkewLayout(self.columns, values, tuple(locs.items()))


def parse_layout(raw: str | None) -> SkewLayout | None:
    """The layout a ``hivepark.skew.locations`` text records (None for none). Parsed once
    per distinct text: a scan reads the layout of every partition it plans, and a table's
    partitions mostly share one (directories are relative to the partition)."""
    return _parse_layout(raw) if raw else None


@functools.lru_cache(maxsize=4096)
def _parse_layout(raw: str) -> SkewLayout:
    d = json.loads(raw)
    return SkewLayout(tuple(d["columns"]), tuple(tuple(v) for v in d["values"]),
                      tuple((None if k is None else tuple(k), loc) for k, loc in d["locations"]))


def partition_layout(parameters: Mapping[str, str]) -> SkewLayout | None:
    """The layout a partition's parameters (or an unpartitioned table's properties) record."""
    return parse_layout(parameters.get(SKEW_LOCATIONS))


def canonical_value(text: str, hive_type: str) -> str:
    """A skewed value as its column's type writes it; raises ValueError when it is not one.

    Values are compared with their column's type exactly (no lower-casing, unlike Hive).

    >>> canonical_value("06", "int"), canonical_value("1.50", "decimal(5,2)")
    ('6', '1.50')
    >>> canonical_value("ABC", "string"), canonical_value("TRUE", "boolean")
    ('ABC', 'true')
    """
    t = HiveType.parse(hive_type)
    kind = t.kind
    s = text if t.family == "string" else text.strip()
    if kind == "int":
        return str(int(s))
    if kind in ("float32", "float64"):
        f = float(s)
        if not math.isfinite(f):
            raise ValueError(text)
        return repr(f)
    if kind == "decimal":
        try:
            return str(Decimal(s))
        except InvalidOperation:
            raise ValueError(text) from None
    if kind == "date":
        return datetime.date.fromisoformat(s).isoformat()
    if kind == "boolean":
        if s.lower() not in ("true", "false"):
            raise ValueError(text)
        return s.lower()
    if kind == "timestamp":
        return datetime.datetime.fromisoformat(s).isoformat(sep=" ")
    if t.family == "string":
        return text
    raise ValueError(f"a {hive_type} column cannot be skewed")


def skewable(hive_type: str) -> bool:
    """Whether a column of this type can be a skewed column (scalars only)."""
    return HiveType.parse(hive_type).is_scalar


def typed_value(text: str, hive_type: str) -> Any:
    """A canonical value as the Python value :func:`hivepark.expr.bind` compares with
    (:meth:`hivepark.types.HiveType.decode`).

    >>> typed_value("30", "int"), typed_value("2024-01-02", "date"), typed_value("a", "string")
    (30, '2024-01-02', 'a')
    """
    return HiveType.parse(hive_type).decode(text)


def lb_directories(columns: Sequence[str], values: Sequence[tuple[str, ...]]) -> list[str]:
    """Relative directory of each skewed value, in order."""
    return [layout.lb_dir_name(list(columns), list(v)) for v in values]
