"""The metastore on SQLAlchemy 2.0: ``SqlCatalog("sqlite:///path")`` or
``SqlCatalog("postgresql+psycopg://...")``, with identical behaviour on both.

* Opening a metastore creates the schema or upgrades it in place (:mod:`.schema`).
* Partition filters become one SQL query over indexed key-value rows (:mod:`.filters`); a
  filter keeps every partition it may match, never fewer.
* :meth:`SqlCatalog.commit` is a compare-and-swap on the table's version followed by every
  partition change, in one transaction.
* SQLite runs in WAL mode with a busy timeout, and write transactions start with
  ``BEGIN IMMEDIATE``, so several processes can share one metastore file.
"""

from __future__ import annotations

import functools
import gc
import itertools
import json
import operator
import posixpath
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    Text,
    TextClause,
    and_,
    bindparam,
    cast,
    create_engine,
    delete,
    event,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    text,
    true,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError
from sqlalchemy.orm import Session, aliased

from hivepark.catalog import schema
from hivepark.catalog.base import Catalog, TableChange
from hivepark.catalog.filters import (
    InValues,
    KeyCodec,
    Undecidable,
    bind_to_keys,
    codecs_for,
    filter_sql,
    key_values,
    opaque_atoms,
)
from hivepark.catalog.models import EMPTY_MAP, Column, Database, Partition, Table, frozen_map
from hivepark.catalog.schema import DatabaseRow, PartitionKeyValRow, PartitionRow, StatementRow, TableRow
from hivepark.catalog.skew import SKEW_LOCATIONS, parse_layout
from hivepark.errors import (
    AlreadyExistsError,
    CommitConflict,
    HiveParkError,
    InvalidPartitionSpec,
    MetastoreError,
    NoSuchDatabase,
    NoSuchTable,
    SemanticError,
    UnmatchedFilter,
    UserInputError,
    first_line,
)
from hivepark.expr import EqualTo, Expr, In, IsNull, Or, and_all, conjuncts, evaluate
from hivepark.layout import is_absolute, is_within, make_part_name
from hivepark.types import DEFAULT_PARTITION_NAME

_CHUNK = 500
_INSERT_BATCH = 20_000
_ANALYZE_AFTER = 1000  # refresh the planner's statistics after adding this many partitions
# (in one call; on SQLite also once the partitions doubled: _sqlite_statistics_stale)
_MMAP_BYTES = 1 << 30  # an SQLite metastore is read through a memory map up to this size


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _now() -> int:
    return int(time.time())


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _moved_skew_locations(params: str, old: str, new: str) -> str | None:
    """``params`` (JSON text) with the absolute list-bucketing directories below ``old`` (a table's
    directory that RENAME moved to ``new``) moved with it; None when none is.

    >>> from hivepark.catalog.skew import SkewLayout
    >>> lay = SkewLayout(("x",), (("1",), ("2",)), ((("1",), "/w/t/ds=1/own"), (("2",), "/w/tt/x")))
    >>> json.loads(json.loads(_moved_skew_locations(_dumps({SKEW_LOCATIONS: lay.to_json()}), "/w/t", "/w/u"))
    ...            [SKEW_LOCATIONS])["locations"]
    [[['1'], '/w/u/ds=1/own'], [['2'], '/w/tt/x']]
    """
    try:
        d = _decode(params)
        lay = parse_layout(d.get(SKEW_LOCATIONS))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    old, new = old.rstrip("/"), new.rstrip("/")
    changes = {key: new + loc[len(old):] for key, loc in (lay.locations if lay is not None else ())
               if is_absolute(loc) and (loc == old or loc.startswith(old + "/"))}
    if lay is None or not changes:
        return None
    return _dumps({**d, SKEW_LOCATIONS: lay.with_locations(changes).to_json()})


# engine ---------------------------------------------------------------------------------

def _make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        # no JIT: metastore queries are short, and compiling one (tens of ms) never pays off
        # (a 1,000-range partition lookup is estimated at millions of rows and would be)
        given = parsed.query.get("options") or ()  # the URL's own (a search_path, say): kept
        options = " ".join([*([given] if isinstance(given, str) else given), "-c jit=off"])
        return create_engine(url, pool_pre_ping=True, connect_args={"options": options})
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    if parsed.database and parsed.database != ":memory:" \
            and not parsed.database.startswith("file:"):
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see _on_begin)
        cur = dbapi_conn.cursor()
        # mmap: a lookup reads its pages in place rather than copying each from the OS; a
        # 1,000-value IN at a million partitions touches thousands (65 ms, 71 without)
        for pragma in ("journal_mode=WAL", "busy_timeout=60000", "synchronous=NORMAL",
                       "foreign_keys=ON", "case_sensitive_like=ON", f"mmap_size={_MMAP_BYTES}"):
            cur.execute(f"PRAGMA {pragma}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get("hivepark_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


# row <-> model ---------------------------------------------------------------------------

def _columns_json(cols: Iterable[Column]) -> str:
    return _dumps([{"name": c.name.lower(), "type": c.type, "comment": c.comment}
                   for c in cols])


def _columns_of(text: str) -> tuple[Column, ...]:
    return tuple(Column(d["name"], d["type"], d.get("comment")) for d in json.loads(text))


def _props_of(text: str) -> Any:
    return EMPTY_MAP if text == "{}" else frozen_map(_decode(text))


def _table_of(row: Any, db: str) -> Table:  # a TableRow, or a row of its columns
    return Table(db=db, name=row.name, columns=_columns_of(row.columns),
                 partition_keys=_columns_of(row.partition_keys), location=row.location,
                 format=row.format, field_delim=row.field_delim, table_type=row.table_type,
                 properties=_props_of(row.properties), version=row.version,
                 create_time=row.create_time, uid=row.uid or "")


def _database_of(row: DatabaseRow) -> Database:
    return Database(name=row.name, location=row.location, comment=row.comment,
                    properties=_props_of(row.properties))


_PART_COLS = (PartitionRow.part_values, PartitionRow.location, PartitionRow.parameters,
              PartitionRow.files, PartitionRow.create_time)


_decode = json.JSONDecoder().decode


def _part_name_of(row: Any) -> str:
    return row[5]


def _bound(table: Table, filter: Expr, codecs: Mapping[str, Any]) -> Expr:
    """``filter``'s literals bound to the keys' types once (each partition is then evaluated
    by the tree's evaluator); a literal the key's type cannot hold is the user's error."""
    try:
        return bind_to_keys(filter, codecs)
    except Undecidable as e:
        raise UserInputError(
            f"Cannot drop partitions of {table.qualified_name} by {e.atom!r}: "
            f"{e.reason}. Compare partition columns with constants of their "
            f"type.") from e


def _disjuncts(expr: Expr) -> list[Expr]:
    """The operands of a (nested, balanced: :func:`or_all`) top-level ``Or``, left to right."""
    out, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Or):
            stack += [e.right, e.left]
        else:
            out.append(e)
    return out


class _Matches:
    """The rows (partitions' key values, bound to the keys' types) a filter is TRUE for: an
    AND of equalities and IS NULLs (a DROP's spec ``PARTITION (ds='d', hr=1)``, full or
    partial) by a hash lookup in an index of the rows on those keys, built once; any other
    filter evaluated on each row. A DROP of 1,000 specs of a table of 20,000 partitions
    evaluated each spec on each partition (20,000,000 evaluations: minutes).

    >>> m = _Matches([{"ds": "a", "hr": 1}, {"ds": "a", "hr": None}, {"ds": "b", "hr": 1}])
    >>> from hivepark.expr import GreaterThan
    >>> m.of(EqualTo("ds", "a")), m.of(and_all(EqualTo("ds", "a"), IsNull("hr"))), m.of(GreaterThan("hr", 0))
    ([0, 1], [1], [0, 2])
    """

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = rows
        self._indexes: dict[tuple[str, ...], dict[tuple[Any, ...], list[int]]] = {}

    def of(self, f: Expr) -> list[int]:
        wanted: dict[str, Any] = {}
        for atom in conjuncts(f):
            if isinstance(atom, EqualTo) and atom.value is not None:
                value: Any = atom.value
            elif isinstance(atom, IsNull):
                value = None
            else:
                return [i for i, row in enumerate(self.rows) if evaluate(f, row) is True]
            if atom.term in wanted and wanted[atom.term] != value:
                return [i for i, row in enumerate(self.rows) if evaluate(f, row) is True]
            wanted[atom.term] = value
        cols = tuple(sorted(wanted))
        index = self._indexes.get(cols)
        if index is None:
            index = self._indexes[cols] = {}
            for i, row in enumerate(self.rows):
                index.setdefault(tuple(row[c] for c in cols), []).append(i)
        return index.get(tuple(wanted[c] for c in cols), [])


def _parents(location: str) -> list[str]:
    """The directories holding ``location``: ``/a/b/c`` -> ``/a/b``, ``/a``, ``/``;
    ``s3://b/x/y`` -> ``s3://b/x``, ``s3://b``.

    >>> _parents("/a/b/c"), _parents("s3://b/x/y")
    (['/a/b', '/a', '/'], ['s3://b/x', 's3://b'])
    """
    scheme, sep, rest = location.partition("://")
    base, path = (f"{scheme}://{rest.partition('/')[0]}", "/" + rest.partition("/")[2]) if sep else ("", location)
    out = []
    while path not in ("/", ""):
        path = posixpath.dirname(path)
        out.append(base + (path if path != "/" else "") if base else path)
    return out


def _partition_of(row: Any) -> Partition:
    return _partitions_of([row])[0]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pauses the cyclic garbage collector while many acyclic objects are built (it would
    otherwise rescan them over and over, which costs as much as building them)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _driver_sql(conn: Connection, stmt: Any) -> tuple[str, Any]:
    """``stmt`` as the connection's driver takes it: its SQL text (expanding IN lists) and
    its parameters."""
    compiled = stmt.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.params
    args: Any = tuple(params[k] for k in compiled.positiontup or ()) if compiled.positional else params
    return compiled.string, args


def _fetch_all(s: Session, stmt: Any) -> list[Any]:
    """The rows of ``stmt`` as plain tuples, straight from the DB-API cursor: a filter that
    matches 24,000 partitions spends no time on SQLAlchemy's row objects."""
    conn = s.connection()
    text, args = _driver_sql(conn, stmt)
    dbapi = conn.dialect.loaded_dbapi
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        with _gc_paused():
            cursor.execute(text, args)
            return list(cursor.fetchall())
    except dbapi.Error as e:  # as SQLAlchemy raises it (a MetastoreError by _session)
        raise DBAPIError.instance(text, args, e, dbapi.Error) from e
    finally:
        cursor.close()


_make = tuple.__new__  # a Partition (a named tuple) from its fields, in one step
_second, _fifth = operator.itemgetter(1), operator.itemgetter(4)  # a row's location, create_time
_proxy = MappingProxyType


def _fetch_packed(s: Session, stmt: Any, pg: bool) -> list[Partition] | None:
    """The partitions of a ``_PART_COLS`` select, sorted by name, handed over as one packed
    row (:func:`_packed_columns`) rather than a row each. The driver makes a Python object of
    every field of every row: for the 24,000 partitions of a 1,000-value IN over a million,
    SQL and hand-over took 37 ms as rows and take 24 ms packed on SQLite, 29 and 22 ms on
    PostgreSQL (measured in one process; the whole lookup 63 -> 51 and 52 -> 46 ms).

    None when a location holds the separator, or a packed string would pass the database's
    limit (SQLite's a billion bytes by default, PostgreSQL's 1 GB: tens of millions of
    partitions); the caller then fetches rows, in a new transaction (PostgreSQL's is aborted)."""
    sq = stmt.subquery("packed")
    try:
        row = _fetch_all(s, select(_packed_columns(sq, pg)).select_from(sq))[0]
    except (DataError, OperationalError):  # SQLite's "string or blob too big",
        s.rollback()  # PostgreSQL's "out of memory": too large a string
        return None
    return _unpacked(row)


def _partitions_of(rows: Sequence[Any]) -> list[Partition]:
    """Partitions of ``_PART_COLS`` rows (see :func:`_assemble`)."""
    # a committed partition has parameters and files; one added by ALTER/MSCK neither
    params, files = [r[2] for r in rows], [r[3] for r in rows]
    return _assemble(
        "[" + ",".join([r[0] for r in rows]) + "]", map(_second, rows),
        None if params.count("{}") == len(params) else "[" + ",".join(params) + "]",
        None if files.count(None) == len(files) else
        "[" + ",".join(["null" if t is None else t for t in files]) + "]",
        map(_fifth, rows))


def _assemble(values: str, locations: Iterable[str], params: str | None, files: str | None,
              times: Iterable[int]) -> list[Partition]:
    """Partitions from their fields column by column: ``values``, ``params`` and ``files``
    are JSON arrays of every partition's field (``params`` None: all empty, ``files`` None:
    all unlisted), each decoded by one parse, and each Partition is made from its fields in
    one step, by ``map`` and ``zip`` (no Python-level loop per partition)."""
    with _gc_paused():
        all_params: Iterable[Mapping[str, str]] = (
            itertools.repeat(EMPTY_MAP) if params is None else
            [_proxy(d) if d else EMPTY_MAP for d in _decode(params)])
        all_files: Iterable[tuple[str, ...] | None] = (
            itertools.repeat(None) if files is None else
            [None if f is None else tuple(f) for f in _decode(files)])
        fields = zip(map(tuple, _decode(values)), locations, all_params, all_files, times)
        return list(map(_make, itertools.repeat(Partition), fields))


_SEP = "\x01"  # separates the packed locations and names (an escaped name never holds it)


def _packed_columns(sq: Any, pg: bool) -> ColumnElement[Any]:
    """The select list of one row for all of the partitions of ``sq`` (:func:`_unpacked`):
    their count and each field of ``_PART_COLS`` and the part name concatenated in one
    string, the JSON ones (and the create times) with commas, the locations and names with
    ``_SEP``.

    SQL text rather than function expressions: SQLAlchemy compiled those in ~0.5 ms, as long
    as SQLite takes to find a few partitions. The separators are literals: bound as
    parameters, SQLite evaluated them on every row (35 ms rather than 21 for 24,000 rows)."""
    agg, sep = ("string_agg", "chr(1)") if pg else ("group_concat", "char(1)")
    p = sq.name
    return literal_column(
        f"count(*), {agg}({p}.part_values, ','), {agg}({p}.location, {sep}), "
        f"{agg}({p}.parameters, ','), {agg}(coalesce({p}.files, 'null'), ','), "
        f"{agg}(CAST({p}.create_time AS TEXT), ','), {agg}({p}.part_name, {sep})")


def _unpacked(row: Sequence[Any]) -> list[Partition] | None:
    """The partitions of a :func:`_packed_columns` row, sorted by name; None if a location
    or name holds ``_SEP`` (the caller then fetches rows)."""
    n, values, locations, params, files, times, names = row
    if not n:
        return []
    locs, names = locations.split(_SEP), names.split(_SEP)
    if len(locs) != n or len(names) != n:
        return None
    parts = _assemble("[" + values + "]", locs,
                      None if params == "{}" + ",{}" * (n - 1) else "[" + params + "]",
                      None if files == "null" + ",null" * (n - 1) else "[" + files + "]",
                      _decode("[" + times + "]"))
    with _gc_paused():
        return [parts[i] for i in sorted(range(n), key=names.__getitem__)]


#: at most this many values become name ranges (:func:`_name_ranges`); more take the
#: key-value indexes
_MAX_NAME_RANGES = 10_000


def _name_ranges(table: Table, filter: Expr) -> list[tuple[str, str]] | None:
    """For ``first_key = v`` or ``first_key IN (...)`` on a STRING first partition key, the
    ranges of partition names that hold exactly the matching partitions, sorted: ``[k=v/,
    k=v0)`` (``0`` follows ``/``, and an escaped value holds no ``/``), or ``[k=v, k=v\x01)``
    when ``k`` is the only key (an escaped value holds no control character). None for any
    other filter. NULL, the empty string and the default partition's name never match (the
    default partition reads as NULL), as in the key-value filter."""
    if isinstance(filter, EqualTo):
        term, raw = filter.term, [filter.value]
    elif isinstance(filter, In):
        term, raw = filter.term, list(filter.values)
    else:
        return None
    keys = table.partition_keys
    if term != keys[0].name or keys[0].hive_type.base != "string" or len(raw) > _MAX_NAME_RANGES:
        return None
    texts = [v for v in raw if type(v) is str]
    if len(texts) != sum(v is not None for v in raw):
        return None  # not bound to the key's type
    wanted = sorted({v for v in texts if v and v != DEFAULT_PARTITION_NAME})
    names = [make_part_name((term,), (v,)) for v in wanted]
    if len(keys) == 1:
        return [(n, n + "\x01") for n in names]
    return [(n + "/", n + "0") for n in names]


def _leading_ranges(table: Table, filter: Expr) -> tuple[list[tuple[str, str]], Expr | None] | None:
    """The name ranges of the filter's first conjunct that has them (:func:`_name_ranges`),
    and the rest of the filter (None when nothing is left); None when no conjunct has them.
    ``s IN (...) AND n > 12`` finds its partitions by name, then tests ``n`` on those rows.
    With other conjuncts, only for several values: one value's partitions the key-value
    indexes find as fast, in a query that costs less to build (``s = v AND n > 12``: 1.8 ms
    that way, 2.7-3.7 ms by name)."""
    parts = conjuncts(filter)
    for i, c in enumerate(parts):
        ranges = _name_ranges(table, c)
        rest = parts[:i] + parts[i + 1:]
        if ranges is not None and (len(ranges) > 1 or not rest):
            return ranges, (and_all(*rest) if rest else None)
    return None


_TABLE_BY_NAME = (select(TableRow.__table__)
                  .join(DatabaseRow, DatabaseRow.id == TableRow.db_id)
                  .where(DatabaseRow.name == bindparam("db"), TableRow.name == bindparam("name")))


@functools.cache
def _key_alias(idx: int) -> Any:
    """The key-value row of partition key ``idx`` in a filter query (built once, reused)."""
    return aliased(PartitionKeyValRow, name=f"k{idx}")


def _keys_joined(used: frozenset[int], tbl_id: int | None = None) -> tuple[Any, Any]:
    """A select of partition ids with the key-value row (:func:`_key_alias`) of each key in
    ``used`` joined by part id, for a :func:`filter_sql` clause to be applied to; on the
    table ``tbl_id``'s rows when given (the key-value indexes lead with it). Returns the select
    and the first key's alias, whose ``part_id`` it selects."""
    first, *more = sorted(used)
    k = _key_alias(first)
    q = select(k.part_id).where(k.idx == first)
    if tbl_id is not None:
        q = q.where(k.tbl_id == tbl_id)
    for idx in more:
        a = _key_alias(idx)
        on = (a.part_id == k.part_id) & (a.idx == idx)
        q = q.join(a, on if tbl_id is None else on & (a.tbl_id == tbl_id))
    return q, k


class SqlCatalog(Catalog):
    """The Catalog on any SQLAlchemy URL; see the module docstring.

    >>> cat = SqlCatalog("sqlite://")
    >>> cat.create_database(Database("db", "/tmp/wh/db.db"))
    >>> cat.list_databases(), cat.schema_version
    (['db'], 1)
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = _make_engine(url)
        self._is_pg = self._engine.dialect.name == "postgresql"
        self._schema_version = self._open_schema()
        self._ended: list[str] = []  # statements whose records the next commit removes
        self._ended_lock = threading.Lock()

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the metastore."""
        return self._schema_version

    def close(self) -> None:
        with self._ended_lock:
            ended, self._ended = self._ended, []
        try:
            self.forget_statements(ended)
        except MetastoreError:
            pass  # the next connect() removes them (commit.forget_finished)
        self._engine.dispose()

    # plumbing --------------------------------------------------------------------------
    def _open_schema(self) -> int:
        try:
            with self._engine.connect() as conn:
                with conn.begin():
                    if schema.read_version(conn) == schema.latest_version():
                        return schema.latest_version()
                conn.execution_options(hivepark_write=True)
                with conn.begin():
                    if self._is_pg:  # serialise concurrent first opens
                        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7262018)")
                    return schema.upgrade(conn)
        except DBAPIError as e:
            raise MetastoreError(f"Cannot open the metastore at {self._safe_url()}: "
                                 f"{e.orig}") from e

    def _safe_url(self) -> str:
        return make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def _session(self, write: bool = False) -> Iterator[Session]:
        """One transaction; ``write`` takes SQLite's write lock up front."""
        try:
            with Session(self._engine, expire_on_commit=False, autoflush=False) as s:
                if write:  # procures the connection and begins (see _on_begin)
                    s.connection(execution_options={"hivepark_write": True})
                yield s
                s.commit()
            if s.info.get("analyze"):
                self._analyze()
        except HiveParkError:
            raise
        except DBAPIError as e:
            if _retryable(e):  # the database undid the transaction: nothing was changed
                raise CommitConflict(
                    "Commit conflict: another statement changed the same metastore rows at the same "
                    f"moment ({first_line(e.orig)}), and the database undid this statement's "
                    "transaction. Nothing was changed; run the statement again.") from e
            raise MetastoreError(f"Metastore error: {e.orig}") from e

    def _analyze(self) -> None:
        """Refreshes the planner statistics of the partition tables, so that filters start
        from the most selective key index (SQLite samples; PostgreSQL's ANALYZE samples too).
        """
        tables = (PartitionKeyValRow.__tablename__, PartitionRow.__tablename__)
        try:
            self._run_analyze(tables)
        except DBAPIError:  # best effort: statistics only guide the planner
            pass

    def _run_analyze(self, tables: tuple[str, ...]) -> None:
        with self._engine.connect() as conn:
            if self._is_pg:
                conn.execution_options(isolation_level="AUTOCOMMIT")
                for name in tables:
                    conn.exec_driver_sql(f"ANALYZE {name}")
                return
            with conn.begin():
                conn.exec_driver_sql("PRAGMA analysis_limit=1000")
                for name in tables:
                    conn.exec_driver_sql(f"ANALYZE {name}")

    @staticmethod
    def _db_row(s: Session, name: str) -> DatabaseRow:
        row = s.scalars(select(DatabaseRow).where(DatabaseRow.name == name.lower())).first()
        if row is None:
            raise NoSuchDatabase(
                f"Database does not exist: {name.lower()}. Run SHOW DATABASES to see the "
                f"databases, or create it with CREATE DATABASE {name.lower()}.", code=10072)
        return row

    def _table_row(self, s: Session, db: str, name: str, lock: bool = False) -> TableRow:
        stmt = (select(TableRow).join(DatabaseRow, DatabaseRow.id == TableRow.db_id)
                .where(DatabaseRow.name == db.lower(), TableRow.name == name.lower()))
        row = s.scalars(stmt.with_for_update() if lock else stmt).first()
        if row is None:
            self._db_row(s, db)
            raise NoSuchTable(
                f"Table not found '{db.lower()}.{name.lower()}'. Run SHOW TABLES IN "
                f"{db.lower()} to see its tables.", code=10001)
        return row

    # databases -------------------------------------------------------------------------
    def create_database(self, db: Database, if_not_exists: bool = False) -> None:
        name = db.name.lower()
        with self._session(write=True) as s:
            if s.scalars(select(DatabaseRow.id).where(DatabaseRow.name == name)).first():
                if if_not_exists:
                    return
                raise AlreadyExistsError(
                    f"Database {name} already exists. Use CREATE DATABASE IF NOT EXISTS "
                    f"{name} to skip it.")
            s.add(DatabaseRow(name=name, location=db.location, comment=db.comment,
                              properties=_dumps(dict(db.properties))))
            try:
                s.flush()
            except IntegrityError as e:  # created concurrently (PostgreSQL)
                s.rollback()
                if if_not_exists:
                    return
                raise AlreadyExistsError(f"Database {name} already exists.") from e

    def get_database(self, name: str) -> Database:
        with self._session() as s:
            return _database_of(self._db_row(s, name))

    def list_databases(self) -> list[str]:
        with self._session() as s:
            return sorted(s.scalars(select(DatabaseRow.name)))

    def alter_database(self, name: str, properties: dict[str, str], location: str | None = None) -> Database:
        with self._session(write=True) as s:
            row = self._db_row(s, name)
            merged = {**_database_of(row).properties, **properties}
            row.properties = _dumps(merged)
            if location is not None:
                row.location = location
            s.flush()
            return _database_of(row)

    def drop_database(self, name: str, cascade: bool = False) -> list[Table]:
        with self._session(write=True) as s:
            db = self._db_row(s, name)
            rows = list(s.scalars(select(TableRow).where(TableRow.db_id == db.id)
                                  .order_by(TableRow.name)))
            if rows and not cascade:
                raise SemanticError(
                    f"Database {db.name} is not empty. One or more tables exist. Drop them "
                    f"first, or use DROP DATABASE {db.name} CASCADE.")
            dropped = [_table_of(r, db.name) for r in rows]
            for r in rows:
                self._delete_table_rows(s, r.id)
            s.execute(delete(DatabaseRow).where(DatabaseRow.id == db.id))
            return dropped

    # tables ----------------------------------------------------------------------------
    def locations_overlapping(self, location: str) -> list[tuple[str, str, tuple[str | None, ...] | None, str]]:
        """One query over the tables and one over the partitions, whose locations the location
        index holds (schema version 5): the partitions at, inside and above ``location`` as
        three index lookups (a range for those inside: the names between ``location/`` and
        ``location0``, ``0`` following ``/`` byte-wise); run by the statements that give a
        directory (LOCATION, ADD PARTITION, CREATE TABLE) and by recovery."""
        location = location.rstrip("/") or "/"
        parents = _parents(location)
        below = location.rstrip("/") + "/"

        def overlaps(col: Any) -> ColumnElement[bool]:
            inside = func.substr(col, 1, len(below)) == below
            return or_(col == location, inside, col.in_(parents)) if parents else or_(col == location, inside)

        def indexed(col: Any) -> ColumnElement[bool]:  # the same, in the terms of the location index
            if not self._is_pg:
                inside = and_(col >= below, col < below[:-1] + "0")
                return or_(col == location, inside, col.in_(parents)) if parents else or_(col == location, inside)
            n = schema.LOCATION_PREFIX
            if len(below) > n or any(len(p) > n for p in parents):
                return overlaps(col)  # (a location longer than the index holds: a scan)
            key = func.substr(col, 1, n).collate("C")
            terms = [and_(key == location, col == location),
                     and_(key >= below, key < below[:-1] + "0", func.substr(col, 1, len(below)) == below)]
            if parents:
                terms.append(and_(key.in_(parents), col.in_(parents)))
            return or_(*terms)

        tables = (select(DatabaseRow.name, TableRow.name, TableRow.location)
                  .join(DatabaseRow, DatabaseRow.id == TableRow.db_id).where(overlaps(TableRow.location)))
        parts = (select(DatabaseRow.name, TableRow.name, PartitionRow.part_values, PartitionRow.location)
                 .join(TableRow, TableRow.id == PartitionRow.tbl_id).join(DatabaseRow, DatabaseRow.id == TableRow.db_id)
                 .where(indexed(PartitionRow.location)))
        with self._session() as s:
            out: list[tuple[str, str, tuple[str | None, ...] | None, str]] = [
                (db, name, None, loc) for db, name, loc in s.execute(tables)]
            out += [(db, name, tuple(_decode(values)), loc) for db, name, values, loc in s.execute(parts)]
        return out

    def _absolute_skew(self, column: str) -> TextClause:
        """JSON text in ``column`` that may record an absolute list-bucketing directory (SET SKEWED
        LOCATION's; a write's own are relative): the partial index's condition, word for word."""
        return text(schema.absolute_skew_condition("postgresql" if self._is_pg else "sqlite", column))

    def skewed_locations_overlapping(self, location: str
                                     ) -> list[tuple[str, str, tuple[str | None, ...] | None, str]]:
        """The parameters that may record an absolute list-bucketing directory are found (the
        partitions' through the partial index of schema version 6, the tables' by a scan of the
        tables), then each such directory compared here."""
        tables = (select(DatabaseRow.name, TableRow.name, TableRow.properties)
                  .join(DatabaseRow, DatabaseRow.id == TableRow.db_id)
                  .where(self._absolute_skew("hivepark_tables.properties")))
        parts = (select(DatabaseRow.name, TableRow.name, PartitionRow.part_values, PartitionRow.parameters)
                 .join(TableRow, TableRow.id == PartitionRow.tbl_id).join(DatabaseRow, DatabaseRow.id == TableRow.db_id)
                 .where(self._absolute_skew("hivepark_partitions.parameters")))
        with self._session() as s:
            found: list[tuple[str, str, tuple[str | None, ...] | None, str]] = [
                (db, name, None, params) for db, name, params in s.execute(tables)]
            found += [(db, name, tuple(_decode(values)), params) for db, name, values, params in s.execute(parts)]
        out: list[tuple[str, str, tuple[str | None, ...] | None, str]] = []
        for db, name, values, params in found:
            try:
                lay = parse_layout(_decode(params).get(SKEW_LOCATIONS))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            for _, loc in lay.locations if lay is not None else ():
                if is_absolute(loc) and (is_within(location, loc) or is_within(loc, location)):
                    out.append((db, name, values, loc))
        return out

    def create_table(self, table: Table, if_not_exists: bool = False, uid: str | None = None) -> Table:
        db, name = table.db.lower(), table.name.lower()
        with self._session(write=True) as s:
            db_row = self._db_row(s, db)
            existing = s.scalars(select(TableRow).where(TableRow.db_id == db_row.id,
                                                        TableRow.name == name)).first()
            if existing is not None:
                if if_not_exists:
                    return _table_of(existing, db)
                raise AlreadyExistsError(
                    f"Table already exists: {db}.{name}. Use CREATE TABLE IF NOT EXISTS to "
                    f"skip it, or choose another name.", code=10073)
            row = TableRow(db_id=db_row.id, name=name, columns=_columns_json(table.columns),
                           partition_keys=_columns_json(table.partition_keys),
                           properties=_dumps(dict(table.properties)), location=table.location,
                           format=table.format, field_delim=table.field_delim,
                           table_type=table.table_type, version=1,
                           create_time=table.create_time or _now(), uid=uid or schema.new_uid())
            s.add(row)
            try:
                s.flush()
            except IntegrityError as e:  # created concurrently (PostgreSQL)
                raise AlreadyExistsError(f"Table already exists: {db}.{name}.",
                                         code=10073) from e
            return _table_of(row, db)

    def get_table(self, db: str, name: str) -> Table:
        # one Core statement on a connection, without an ORM session (a query's planning
        # looks up every table it reads: 0.24 -> 0.07 ms each); a missing table is looked up
        # again in a session, whose errors name what is missing
        try:
            with self._engine.connect() as conn:
                row = conn.execute(_TABLE_BY_NAME, {"db": db.lower(), "name": name.lower()}).first()
        except DBAPIError as e:
            raise MetastoreError(f"Metastore error: {e.orig}") from e
        if row is not None:
            return _table_of(row, db.lower())
        with self._session() as s:
            return _table_of(self._table_row(s, db, name), db.lower())

    def list_tables(self, db: str, table_type: str | None = None) -> list[str]:
        with self._session() as s:
            db_row = self._db_row(s, db)
            query = select(TableRow.name).where(TableRow.db_id == db_row.id)
            if table_type is not None:
                query = query.where(TableRow.table_type == table_type)
            return sorted(s.scalars(query))

    def table_versions(self, db: str) -> dict[str, tuple[str, int]]:
        with self._session() as s:
            db_row = self._db_row(s, db)
            rows = s.execute(select(TableRow.name, TableRow.uid, TableRow.version)
                             .where(TableRow.db_id == db_row.id))
            return {name: (uid or "", version) for name, uid, version in rows}

    def drop_table(self, db: str, name: str, unchanged: tuple[str, int] | None = None) -> Table:
        with self._session(write=True) as s:
            row = self._table_row(s, db, name, lock=True)
            dropped = _table_of(row, db.lower())
            if unchanged is not None and (dropped.uid, dropped.version) != unchanged:
                raise CommitConflict(
                    f"Table {dropped.qualified_name} changed since version {unchanged[1]} (another statement "
                    f"wrote to it, or it was created again), so it was not dropped.")
            self._delete_table_rows(s, row.id)
            return dropped

    @staticmethod
    def _delete_table_rows(s: Session, tbl_id: int) -> None:
        s.execute(delete(PartitionKeyValRow).where(PartitionKeyValRow.tbl_id == tbl_id))
        s.execute(delete(PartitionRow).where(PartitionRow.tbl_id == tbl_id))
        s.execute(delete(TableRow).where(TableRow.id == tbl_id))

    def _cas(self, s: Session, row: TableRow, expected_version: int, qualified: str,
             **values: Any) -> None:
        """``UPDATE tables SET version = version + 1 ... WHERE id = ? AND version = ?``."""
        result = s.execute(
            update(TableRow).where(TableRow.id == row.id, TableRow.version == expected_version)
            .values(version=TableRow.version + 1, **values)
            .execution_options(synchronize_session=False))
        if result.rowcount == 0:  # type: ignore[attr-defined]
            # (not s.refresh(row): on PostgreSQL the row may have been deleted by a DROP TABLE
            # this UPDATE waited for)
            now = s.scalars(select(TableRow.version).where(TableRow.id == row.id)).first()
            if now is None:
                raise _dropped_meanwhile(qualified)
            raise CommitConflict(
                f"Commit conflict on table {qualified}: it is at version {now}, but "
                f"this statement started from version {expected_version}, so another "
                f"statement changed it in between. Nothing was changed; run the statement "
                f"again.")
        s.refresh(row)

    def alter_table(self, table: Table, expected_version: int) -> Table:
        db = table.db.lower()
        with self._session(write=True) as s:
            row = self._table_row(s, db, table.name)
            old_keys = _columns_of(row.partition_keys)
            new_keys = tuple(Column(c.name.lower(), c.type, c.comment)
                             for c in table.partition_keys)
            has_parts = s.scalars(select(PartitionRow.id)
                                  .where(PartitionRow.tbl_id == row.id).limit(1)).first()
            if has_parts and [c.name for c in old_keys] != [c.name for c in new_keys]:
                raise SemanticError(
                    f"Cannot change the partition columns of {db}.{row.name} from "
                    f"({', '.join(c.name for c in old_keys)}) to "
                    f"({', '.join(c.name for c in new_keys)}) while it has partitions. "
                    f"Drop its partitions first, or create a new table.")
            self._cas(s, row, expected_version, f"{db}.{row.name}",
                      columns=_columns_json(table.columns),
                      partition_keys=_columns_json(new_keys),
                      properties=_dumps(dict(table.properties)), location=table.location,
                      format=table.format, field_delim=table.field_delim,
                      table_type=table.table_type)
            new = _table_of(row, db)
            if has_parts:
                self._reencode_changed_keys(s, row.id, old_keys, new)
            return new

    def _reencode_changed_keys(self, s: Session, tbl_id: int, old_keys: tuple[Column, ...],
                               new: Table) -> None:
        """Recomputes the stored key values of keys whose type changed kind."""
        old = codecs_for(new.evolve(partition_keys=old_keys))
        changed = [c for c in codecs_for(new).values() if c.kind != old[c.name].kind]
        if not changed:
            return
        rows = s.execute(select(PartitionRow.id, PartitionRow.part_values)
                         .where(PartitionRow.tbl_id == tbl_id)).all()
        for c in changed:
            params = []
            for pid, values in rows:
                sv, nv, ex = c.encode(json.loads(values)[c.idx])
                params.append({"p": pid, "i": c.idx, "s": sv, "n": nv, "e": ex})
            s.connection().execute(
                update(PartitionKeyValRow)
                .where(PartitionKeyValRow.part_id == bindparam("p"),
                       PartitionKeyValRow.idx == bindparam("i"))
                .values(str_value=bindparam("s"), num_value=bindparam("n"),
                        num_exact=bindparam("e")), params)

    def rename_table(self, db: str, name: str, new_db: str, new_name: str,
                     new_location: str | None) -> Table:
        new_db, new_name = new_db.lower(), new_name.lower()
        with self._session(write=True) as s:
            row = self._table_row(s, db, name, lock=True)
            target_db = self._db_row(s, new_db)
            clash = s.scalars(select(TableRow.id).where(TableRow.db_id == target_db.id,
                                                        TableRow.name == new_name)).first()
            if clash is not None:
                raise AlreadyExistsError(
                    f"Table already exists: {new_db}.{new_name}. Choose another name, or drop "
                    f"that table first.", code=10073)
            old_location = row.location
            changes: dict[str, Any] = {"db_id": target_db.id, "name": new_name}
            if new_location is not None:
                changes["location"] = new_location
            try:
                self._cas(s, row, row.version, f"{db.lower()}.{name.lower()}", **changes)
            except IntegrityError as e:  # the new name was taken concurrently
                raise AlreadyExistsError(f"Table already exists: {new_db}.{new_name}.",
                                         code=10073) from e
            if new_location is not None and old_location:
                self._relocate_partitions(s, row.id, old_location, new_location)
                moved = _moved_skew_locations(row.properties, old_location, new_location)
                if moved is not None:
                    row.properties = moved
                for part_row in s.scalars(select(PartitionRow).where(
                        PartitionRow.tbl_id == row.id, self._absolute_skew("hivepark_partitions.parameters"))):
                    moved = _moved_skew_locations(part_row.parameters, old_location, new_location)
                    if moved is not None:
                        part_row.parameters = moved
            return _table_of(row, new_db)

    @staticmethod
    def _relocate_partitions(s: Session, tbl_id: int, old: str, new: str) -> None:
        old, new = old.rstrip("/"), new.rstrip("/")
        loc = PartitionRow.location
        n = len(old)
        s.execute(update(PartitionRow)
                  .where(PartitionRow.tbl_id == tbl_id, loc == old)
                  .values(location=new).execution_options(synchronize_session=False))
        s.execute(update(PartitionRow)
                  .where(PartitionRow.tbl_id == tbl_id,
                         func.substr(loc, 1, n + 1) == old + "/")
                  .values(location=literal(new) + func.substr(loc, n + 1))
                  .execution_options(synchronize_session=False))

    # partitions ------------------------------------------------------------------------
    def _filtered(self, tbl_id: int, table: Table, filter: Expr | None,
                  with_id: bool = False) -> Any | None:
        """The partitions select for ``filter`` (each row: ``_PART_COLS``, the part name and,
        ``with_id``, the row id); None when nothing can match."""
        cols = (*_PART_COLS, PartitionRow.part_name) + ((PartitionRow.id,) if with_id else ())
        stmt = select(*cols).where(PartitionRow.tbl_id == tbl_id)
        if filter is None:
            return stmt
        split = _leading_ranges(table, filter) if self._is_pg else None
        if split is not None:
            ranges, others = split
            test = True if others is None else filter_sql(others, codecs_for(table), _key_alias)
            if test is False:
                return None
            return self._by_name(cols, tbl_id, ranges, None if test is True else test)
        cond = filter_sql(filter, codecs_for(table), _key_alias)
        if cond is False:
            return None
        if cond is True:
            return stmt
        clause, used = cond
        # The matching ids come from the key-value indexes alone; the partition rows are
        # then fetched by primary key.
        ids, k = _keys_joined(used, tbl_id)
        if self._is_pg:  # an array: the planner looks each id up in the primary key
            # (joined with the partitions table instead, PostgreSQL hashes a sequential
            # scan of all of them: a 1,000-value IN over a million partitions took 3x as long)
            ids = ids.where(clause)
            return stmt.where(PartitionRow.id == func.any(func.array(ids.scalar_subquery())))
        # SQLite: joined, each key-value row found looks its partition up by rowid. As
        # ``id IN (subquery)``, SQLite first copied the 24,000 ids of a 1,000-value IN into
        # a temporary b-tree (13.2 -> 7.4 ms of SQL). The partitions table has no condition
        # of its own here (the key-value rows are the table's), so the planner has nothing
        # to start from but the key-value indexes.
        found = ids.with_only_columns(*cols, maintain_column_froms=True)
        return found.join(PartitionRow, PartitionRow.id == k.part_id).where(clause)

    @staticmethod
    def _by_name(cols: tuple[Any, ...], tbl_id: int, ranges: list[tuple[str, str]],
                 rest: tuple[ColumnElement[bool], frozenset[int]] | None = None) -> Any:
        """The partitions select for name ranges (:func:`_name_ranges`), on PostgreSQL: one
        range scan of the unique ``(tbl_id, part_name)`` index per range, each reading its
        partitions in name order. A 1,000-value IN over a million partitions (24,000 of
        them) takes 1,000 index descents rather than 24,000 primary-key probes: 58 -> 36 ms.
        (SQLite gains nothing from it: there the rows' transfer dominates.) ``rest`` (a
        :func:`filter_sql` condition and its keys) is then tested on each partition found,
        its key values read by the key-value primary key ``(part_id, idx)``.

        Each step is a LATERAL subquery fenced by ``OFFSET 0``, so that PostgreSQL runs them
        in this order: it estimates the ranges at millions of rows, and left to join freely
        it hashed every partition (``IN (1,000) AND hr > 12`` at a million: 11.9 s, not
        54 ms)."""
        r = func.unnest(bindparam("lo", [lo for lo, _ in ranges], type_=ARRAY(Text)),
                        bindparam("hi", [hi for _, hi in ranges], type_=ARRAY(Text))
                        ).table_valued("lo", "hi").render_derived(name="r")
        found = (select(*cols, PartitionRow.id.label("__id"))
                 .where(PartitionRow.tbl_id == tbl_id,
                        PartitionRow.part_name >= r.c.lo.collate("C"),  # byte order, as part_name
                        PartitionRow.part_name < r.c.hi.collate("C"))
                 .offset(0).lateral("p"))
        stmt = select(*[found.c[i] for i in range(len(cols))]).select_from(r).join(found, true())
        if rest is None:
            return stmt
        clause, used = rest
        keys, k = _keys_joined(used)  # by the key-value primary key (part_id, idx)
        test = keys.where(k.part_id == found.c["__id"], clause).offset(0).lateral("t")
        return stmt.join(test, true())

    def list_partitions(self, table: Table, filter: Expr | None = None,
                        limit: int | None = None) -> list[Partition]:
        with self._session() as s:
            tbl_id = self._table_row(s, table.db, table.name).id
            stmt = self._filtered(tbl_id, table, filter)
            if stmt is None:
                return []
            if limit is not None:
                stmt = stmt.order_by(stmt.selected_columns[len(_PART_COLS)]).limit(limit)  # part_name
            else:
                packed = _fetch_packed(s, stmt, self._is_pg)
                if packed is not None:
                    return packed
            # sorted here rather than by ORDER BY, which tempts SQLite into scanning the
            # (tbl_id, part_name) index instead of using the key-value indexes
            rows = _fetch_all(s, stmt)
            rows.sort(key=_part_name_of)
            return _partitions_of(rows)

    def count_partitions(self, table: Table, filter: Expr | None = None) -> int:
        with self._session() as s:
            tbl_id = self._table_row(s, table.db, table.name).id
            if filter is None:
                return int(s.scalar(select(func.count()).select_from(PartitionRow)
                                    .where(PartitionRow.tbl_id == tbl_id)) or 0)
            stmt = self._filtered(tbl_id, table, filter)
            if stmt is None:
                return 0
            return int(s.scalar(select(func.count()).select_from(stmt.subquery())) or 0)

    def partition_stats(self, table: Table, filter: Expr | None = None
                        ) -> tuple[int, int | None]:
        """One aggregate query: the matching partitions' count and their summed
        ``totalSize`` (None when a partition has no such statistic)."""
        with self._session() as s:
            tbl_id = self._table_row(s, table.db, table.name).id
            stmt = self._filtered(tbl_id, table, filter)
            if stmt is None:
                return 0, 0
            sq = stmt.subquery()
            if self._is_pg:
                raw = func.json_extract_path_text(cast(sq.c.parameters, JSON), "totalSize")
            else:
                raw = func.json_extract(sq.c.parameters, "$.totalSize")
            size = cast(raw, BigInteger)
            count, known, total = s.execute(
                select(func.count(), func.count(size), func.sum(size)).select_from(sq)).one()
            return int(count), (int(total or 0) if known == count else None)

    def get_partition(self, table: Table, values: Sequence[str | None]) -> Partition | None:
        vals = _normalize_values(table, values)
        name = make_part_name(table.partition_key_names(), vals)
        with self._session() as s:
            tbl_id = self._table_row(s, table.db, table.name).id
            row = s.execute(select(*_PART_COLS).where(PartitionRow.tbl_id == tbl_id,
                                                      PartitionRow.part_name == name)).first()
            return None if row is None else _partition_of(row)

    def get_partitions(self, table: Table, values: Sequence[Sequence[str | None]]
                       ) -> dict[tuple[str | None, ...], Partition]:
        names = {make_part_name(table.partition_key_names(), _normalize_values(table, v)):
                 tuple(v) for v in values}
        out: dict[tuple[str | None, ...], Partition] = {}
        with self._session() as s:
            tbl_id = self._table_row(s, table.db, table.name).id
            for chunk in _chunks(list(names), _id_chunk(s.connection())):
                rows = s.execute(select(*_PART_COLS, PartitionRow.part_name).where(
                    PartitionRow.tbl_id == tbl_id, InValues(PartitionRow.part_name, chunk))).all()
                for row in rows:
                    p = _partition_of(row)
                    out[names[row.part_name]] = p
        return out

    def add_partitions(self, table: Table, partitions: Sequence[Partition],
                       if_not_exists: bool = False) -> list[Partition]:
        prepared = _prepare(table, partitions)
        with self._session(write=True) as s:
            row = self._table_row(s, table.db, table.name, lock=True)
            seen: set[str] = set()
            existing = self._existing_names(s, row.id, [p[0] for p in prepared])
            fresh: list[tuple[str, Partition]] = []
            for name, part in prepared:
                if name in existing or name in seen:
                    if if_not_exists:
                        continue
                    raise AlreadyExistsError(
                        f"Partition already exists: {name}. Use IF NOT EXISTS to skip it.",
                        code=10118)
                seen.add(name)
                fresh.append((name, part))
            try:
                self._insert_partitions(s, row.id, table, fresh)
                if fresh:
                    _bump_version(s, row.id)
            except IntegrityError as e:  # a concurrent writer added one of them first
                raise AlreadyExistsError(
                    f"Partition already exists in {row.name}: another writer added one of "
                    f"these partitions concurrently ({e.orig}). Use IF NOT EXISTS to skip "
                    f"existing partitions.", code=10118) from e
            return [p for _, p in fresh]

    @staticmethod
    def _existing_names(s: Session, tbl_id: int, names: Sequence[str]) -> set[str]:
        return set(_ids_by_name(s, tbl_id, names))

    @staticmethod
    def _insert_partitions(s: Session, tbl_id: int, table: Table,
                           parts: Sequence[tuple[str, Partition]]) -> None:
        """Bulk-inserts new partitions and their key-value rows, in batches (one transaction)."""
        conn = s.connection()
        codecs: list[KeyCodec] = list(codecs_for(table).values())
        pg = conn.dialect.name == "postgresql"
        for batch in _chunks(parts, _INSERT_BATCH):
            rows = [{"tbl_id": tbl_id, "part_name": name, "part_values": _dumps(list(p.values)),
                     "location": p.location, "parameters": _dumps(dict(p.parameters)),
                     "files": None if p.files is None else _dumps(list(p.files)),
                     "create_time": p.create_time} for name, p in batch]
            if pg:  # ids drawn from the sequence up front, so that COPY can load the rows
                for row, pid in zip(rows, _pg_next_ids(conn, len(rows))):
                    row["id"] = pid
            _bulk_insert(conn, PartitionRow, rows)
            if not codecs:
                continue
            ids = {r["part_name"]: r["id"] for r in rows} if pg else \
                _ids_by_name(s, tbl_id, [name for name, _ in batch])
            kv = []
            for name, p in batch:
                pid = ids[name]
                for c in codecs:
                    sv, nv, ex = c.encode(p.values[c.idx])
                    kv.append({"part_id": pid, "idx": c.idx, "tbl_id": tbl_id,
                               "str_value": sv, "num_value": nv, "num_exact": ex})
            _bulk_insert(conn, PartitionKeyValRow, kv)
        if len(parts) >= _ANALYZE_AFTER or (parts and not pg and _sqlite_statistics_stale(conn)):
            s.info["analyze"] = True

    def drop_partitions(self, table: Table, filter: Expr, required: Sequence[Expr] = ()) -> list[Partition]:
        opaque = opaque_atoms(filter)
        if opaque:
            raise UserInputError(
                f"Cannot drop partitions by a filter the metastore cannot evaluate exactly: "
                f"{opaque[0].sql}. Use comparisons of partition columns with constants.")
        codecs = codecs_for(table)
        names = table.partition_key_names()
        with self._session(write=True) as s:
            tbl_id = self._table_row(s, table.db, table.name, lock=True).id
            stmt = self._filtered(tbl_id, table, filter, with_id=True)
            rows = sorted(s.connection().execute(stmt).all(), key=_part_name_of) if stmt is not None else []
            parts = [_partition_of(r) for r in rows]
            matches = _Matches([key_values(dict(zip(names, p.values)), codecs) for p in parts])
            chosen: set[int] = set()
            if rows:  # the filter is TRUE where one of its disjuncts (a DROP's specs) is
                for d in _disjuncts(_bound(table, filter, codecs)):
                    chosen.update(matches.of(d))
            for i, f in enumerate(required):  # before anything is deleted
                if not any(j in chosen for j in matches.of(_bound(table, f, codecs))):
                    raise UnmatchedFilter(f"No partition of {table.qualified_name} matches {f!r}", i)
            ids = [rows[j][6] for j in sorted(chosen)]
            _delete_partition_ids(s, ids)
            if ids:
                _bump_version(s, tbl_id)
            return [parts[j] for j in sorted(chosen)]

    def commit(self, table: Table, expected_version: int,
               put: Sequence[Partition] = (), drop: Sequence[tuple[str | None, ...]] = (),
               table_parameters: dict[str, str | None] | None = None,
               statement: str | None = None) -> Table:
        """See :meth:`Catalog.commit`. ``drop`` is applied before ``put`` (a partition in both
        ends up as in ``put``); ``table_parameters`` are merged into the table's properties
        (a None value removes the key)."""
        with self._ended_lock:
            ended, self._ended = self._ended, []
        try:
            with self._session(write=True) as s:
                out = self._commit_in(s, TableChange(table, expected_version, put, drop, table_parameters))
                if statement is not None:
                    s.add(StatementRow(qid=statement, committed_at=int(time.time())))
                if ended:
                    s.execute(delete(StatementRow).where(StatementRow.qid.in_(ended)))
                return out
        except BaseException:
            with self._ended_lock:
                self._ended += ended
            raise

    def statement_ended(self, qid: str) -> None:
        """See :meth:`Catalog.statement_ended`: the record goes in this catalog's next
        :meth:`commit` (or at :meth:`close`), not in a transaction of its own."""
        with self._ended_lock:
            self._ended.append(qid)

    def committed_statements(self, qids: Sequence[str] | None = None) -> set[str]:
        """See :meth:`Catalog.committed_statements`."""
        with self._session() as s:
            q = select(StatementRow.qid)
            if qids is not None:
                q = q.where(StatementRow.qid.in_(list(qids)))
            return set(s.execute(q).scalars())

    def forget_statements(self, qids: Sequence[str]) -> None:
        """See :meth:`Catalog.forget_statements`."""
        if qids:
            with self._session(write=True) as s:
                s.execute(delete(StatementRow).where(StatementRow.qid.in_(list(qids))))

    def commit_tables(self, changes: Sequence[TableChange], statement: str | None = None) -> list[Table]:
        """See :meth:`Catalog.commit_tables`: each change as :meth:`commit`, in one transaction."""
        with self._session(write=True) as s:
            if len(changes) > 1:
                self._lock_in_order(s, [c.table for c in changes])
            out = [self._commit_in(s, c) for c in changes]
            if statement is not None:
                s.add(StatementRow(qid=statement, committed_at=int(time.time())))
            return out

    @staticmethod
    def _lock_in_order(s: Session, tables: Sequence[Table]) -> None:
        """Locks the rows of ``tables`` in one order (their ids), before any is changed: two
        transactions over the same tables given in crossed order (two crossed EXCHANGE
        PARTITIONs) then wait for each other instead of deadlocking (PostgreSQL; SQLite's
        transactions take the whole database)."""
        names = {(t.db.lower(), t.name.lower()) for t in tables}
        stmt = (select(TableRow.id).join(DatabaseRow, DatabaseRow.id == TableRow.db_id)
                .where(tuple_(DatabaseRow.name, TableRow.name).in_(sorted(names)))
                .order_by(TableRow.id).with_for_update(of=TableRow))
        s.execute(stmt).all()

    def _commit_in(self, s: Session, change: TableChange) -> Table:
        table, table_parameters = change.table, change.table_parameters
        prepared = _prepare(table, change.put)
        by_name = dict(prepared)  # the last of duplicates wins
        key_names = table.partition_key_names()
        drop_names = [make_part_name(key_names, _normalize_values(table, v)) for v in change.drop]
        db = table.db.lower()
        try:
            row = self._table_row(s, db, table.name)
        except NoSuchTable:  # it was there when the statement read it
            raise _dropped_meanwhile(f"{db}.{table.name.lower()}") from None
        self._cas(s, row, change.expected_version, f"{db}.{row.name}")
        if table_parameters:
            merged = {**json.loads(row.properties), **table_parameters}
            props = {k: v for k, v in merged.items() if v is not None}
            row.properties = _dumps(props)
            s.flush()
        if drop_names:
            ids = _ids_by_name(s, row.id, drop_names)
            _delete_partition_ids(s, list(ids.values()))
        if by_name:
            existing = _ids_by_name(s, row.id, list(by_name))
            updates = [{"id": existing[n], "part_values": _dumps(list(p.values)),
                        "location": p.location, "parameters": _dumps(dict(p.parameters)),
                        "files": None if p.files is None else _dumps(list(p.files))}
                       for n, p in by_name.items() if n in existing]
            if updates:
                s.execute(update(PartitionRow), updates)
            self._insert_partitions(s, row.id, table, [(n, p) for n, p in by_name.items()
                                                       if n not in existing])
        return _table_of(row, db)


def _dropped_meanwhile(qualified: str) -> NoSuchTable:
    return NoSuchTable(
        f"Table {qualified} was dropped (or renamed) while this statement ran, so nothing was "
        f"written. Run SHOW TABLES to see the tables; create it again, or use its new name, and "
        f"run the statement again.", code=10001)


# SQLSTATEs of a transaction the database undid to let another go on (PostgreSQL):
# serialization_failure, deadlock_detected
_RETRYABLE_STATES = ("40001", "40P01")


def _retryable(e: DBAPIError) -> bool:
    state = getattr(e.orig, "sqlstate", None) or getattr(e.orig, "pgcode", None)
    return state in _RETRYABLE_STATES


def _bulk_insert(conn: Connection, entity: type[schema.Base], rows: list[dict[str, Any]]) -> None:
    """A multi-row INSERT: the driver's executemany on SQLite and COPY on PostgreSQL (both
    several times faster than SQLAlchemy's per-row parameter processing), SQLAlchemy's
    batched INSERT elsewhere. Driver errors are raised as SQLAlchemy's."""
    if not rows:
        return
    name, cols = entity.__tablename__, list(rows[0])
    if conn.dialect.name == "sqlite":
        sql = f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
        conn.exec_driver_sql(sql, [tuple(r[c] for c in cols) for r in rows])
        return
    if conn.dialect.name != "postgresql":
        conn.execute(insert(entity), rows)
        return
    sql = f"COPY {name} ({', '.join(cols)}) FROM STDIN"
    dbapi = conn.dialect.loaded_dbapi
    try:
        raw = conn.connection.dbapi_connection
        with raw.cursor() as cur, cur.copy(sql) as copy:  # type: ignore[union-attr]
            for r in rows:
                copy.write_row(tuple(r[c] for c in cols))
    except dbapi.Error as e:
        raise DBAPIError.instance(sql, None, e, dbapi.Error) from e


def _pg_next_ids(conn: Connection, n: int) -> list[int]:
    seq = conn.exec_driver_sql(
        f"SELECT pg_get_serial_sequence('{PartitionRow.__tablename__}', 'id')").scalar()
    return [int(i) for i, in conn.exec_driver_sql(
        f"SELECT nextval('{seq}') FROM generate_series(1, {int(n)})")]


def _sqlite_statistics_stale(conn: Connection) -> bool:
    """Whether SQLite's planner statistics (``sqlite_stat1``) are missing or were taken when
    there were less than half as many partitions as now (SQLite never analyzes on its own).
    Partitions added a few hundred at a time (a day of hourly partitions per INSERT) never
    reach :data:`_ANALYZE_AFTER` in one call; unanalyzed, ``ds IN (1,000 values) AND hr > 12``
    started from the ``hr`` range and took 5 s at 25,000 partitions, 67 s at 200,000 (0.01-0.06
    s analyzed). Cheap: the largest partition id (an upper bound of their number, read from
    the end of the primary key) is compared with the count the statistics recorded; only when
    that is twice as large are the partitions counted."""
    partitions = PartitionRow.__tablename__
    upper = conn.exec_driver_sql(f"SELECT max(id) FROM {partitions}").scalar() or 0
    if upper < _ANALYZE_AFTER:
        return False
    recorded = 0
    if conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").first():
        stat = conn.exec_driver_sql(
            f"SELECT stat FROM sqlite_stat1 WHERE tbl = '{partitions}' AND idx IS NOT NULL LIMIT 1").scalar()
        recorded = int(stat.split()[0]) if stat else 0
    if upper < 2 * recorded:
        return False
    count = conn.exec_driver_sql(f"SELECT count(*) FROM {partitions}").scalar() or 0
    return count >= max(_ANALYZE_AFTER, 2 * recorded)


def _ids_by_name(s: Session, tbl_id: int, names: Sequence[str]) -> dict[str, int]:
    """``{part_name: id}`` of the given names that exist (index lookups, in chunks).

    On PostgreSQL the names are one array parameter (:class:`InValues`): as an IN list of
    500 parameters, the statement psycopg prepares after five runs got a generic plan that
    compared every partition of the table with each name until the table was analyzed
    (adding 999 partitions to a table of 40,000 took 1.9 s, not 0.04)."""
    base = select(PartitionRow.part_name, PartitionRow.id).where(PartitionRow.tbl_id == tbl_id)
    conn = s.connection()
    out: dict[str, int] = {}
    for chunk in _chunks(list(dict.fromkeys(names)), _id_chunk(conn)):
        out.update({n: i for n, i in conn.execute(base.where(InValues(PartitionRow.part_name, chunk)))})
    return out


def _id_chunk(conn: Connection) -> int:
    """Names or ids a statement looks up: as many as an array holds well on PostgreSQL, an
    IN list of bound parameters elsewhere."""
    return 20 * _CHUNK if conn.dialect.name == "postgresql" else _CHUNK


def _bump_version(s: Session, tbl_id: int) -> None:
    """A change to a table's partitions outside :meth:`SqlCatalog.commit` (ADD or DROP
    PARTITION) moves its version on, so that a write planned before it fails its
    compare-and-swap and plans again instead of re-registering dropped files."""
    s.execute(update(TableRow).where(TableRow.id == tbl_id)
              .values(version=TableRow.version + 1)
              .execution_options(synchronize_session=False))


def _delete_partition_ids(s: Session, ids: Sequence[int]) -> None:
    for chunk in _chunks(list(ids), _id_chunk(s.connection())):
        s.execute(delete(PartitionKeyValRow).where(InValues(PartitionKeyValRow.part_id, chunk)))
        s.execute(delete(PartitionRow).where(InValues(PartitionRow.id, chunk)))


def _normalize_values(table: Table, values: Sequence[Any],
                      keys: tuple[str, ...] | None = None) -> tuple[str | None, ...]:
    """Values as strings, with NULL, '' and the default partition name all as ``None``.
    A value given as a Python value rather than text (``True``, ``7``, a date) becomes its
    key type's canonical text (:meth:`hivepark.types.HiveType.partition_text`), the text the
    SQL path stores for it (``true``, not ``True``)."""
    keys = table.partition_key_names() if keys is None else keys
    if len(values) == len(keys) and isinstance(values, tuple) and all(
            type(v) is str and v and v != DEFAULT_PARTITION_NAME for v in values):
        return values  # the common case, already normal
    if len(values) != len(keys):
        raise InvalidPartitionSpec(
            f"Partition spec {list(values)} has {len(values)} values, but "
            f"{table.qualified_name} is partitioned by {len(keys)} columns "
            f"({', '.join(keys)}). Give one value per partition column, in that order.")
    out: list[str | None] = []
    for key, v in zip(table.partition_keys, values):
        s = v if v is None or isinstance(v, str) else _canonical_text(table, key, v)
        out.append(None if not s or s == DEFAULT_PARTITION_NAME else s)
    return tuple(out)


def _canonical_text(table: Table, key: Column, value: Any) -> str | None:
    try:
        return key.hive_type.partition_text(value)
    except ValueError as e:
        raise InvalidPartitionSpec(
            f"Invalid value for partition column {key.name} of {table.qualified_name}: {e}. "
            f"Give a value of the column's type.") from e


def _prepare(table: Table, partitions: Sequence[Partition]) -> list[tuple[str, Partition]]:
    """``(part_name, partition)`` with normalized values and a creation time."""
    keys = table.partition_key_names()
    if not keys and partitions:
        raise SemanticError(f"Table {table.qualified_name} is not partitioned.")
    now = _now()
    out = []
    for p in partitions:
        values = _normalize_values(table, p.values, keys)
        if values != p.values or not p.create_time:
            p = Partition(values, p.location, p.parameters, p.files, p.create_time or now)
        out.append((make_part_name(keys, values), p))
    return out
