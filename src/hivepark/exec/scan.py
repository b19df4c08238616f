"""Table scans become Spark DataFrames over exactly the chosen partitions.

One Spark read over all chosen files or directories, never a union per partition. Partition
values come from the metastore: through Spark's ``basePath`` discovery when every chosen
partition lives in its Hive-layout directory under its canonical value (a DECIMAL key is
discovered as text and cast, see ``storage.formats.load``), otherwise through a small map from
directory to values applied to each row's ``_metadata.file_path`` (a value that is not of its
type reads as NULL, as in Hive).
"""

from __future__ import annotations

import functools
import itertools
import json
import posixpath
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hivepark import layout
from hivepark.catalog.base import Catalog
from hivepark.catalog.buckets import bucket_of_file
from hivepark.catalog.filters import (
    KeyCodec,
    Undecidable,
    bind_to_keys,
    codecs_for,
    key_values,
)
from hivepark.catalog.models import AS_OF_TIME, AS_OF_VERSION, Column, Partition, Table
from hivepark.catalog.skew import SkewLayout, partition_layout
from hivepark.errors import SemanticError
from hivepark.expr import And, EqualTo, Expr, In, Not, Or, and_all, conjuncts
from hivepark.expr.bind import bind_literal
from hivepark.expr.visitors import compile_predicate, in_members, render_literal
from hivepark.lru import Lru
from hivepark.plan.nodes import TableScan
from hivepark.storage import fs
from hivepark.storage.commit import FILES_PARAM, current_files, journals_seen, listed_files
from hivepark.storage.formats import (
    CUT_COLUMNS,
    FILE_TYPES,
    NULL_FORMAT,
    SERDE_DELIMITERS,
    load,
    schema_of,
    spark_literal,
    spark_type,
)
from hivepark.storage.handlers import PushedFilter, handler_for


def pushed_filter(scan: TableScan) -> PushedFilter | None:
    """The filter a handler scan's decision pushes to its source (None: nothing), with the
    runtime (map-join) value sets of a handler that takes them ANDed in."""
    d = scan.pushdown
    parts = [d.pushed] if d is not None and d.pushed is not None else []
    parts += [rf.expr() for rf in scan.row_filters]
    return PushedFilter(and_all(*parts)) if parts else None


@dataclass(frozen=True)
class Relation:
    """A scan's rows: ``df`` filtered by ``where`` (Spark SQL, on partition columns). When
    ``view`` is set, ``df`` is a DataFrame kept by :class:`TableFrames`, registered
    once as that temporary view and reused by every query: a query reads it as
    ``(SELECT * FROM view WHERE ...)`` and registers nothing (a temporary view costs a few
    milliseconds to create and drop, per scan and query)."""

    df: DataFrame
    view: str | None = None
    where: str | None = None

    def dataframe(self) -> DataFrame:
        return self.df.where(F.expr(self.where)) if self.where is not None else self.df


def scan_dataframe(spark: SparkSession, scan: TableScan,
                   warm: TableFrames | None = None, settings: Any = None) -> DataFrame:
    """The rows of ``scan``: data columns then partition columns, typed as in the metastore.
    With ``warm``, a scan of many partitions may reuse a whole-table DataFrame (see
    :class:`TableFrames`). A handler table's rows are its handler's read, given the pushed
    filter of the scan's decision (``settings``: the session's, passed to the handler)."""
    return scan_relation(spark, scan, warm, settings).dataframe()


def scan_relation(spark: SparkSession, scan: TableScan,
                  warm: TableFrames | None = None, settings: Any = None) -> Relation:
    """The rows of ``scan`` (:func:`scan_dataframe`) as a :class:`Relation`."""
    table = scan.table
    handler = handler_for(table)
    if handler is not None:
        return Relation(handler.read(spark, table, scan.read_columns, pushed_filter(scan), settings or {}))
    if AS_OF_VERSION in table.properties or AS_OF_TIME in table.properties:
        raise SemanticError(f"Table {table.qualified_name} has no snapshots to travel to: FOR SYSTEM_VERSION / "
                            "SYSTEM_TIME AS OF reads Iceberg tables (STORED BY ICEBERG). Remove the clause.")
    flight = _Flight()
    rel = _files_relation(spark, scan, warm, flight)
    if flight.moved():  # a directory Spark listed may hold the files of a statement that began meanwhile
        if warm is not None:
            warm.forget_kept(spark, table)
        rel = _files_relation(spark, scan, warm, _Flight(always=True))
    return rel


class _Flight:
    """Whether a statement of this process's warehouses has a journal (its files may be in a
    directory the metastore records no files for: :func:`_directory` then lists it less them),
    asked once, when the first such directory is read. Spark lists a directory given to it
    after that, so :meth:`moved` tells afterwards whether a statement began (or ended) since:
    its files may be in what Spark listed, and the scan is built again from a listing of ours."""

    def __init__(self, always: bool = False) -> None:
        self.always = always  # every such directory listed here, its files given to Spark
        self.handed = False  # whether a directory was given to Spark to list
        self._seen: tuple[bool, object] | None = None

    def __call__(self) -> bool:
        if self.always:
            return True
        if self._seen is None:
            self._seen = journals_seen()
        return self._seen[0]

    def moved(self) -> bool:
        return self.handed and self._seen is not None and journals_seen() != self._seen


def _files_relation(spark: SparkSession, scan: TableScan, warm: TableFrames | None, flight: _Flight) -> Relation:
    table = scan.table
    if not table.is_partitioned:
        paths, listed = _table_paths(scan, flight)
        if not paths or not listed:
            return Relation(spark.createDataFrame([], schema_of(table.columns)))
        if warm is not None and FILES_PARAM in table.properties and scan.buckets is None \
                and partition_layout(table.properties) is None:
            return warm.whole(spark, table, paths)
        return Relation(load(spark, table, [fs.to_spark_path(p) for p in paths]))
    if warm is not None and scan.partitions and scan.buckets is None:
        # first, as it checks each chosen partition's files against the whole-table frame's,
        # which holds only flat Hive-layout directories: per-partition checks of 2,406
        # partitions on every query would cost more than the rest of its planning
        rel = warm.pruned(spark, scan)
        if rel is not None:
            return rel
    per_part = _partition_paths(scan.partitions or (), scan, flight)
    paths = [path for _, ps, _ in per_part for path in ps]
    if not paths:
        return Relation(spark.createDataFrame([], schema_of(table.all_columns)))
    if all(not nested for _, _, nested in per_part) and \
            _all_in_hive_layout(table, [p for p, _, _ in per_part]):
        return Relation(load(spark, table, [fs.to_spark_path(p) for p in paths],
                             base_path=fs.to_spark_path(table.location)))
    dirs: dict[str, tuple[str | None, ...]] = {}
    for p, ps, nested in per_part:
        if nested:
            for path in ps:
                dirs.setdefault(_spark_dir(posixpath.dirname(path)), p.values)
        else:
            dirs.setdefault(_spark_dir(p.location), p.values)
    if warm is not None:
        # a directory read whole (a partition without a recorded file list: ADD PARTITION ...
        # LOCATION) is kept by what it holds now, so files another tool drops in are read
        held = tuple((p.location, fs.stamps(p.location)) for p, _, nested in per_part
                     if p.files is None and not nested)
        return warm.mapped(spark, table, list(dirs.items()), paths, held)
    return Relation(_mapped_scan(spark, table, list(dirs.items()), paths))


_frame_ids = itertools.count(1)


def _register(df: DataFrame) -> str:
    """A new temporary view of ``df`` (hivepark's, ignored as a table name by queries)."""
    name = f"__hivepark_frame_{next(_frame_ids)}"
    df.createOrReplaceTempView(name)
    return name


@dataclass(frozen=True)
class _Frame:
    """A whole-table DataFrame, its temporary view, and exactly what it was built from."""

    df: DataFrame
    view: str
    files: Mapping[str, frozenset[str]]  # partition directory -> its files in the index
    #: a listed partition's directory (no recorded files) -> its files with their sizes and times
    #: as listed (a file another tool rewrote under the same name is a change too)
    listed: Mapping[str, frozenset[tuple[str, int, int | None]]]
    values: frozenset[tuple[str | None, ...]]  # the partitions' key values in the index
    version: tuple[int, str]  # the table's (version, uid) it was built at
    parts: tuple[Partition, ...]  # every partition it was built from
    definition: tuple[Any, ...]  # how it reads the files: _definition(table)
    patches: int = 0  # patches of an earlier frame it carries (exec/scan.patched)
    rows: Sequence[Mapping[str, Any]] | None = None  # their typed key values, when computed
    #: by a key term of ``rows``: each non-NULL value -> the places in ``parts`` holding it
    indexes: dict[str, dict[Any, list[int]]] = field(default_factory=dict)

    @functools.cached_property
    def part_ids(self) -> frozenset[int]:
        """The identities of ``parts`` (held by the frame, so never reused while it lives):
        a partition the frame itself handed out holds by construction."""
        return frozenset(map(id, self.parts))


class TableFrames:
    """Whole-table DataFrames, reused by scans of many partitions.

    Handing Spark thousands of files costs a file index built over all of them (a status
    call per file) for every query; a DataFrame over the whole table, built once from the
    metastore's file lists, keeps that index, and a scan applies its chosen partitions as
    a filter on the partition column, which Spark prunes in memory with no file-system
    call (what a warm ``spark.read`` DataFrame does). A scan uses it only when each chosen
    partition's files, as the metastore records them now, are exactly the files the index
    holds for that directory, so a commit (or a dropped and re-created table) is never read
    from a stale index: the index is rebuilt instead (a partition the metastore records no
    files for, made by ADD PARTITION, is listed for that at each scan reading it, its files'
    sizes and times compared: files another tool drops in or appends to are read, as Spark
    reading its directory would).
    Used for tables in the Hive layout with integer, string or date keys; built when a scan reads at least
    half of the table's partitions, or at the second scan of a few partitions of the same
    table version (at most FRAME_MAX_PARTITIONS partitions): a one-off query of a few
    partitions, or one after each commit, never pays for all of them; a table queried again
    and again does so once. Then reused by every scan it matches. A frame that cannot be
    built (a file of some partition deleted or unreadable: Spark checks every file it is given)
    is not tried again at that table version, and each scan loads its own partitions' files: a
    file missing from a partition a query does not read never fails it. An unpartitioned
    table's DataFrame is kept by its table version and file list, and so is a scan read by its
    files' directories (list bucketing), the last few per table (:meth:`_keep`). Each DataFrame is registered once as a
    temporary view, dropped when the DataFrame is replaced (see :class:`Relation`).
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._frames: dict[str, _Frame] = {}
        # tables (at a version) with a partition no frame can hold (outside the Hive layout,
        # list-bucketed, a directory in a listed one): not tried again until they change
        self._unframeable: dict[str, tuple[int, str]] = {}
        # scans of a few partitions seen, per table: (version, how many)
        self._small_scans: dict[str, tuple[tuple[int, str], int]] = {}
        # DataFrames over exact file sets, per table, by (table version, files, ...) ->
        # (DataFrame, view): an unpartitioned table's (the last one), scans read by their
        # files' directories (list bucketing; the last MAPPED_PER_TABLE)
        self._kept: dict[str, OrderedDict[Hashable, tuple[DataFrame, str]]] = {}

    def close(self, spark: SparkSession) -> None:
        """Drops every kept DataFrame's temp view (the session outlives this warehouse)."""
        views = [f.view for f in self._frames.values()]
        views += [view for kept in self._kept.values() for _, view in kept.values()]
        self._frames.clear()
        self._kept.clear()
        for view in views:
            spark.catalog.dropTempView(view)

    def _replace_frame(self, spark: SparkSession, name: str, frame: _Frame | None) -> None:
        old = self._frames.pop(name, None)
        if old is not None:
            spark.catalog.dropTempView(old.view)
        if frame is not None:
            self._frames[name] = frame

    def pruned(self, spark: SparkSession, scan: TableScan) -> Relation | None:
        """The scan's rows from the whole-table DataFrame, or None (load the files)."""
        table = scan.table
        keys = table.partition_keys
        if not values_bind(keys):
            return None
        chosen = scan.partitions or ()
        frame = self._frames.get(table.qualified_name)
        if frame is None or frame.definition != _definition(table) or not _holds(frame, chosen):
            version = (table.version, table.uid)
            if 2 * len(chosen) < scan.total_partitions:
                # a few partitions: building the whole index would cost more than loading
                # their files, unless this version of the table is read again and again
                seen = self._small_scans.get(table.qualified_name)
                count = seen[1] + 1 if seen is not None and seen[0] == version else 1
                self._small_scans[table.qualified_name] = (version, count)
                if count < 2 or scan.total_partitions > FRAME_MAX_PARTITIONS:
                    return None
            if self._unframeable.get(table.qualified_name) == version:
                return None  # this version of the table already failed to build
            try:
                built = self._build(spark, table,
                                    chosen if len(chosen) == scan.total_partitions else None, frame)
            except Exception:  # noqa: BLE001 - a file of the table missing or unreadable: maybe not one
                # this scan reads, so it loads its own partitions' files (and fails there if one of
                # them is the file); the frame is not tried again at this version
                built = None
            self._replace_frame(spark, table.qualified_name, built)
            if built is None:
                self._unframeable[table.qualified_name] = (table.version, table.uid)
                return None
            frame = built
            if not _holds(frame, chosen, fresh=True):
                return None  # the table changed between the two metastore reads
        want = {p.values for p in chosen}
        if want == frame.values:
            return Relation(frame.df, frame.view)
        cond = partitions_where(keys, want, frame.values)
        return Relation(frame.df, frame.view, cond) if cond is not None else None

    def whole(self, spark: SparkSession, table: Table, paths: list[str]) -> Relation:
        """An unpartitioned table's rows over ``paths`` (its recorded files)."""
        return self._keep(spark, table, (tuple(paths),), 1,
                          lambda: load(spark, table, [fs.to_spark_path(p) for p in paths]))

    def mapped(self, spark: SparkSession, table: Table,
               dirs: list[tuple[str, tuple[str | None, ...]]], paths: list[str],
               listed: tuple[Any, ...] = ()) -> Relation:
        """Partitions read by their files' directories (list-bucketing subdirectories, or
        directories outside the Hive layout), the last MAPPED_PER_TABLE file sets per table:
        building one costs Spark a file index and a directory map (50-100 ms for 120 files).
        ``listed``: the files (sizes and times) of the directories among ``paths`` read whole,
        as listed now: Spark's index of such a directory holds the files of its moment. A
        TIMESTAMP partition column's value is read in the session time zone of the build, so
        such a table's frames are kept by the zone too (a value reads as written in every zone)."""
        zone = spark.conf.get("spark.sql.session.timeZone") \
            if any(k.hive_type.kind == "timestamp" for k in table.partition_keys) else None
        return self._keep(spark, table, (tuple(paths), tuple(dirs), listed, zone), MAPPED_PER_TABLE,
                          lambda: _mapped_scan(spark, table, dirs, paths))

    def forget_kept(self, spark: SparkSession, table: Table) -> None:
        """Drops the DataFrames kept for ``table`` (:meth:`_keep`)."""
        for _, view in self._kept.pop(table.qualified_name, OrderedDict()).values():
            spark.catalog.dropTempView(view)

    def _keep(self, spark: SparkSession, table: Table, files: tuple[Any, ...], limit: int,
              build: Callable[[], DataFrame]) -> Relation:
        """The DataFrame ``build`` makes over exactly ``files``, kept with its view for the
        next scan of the same files at the same table version (a commit writes new files and
        a new version; any change of the definition a new version too), the last ``limit``
        per table; an older one's view is dropped."""
        kept = self._kept.setdefault(table.qualified_name, OrderedDict())
        key = (table.version, table.uid, *files)
        hit = kept.get(key)
        if hit is None:
            df = build()
            hit = kept[key] = (df, _register(df))
            while len(kept) > limit:
                spark.catalog.dropTempView(kept.popitem(last=False)[1][1])
        kept.move_to_end(key)
        return Relation(hit[0], hit[1])

    def _build(self, spark: SparkSession, table: Table, every: Sequence[Partition] | None,
               previous: _Frame | None = None) -> _Frame | None:
        """The whole-table frame over ``every`` partition (listed here when not given): the
        ``previous`` frame of the table patched where it can be (:func:`patched`: the same
        table read the same way, at most PATCHES times in a row, every file of the partitions
        it keeps still there, as Spark would check them), else a new one."""
        parts = list(every) if every is not None else self.catalog.list_partitions(table)
        if not parts or any((p.files is not None and any("/" in f for f in p.files)) or
                            partition_layout(p.parameters) is not None for p in parts) \
                or not _all_in_hive_layout(table, parts):
            return None
        files: dict[str, frozenset[str]] = {}
        listed: dict[str, frozenset[tuple[str, int, int | None]]] = {}
        for p in parts:
            if p.files is not None:
                files[p.location] = frozenset(current_files(p.location, p.files))
                continue
            stamps = _listed_now(p)
            if stamps is None:
                return None  # a directory below a listed partition's: Spark's discovery reads it
            listed[p.location] = stamps
            files[p.location] = frozenset(path for path, _, _ in stamps)
        base = fs.to_spark_path(table.location)

        def read(values: Iterable[tuple[str | None, ...]]) -> DataFrame | None:
            chosen = set(values)
            paths = [fs.to_spark_path(path) for p in parts if p.values in chosen for path in sorted(files[p.location])]
            return load(spark, table, paths, base_path=base) if paths else None

        definition = _definition(table)
        df, patches = None, 0
        if previous is not None and previous.definition == definition and previous.version[1] == table.uid \
                and previous.patches < PATCHES:
            old = {p.values: previous.listed.get(p.location, previous.files[p.location]) for p in previous.parts}
            now = {p.values: listed.get(p.location, files[p.location]) for p in parts}
            kept = [path for p in parts if p.location not in listed and old.get(p.values) == now[p.values]
                    for path in files[p.location]]  # (a listed partition's files were listed just now)
            df = patched(previous.df, table.partition_keys, old, now, read) if fs.all_exist(kept) else None
            patches = previous.patches + 1
        if df is None:
            df, patches = read(p.values for p in parts), 0
            if df is None:  # every partition empty (TRUNCATE): Spark's text reader cannot read no file
                return None
        return _Frame(df, _register(df), files, listed, frozenset(p.values for p in parts),
                      (table.version, table.uid), tuple(parts), definition, patches)

    def partitions(self, table: Table) -> tuple[Partition, ...] | None:
        """Every partition of ``table`` as its frame was built from, when the table is still
        at that version (a commit, an added or dropped partition changes it); else None."""
        frame = self._frames.get(table.qualified_name)
        if frame is None or frame.version != (table.version, table.uid):
            return None
        return frame.parts

    def partition_rows(self, table: Table, codecs: Mapping[str, KeyCodec]) -> Sequence[Mapping[str, Any]]:
        """:meth:`partitions`' typed key values (``key_values``), computed once per frame."""
        frame = self._frames[table.qualified_name]
        if frame.rows is None:
            names = table.partition_key_names()
            rows = [key_values(dict(zip(names, p.values)), codecs) for p in frame.parts]
            self._frames[table.qualified_name] = frame = replace(frame, rows=rows)
        assert frame.rows is not None
        return frame.rows

    def partition_index(self, table: Table, codecs: Mapping[str, KeyCodec], term: str
                        ) -> Mapping[Any, list[int]]:
        """:meth:`partition_rows` by their value of ``term`` (non-NULL), once per frame and
        term: an equality or IN on a key finds its partitions without a pass over all."""
        rows = self.partition_rows(table, codecs)
        indexes = self._frames[table.qualified_name].indexes
        index = indexes.get(term)
        if index is None:
            index = {}
            for i, row in enumerate(rows):
                if row[term] is not None:
                    index.setdefault(row[term], []).append(i)
            indexes[term] = index
        return index


class FramedPartitions:
    """``list_partitions`` for runtime pruning's listing: answered in memory from a
    whole-table frame's partitions when the table is still at the frame's version (each
    runtime IN a hash lookup per partition), else by the metastore. The metastore's answer
    is a sound superset; this one is exact (:func:`~hivepark.catalog.filters.compile_filter`)."""

    def __init__(self, catalog: Catalog, frames: TableFrames) -> None:
        self.catalog, self.frames = catalog, frames

    def list_partitions(self, table: Table, filter: Expr | None = None) -> list[Partition]:
        parts = self.frames.partitions(table)
        if parts is None:
            return self.catalog.list_partitions(table, filter)
        if filter is None:
            return list(parts)
        codecs = codecs_for(table)
        try:
            keep, lookup = _compiled(filter, tuple(codecs.items()))
        except Undecidable:
            return self.catalog.list_partitions(table, filter)
        rows = self.frames.partition_rows(table, codecs)
        if lookup is not None:  # key = v, key IN (...) (alone or ANDed): the key's index
            term, values, exact = lookup
            index = self.frames.partition_index(table, codecs, term)
            found = sorted(i for v in values for i in index.get(v, ()))
            return [parts[i] for i in found if exact or keep(rows[i]) is True]
        return [p for p, row in zip(parts, rows) if keep(row) is True]


Compiled = Callable[[Mapping[str, Any]], "bool | None"]
#: a filter that is, or ANDs, an equality or IN on a key term: the term, its non-NULL values,
#: and whether that is the whole filter (else the rest is evaluated on the partitions found)
Lookup = tuple[str, frozenset[Any], bool]

# Runtime pruning's partition filters as compiled, by (filter, the table's key codecs): at
# most 1,000,000 literals in all.
_compiled_cache: Lru[tuple[int, Compiled, Lookup | None]] = Lru(1_000_000, lambda entry: entry[0])


def _literal_count(e: Expr) -> int:
    if isinstance(e, (And, Or)):
        return _literal_count(e.left) + _literal_count(e.right)
    if isinstance(e, Not):
        return _literal_count(e.child)
    return len(e.values) if isinstance(e, In) else 1


def _compiled(filter: Expr, codecs: tuple[tuple[str, KeyCodec], ...]
              ) -> tuple[Compiled, Lookup | None]:
    """:func:`compile_filter`, once per filter (a query repeated over unchanged small sides
    asks for the same runtime IN: thousands of values bound per query otherwise), and the
    filter as a :data:`Lookup` when it is one (the partitions it is TRUE for are exactly
    those whose bound key value is one of the values); both from one binding."""
    key = (filter, codecs)
    hit = _compiled_cache.get(key)
    if hit is None:
        bound = bind_to_keys(filter, dict(codecs))  # what compile_filter compiles
        hit = (_literal_count(filter), compile_predicate(bound), _lookup(bound))
        _compiled_cache.put(key, hit)
    return hit[1], hit[2]


def _lookup(bound: Expr) -> Lookup | None:
    """``bound`` (:func:`bind_to_keys`' tree) as a :data:`Lookup`: itself an equality or IN,
    or an AND with one among its conjuncts (the AND is TRUE only where that conjunct is);
    None otherwise. Values that are not hashable, or NaN (equal to nothing), keep the
    compiled filter."""
    if isinstance(bound, And):
        for part in conjuncts(bound):
            found = _lookup(part)
            if found is not None:
                return found[0], found[1], False
        return None
    if isinstance(bound, In):
        term, members = bound.term, in_members(bound.values)
    elif isinstance(bound, EqualTo) and bound.value is not None:
        term, members = bound.term, in_members((bound.value,))
    else:
        return None
    if members is None or any(v != v for v in members):
        return None
    return term, members, True


def _definition(table: Table) -> tuple[Any, ...]:
    """What a frame's reading of the files depends on besides them: an ALTER TABLE of the
    columns changes it with the files unchanged (or of the NULL text, a TEXTFILE's other separators
    or escape, or of the columns read cut)."""
    return (table.columns, table.partition_keys, table.format, table.field_delim,
            table.properties.get(NULL_FORMAT), table.properties.get(CUT_COLUMNS),
            table.properties.get(FILE_TYPES),
            *(table.properties.get(k) for k in SERDE_DELIMITERS))


def _holds(frame: _Frame, chosen: Sequence[Partition], fresh: bool = False) -> bool:
    """Each chosen partition's files are exactly the index's files for it: as recorded (at
    once for the frame's own partitions, which runtime pruning's listing hands out), or, for
    a partition without a recorded list, as listed now (files another tool dropped in since),
    unless the frame was built from this very listing (``fresh``)."""
    own = frame.part_ids

    def same(p: Partition) -> bool:
        if p.files is None:
            return p.location in frame.listed and frame.listed[p.location] == _listed_now(p)
        return p.location not in frame.listed and \
            frame.files.get(p.location) == frozenset(current_files(p.location, p.files))

    return all((id(p) in own and (fresh or p.files is not None)) or same(p) for p in chosen)


def _listed_now(p: Partition) -> frozenset[tuple[str, int, int | None]] | None:
    """The files of a partition without a recorded list, with their sizes and modification
    times: its directory's files as listed now, less those of statements not committed (what
    Spark, handed the directory, would read; one listing call, far cheaper than Spark's file
    index over it); None when the directory holds a directory (partition discovery's, left to
    Spark's reader)."""
    entries = fs.list_files(p.location)
    if any(e.is_dir for e in entries):
        return None
    return frozenset((e.path, e.size, e.mtime_ns) for e in listed_files(p.location, entries)
                     if not e.path.endswith("._COPYING_"))


#: Scans by directory (list bucketing) kept per table: the file sets of its last few queries.
MAPPED_PER_TABLE = 8

#: A table with more partitions gets a whole-table frame only from a scan of half of them.
FRAME_MAX_PARTITIONS = 10_000

_WARM_KEY_TYPES = {"tinyint", "smallint", "int", "integer", "bigint", "string", "varchar",
                   "date"}


#: A DataFrame over a table's files (a whole-table frame, a table's Spark view) is patched
#: (:func:`patched`) at most this many times in a row, then built again from all its files
#: (each patch adds a filter and a branch to its plan).
PATCHES = 8


def patched(df: DataFrame, keys: Sequence[Column], before: Mapping[tuple[str | None, ...], object],
            after: Mapping[tuple[str | None, ...], object],
            read: Callable[[set[tuple[str | None, ...]]], DataFrame | None]) -> DataFrame | None:
    """``df``, the rows of the partitions ``before`` (key values -> what is read of each, its
    files), as the rows of ``after``: the partitions whose files changed or that are gone are
    filtered out, and those new or changed read by ``read`` (given their key values; None: no
    file) and added, so Spark lists the files of what changed, not of the table (a status call
    per file: seconds at 20,000 partitions). None (build it anew) when a quarter of the
    partitions or more changed, or a value does not bind."""
    gone = {values for values, what in before.items() if after.get(values) != what}
    fresh = {values for values, what in after.items() if before.get(values) != what}
    if 4 * len(gone | fresh) > max(len(before), len(after)) or not values_bind(keys):
        return None
    if gone:
        cond = partitions_where(keys, set(before) - gone, frozenset(before), TUPLE_TERMS)
        if cond is None:
            return None
        df = df.where(F.expr(cond))
    new = read(fresh) if fresh else None
    return df.unionByName(new) if new is not None else df


def values_bind(keys: Sequence[Column]) -> bool:
    """Whether partitions of these keys can be chosen by :func:`partitions_where`."""
    return all(k.type.lower().split("(")[0].strip() in _WARM_KEY_TYPES for k in keys)


def partitions_where(keys: Sequence[Column], want: set[tuple[str | None, ...]],
                     every: frozenset[tuple[str | None, ...]], limit: int | None = None) -> str | None:
    """Spark SQL on the partition columns keeping exactly the ``want`` partitions (their
    values as the metastore holds them) of rows whose partitions are ``every``, in its
    shortest form (ranges, IN, NOT IN, a condition per key, or per partition); None if a
    value does not bind, or (``limit``) it would name more partitions one by one. Only for keys
    of which :func:`values_bind` is true."""
    if len(keys) == 1:
        return _partition_predicate(keys[0], {v[0] for v in want}, _key_values(every, 0))
    cond = _product_predicate(keys, want, every)
    return cond if cond is not None else _tuples_predicate(keys, want, every, limit)


def _partition_predicate(key: Column, want: set[str | None],
                         every: frozenset[str | None]) -> str | None:
    """The wanted values of ``key`` among the index's (``every``, a frame's own set: its
    orders are kept by identity): as ranges of values that are consecutive among the
    index's (``key BETWEEN a AND b``: the index holds no other value inside one) when that
    is shorter, else ``key IN (wanted values)``, or ``NOT IN`` the index's other values when
    that list is shorter; the default partition (NULL) explicit; None if a value does not
    bind. Its cost follows the wanted values, not the index's (a query of 7 partitions of
    a 10,000-partition frame), unless the other values are the shorter list."""
    name = f"`{key.name}`"
    null_wanted = None in want
    values = sorted(v for v in want if v is not None)
    n_others = len(every) - (None in every) - sum(1 for v in values if v in every)
    negate = n_others < len(values)
    cond = _ranges(name, key.type, values, every, min(len(values), n_others))
    if cond is None:
        others = sorted(v for v in every - want if v is not None) if negate else []
        text = _literals(others if negate else values, key.type)
        if text is None:
            return None
        if negate:
            cond = f"NOT {name} IN ({text})" if text else "true"
            return f"({name} IS NULL OR {cond})" if null_wanted else f"({name} IS NOT NULL AND {cond})"
        cond = f"{name} IN ({text})" if text else "false"
    return f"({name} IS NULL OR {cond})" if null_wanted else cond


#: Shortest run of consecutive wanted values written as a range rather than listed.
_RUN = 3


@functools.lru_cache(maxsize=64)
def _in_type_order(every: frozenset[str | None], hive_type: str
                   ) -> tuple[tuple[Any, ...], dict[str, int]] | None:
    """``every``'s non-NULL values bound to the type, in the type's order, and each value's
    place in that order (once per frame: a frame's values do not change); None if one does
    not bind."""
    bound: dict[str, Any] = {v: bind_literal(v, hive_type) for v in every if v is not None}
    if any(b is None for b in bound.values()) or len({type(b) for b in bound.values()}) > 1:
        return None
    ordered = sorted(bound.items(), key=lambda kv: kv[1])
    return tuple(b for _, b in ordered), {v: i for i, (v, _) in enumerate(ordered)}


def _ranges(name: str, hive_type: str, want: Iterable[str], every: frozenset[str | None],
            listed: int) -> str | None:
    """``want``'s values (non-NULL) found in ``every`` as ranges of runs consecutive in the
    type's order among ``every``'s (Spark compares these key types as Python does their
    bound values: numbers, dates, strings by code point), single values in one IN; None
    when that takes no fewer literals than ``listed``, or a value does not bind."""
    known = _in_type_order(every, hive_type)
    if known is None:
        return None
    bound, place = known
    runs: list[list[Any]] = []  # the bound values of each run
    last = -2
    for i in sorted(place[v] for v in want if v in place):
        if i != last + 1:
            runs.append([])
        runs[-1].append(bound[i])
        last = i
    ranges = [r for r in runs if len(r) >= _RUN]
    singles = [b for r in runs if len(r) < _RUN for b in r]
    if not ranges or 2 * len(ranges) + len(singles) >= listed:
        return None
    terms = [f"{name} BETWEEN {spark_literal(r[0], hive_type)} AND {spark_literal(r[-1], hive_type)}"
             for r in ranges]
    if singles:
        terms.append(f"{name} IN ({', '.join(spark_literal(b, hive_type) for b in singles)})")
    return "(" + " OR ".join(terms) + ")"


@functools.lru_cache(maxsize=64)
def _key_values(every: frozenset[tuple[str | None, ...]], j: int) -> frozenset[str | None]:
    """The values of key ``j`` among the index's partitions (once per frame)."""
    return frozenset(t[j] for t in every)


def _product_predicate(keys: Sequence[Column], want: set[tuple[str | None, ...]],
                       every: frozenset[tuple[str | None, ...]]) -> str | None:
    """The wanted partitions of a table with several keys when they are exactly the index's
    partitions whose every key value is among that key's wanted values (a cross product, as
    two filtered dimensions give: 29 days x 3 stores): one condition per key (ranges, IN),
    ANDed, instead of a term per partition; None when they are not, or a value does not
    bind."""
    wanted = [{t[j] for t in want} for j in range(len(keys))]
    if {t for t in every if all(t[j] in w for j, w in enumerate(wanted))} != want:
        return None
    conds = []
    for j, key in enumerate(keys):
        values = _key_values(every, j)
        if wanted[j] >= values:
            continue  # every value of this key: no condition on it
        cond = _partition_predicate(key, wanted[j], values)
        if cond is None:
            return None
        conds.append(cond)
    # each condition is a parenthesized OR or a single IN / BETWEEN: no parentheses needed
    return " AND ".join(conds) if conds else "true"


#: At most this many partitions under a NOT of per-partition terms (:func:`_tuples_predicate`):
#: Spark's optimizer can overflow its stack on ``NOT (t1 OR ... OR tn)`` before n = 2,000
#: (StackOverflowError), where the OR itself plans (5,000 terms: 3.5 s); and at most this many
#: in a patch's condition (:func:`patched`), which every later query of it plans.
TUPLE_TERMS = 200


def _tuples_predicate(keys: Sequence[Column], want: set[tuple[str | None, ...]],
                      every: frozenset[tuple[str | None, ...]], limit: int | None = None) -> str | None:
    """The wanted partitions of a table with several keys: an OR of null-safe equalities
    per partition (``k1 <=> v1 AND k2 <=> v2``), or ``NOT`` of the others' when they are
    fewer and at most TUPLE_TERMS (``<=>`` is never NULL, so the default partition needs no
    case of its own); None if a value does not bind, or more than ``limit`` would be named."""
    negate = len(every - want) < min(len(want), TUPLE_TERMS + 1)
    if limit is not None and len(every - want if negate else want) > limit:
        return None
    terms = []
    for values in sorted(every - want if negate else want, key=repr):
        conj = []
        for key, value in zip(keys, values):
            text = "NULL" if value is None else _literals([value], key.type)
            if text is None:
                return None
            conj.append(f"`{key.name}` <=> {text}")
        terms.append("(" + " AND ".join(conj) + ")")
    if not terms:
        return "true" if negate else "false"
    any_of = " OR ".join(terms)
    return f"NOT ({any_of})" if negate else any_of


def _literals(values: Sequence[str], hive_type: str) -> str | None:
    bound = [bind_literal(v, hive_type) for v in values]
    if any(b is None for b in bound):
        return None
    return ", ".join(spark_literal(b, hive_type) for b in bound)


def scan_files(scan: TableScan) -> list[fs.FileEntry] | None:
    """Every data file ``scan`` reads, with its size (directories without a recorded file
    list are listed), for in-process readers; None when a directory to read holds
    subdirectories, whose meaning (partition discovery) only Spark's reader knows."""
    flight = _Flight()
    files = _scan_files(scan, flight)
    return _scan_files(scan, _Flight(always=True)) if flight.moved() else files


def _scan_files(scan: TableScan, flight: _Flight) -> list[fs.FileEntry] | None:
    if scan.table.is_partitioned:
        paths = [path for _, ps, _ in _partition_paths(scan.partitions or (), scan, flight)
                 for path in ps]
    else:
        paths, listed = _table_paths(scan, flight)
        if not listed:
            return []
    files: list[fs.FileEntry] = []
    for path in paths:
        entries = fs.list_files(path)
        if any(e.is_dir for e in entries):
            return None
        files += entries
    return files


def read_inputs(scan: TableScan) -> tuple[Any, ...] | None:
    """What :func:`scan_dataframe` (without ``warm``) reads for ``scan`` of a partitioned
    table whose partitions all record their files in the Hive layout: the table's reading of
    files (:func:`_definition`), its directory, and each partition's files (recorded, or, for
    one read by its directory, listed now with their sizes and times), leaving out the
    partitions with none (they add no row). Two scans with equal inputs give the same rows,
    whatever else changed in the metastore (an empty partition added, statistics, a
    property); None when that is not known (list bucketing, a partition outside the layout, a
    storage handler's or unpartitioned table)."""
    table = scan.table
    parts = scan.partitions or ()
    if handler_for(table) is not None or not table.is_partitioned or scan.buckets is not None \
            or any((p.files is not None and any("/" in f for f in p.files))
                   or partition_layout(p.parameters) is not None for p in parts) \
            or not _all_in_hive_layout(table, parts):
        return None
    read: list[tuple[Any, ...]] = []
    for p in parts:
        if p.files is None:
            listed = fs.stamps(p.location)
            if listed:
                read.append((p.values, "listed", listed))
        elif p.files:
            read.append((p.values, p.files))
    return (table.uid, _definition(table), table.location, tuple(read))


def _table_paths(scan: TableScan, flight: _Flight) -> tuple[list[str], bool]:
    """Paths to read of an unpartitioned table, and False when its directory is missing
    (``flight``: whether a statement is in flight, asked if its directory is read)."""
    table = scan.table
    raw = table.properties.get(FILES_PARAM)
    lay = partition_layout(table.properties)
    if lay is not None:
        choice = scan.lb_choice(())
        return lb_paths(table.location, json.loads(raw) if raw else None, lay,
                        choice.chosen if choice else None), True
    if scan.buckets is not None and fs.exists(table.location):
        files = current_files(table.location, json.loads(raw) if raw else None) if raw is not None else \
            [e.path for e in listed_files(table.location)]
        return bucket_files(files, scan.buckets), True
    if raw is not None:
        return current_files(table.location, json.loads(raw) if raw else None), True
    if not fs.exists(table.location):
        return [table.location], False
    return _directory(table.location, flight), True


def _directory(location: str, flight: _Flight) -> list[str]:
    """What to read of a directory whose files the metastore does not record: the directory
    (Spark lists it), or its files one by one while another statement's uncommitted files are
    in it (storage/commit.py live_files: a reader never sees half a write) or, once a statement
    began or ended while Spark listed (``flight.always``), always. Nothing is listed here unless
    a statement has a journal (``flight()``)."""
    if not flight():
        flight.handed = True
        return [location]
    every = [e for e in fs.list_files(location) if not e.is_dir]
    live = listed_files(location, every)
    if len(live) == len(every) and not flight.always:
        flight.handed = True
        return [location]
    return [e.path for e in live if not posixpath.basename(e.path).startswith(("_", "."))]


def bucket_files(files: list[str], buckets: tuple[frozenset[int], int]) -> list[str]:
    """The files of the chosen Hive buckets (``000003_0``: bucket 3); every file when a name
    does not give a bucket of the table's (not a file Hive's bucketing wrote: nothing is
    assumed of it). Hidden files (``_SUCCESS``, ``.crc``) are left out, as Spark's reader does."""
    chosen, count = buckets
    files = [f for f in files if not posixpath.basename(f).startswith(("_", "."))]
    ids = [bucket_of_file(posixpath.basename(f)) for f in files]
    if any(i is None or i >= count for i in ids):
        return files
    return [f for f, i in zip(files, ids) if i in chosen]


def _partition_paths(parts: tuple[Partition, ...], scan: TableScan, flight: _Flight
                     ) -> list[tuple[Partition, list[str], bool]]:
    """Each partition's paths to read, and whether they are files below its directory
    (list-bucketing subdirectories), which Spark's partition discovery must not see
    (``flight``: whether a statement is in flight, asked if a directory is read)."""
    out: list[tuple[Partition, list[str], bool]] = []
    for p in parts:
        lay = partition_layout(p.parameters)
        if lay is not None:
            choice = scan.lb_choice(p.values)
            out.append((p, lb_paths(p.location, p.files, lay,
                                    choice.chosen if choice else None), True))
        elif scan.buckets is not None:  # Hive's bucket files: those of the chosen buckets
            files = current_files(p.location, p.files) if p.files is not None else \
                [e.path for e in listed_files(p.location)] if fs.exists(p.location) else []
            out.append((p, bucket_files(files, scan.buckets), False))
        elif p.files is not None:
            files = current_files(p.location, p.files)
            out.append((p, files, any("/" in f for f in p.files)))
        elif fs.exists(p.location) and (scan.table.format != "textfile"
                                        or fs.list_files(p.location, recursive=True)):
            # Spark reads the directory (and what is below it); an empty one is left out for a
            # TEXTFILE table, whose reader, finding no file to discover partitions from, would
            # take the partition columns for data columns and refuse the schema
            out.append((p, _directory(p.location, flight), False))
    return out


def lb_paths(location: str, recorded: tuple[str, ...] | list[str] | None, lay: SkewLayout,
             chosen: tuple[str, ...] | None) -> list[str]:
    """Files to read of a partition laid out in list-bucketing directories.

    Recorded files in a chosen directory are read, and so are recorded files in no
    directory of the layout (nothing is known about their values). A chosen location
    outside the partition (``SET SKEWED LOCATION``), or any location when the partition
    has no file list, is listed.
    """
    base = fs.normalize(location)
    plain = _plain_locations(lay)
    relative: dict[str, str] = {}
    if plain is not None:  # each its own path below the partition
        relative = {loc: loc for loc in plain}
    else:
        for _, loc in lay.locations:
            full = fs.normalize(layout.resolve_location(location, loc))
            if layout.is_within(base, full) and full != base:
                relative[loc] = full[len(base):].strip("/")
    keep = set(loc for _, loc in lay.locations) if chosen is None else set(chosen)
    mapped = set(relative.values())
    chosen_rel = {relative[loc] for loc in keep if loc in relative}
    out: list[str] = []
    if recorded is not None:
        for name in recorded:
            d = posixpath.dirname(name)
            if d not in mapped or d in chosen_rel:
                out.append(f"{base}/{name}")
    else:
        out += [e.path for e in listed_files(location)]
        out += [e.path for rel in sorted(chosen_rel) for e in listed_files(f"{base}/{rel}")]
    for loc in sorted(keep):
        if loc not in relative:
            out += [e.path for e in listed_files(layout.resolve_location(location, loc))]
    return out


@functools.lru_cache(maxsize=1024)
def _plain_locations(lay: SkewLayout) -> tuple[str, ...] | None:
    """The layout's locations when each is a plain relative path (``x=30``, ``a=1/b=2``: no
    scheme, no leading ``/``, no empty, ``.`` or ``..`` segment), which lies below any
    partition directory as itself; None otherwise (then each is resolved and checked)."""
    locs = tuple(loc for _, loc in lay.locations)
    for loc in locs:
        if layout.is_absolute(loc) or any(seg in ("", ".", "..") for seg in loc.split("/")):
            return None
    return locs


def _all_in_hive_layout(table: Table, parts: Sequence[Partition]) -> bool:
    """Every partition lives in its Hive-layout directory (a string comparison first; the
    normalized paths only when that fails) and its values are canonical texts of their types,
    which Spark's partition discovery reads as the metastore's values (it would read a TINYINT
    ``300`` registered before values were checked as 44, and fail on an INT ``99999999999``)."""
    base = table.location.rstrip("/")
    keys = table.partition_key_names()
    types = [k.hive_type for k in table.partition_keys]
    return all((p.location == f"{base}/{layout.make_part_name(keys, p.values)}"
                or _in_hive_layout(table, p))
               and all(t.is_canonical_partition_text(v) for t, v in zip(types, p.values))
               for p in parts)


def _in_hive_layout(table: Table, p: Partition) -> bool:
    expected = layout.partition_path(table.location, table.partition_key_names(), p.values)
    return fs.normalize(expected) == fs.normalize(p.location)


# Each row's directory, URL-decoded: ``_metadata.file_path`` is Hadoop's URI form (``my dir``
# is ``my%20dir``, ``%`` is ``%25``). URI encoding never writes ``+`` for a space, so a ``+``
# is kept as itself (``url_decode`` alone would turn it into a space).
_DIR_SQL = ("url_decode(replace(regexp_replace(regexp_replace(_metadata.file_path, '^file:/+', '/'), "
            "'/[^/]*$', ''), '+', '%2B'))")


def _mapped_scan(spark: SparkSession, table: Table,
                 dirs: list[tuple[str, tuple[str | None, ...]]], paths: list[str]) -> DataFrame:
    """Partitions outside the Hive layout, or laid out in list-bucketing subdirectories:
    values looked up by each file's directory (``dirs``: directory to partition values).
    Built as SQL text, a few calls into the JVM whatever the number of directories (a Column
    per directory and value cost one call each: 50 ms for a few directories)."""
    spark_paths = [fs.to_spark_path(p) for p in paths]
    if table.format == "textfile":  # its columns are computed from the line: the directory too
        data, row_dir = load(spark, table, spark_paths, extra={"__hivepark_dir": F.expr(_DIR_SQL)}), "__hivepark_dir"
    else:  # the file source itself, projected once below (one analysis fewer)
        data, row_dir = load(spark, table, spark_paths), _DIR_SQL
    entries = ", ".join(
        f"{render_literal(directory)}, array({', '.join(_text_literal(v) for v in values)})"
        for directory, values in dirs)
    values = f"try_element_at(map({entries}), {row_dir})"  # one lookup per row: Spark shares it
    by_file = _by_file_path(dirs, paths) if table.format != "textfile" else None
    if by_file is not None:  # first by the file's path as Spark gives it; the directory if missed
        values = f"coalesce({by_file}, {values})"
    cols = [f"`{c.name}`" for c in table.columns]
    for i, key in enumerate(table.partition_keys):
        # a value that is not of the type (registered before values were checked) reads as
        # NULL, as Hive reads it, rather than failing every scan of the table
        cols.append(f"try_cast(element_at({values}, {i + 1}) AS {spark_type(key.type)}) AS `{key.name}`")
    return data.selectExpr(*cols)


#: at most this many files are looked up by their paths (:func:`_by_file_path`): Spark finds a
#: key in a map by comparing it with each (120 keys: ~0.4 us a row, against ~1.5 us to derive
#: the directory from the path), and the map costs the frame's build ~15 ms at 120 files, ~27
#: at 256 (once per kept file set, on a build of ~80 ms)
BY_FILE_PATH_MAX = 128


def _by_file_path(dirs: list[tuple[str, tuple[str | None, ...]]], paths: list[str]) -> str | None:
    """Each file's partition values by its path exactly as ``_metadata.file_path`` gives it
    (Spark SQL, NULL for a file it does not list), or None for more than
    :data:`BY_FILE_PATH_MAX` files. Deriving each row's directory from its path (``_DIR_SQL``:
    two regular expressions and a URL decoding) costs ~1.5 us a row, more than reading a
    narrow column; this lookup does no string work per row. A path listed in another form
    (a directory Spark lists, a file system that writes URIs otherwise) misses, and the
    directory's lookup answers."""
    if len(paths) > BY_FILE_PATH_MAX:
        return None
    values = dict(dirs)
    entries: dict[str, str] = {}  # a map's keys must be distinct
    for path in paths:
        found = values.get(_spark_dir(posixpath.dirname(path)))
        if found is not None:
            entries.setdefault(fs.spark_file_uri(path),
                               f"array({', '.join(_text_literal(v) for v in found)})")
    if not entries:
        return None
    pairs = ", ".join(f"{render_literal(uri)}, {array}" for uri, array in entries.items())
    return f"try_element_at(map({pairs}), _metadata.file_path)"


def _text_literal(value: str | None) -> str:
    return "CAST(NULL AS STRING)" if value is None else render_literal(value)


def _spark_dir(location: str) -> str:
    """A directory as it appears (URL-decoded) in ``_metadata.file_path``."""
    return fs.normalize(location)


def scan_size(scan: TableScan) -> int | None:
    """Bytes a scan reads: metastore statistics, else the files' sizes (None, unknown, for
    a handler table)."""
    table = scan.table
    if handler_for(table) is not None:
        return None
    if scan.deferred:
        return scan.deferred_size
    if not table.is_partitioned:
        size = int(table.properties.get("totalSize", "-1"))
        if size >= 0:
            return size
        return sum(e.size for e in fs.list_files(table.location, recursive=True))
    total = 0
    for p in scan.partitions or ():
        size = int(p.parameters.get("totalSize", "-1"))
        total += size if size >= 0 else sum(e.size for e in fs.list_files(p.location))
    return total
