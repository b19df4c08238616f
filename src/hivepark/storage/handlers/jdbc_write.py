"""INSERT INTO / INSERT OVERWRITE a JDBC table, all or nothing.

Spark writes the rows into a staging table next to the target (``hp_stage_<id>``, created
empty with the target's columns); then one transaction on the database deletes the
target's rows (OVERWRITE) and moves the staged rows in; the staging table is dropped
whatever happens. A failure before the commit leaves the target as it was.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from sqlglot import exp

from hivepark.errors import UnsupportedError
from hivepark.storage.handlers.jdbc_sql import SQLGLOT_DIALECT, ident

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hivepark.catalog.models import Table
    from hivepark.storage.handlers.jdbc import JdbcStorageHandler


def write_all_or_nothing(handler: JdbcStorageHandler, spark: SparkSession, table: Table, df: DataFrame,
                         overwrite: bool) -> None:
    from hivepark.storage.handlers.jdbc import (
        DATABASE_TYPE,
        QUERY,
        SCHEMA,
        TABLE,
        _get,
        _props,
        engine_for,
    )

    props = _props(table.properties)
    if _get(props, QUERY):
        raise UnsupportedError(f"Cannot INSERT into {table.qualified_name}: it reads a {QUERY}, not a table")
    db = (_get(props, DATABASE_TYPE) or "").upper()
    dialect = SQLGLOT_DIALECT[db]
    name = _get(props, TABLE) or ""
    schema = _get(props, SCHEMA)
    if schema is None and "." in name:
        schema, name = name.rsplit(".", 1)
    cols = handler._columns(table)
    stage_name = f"hp_stage_{uuid.uuid4().hex[:12]}"
    target = exp.Table(this=ident(name), db=ident(schema) if schema else None)
    stage = exp.Table(this=ident(stage_name), db=ident(schema) if schema else None)
    source_names = [cols[c.name].source for c in table.columns]

    def sql(e: exp.Expression) -> str:
        return e.sql(dialect=dialect)

    empty = exp.select(*[exp.column(ident(n)) for n in source_names]).from_(target.copy()).where("1 = 0")
    create = f"CREATE TABLE {sql(stage)} AS {sql(empty)}"
    eng = engine_for(props)
    raw = eng.raw_connection()
    try:
        cur = raw.cursor()
        cur.execute(create)
        raw.commit()
        try:
            renamed = df.toDF(*source_names)
            opts = handler.jdbc_options(table.properties)
            opts = {k: v for k, v in opts.items() if not k.startswith("pushDown") and k != "fetchsize"}
            stage_text = sql(stage)
            (renamed.write.format("jdbc").options(**opts).option("dbtable", stage_text)
             .option("isolationLevel", "READ_COMMITTED").mode("append").save())
            col_list = ", ".join(sql(ident(n)) for n in source_names)
            if db == "SQLITE":
                cur.execute("BEGIN IMMEDIATE")
            if overwrite:
                cur.execute(f"DELETE FROM {sql(target)}")
            cur.execute(f"INSERT INTO {sql(target)} ({col_list}) SELECT {col_list} FROM {stage_text}")
            raw.commit()
        except BaseException:
            raw.rollback()
            raise
        finally:
            cur.execute(f"DROP TABLE {sql(stage)}")
            raw.commit()
    finally:
        raw.close()
