"""List bucketing: a table partitioned by ds whose column x is heavily skewed (a Zipf-like
draw: about 10 values hold about 80% of the rows), queried for a skewed value (reading two
narrow columns, and reading the rows' payload too), a rare value and an IN list.

    .venv/bin/python bench/list_bucketing.py [--rows 20000000] [--days 7] [--repeat 5] [--write-repeat 3]

The default size is 20,000,000 rows (about 5 minutes on 2 cores): at 5,000,000 a query's fixed
cost (planning, Spark's job: about 0.1 s, the rare-value query's time) was most of every query's
time, so the skewed-value query's ratio measured Spark's fixed cost rather than the bytes it
skips. ``--rows 5000000`` gives a quick run (about 1.5 minutes).

Three readers of the same rows:
  lb     hivepark, SKEWED BY (x) ON (1, ..., 10) STORED AS DIRECTORIES (one directory per
         heavy value plus a default directory in each partition; EXPLAIN shows K/N)
  plain  hivepark, the same rows in a plain partitioned table (one file per partition)
  spark  Spark reading the plain table's files itself, with its Parquet filter pushdown
  files  Spark reading only the files of the list-bucketed directories that hold the value
         (the same filter, given the file names): what any Spark reader of exactly the
         qualifying files costs, so lb/files shows what hivepark adds on top of that
Bytes read are what the Spark JVM read (Linux /proc/<pid>/io rchar: after Parquet column
pruning and row-group skipping); times are medians of alternating runs. Figures and ratios
are printed on the last lines.
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

HEAVY = list(range(1, 11))


def input_bytes(spark) -> int:
    """Bytes the Spark JVM has read so far (``rchar`` of /proc/<pid>/io: every read, from
    disk or page cache). Spark's own input metric undercounts the vectorized Parquet reader
    on local files, so it is not used."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    with open(f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write-repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()

    import hivepark
    from hivepark.exec.session import get_or_create_spark
    from hivepark.layout import LB_DEFAULT_DIR_NAME

    root = args.dir or tempfile.mkdtemp(prefix="hivepark-bench-lb-")
    spark = get_or_create_spark()
    wh = hivepark.connect(os.path.join(root, "warehouse"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    # P(x >= k) = k ** -0.671, so P(x <= 10) = 1 - 11 ** -0.671 = 0.80 (a discrete Pareto,
    # i.e. Zipf-like, draw); a payload column makes bytes matter.
    src = spark.range(args.rows).selectExpr(
        "id AS a", "sha2(cast(id AS string), 256) AS payload",
        "least(cast(floor(pow(1.0 - rand(7), -1.0 / 0.671)) AS BIGINT), 1000000) AS x",
        f"date_format(date_add(DATE'2024-01-01', cast(id % {args.days} AS int)), "
        "'yyyy-MM-dd') AS ds")
    src.createOrReplaceTempView("bench_source")
    on = ", ".join(map(str, HEAVY))
    # the source cached once, so each write times the write, not the generation of its rows
    spark.table("bench_source").cache().count()
    for name, skew in (("lb", f"SKEWED BY (x) ON ({on}) STORED AS DIRECTORIES "), ("plain", "")):
        wh.sql(f"DROP TABLE IF EXISTS {name}")
        wh.sql(f"CREATE TABLE {name} (a BIGINT, payload STRING, x BIGINT) PARTITIONED BY "
               f"(ds STRING) {skew}STORED AS PARQUET")
    # the same INSERT OVERWRITE into each, alternating which goes first; medians. One untimed
    # write of each first: the first write of a session also pays for compiling its code.
    writes: dict[str, list[float]] = {"lb": [], "plain": []}
    for name in ("lb", "plain"):
        wh.sql(f"INSERT OVERWRITE TABLE {name} PARTITION (ds) SELECT a, payload, x, ds FROM bench_source")
    for i in range(args.write_repeat):
        for name in (("lb", "plain") if i % 2 == 0 else ("plain", "lb")):
            t = time.perf_counter()
            wh.sql(f"INSERT OVERWRITE TABLE {name} PARTITION (ds) SELECT a, payload, x, ds "
                   "FROM bench_source")
            writes[name].append(time.perf_counter() - t)
    print(f"writes: lb {writes['lb']} plain {writes['plain']}", flush=True)
    plain_dir = wh.catalog.get_table("default", "plain").location
    share = spark.sql("SELECT avg(CAST(x <= 10 AS INT)) FROM bench_source").first()[0]
    rare = spark.sql("SELECT x, count(*) AS n FROM bench_source WHERE x > 100 GROUP BY x "
                     "ORDER BY n, x LIMIT 1").first()["x"]
    # the cached source (about 1 GB at 20,000,000 rows) is freed before the queries: with it
    # in the 2g driver heap, reading a plain partition's 128 MB row groups ran out of memory
    spark.table("bench_source").unpersist(blocking=True)
    # (where, select list): the narrow select reads two 8-byte columns, so a query's fixed cost
    # (planning, Spark's job) is most of its time; the payload one reads the rows' 64-byte
    # payload too, as a SELECT * of the matching rows would
    narrow, wide = "count(*), sum(a)", "count(*), sum(a), max(payload)"
    # (where, select list, the list-bucketing directories that hold the matching rows, by
    # Hive's layout: a skewed value's own directory, any other value in the default one)
    queries = {"skewed x = 3": ("x = 3", narrow, ["x=3"]),
               "skewed x = 3, payload": ("x = 3", wide, ["x=3"]),
               f"rare x = {rare}": (f"x = {rare}", narrow, [LB_DEFAULT_DIR_NAME]),
               f"IN (2, 7, {rare})": (f"x IN (2, 7, {rare})", narrow, ["x=2", "x=7", LB_DEFAULT_DIR_NAME])}
    lb_dir = wh.catalog.get_table("default", "lb").location

    def hp(table: str, where: str, cols: str):
        return lambda: wh.sql(f"SELECT {cols} FROM {table} WHERE {where}").collect()

    def sp(where: str, cols: str):
        return lambda: spark.read.parquet(plain_dir).where(where) \
            .selectExpr(*cols.split(", ")).collect()

    def exact(where: str, cols: str, paths: list[str]):
        # a new DataFrame per run, as for spark: collecting one DataFrame again reuses its
        # first run's shuffle output and reads nothing
        return lambda: spark.read.parquet(*paths).where(where).selectExpr(*cols.split(", ")).collect()

    results: dict[str, dict[str, tuple[float, int]]] = {}
    for label, (where, cols, qualifying) in queries.items():
        files = sorted(f for d in qualifying for f in glob.glob(f"{lb_dir}/ds=*/{d}/*.parquet"))
        readers = {"lb": hp("lb", where, cols), "plain": hp("plain", where, cols),
                   "spark": sp(where, cols), "files": exact(where, cols, files)}
        answers = {name: fn() for name, fn in readers.items()}  # warm-up, and same answer
        assert len({repr(a) for a in answers.values()}) == 1, answers
        dirs = next(line.strip() for line in wh.explain(
            f"SELECT * FROM lb WHERE {where}").splitlines() if "directories=" in line)
        times: dict[str, list[float]] = {n: [] for n in readers}
        read: dict[str, int] = {}
        for i in range(args.repeat):
            names = list(readers) if i % 2 == 0 else list(reversed(readers))
            for name in names:
                before = input_bytes(spark)
                t = time.perf_counter()
                readers[name]()
                times[name].append(time.perf_counter() - t)
                read[name] = input_bytes(spark) - before
        results[label] = {n: (statistics.median(times[n]), read[n]) for n in readers}
        print(f"{label}: {answers['lb'][0][0]:,} rows; lb {dirs}", flush=True)

    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python="
          f"{platform.python_version()} spark={spark.version} master={spark.sparkContext.master}")
    print(f"data: {args.rows:,} rows, {args.days} partitions (ds); {share:.1%} of rows hold "
          f"one of the 10 heaviest x values; runs={args.repeat} (medians)")
    lw, pw = statistics.median(writes["lb"]), statistics.median(writes["plain"])
    print(f"write (INSERT OVERWRITE, median of {args.write_repeat}): lb {lw:.2f}s | plain {pw:.2f}s | "
          f"time lb/plain {lw / pw:.2f}")
    for label, r in results.items():
        (lt, lb), (pt, pb), (st, sb), (ft, fb) = r["lb"], r["plain"], r["spark"], r["files"]
        print(f"{label:<24} lb {lb / 1e6:8.2f} MB {lt:6.2f}s | plain {pb / 1e6:8.2f} MB "
              f"{pt:6.2f}s | spark {sb / 1e6:8.2f} MB {st:6.2f}s | files {fb / 1e6:8.2f} MB {ft:6.2f}s | "
              f"bytes lb/plain {lb / max(pb, 1):.3f} lb/spark {lb / max(sb, 1):.3f} | time lb/plain "
              f"{lt / pt:.2f} lb/spark {lt / st:.2f} lb/files {lt / ft:.2f}")
    wh.close()
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
