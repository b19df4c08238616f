"""What every statement runs with: Spark, the catalog, settings, the current database."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from hivepark import layout
from hivepark.catalog.base import Catalog
from hivepark.catalog.buckets import table_buckets
from hivepark.catalog.models import Table
from hivepark.config import Config
from hivepark.errors import (
    NoSuchDatabase,
    NoSuchTable,
    SemanticError,
    UnsupportedError,
    UserInputError,
    mask_credentials,
)
from hivepark.exec.spark_registry import made_by_hivepark
from hivepark.sql.parser import substitute_variables
from hivepark.sql.statements import TableRef
from hivepark.storage.bucket_files import unwritable
from hivepark.storage.commit import Commit
from hivepark.storage.handlers import HandlerEnvironment, handler_environment, handler_for

_view_ids = itertools.count()


@dataclass
class Context:
    spark: SparkSession
    catalog: Catalog
    conf: Config
    warehouse: str
    current_db: str = "default"
    # each Spark setting SET changed: its value in the session before (None: unset), for RESET
    spark_before_set: dict[str, str | None] = field(default_factory=dict)
    _temp_views: list[str] = field(default_factory=list)
    _cached: list[DataFrame] = field(default_factory=list)
    _table_frames: Any = None
    _planning: threading.local = field(default_factory=threading.local)  # same_tables' lookups
    _empty: DataFrame | None = None

    def table_frames(self) -> Any:
        """This warehouse's whole-table DataFrames (exec.scan.TableFrames), made once."""
        if self._table_frames is None:
            from hivepark.exec.scan import TableFrames
            self._table_frames = TableFrames(self.catalog)
        return self._table_frames

    def handler_scope(self) -> AbstractContextManager[HandlerEnvironment]:
        """Makes this warehouse the storage handlers' environment while a statement runs."""
        return handler_environment(HandlerEnvironment(self.warehouse, getattr(self.catalog, "url", ""), self.conf))

    def substitute(self, text: str, pending: Mapping[str, str] | None = None) -> str:
        """Hive's variable substitution of a statement (``hive.variable.substitute``, on by
        default): the ``hivevar:`` settings (``--hivevar``, ``SET hivevar:k=v``), then the
        others (sql/parser.substitute_variables)."""
        settings = {**dict(self.conf.items()), **(pending or {})}  # pending: a script's SETs not run yet
        if (settings.get("hive.variable.substitute") or "true").lower() != "true":
            return text
        hivevars = {k[len("hivevar:"):]: v for k, v in settings.items() if k.startswith("hivevar:")}
        return substitute_variables(text, hivevars, settings.get)

    def begin_commit(self, table: Table, keeps_buckets: bool = False) -> Commit:
        """A write into ``table`` (see storage/commit.py), with this session's retention for
        the files an overwrite replaces (``hivepark.files.retention.seconds``). A bucketed
        table is refused before anything is written, unless the write keeps every row in its
        bucket's file (``keeps_buckets``: an INSERT writing Hive's bucket files, TRUNCATE)."""
        if not keeps_buckets:
            refuse_bucketed(table, "this statement would not keep each row in its bucket's file")
        return Commit(self.warehouse, table, retention=self.retention())

    def check_partition_names(self, values: Sequence[str | None], table: Table | None = None) -> None:
        """A new partition's values against Hive's ``hive.metastore.partition.name.whitelist.pattern``
        (or its metastore-side name ``metastore.partition.name.whitelist.pattern``), as Hive's metastore
        checks a partition it adds; with ``table``, a partition the table already has is not checked."""
        pattern = self.partition_name_pattern()
        if not pattern or (table is not None and self.catalog.get_partition(table, tuple(values)) is not None):
            return
        layout.check_partition_name_pattern(pattern, values)

    def partition_name_pattern(self) -> str | None:
        """The whitelist of :meth:`check_partition_names` (None or empty: any value)."""
        conf = self.conf
        return conf.get(layout.PARTITION_NAME_PATTERN) or conf.get("metastore.partition.name.whitelist.pattern")

    def retention(self) -> float:
        """``hivepark.files.retention.seconds``: how long replaced files stay for readers."""
        key = "hivepark.files.retention.seconds"
        raw = self.conf.get(key) or "0"
        try:
            return float(raw)
        except ValueError:
            raise UserInputError(
                f"{key} must be a number of seconds, got '{raw}'. Set it with SET {key}=60 "
                f"(0 deletes replaced files at once).") from None

    def table(self, ref: TableRef | str, view_ok: bool = False, for_view: str | None = None,
              code: int | None = None) -> Table:
        """The table a statement names (``TableRef`` or ``"db.name"``); NoSuchTable with a
        hint when it is missing. A view is refused unless ``view_ok`` (it has no files nor
        partitions): with ``for_view`` (Hive's text, and its ``code``) when given."""
        if isinstance(ref, str):
            db, _, name = ref.rpartition(".")
            ref = TableRef(db or None, name)
        table = self.catalog.get_table(*ref.resolve(self.current_db))
        if table.is_view and not view_ok:
            name = table.qualified_name
            raise SemanticError(
                f"{for_view or 'This statement needs a table'}: {name} is a view, a query kept in the "
                f"metastore with no files or partitions of its own. Name the table it reads (SHOW CREATE "
                f"TABLE {name} shows its query).", code=code)
        return table

    @contextmanager
    def same_tables(self) -> Iterator[None]:
        """Within it, this thread reads each table from the metastore once (a query's planning:
        the view expansion and the analysis look up the same names)."""
        outer = getattr(self._planning, "tables", None)
        if outer is None:
            self._planning.tables = {}
        try:
            yield
        finally:
            if outer is None:
                self._planning.tables = None

    def _get_table(self, db: str, name: str) -> Table:
        memo: dict[tuple[str, str], Table] | None = getattr(self._planning, "tables", None)
        if memo is None:
            return self.catalog.get_table(db, name)
        hit = memo.get((db, name))
        if hit is None:
            hit = memo[(db, name)] = self.catalog.get_table(db, name)
        return hit

    def find(self, db: str | None, name: str) -> Table | None:
        """The warehouse table a query's reference names, None for Spark's own views. A
        name ``t.snapshots`` (``db`` being the table's database, or None) or a reference
        ``t.snapshots`` (``db`` being the table) names an Iceberg table's metadata table."""
        try:
            return self._get_table((db or self.current_db).lower(), name.lower())
        except (NoSuchTable, NoSuchDatabase):
            meta = self._metadata_table(db, name)
            if meta is not None:
                return meta
            if db is None and self.spark.catalog.tableExists(name) and not made_by_hivepark(self.spark, name):
                return None  # a Spark view of the user's (not a view of another warehouse's table)
            raise

    def target(self, ref: TableRef | str) -> Table:
        """The table an INSERT or LOAD writes (a view is refused, as Hive's 10090; a bucketed
        table whose bucket files hivepark cannot write as Hive would too)."""
        table = self.table(ref, for_view="A view cannot be used as target table for LOAD or INSERT", code=10090)
        refuse_unwritable_buckets(table)
        return table

    def find_view(self, db: str | None, name: str) -> Table | None:
        """The view a query's reference names, None for anything else."""
        try:
            table = self._get_table((db or self.current_db).lower(), name.lower())
        except (NoSuchTable, NoSuchDatabase):
            return None
        return table if table.is_view else None

    def _metadata_table(self, db: str | None, name: str) -> Table | None:
        if "." in name:  # db.t.snapshots
            base_db = db or self.current_db
            base, kind = name.rsplit(".", 1)
        elif db is not None:  # t.snapshots
            base_db, base, kind = self.current_db, db, name
        else:
            return None
        try:
            table = self.catalog.get_table(base_db.lower(), base.lower())
        except (NoSuchTable, NoSuchDatabase):
            return None
        handler = handler_for(table)
        return handler.metadata_table(table, kind.lower()) if handler is not None else None

    def close_table_frames(self) -> None:
        """Drops the whole-table DataFrames and their temp views (``Warehouse.close``)."""
        if self._table_frames is not None:
            self._table_frames.close(self.spark)
            self._table_frames = None

    def new_view_name(self) -> str:
        name = f"__hivepark_scan_{next(_view_ids)}"
        self._temp_views.append(name)
        return name

    def drop_temp_views(self) -> None:
        for name in self._temp_views:
            self.spark.catalog.dropTempView(name)
        self._temp_views.clear()

    def cache(self, df: DataFrame) -> DataFrame:
        """Caches a small side for the current statement (released by the next one)."""
        df = df.persist()
        self._cached.append(df)
        return df

    def release_cached(self) -> None:
        for df in self._cached:
            df.unpersist()
        self._cached.clear()

    def rows(self, columns: list[str], rows: list[tuple], masked: bool = True) -> DataFrame:
        """A small string-typed result (SHOW, DESCRIBE, SET, EXPLAIN) as a DataFrame, every
        credential in it masked (``mask_credentials``: a URL's password, ``password=...``)
        unless ``masked`` is false (values that are data, such as partition names)."""
        schema = StructType([StructField(c, StringType(), True) for c in columns])
        if masked:
            rows = [tuple(None if v is None else mask_credentials(str(v)) for v in r) for r in rows]
        if len(rows) > 2000:
            return self.spark.createDataFrame([tuple(r) for r in rows], schema)
        # Small results as an inline VALUES table: no Spark job is needed to show them.
        names = ", ".join(f"`{c}`" for c in columns)
        if not rows:
            nulls = ", ".join(f"CAST(NULL AS STRING) AS `{c}`" for c in columns)
            return self.spark.sql(f"SELECT {nulls} WHERE false")
        values = ", ".join("(" + ", ".join(_sql_string(v) for v in r) + ")" for r in rows)
        return self.spark.sql(f"SELECT * FROM VALUES {values} AS t({names})")

    def empty(self) -> DataFrame:
        """The result of a statement without rows (DDL, INSERT): no columns, no rows. One per
        session, made once: a DataFrame is immutable, and making one from Python data is tens of
        milliseconds of Py4J calls, on every statement."""
        if self._empty is None or self._empty.sparkSession is not self.spark:
            self._empty = self.spark.range(0).select()
        return self._empty


def _sql_string(value: object) -> str:
    if value is None:
        return "CAST(NULL AS STRING)"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f"'{text}'"


def require(cond: bool, message: str) -> None:
    if not cond:
        raise UserInputError(message)


def refuse_unwritable_buckets(table: Table) -> None:
    """Refuses a bucketed table whose bucket files hivepark cannot write as Hive would."""
    reason = unwritable(table)
    if reason is not None:
        refuse_bucketed(table, f"hivepark cannot write its bucket files as Hive would, since {reason}. Write it "
                        "with Hive, or INSERT into a table without CLUSTERED BY")


def refuse_bucketed(table: Table, why: str) -> None:
    """Refuses a write into a bucketed table (CLUSTERED BY), saying ``why``; raised before the
    write starts, so nothing is written. Nothing happens for a table without buckets."""
    b = table_buckets(table)
    if b is not None:
        raise UnsupportedError(
            f"{table.qualified_name} is bucketed (CLUSTERED BY ({', '.join(b.columns)}) INTO {b.count} BUCKETS): "
            f"{why}, so nothing was written.")
