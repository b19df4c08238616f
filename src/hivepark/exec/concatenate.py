"""ALTER TABLE t [PARTITION (...)] CONCATENATE: the files of each directory merged into one."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark.sql import functions as F

from hivepark.catalog.models import Partition, Table
from hivepark.catalog.skew import partition_layout
from hivepark.errors import SemanticError
from hivepark.exec.context import Context, refuse_bucketed
from hivepark.exec.scan import lb_paths
from hivepark.exec.write import spark_write
from hivepark.sql.statements import PartitionSpec
from hivepark.sql.validate import check_spec_columns, named_partitions, spec_filter
from hivepark.storage import fs
from hivepark.storage.commit import FILES_PARAM, PartitionWrite, listed_files
from hivepark.storage.formats import FORMATS, load
from hivepark.storage.handlers import handler_for


def concatenate(ctx: Context, table: Table, spec: PartitionSpec | None) -> Table:
    """ALTER TABLE t [PARTITION (...)] CONCATENATE: the files of each directory (a
    partition, or each of its list-bucketing directories) merged into one, for every
    storage format, in one Spark write and one atomic commit. Directories holding one
    file are left alone; rows and layout are unchanged. A bucketed table is refused, as in
    Hive: its files are one per bucket, which merging would undo."""
    if handler_for(table) is not None:  # its files, if any, are its handler's (an Iceberg table's data files)
        raise SemanticError(f"Concatenate/Merge can not be performed on non-native tables: {table.qualified_name} "
                            "keeps its rows in the source of its storage handler, which hivepark does not merge",
                            code=30033)
    refuse_bucketed(table, "CONCATENATE would merge the files of different buckets into one (Hive refuses it too)")
    if table.is_partitioned:
        parts: list[Partition | None] = list(
            named_partitions(table, spec, ctx.catalog.list_partitions(table, spec_filter(table, spec))) if spec
            else ctx.catalog.list_partitions(table))
    elif spec is not None:
        check_spec_columns(table, spec)
        parts = []
    else:
        parts = [None]
    groups: list[tuple[int, str, list[fs.FileEntry]]] = []  # (part index, rel dir, files)
    merged: dict[int, list[fs.FileEntry]] = {}
    for i, p in enumerate(parts):
        for rel, files in sorted(_files_by_dir(table, p).items()):
            if len(files) > 1:
                groups.append((i, rel, files))
                merged.setdefault(i, []).extend(files)
    if not groups:
        return table
    with ctx.begin_commit(table) as commit:
        _merge_write(ctx, table, groups, commit.staging + "/data")
        writes = []
        by_part: dict[int, list[tuple[int, str]]] = {}
        for g, (i, rel, _) in enumerate(groups):
            by_part.setdefault(i, []).append((g, rel))
        for i, gs in by_part.items():
            p = parts[i]
            files, rel_dirs = [], []
            for g, rel in gs:
                for f in fs.list_files(f"{commit.staging}/data/{_CAT}={g}"):
                    if not f.is_dir:
                        files.append(f)
                        rel_dirs.append(rel)
            writes.append(_concat_write(table, p, files, rel_dirs, merged[i]))
        return commit.finish(ctx.catalog, writes)


_CAT = "hivepark_cat"


def _files_by_dir(table: Table, p: Partition | None) -> dict[str, list[fs.FileEntry]]:
    """A partition's (or unpartitioned table's) live files grouped by directory relative to
    its location (``""`` for the location itself)."""
    location = p.location if p is not None else table.location
    params = p.parameters if p is not None else table.properties
    recorded: Sequence[str] | None
    if p is not None:
        recorded = p.files
    else:
        raw = table.properties.get(FILES_PARAM)
        recorded = json.loads(raw) if raw is not None else None
    lay = partition_layout(params)
    base = fs.normalize(location)
    if lay is not None:
        paths = lb_paths(location, recorded, lay, None)
    elif recorded is not None:
        paths = [f"{base}/{n}" for n in recorded]
    else:
        paths = [e.path for e in listed_files(location)]
    sizes: dict[str, int] = {}
    for d in {path.rsplit("/", 1)[0] for path in paths}:
        sizes.update({fs.normalize(e.path): e.size for e in fs.list_files(d) if not e.is_dir})
    out: dict[str, list[fs.FileEntry]] = {}
    for path in paths:
        full = fs.normalize(path)
        if not full.startswith(base + "/"):
            continue  # a SET SKEWED LOCATION directory elsewhere: not this table's to rewrite
        rel = full[len(base) + 1:].rsplit("/", 1)[0] if "/" in full[len(base) + 1:] else ""
        out.setdefault(rel, []).append(fs.FileEntry(full, sizes.get(full, 0), False))
    return out


def _merge_write(ctx: Context, table: Table, groups: list[tuple[int, str, list[fs.FileEntry]]],
                 target: str) -> None:
    """One Spark job: every group's files read and written as one file per group."""
    file_group = {fs.normalize(f.path): g for g, (_, _, files) in enumerate(groups)
                  for f in files}
    mapping = F.create_map(*[x for path, g in file_group.items()
                             for x in (F.lit(fs.normalize(path)), F.lit(g))])
    paths = [fs.to_spark_path(p) for p in file_group]
    path = F.regexp_replace(F.col("_metadata.file_path"), "^file:/+", "/")
    file_expr = F.url_decode(F.replace(path, F.lit("+"), F.lit("%2B")))
    if table.format == "textfile":  # lines copied as they are (no parsing)
        raw = ctx.spark.read.text(paths).select(
            "value", F.try_element_at(mapping, file_expr).alias(_CAT))
        df, fmt = raw, "text"
    else:
        df = load(ctx.spark, table, paths, extra={"__f": file_expr})
        df = df.select(*[F.col(f"`{c.name}`") for c in table.columns],
                       F.try_element_at(mapping, F.col("__f")).alias(_CAT))
        fmt = FORMATS[table.format]
    out = df.repartition(len(groups), F.col(_CAT)).write.format(fmt).partitionBy(_CAT)
    spark_write(out, target)


def _concat_write(table: Table, p: Partition | None, files: list[fs.FileEntry],
                  rel_dirs: list[str], merged: list[fs.FileEntry]) -> PartitionWrite:
    """The write replacing exactly the ``merged`` files of a partition (or unpartitioned
    table) by ``files``: a file another statement adds meanwhile stays, and one of ``merged``
    that another statement removes meanwhile fails the commit (storage/commit.py ``rewrites``)."""
    location = p.location if p is not None else table.location
    base = fs.normalize(location)
    rewrites = tuple(fs.normalize(f.path)[len(base) + 1:] for f in merged)
    return PartitionWrite(p.values if p is not None else (), location, files, -1, True,
                          rel_dirs=rel_dirs, rewrites=rewrites)
