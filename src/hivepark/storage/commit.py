"""The commit protocol: staging, one metastore transaction, then cleanup.

1. Spark writes into ``<table>/.hive-staging_hivepark_<qid>/`` (hidden from readers).
2. A journal ``<warehouse>/.hivepark/journal/<qid>.json`` records the target files and the
   files the statement will make obsolete, before anything moves.
3. Files move to their partition directories under new, unique names. Readers use the file
   lists recorded in the metastore, so these files are invisible until step 4.
4. One metastore transaction (compare-and-swap on the table version) registers or replaces
   every partition with its file list and stats. This is the one atomic step. When another
   statement committed first, the commit is planned again on the new version only where the
   statement's outcome does not depend on what changed (:meth:`Commit._commit_with_retries`).
5. Obsolete files (those an overwrite replaced) are kept for a retention period, so that a
   reader that planned before step 4 can still open them: an expiry record
   ``<warehouse>/.hivepark/expiring/<qid>.json`` lists them, and the first ``connect()`` or
   commit after it expires deletes them. Then the staging directory and the journal go.

A crash before 4 leaves the table as it was: :func:`recover` (run by ``connect()``) deletes
the moved files. A crash after 4 leaves it as after: ``recover`` schedules the obsolete files.
Whether step 4 happened is read from the metastore: the transaction of step 4 records the
statement's id (``Catalog.committed_statements``), which stays until its journal is gone.
``recover`` also deletes staging directories whose journal is gone (:func:`sweep_staging`).

A partition (or unpartitioned table) whose files the metastore does not record (made by ADD
PARTITION, MSCK REPAIR TABLE or SET LOCATION, or just created) is listed instead; the files
another statement moved in at step 3 are then in its directory before they are committed.
A listing leaves them out (:func:`live_files`): a file whose name carries the id of a
statement whose journal is there and whose commit is not in the metastore is not the table's
(yet). Every listing of a table's live files (readers, commits, DROP, TRUNCATE, CONCATENATE,
MSCK) goes through it, so no statement reads, adopts, registers or deletes another's
uncommitted files.
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import re
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from hivepark.catalog.base import Catalog
from hivepark.catalog.buckets import bucket_of_file, table_buckets
from hivepark.catalog.models import Partition, Table
from hivepark.catalog.skew import SKEW_LOCATIONS, partition_layout
from hivepark.errors import CommitConflict, MetastoreError, NotFoundError
from hivepark.layout import is_absolute, is_within, make_part_name, partition_path
from hivepark.storage import fs
from hivepark.storage.formats import text_serde

FILES_PARAM = "hivepark.files"
# a partition's (an unpartitioned table's) column statistics (exec/column_stats.py): a write
# that changes its rows removes them
COLUMN_STATS = "hivepark.column.stats"
COLUMN_STATS_ACCURATE = "COLUMN_STATS_ACCURATE"  # Hive's record of which statistics are current
# a table's columns changed by ALTER TABLE (dropped, renamed, retyped, added again, moved in a
# TEXTFILE table), {name: milliseconds}: statistics of that name computed before are not its
COLUMNS_CHANGED = "hivepark.columns.changed"
STAGING_PREFIX = ".hive-staging_hivepark_"
# whether a statement's rows depend on the table it writes: known, or found out if it matters
# (on a conflict: a Python caller's DataFrame's input files, exec/write.reads_files_of)
ReadsTarget = bool | Callable[[], bool]
MAX_RETRIES = 5
# A journal's owner renews its lease (the journal's "heartbeat" time) every HEARTBEAT_SECONDS;
# another process undoes the statement only when the owner is proven dead: the same host and
# its pid gone, or no heartbeat for LEASE_SECONDS (another host, or a reused pid).
LEASE_SECONDS = float(os.environ.get("HIVEPARK_JOURNAL_LEASE_SECONDS", "120"))
HEARTBEAT_SECONDS = max(0.5, LEASE_SECONDS / 8)

_lock = threading.Lock()
_in_flight: set[str] = set()  # journals of statements running in this process
# the uids of the tables CTAS statements of this process are creating (CreatedTable): the
# statement's overwrite of its new table replaces nothing another statement committed to it
_creating: set[str] = set()
# staging directories of statements this process aborted: a cancelled Spark job's tasks may
# still write into one after the abort deleted it (exec/running.py deletes them again once
# the statement's tasks have stopped)
_aborted: list[str] = []


# the warehouses this process is connected to: journal directory -> their metastores (the
# connections open on it), for listings to tell an uncommitted statement's files (live_files)
_warehouses: dict[str, list[Catalog]] = {}
# a statement's id in the names of the files it commits: "<qid>-part-..." or, for Hive's
# bucket files, "000003_0.<qid>" (PartitionWrite.target_names)
_STATEMENT_ID = re.compile(r"^(\d{14}_[0-9a-f]{12})-|\.(\d{14}_[0-9a-f]{12})$")


def new_statement_id() -> str:
    """A new statement's id: the time it began, to the second, and 12 random hex digits
    (what :data:`_STATEMENT_ID` finds in its files' names)."""
    return time.strftime("%Y%m%d%H%M%S") + "_" + uuid.uuid4().hex[:12]


class JournalError(MetastoreError):
    """A journal that cannot be read: recovery cannot know what the statement did."""


class Journal:
    """One statement's journal file, owned by this process while the statement runs: written
    atomically (temporary file, then rename), its heartbeat renewed by a background thread,
    and never undone by a ``recover()`` of this process (another thread's ``connect()``)."""

    def __init__(self, path: str, content: dict) -> None:
        self.path = path
        self._content = dict(content)
        self._closed = False
        self._io = threading.Lock()
        with _lock:
            _in_flight.add(path)
        self._write()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="hivepark-journal-heartbeat", daemon=True)
        self._thread.start()

    def update(self, **changes: object) -> None:
        self._content.update(changes)
        self._write()
        fault_point("journal_updated")

    def _write(self) -> None:
        with self._io:
            if self._closed:
                return
            fs.write_text_atomic(self.path, json.dumps({
                **self._content, "pid": os.getpid(), "host": socket.gethostname(), "heartbeat": time.time()}))

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                self._write()
            except OSError:
                pass  # the next beat tries again; recovery waits for the lease to run out

    def release(self) -> None:
        """The statement ended without cleaning up: the journal stays, for the next
        ``recover()`` (this process's too) to finish, as a killed process's would."""
        self._stop.set()
        with _lock:
            _in_flight.discard(self.path)

    def close(self) -> None:
        """The statement ended (committed and cleaned up, or aborted): the journal goes."""
        self._stop.set()
        with self._io:
            self._closed = True
            fs.delete_file(self.path)
        with _lock:
            _in_flight.discard(self.path)


def abandoned(j: Mapping[str, object], path: str) -> bool:
    """Whether the statement a journal describes is proven dead: not running in this process,
    and either on this host with its process gone, or silent for longer than its lease."""
    with _lock:
        if path in _in_flight:
            return False
    beat = j.get("heartbeat")
    fresh = isinstance(beat, (int, float)) and time.time() - beat < LEASE_SECONDS
    pid = j.get("pid")
    if j.get("host") == socket.gethostname() and isinstance(pid, int):
        if pid != os.getpid() and not process_alive(pid):
            return True
        if pid == os.getpid():
            return True  # this process, yet not in flight: a statement of it that ended badly
    return not fresh


@dataclass
class PartitionWrite:
    """Files staged for one partition (``values == ()`` for an unpartitioned table).

    ``rel_dirs`` (parallel to ``files``) puts each file in a subdirectory of the partition
    (list bucketing: ``x=30``); ``parameters`` are set on the partition (None removes a
    key); ``bucket_files``: the files are Hive's bucket files.

    ``location`` is where the files go: the partition's location when the statement planned
    (its default directory if it did not exist). A commit that finds the partition elsewhere
    (another statement added it with a LOCATION, or moved it) fails with CommitConflict.

    ``rewrites`` (with ``overwrite``; CONCATENATE): the files are a rewrite of these existing
    files (relative names), holding the same rows. Exactly those become obsolete and every
    other file stays, one another statement added meanwhile too; the commit fails with
    CommitConflict when one of them is no longer the partition's.
    ``if_absent`` (INSERT OVERWRITE ... IF NOT EXISTS): the write is for a partition that did
    not exist; if another statement created it meanwhile, nothing is written.
    ``if_present`` (TRUNCATE): the write empties a partition that existed; if another statement
    dropped it meanwhile, nothing is written for it (it is not made again, empty).
    """

    values: tuple[str | None, ...]
    location: str
    files: list[fs.FileEntry]
    num_rows: int = -1
    overwrite: bool = False
    rel_dirs: list[str] | None = None
    parameters: dict[str, str | None] = field(default_factory=dict)
    rewrites: tuple[str, ...] | None = None
    bucket_files: bool = False
    if_absent: bool = False
    if_present: bool = False

    def target_names(self, qid: str) -> list[str]:
        """Each staged file's name relative to the partition once committed: the commit's id
        first, or, for Hive's bucket files (``bucket_files``: their names must begin with their
        bucket, ``000003_0``), after the name and a dot."""
        dirs = self.rel_dirs or [""] * len(self.files)
        return [(d.strip("/") + "/" if d.strip("/") else "")
                + (f"{os.path.basename(f.path)}.{qid}" if self.bucket_files else f"{qid}-{os.path.basename(f.path)}")
                for d, f in zip(dirs, self.files)]


@dataclass
class _Plan:
    put: list[Partition] = field(default_factory=list)
    table_params: dict[str, str | None] | None = None
    obsolete: list[str] = field(default_factory=list)
    #: the directories below a partition's (or an unpartitioned table's) that held obsolete
    #: files (list bucketing's ``x=1``), pruned once those are deleted if nothing else is there
    emptied: list[str] = field(default_factory=list)


def _check_distinct_targets(moves: Sequence[tuple[PartitionWrite, fs.FileEntry, str]]) -> None:
    """Two staged files bound for one path (two partitions, or two list-bucketing directories,
    resolved to one directory): the second move would replace the first file, and both writes
    would record the survivor. Refused before anything moves."""
    seen: dict[str, PartitionWrite] = {}
    for w, _, dst in moves:
        key = fs.normalize(dst)
        if key in seen:
            raise MetastoreError(
                f"Two files of this statement would be written to one path, {dst} (partitions "
                f"{list(seen[key].values)} and {list(w.values)}, or two list-bucketing directories, in one "
                "directory): nothing was written. Give each partition a directory of its own (ALTER TABLE ... "
                "PARTITION (...) SET LOCATION).")
        seen[key] = w


def fault_point(name: str) -> None:
    """Crash-testing hook: ``HIVEPARK_FAULT=<name>`` kills this process here, like kill -9;
    ``HIVEPARK_FAULT_PAUSE=<seconds>`` pauses at every point, so that a kill at a random
    moment lands in each step of a commit as often as in Spark's write."""
    if os.environ.get("HIVEPARK_FAULT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    pause = os.environ.get("HIVEPARK_FAULT_PAUSE")
    if pause:
        time.sleep(float(pause))


def state_dir(warehouse: str) -> str:
    """Where hivepark keeps its own records of statements in flight (journals, files awaiting
    deletion, Iceberg write markers), each written atomically."""
    return warehouse.rstrip("/") + "/.hivepark"


def journal_dir(warehouse: str) -> str:
    return state_dir(warehouse) + "/journal"


class Commit:
    """One statement's write into one table, used as a context manager::

        with Commit(warehouse, table) as commit:
            ...  # Spark writes under commit.staging
            new_table = commit.finish(catalog, writes)

    An exception inside the block aborts: everything the statement wrote is removed.
    """

    def __init__(self, warehouse: str, table: Table, retention: float = 0.0) -> None:
        self.warehouse = warehouse
        self.retention = retention
        self.qid = new_statement_id()
        self.table = table
        self.staging = f"{table.location.rstrip('/')}/{STAGING_PREFIX}{self.qid}"
        self.journal = f"{journal_dir(warehouse)}/{self.qid}.json"
        self._targets: list[str] = []
        # LOAD DATA INPATH's files taken from the user: [source, staged, target once known]
        self._restore: list[list[str | None]] = []
        self._writes: Sequence[PartitionWrite] = ()
        self._catalog: Catalog | None = None
        self._last_plan = _Plan()
        self._committed = False
        with _lock:  # the CTAS that created the table writes its first rows
            self._creates = bool(table.uid) and table.uid in _creating and table.version == 1
        # the metastore transaction was sent, and whether it committed is not known (its reply
        # lost: only the record of this statement's id tells, committed_after_all)
        self._sent = False
        self._journal = Journal(self.journal, self._journal_content("writing"))

    def __enter__(self) -> Commit:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None and not self._committed:
            self.abort()

    def _journal_content(self, state: str, obsolete: Sequence[str] = (), emptied: Sequence[str] = ()) -> dict:
        # "marked": the metastore commit records this statement's id (committed_statements);
        # "emptied": directories pruned after the obsolete files (recover() does it after a kill)
        return {"state": state, "table": [self.table.db, self.table.name], "staging": self.staging,
                "targets": self._targets, "obsolete": list(obsolete), "emptied": list(emptied),
                "retention": self.retention, "restore": self._restore, "marked": True}

    def _write_journal(self, state: str, obsolete: Sequence[str] = (), emptied: Sequence[str] = ()) -> None:
        self._journal.update(**self._journal_content(state, obsolete, emptied))

    def take_files(self, moves: Sequence[tuple[str, str]]) -> None:
        """Moves the user's files (LOAD DATA INPATH: ``(source, staged)`` pairs, ``staged`` in
        this statement's staging) in, recording them first: until the commit, an abort (or a
        ``recover()`` after a kill) moves each back to its source rather than deleting it."""
        self._restore = [[src, staged, None] for src, staged in moves]
        self._write_journal(state="writing")
        for src, staged in moves:
            fs.move(src, staged)

    def finish(self, catalog: Catalog, writes: Sequence[PartitionWrite], reads_target: ReadsTarget = False) -> Table:
        """Moves the staged files into place and commits them; returns the new table. Call
        it inside the ``with`` block: a failure before the metastore commit aborts.

        When another statement committed first, the commit is planned again on the table as
        it now is (:meth:`_commit_with_retries`), which is right for a blind write only (its
        rows do not depend on the table: it is as if it ran after the other). With
        ``reads_target`` (the statement's query read this table) it fails instead."""
        moves = [(w, f, f"{w.location.rstrip('/')}/{name}")
                 for w in writes for f, name in zip(w.files, w.target_names(self.qid))]
        _check_distinct_targets(moves)
        self._targets = [dst for _, _, dst in moves]
        self._catalog = catalog
        self._writes = writes
        target_of = {os.path.basename(f.path): dst for _, f, dst in moves}
        for r in self._restore:
            r[2] = target_of.get(os.path.basename(str(r[1])))
        self._write_journal(state="moving")
        fault_point("before_move")
        for i, (_, f, dst) in enumerate(moves):
            fs.move(f.path, dst)
            if i == len(moves) // 2:
                fault_point("during_move")
        for w in writes:  # (TRUNCATE's partitions have theirs, unless another statement drops them)
            if not w.if_present:
                fs.makedirs(w.location)
        try:
            new_table = self._commit_with_retries(catalog, writes, reads_target)
        except _PartitionExists as e:  # IF NOT EXISTS, and another statement created it: nothing to do
            self.abort()  # (the other statement's directory stays, even empty: it is registered)
            return e.table
        except Exception as e:
            # the metastore's reply was lost (a connection dropped during its COMMIT): the
            # transaction may have landed; if the record of this statement says so, it did
            landed = committed_after_all(catalog, self.qid) if self._sent else False
            if landed is None:
                raise unknown_outcome(e) from e
            if not landed:
                raise
            new_table = catalog.get_table(self.table.db, self.table.name)
        self._committed = True
        fault_point("after_commit")
        self._cleanup_after(self._last_plan.obsolete, self._last_plan.emptied)
        catalog.statement_ended(self.qid)  # its journal is gone: the record of its commit may go
        return new_table

    def _commit_with_retries(self, catalog: Catalog, writes: Sequence[PartitionWrite],
                             reads_target: ReadsTarget) -> Table:
        """The metastore transaction; on a conflict (another statement committed first),
        planned again on the table as it now is, provided that it is still the table this
        statement wrote for (:func:`_check_same_table`; each partition where it was:
        :func:`_plan`) and that the statement did not read it (``reads_target``)."""
        table = self.table
        for attempt in range(MAX_RETRIES):
            plan = _plan(catalog, table, writes, self.qid)
            self._last_plan = plan
            self._write_journal(state="committing", obsolete=plan.obsolete, emptied=plan.emptied)
            fault_point("before_commit")
            self._sent = True
            try:
                return catalog.commit(table, table.version, put=plan.put,
                                      table_parameters=plan.table_params, statement=self.qid)
            except CommitConflict:  # the database undid it, or never began it: nothing was committed
                self._sent = False
                if attempt == MAX_RETRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
                current = catalog.get_table(table.db, table.name)
                _check_same_table(self.table, current)
                if reads_target if isinstance(reads_target, bool) else reads_target():
                    _check_absent(catalog, current, writes)  # IF NOT EXISTS: skipping is right
                    raise CommitConflict(
                        f"Commit conflict on table {current.qualified_name}: another statement changed it "
                        f"(from version {self.table.version} to {current.version}) while this statement "
                        "ran, and this statement's query reads that table, so the rows it wrote were "
                        "computed from data that is no longer current. Nothing was changed; run the "
                        "statement again.") from None
                table = current
                if self._creates:  # as if the CTAS ran first: what the other statement committed stays
                    writes = [dataclasses.replace(w, overwrite=False) if w.overwrite and w.rewrites is None else w
                              for w in writes]
        raise AssertionError("unreachable")

    def _cleanup_after(self, obsolete: Sequence[str], emptied: Sequence[str] = ()) -> None:
        schedule_deletion(self.warehouse, self.qid, obsolete, self.retention, emptied)
        fault_point("obsolete_deleted")
        fs.delete_dir(self.staging)
        self._journal.close()
        delete_expired(self.warehouse)

    def abort(self) -> None:
        """Removes everything this statement wrote; the table stays as it was (and the files
        LOAD DATA INPATH took are back at their sources). Unless its metastore transaction was
        sent and may have landed (its reply lost, and the metastore does not say it did not):
        then its journal stays, and the next ``connect()`` finishes or undoes it as the record of
        its commit says."""
        if self._sent and committed_after_all(self._catalog, self.qid) is not False:
            self._journal.release()
            return
        restore_sources(self._restore)
        for path in self._targets:
            fs.delete_file(path)
        with _lock:
            _aborted.append(self.staging)
        try:
            fs.delete_dir(self.staging)
        except OSError:
            # a task of a cancelled job still writing into it ("Directory not empty"): only
            # staging is left, which no reader sees; deleted again once the tasks stopped
            # (exec/running.py) or by the next connect()'s sweep of unowned staging
            pass
        try:
            self._prune_left_empty()
        except Exception:  # noqa: BLE001 - best effort: an empty directory left loses nothing
            pass
        self._journal.close()

    def _prune_left_empty(self) -> None:
        """The directories of the partitions this statement would have made that its abort
        left empty (a later MSCK REPAIR would register one as a partition); and the table's own,
        if the table was dropped while the statement ran (DROP TABLE keeps a directory holding a
        file in flight) and no table or partition has its directory there now. (Asked of the
        metastore on an abort alone: a write that commits pays nothing.)"""
        if self._catalog is None:
            return
        if self.table.is_partitioned and self._writes:
            try:
                registered = self._catalog.get_partitions(self.table, [w.values for w in self._writes])
            except NotFoundError:  # the table was dropped: none is
                registered = {}
            for w in self._writes:
                theirs = registered.get(tuple(w.values))
                # not a partition's directory now (a file of another statement keeps it)
                if theirs is None or fs.normalize(theirs.location) != fs.normalize(w.location):
                    _delete_if_empty(self.table.location, w.location)
        if self.table.is_external:
            return
        try:
            self._catalog.get_table(self.table.db, self.table.name)
            return
        except NotFoundError:  # the table (or its database) was dropped
            pass
        if not self._catalog.locations_overlapping(fs.normalize(self.table.location)):
            fs.prune_empty_dirs(self.table.location)


def unknown_outcome(e: BaseException) -> MetastoreError:
    """The error of a statement whose metastore transaction may have landed, which the metastore
    cannot tell yet (``e``: why its reply was lost)."""
    return MetastoreError(
        f"{e} Whether this statement's commit landed is not known: the metastore did not answer. Its "
        "files are kept and its journal stays: the next connect() (once the metastore is reachable) "
        "finishes it, or undoes it if it did not land. Check the table then, and run the statement "
        "again only if its rows are not there.")


def committed_after_all(catalog: Catalog | None, qid: str) -> bool | None:
    """Whether the metastore records statement ``qid`` as committed, asked after its commit
    failed in a way that does not say whether the transaction landed; None if it cannot say."""
    if catalog is None:
        return None
    try:
        return qid in catalog.committed_statements([qid])
    except Exception:  # noqa: BLE001 - unreachable still: nobody knows yet
        return None


class CreatedTable:
    """CREATE TABLE ... AS SELECT's journal: the table it registers before writing its rows
    (its uid, chosen before it exists, and its first version), used as a context manager::

        with CreatedTable(warehouse, catalog, db, name, location) as created:
            table = catalog.create_table(..., uid=created.uid)
            ...  # the rows written and committed (version 2)
            created.done()

    A failure inside the block, or a ``recover()`` after a kill, drops the table only if it is
    still at its first version (nothing was committed to it, by this statement or another)
    and deletes only the directories that left empty (:func:`undo_created_table`)."""

    def __init__(self, warehouse: str, catalog: Catalog, db: str, name: str, location: str) -> None:
        qid = new_statement_id()
        self.uid = uuid.uuid4().hex  # as the metastore's own: 128 random bits
        self._catalog = catalog
        self._done = False
        self._content = {"kind": "ctas", "table": [db, name], "uid": self.uid, "version": 1,
                         "location": location, "existed": fs.exists(location)}
        self._journal = Journal(f"{journal_dir(warehouse)}/{qid}.json", self._content)
        with _lock:
            _creating.add(self.uid)

    def __enter__(self) -> CreatedTable:
        return self

    def done(self) -> None:
        """The rows were committed: the table stays, whatever comes after."""
        self._done = True

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        with _lock:
            _creating.discard(self.uid)
        if not self._done:
            try:
                undo_created_table(self._content, self._catalog)
            except Exception:  # noqa: BLE001 - the statement's own error is the one to show
                self._journal.release()  # the next connect() undoes it
                return
        self._journal.close()


def undo_created_table(j: Mapping[str, object], catalog: Catalog) -> None:
    """Drops the table a CTAS journal names if it is that statement's (its uid) and nothing
    was committed to it; then deletes the table's directories that hold nothing (a directory
    the statement did not create, or with another statement's files in flight, stays)."""
    names = j["table"]
    version = j["version"]
    assert isinstance(names, list) and isinstance(version, int), "a CTAS journal names its table and version"
    try:
        catalog.drop_table(str(names[0]), str(names[1]), unchanged=(str(j["uid"]), version))
    except (NotFoundError, CommitConflict):
        return  # gone, another table of that name, or another statement wrote to it: it stays
    if not j.get("existed") and j.get("location"):
        fs.prune_empty_dirs(str(j["location"]))


class MovedTable:
    """ALTER TABLE ... RENAME TO's journal when the table's directory moves with its name: the
    metastore's rename comes first, then the move of the directory, so a statement killed in
    between leaves the table recorded at ``new_location`` and its files still at the old one.
    The next ``connect()`` finishes the move (:func:`finish_table_move`); a rename that did not
    happen (or was undone) leaves nothing to do. Used as::

        moved = MovedTable(warehouse, table, new_db, new_name, new_location)
        ...  # the metastore's rename, then the move
        moved.close()  # (or moved.release() to leave it to the next connect())"""

    def __init__(self, warehouse: str, table: Table, new_db: str, new_name: str, new_location: str) -> None:
        qid = new_statement_id()
        self._journal = Journal(f"{journal_dir(warehouse)}/{qid}.json", {
            "kind": "table_move", "table": [new_db, new_name], "uid": table.uid,
            "from": table.location, "to": new_location})

    def close(self) -> None:
        self._journal.close()

    def release(self) -> None:
        self._journal.release()


def finish_table_move(j: Mapping[str, object], catalog: Catalog) -> None:
    """Moves what is left of a renamed table's old directory (journal ``j`` of a
    :class:`MovedTable`) to its new one, if the metastore records the table (its uid) under
    its new name at the new location and no table or partition has taken the old directory
    meanwhile; else the rename did not happen, or was undone, and nothing is done."""
    names, uid, src, dst = j.get("table"), j.get("uid"), str(j.get("from") or ""), str(j.get("to") or "")
    if not isinstance(names, list) or not src or not dst:
        return
    try:
        table = catalog.get_table(str(names[0]), str(names[1]))
    except NotFoundError:
        return
    if (uid and table.uid != uid) or fs.normalize(table.location) != fs.normalize(dst) or not fs.exists(src):
        return
    if catalog.locations_overlapping(fs.normalize(src)):
        return  # (a table created at the old directory since: its files are not told apart)
    if not fs.exists(dst):
        fs.move(src, dst)
        return
    base = fs.normalize(src).rstrip("/")
    for entry in fs.list_files(src, recursive=True):  # a move that stopped half-way (an object store)
        if not entry.is_dir:
            rel = fs.normalize(entry.path)[len(base) + 1:]
            if not fs.exists(f"{dst.rstrip('/')}/{rel}"):
                fs.move(entry.path, f"{dst.rstrip('/')}/{rel}")
    fs.prune_empty_dirs(src)


def moving_from(warehouse: str, location: str, catalog: Catalog) -> str | None:
    """The old directory of a RENAME still moving a table's directory at, above or inside
    ``location`` (None when none is). A killed one's move (a :class:`MovedTable` journal no
    ``connect()`` recovered yet) is finished here first, as ``connect()`` would: a table or
    partition made at the old directory before it would take the renamed table's files for its
    own, and the move, finding it there, could no longer tell them apart and left them to it."""
    loc = fs.normalize(location)
    for path, j in _read_journals(warehouse):
        src = fs.normalize(str(j.get("from") or "")) if j.get("kind") == "table_move" and j.get("from") else ""
        if not src or not (is_within(src, loc) or is_within(loc, src)):
            continue
        if not abandoned(j, path):
            return src
        finish_table_move(j, catalog)
        fs.delete_file(path)
    return None


def _read_journals(warehouse: str) -> Iterator[tuple[str, dict]]:
    """Each readable journal of the warehouse's statements (running, or killed and not
    recovered yet), with its path; one being written or deleted meanwhile is skipped."""
    directory = journal_dir(warehouse)
    if not fs.exists(directory):
        return
    for entry in fs.list_files(directory):
        if not entry.path.endswith(".json"):
            continue
        try:
            j = json.loads(fs.read_text(entry.path))
        except (OSError, ValueError):
            continue
        yield entry.path, j


class DirectoryWrite:
    """INSERT OVERWRITE DIRECTORY's write, used as a context manager::

        with DirectoryWrite(warehouse, target) as write:
            ...  # Spark writes the rows under write.staging
            write.swap()

    The rows are written beside ``target`` and swapped in for it (the old directory moved
    aside, the new one moved in, the old one deleted), under a journal: a crash while writing
    leaves ``target`` as it was, one during the swap leaves it the new one, once the next
    ``connect()`` (or an error here) has finished what the journal says (:func:`_recover_directory`).
    """

    def __init__(self, warehouse: str, target: str) -> None:
        qid = new_statement_id()
        parent, _, name = target.rstrip("/").rpartition("/")
        self.target = target.rstrip("/")
        self.staging, self._replaced = f"{parent}/.hive-staging_{qid}_{name}", f"{parent}/.hive-replaced_{qid}_{name}"
        self._content = {"kind": "directory", "state": "writing", "target": self.target, "staging": self.staging,
                         "replaced": self._replaced}
        self._journal = Journal(f"{journal_dir(warehouse)}/{qid}.json", self._content)

    def __enter__(self) -> DirectoryWrite:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:  # the directory as it was (or, failed mid-swap, the new one)
            try:
                _recover_directory(self._content)
            except OSError:
                return  # the journal stays: the next connect() finishes it
        self._journal.close()

    def swap(self) -> None:
        """The staged rows become ``target``."""
        self._content["state"] = "swapping"
        self._journal.update(state="swapping")
        had = fs.exists(self.target)
        if had:
            fs.move(self.target, self._replaced)
            fault_point("directory_moved_aside")
        fs.move(self.staging, self.target)
        fault_point("directory_swapped")
        if had:
            fs.delete_dir(self._replaced)


def writers_in(warehouse: str, location: str, catalog: Catalog | None = None) -> bool:
    """Whether a statement still running (its journal not abandoned) writes under
    ``location``: its staging directory or a file it moves (not committed yet) is there.
    With ``catalog``, a dead statement's (one killed that no ``connect()`` recovered yet) is
    finished or undone first, as ``connect()`` would: a statement that moves the directory (a
    RENAME) moved its files along, where its recovery no longer found them, and they became the
    table's (a killed CTAS's rows in the renamed table)."""
    base = fs.normalize(location).rstrip("/") + "/"
    for path, j in _read_journals(warehouse):
        paths = [j.get("staging") or "", *j.get("targets", [])]
        if not any(isinstance(p, str) and p and fs.normalize(p).startswith(base) for p in paths):
            continue
        if not abandoned(j, path):
            return True
        if catalog is not None and j.get("kind") is None:  # (a write's journal: its files are there)
            _recover_one(warehouse, path, j, catalog)
            fs.delete_file(path)
    return False


def restore_sources(restore: Sequence[Sequence[str | None]]) -> None:
    """Moves the files LOAD DATA INPATH took (``[source, staged, target]``) back to their
    sources, from wherever the uncommitted statement left each: its target, or staging (one
    still at its source stays; a source path taken meanwhile is never overwritten: the file
    stays where it is, and the abort deletes it only if it is at its target)."""
    for source, staged, target in restore:
        if not source or fs.exists(source):
            continue
        for at in (target, staged):
            if at and fs.is_file(at):
                fs.move(at, source)
                break


def _recover_directory(j: Mapping[str, str]) -> None:
    """Finishes or undoes a DirectoryWrite that stopped: a swap under way is completed (its
    rows were whole before it began), a write that had not reached the swap is dropped."""
    target, staging, replaced = j["target"], j["staging"], j["replaced"]
    if j.get("state") == "swapping" and fs.exists(staging) and not fs.exists(target):
        fs.move(staging, target)
    fs.delete_dir(staging)
    if fs.exists(target):
        fs.delete_dir(replaced)
    elif fs.exists(replaced):  # never by the steps above; the old rows rather than none
        fs.move(replaced, target)


def take_aborted() -> list[str]:
    """The staging directories of the statements this process aborted since the last call."""
    with _lock:
        out = list(_aborted)
        _aborted.clear()
    return out


def delete_staging(staging: str, warehouse: str) -> bool:
    """Deletes ``staging`` (a ``<table>/.hive-staging_hivepark_<qid>`` directory) unless a
    statement that is not proven dead owns it (its journal exists and :func:`abandoned` says
    no); returns whether it deleted it."""
    name = staging.rstrip("/").rsplit("/", 1)[-1]
    if not name.startswith(STAGING_PREFIX):
        return False
    journal = f"{journal_dir(warehouse)}/{name[len(STAGING_PREFIX):]}.json"
    if fs.exists(journal):
        try:
            j = json.loads(fs.read_text(journal))
        except (OSError, ValueError):
            return False  # unreadable: recover() reports it; the directory waits
        if not abandoned(j, journal):
            return False
    fs.delete_dir(staging)
    return True


def sweep_staging(warehouse: str, catalog: Catalog) -> int:
    """Deletes the staging directories in the warehouse's table directories that no live
    statement owns (a killed process's Spark job may write its staging directory again after
    the journal went); a live writer's, in this process or another, is never touched (its
    journal is renewed: :func:`abandoned`). Lists each table's directory once; returns how
    many it deleted."""
    deleted = 0
    for db in catalog.list_databases():
        for name in catalog.list_tables(db):
            try:
                location = catalog.get_table(db, name).location
                found = fs.list_dirs_starting(location, STAGING_PREFIX) if location else []
            except Exception:  # noqa: BLE001 - dropped meanwhile, or a location no file system opens
                continue
            for staging in found:
                deleted += delete_staging(staging, warehouse)
    return deleted


def register_warehouse(warehouse: str, catalog: Catalog) -> None:
    """A connection to ``warehouse`` opened: listings of its tables leave out the files of its
    statements that have not committed (:func:`live_files`)."""
    with _lock:
        _warehouses.setdefault(journal_dir(warehouse), []).append(catalog)


def unregister_warehouse(warehouse: str, catalog: Catalog) -> None:
    with _lock:
        cats = _warehouses.get(journal_dir(warehouse), [])
        if catalog in cats:
            cats.remove(catalog)
        if not cats:
            _warehouses.pop(journal_dir(warehouse), None)


def statement_of(path: str) -> str | None:
    """The id of the statement that wrote ``path`` (a name :class:`PartitionWrite` gave it),
    or None for a file of another writer."""
    m = _STATEMENT_ID.search(posixpath.basename(path))
    return (m.group(1) or m.group(2)) if m else None


def copy_names(qid: str, names: Sequence[str]) -> list[str]:
    """The names (relative to their partition, parallel to ``names``) of the copies statement
    ``qid`` makes of one partition's files (RENAME TO PARTITION, EXCHANGE PARTITION): each
    carries ``qid`` as :class:`PartitionWrite` names a file (after a Hive bucket file's name, else
    first), in place of the id of the statement that wrote it, so that a listing leaves the
    copies out until ``qid`` commits (:func:`live_files`); the old id stays in when dropping it
    would make two names one. A hidden name (``_SUCCESS``, ``.x.crc``) stays as it is.

    >>> copy_names("20260101000000_0123456789ab", ["20250101000000_aaaaaaaaaaaa-part-0.parquet",
    ...                                            "x=1/000003_0.20250101000000_aaaaaaaaaaaa", "_SUCCESS"])
    ['20260101000000_0123456789ab-part-0.parquet', 'x=1/000003_0.20260101000000_0123456789ab', '_SUCCESS']
    """
    def named(name: str, keep_old: bool) -> str:
        d, _, base = name.rpartition("/")
        if base.startswith(("_", ".")):
            return name
        if not keep_old:
            base = _STATEMENT_ID.sub("", base, count=1) or base
        new = f"{base}.{qid}" if bucket_of_file(base) is not None else f"{qid}-{base}"
        return f"{d}/{new}" if d else new

    out = [named(n, False) for n in names]
    if len(set(out)) < len(out):
        out = [named(n, True) for n in names]
    return out


def _journals() -> dict[str, tuple[str, Catalog]]:
    """Each statement with a journal in a warehouse this process is connected to: its id ->
    (its journal's path, the warehouse's metastore)."""
    with _lock:
        dirs = [(d, cats[-1]) for d, cats in _warehouses.items() if cats]
    out: dict[str, tuple[str, Catalog]] = {}
    for d, cat in dirs:
        try:
            entries = fs.list_files(d) if fs.exists(d) else []
        except OSError:
            continue
        for e in entries:
            name = posixpath.basename(e.path)
            if name.endswith(".json"):
                out[name[:-len(".json")]] = (e.path, cat)
    return out


def journals_seen() -> tuple[bool, object]:
    """Whether a statement of a warehouse this process is connected to has a journal
    (:func:`any_in_flight`), and what tells whether one began or ended since, when compared with
    a later call's: each journal directory's names and its modification time (the time an entry
    was last added, removed or renamed in it, which a journal's heartbeat does too)."""
    with _lock:
        dirs = sorted(d for d, cats in _warehouses.items() if cats)
    seen = []
    for d in dirs:
        try:
            names = tuple(sorted(posixpath.basename(e.path) for e in fs.list_files(d)))
            seen.append((d, names, fs.modified_ns(d)))
        except OSError:
            seen.append((d, ("?",), None))  # (as a journal: the directory's files are listed)
    return any(n.endswith(".json") or n == "?" for _, names, _ in seen for n in names), tuple(seen)


def any_in_flight() -> bool:
    """Whether a statement of a warehouse this process is connected to has a journal (a
    reader lists a directory it reads only then: :func:`live_files`)."""
    return bool(_journals())


def _uncommitted(path: str, catalog: Catalog) -> bool | None:
    """Whether the statement of the journal at ``path`` has not committed; None when the
    journal is gone (its statement ended: committed, or undone, its files deleted first)."""
    try:
        j = json.loads(fs.read_text(path))
    except (OSError, ValueError):
        return None if not fs.exists(path) else True  # torn: recovery refuses to guess, so do we
    if j.get("kind") == "directory":
        return False
    if j.get("state") != "committing":
        return True  # the journal says "committing" before the metastore transaction begins
    qid = posixpath.basename(path).removesuffix(".json")
    return not _statement_committed(catalog, qid, j)


def live_files(listed: Sequence[str], relist: Callable[[], Sequence[str]]) -> list[str]:
    """``listed`` (a directory's files, listed just before) without the files of statements
    that have not committed (their journal is there, their commit not in the metastore).

    A file of a statement that ended between the listing and the look at the journals was
    committed, or deleted before its journal went: ``relist`` (the same listing, again) tells
    which."""
    named = {p: statement_of(p) for p in listed}
    ids = {q for q in named.values() if q is not None}
    if not ids:
        return list(listed)
    journals = _journals()
    pending = set()
    ended = set()
    for q in ids:
        if q in journals:
            state = _uncommitted(*journals[q])
            if state is None:
                ended.add(q)
            elif state:
                pending.add(q)
    out = [p for p in listed if named[p] not in pending]
    if any(named[p] is not None and (named[p] not in journals or named[p] in ended) for p in out):
        again = set(relist())
        out = [p for p in out if p in again or named[p] is None
               or (named[p] in journals and named[p] not in ended)]
    return out


def own_lb_dirs(location: str, parameters: Mapping[str, str] | None) -> list[str]:
    """The list-bucketing directories inside ``location`` that ``parameters`` record, relative
    to it and each once: relative ones, and absolute ones (SET SKEWED LOCATION) that lie below
    it, which a scan reads as the partition's (exec/scan.lb_paths) and so a write replaces, a
    RENAME TO PARTITION moves, MSCK REPAIR records; a skewed location outside it is never its own.

    >>> own_lb_dirs("/w/t/ds=a", {SKEW_LOCATIONS: json.dumps({"columns": ["x"], "values": [["1"], ["2"], ["3"]],
    ...     "locations": [[["1"], "/w/t/ds=a/own"], [["2"], "/w/t/ds=a/own"], [["3"], "/w/t/side"],
    ...                   [None, "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"]]})})
    ['own', 'HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME']
    """
    lay = partition_layout(parameters or {})
    base = fs.normalize(location).rstrip("/") + "/"
    out: list[str] = []
    for _, loc in lay.locations if lay is not None else ():
        if is_absolute(loc):
            full = fs.normalize(loc)
            if not full.startswith(base):
                continue
            loc = full[len(base):]
        if loc not in out:
            out.append(loc)
    return out


def _listing(location: str, parameters: Mapping[str, str] | None) -> list[str]:
    """The files of ``location`` and of its own list-bucketing directories (:func:`own_lb_dirs`)."""
    out = [e.path for e in fs.list_files(location) if not e.is_dir]
    top = location.rstrip("/")
    for loc in own_lb_dirs(location, parameters):
        out += [e.path for e in fs.list_files(f"{top}/{loc}") if not e.is_dir]
    return out


def current_files(location: str, recorded: Sequence[str] | None,
                  parameters: Mapping[str, str] | None = None) -> list[str]:
    """Absolute paths of a partition's (or unpartitioned table's) live files.

    Without a recorded list the directory is listed, and so are the list-bucketing
    directories inside it that ``parameters`` record, less the files of statements that have
    not committed (:func:`live_files`)."""
    if recorded is not None:
        return [f"{location.rstrip('/')}/{name}" for name in recorded]
    return live_files(_listing(location, parameters), lambda: _listing(location, parameters))


def listed_files(location: str, entries: Sequence[fs.FileEntry] | None = None) -> list[fs.FileEntry]:
    """The files (not directories) in ``location`` that are a table's: those of statements
    that have not committed left out (:func:`live_files`); ``entries``: its files, listed just
    before by the caller."""
    if entries is None:
        entries = [e for e in fs.list_files(location) if not e.is_dir]
    live = set(live_files([e.path for e in entries],
                          lambda: [e.path for e in fs.list_files(location) if not e.is_dir]))
    return [e for e in entries if e.path in live]


def table_files(table: Table) -> list[str]:
    """The live files of an unpartitioned table (recorded, or listed when none are)."""
    raw = table.properties.get(FILES_PARAM)
    return current_files(table.location, json.loads(raw) if raw else None, table.properties)


def delete_owned(location: str, files: Sequence[str]) -> bool:
    """Deletes ``files`` (what the metastore records as a table's or partition's own), then
    the directories under ``location`` and ``location`` itself that this left empty. A file
    it does not own (another statement's file in flight, one copied in by hand) keeps its
    directory (and its parents); returns whether ``location`` is gone."""
    return fs.delete_files_and_prune(location, files)


class _PartitionExists(Exception):
    """An IF NOT EXISTS write finds its partition created by another statement."""

    def __init__(self, table: Table, locations: Sequence[str]) -> None:
        super().__init__(table.qualified_name)
        self.table, self.locations = table, locations


def _delete_if_empty(root: str, location: str) -> None:
    """Deletes ``location`` if it holds nothing but markers (``fs.prune_empty_dirs``), then
    each parent below ``root`` that this leaves empty (``ds=1`` of ``ds=1/hr=2``)."""
    root, location = fs.normalize(root), fs.normalize(location)
    if not fs.prune_empty_dirs(location):
        return
    parent = location.rsplit("/", 1)[0]
    while parent.startswith(root + "/"):
        fs.delete_dir_if_empty(parent)
        if fs.exists(parent):
            return
        parent = parent.rsplit("/", 1)[0]


def _conflict(table: Table, what: str) -> CommitConflict:
    return CommitConflict(f"Commit conflict on table {table.qualified_name}: {what}. Nothing was changed; "
                          "run the statement again.")


def _check_same_table(was: Table, now: Table) -> None:
    """Raises CommitConflict unless ``now`` (the table by that name after a conflict) is the
    table ``was`` that the statement wrote files for: the same table (not one created again
    under its name), with the same columns, format, location and layout of files."""
    if was.uid and now.uid and was.uid != now.uid:
        raise _conflict(now, "another statement dropped it and created a table of that name again while "
                        "this statement ran, so the files this statement wrote were for a table that no "
                        "longer exists")

    def cols(t: Table) -> tuple:
        return tuple((c.name.lower(), c.type.lower()) for c in t.columns)

    def keys(t: Table) -> tuple:
        return tuple((c.name.lower(), c.type.lower()) for c in t.partition_keys)

    def serde(t: Table) -> object:
        return (t.field_delim, text_serde(t)) if t.format == "textfile" else None

    changed = [what for what, get in (("columns", cols), ("partition columns", keys),
                                      ("storage format", lambda t: t.format),
                                      ("location", lambda t: fs.normalize(t.location) if t.location else ""),
                                      ("bucketing", table_buckets), ("text SerDe properties", serde))
               if get(was) != get(now)]
    if changed:
        raise _conflict(now, f"another statement changed its {' and '.join(changed)} while this statement ran "
                        "(ALTER TABLE), so the files this statement wrote no longer fit it")


def _check_absent(catalog: Catalog, table: Table, writes: Sequence[PartitionWrite]) -> None:
    """Raises _PartitionExists when an IF NOT EXISTS write's partition exists."""
    wanted = [w.values for w in writes if w.if_absent]
    found = catalog.get_partitions(table, wanted) if wanted and table.is_partitioned else {}
    if found:
        raise _PartitionExists(table, [p.location for p in found.values()])


def _plan(catalog: Catalog, table: Table, writes: Sequence[PartitionWrite], qid: str) -> _Plan:
    plan = _Plan()
    now = str(int(time.time()))
    existing = catalog.get_partitions(table, [w.values for w in writes]) \
        if table.is_partitioned else {}
    for w in writes:
        new_names = w.target_names(qid)
        new_size = sum(f.size for f in w.files)
        if table.is_partitioned:
            old = existing.get(tuple(w.values))
            if old is None and w.if_present:
                continue  # TRUNCATE of a partition another statement dropped: nothing to empty
            if old is not None and w.if_absent:
                raise _PartitionExists(table, [old.location])
            _check_location(table, w, old)
            old_files = current_files(w.location, old.files, old.parameters) if old else []
            old_params = dict(old.parameters) if old else {}
        else:
            raw = table.properties.get(FILES_PARAM)
            old_files = current_files(table.location, json.loads(raw) if raw else None,
                                      table.properties)
            old_params = dict(table.properties)
        base = w.location.rstrip("/")
        gone_from = len(plan.obsolete)
        new_paths = {f"{base}/{n}" for n in new_names}
        old_files = [p for p in old_files if p not in new_paths]
        if w.rewrites is not None:  # the same rows in new files: exactly the rewritten ones go
            rewritten = {f"{base}/{n}" for n in w.rewrites}
            gone = sorted(rewritten - set(old_files))
            if gone:
                where = f"partition {make_part_name(table.partition_key_names(), w.values)}" \
                    if table.is_partitioned else "the table"
                raise _conflict(table, f"another statement replaced or removed files of {where} while this "
                                f"statement rewrote them ({', '.join(_relative(base, p) for p in gone[:3])}"
                                f"{', ...' if len(gone) > 3 else ''})")
            plan.obsolete += [p for p in old_files if p in rewritten]
            kept = [_relative(base, p) for p in old_files if p not in rewritten]
            rows = int(old_params.get("numRows", "-1"))
            size = new_size + _total_size([p for p in old_files if p not in rewritten])
        elif w.overwrite:
            plan.obsolete += old_files
            kept = []
            rows, size = w.num_rows, new_size
        else:
            kept = [_relative(base, p) for p in old_files]
            old_rows = int(old_params.get("numRows", "0" if not old_files else "-1"))
            rows = old_rows + w.num_rows if old_rows >= 0 and w.num_rows >= 0 else -1
            size = int(old_params.get("totalSize", "0")) + new_size
        plan.emptied += _subdirs_holding(base, plan.obsolete[gone_from:])
        names = sorted(kept + new_names)
        params: dict[str, str | None] = {
            "numFiles": str(len(names)), "numRows": str(rows), "totalSize": str(size),
            "transient_lastDdlTime": now}
        if (not w.overwrite or w.rewrites is not None) and SKEW_LOCATIONS in old_params:
            params[SKEW_LOCATIONS] = old_params[SKEW_LOCATIONS]  # appends and rewrites keep the layout
        elif w.overwrite and w.rewrites is None and not table.is_partitioned:
            params[SKEW_LOCATIONS] = None  # the old layout goes with the old files
        if not table.is_partitioned:  # (a partition's parameters are made anew: its statistics go)
            params[COLUMN_STATS] = params[COLUMN_STATS_ACCURATE] = None
        params.update(w.parameters)
        if table.is_partitioned:
            clean = {k: v for k, v in params.items() if v is not None}
            plan.put.append(Partition(w.values, w.location, clean, tuple(names), int(now)))
        else:
            plan.table_params = {**params, FILES_PARAM: json.dumps(names)}
    return plan


def _subdirs_holding(base: str, files: Sequence[str]) -> list[str]:
    """The directories directly below ``base`` (a partition's or an unpartitioned table's
    directory, never ``base`` itself nor anything outside it) holding some of ``files``: list
    bucketing's ``x=1`` (``a=1`` of ``a=1/b=2``), which an INSERT OVERWRITE under another
    layout (ALTER TABLE ... SKEWED BY, NOT STORED AS DIRECTORIES) leaves empty, as Hive does not.

    >>> _subdirs_holding("/w/t/ds=1", ["/w/t/ds=1/f", "/w/t/ds=1/x=1/f", "/w/t/ds=1/a=1/b=2/f", "/w/u/x=1/f"])
    ['/w/t/ds=1/a=1', '/w/t/ds=1/x=1']
    """
    root = fs.normalize(base).rstrip("/")
    out = set()
    for f in files:
        path = fs.normalize(f)
        if path.startswith(root + "/"):
            head, sep, _ = path[len(root) + 1:].partition("/")
            if sep and head not in ("", ".", ".."):
                out.add(f"{root}/{head}")
    return sorted(out)


def _check_location(table: Table, w: PartitionWrite, old: Partition | None) -> None:
    """Raises CommitConflict when the partition ``w`` writes is not where ``w`` put its files:
    another statement added it at a LOCATION of its own, or moved it (SET LOCATION), after
    this statement planned."""
    keys = table.partition_key_names()
    where = old.location if old is not None else partition_path(table.location, keys, w.values)
    if fs.normalize(where) != fs.normalize(w.location):
        name = make_part_name(keys, w.values)
        if old is None:
            raise _conflict(table, f"another statement dropped partition {name} while this statement wrote "
                            f"its files at {w.location}")
        raise _conflict(table, f"partition {name} is now at {old.location}, not at {w.location} where this "
                        "statement wrote its files: another statement added it with a LOCATION or moved it "
                        "(SET LOCATION) while this statement ran")


def _total_size(paths: Sequence[str]) -> int:
    """The bytes of ``paths`` (one listing of each directory holding one); a file missing counts 0."""
    sizes = {fs.normalize(e.path): e.size for d in {p.rsplit("/", 1)[0] for p in paths}
             for e in fs.list_files(d) if not e.is_dir}
    return sum(sizes.get(fs.normalize(p), 0) for p in paths)


def _relative(base: str, path: str) -> str:
    return path[len(base) + 1:] if path.startswith(base + "/") else os.path.basename(path)


def expiring_dir(warehouse: str) -> str:
    return state_dir(warehouse) + "/expiring"


def schedule_deletion(warehouse: str, qid: str, files: Sequence[str], retention: float,
                      dirs: Sequence[str] = ()) -> None:
    """Deletes files a commit made obsolete, at once (``retention`` <= 0) or once ``retention``
    seconds have passed: until then readers that planned on the old version can open them.
    ``dirs`` (the old directories of partitions a RENAME or EXCHANGE moved) go after them if
    that left them empty: a later MSCK REPAIR would register one as a partition again."""
    if not files and not dirs:
        return
    if retention <= 0:
        for path in files:
            fs.delete_file(path)
        for d in dirs:
            fs.prune_empty_dirs(d)
        return
    fs.write_text_atomic(f"{expiring_dir(warehouse)}/{qid}.json", json.dumps(
        {"files": list(files), "dirs": list(dirs), "expires": time.time() + retention}))


def delete_expired(warehouse: str, now: float | None = None) -> int:
    """Deletes the obsolete files whose retention has passed; returns how many records it
    finished. An unreadable record is left alone (its files stay, which loses nothing)."""
    directory = expiring_dir(warehouse)
    if not fs.exists(directory):
        return 0
    now = time.time() if now is None else now
    done = 0
    for entry in fs.list_files(directory):
        if not entry.path.endswith(".json"):
            continue
        try:
            record = json.loads(fs.read_text(entry.path))
            due = float(record["expires"]) <= now
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if due:
            for path in record.get("files", []):
                fs.delete_file(path)
            for d in record.get("dirs", []):
                fs.prune_empty_dirs(d)
            fs.delete_file(entry.path)
            done += 1
    return done


def abandoned_journals(directory: str) -> Iterator[tuple[str, dict]]:
    """Each journal in ``directory`` whose statement is proven dead (:func:`abandoned`), with
    its content; the caller undoes or finishes it, then deletes the file.

    Raises:
        JournalError: a journal cannot be read (its path is in the message): recovery cannot
            tell what its statement did, and stops rather than guess."""
    for entry in fs.list_files(directory):
        if not entry.path.endswith(".json"):
            continue
        try:
            j = json.loads(fs.read_text(entry.path))
        except (OSError, ValueError) as e:
            raise JournalError(
                f"The journal {entry.path} cannot be read ({e}), so hivepark cannot tell whether its statement "
                "committed: nothing was recovered. Check the table it names against the directory it "
                "wrote by hand, then delete the journal.") from None
        if abandoned(j, entry.path):
            yield entry.path, j


def recover(warehouse: str, catalog: Catalog) -> int:
    """Finishes or undoes statements that crashed; returns how many it cleaned up."""
    cleaned = 0
    failed: list[str] = []
    # a killed CTAS's table is judged after its write's own journal is undone or finished
    journals = sorted(abandoned_journals(journal_dir(warehouse)), key=lambda pj: pj[1].get("kind") == "ctas")
    for path, j in journals:
        try:  # each statement on its own: one that cannot be cleaned up stops no other
            _recover_one(warehouse, path, j, catalog)
            fs.delete_file(path)
            cleaned += 1
        except OSError as e:
            failed.append(f"{path}: {e}")
    try:
        sweep_staging(warehouse, catalog)
    except OSError as e:
        failed.append(f"staging directories: {e}")
    try:
        forget_finished(warehouse, catalog)
    except OSError as e:
        failed.append(f"records of committed statements: {e}")
    delete_expired(warehouse)
    try:  # a record's temporary that a killed writer left half-written, in every kind of record
        fs.delete_stale_temporaries(state_dir(warehouse), LEASE_SECONDS)
    except OSError as e:
        failed.append(f"temporary files in {state_dir(warehouse)}: {e}")
    if failed:
        raise OSError(f"{len(failed)} crashed statement(s) could not be cleaned up ({'; '.join(failed)}); "
                      f"{cleaned} other(s) were")
    return cleaned


def process_alive(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _recover_one(warehouse: str, path: str, j: dict, catalog: Catalog) -> None:
    if j.get("kind") == "directory":
        _recover_directory(j)
        return
    if j.get("kind") == "ctas":
        undo_created_table(j, catalog)
        return
    if j.get("kind") == "table_move":
        finish_table_move(j, catalog)
        return
    targets: list[str] = j.get("targets", [])
    qid = os.path.basename(path).removesuffix(".json")
    committed = bool(targets) and j.get("state") == "committing" and _statement_committed(catalog, qid, j)
    if committed:  # readers may still use the replaced files: they wait out the retention
        schedule_deletion(warehouse, qid, j.get("obsolete", []), float(j.get("retention", 0)),
                          j.get("emptied", []))
    else:
        restore_sources(j.get("restore", []))  # LOAD DATA INPATH's files go back where they were
        # never a file the metastore records (whatever put it there: a listing of an older
        # hivepark that took it for the table's)
        recorded = _recorded(catalog, j.get("table", []), targets) if targets else set()
        for doomed in targets:
            if fs.normalize(doomed) not in recorded:
                fs.delete_file(doomed)
    fs.delete_dir(j.get("staging", ""))
    if not committed:
        _prune_unregistered(catalog, j.get("table", []), targets, str(j.get("staging") or ""))


def _prune_unregistered(catalog: Catalog, name: Sequence[str], targets: Sequence[str], staging: str) -> None:
    """Deletes the directories that held ``targets`` (files of a statement undone) and that
    this left empty, with their parents below the table's directory, unless a partition of the
    table is there: a later MSCK REPAIR would register one as a partition that never was (as the
    abort of a statement that did not die does, Commit._prune_left_empty). The table dropped
    meanwhile (DROP TABLE kept the directories holding these files), its directory (the one
    holding ``staging``) goes too once empty, unless a table or partition is there now."""
    try:
        table: Table | None = catalog.get_table(name[0], name[1])
    except Exception:  # noqa: BLE001 - dropped, or no name
        table = None
    if table is not None and table.location:
        root = fs.normalize(table.location).rstrip("/")
    elif table is None and posixpath.basename(staging.rstrip("/")).startswith(STAGING_PREFIX):
        root = posixpath.dirname(fs.normalize(staging).rstrip("/"))
    else:
        return

    def registered(d: str) -> bool:  # a partition's directory (one indexed metastore query per directory)
        return any(values is not None and fs.normalize(loc).rstrip("/") == d
                   for _, _, values, loc in catalog.locations_overlapping(d))

    dirs = {posixpath.dirname(fs.normalize(t)) for t in targets}
    for d in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
        if d.startswith(root + "/") and fs.exists(d) and not registered(d):
            _delete_if_empty(root, d)  # and its parents below the table's directory it leaves empty
    if table is None and fs.exists(root) and not fs.list_files(root) and not catalog.locations_overlapping(root):
        fs.delete_dir_if_empty(root)


def _statement_committed(catalog: Catalog, qid: str, j: Mapping[str, object]) -> bool:
    """Whether the statement of journal ``j`` (in state "committing") committed: its id is
    recorded in the metastore (by its commit's transaction); for a journal of a hivepark that
    did not record it, whether the metastore records any of its files (none may be, if later
    statements replaced them all: its files are then deleted, its obsolete ones left)."""
    if j.get("marked"):
        return qid in catalog.committed_statements([qid])
    targets = j.get("targets")
    name = j.get("table")
    if not isinstance(targets, list) or not isinstance(name, list):
        return False
    return bool(_recorded(catalog, name, targets))


def _recorded(catalog: Catalog, name: Sequence[str], targets: Sequence[str]) -> set[str]:
    """Those of ``targets`` (normalized) that the metastore records as files of table ``name``."""
    try:
        table = catalog.get_table(name[0], name[1])
    except Exception:  # noqa: BLE001 - dropped, or no name: it records nothing
        return set()
    wanted = {fs.normalize(t) for t in targets}
    if not table.is_partitioned:
        base = fs.normalize(table.location)
        raw = table.properties.get(FILES_PARAM)
        return {t for t in wanted if raw and t.startswith(base + "/") and _relative(base, t) in json.loads(raw)}
    out = set()
    for p in catalog.list_partitions(table):
        loc = fs.normalize(p.location)
        names = set(p.files or ())
        out |= {t for t in wanted if t.startswith(loc + "/") and _relative(loc, t) in names}
    return out


def forget_finished(warehouse: str, catalog: Catalog) -> int:
    """Removes the metastore's records of committed statements whose journals are gone (only
    a journal still there needs them); returns how many."""
    recorded = catalog.committed_statements()  # first: a record is made while its journal exists
    if not recorded:
        return 0
    d = journal_dir(warehouse)
    present = {posixpath.basename(e.path).removesuffix(".json") for e in fs.list_files(d)} if fs.exists(d) else set()
    done = sorted(recorded - present)
    catalog.forget_statements(done)
    return len(done)
