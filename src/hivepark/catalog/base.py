"""The Catalog interface. One implementation: :mod:`hivepark.catalog.sql` (SQLAlchemy).

Names are case-insensitive and stored lower-case. Every method either completes or
changes nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from hivepark.catalog.models import Database, Partition, Table
from hivepark.expr import Expr


class PartitionLister(Protocol):
    """What partition pruning needs of a catalog: its partitions that ``filter`` may keep,
    in partition-name order (a :class:`Catalog`, or a cache in front of one)."""

    def list_partitions(self, table: Table, filter: Expr | None = None) -> Sequence[Partition]: ...


class TableChange(NamedTuple):
    """One table's part of :meth:`Catalog.commit_tables`: the arguments of :meth:`Catalog.commit`."""

    table: Table
    expected_version: int
    put: Sequence[Partition] = ()
    drop: Sequence[tuple[str | None, ...]] = ()
    table_parameters: dict[str, str | None] | None = None


class Catalog(ABC):
    # databases -----------------------------------------------------------------------
    @abstractmethod
    def create_database(self, db: Database, if_not_exists: bool = False) -> None:
        """Raises AlreadyExistsError unless ``if_not_exists``."""

    @abstractmethod
    def get_database(self, name: str) -> Database:
        """Raises NoSuchDatabase."""

    @abstractmethod
    def list_databases(self) -> list[str]:
        """Sorted names."""

    @abstractmethod
    def alter_database(self, name: str, properties: dict[str, str], location: str | None = None) -> Database:
        """Merges ``properties`` into the database's (ALTER DATABASE SET DBPROPERTIES), and
        gives it ``location`` if not None (SET LOCATION). Raises NoSuchDatabase."""

    @abstractmethod
    def locations_overlapping(self, location: str) -> list[tuple[str, str, tuple[str | None, ...] | None, str]]:
        """The tables and partitions whose directory is ``location`` (normalized), lies below
        it or holds it: ``(database, table, partition values or None for the table itself,
        their location)``."""

    @abstractmethod
    def skewed_locations_overlapping(self, location: str
                                     ) -> list[tuple[str, str, tuple[str | None, ...] | None, str]]:
        """The list-bucketing directories given by SET SKEWED LOCATION (absolute ones, which may
        lie anywhere) that are ``location`` (normalized), lie below it or hold it: ``(database,
        table, partition values or None for an unpartitioned table, the skewed location)``."""

    @abstractmethod
    def drop_database(self, name: str, cascade: bool = False) -> list[Table]:
        """Drops the database (and with ``cascade`` its tables and their partitions).

        Returns the tables dropped, so the caller can delete managed data. Raises
        NoSuchDatabase, and SemanticError when not empty without ``cascade``.
        """

    # tables --------------------------------------------------------------------------
    @abstractmethod
    def create_table(self, table: Table, if_not_exists: bool = False, uid: str | None = None) -> Table:
        """Stores a new table (version 1) and returns it; ``uid``, given, is its uid (else a
        new one). Raises AlreadyExistsError."""

    @abstractmethod
    def get_table(self, db: str, name: str) -> Table:
        """Raises NoSuchTable (and NoSuchDatabase when the database is missing)."""

    @abstractmethod
    def list_tables(self, db: str, table_type: str | None = None) -> list[str]:
        """Sorted names (of that type only, given one: ``VIEW`` lists the views). Raises
        NoSuchDatabase."""

    @abstractmethod
    def table_versions(self, db: str) -> dict[str, tuple[str, int]]:
        """Each table of ``db`` by name: (its uid, its version), in one metastore query. The
        pair changes whenever the table's definition, partitions or files change (a dropped
        and re-created table has a new uid). Raises NoSuchDatabase."""

    @abstractmethod
    def drop_table(self, db: str, name: str, unchanged: tuple[str, int] | None = None) -> Table:
        """Removes the table and all its partitions; returns what was dropped. With
        ``unchanged`` (a uid and a version), only that table at that version: CommitConflict
        when it changed, NoSuchTable when it is gone."""

    @abstractmethod
    def alter_table(self, table: Table, expected_version: int) -> Table:
        """Replaces the table's definition (name, db, location, columns, properties...).

        The row is found by ``expected_version`` and the table's *current* identity
        (pass the old ``db``/``name`` in ``table`` is not required: renames use
        :meth:`rename_table`). Raises CommitConflict when the version moved.
        """

    @abstractmethod
    def rename_table(self, db: str, name: str, new_db: str, new_name: str,
                     new_location: str | None) -> Table:
        """Renames (and optionally relocates) a table; partitions under the old location are
        relocated by prefix. Raises NoSuchTable / AlreadyExistsError."""

    # partitions ----------------------------------------------------------------------
    @abstractmethod
    def list_partitions(self, table: Table, filter: Expr | None = None,
                        limit: int | None = None) -> list[Partition]:
        """Partitions whose values may satisfy ``filter``, in one SQL query, sorted by values.

        ``filter`` must only name partition columns (see ``hivepark.plan.pruning``);
        ``Opaque`` nodes keep every partition. Comparisons follow the partition column's
        type and SQL three-valued logic, with the default partition as NULL.
        """

    @abstractmethod
    def count_partitions(self, table: Table, filter: Expr | None = None) -> int:
        """How many partitions ``list_partitions(table, filter)`` would return."""

    def partition_stats(self, table: Table, filter: Expr | None = None
                        ) -> tuple[int, int | None]:
        """The count of ``list_partitions(table, filter)`` and their summed ``totalSize``
        statistic (None when a partition has none)."""
        parts = self.list_partitions(table, filter)
        sizes = [p.parameters.get("totalSize") for p in parts]
        if any(s is None for s in sizes):
            return len(parts), None
        return len(parts), sum(int(s) for s in sizes if s is not None)

    @abstractmethod
    def get_partition(self, table: Table, values: Sequence[str | None]) -> Partition | None:
        ...

    def get_partitions(self, table: Table, values: Sequence[Sequence[str | None]]
                       ) -> dict[tuple[str | None, ...], Partition]:
        """The existing partitions among ``values``, keyed by the values as given (batched)."""
        found = {tuple(v): self.get_partition(table, v) for v in values}
        return {k: p for k, p in found.items() if p is not None}

    @abstractmethod
    def add_partitions(self, table: Table, partitions: Sequence[Partition],
                       if_not_exists: bool = False) -> list[Partition]:
        """Registers new partitions in one transaction; returns those actually added.

        Raises AlreadyExistsError naming the first duplicate unless ``if_not_exists``.
        """

    @abstractmethod
    def drop_partitions(self, table: Table, filter: Expr, required: Sequence[Expr] = ()) -> list[Partition]:
        """Removes the partitions matching ``filter`` (exactly, not "may match"), in one
        transaction. Each of ``required`` (filters ``filter`` is the OR of, say) must match one
        of them: if one matches none, nothing is removed and :class:`UnmatchedFilter` says which."""

    @abstractmethod
    def commit(self, table: Table, expected_version: int,
               put: Sequence[Partition] = (), drop: Sequence[tuple[str | None, ...]] = (),
               table_parameters: dict[str, str | None] | None = None,
               statement: str | None = None) -> Table:
        """One transaction: compare-and-swap the table version, then add or replace ``put``
        partitions and remove ``drop`` ones; merge ``table_parameters`` into the table's
        properties (None removes a key); record ``statement`` (a commit's id) as committed
        (:meth:`committed_statements`). Returns the table with its new version.

        Raises CommitConflict when ``table.version`` is no longer ``expected_version``.
        """

    @abstractmethod
    def commit_tables(self, changes: Sequence[TableChange], statement: str | None = None) -> list[Table]:
        """One transaction over several tables: each change as :meth:`commit` makes it, all
        of them or none (a partition moved from one table into another is never in both or
        in neither), recording ``statement`` as :meth:`commit` does. Returns the tables with
        their new versions, in the order given."""

    @abstractmethod
    def committed_statements(self, qids: Sequence[str] | None = None) -> set[str]:
        """Those of ``qids`` (every one recorded, when None) that a :meth:`commit` recorded as
        its ``statement``."""

    @abstractmethod
    def forget_statements(self, qids: Sequence[str]) -> None:
        """Removes the records of ``qids`` (statements whose journals are gone)."""

    def statement_ended(self, qid: str) -> None:
        """The journal of ``qid``, a statement of this process, is gone: its record may go
        (at once here; a catalog may wait for its next transaction)."""
        self.forget_statements([qid])

    @abstractmethod
    def close(self) -> None:
        ...
