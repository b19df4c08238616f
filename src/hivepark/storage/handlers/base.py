"""The storage handler interface (Hive's ``HiveStorageHandler`` + ``HiveStoragePredicateHandler``).

A handler class names itself (``name``, plus Hive class names in ``aliases``), validates a
table's properties, may give the table's columns, may negotiate the filter
(``decompose_predicate``, optional: see :mod:`hivepark.plan.pushdown`), reads a scan into a
Spark DataFrame and, when ``supports_writes``, writes one. A table is a handler table when
its ``storage_handler`` property names a handler; the handler's own properties (Hive's
TBLPROPERTIES and SERDEPROPERTIES) are the table's other properties.

The pushed filter reaches :meth:`StorageHandler.read` as :class:`PushedFilter`: the tree,
Hive's filter string form (``hive.io.filter.text``) and the serialized tree
(``hive.io.filter.expr.serialized``, JSON that round-trips).

A complete small handler (a read-only table of the numbers ``0 .. n-1`` that pushes bounds
on ``id``) is in the README, section "Storage handlers and filter pushdown";
``tests/handlers/test_readme_handler.py`` runs it as written. A package makes its handler
known through an entry point in the ``hivepark.storage_handlers`` group.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from hivepark.errors import UnsupportedError, mask_credentials
from hivepark.expr.nodes import Expr
from hivepark.expr.serialize import from_json, to_json
from hivepark.expr.visitors import to_filter_string
from hivepark.plan.pushdown import DecomposedPredicate

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hivepark.catalog.models import Column, Table

__all__ = ["FILTER_EXPR_KEY", "FILTER_TEXT_KEY", "MASK", "PARTITION_SPEC_KEY", "STORAGE_HANDLER_KEY",
           "DecomposedPredicate", "HandlerEnvironment", "PushedFilter", "StorageHandler", "current_environment",
           "handler_environment"]

STORAGE_HANDLER_KEY = "storage_handler"  # Hive's META_TABLE_STORAGE table parameter
# PARTITIONED BY SPEC (...) as JSON [[transform, column, param], ...], given to create_table only
PARTITION_SPEC_KEY = "hivepark.partition-spec"
FILTER_TEXT_KEY = "hive.io.filter.text"
FILTER_EXPR_KEY = "hive.io.filter.expr.serialized"
MASK = "********"


@dataclass(frozen=True)
class PushedFilter:
    """The filter a handler receives: ``expr`` (the tree), ``text`` (the filter string
    form) and ``serialized`` (JSON that round-trips).

    >>> from hivepark.expr.nodes import And, GreaterThanOrEqual, LessThan
    >>> f = PushedFilter(And(GreaterThanOrEqual("key", 100), LessThan("key", 200)))
    >>> f.text
    '((key >= 100) and (key < 200))'
    >>> PushedFilter.from_job_conf(f.job_conf()) == f
    True
    """

    expr: Expr

    @cached_property
    def text(self) -> str:
        return to_filter_string(self.expr)

    @cached_property
    def serialized(self) -> str:
        return to_json(self.expr)

    def job_conf(self) -> dict[str, str]:
        """Hive's two job-conf properties: ``hive.io.filter.text`` and
        ``hive.io.filter.expr.serialized``."""
        return {FILTER_TEXT_KEY: self.text, FILTER_EXPR_KEY: self.serialized}

    @staticmethod
    def from_job_conf(conf: Mapping[str, str]) -> PushedFilter | None:
        """The filter a job conf carries (None when it carries none)."""
        text = conf.get(FILTER_EXPR_KEY)
        return None if text is None else PushedFilter(from_json(text))


@dataclass(frozen=True)
class HandlerEnvironment:
    """What a handler may need of the warehouse a statement runs in: its root directory, its
    metastore's SQLAlchemy URL (a handler may keep its own catalog in the same database, as
    the Iceberg handler does) and the session's settings. ``exec/`` makes it current for the
    duration of each statement (:func:`handler_environment`); a handler reads it with
    :func:`current_environment`, so handler instances stay stateless."""

    warehouse: str
    metastore_url: str
    settings: Any = None

    def __repr__(self) -> str:  # the metastore URL's password never shows
        return (f"HandlerEnvironment(warehouse={self.warehouse!r}, "
                f"metastore_url={mask_credentials(self.metastore_url)!r}, settings={self.settings!r})")


_ENVIRONMENT: ContextVar[HandlerEnvironment | None] = ContextVar("hivepark_handler_environment", default=None)


@contextmanager
def handler_environment(env: HandlerEnvironment) -> Iterator[HandlerEnvironment]:
    """Makes ``env`` current in this thread (and context) until the block ends."""
    token = _ENVIRONMENT.set(env)
    try:
        yield env
    finally:
        _ENVIRONMENT.reset(token)


def current_environment() -> HandlerEnvironment:
    """The environment of the statement running now.

    Raises:
        UnsupportedError: called outside a statement (no warehouse is known)."""
    env = _ENVIRONMENT.get()
    if env is None:
        raise UnsupportedError("This storage handler needs the warehouse it serves: use it through "
                               "hivepark.connect(...) (Warehouse.sql, .table, .insert), not directly")
    return env


class StorageHandler(ABC):
    """Base of every storage handler. Instances are stateless: one serves every table.

    ``decompose_predicate(table, predicate) -> DecomposedPredicate | None`` is optional:
    define it to negotiate the filter. Without it the handler still receives the filter
    (as ``pushed``) and Spark applies all of it.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    supports_writes: ClassVar[bool] = False
    secret_properties: ClassVar[frozenset[str]] = frozenset()
    # CREATE TABLE clauses a handler takes (besides columns, TBLPROPERTIES, SERDEPROPERTIES):
    # any of "PARTITIONED BY", "AS SELECT", "LOCATION"; others are refused with a clear error
    create_clauses: ClassVar[frozenset[str]] = frozenset()
    # True: as the big side of a map-join, the table takes the small side's key values as a
    # runtime filter (ANDed into the pushed filter ``read`` receives; Spark filters the rows)
    accepts_runtime_filters: ClassVar[bool] = False

    def create_table(self, table: Table) -> Table:
        """Hive's ``HiveMetaHook.preCreateTable``: called before the metastore records ``table``
        (its columns, partition columns and properties as CREATE gave them); returns the table
        to record (a handler may add properties or fill in columns). A failure here records
        nothing. By default, columns CREATE omits are taken from :meth:`schema`."""
        if table.columns:
            return table
        from hivepark.catalog.models import Column

        props = {k: v for k, v in table.properties.items() if k.lower() != STORAGE_HANDLER_KEY}
        return table.evolve(columns=tuple(Column(n.lower(), t) for n, t in self.schema(props)))

    def like_properties(self, table: Table) -> dict[str, str]:
        """The properties CREATE TABLE ... LIKE ``table`` gives the new table of this handler, as
        Hive copies a table's parameters (its source's with them): by default all of them; a
        handler leaves out those that name ``table``'s own data, and gives ``PARTITION_SPEC_KEY``
        for a partitioning its source keeps (an Iceberg table's spec)."""
        return {k: v for k, v in table.properties.items() if k.lower() != STORAGE_HANDLER_KEY}

    def rollback_create_table(self, table: Table) -> None:  # noqa: B027 - optional hook
        """Undo :meth:`create_table` when the metastore could not record the table."""

    def drop_table(self, table: Table, delete_data: bool) -> None:  # noqa: B027 - optional hook
        """Hive's ``HiveMetaHook.commitDropTable``: the metastore no longer holds ``table``;
        ``delete_data`` is true for a managed table (the handler may then delete what it owns)."""

    def rename_table(self, table: Table, new_db: str, new_name: str) -> None:  # noqa: B027 - optional hook
        """ALTER TABLE ... RENAME TO: the metastore already calls ``table`` ``new_db.new_name``."""

    def add_columns(self, table: Table, columns: Sequence[Column]) -> Table:
        """ALTER TABLE ... ADD COLUMNS: ``columns`` added to the source; returns the table to
        record. By default refused: the source's columns are its own (a JDBC table's)."""
        raise UnsupportedError(f"The columns of {table.qualified_name} are its storage handler's source's: change "
                               "them there (the handler reads them from it)")

    def at_version(self, table: Table) -> Table:
        """``table`` as its time-travel properties (``FOR SYSTEM_VERSION|SYSTEM_TIME AS OF``) name it,
        with the columns it had then; by default as it is."""
        return table

    def change_column(self, table: Table, column: str, columns: Sequence[Column]) -> Table:
        """ALTER TABLE ... CHANGE COLUMN ``column``: ``columns`` are the table's columns after it
        (the changed one renamed, retyped, commented or moved); returns the table to record. By
        default refused, as :meth:`add_columns`."""
        return self.add_columns(table, ())

    def replace_columns(self, table: Table, columns: Sequence[Column]) -> Table:
        """ALTER TABLE ... REPLACE COLUMNS (``columns``); returns the table to record. By default
        refused, as :meth:`add_columns`."""
        return self.add_columns(table, ())

    def metadata_table(self, table: Table, kind: str) -> Table | None:
        """The table a query names ``<table>.<kind>`` (Iceberg's ``snapshots``), or None when
        the handler has no such metadata table."""
        return None

    def state(self, table: Table) -> str | None:
        """A token that changes whenever the table's rows may change without the metastore's
        version moving (an Iceberg snapshot committed by any engine), so a DataFrame planned
        from it is known to be stale; None when :meth:`read` always reads the source's
        latest rows (a JDBC query runs when Spark runs)."""
        return None

    def describe_table(self, table: Table) -> list[tuple[str, str]]:
        """Extra ``(name, value)`` lines for DESCRIBE FORMATTED (none by default)."""
        return []

    def partitioning_ddl(self, table: Table) -> str | None:
        """The clause that gives the table its partitioning in SHOW CREATE TABLE, when the
        source keeps it (an Iceberg table's ``PARTITIONED BY SPEC (...)``); None by default."""
        return None

    def validate(self, properties: Mapping[str, str]) -> None:  # noqa: B027 - optional hook
        """Raise a ``UserInputError`` naming what is wrong with the table's properties."""

    def schema(self, properties: Mapping[str, str]) -> list[tuple[str, str]]:
        """The columns ``(name, hive_type)`` when CREATE omits them."""
        raise UnsupportedError(f"The {self.name} storage handler cannot read a table's columns from its "
                               "source: list the columns in CREATE TABLE")

    @abstractmethod
    def read(self, spark: SparkSession, table: Table, columns: Sequence[str],
             pushed: PushedFilter | None, settings: Any) -> DataFrame:
        """A DataFrame of ``columns`` (Hive names, in this order) of the table's rows.

        When the handler decomposed the filter (``decompose_predicate`` returned ``pushed``),
        the rows must be exactly those ``pushed`` accepts, as in Hive: Spark does not apply
        the pushed part again. A handler without ``decompose_predicate`` receives the whole
        filter and may apply any of it (it must keep every row the filter accepts): Spark
        applies all of it."""

    def describe_scan(self, table: Table, columns: Sequence[str], pushed: PushedFilter | None) -> str:
        """The handler's own form of what it asks its source (EXPLAIN); never a secret."""
        where = f" where {pushed.text}" if pushed is not None else ""
        return f"{self.name} scan of {table.qualified_name} ({', '.join(columns)}){where}"

    def write(self, spark: SparkSession, table: Table, df: DataFrame, overwrite: bool) -> None:
        """Write ``df`` (the table's columns, in order) into the source, all or nothing."""
        raise UnsupportedError(f"Table {table.qualified_name} is read-only: the {self.name} storage "
                               "handler does not support INSERT")

    def masked_properties(self, properties: Mapping[str, str]) -> dict[str, str]:
        """The properties with every secret's value masked (DESCRIBE FORMATTED, EXPLAIN), and
        every credential inside a value (a JDBC URL's password) masked too."""
        secrets = {s.lower() for s in self.secret_properties}
        return {k: (MASK if k.lower() in secrets or "password" in k.lower() else mask_credentials(v))
                for k, v in properties.items()}
