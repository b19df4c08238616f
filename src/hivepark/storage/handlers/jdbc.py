"""The JDBC storage handler (Hive's ``org.apache.hive.storage.jdbc.JdbcStorageHandler``).

Table properties are Hive's ``hive.sql.*``: ``database.type`` (POSTGRES, MYSQL, MARIADB,
and SQLITE, which Hive lacks), ``jdbc.driver`` (defaults per type), ``jdbc.url``,
``dbcp.username``, ``dbcp.password``, ``table`` (optionally ``schema``) or ``query``,
``partitionColumn``, ``numPartitions``, ``lowerBound``, ``upperBound``.

Reads go through Spark's own JDBC source, but hivepark writes the statement:
``SELECT "src" AS "hive", ... FROM <table or (query)> WHERE <pushed>`` in the database's
dialect (:mod:`hivepark.storage.handlers.jdbc_sql`), with Spark's own predicate pushdown
switched off, so the decision made by :meth:`JdbcStorageHandler.decompose_predicate` is
the one that holds. Splits follow Hive's interval splitter: ``numPartitions`` ranges over
``partitionColumn`` between the bounds of the properties (else the source's MIN/MAX of the
pushed rows); the first range also takes NULLs, so every row is read exactly once.

Columns left out of CREATE are read from the source with SQLAlchemy and mapped to Hive
types (:func:`hive_type_of`); the source is reached from Python through a SQLAlchemy URL
derived from the JDBC URL (psycopg, PyMySQL or sqlite3), or ``hivepark.sql.sqlalchemy.url``.
"""

from __future__ import annotations

import datetime
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

import sqlalchemy as sa
from sqlglot import exp

from hivepark.errors import (
    CommitConflict,
    DataError,
    ExecutionError,
    HiveParkError,
    NotFoundError,
    SemanticError,
    UnsupportedError,
    UserInputError,
    first_line,
    mask_credentials,
)
from hivepark.expr.nodes import (
    And,
    Expr,
    GreaterThanOrEqual,
    IsNull,
    LessThan,
    Or,
    and_all,
)
from hivepark.expr.visitors import conjuncts
from hivepark.plan.pushdown import DecomposedPredicate
from hivepark.storage import fs
from hivepark.storage.commit import Journal, abandoned_journals, fault_point, state_dir
from hivepark.storage.formats import sql_name
from hivepark.storage.handlers.base import PushedFilter, StorageHandler, current_environment
from hivepark.storage.handlers.jdbc_sql import (
    SQLGLOT_DIALECT,
    SourceColumn,
    SqlTranslator,
    ident,
    sqlite_affinity,
    sqlite_datetime,
)
from hivepark.types import HiveType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hivepark.catalog.models import Table

P = "hive.sql."
DATABASE_TYPE = P + "database.type"
DRIVER = P + "jdbc.driver"
URL = P + "jdbc.url"
USER = P + "dbcp.username"
PASSWORD = P + "dbcp.password"
TABLE = P + "table"
SCHEMA = P + "schema"
QUERY = P + "query"
PARTITION_COLUMN = P + "partitionColumn"
NUM_PARTITIONS = P + "numPartitions"
LOWER_BOUND = P + "lowerBound"
UPPER_BOUND = P + "upperBound"
SQLALCHEMY_URL = "hivepark.sql.sqlalchemy.url"
FETCH_SIZE = "hivepark.sql.fetchSize"

DATABASE_TYPES = ("POSTGRES", "MYSQL", "MARIADB", "SQLITE")
DEFAULT_DRIVERS = {"POSTGRES": "org.postgresql.Driver", "MYSQL": "org.mariadb.jdbc.Driver",
                   "MARIADB": "org.mariadb.jdbc.Driver", "SQLITE": "org.sqlite.JDBC"}
SCAN_ALIAS = "hp_scan"
SOURCE_ALIAS = "hp_src"


def _props(properties: Mapping[str, str]) -> dict[str, str]:
    """Property names are matched case-insensitively (Hive's are camel-cased)."""
    return {k.lower(): v for k, v in properties.items()}


def _get(props: Mapping[str, str], key: str) -> str | None:
    return props.get(key.lower())


# ------------------------------------------------------------------ source types -> Hive

_PG_SIMPLE = {"smallint": "smallint", "int2": "smallint", "integer": "int", "int": "int", "int4": "int",
              "serial": "int", "bigint": "bigint", "int8": "bigint", "bigserial": "bigint",
              "real": "float", "float4": "float", "double precision": "double", "float8": "double",
              "float": "double", "text": "string", "boolean": "boolean", "bool": "boolean", "date": "date",
              "timestamp": "timestamp", "timestamp without time zone": "timestamp",
              "timestamp with time zone": "timestamp", "bytea": "binary", "uuid": "string",
              "json": "string", "jsonb": "string", "citext": "string"}
_MY_SIMPLE = {"tinyint": "tinyint", "smallint": "smallint", "mediumint": "int", "int": "int", "integer": "int",
              "bigint": "bigint", "float": "float", "double": "double", "real": "double", "text": "string",
              "tinytext": "string", "mediumtext": "string", "longtext": "string", "date": "date",
              "datetime": "timestamp", "timestamp": "timestamp", "blob": "binary", "tinyblob": "binary",
              "mediumblob": "binary", "longblob": "binary", "json": "string", "boolean": "boolean",
              "bool": "boolean"}


def hive_type_of(database_type: str, declared: str, column: str) -> str:
    """The Hive type a source column is read as.

    Raises:
        UnsupportedError: a type Hive has no counterpart for (the message names the column
            and says how to read it anyway).

    >>> hive_type_of("POSTGRES", "NUMERIC(12, 2)", "x"), hive_type_of("MARIADB", "INTEGER(10) UNSIGNED", "x")
    ('decimal(12,2)', 'bigint')
    >>> hive_type_of("SQLITE", "VARCHAR(20)", "x"), hive_type_of("MYSQL", "TINYINT(1)", "x")
    ('string', 'boolean')
    >>> hive_type_of("POSTGRES", "timestamp(3) without time zone", "x"), hive_type_of("POSTGRES", "bpchar", "x")
    ('timestamp', 'char(1)')
    >>> hive_type_of("MARIADB", "ENUM('a','b(c')", "x"), hive_type_of("MYSQL", "SET('x','y')", "x")
    ('string', 'string')
    """
    raw = " ".join(declared.strip().lower().split())
    if database_type in ("MYSQL", "MARIADB") and re.match(r"(enum|set)\s*\(", raw):
        return "string"  # ENUM('a','b') / SET('x','y'): read as their text
    raw = re.sub(r"^(timestamp|time)\s*\(\s*\d+\s*\)", r"\1", raw)  # PostgreSQL's timestamp(3) ...
    unsigned = " unsigned" in raw
    raw = raw.replace(" unsigned", "").replace(" zerofill", "")
    m = re.fullmatch(r"([a-z ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?(?: collate .*| character set .*)?", raw)
    base, p, s = (m.group(1), m.group(2), m.group(3)) if m else (raw, None, None)
    fail = UnsupportedError(
        f"Column '{column}' has type {declared} in the {database_type} source, which has no Hive "
        "counterpart: list the columns in CREATE TABLE and use hive.sql.query with a CAST to a "
        "supported type")
    if database_type == "SQLITE":
        aff = sqlite_affinity(raw)
        if aff == "INTEGER":
            return "boolean" if base in ("boolean", "bool") else "bigint"
        if aff == "TEXT":
            return "string"
        if aff == "REAL":
            return "double"
        if base in ("date",):
            return "date"
        if base in ("datetime", "timestamp"):
            return "timestamp"
        if base in ("boolean", "bool"):
            return "boolean"
        raise fail
    if base in ("numeric", "decimal", "dec", "fixed"):
        if p is None:
            return "decimal(38,18)" if database_type == "POSTGRES" else "decimal(10,0)"
        if int(p) > 38:
            raise fail
        return f"decimal({p},{s or 0})"
    if base in ("varchar", "character varying", "nvarchar"):
        return f"varchar({p})" if p is not None and int(p) <= 65535 else "string"
    if base in ("char", "character", "bpchar", "nchar"):
        return f"char({p or 1})" if int(p or 1) <= 255 else "string"
    if base in ("binary", "varbinary", "bit varying"):
        return "binary"
    if database_type == "POSTGRES":
        hive = _PG_SIMPLE.get(base)
    else:
        if base == "tinyint" and p == "1" and not unsigned:
            return "boolean"  # MySQL's BOOLEAN; the driver reads it as BIT(1)
        if base == "bit":
            if p in (None, "1"):
                return "boolean"
            raise fail
        if base in ("enum", "set"):
            return "string"
        hive = _MY_SIMPLE.get(base)
        if unsigned and hive is not None:
            hive = {"tinyint": "smallint", "smallint": "int", "int": "bigint",
                    "bigint": "decimal(20,0)"}.get(hive, hive)
    if hive is None:
        raise fail
    return hive


# ------------------------------------------------------------------ connections

_engines: dict[str, sa.engine.Engine] = {}
_engines_lock = threading.Lock()
_source_column_cache: dict[tuple[Any, ...], dict[str, SourceColumn]] = {}


def sqlalchemy_url(props: Mapping[str, str]) -> sa.URL | str:
    """The SQLAlchemy URL of the source (from the JDBC URL, unless given)."""
    given = _get(props, SQLALCHEMY_URL)
    if given:
        return given
    jdbc_url = _get(props, URL) or ""
    if not jdbc_url.startswith("jdbc:"):
        raise UserInputError(f"{URL} must be a JDBC URL (jdbc:...), got '{jdbc_url}'")
    rest = jdbc_url[len("jdbc:"):]
    scheme = rest.split(":", 1)[0].lower()
    if scheme == "sqlite":
        path = rest[len("sqlite:"):].split("?", 1)[0]
        return sa.URL.create("sqlite", database=path or None)
    drivers = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql", "mariadb": "mysql+pymysql"}
    if scheme not in drivers:
        raise UserInputError(f"Unsupported JDBC URL scheme '{scheme}' in {URL}; give {SQLALCHEMY_URL} as well")
    parts = urlsplit(rest)
    query = dict(parse_qsl(parts.query))
    user = _get(props, USER) or query.pop("user", None)
    password = _get(props, PASSWORD) or query.pop("password", None)
    return sa.URL.create(drivers[scheme], username=user, password=password, host=parts.hostname,
                         port=parts.port, database=parts.path.lstrip("/") or None)


def absolute_sqlite_url(url: str) -> str:
    """A JDBC or SQLAlchemy URL of a SQLite file with a relative path made absolute, against
    this process's working directory: Spark's executors open the file in their own working
    directories (a cluster's: a new, empty database each). Others unchanged.

    >>> import os; here = os.getcwd().rstrip("/")
    >>> absolute_sqlite_url("jdbc:sqlite:shop.db") == f"jdbc:sqlite:{here}/shop.db"
    True
    >>> absolute_sqlite_url("jdbc:sqlite:file:db/s.db?mode=ro") == f"jdbc:sqlite:file:{here}/db/s.db?mode=ro"
    True
    >>> absolute_sqlite_url("sqlite:///s.db") == f"sqlite:///{here}/s.db"
    True
    >>> [absolute_sqlite_url(u) for u in ("jdbc:sqlite:/d/s.db", "jdbc:sqlite::memory:", "jdbc:postgresql://h/db")]
    ['jdbc:sqlite:/d/s.db', 'jdbc:sqlite::memory:', 'jdbc:postgresql://h/db']
    """
    import os

    for prefix in ("jdbc:sqlite:file:", "jdbc:sqlite:", "sqlite:///"):
        if url.lower().startswith(prefix):
            path, sep, query = url[len(prefix):].partition("?")
            if path and not path.startswith(("/", ":")):  # ":memory:", sqlite-jdbc's ":resource:"
                return url[:len(prefix)] + os.path.abspath(path) + sep + query
            return url
    return url


def run_sql(props: Mapping[str, str], sql: str) -> list[tuple[Any, ...]]:
    """Rows of one statement run as it is (no parameter markers: a '%' or ':' in a literal stays);
    none for a statement that returns none (DDL)."""
    raw = engine_for(props).raw_connection()
    try:
        cur = raw.cursor()
        cur.execute(sql)
        rows = [tuple(r) for r in cur.fetchall()] if cur.description is not None else []
        cur.close()
        raw.commit()
        return rows
    finally:
        raw.close()


def engine_for(props: Mapping[str, str]) -> sa.engine.Engine:
    url = sqlalchemy_url(props)
    key = url.render_as_string(hide_password=False) if isinstance(url, sa.URL) else url
    with _engines_lock:
        eng = _engines.get(key)
        if eng is None:
            eng = _engines[key] = sa.create_engine(url, pool_pre_ping=True)
    return eng


# ------------------------------------------------------------------ the handler

class JdbcStorageHandler(StorageHandler):
    """Tables in PostgreSQL, MariaDB/MySQL or SQLite, read through Spark's JDBC source."""

    name = "jdbc"
    aliases = ("org.apache.hive.storage.jdbc.JdbcStorageHandler",)
    supports_writes = True
    secret_properties = frozenset({PASSWORD, "hive.sql.dbcp.password.keystore", "hive.sql.dbcp.password.key"})

    # -- properties ----------------------------------------------------------------------
    def create_table(self, table: Table) -> Table:
        """A SQLite file named by a relative path (``jdbc:sqlite:shop.db``) is recorded by its
        absolute path, resolved against the driver's working directory now
        (:func:`absolute_sqlite_url`): every later read, on the driver or an executor, opens
        the file CREATE TABLE read, and SHOW CREATE TABLE shows which."""
        urls = (URL.lower(), SQLALCHEMY_URL.lower())
        props = {k: absolute_sqlite_url(v) if k.lower() in urls else v for k, v in table.properties.items()}
        return super().create_table(table.evolve(properties=props))

    def validate(self, properties: Mapping[str, str]) -> None:
        props = _props(properties)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        if db not in DATABASE_TYPES:
            raise UserInputError(f"{DATABASE_TYPE} must be one of {', '.join(DATABASE_TYPES)}, got '{db}'")
        if not _get(props, URL):
            raise UserInputError(f"The JDBC storage handler needs {URL}")
        if bool(_get(props, TABLE)) == bool(_get(props, QUERY)):
            raise UserInputError(f"The JDBC storage handler needs exactly one of {TABLE} and {QUERY}")
        n = _get(props, NUM_PARTITIONS)
        if n is not None and (not n.strip().isdigit() or int(n) < 1):
            raise UserInputError(f"{NUM_PARTITIONS} must be a positive integer, got '{n}'")
        if n is not None and int(n) > 1 and not _get(props, PARTITION_COLUMN):
            raise UserInputError(f"{NUM_PARTITIONS} > 1 needs {PARTITION_COLUMN}")

    @staticmethod
    def database_type(properties: Mapping[str, str]) -> str:
        return (_get(_props(properties), DATABASE_TYPE) or "").upper()

    def _source_columns(self, props: Mapping[str, str]) -> list[SourceInfo]:
        """The table's columns as the source declares them (:class:`SourceInfo`); on PostgreSQL
        the type as ``format_type`` gives it and whether its collation is deterministic
        (:func:`_pg_columns`), on MariaDB the character set, on SQLite whether the table is
        STRICT."""
        eng = engine_for(props)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        table, query = _get(props, TABLE), _get(props, QUERY)
        if query:
            raise UnsupportedError(f"The columns of a {QUERY} table cannot be read from the source: list them "
                                   "in CREATE TABLE")
        assert table is not None
        schema = _get(props, SCHEMA)
        if schema is None and "." in table:
            schema, table = table.rsplit(".", 1)
        with eng.connect() as conn:
            if db == "SQLITE":
                rows = conn.exec_driver_sql(f"PRAGMA table_info({_sqlite_quote(table)})").fetchall()
                if not rows:
                    raise SemanticError(f"Table '{table}' does not exist in the SQLite database")
                try:  # SQLite 3.37's; an older one has no STRICT tables
                    listed = conn.exec_driver_sql(f"PRAGMA table_list({_sqlite_quote(table)})").fetchall()
                except sa.exc.DBAPIError:
                    listed = []
                strict = any(bool(r[5]) for r in listed)
                return [SourceInfo(r[1], r[2] or "", strict=strict) for r in rows]
            if db == "POSTGRES":
                quoted = ".".join('"' + part.replace('"', '""') + '"'
                                  for part in ((schema,) if schema else ()) + (table,))
                found = _pg_columns(conn.exec_driver_sql(_PG_COLUMNS, {"t": quoted}).fetchall())
                if not found:
                    raise SemanticError(f"Table '{table}' does not exist in the POSTGRES source")
                return found
            try:
                cols = sa.inspect(conn).get_columns(table, schema=schema)
            except sa.exc.NoSuchTableError:
                raise SemanticError(f"Table '{table}' does not exist in the {db} source") from None
            charsets = {r[0]: r[1] for r in conn.exec_driver_sql(
                "SELECT COLUMN_NAME, CHARACTER_SET_NAME FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = COALESCE(%s, DATABASE()) AND TABLE_NAME = %s", (schema, table))}
            return [SourceInfo(c["name"], _type_text(c["type"], eng.dialect), charset=charsets.get(c["name"]))
                    for c in cols]

    def _query_columns(self, props: Mapping[str, str]) -> list[SourceInfo]:
        """The result columns of a ``hive.sql.query`` (as hivepark sends it) as the source types
        them: on PostgreSQL those of a temporary view of it (its catalog then answers as for a
        table, collations included), on MariaDB those of an empty temporary table made of it
        (``SHOW FULL COLUMNS``: type and collation); both are gone with the probe's
        transaction or session. Empty when the source refuses the probe (a user without the
        TEMPORARY privilege): no column is then taken as exact. Not for SQLite (its query
        columns have no affinity, and nothing but IS NULL is pushed on them)."""
        db = (_get(props, DATABASE_TYPE) or "").upper()
        dialect = SQLGLOT_DIALECT[db]
        relation = self._relation(props, dialect)
        query = relation.this.sql(dialect=dialect)
        name = f"hp_probe_{uuid.uuid4().hex[:12]}"
        raw = engine_for(props).raw_connection()
        try:
            cur = raw.cursor()
            if db == "POSTGRES":
                cur.execute(f'CREATE TEMPORARY VIEW "{name}" AS {query}')
                cur.execute(_PG_COLUMNS, {"t": f'pg_temp."{name}"'})
                return _pg_columns(cur.fetchall())
            cur.execute(f"CREATE TEMPORARY TABLE `{name}` AS SELECT * FROM ({query}) `{SOURCE_ALIAS}` LIMIT 0")
            try:
                cur.execute(f"SHOW FULL COLUMNS FROM `{name}`")
                rows = cur.fetchall()
            finally:
                cur.execute(f"DROP TEMPORARY TABLE `{name}`")
            return [SourceInfo(r[0], r[1], charset=r[2].split("_", 1)[0] if r[2] else None) for r in rows]
        except Exception:  # noqa: BLE001 - the driver's own error: the types stay unknown
            return []
        finally:
            try:
                raw.rollback()
            finally:
                raw.close()

    def schema(self, properties: Mapping[str, str]) -> list[tuple[str, str]]:
        props = _props(properties)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        return [(c.name.lower(), hive_type_of(db, c.declared, c.name)) for c in self._source_columns(props)]

    def _columns(self, table: Table) -> dict[str, SourceColumn]:
        """The table's Hive columns with their source names (matched ignoring case) and, for
        SQLite, their declared types' affinity. Read from the source once per table definition
        in this process (a query asks for them several times: decomposing, the statement,
        EXPLAIN), as Hive reads a table's columns from its metastore."""
        key = (table.qualified_name, tuple(sorted(table.properties.items())),
               tuple((c.name, c.type) for c in table.columns))
        with _engines_lock:
            cached = _source_column_cache.get(key)
        if cached is None:
            try:
                cached = self._read_columns(table)
            except (sa.exc.OperationalError, sa.exc.InterfaceError) as e:  # the first contact of a statement
                db = self.database_type(table.properties)
                reason = mask_credentials(first_line(e.orig or e))
                raise ExecutionError(
                    f"The {db} source of {table.qualified_name} cannot be reached ({type(e.orig or e).__name__}: "
                    f"{reason}). Check {URL} and the credentials ({USER}, {PASSWORD}), and that the database "
                    "is running.") from None
            with _engines_lock:
                _source_column_cache[key] = cached
        return cached

    def _read_columns(self, table: Table) -> dict[str, SourceColumn]:
        props = _props(table.properties)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        declared: dict[str, SourceInfo] = {}
        if _get(props, TABLE):
            declared = {c.name.lower(): c for c in self._source_columns(props)}
        elif db != "SQLITE":
            declared = {c.name.lower(): c for c in self._query_columns(props)}
        out = {}
        for c in table.columns:
            info = declared.get(c.name.lower())
            typ = HiveType.parse(c.type)
            if info is None:  # not known (SQLite: no affinity, nothing but IS NULL pushed)
                out[c.name] = SourceColumn(c.name, c.name, typ, exact=db == "SQLITE")
                continue
            exact = db == "SQLITE" or (info.deterministic and _compares_as(db, info.declared, typ, c.name))
            affinity = sqlite_affinity(info.declared) if db == "SQLITE" else None
            out[c.name] = SourceColumn(c.name, info.name, typ, affinity, exact=exact, charset=info.charset,
                                       strict=info.strict)
        return out

    # -- pushdown ------------------------------------------------------------------------
    def decompose_predicate(self, table: Table, predicate: Expr) -> DecomposedPredicate | None:
        """Each top-level conjunct the source compares exactly as Spark is pushed whole; the
        rest is the residual, and of it what the source can narrow to a wider range than it
        is pushed as that range too (MariaDB's dates: ``SqlTranslator.widened``): the source
        reads fewer rows, by an index on the column, and Spark applies the conjunct."""
        translator = SqlTranslator(self.database_type(table.properties), self._columns(table))
        pushed: list[Expr] = []
        residual: list[Expr] = []
        for part in conjuncts(predicate):
            if translator.translate(part) is not None:
                pushed.append(part)
                continue
            residual.append(part)
            wider = translator.widened(part)
            if wider is not None:
                pushed.append(wider)
        if not pushed:
            return None
        return DecomposedPredicate(and_all(*pushed), and_all(*residual) if residual else None)

    # -- the statement ---------------------------------------------------------------------
    def _relation(self, props: Mapping[str, str], dialect: str) -> exp.Expression:
        query = _get(props, QUERY)
        if query:
            return exp.Subquery(this=exp.maybe_parse(query, dialect=dialect), alias=exp.TableAlias(
                this=ident(SOURCE_ALIAS)))
        table = _get(props, TABLE) or ""
        schema = _get(props, SCHEMA)
        if schema is None and "." in table:
            schema, table = table.rsplit(".", 1)
        return exp.Table(this=ident(table), db=ident(schema) if schema else None)

    def statement(self, table: Table, columns: Sequence[str], pushed: PushedFilter | None) -> str:
        """The SELECT hivepark sends (before the split ranges), in the source's dialect."""
        props = _props(table.properties)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        cols = self._columns(table)
        translator = SqlTranslator(db, cols, stored_dates=True)  # the pushed filter's wider ranges too
        wanted = self._wanted(table, columns)
        typed = self._sqlite_types(table, wanted)
        select = [exp.alias_(_sqlite_datetime(cols[c].source) if typed.get(c) in ("date", "timestamp")
                             else exp.column(ident(cols[c].source)), ident(c)) for c in wanted]
        q = exp.select(*select).from_(self._relation(props, translator.dialect))
        if pushed is not None:
            where = translator.translate(pushed.expr)
            if where is None:
                raise UnsupportedError(f"The pushed filter {pushed.text} cannot be written for {db}")
            q = q.where(where)
        return translator.sql(q)

    def _wanted(self, table: Table, columns: Sequence[str]) -> list[str]:
        """The columns the SELECT reads: the query's, the split column, at least one."""
        props = _props(table.properties)
        wanted = list(columns)
        part_col = (_get(props, PARTITION_COLUMN) or "").lower()
        if part_col and part_col not in wanted and self._num_partitions(props) > 1:
            wanted.append(part_col)
        return wanted or [table.columns[0].name]

    def _sqlite_types(self, table: Table, wanted: Sequence[str]) -> dict[str, str]:
        """A SQLite source's columns among ``wanted``, with the Spark types Spark is told to
        read them as (``customSchema``): the table's own, not those sqlite-jdbc reports.

        The driver reports a column declared INTEGER as a 32-bit INT (5000000000 read as
        705032704) and BIGINT as DECIMAL(20,0) (a NULL in it failed the read). And SQLite has
        no date type: a column declared DATE holds text (Python's sqlite3 and SQLite's
        ``date()`` write ``2024-01-05``), an integer (sqlite-jdbc writes milliseconds) or a real
        (a Julian day). The driver reads the numbers, and text only in its own form
        ``yyyy-MM-dd HH:mm:ss.SSS``: such text is given in that form (:func:`_sqlite_datetime`)."""
        if (_get(_props(table.properties), DATABASE_TYPE) or "").upper() != "SQLITE":
            return {}
        cols = self._columns(table)
        return {c: cols[c].hive_type.spark_ddl for c in wanted}

    @staticmethod
    def _num_partitions(props: Mapping[str, str]) -> int:
        n = _get(props, NUM_PARTITIONS)
        return int(n) if n else 1

    def split_predicates(self, table: Table, columns: Sequence[str], pushed: PushedFilter | None) -> list[str]:
        """Hive's interval splits over ``partitionColumn`` (empty: one split, no range)."""
        props = _props(table.properties)
        n = self._num_partitions(props)
        part_col = (_get(props, PARTITION_COLUMN) or "").lower()
        if n <= 1 or not part_col:
            return []
        cols = self._columns(table)
        if part_col not in cols:
            raise UserInputError(f"{PARTITION_COLUMN} '{part_col}' is not a column of {table.qualified_name}")
        col = cols[part_col]
        kind = col.hive_type.kind
        if kind not in ("int", "decimal", "float64", "float32", "date"):
            raise UnsupportedError(f"{PARTITION_COLUMN} '{part_col}' has type {col.hive_type.text}; splits need a "
                                   "numeric or date column")
        if kind == "date" and self.database_type(table.properties) == "SQLITE":
            # (its MIN/MAX compares text and numbers as they are stored, not as dates)
            raise UnsupportedError(f"{PARTITION_COLUMN} '{part_col}' is a DATE column of a SQLite source, which "
                                   "keeps dates as text or numbers in several forms; splits need a numeric column "
                                   "there")
        lo, hi = _get(props, LOWER_BOUND), _get(props, UPPER_BOUND)
        low: Any
        high: Any
        if lo is not None and hi is not None:
            low, high = _parse_bound(lo, kind), _parse_bound(hi, kind)
        else:
            low, high = self._min_max(table, col, pushed)
            if low is None:
                return []
        bounds = interval_bounds(low, high, n, kind)
        if not bounds:
            return []
        translator = SqlTranslator(self.database_type(table.properties), cols, outer=True)
        ranges: list[Expr] = [Or(LessThan(part_col, bounds[0]), IsNull(part_col))]
        ranges += [And(GreaterThanOrEqual(part_col, a), LessThan(part_col, b)) for a, b in zip(bounds, bounds[1:])]
        ranges.append(GreaterThanOrEqual(part_col, bounds[-1]))
        out = []
        for r in ranges:
            sql = translator.translate(r)
            if sql is None:
                raise UnsupportedError(f"Cannot write the split range {r} for this source")
            out.append(translator.sql(sql))
        return out

    def _min_max(self, table: Table, col: SourceColumn, pushed: PushedFilter | None) -> tuple[Any, Any]:
        props = _props(table.properties)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        translator = SqlTranslator(db, self._columns(table), stored_dates=True)
        ref = exp.column(ident(col.source))
        q = exp.select(exp.Min(this=ref), exp.Max(this=ref.copy())).from_(
            self._relation(props, translator.dialect))
        if pushed is not None:
            where = translator.translate(pushed.expr)
            if where is not None:
                q = q.where(where)
        if translator.dialect == "mysql" and col.hive_type.kind == "date":
            # the bounds of the real dates: a zero date ('0000-00-00', '2024-00-00') is no bound, but
            # still in the first range (below every real date) or one of the others
            q = q.where(exp.and_(*[exp.NEQ(this=exp.Anonymous(this=f, expressions=[ref.copy()]),
                                           expression=exp.Literal.number(0)) for f in ("MONTH", "DAYOFMONTH")]))
        if translator.dialect == "postgres" and col.hive_type.kind == "date":
            q = q.where(exp.Anonymous(this="isfinite", expressions=[ref.copy()]))  # no bound: 'infinity'
        row = run_sql(props, translator.sql(q))[0]
        low, high = row
        if low is None:
            return None, None
        return _parse_bound(str(low), col.hive_type.kind), _parse_bound(str(high), col.hive_type.kind)

    def describe_scan(self, table: Table, columns: Sequence[str], pushed: PushedFilter | None) -> str:
        """The exact SQL (literals shown; the password is never part of it) and the splits."""
        sql = self.statement(table, columns, pushed)
        props = _props(table.properties)
        n = self._num_partitions(props)
        part_col = _get(props, PARTITION_COLUMN)
        if n > 1 and part_col:
            if _get(props, LOWER_BOUND) is not None and _get(props, UPPER_BOUND) is not None:
                splits = self.split_predicates(table, columns, pushed)
                return sql + "\n" + "\n".join(f"  split {i + 1}: WHERE {s}" for i, s in enumerate(splits))
            return sql + f"\n  {n} splits over {part_col} (bounds: MIN/MAX of the pushed rows at run time)"
        return sql

    # -- Spark ---------------------------------------------------------------------------
    def jdbc_options(self, properties: Mapping[str, str]) -> dict[str, str]:
        """Spark's JDBC options for the source, Spark's own pushdown switched off."""
        props = _props(properties)
        db = (_get(props, DATABASE_TYPE) or "").upper()
        opts = {"url": _get(props, URL) or "", "driver": _get(props, DRIVER) or DEFAULT_DRIVERS[db],
                "pushDownPredicate": "false", "pushDownAggregate": "false", "pushDownLimit": "false",
                "pushDownOffset": "false", "pushDownTableSample": "false",
                "fetchsize": _get(props, FETCH_SIZE) or "10000"}
        if opts["url"].startswith("jdbc:mariadb:"):
            # Spark picks its MySQL dialect (backquoted names) by the URL's scheme only
            opts["url"] = "jdbc:mysql:" + opts["url"][len("jdbc:mariadb:"):]
            opts["permitMysqlScheme"] = "true"
        if _get(props, USER):
            opts["user"] = _get(props, USER) or ""
        if _get(props, PASSWORD):
            opts["password"] = _get(props, PASSWORD) or ""
        return opts

    def read(self, spark: SparkSession, table: Table, columns: Sequence[str],
             pushed: PushedFilter | None, settings: Any) -> DataFrame:
        from pyspark.sql import functions as F

        sql = self.statement(table, columns, pushed)
        splits = self.split_predicates(table, columns, pushed)
        opts = self.jdbc_options(table.properties)
        typed = self._sqlite_types(table, self._wanted(table, columns))
        if typed:
            opts["customSchema"] = ", ".join(f"{sql_name(c)} {t}" for c, t in typed.items())
        relation = f"({sql}) {SCAN_ALIAS}"
        if splits:
            url = opts.pop("url")
            df = spark.read.jdbc(url, relation, predicates=splits, properties=opts)
        else:
            df = spark.read.format("jdbc").options(**opts).option("dbtable", relation).load()
        types = {c.name: HiveType.parse(c.type) for c in table.columns}
        by_lower = {f.lower(): f for f in df.columns}
        return df.select(*[F.col(f"`{by_lower[c]}`").cast(types[c].spark_ddl).alias(c) for c in columns])

    def write(self, spark: SparkSession, table: Table, df: DataFrame, overwrite: bool) -> None:

        write_all_or_nothing(self, spark, table, df, overwrite)


class SourceInfo(NamedTuple):
    """A column as the source declares it: its name and type, whether it compares text
    exactly (false for PostgreSQL's nondeterministic collations), (MariaDB) its character set,
    (SQLite) whether its table is STRICT."""

    name: str
    declared: str
    deterministic: bool = True
    charset: str | None = None
    strict: bool = False


# A PostgreSQL relation's columns from its catalog: ``format_type``'s text for every type
# (SQLAlchemy's reflection failed the whole table on one it cannot compile: ``point``,
# ``xml``), and whether the column's collation is deterministic (``to_jsonb`` reads
# ``collisdeterministic``, PostgreSQL 12's, as NULL on an older server).
_PG_COLUMNS = (
    "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
    "coalesce((to_jsonb(c) ->> 'collisdeterministic')::boolean, true) "
    "FROM pg_attribute a LEFT JOIN pg_collation c ON c.oid = a.attcollation "
    "WHERE a.attrelid = to_regclass(%(t)s) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum")


def _pg_columns(rows: Sequence[Sequence[Any]]) -> list[SourceInfo]:
    """The rows of :data:`_PG_COLUMNS` as :class:`SourceInfo`."""
    return [SourceInfo(name, typ, bool(deterministic)) for name, typ, deterministic in rows]


def _type_text(typ: Any, dialect: Any) -> str:
    """A reflected column type as the database declares it; a type SQLAlchemy cannot compile
    (reflected as NullType) as its name, so that only a column the table uses must map."""
    try:
        return str(typ.compile(dialect=dialect))
    except sa.exc.CompileError:
        return type(typ).__name__


# PostgreSQL types read as a Hive type whose values PostgreSQL compares otherwise than Spark:
# an unconstrained NUMERIC (read rounded to 18 decimals, compared unrounded), ``citext``
# (ignores case), and types read as STRING that compare as themselves, not as their text:
# ``uuid`` (its input ignores case: 'A0EE...' equals the 'a0ee...' Spark reads; a literal that
# is no uuid, 'x', is an error; no collation, no LIKE), ``jsonb`` (equal when the documents are:
# '{"a":1}' equals the '{"a": 1}' Spark reads) and ``json`` (no comparison operators at all)
_PG_INEXACT = frozenset({"numeric", "decimal", "citext", "uuid", "json", "jsonb"})


def _compares_as(db: str, declared: str, hive: HiveType, column: str) -> bool:
    """Whether the source compares a column declared ``declared`` as Spark compares values of
    ``hive`` (the type CREATE TABLE gave it): the source type must read as the same kind (a
    DECIMAL as the same precision and scale) and compare exactly (not PostgreSQL's
    :data:`_PG_INEXACT` types; a nondeterministic collation is the caller's, from
    :func:`_pg_columns`).

    >>> _compares_as("POSTGRES", "numeric(12,2)", HiveType.parse("decimal(12,2)"), "x")
    True
    >>> [_compares_as("POSTGRES", t, HiveType.parse(h), "x") for t, h in (("numeric", "decimal(38,18)"),
    ...     ("citext", "string"), ("text", "int"), ("integer", "bigint"), ("uuid", "string"), ("jsonb", "string"))]
    [False, False, False, True, False, False]
    """
    raw = " ".join(declared.lower().split())
    if db == "POSTGRES" and raw in _PG_INEXACT:
        return False
    if db in ("MYSQL", "MARIADB") and re.match(r"(enum|set)\s*\(", raw):
        return False  # read padded to the longest member ('b' as 'b  '), compared unpadded
    try:
        source = HiveType.parse(hive_type_of(db, declared, column))
    except (UnsupportedError, ValueError):
        return False
    if source.kind != hive.kind:
        return False
    return source.kind != "decimal" or source.precision_scale == hive.precision_scale


def _sqlite_datetime(source: str) -> exp.Expression:
    """A SQLite DATE or TIMESTAMP column as the reader takes it (:func:`sqlite_datetime`)."""
    return sqlite_datetime(exp.column(ident(source)))


def _sqlite_quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _parse_bound(text: str, kind: str) -> Any:
    try:
        if kind == "int":
            return int(Decimal(text.strip()))
        if kind == "decimal":
            return Decimal(text.strip())
        if kind in ("float64", "float32"):
            return float(text)
        if kind == "date":
            return datetime.date.fromisoformat(text.strip()[:10])
    except (ValueError, ArithmeticError):
        pass
    raise UserInputError(f"'{text}' is not a valid split bound for a {kind} column")


def interval_bounds(low: Any, high: Any, n: int, kind: str) -> list[Any]:
    """The ``n - 1`` inner boundaries of Hive's interval splitter between low and high
    (fewer when the range is too small; duplicates dropped).

    >>> interval_bounds(1, 100, 4, "int")
    [25, 50, 75]
    >>> interval_bounds(5, 6, 8, "int")
    [6]
    """
    if high <= low or n <= 1:
        return []
    if kind == "date":
        days = interval_bounds(low.toordinal(), high.toordinal(), n, "int")
        return [datetime.date.fromordinal(d) for d in days]
    out: list[Any] = []
    for i in range(1, n):
        if kind == "int":
            b = low + (high - low) * i // n
            b = max(b, low + 1)
        elif kind == "decimal":
            b = low + (high - low) * i / n
        else:
            b = low + (high - low) * i / n
        if b > low and (not out or b > out[-1]) and b <= high:
            out.append(b)
    return out


__all__ = ["JdbcStorageHandler", "SQLGLOT_DIALECT", "engine_for", "hive_type_of", "interval_bounds",
           "sqlalchemy_url"]


# ------------------------------------------------------------------ writes

def write_all_or_nothing(handler: JdbcStorageHandler, spark: SparkSession, table: Table, df: DataFrame,
                         overwrite: bool) -> None:
    """Spark writes the rows into a staging table beside the target, one transaction of the
    database moves them; the staging table is dropped. A journal in the warehouse names the
    staging table while it exists, so the next ``connect()`` drops the one of a killed writer
    (:func:`recover_stages`)."""
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

    if db in ("MYSQL", "MARIADB"):
        _check_transactional(props, table.qualified_name, schema, name)
    empty = exp.select(*[exp.column(ident(n)) for n in source_names]).from_(target.copy()).where("1 = 0")
    create = f"CREATE TABLE {sql(stage)} AS {sql(empty)}"
    stage_text = sql(stage)
    journal = _stage_journal(table, props, stage_text)
    dropped = False
    committing = False
    try:
        raw = engine_for(props).raw_connection()
        try:
            cur = raw.cursor()
            try:
                cur.execute(create)
                raw.commit()
            except Exception:
                dropped = True  # no staging table was made
                raise
            try:
                renamed = df.toDF(*source_names)
                opts = handler.jdbc_options(table.properties)
                opts = {k: v for k, v in opts.items() if not k.startswith("pushDown") and k != "fetchsize"}
                try:
                    (renamed.write.format("jdbc").options(**opts).option("dbtable", stage_text)
                     .option("isolationLevel", "READ_COMMITTED").mode("append").save())
                except Exception as e:
                    # the staging table has the target's column types (and, on MariaDB, NOT NULL):
                    # a value too long for a VARCHAR(n), or a NULL, is refused by Spark's write;
                    # on SQLite another writer's lock stops it too
                    found = _spark_write_failure(e)
                    if found is None:
                        raise
                    raise _failure(found[0], db, table.qualified_name, name, *found[1:]) from None
                fault_point("jdbc_staged")
                col_list = ", ".join(sql(ident(n)) for n in source_names)
                if db == "SQLITE":
                    cur.execute("BEGIN IMMEDIATE")
                if overwrite:
                    if db == "POSTGRES":
                        # READ COMMITTED: a DELETE does not see rows another overwrite commits
                        # while it waits, so two overwrites would leave both their rows; this
                        # lock (readers pass, it excludes itself) runs them one after the other
                        cur.execute(f"LOCK TABLE {sql(target)} IN SHARE ROW EXCLUSIVE MODE")
                    cur.execute(f"DELETE FROM {sql(target)}")
                cur.execute(f"INSERT INTO {sql(target)} ({col_list}) SELECT {col_list} FROM {stage_text}")
                committing = True
                raw.commit()
                committing = False
            except BaseException:
                try:
                    raw.rollback()
                except Exception:  # noqa: BLE001 - the connection is gone: so is its transaction
                    pass
                raise
            finally:
                try:
                    cur.execute(f"DROP TABLE {stage_text}")
                    raw.commit()
                    dropped = True
                except Exception:  # noqa: BLE001 - the statement's own outcome stands; the journal stays
                    pass
        finally:
            raw.close()
    except Exception as e:
        failure = _source_failure(e, db, table.qualified_name, name, committing)
        if failure is None:
            raise
        raise failure from None
    finally:
        if journal is not None:
            if dropped:
                journal.close()
            else:  # the next connect() drops the staging table (a killed writer's too)
                journal.release()


def _check_transactional(props: Mapping[str, str], table: str, schema: str | None, name: str) -> None:
    """Refuses a write into a MariaDB/MySQL table of an engine without transactions (MyISAM,
    Aria, MEMORY, ...): its DELETE and INSERT cannot be rolled back, so a row the table refuses
    would leave part of the rows written (an overwrite: the old rows gone)."""
    with engine_for(props).connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT t.ENGINE, e.TRANSACTIONS FROM information_schema.TABLES t LEFT JOIN information_schema.ENGINES e "
            "ON e.ENGINE = t.ENGINE WHERE t.TABLE_SCHEMA = COALESCE(%s, DATABASE()) AND t.TABLE_NAME = %s",
            (schema, name)).first()
    if row is not None and row[0] is not None and str(row[1] or "").upper() != "YES":
        raise UnsupportedError(
            f"Cannot write to {table}: its source table {name} uses the {row[0]} engine, which has no transactions, "
            f"so a write that fails half-way could not be undone (hivepark's writes are all or nothing). Convert it "
            f"(ALTER TABLE {name} ENGINE=InnoDB) or write to a table of a transactional engine.")


_DRIVERS = ("sqlite3", "psycopg", "pymysql", "sqlalchemy")


def _source_failure(e: BaseException, db: str, table: str, name: str, committing: bool) -> HiveParkError | None:
    """The database driver's own error ``e`` (raised from Python, not from Spark) as what the
    user can act on (:func:`_failure`); None for any other error. A failure of the COMMIT
    itself leaves the outcome unknown, unless the database refused the rows."""
    if isinstance(e, HiveParkError) or type(e).__module__.split(".")[0] not in _DRIVERS:
        return None
    orig = getattr(e, "orig", None) or e  # SQLAlchemy's wrapper of the driver's error
    kind = type(orig).__name__
    reason = first_line(orig)
    code = orig.args[0] if getattr(orig, "args", None) else None
    if {c.__name__ for c in type(orig).__mro__} & {"IntegrityError", "DataError"}:
        outcome = "refused"
    elif _held(getattr(orig, "sqlstate", None) or "", reason) or code in (1205, 1213):
        outcome = "held"
    else:
        outcome = "unknown" if committing else "failed"
    return _failure(outcome, db, table, name, kind, reason)


def _held(sqlstate: str, message: str) -> bool:
    """Whether a database error says another writer's lock stopped the statement: a deadlock
    or serialization failure (40001, 40P01), a lock not available (55P03), SQLite's busy file,
    MariaDB's lock wait timeout."""
    return (sqlstate in ("40001", "40P01", "55P03") or "database is locked" in message
            or "SQLITE_BUSY" in message or "Lock wait timeout exceeded" in message)


def _failure(outcome: str, db: str, table: str, name: str, kind: str, reason: str) -> HiveParkError:
    """The error of a write the source stopped: ``refused`` rows (a DataError: change the
    rows), ``held`` by another writer (a CommitConflict: run it again), ``unknown`` (its COMMIT
    failed) or ``failed`` (before its transaction committed: nothing was written)."""
    said = f"The {db} source of {table}"
    unchanged = f"nothing was written and {name} is as it was"
    if outcome == "refused":
        return DataError(f"{said} refused the rows ({kind}: {reason}); {unchanged}. Change the rows (or the "
                         "source table's constraints) and run the statement again.")
    if outcome == "held":
        return CommitConflict(f"{said} is held by another writer ({kind}: {reason}); {unchanged}. Run the "
                              "statement again when that writer is done.")
    if outcome == "unknown":
        return ExecutionError(f"{said} failed at the commit of the rows ({kind}: {reason}): whether {name} "
                              "holds them is unknown. Check it before running the statement again.")
    return ExecutionError(f"{said} failed ({kind}: {reason}); {unchanged}. Check the source (is the database "
                          f"running, does its table {name} exist?) and run the statement again.")


def _spark_write_failure(e: BaseException) -> tuple[str, str, str] | None:
    """``(outcome, class, message)`` (see :func:`_failure`) of the database's own error when
    Spark's JDBC write failed because the database refused a row (SQLSTATE class 22, data
    exception: a value too long, out of range; 23, integrity constraint violation: NOT NULL,
    UNIQUE, CHECK) or another writer's lock stopped it (:func:`_held`); the innermost such
    cause (PostgreSQL's batch error quotes the statement, its cause only the reason). None
    for any other failure (the connection, the JVM)."""
    throwable = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    found = None
    try:
        for _ in range(32):
            if throwable is None:
                break
            try:
                state = str(throwable.getSQLState() or "")
            except Exception:  # noqa: BLE001 - not a java.sql.SQLException
                state = ""
            message = (str(throwable.getMessage() or "").strip().splitlines() or [""])[0]
            outcome = "refused" if state[:2] in ("22", "23") else "held" if _held(state, message) else None
            if outcome is not None:
                found = (outcome, str(throwable.getClass().getSimpleName()), message)
            cause = throwable.getCause()
            if cause is None or cause.equals(throwable):
                break
            throwable = cause
    except Exception:  # noqa: BLE001 - the JVM is gone: what was read so far
        pass
    return found


JOURNAL_KIND = "jdbc_stage"


def stage_dir(warehouse: str) -> str:
    """Where the journals of JDBC writes in flight are (one per staging table)."""
    return f"{state_dir(fs.normalize(warehouse))}/jdbc"


def _stage_journal(table: Table, props: Mapping[str, str], stage: str) -> Journal | None:
    """The journal naming ``stage`` while it exists: the table, and the source's properties
    but its secrets (the password, one in the URL: read from the metastore's table at
    recovery). None when the handler is used outside a statement (no warehouse to keep it in)."""
    try:
        env = current_environment()
    except UnsupportedError:
        return None
    secret = JdbcStorageHandler.secret_properties | {SQLALCHEMY_URL}
    source = {k: mask_credentials(v) if k == URL else v for k, v in props.items() if k not in secret}
    return Journal(f"{stage_dir(env.warehouse)}/{uuid.uuid4().hex}.json", {
        "kind": JOURNAL_KIND, "table": [table.db, table.name], "stage": stage, "source": source})


def recover_stages(warehouse: str, catalog: Any) -> int:
    """Drops the staging tables of JDBC writes whose process is proven dead (their journal is
    left: killed, or the drop failed); returns how many.

    Raises:
        JournalError: a journal cannot be read (it names the file).
        OSError: a staging table could not be dropped (its name, the source and the reason);
            its journal stays, for the next ``connect()``, while its table is in the metastore
            (without it, the source's password is not known: the message says to drop it by hand)."""
    cleaned = 0
    failed = []
    for path, j in abandoned_journals(stage_dir(warehouse)):
        source = dict(j.get("source") or {})
        db_name, table_name = (list(j.get("table") or []) + ["", ""])[:2]
        known = False
        try:
            now = _props(catalog.get_table(db_name, table_name).properties)
            if mask_credentials(_get(now, URL) or "") == _get(source, URL):
                source, known = now, True  # with its password
        except NotFoundError:
            pass
        try:
            run_sql(source, f"DROP TABLE IF EXISTS {j['stage']}")
        except Exception as e:  # noqa: BLE001 - reported, and tried again by the next connect()
            reason = mask_credentials(first_line(e))
            failed.append(f"the staging table {j.get('stage')} in {mask_credentials(_get(source, URL) or '')} (of "
                          f"an INSERT into {db_name}.{table_name}; {reason})"
                          + ("" if known else ": drop it by hand, hivepark no longer knows that source"))
            if known:
                continue
        fs.delete_file(path)
        cleaned += 1
    if failed:
        raise OSError(f"could not drop {'; '.join(failed)}")
    return cleaned
