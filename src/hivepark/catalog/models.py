"""Frozen metastore models: what the catalog stores and returns.

Partition values are kept as strings, as Hive keeps them; ``None`` is the default
partition (``__HIVE_DEFAULT_PARTITION__``), which reads back as NULL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, NamedTuple

from hivepark.types import HiveType
from hivepark.types import type_family as type_family  # re-exported: HiveType's family

MANAGED = "MANAGED_TABLE"
EXTERNAL = "EXTERNAL_TABLE"
VIEW = "VIRTUAL_VIEW"  # a view: a query kept in the metastore, no location and no files
# A view's query: as the user wrote it (SHOW CREATE TABLE, DESCRIBE) and as it is read
# (Hive's "expanded text": its tables named with their databases, its columns by name)
VIEW_ORIGINAL_TEXT = "hivepark.view.original.text"
VIEW_EXPANDED_TEXT = "hivepark.view.expanded.text"
# A table as a query's FOR SYSTEM_VERSION / FOR SYSTEM_TIME AS OF names it: transient
# properties of the Table a scan reads, never stored
AS_OF_VERSION = "hivepark.as-of.version"
AS_OF_TIME = "hivepark.as-of.timestamp"


def frozen_map(items: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(items or {}))


#: The one empty frozen map (a partition without parameters shares it)
EMPTY_MAP: Mapping[str, str] = frozen_map()


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    comment: str | None = None

    @property
    def hive_type(self) -> HiveType:
        """The column's type, parsed (:class:`hivepark.types.HiveType`)."""
        return HiveType.parse(self.type)


@dataclass(frozen=True)
class Database:
    name: str
    location: str
    comment: str | None = None
    properties: Mapping[str, str] = field(default_factory=frozen_map)


@dataclass(frozen=True)
class Table:
    """A table: data columns, partition keys, storage and the version used for commits."""

    db: str
    name: str
    columns: tuple[Column, ...]
    partition_keys: tuple[Column, ...] = ()
    location: str = ""
    format: str = "parquet"  # parquet | orc | textfile
    field_delim: str | None = None
    table_type: str = MANAGED
    properties: Mapping[str, str] = field(default_factory=frozen_map)
    version: int = 0
    create_time: int = 0
    #: this table's identity in the metastore, new when a table of the same name is created
    #: again; with ``version``, the key of anything kept of the table (see the catalog schema)
    uid: str = field(default="", compare=False)

    @property
    def qualified_name(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_keys)

    @property
    def is_external(self) -> bool:
        return self.table_type == EXTERNAL

    @property
    def is_view(self) -> bool:
        return self.table_type == VIEW

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return self.columns + self.partition_keys

    def partition_key_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.partition_keys)

    def partition_types(self) -> dict[str, str]:
        return {c.name: c.type for c in self.partition_keys}

    def column(self, name: str) -> Column | None:
        lname = name.lower()
        for c in self.all_columns:
            if c.name == lname:
                return c
        return None

    def evolve(self, **changes: Any) -> Table:
        return replace(self, **changes)


class Partition(NamedTuple):
    """One partition: its values in partition-key order, where it lives, and its stats.

    ``files`` lists the data files (relative to ``location``) a commit wrote, so that a read
    needs no listing; ``None`` means "list the directory" (partitions added by
    ``ALTER TABLE ADD PARTITION`` or found by ``MSCK REPAIR TABLE``).

    Immutable like the other models, but a named tuple rather than a frozen dataclass: a
    lookup may return tens of thousands of partitions, and a tuple is made in one step
    (about half the cost of a dataclass with its ``__dict__``).
    """

    values: tuple[str | None, ...]
    location: str
    parameters: Mapping[str, str] = EMPTY_MAP
    files: tuple[str, ...] | None = None
    create_time: int = 0

    def spec(self, table: Table) -> dict[str, str | None]:
        return dict(zip(table.partition_key_names(), self.values))

    def evolve(self, **changes: Any) -> Partition:
        return self._replace(**changes)
