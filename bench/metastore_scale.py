"""Metastore partition pruning vs. directory listing, at 100,000 partitions.

Creates a SQLite metastore and a table partitioned by ``(ds string, hr int)`` with N
partitions (days x 24 hours), registered in one ``add_partitions`` call, and the matching
empty directories ``ds=.../hr=...`` on disk. Then, for three filters (and a fourth, the large
IN with a condition on ``hr``, kept out of the totals), compares the median time of

* the metastore: ``SqlCatalog.list_partitions(table, filter)`` (one indexed SQL query), and
* listing: walking the table directory with ``os.scandir``, parsing the ``k=v`` names and
  filtering in Python (a compiled closure, IN as a hash set), which is what Spark's
  partition discovery and pruning do without a metastore,

and checks that both find the same partitions.

    .venv/bin/python bench/metastore_scale.py                      # 100,000 partitions
    .venv/bin/python bench/metastore_scale.py --partitions 1000000 --repeat 3
    .venv/bin/python bench/metastore_scale.py --metastore postgresql+psycopg://u:p@127.0.0.1:5432/db

With ``--metastore`` the partitions go to that metastore (PostgreSQL, say) instead of a SQLite
file in the work directory; the benchmark's database ``bench`` is dropped again at the end.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from hivepark.catalog.models import Column, Database, Partition, Table
from hivepark.catalog.sql import SqlCatalog, make_part_name
from hivepark.expr.nodes import (
    And,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThanOrEqual,
)
from hivepark.expr.visitors import compile_predicate
from hivepark.layout import unescape_path_name

HOURS = 24
START = datetime.date(2000, 1, 1)

Key = tuple[str, str]


def day(i: int) -> str:
    return (START + datetime.timedelta(days=i)).isoformat()


def build(root: Path, n: int, url: str | None = None
          ) -> tuple[SqlCatalog, Table, Path, float, float]:
    """The catalog, the table, its directory, seconds to register, seconds for mkdirs."""
    cat = SqlCatalog(url or f"sqlite:///{root}/metastore.db")
    cat.create_database(Database("bench", str(root / "warehouse" / "bench.db")))
    table_dir = root / "warehouse" / "bench.db" / "events"
    table = cat.create_table(Table("bench", "events", (Column("v", "string"),),
                                   (Column("ds", "string"), Column("hr", "int")),
                                   location=str(table_dir)))
    keys = table.partition_key_names()
    values = [(day(i // HOURS), str(i % HOURS)) for i in range(n)]
    names = [make_part_name(keys, v) for v in values]
    parts = [Partition(v, f"{table_dir}/{name}") for v, name in zip(values, names)]
    t0 = time.perf_counter()
    cat.add_partitions(table, parts)
    register = time.perf_counter() - t0
    t0 = time.perf_counter()
    for name in names:
        os.makedirs(table_dir / name)
    mkdirs = time.perf_counter() - t0
    return cat, table, table_dir, register, mkdirs


def list_directories(table_dir: Path, keys: tuple[str, ...], types: dict[str, Callable[[str],
                     Any]], predicate: Expr) -> set[Key]:
    """Spark-style discovery: walk ``k=v`` directories, parse, filter in Python."""
    found: set[Key] = set()
    matches = compile_predicate(predicate)

    def walk(path: str, depth: int, raw: tuple[str, ...]) -> None:
        with os.scandir(path) as it:
            for entry in it:
                if not entry.is_dir() or "=" not in entry.name:
                    continue
                col, _, value = entry.name.partition("=")
                if col != keys[depth]:
                    continue
                here = (*raw, unescape_path_name(value))
                if depth + 1 < len(keys):
                    walk(entry.path, depth + 1, here)
                    continue
                row = {k: types[k](v) for k, v in zip(keys, here)}
                if matches(row) is True:
                    found.add((here[0], here[1]))

    walk(str(table_dir), 0, ())
    return found


def median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median time of ``fn()``; the previous run's result is freed before the clock
    starts (freeing 24,000 partitions is not part of the next lookup)."""
    times, result = [], None
    for _ in range(repeat):
        result = None
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), result


def queries(n: int) -> list[tuple[str, Expr]]:
    days = max(1, -(-n // HOURS))
    step = max(1, days // 1000)
    in_days = tuple(day(i * step) for i in range(1000))
    a = days // 2
    month = And(GreaterThanOrEqual("ds", day(a)), LessThanOrEqual("ds", day(a + 30)))
    return [
        ("ds IN (1000 values)", In("ds", in_days)),
        (f"ds BETWEEN '{day(a)}' AND '{day(a + 30)}'", month),
        (f"ds = '{day(a)}' AND hr > 12", And(EqualTo("ds", day(a)), GreaterThan("hr", 12))),
    ]


def extra_queries(n: int) -> list[tuple[str, Expr]]:
    """Filters beyond issue 15's three, printed after them and kept out of their totals."""
    big_in = queries(n)[0][1]
    return [("ds IN (1000 values) AND hr > 12", And(big_in, GreaterThan("hr", 12)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", help="work directory (default: a temporary one, removed)")
    parser.add_argument("--metastore", help="metastore URL (default: SQLite in the work directory)")
    args = parser.parse_args(argv)

    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="hivepark-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    if (root / "metastore.db").exists() or (root / "warehouse").exists():
        parser.error(f"{root} already holds a benchmark; pass an empty --dir")
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}")
    shown = make_url(args.metastore).render_as_string(hide_password=True) if args.metastore else "SQLite file"
    print(f"metastore: {shown}")
    cat = None
    try:
        cat, table, table_dir, register, mkdirs = build(root, args.partitions, args.metastore)
        print(f"registered {args.partitions} partitions in one add_partitions call: "
              f"{register:.2f} s ({args.partitions / register:,.0f} partitions/s); "
              f"created their directories: {mkdirs:.2f} s")
        keys = table.partition_key_names()
        types: dict[str, Callable[[str], Any]] = {"ds": str, "hr": int}
        total_ms, total_ls = 0.0, 0.0
        main_queries = queries(args.partitions)
        for label, predicate in main_queries + extra_queries(args.partitions):
            ms, parts = median_ms(functools.partial(cat.list_partitions, table, predicate),
                                  args.repeat)
            ls, found = median_ms(functools.partial(list_directories, table_dir, keys, types,
                                                    predicate), args.repeat)
            via_metastore = {(p.values[0], p.values[1]) for p in parts}
            assert via_metastore == found, f"{label}: metastore and listing disagree"
            if (label, predicate) in main_queries:
                total_ms, total_ls = total_ms + ms, total_ls + ls
            print(f"{label}: {len(found)} partitions; metastore median {ms:.1f} ms, "
                  f"listing median {ls:.1f} ms, ratio listing/metastore {ls / ms:.1f}x")
        # what every LOCATION, ADD PARTITION and recovery asks first: which tables and partitions
        # are at, inside or above a directory (an index range scan since schema version 5)
        fresh = f"{table.location.rstrip('/')}/ds=new/hr=1"
        ms, near = median_ms(functools.partial(cat.locations_overlapping, fresh), args.repeat)
        print(f"directory check of a new partition (Catalog.locations_overlapping): {len(near)} found; "
              f"median {ms:.2f} ms")
        # and against the directories SET SKEWED LOCATION gave, kept in partitions' parameters
        # (a partial index of the partitions recording one since schema version 6)
        ms, near = median_ms(functools.partial(cat.skewed_locations_overlapping, fresh), args.repeat)
        print(f"skewed-location check of a new partition (Catalog.skewed_locations_overlapping): {len(near)} found; "
              f"median {ms:.2f} ms")
        print(f"total over the 3 queries: metastore {total_ms:.1f} ms, "
              f"listing {total_ls:.1f} ms")
        print(f"ratio listing/metastore: {total_ls / total_ms:.1f}x")
    finally:
        if cat is not None:
            if args.metastore:
                cat.drop_database("bench", cascade=True)
            cat.close()
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
