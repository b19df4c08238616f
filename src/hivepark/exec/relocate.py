"""Partitions whose files move to other directories: ALTER TABLE t PARTITION (...) RENAME TO
PARTITION (...) and ALTER TABLE dest EXCHANGE PARTITION (...) WITH TABLE source.

Both copy the files into the new directories, change the metastore in one transaction, then
delete the old files (or leave them to readers planned on the old version for
``hivepark.files.retention.seconds``). A journal (the commit protocol's,
:class:`storage.commit.Journal`) lets ``connect()`` finish or undo a crash: before the commit
the copies are deleted (the warehouse is as before), after it the old files are (as after).
Hive renames the directories instead, and a failure between its rename and its metastore
change leaves the partition's files where neither table reads them."""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Callable, Iterable, Sequence

from hivepark import layout
from hivepark.catalog.base import TableChange
from hivepark.catalog.buckets import table_buckets
from hivepark.catalog.models import Partition, Table
from hivepark.catalog.skew import SKEW_LOCATIONS, partition_layout
from hivepark.errors import AlreadyExistsError, CommitConflict, NoSuchPartition, SemanticError, UnsupportedError
from hivepark.exec.context import Context
from hivepark.sql import statements as s
from hivepark.sql.validate import (
    check_not_default_partition,
    check_spec_columns,
    full_spec,
    named_partitions,
    spec_filter,
)
from hivepark.storage import fs
from hivepark.storage.commit import (
    STAGING_PREFIX,
    Journal,
    committed_after_all,
    copy_names,
    current_files,
    delete_owned,
    fault_point,
    journal_dir,
    new_statement_id,
    schedule_deletion,
    unknown_outcome,
    writers_in,
)
from hivepark.storage.formats import CUT_COLUMNS, DROPPED_COLUMNS, FILE_TYPES, text_serde
from hivepark.storage.handlers import handler_name
from hivepark.types import HiveType

#: (the partition as it is, its new values, its new directory)
_Move = tuple[Partition, tuple[str | None, ...], str]


def spec_text(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """``{ds=1, hr=2}``, as Hive shows a partition in its messages."""
    return "{" + ", ".join(f"{k}={v if v is not None else layout.DEFAULT_PARTITION_NAME}"
                           for k, v in zip(keys, values)) + "}"


def given_spec_text(spec: s.PartitionSpec) -> str:
    """A spec as the user gave it, in Hive's ``{ds=1, hr=2}`` (a comparison as written)."""
    if spec.ops:
        return spec.text.removeprefix("PARTITION").strip()
    return "{" + ", ".join(f"{c}={v}" for c, v, _ in spec) + "}"


def delete_empty_parents(table: Table, locations: Iterable[str]) -> None:
    """As Hive's metastore does after dropping partitions: the parent directories (``c=0`` of
    ``c=0/ds=x``) of ``locations`` left empty inside the table's directory go too. Each parent
    is looked at once, deepest first, after all of ``locations`` are gone: a DROP of thousands
    of partitions lists ``c=0`` once, not once a partition (each listing as long as ``c=0``
    holds partitions: quadratic in them)."""
    base = fs.normalize(table.location)
    parents: set[str] = set()
    for location in locations:
        parent = posixpath.dirname(fs.normalize(location))
        while parent != base and parent not in parents and layout.is_within(base, parent):
            parents.add(parent)
            parent = posixpath.dirname(parent)
    for parent in sorted(parents, key=lambda p: p.count("/"), reverse=True):
        fs.delete_dir_if_empty(parent)  # nothing in it at all, hidden names included


def rename_partition(ctx: Context, table: Table, old_spec: s.PartitionSpec, new_spec: s.PartitionSpec) -> Table:
    """ALTER TABLE t PARTITION (old) RENAME TO PARTITION (new), as Hive: the metastore row gets
    the new values in one transaction (the table version moves on); a managed table's files go
    to the new partition's default directory (an external table's stay where they are)."""
    if handler_name(table) is not None or not table.is_partitioned:
        raise SemanticError(f"{table.qualified_name} has no metastore partitions to rename"
                            + (": its storage handler keeps its own layout." if table.is_partitioned else "."))
    keys = table.partition_key_names()
    check_not_default_partition(table, new_spec)
    old_values, new_values = full_spec(table, old_spec), full_spec(table, new_spec)
    ctx.check_partition_names(new_values)
    old = ctx.catalog.get_partition(table, old_values)
    if old is None:
        raise NoSuchPartition(f"Partition not found {spec_text(keys, old_values)}: {table.qualified_name} has no "
                              f"such partition to rename. SHOW PARTITIONS {table.name} lists them.", code=10006)
    if ctx.catalog.get_partition(table, new_values) is not None:
        raise AlreadyExistsError(
            f"Unable to rename partition. Partition already exists:{table.db}.{table.name}."
            f"[{', '.join(v if v is not None else layout.DEFAULT_PARTITION_NAME for v in new_values)}]. Drop it "
            f"first (ALTER TABLE {table.name} DROP PARTITION ...) or choose other values.")
    if table.is_external:  # Hive moves no data of an external table: only the metastore changes
        now = int(time.time())
        new = Partition(new_values, old.location, {**old.parameters, "transient_lastDdlTime": str(now)},
                        old.files, now)
        return ctx.catalog.commit(table, table.version, put=[new], drop=[old_values])
    target = layout.partition_path(table.location, keys, new_values)
    return _move(ctx, "rename", table, table, [(old, new_values, target)],
                 lambda news, qid: ctx.catalog.commit(table, table.version, put=news, drop=[old_values],
                                                      statement=qid))


def exchange_partitions(ctx: Context, dest: Table, action: s.ExchangePartition) -> Table:
    """ALTER TABLE dest EXCHANGE PARTITION (spec) WITH TABLE source, as Hive: the source's
    partitions that the (partial) spec matches move into ``dest``, which must have the same
    columns and partition keys and none of those partitions. Their files move into ``dest``'s
    directory; both tables change in one metastore transaction. Unlike Hive, the two tables must
    also store their files alike (format, field delimiter): ``dest`` reads them with its own."""
    source = ctx.table(action.source, for_view="EXCHANGE PARTITION moves partitions between tables, "
                       "not views", code=10131)
    for t in (dest, source):
        if handler_name(t) is not None:
            raise UnsupportedError(f"ALTER TABLE ... EXCHANGE PARTITION is not supported for {t.qualified_name}: "
                                   "its storage handler keeps its own partitions. Copy them with INSERT ... SELECT.",
                                   code=10134)
        if t.properties.get("transactional", "").lower() == "true":
            raise SemanticError("Exchange partition is not allowed with transactional tables. Alternatively, shall "
                                f"use load data or insert overwrite to move partitions ({t.qualified_name} is "
                                "transactional).")
        if t.is_external:
            raise UnsupportedError(
                f"ALTER TABLE ... EXCHANGE PARTITION moves files between managed tables, and {t.qualified_name} is "
                "external: hivepark never moves files it does not own. Register the directory instead: ALTER TABLE "
                f"{dest.name} ADD PARTITION (...) LOCATION '...', then ALTER TABLE {source.name} DROP PARTITION (...).")
    if fs.normalize(source.location) == fs.normalize(dest.location):
        raise SemanticError(f"ALTER TABLE {dest.name} EXCHANGE PARTITION names {dest.qualified_name} as its own "
                            "source: name another table after WITH TABLE.")
    _check_same_schema(dest, source)
    spec = action.spec
    check_spec_columns(source, spec)
    keys = source.partition_key_names()
    given = [k for k in keys if k in spec.static]
    if given != list(keys[:len(given)]) or spec.dynamic:
        raise SemanticError("Partition values specified are not continuous. A subpartition value is specified "
                            f"without specifying the parent partition's value {spec.text.removeprefix('PARTITION')}: "
                            f"give {', '.join(keys[:keys.index(given[-1]) + 1] if given else keys[:1])} a value "
                            "each (a prefix of the partition columns).", code=10234)
    parts = named_partitions(source, spec, ctx.catalog.list_partitions(source, spec_filter(source, spec)))
    named = given_spec_text(spec)
    if not parts:
        raise NoSuchPartition(f"Partition not found {named}: {source.qualified_name} has no partition that matches "
                              f"it. SHOW PARTITIONS {source.name} lists them.", code=10006)
    there = named_partitions(dest, spec, ctx.catalog.list_partitions(dest, spec_filter(dest, spec)))
    if there:
        shown = ", ".join(layout.make_part_name(keys, p.values) for p in there[:3])
        raise AlreadyExistsError(f"Partition already exists [{shown}{', ...' if len(there) > 3 else ''}] in "
                                 f"{dest.qualified_name}: drop it first (ALTER TABLE {dest.name} DROP PARTITION "
                                 f"{spec.text.removeprefix('PARTITION').strip()}) or exchange other partitions.",
                                 code=10118)
    moves = [(p, p.values, layout.partition_path(dest.location, keys, p.values)) for p in parts]
    drop = [p.values for p in parts]
    return _move(ctx, "exchange", source, dest, moves, lambda news, qid: ctx.catalog.commit_tables(
        [TableChange(dest, dest.version, put=news, table_parameters=_file_records(dest, source)),
         TableChange(source, source.version, drop=drop)], statement=qid)[0])


def _file_records(dest: Table, source: Table) -> dict[str, str | None] | None:
    """``dest``'s records of what its files may hold, with ``source``'s added, as the partitions moved
    bring ``source``'s files: the columns read cut (a VARCHAR narrowed while files held longer
    values), the other types an ORC column's files hold and the types of the columns REPLACE COLUMNS
    dropped (storage.formats.CUT_COLUMNS, FILE_TYPES, DROPPED_COLUMNS), so that those files read as in
    ``source`` and a column added back to ``dest`` under a dropped one's name is refused as it is in
    ``source`` when it would not read them."""
    out: dict[str, str | None] = {}
    cut = sorted(set(json.loads(dest.properties.get(CUT_COLUMNS) or "[]"))
                 | set(json.loads(source.properties.get(CUT_COLUMNS) or "[]")))
    if cut:
        out[CUT_COLUMNS] = json.dumps(cut)
    for key in (FILE_TYPES, DROPPED_COLUMNS):
        held: dict[str, list[str]] = json.loads(dest.properties.get(key) or "{}")
        for name, types in json.loads(source.properties.get(key) or "{}").items():
            held.setdefault(name, []).extend(t for t in types if t not in held.get(name, []))
        if held:
            out[key] = json.dumps(held, sort_keys=True)
    return out or None


def _check_same_schema(dest: Table, source: Table) -> None:
    """Hive's rule (the columns and the partition keys, names and types), then the storage."""
    def fields(cols: Sequence) -> list[tuple[str, str]]:
        return [(c.name.lower(), HiveType.parse(c.type).text) for c in cols]

    base = "Tables have incompatible schemas and their partitions  cannot be exchanged."
    for what, mine, theirs in (("columns", dest.columns, source.columns),
                               ("partition columns", dest.partition_keys, source.partition_keys)):
        if fields(mine) != fields(theirs):
            raise SemanticError(f"{base} The {what} of {dest.qualified_name} are ({_shown(mine)}), those of "
                                f"{source.qualified_name} ({_shown(theirs)}): they must be the same, in the same "
                                "order.", code=10235)
    if not dest.is_partitioned:
        raise SemanticError(f"{base} {dest.qualified_name} is not partitioned: partitions move between partitioned "
                            "tables.", code=10235)
    if table_buckets(dest) is not None and table_buckets(dest) != table_buckets(source):
        raise SemanticError(f"{base} {dest.qualified_name} is bucketed and {source.qualified_name} is not, or "
                            "otherwise: its files would not be its buckets.", code=10235)
    if _stored(dest) != _stored(source):
        def stored(t: Table) -> str:
            if t.format != "textfile":
                return t.format.upper()
            serde = text_serde(t)
            escape = f", escaped by {serde.escape!r}" if serde.escape else ""
            return (f"TEXTFILE (fields delimited by {serde.separator(1)!r}, collection items by "
                    f"{serde.separator(2)!r}, map keys by {serde.separator(3)!r}{escape})")
        raise SemanticError(f"{base} {dest.qualified_name} is STORED AS {stored(dest)} and {source.qualified_name} "
                            f"AS {stored(source)}: {dest.qualified_name} could not read the files. Copy the rows "
                            "with INSERT ... SELECT instead.", code=10235)


def _stored(t: Table) -> tuple:
    """What a table's files are read with: its format, a TEXTFILE's separators and escape."""
    if t.format != "textfile":
        return (t.format,)
    serde = text_serde(t)
    return t.format, serde.separators[:3], serde.escape


def _shown(cols: Sequence) -> str:
    return ", ".join(f"{c.name} {c.type}" for c in cols)


def _moved_layout(old: Partition, src_base: str, dst_base: str) -> dict[str, str]:
    """The partition's list-bucketing layout with its skewed locations inside its directory (an
    absolute one SET SKEWED LOCATION gave, whose files move with the partition's, or the directory
    itself) moved to ``dst_base``; empty when none is. One outside the directory stays where it is,
    as in Hive (as ALTER TABLE ... RENAME TO moves the table's)."""
    lay = partition_layout(old.parameters)
    changes = {key: dst_base + loc[len(src_base):] for key, loc in (lay.locations if lay is not None else ())
               if layout.is_absolute(loc) for loc in [fs.normalize(loc)]
               if loc == src_base or loc.startswith(src_base + "/")}
    return {SKEW_LOCATIONS: lay.with_locations(changes).to_json()} if lay is not None and changes else {}


def _move(ctx: Context, verb: str, source: Table, target: Table, moves: Sequence[_Move],
          commit: Callable[[list[Partition], str], Table]) -> Table:
    """Copies each partition's files into its new directory in ``target``, commits the new
    partitions (``commit`` makes the one metastore transaction, recording the statement's id
    given to it: whether a killed statement committed is never guessed from its files, which a
    later statement may have replaced or dropped), then deletes the old files."""
    keys = source.partition_key_names()
    now = int(time.time())
    qid = new_statement_id()
    new_parts: list[Partition] = []
    copies: list[tuple[str, str]] = []
    olds: list[tuple[Partition, list[str]]] = []
    for old, values, dst in moves:
        src_base = fs.normalize(old.location).rstrip("/")
        dst_base = fs.normalize(dst).rstrip("/")
        files = current_files(old.location, old.files, old.parameters)
        outside = [f for f in files if not fs.normalize(f).startswith(src_base + "/")]
        if outside:
            raise UnsupportedError(
                f"Partition {spec_text(keys, old.values)} of {source.qualified_name} has files outside its directory "
                f"({outside[0]}; SET SKEWED LOCATION puts them there), which {'an' if verb[0] in 'aeiou' else 'a'} "
                f"{verb} cannot move. Rewrite the partition with INSERT OVERWRITE first.")
        if fs.exists(dst_base) and fs.list_files(dst_base, recursive=True):
            if writers_in(ctx.warehouse, dst_base, ctx.catalog):
                raise CommitConflict(
                    f"Unable to {verb} partition: another statement is writing into the new partition's location "
                    f"{dst_base} right now (its files are not committed yet). Nothing was changed; run the statement "
                    "again once it finished.")
        if fs.exists(dst_base) and fs.list_files(dst_base, recursive=True):  # (not a dead statement's, undone)
            raise AlreadyExistsError(
                f"Unable to {verb} partition. New location for this partition {dst_base} already exists and holds "
                f"files not recorded for {target.qualified_name}. Move them away, or register them with MSCK "
                "REPAIR TABLE first.")
        # named with this statement's id: a listing of the new directory (a partition ADD PARTITION
        # or MSCK REPAIR made there meanwhile) leaves them out until the commit
        rel = copy_names(qid, [fs.normalize(f)[len(src_base) + 1:] for f in files])
        copies += [(f, f"{dst_base}/{r}") for f, r in zip(files, rel)]
        olds.append((old, files))
        new_parts.append(Partition(values, dst_base, {**old.parameters, **_moved_layout(old, src_base, dst_base),
                                                      "transient_lastDdlTime": str(now)}, tuple(rel), now))
    keep = ctx.retention()
    content = {"state": "moving", "table": [target.db, target.name],
               "staging": f"{target.location.rstrip('/')}/{STAGING_PREFIX}{qid}",
               "targets": [dst for _, dst in copies], "obsolete": [], "retention": keep,
               # the old directories, emptied once the commit landed (recover() deletes them then)
               "emptied": [old.location for old, _ in olds],
               "marked": True}  # the commit records qid (Catalog.committed_statements)
    journal = Journal(f"{journal_dir(ctx.warehouse)}/{qid}.json", content)
    sent = False  # the metastore transaction was sent (and may have landed, its reply lost)
    try:
        for src, dst in copies:
            fs.copy(src, dst)
        for p in new_parts:
            fs.makedirs(p.location)
        journal.update(state="committing", obsolete=[src for src, _ in copies])
        fault_point("before_commit")
        sent = True
        result = commit(new_parts, qid)
    except BaseException as e:
        landed = committed_after_all(ctx.catalog, qid) if sent and not isinstance(e, CommitConflict) else False
        if landed is None:  # the metastore cannot say: the next connect() finishes or undoes it
            journal.release()
            raise unknown_outcome(e) from e
        if not landed:
            for _, dst in copies:
                fs.delete_file(dst)
            for p in new_parts:
                fs.prune_empty_dirs(p.location)
            journal.close()
            raise
        try:  # it landed: only its reply was lost
            result = ctx.catalog.get_table(target.db, target.name)
        except BaseException:
            journal.release()  # the next connect() finishes it
            raise
    fault_point("after_commit")
    if keep <= 0:
        fs.each_at_once(lambda item: delete_owned(item[0].location, item[1]), olds)
        delete_empty_parents(source, [old.location for old, _ in olds])
    else:
        schedule_deletion(ctx.warehouse, qid, [src for src, _ in copies], keep, [old.location for old, _ in olds])
    journal.close()
    ctx.catalog.statement_ended(qid)  # its journal is gone: the record of its commit may go
    return result
