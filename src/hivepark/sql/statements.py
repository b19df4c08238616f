"""Typed statements: what a HiveQL statement asks for, as small frozen values.

``sql/build.py`` makes them from sqlglot's tree; ``exec/`` runs them and never sees a
syntax tree. The one exception is :class:`Query`: a query's tree is handed, unopened, to
the query runner (``exec/query.py``), which plans it.

Hive's checks that need the target table (partition specs, skew clauses) are in
``sql/validate.py``; exec calls them once it has looked the table up.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hivepark.catalog.buckets import Bucketing
from hivepark.catalog.models import Column
from hivepark.errors import HiveParkError, SemanticError
from hivepark.expr import Expr

# ---------------------------------------------------------------- parts


@dataclass(frozen=True)
class TableRef:
    """A table as a statement names it; ``db`` None means the current database."""

    db: str | None
    name: str

    def resolve(self, current_db: str) -> tuple[str, str]:
        return (self.db or current_db).lower(), self.name.lower()


@dataclass(frozen=True)
class PartitionSpec:
    """``PARTITION (ds='1', hr)``: (column, value text or None, is_dynamic), in the order
    written. A static NULL has value None and is_dynamic False. ``text`` is the clause as
    written (for messages)."""

    entries: tuple[tuple[str, str | None, bool], ...] = ()
    text: str = field(default="", compare=False)
    # each static entry's operator: "=" unless DROP PARTITION compares (c < 4); () means all "="
    ops: tuple[str, ...] = ()

    def op(self, i: int) -> str:
        return self.ops[i] if self.ops else "="

    def __iter__(self) -> Iterator[tuple[str, str | None, bool]]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def columns(self) -> list[str]:
        return [c for c, _, _ in self.entries]

    @property
    def dynamic(self) -> list[str]:
        """The dynamic columns, in order."""
        return [c for c, _, d in self.entries if d]

    @property
    def static(self) -> dict[str, str | None]:
        return {c: v for c, v, d in self.entries if not d}

    @staticmethod
    def all_dynamic(keys: list[str] | tuple[str, ...]) -> PartitionSpec:
        return PartitionSpec(tuple((k, None, True) for k in keys))


@dataclass(frozen=True)
class SkewValue:
    """One value of a SKEWED BY or SET SKEWED LOCATION clause: its literal text (None for
    NULL), its SQL as written, and whether it was a constant at all."""

    text: str | None
    sql: str
    constant: bool = True


@dataclass(frozen=True)
class SkewClause:
    """``SKEWED BY (c, ...) ON ((v, ...), ...) [STORED AS DIRECTORIES]`` as written."""

    columns: tuple[str, ...]
    values: tuple[tuple[SkewValue, ...], ...]
    stored_as_dirs: bool


@dataclass(frozen=True)
class Query:
    """A query, held as sqlglot's tree; exec passes it to the query runner unopened."""

    tree: Any = field(compare=False)


# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class CreateDatabase:
    name: str
    if_not_exists: bool = False
    location: str | None = None
    comment: str | None = None
    properties: tuple[tuple[str, str], ...] = ()  # WITH DBPROPERTIES (...)


@dataclass(frozen=True)
class AlterDatabase:
    """ALTER (DATABASE|SCHEMA) db SET DBPROPERTIES ('k'='v', ...) | SET LOCATION 'path'."""

    name: str
    properties: tuple[tuple[str, str], ...] = ()
    location: str | None = None


@dataclass(frozen=True)
class DescribeDatabase:
    """DESCRIBE (DATABASE|SCHEMA) [EXTENDED] db."""

    name: str
    extended: bool = False


@dataclass(frozen=True)
class DropDatabase:
    name: str
    if_exists: bool = False
    cascade: bool = False


@dataclass(frozen=True)
class Use:
    name: str


@dataclass(frozen=True)
class PartitionTransform:
    """One field of Hive 4's ``PARTITIONED BY SPEC (...)`` (Iceberg tables): ``transform``
    is identity, year, month, day, hour, bucket or truncate; ``param`` the bucket count or
    truncate width.

    >>> PartitionTransform("bucket", "id", 16).text
    'bucket(16, id)'
    """

    transform: str
    column: str
    param: int | None = None

    @property
    def text(self) -> str:
        if self.transform == "identity":
            return self.column
        inner = f"{self.param}, {self.column}" if self.param is not None else self.column
        return f"{self.transform}({inner})"


@dataclass(frozen=True)
class CreateTable:
    """CREATE [EXTERNAL] TABLE [IF NOT EXISTS] ... [LIKE t | AS SELECT ...].

    ``untyped_partition_columns``: ``PARTITIONED BY (p)`` without types (CTAS only: typed
    from the query). ``format`` is the STORED AS name as written (None: the default).
    ``storage_handler`` is the STORED BY name as written (a Hive class name or a handler's
    own name; None: a table of files), ``serde_properties`` its WITH SERDEPROPERTIES."""

    table: TableRef
    columns: tuple[Column, ...] = ()
    partition_columns: tuple[Column, ...] = ()
    untyped_partition_columns: tuple[str, ...] = ()
    skew: SkewClause | None = None
    format: str | None = None
    field_delim: str | None = None
    location: str | None = None
    external: bool = False
    properties: tuple[tuple[str, str], ...] = ()
    like: TableRef | None = None
    as_select: Query | None = None
    if_not_exists: bool = False
    bucketing: Bucketing | None = None  # CLUSTERED BY ... [SORTED BY ...] INTO n BUCKETS
    storage_handler: str | None = None
    serde_properties: tuple[tuple[str, str], ...] = ()
    partition_transforms: tuple[PartitionTransform, ...] = ()  # PARTITIONED BY SPEC (...), Hive 4


@dataclass(frozen=True)
class CreateView:
    """CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(c [COMMENT '...'], ...)] [COMMENT '...']
    [TBLPROPERTIES (...)] AS SELECT ..., and ALTER VIEW v AS SELECT ... (``alter``: the view
    must exist and keeps its comment and properties; ``replace``: a view of that name is
    replaced whole). ``columns``: the names given, each with its comment; empty: the query's
    own names."""

    table: TableRef
    query: Query
    columns: tuple[tuple[str, str | None], ...] = ()
    comment: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    if_not_exists: bool = False
    alter: bool = False
    replace: bool = False


@dataclass(frozen=True)
class DropTable:
    table: TableRef
    if_exists: bool = False
    view: bool = False  # DROP VIEW


@dataclass(frozen=True)
class TruncateTable:
    """``TRUNCATE [TABLE] t [PARTITION (...)]``; ``partition`` None means every partition."""

    table: TableRef
    partition: PartitionSpec | None = None


# ALTER TABLE actions. ``keyword`` is how messages name an action.

@dataclass(frozen=True)
class AddPartitions:
    partitions: tuple[tuple[PartitionSpec, str | None], ...]  # (spec, LOCATION or None)
    if_not_exists: bool = False
    keyword = "ADDPARTITIONS"


@dataclass(frozen=True)
class DropPartitions:
    specs: tuple[PartitionSpec, ...]
    if_exists: bool = False
    keyword = "DROPPARTITION"


@dataclass(frozen=True)
class RenameTable:
    target: TableRef
    keyword = "ALTERRENAME"


@dataclass(frozen=True)
class SetSkewed:
    """ALTER TABLE t SKEWED BY ... ON ... [STORED AS DIRECTORIES]."""

    skew: SkewClause
    keyword = "ALTERSKEWED"


@dataclass(frozen=True)
class NotSkewed:
    keyword = "ALTERNOT"


@dataclass(frozen=True)
class NotStoredAsDirectories:
    keyword = "ALTERNOT"


@dataclass(frozen=True)
class SetSkewedLocation:
    """SET SKEWED LOCATION (key='uri', ...): one (key values, location) per entry; a key of
    one string literal may be the default-directory key. ``mapped`` False: no map given."""

    entries: tuple[tuple[tuple[SkewValue, ...], str], ...]
    mapped: bool = True
    keyword = "SETSKEWEDLOCATION"


@dataclass(frozen=True)
class Concatenate:
    keyword = "CONCATENATE"


@dataclass(frozen=True)
class SetLocation:
    """ALTER TABLE t [PARTITION (...)] SET LOCATION 'path'."""

    location: str
    keyword = "SETLOCATION"


@dataclass(frozen=True)
class AddColumns:
    """ALTER TABLE t ADD COLUMNS (c type [COMMENT '...'], ...) [CASCADE | RESTRICT], or
    REPLACE COLUMNS (...) when ``replace``: the table's data columns."""

    columns: tuple[Column, ...]
    replace: bool = False

    @property
    def keyword(self) -> str:
        return "REPLACECOLS" if self.replace else "ADDCOLS"


@dataclass(frozen=True)
class ChangeColumn:
    """ALTER TABLE t CHANGE [COLUMN] c new_name type [COMMENT '...'] [FIRST | AFTER c2]."""

    column: str
    new_name: str | None
    new_type: str | None
    comment: str | None = None
    first: bool = False
    after: str | None = None
    keyword = "ALTERCOLUMN"


@dataclass(frozen=True)
class SetTableProperties:
    """ALTER TABLE t SET TBLPROPERTIES ('k'='v', ...)."""

    properties: tuple[tuple[str, str], ...]
    keyword = "ADDPROPS"


@dataclass(frozen=True)
class UnsetTableProperties:
    """ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)."""

    keys: tuple[str, ...]
    if_exists: bool = False
    keyword = "DROPPROPS"


@dataclass(frozen=True)
class RenamePartition:
    """ALTER TABLE t PARTITION (...) RENAME TO PARTITION (...): ``target`` is the new spec."""

    target: PartitionSpec
    keyword = "RENAMEPARTITION"


@dataclass(frozen=True)
class ExchangePartition:
    """ALTER TABLE dest EXCHANGE PARTITION (...) WITH TABLE source: the source's partitions the
    (partial) ``spec`` matches move into the table altered."""

    spec: PartitionSpec
    source: TableRef
    keyword = "EXCHANGEPARTITION"


@dataclass(frozen=True)
class Touch:
    """ALTER TABLE t TOUCH [PARTITION (...) ...]: the table's (or those partitions')
    ``transient_lastDdlTime`` set to now; nothing else changes."""

    specs: tuple[PartitionSpec, ...]
    keyword = "TOUCH"


@dataclass(frozen=True)
class SetFileFormat:
    """ALTER TABLE t SET FILEFORMAT fmt."""

    format: str
    keyword = "SETFILEFORMAT"


@dataclass(frozen=True)
class SetSerdeProperties:
    """ALTER TABLE t SET SERDEPROPERTIES ('k'='v', ...)."""

    properties: tuple[tuple[str, str], ...]
    keyword = "SETSERDEPROPS"


@dataclass(frozen=True)
class UnsupportedAlter:
    """An ALTER TABLE action hivepark does not run (SET LOCATION, SET TBLPROPERTIES, ...)."""

    keyword: str


AlterAction = (AddPartitions | DropPartitions | RenameTable | SetSkewed | NotSkewed
               | NotStoredAsDirectories | SetSkewedLocation | Concatenate | ChangeColumn | AddColumns
               | SetLocation | SetTableProperties | UnsetTableProperties | RenamePartition | SetFileFormat
               | SetSerdeProperties | ExchangePartition | Touch | UnsupportedAlter)


@dataclass(frozen=True)
class AlterTable:
    table: TableRef
    actions: tuple[AlterAction, ...]
    partition: PartitionSpec | None = None  # ALTER TABLE t PARTITION (...) <action>
    if_exists: bool = False
    view: bool = False  # ALTER VIEW v SET/UNSET TBLPROPERTIES or RENAME TO


@dataclass(frozen=True)
class Insert:
    """INSERT INTO|OVERWRITE TABLE t [PARTITION (...) [IF NOT EXISTS]] [(c1, c2, ...)] <query>."""

    table: TableRef
    partition: PartitionSpec
    overwrite: bool
    query: Query
    if_not_exists: bool = False
    columns: tuple[str, ...] | None = None  # INSERT ... t [PARTITION (...)] (c1, c2, ...) SELECT


@dataclass(frozen=True)
class InsertDirectory:
    """INSERT OVERWRITE [LOCAL] DIRECTORY 'path' [ROW FORMAT DELIMITED FIELDS TERMINATED BY 'c' ...]
    [STORED AS format] <query>. ``serde``: LazySimpleSerDe's other properties the ROW FORMAT gives
    (kept as a table's: ``colelction.delim``, ``mapkey.delim``, ``escape.delim``,
    ``serialization.null.format``)."""

    path: str
    query: Query
    local: bool = False
    format: str = "textfile"
    field_delim: str | None = None
    serde: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MultiInsert:
    """``FROM s INSERT ... SELECT ... INSERT ... SELECT ...``: ``source`` (the rows of s
    filtered by the OR of the branches' WHERE) is registered as the view ``view``, which
    each insert's query reads."""

    source: Query
    view: str
    inserts: tuple[Insert, ...]


@dataclass(frozen=True)
class LoadData:
    table: TableRef
    path: str
    local: bool = False
    overwrite: bool = False
    partition: PartitionSpec = PartitionSpec()


@dataclass(frozen=True)
class MsckRepair:
    """MSCK [REPAIR] TABLE t [ADD|DROP|SYNC PARTITIONS]: without REPAIR only reports what the
    metastore lacks (ADD) or has without a directory (DROP); SYNC is both."""

    table: TableRef
    repair: bool = True
    mode: str = "ADD"


@dataclass(frozen=True)
class ShowDatabases:
    like: str | None = None


@dataclass(frozen=True)
class ShowTables:
    db: str | None = None
    like: str | None = None
    views: bool = False  # SHOW VIEWS: the views alone


@dataclass(frozen=True)
class ShowConf:
    """SHOW CONF 'key': a setting's default, type and description (Hive's columns)."""

    key: str


@dataclass(frozen=True)
class ShowTableExtended:
    """SHOW TABLE EXTENDED [IN|FROM db] LIKE 'p' [PARTITION (...)]: Hive's table status."""

    db: str | None
    like: str
    partition: PartitionSpec = PartitionSpec()


@dataclass(frozen=True)
class ShowColumns:
    """SHOW COLUMNS (IN|FROM) t [(IN|FROM) db] [LIKE 'p']."""

    table: TableRef
    like: str | None = None


@dataclass(frozen=True)
class ShowFunctions:
    """SHOW FUNCTIONS [LIKE 'p']: Spark's functions, which a query calls."""

    like: str | None = None


@dataclass(frozen=True)
class DescribeFunction:
    """DESCRIBE FUNCTION [EXTENDED] f."""

    name: str
    extended: bool = False


@dataclass(frozen=True)
class ShowPartitions:
    """SHOW PARTITIONS t [PARTITION (...)] [WHERE ...] [ORDER BY key [ASC|DESC], ...] [LIMIT n]
    (Hive 4's last three): ``where`` as the predicate tree, ``order`` as (key, descending)."""

    table: TableRef
    partition: PartitionSpec = PartitionSpec()
    where: Expr | None = None
    order: tuple[tuple[str, bool], ...] = ()
    limit: int | None = None


@dataclass(frozen=True)
class ShowCreateTable:
    """SHOW CREATE TABLE t: the DDL that re-creates the table, one row per line."""

    table: TableRef


@dataclass(frozen=True)
class ShowTblProperties:
    """SHOW TBLPROPERTIES t [('key')]."""

    table: TableRef
    key: str | None = None


@dataclass(frozen=True)
class Describe:
    table: TableRef
    style: str | None = None  # FORMATTED, EXTENDED or None
    partition: PartitionSpec = PartitionSpec()
    column: str | None = None  # DESCRIBE t col: that column alone


@dataclass(frozen=True)
class Set:
    """``SET`` (list all), ``SET k`` (show one) or ``SET k=v``."""

    key: str | None
    value: str | None


@dataclass(frozen=True)
class CreateMacro:
    """CREATE TEMPORARY MACRO name (arg type, ...) expression: ``body`` is the expression as
    Spark SQL text, ``params`` the arguments with their Spark types."""

    name: str
    params: tuple[tuple[str, str], ...]
    body: str


@dataclass(frozen=True)
class DropMacro:
    """DROP TEMPORARY MACRO [IF EXISTS] name."""

    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class Reset:
    """``RESET`` (every setting back to its value at connect) or ``RESET k`` (one)."""

    key: str | None = None


@dataclass(frozen=True)
class AnalyzeStatistics:
    """ANALYZE TABLE t [PARTITION (...)] COMPUTE STATISTICS [NOSCAN]."""

    table: TableRef
    partition: PartitionSpec = PartitionSpec()
    noscan: bool = False


@dataclass(frozen=True)
class AnalyzeColumns:
    """ANALYZE TABLE t [PARTITION (...)] COMPUTE STATISTICS FOR COLUMNS [c, ...] (no list: all)."""

    table: TableRef
    columns: tuple[str, ...]
    partition: PartitionSpec = PartitionSpec()


@dataclass(frozen=True)
class AnalyzeSkew:
    """ANALYZE TABLE t [PARTITION (...)] COMPUTE SKEW FOR COLUMNS c, ..."""

    table: TableRef
    columns: tuple[str, ...]
    partition: PartitionSpec = PartitionSpec()


@dataclass(frozen=True)
class Explain:
    """EXPLAIN [EXTENDED|FORMATTED|ANALYZE|DEPENDENCY] of a query (INSERT and CTAS explain theirs)."""

    style: str | None
    query: Query

    @staticmethod
    def of(statement: Statement) -> Explain:
        """The EXPLAIN of a statement (itself if it is one)."""
        if isinstance(statement, Failed):
            statement.throw()
        if isinstance(statement, Explain):
            return statement
        query = explained_query(statement)
        if query is None:
            raise SemanticError("EXPLAIN works on queries (SELECT, INSERT ... SELECT, CREATE "
                                "TABLE AS SELECT)")
        return Explain(None, query)


def explained_query(statement: Statement) -> Query | None:
    if isinstance(statement, Query):
        return statement
    if isinstance(statement, Insert):
        return statement.query
    if isinstance(statement, CreateTable):
        return statement.as_select
    return None


@dataclass(frozen=True)
class Failed:
    """A statement that parsed but is not valid (Hive rejects it when it compiles it): the
    error is raised when the statement runs, so earlier statements of a script still run."""

    error: HiveParkError = field(compare=False)

    def throw(self) -> None:
        raise self.error


Statement = (CreateDatabase | AlterDatabase | DescribeDatabase | DropDatabase | Use | CreateTable | CreateView
             | DropTable | TruncateTable | AlterTable
             | Insert | InsertDirectory | MultiInsert | LoadData | MsckRepair | ShowDatabases | ShowTables
             | ShowTableExtended | ShowConf | ShowColumns
             | ShowPartitions | ShowCreateTable | ShowTblProperties | ShowFunctions | Describe | DescribeFunction
             | Set | Reset | CreateMacro | DropMacro | AnalyzeSkew | AnalyzeStatistics | AnalyzeColumns | Explain
             | Query | Failed)
