"""hivepark: a Hive-compatible warehouse for PySpark.

>>> import hivepark                                  # doctest: +SKIP
>>> wh = hivepark.connect("./warehouse")             # doctest: +SKIP
>>> wh.sql("SHOW TABLES").show()                     # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from hivepark.errors import HiveParkError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hivepark.catalog.base import Catalog

__all__ = ["connect", "Warehouse", "HiveParkError", "RecoveryWarning"]
__version__ = "0.1.0"


class Warehouse:
    """A connection to one warehouse: a metastore, a root directory and a SparkSession."""

    def __init__(self, warehouse: str, catalog: Catalog, spark: SparkSession,
                 conf: Mapping[str, str] | None = None) -> None:
        from hivepark.config import Config
        from hivepark.exec.context import Context
        from hivepark.storage.commit import register_warehouse

        self._ctx = Context(spark, catalog, Config(conf), warehouse)
        register_warehouse(warehouse, catalog)  # listings leave out its uncommitted files
        self.refresh_views()

    @property
    def spark(self) -> SparkSession:
        return self._ctx.spark

    @property
    def catalog(self) -> Catalog:
        return self._ctx.catalog

    @property
    def location(self) -> str:
        return self._ctx.warehouse

    @property
    def current_database(self) -> str:
        return self._ctx.current_db

    def conf(self, key: str) -> str | None:
        return self._ctx.conf.get(key)

    def sql(self, text: str) -> DataFrame:
        """Runs one statement; queries and SHOW/DESCRIBE return their rows as a DataFrame."""
        from hivepark.errors import UserInputError
        from hivepark.exec.dispatch import execute
        from hivepark.sql.parser import parse

        stmts = parse(self._ctx.substitute(text))
        if len(stmts) != 1:
            raise UserInputError(f"Warehouse.sql runs exactly one statement, got {len(stmts)}: "
                                 "use Warehouse.sql_script for several")
        return execute(self._ctx, stmts[0])

    def sql_script(self, text: str) -> list[DataFrame]:
        """Runs ``;``-separated statements in order, stopping at the first error."""
        from hivepark.exec.dispatch import execute
        from hivepark.sql.parser import parse_one, split_statements
        from hivepark.sql.statements import Set

        # every statement parsed before any runs (a syntax error runs nothing), each with the
        # variables the SETs before it will have set
        pending: dict[str, str] = {}
        parsed = []
        for piece, line in split_statements(text):
            stmt = parse_one(self._ctx.substitute(piece, pending), line)
            if isinstance(stmt.statement, Set) and stmt.statement.key and stmt.statement.value is not None:
                pending[stmt.statement.key.strip()] = stmt.statement.value.strip()
            parsed.append(stmt)
        return [execute(self._ctx, s) for s in parsed]

    def explain(self, text: str) -> str:
        """The EXPLAIN text of a query (or of ``EXPLAIN [EXTENDED] <query>``)."""
        from hivepark.exec.dispatch import explain
        from hivepark.sql.parser import parse_one
        from hivepark.sql.statements import Explain

        return explain(self._ctx, Explain.of(parse_one(self._ctx.substitute(text)).statement))

    def table(self, name: str) -> DataFrame:
        """All rows of a table or a view (``db.name`` or a name in the current database)."""
        from hivepark.exec.scan import scan_dataframe
        from hivepark.plan.nodes import TableScan
        from hivepark.plan.planner import plan_scans

        with self._ctx.handler_scope(), self._translated():
            t = self._ctx.table(name, view_ok=True)
            if not t.is_view:
                plan = plan_scans([TableScan(t, t.name)], self._ctx.catalog)
                return scan_dataframe(self.spark, plan.scans[0])
        return self.sql(f"SELECT * FROM `{t.db}`.`{t.name}`")

    def insert(self, df: DataFrame, table: str, partition: Mapping[str, object] | None = None,
               overwrite: bool = False, by_position: bool = False) -> None:
        """Writes ``df`` into ``table``. Its columns are matched by name to the table's data
        columns and the dynamic partition columns (those mapped to None in ``partition``, or
        every key without ``partition``); with ``by_position``, they are taken in that order
        whatever their names. A mismatch is refused, naming both sets of columns. If another
        statement commits to ``table`` first and ``df`` reads ``table``'s files, the insert fails
        with CommitConflict (run it again) rather than writing rows computed without that commit."""
        from hivepark.exec.write import frame_for_insert, reads_files_of, write_rows
        from hivepark.sql.validate import python_spec

        with self._ctx.handler_scope(), self._translated():
            t = self._ctx.target(table)
            spec = python_spec(t, partition)
            write_rows(self._ctx, t, frame_for_insert(t, df, spec, by_position), spec, overwrite,
                       reads_target=lambda: reads_files_of(t, df, self._ctx.catalog))
            self._sync_views()

    def refresh_views(self) -> None:
        """Brings the Spark temporary views of the current database's tables up to date, so
        ``spark.sql("SELECT * FROM t")`` reads ``t``'s latest commit (exec/spark_views.py).
        hivepark does this itself after each statement that changes a table; call it when
        another process has committed since, or another tool wrote files into a directory the
        metastore records no files for (a partition added with a LOCATION, an external table's
        directory), which it lists again. ``hivepark.spark.views=false``: no views."""
        with self._ctx.handler_scope(), self._translated():
            self._sync_views(relist=True)

    def _sync_views(self, relist: bool = False) -> None:
        from hivepark.exec.spark_views import sync

        sync(self._ctx, relist=relist)

    def _translated(self) -> AbstractContextManager[None]:
        """Spark's and the file system's failures as hivepark errors (exec/failures.py)."""
        from hivepark.exec.failures import translated

        return translated(self._ctx)

    def close(self) -> None:
        from hivepark.exec.spark_views import drop_all
        from hivepark.storage.commit import unregister_warehouse

        drop_all(self._ctx)
        self._ctx.close_table_frames()
        unregister_warehouse(self._ctx.warehouse, self._ctx.catalog)
        self._ctx.catalog.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(warehouse: str = "./warehouse", metastore: str | None = None,
            spark: SparkSession | None = None, conf: Mapping[str, str] | None = None) -> Warehouse:
    """Opens (or creates) a warehouse.

    Args:
        warehouse: root directory (or URI) of the table data.
        metastore: SQLAlchemy URL; default ``sqlite:///<warehouse>/metastore.db``.
        spark: the SparkSession to use; default the one running in this process (started in any
            thread), else a new one (exec/session.py: get_or_create_spark).
        conf: settings for this connection: Hive's and hivepark's (``hive.*``, ``hivepark.*``),
            and Spark's (``spark.*``), given to Spark when this call starts it, set on a
            running session otherwise (one Spark reads only at start is then an error).
    """
    import hivepark.sql.dialect  # noqa: F401 - refuses sqlglot's compiled build before anything is opened
    from hivepark.catalog.models import Database
    from hivepark.catalog.sql import SqlCatalog
    from hivepark.config import Config
    from hivepark.errors import MetastoreError, mask_credentials
    from hivepark.exec.session import (
        get_or_create_spark,
        no_variable_substitution,
        set_spark_setting,
        spark_settings,
    )
    from hivepark.storage import fs

    Config(conf)  # a bad setting fails here, before anything is opened
    root = fs.normalize(warehouse)
    if metastore is None and "://" in root:
        from hivepark.errors import UserInputError

        raise UserInputError(
            f"The warehouse {root} is not on a local disk, so its metastore cannot be the default SQLite "
            f"file inside it: give a metastore URL every user of the warehouse reaches (metastore= / "
            f"--metastore, e.g. postgresql+psycopg://user:***@host/metastore).")
    if metastore is None and "?" in root:
        from hivepark.errors import UserInputError

        raise UserInputError(
            f"The warehouse path {root} holds '?', which a SQLite URL takes as the start of its options, so "
            f"the default metastore file inside it would be opened at {root.split('?', 1)[0]} instead: give a "
            f"metastore URL (metastore= / --metastore, e.g. sqlite:////other/dir/metastore.db), or a "
            f"warehouse path without '?'. Nothing was created.")
    fs.makedirs(root)
    url = metastore or f"sqlite:///{os.path.join(root, 'metastore.db')}"
    try:
        catalog = SqlCatalog(url)
    except HiveParkError:
        raise
    except Exception as e:  # noqa: BLE001 - a bad URL or a missing driver: one clear error, never the password
        shown = mask_credentials(url)
        if "@" in shown and "://" not in shown:  # not a URL: whatever precedes the host may be a password
            shown = "***@" + shown.rsplit("@", 1)[1]
        raise MetastoreError(
            f"Cannot open the metastore at {shown}: {type(e).__name__}: {e}. Check the metastore URL (a "
            "SQLAlchemy URL such as postgresql+psycopg://user:***@host/db) and that its driver is "
            "installed.") from None
    catalog.create_database(Database("default", root, "Default Hive database"), if_not_exists=True)
    _recover(root, url, catalog)
    if spark is not None:
        session = no_variable_substitution(spark)
        for k, v in spark_settings(conf).items():
            if session.conf.get(k, None) != v:
                set_spark_setting(session, k, v)
    else:
        session = get_or_create_spark(settings=conf)
    return Warehouse(root, catalog, session, conf)


class RecoveryWarning(UserWarning):
    """connect() could not finish or undo a crashed statement (or delete files whose retention
    passed), typically because a table directory is not writable: the warehouse opens anyway,
    and the next connect() tries again."""


def _recover(root: str, url: str, catalog: Catalog) -> None:
    """Finishes or undoes crashed statements (storage/commit.py, Iceberg writes, JDBC staging
    tables). A file the recovery cannot change (a read-only table directory, a full disk) does
    not stop the warehouse from opening: it is a :class:`RecoveryWarning` naming the path, and the next
    connect() tries again."""
    import warnings

    from hivepark.errors import mask_credentials
    from hivepark.storage import fs
    from hivepark.storage.commit import recover, state_dir

    def iceberg() -> None:  # the handler's marker_dir, named here to spare pyiceberg's import (~1 s)
        if fs.list_files(f"{state_dir(root)}/iceberg"):
            from hivepark.storage.handlers.iceberg import recover_writes

            recover_writes(root, url)

    def jdbc() -> None:  # the handler's stage_dir: staging tables of killed INSERTs into JDBC tables
        if fs.list_files(f"{state_dir(root)}/jdbc"):
            from hivepark.storage.handlers.jdbc import recover_stages

            recover_stages(root, catalog)

    files = "make that path writable, or free space"
    for step, fix in ((lambda: recover(root, catalog), files), (iceberg, files),
                      (jdbc, "make sure that database is running and reachable with the table's properties")):
        try:
            step()
        except OSError as e:
            warnings.warn(mask_credentials(
                f"hivepark could not finish cleaning up after an earlier statement: {e}. The warehouse "
                f"is open; the next connect() tries again ({fix})."),
                RecoveryWarning, stacklevel=3)
