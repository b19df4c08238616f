"""The metastore's relational schema: typed ORM rows and the in-place upgrade mechanism.

Every hivepark metastore records its schema version in ``hivepark_schema``. Opening a
metastore runs the migrations it has not seen yet, in order, in one transaction
(:func:`upgrade`). Migration ``n`` (1-based) lives at ``MIGRATIONS[n - 1]``; version 1 is the
initial schema. A migration must only use SQLAlchemy Core on the connection it is given and
must describe the tables as they were at that version (never the ORM classes below, which
always describe the newest version).

Tables (all names prefixed ``hivepark_`` so the metastore can share a PostgreSQL database):

* ``hivepark_databases`` and ``hivepark_tables``: definitions; columns, partition keys and
  properties as JSON text; ``version`` is the compare-and-swap counter for commits.
* ``hivepark_partitions``: one row per partition, unique on ``(tbl_id, part_name)`` where
  ``part_name`` is Hive's escaped ``k=v/k2=v2`` name.
* ``hivepark_partition_key_vals``: one row per partition and key, ``str_value`` (canonical
  text, NULL for the default partition) and ``num_value`` (a double, for numeric keys), indexed
  by ``(tbl_id, idx, str_value, part_id)`` and ``(tbl_id, idx, num_value, num_exact, part_id)``
  so that partition filters become index range scans that yield the partition ids.
  ``num_exact`` is false when the double does not order exactly like the value (a bigint
  beyond 2**53, a decimal with more than 15 digits, NaN); filters widen their comparisons for
  such rows so that pruning stays sound.
* ``hivepark_statements`` (since version 4): the id of each statement whose commit went into
  the metastore, recorded in the commit's own transaction: how recovery and listings tell
  whether a statement whose journal is still there committed (``storage/commit.py``). A row
  goes once its journal is gone.
* version 5: an index on ``hivepark_partitions.location`` (byte-wise), for the directory
  checks of ``locations_overlapping``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine

from hivepark.errors import MetastoreError

SCHEMA_TABLE = "hivepark_schema"


def ctext() -> TypeEngine[str]:
    """Text compared byte-wise (Spark's order): ``COLLATE "C"`` on PostgreSQL, BINARY on SQLite."""
    return Text().with_variant(Text(collation="C"), "postgresql")


def big_id() -> TypeEngine[int]:
    """A 64-bit id that is still SQLite's auto-incrementing ``INTEGER PRIMARY KEY``."""
    return BigInteger().with_variant(Integer(), "sqlite")


#: The key-value indexes (since version 2): they cover ``part_id`` (and ``num_exact``), so a
#: filter finds its partitions' ids in the index alone, without a lookup per matching row.
_STR_INDEX = ("ix_hivepark_pkv_str_ids", "tbl_id", "idx", "str_value", "part_id")
_NUM_INDEX = ("ix_hivepark_pkv_num_ids", "tbl_id", "idx", "num_value", "num_exact", "part_id")


class Base(DeclarativeBase):
    pass


class SchemaRow(Base):
    __tablename__ = SCHEMA_TABLE

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class DatabaseRow(Base):
    __tablename__ = "hivepark_databases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(ctext(), unique=True)
    location: Mapped[str] = mapped_column(Text)
    comment: Mapped[str | None] = mapped_column(Text)
    properties: Mapped[str] = mapped_column(Text)


class TableRow(Base):
    __tablename__ = "hivepark_tables"
    __table_args__ = (UniqueConstraint("db_id", "name", name="uq_hivepark_tables_db_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    db_id: Mapped[int] = mapped_column(ForeignKey("hivepark_databases.id"))
    name: Mapped[str] = mapped_column(ctext())
    columns: Mapped[str] = mapped_column(Text)
    partition_keys: Mapped[str] = mapped_column(Text)
    properties: Mapped[str] = mapped_column(Text)
    location: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(Text)
    field_delim: Mapped[str | None] = mapped_column(Text)
    table_type: Mapped[str] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer)
    create_time: Mapped[int] = mapped_column(BigInteger)
    uid: Mapped[str | None] = mapped_column(Text)  # since version 3: see _v3_table_uid


class PartitionRow(Base):
    __tablename__ = "hivepark_partitions"
    __table_args__ = (
        UniqueConstraint("tbl_id", "part_name", name="uq_hivepark_partitions_tbl_name"),
    )

    id: Mapped[int] = mapped_column(big_id(), primary_key=True)
    tbl_id: Mapped[int] = mapped_column(ForeignKey("hivepark_tables.id"))
    part_name: Mapped[str] = mapped_column(ctext())
    part_values: Mapped[str] = mapped_column(Text)
    location: Mapped[str] = mapped_column(Text)
    parameters: Mapped[str] = mapped_column(Text)
    files: Mapped[str | None] = mapped_column(Text)
    create_time: Mapped[int] = mapped_column(BigInteger)


class StatementRow(Base):
    __tablename__ = "hivepark_statements"

    qid: Mapped[str] = mapped_column(Text, primary_key=True)
    committed_at: Mapped[int] = mapped_column(BigInteger)


class PartitionKeyValRow(Base):
    __tablename__ = "hivepark_partition_key_vals"
    __table_args__ = (
        PrimaryKeyConstraint("part_id", "idx", name="pk_hivepark_partition_key_vals"),
        Index("ix_hivepark_pkv_str", "tbl_id", "idx", "str_value"),
        Index("ix_hivepark_pkv_num", "tbl_id", "idx", "num_value"),
    )

    part_id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"),
                                         ForeignKey("hivepark_partitions.id"))
    idx: Mapped[int] = mapped_column(Integer)
    tbl_id: Mapped[int] = mapped_column(Integer)
    str_value: Mapped[str | None] = mapped_column(ctext())
    num_value: Mapped[float | None] = mapped_column(Double)
    num_exact: Mapped[bool] = mapped_column(Boolean)


# migrations ------------------------------------------------------------------------------

Migration = Callable[[Connection], None]


def _v1_initial(conn: Connection) -> None:
    """Version 1: databases, tables, partitions and partition key values (frozen copy)."""
    md = MetaData()
    Table("hivepark_databases", md,
          Column("id", Integer, primary_key=True),
          Column("name", ctext(), nullable=False, unique=True),
          Column("location", Text, nullable=False),
          Column("comment", Text, nullable=True),
          Column("properties", Text, nullable=False))
    Table("hivepark_tables", md,
          Column("id", Integer, primary_key=True),
          Column("db_id", Integer, ForeignKey("hivepark_databases.id"), nullable=False),
          Column("name", ctext(), nullable=False),
          Column("columns", Text, nullable=False),
          Column("partition_keys", Text, nullable=False),
          Column("properties", Text, nullable=False),
          Column("location", Text, nullable=False),
          Column("format", Text, nullable=False),
          Column("field_delim", Text, nullable=True),
          Column("table_type", Text, nullable=False),
          Column("version", Integer, nullable=False),
          Column("create_time", BigInteger, nullable=False),
          UniqueConstraint("db_id", "name", name="uq_hivepark_tables_db_name"))
    Table("hivepark_partitions", md,
          Column("id", big_id(), primary_key=True),
          Column("tbl_id", Integer, ForeignKey("hivepark_tables.id"), nullable=False),
          Column("part_name", ctext(), nullable=False),
          Column("part_values", Text, nullable=False),
          Column("location", Text, nullable=False),
          Column("parameters", Text, nullable=False),
          Column("files", Text, nullable=True),
          Column("create_time", BigInteger, nullable=False),
          UniqueConstraint("tbl_id", "part_name", name="uq_hivepark_partitions_tbl_name"))
    Table("hivepark_partition_key_vals", md,
          Column("part_id", big_id(), ForeignKey("hivepark_partitions.id"), nullable=False),
          Column("idx", Integer, nullable=False),
          Column("tbl_id", Integer, nullable=False),
          Column("str_value", ctext(), nullable=True),
          Column("num_value", Double, nullable=True),
          Column("num_exact", Boolean, nullable=False),
          PrimaryKeyConstraint("part_id", "idx", name="pk_hivepark_partition_key_vals"),
          Index("ix_hivepark_pkv_str", "tbl_id", "idx", "str_value"),
          Index("ix_hivepark_pkv_num", "tbl_id", "idx", "num_value"))
    md.create_all(conn)


def _v2_covering_key_indexes(conn: Connection) -> None:
    """Version 2: the key-value indexes also hold ``part_id`` (and ``num_exact``), replacing
    version 1's: a 1,000-value IN over a million partitions no longer looks up each of the
    24,000 matching key rows in the table to learn its partition."""
    md = MetaData()
    kv = Table("hivepark_partition_key_vals", md,
               Column("part_id", big_id()), Column("idx", Integer), Column("tbl_id", Integer),
               Column("str_value", ctext()), Column("num_value", Double),
               Column("num_exact", Boolean))
    for old in ("ix_hivepark_pkv_str", "ix_hivepark_pkv_num"):
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {old}")
    for name, *cols in (_STR_INDEX, _NUM_INDEX):
        Index(name, *(kv.c[c] for c in cols)).create(conn)


def _v3_table_uid(conn: Connection) -> None:
    """Version 3: ``uid``, a random identity of each table, given when it is created. A table
    dropped and created again under the same name gets a new one (on SQLite even its row id
    can come back, and its version counts up from 1 again): what a process keeps of a table
    (its whole-table DataFrame, its partitions) is keyed by ``(uid, version)``, never by the
    name and version alone. Tables created before it get one here."""
    md = MetaData()
    tables = Table("hivepark_tables", md, Column("id", Integer), Column("uid", Text))
    conn.exec_driver_sql("ALTER TABLE hivepark_tables ADD COLUMN uid TEXT")
    for (tbl_id,) in conn.execute(select(tables.c.id)).all():
        conn.execute(update(tables).where(tables.c.id == tbl_id).values(uid=new_uid()))


def _v4_statements(conn: Connection) -> None:
    """Version 4: ``hivepark_statements``, the statements whose commit is in the metastore (a
    row written in the commit's transaction): a statement killed after its commit, whose files
    a later statement replaced, is still known to have committed."""
    md = MetaData()
    Table("hivepark_statements", md,
          Column("qid", Text, primary_key=True),
          Column("committed_at", BigInteger, nullable=False))
    md.create_all(conn)


#: How much of a partition's location the location index holds on PostgreSQL (600 characters,
#: at most 2,400 bytes: under its B-tree's 2,704 a row; a longer location is still found, by a
#: scan), and the index's name (since version 5).
LOCATION_PREFIX = 600
LOCATION_INDEX = "ix_hivepark_partitions_location"


def _v5_location_index(conn: Connection) -> None:
    """Version 5: an index on the partitions' locations, compared byte-wise (``COLLATE "C"``
    on PostgreSQL, over their first LOCATION_PREFIX characters), so that the check of a
    directory against every table's and partition's (catalog/sql.py locations_overlapping: a
    LOCATION given, an ADD PARTITION, a statement's recovery) is an index range scan rather
    than a scan of every partition (~130 ms at a million)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f'CREATE INDEX {LOCATION_INDEX} ON hivepark_partitions '
                             f'((substr(location, 1, {LOCATION_PREFIX}) COLLATE "C"))')
    else:
        conn.exec_driver_sql(f"CREATE INDEX {LOCATION_INDEX} ON hivepark_partitions (location)")


#: The partial index (since version 6) of the partitions whose parameters may record an absolute
#: list-bucketing directory (SET SKEWED LOCATION's; a write's own are relative), and its condition.
ABSOLUTE_SKEW_INDEX = "ix_hivepark_partitions_abs_skew"


def absolute_skew_condition(dialect: str, column: str) -> str:
    """The condition, as SQL text, of JSON text in ``column`` that may record an absolute
    list-bucketing directory: ``hivepark.skew.locations`` with ``\\"/`` or ``://`` in it. The
    partial index's own, so a query repeats it word for word (with literals, no parameters: SQLite
    and PostgreSQL use a partial index only when the query's WHERE holds its condition).

    >>> print(absolute_skew_condition("sqlite", "p"))
    instr(p, 'hivepark.skew.locations') > 0 AND (instr(p, '\\"/') > 0 OR instr(p, '://') > 0)
    """
    if dialect == "postgresql":  # (an E'' string: the same under standard_conforming_strings off)
        find, quote_slash = "strpos", "E'\\\\\"/'"
    else:
        find, quote_slash = "instr", "'\\\"/'"
    return (f"{find}({column}, 'hivepark.skew.locations') > 0 AND "
            f"({find}({column}, {quote_slash}) > 0 OR {find}({column}, '://') > 0)")


def _v6_absolute_skew_index(conn: Connection) -> None:
    """Version 6: a partial index of the partitions whose parameters may record an absolute
    list-bucketing directory, so that the check of a directory against SET SKEWED LOCATION's
    (catalog/sql.py skewed_locations_overlapping, beside version 5's location check) reads those
    few rather than every partition's parameters (16.6 ms at 300,000 on SQLite)."""
    cond = absolute_skew_condition(conn.dialect.name, "parameters")
    conn.exec_driver_sql(f"CREATE INDEX {ABSOLUTE_SKEW_INDEX} ON hivepark_partitions (tbl_id) WHERE {cond}")


def new_uid() -> str:
    """A table's ``uid``: 128 random bits."""
    return secrets.token_hex(16)


#: Migration n (1-based) is ``MIGRATIONS[n - 1]``. Append, never edit or reorder.
MIGRATIONS: list[Migration] = [_v1_initial, _v2_covering_key_indexes, _v3_table_uid, _v4_statements,
                               _v5_location_index, _v6_absolute_skew_index]


def latest_version() -> int:
    return len(MIGRATIONS)


def read_version(conn: Connection) -> int:
    """The schema version recorded in the metastore; 0 for an empty database."""
    if not inspect(conn).has_table(SCHEMA_TABLE):
        return 0
    version = conn.execute(select(SchemaRow.version).where(SchemaRow.id == 1)).scalar()
    return int(version or 0)


def upgrade(conn: Connection) -> int:
    """Brings the schema on ``conn`` (inside a transaction) to the latest version.

    Creates ``hivepark_schema`` when missing, runs every migration newer than the recorded
    version, records the new version and returns it. Raises MetastoreError when the
    metastore was written by a newer hivepark.
    """
    if not inspect(conn).has_table(SCHEMA_TABLE):
        Base.metadata.tables[SCHEMA_TABLE].create(conn)
    current = read_version(conn)
    target = latest_version()
    if current > target:
        raise MetastoreError(
            f"The metastore schema is version {current}, but this hivepark only knows "
            f"versions up to {target}. Upgrade hivepark to open this metastore.")
    for version in range(current + 1, target + 1):
        MIGRATIONS[version - 1](conn)
    if current == target:
        return current
    now = int(time.time())
    if conn.execute(text(f"SELECT count(*) FROM {SCHEMA_TABLE}")).scalar():
        conn.execute(update(SchemaRow).values(version=target, updated_at=now))
    else:
        conn.execute(insert(SchemaRow).values(id=1, version=target, updated_at=now))
    return target
