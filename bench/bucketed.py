"""Bucket pruning: a point query on a table Hive bucketed (CLUSTERED BY (k) INTO 16 BUCKETS,
bucketing_version 2), with its files in Hive's layout (one ORC file per bucket and partition,
named 00000b_0, rows placed by Hive's hash, not sorted by k, so ORC's statistics cannot skip).

    .venv/bin/python bench/bucketed.py [--rows 8000000] [--days 4] [--repeat 5]

The default size (8,000,000 rows) takes about 50 seconds on 2 cores; `--rows` takes more.

Three readers of the same files, each a median of alternating runs:
  pruned    hivepark, the table as Hive 3 made it: `k = v` reads one bucket's files (EXPLAIN buckets=1/16)
  whole     hivepark, the same table without bucketing_version 2 (every file read)
  spark     Spark reading the files itself with the same filter (ORC predicate pushdown)
Bytes read are what the Spark JVM read (/proc/<pid>/io rchar). Figures and ratios on the last lines.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

from list_bucketing import input_bytes  # noqa: E402  (bench/ is this script's directory)

BUCKETS = 16
KEYS = 200_000


def write_hive_files(root: str, rows: int, days: int) -> None:
    """Hive's layout: per day one ORC file per bucket, each row in the file of its key's bucket."""
    import pyarrow as pa
    from pyarrow import orc

    from hivepark.catalog.buckets import hive_bucket
    from hivepark.types import HiveType

    int_type = [HiveType.parse("int")]
    bucket_of = [hive_bucket([k], int_type, BUCKETS) for k in range(KEYS)]
    rng = random.Random(7)
    per_day = rows // days
    for d in range(days):
        keys = [rng.randrange(KEYS) for _ in range(per_day)]
        by_bucket: list[list[int]] = [[] for _ in range(BUCKETS)]
        for k in keys:
            by_bucket[bucket_of[k]].append(k)
        os.makedirs(f"{root}/ds=2024-01-0{d + 1}")
        for b, ks in enumerate(by_bucket):
            payload = [f"payload-{k}-{'x' * (k % 40)}" for k in ks]
            orc.write_table(pa.table({"k": pa.array(ks, pa.int32()), "v": payload}),
                            f"{root}/ds=2024-01-0{d + 1}/{b:06d}_0")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=8_000_000)
    ap.add_argument("--days", type=int, default=4, choices=range(1, 10))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()

    import hivepark

    base = args.dir or tempfile.mkdtemp(prefix="hivepark-bench-bucketed-")
    root = f"{base}/hive_files"
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(f"{base}/same_files", ignore_errors=True)
    t0 = time.perf_counter()
    write_hive_files(root, args.rows, args.days)
    print(f"wrote {args.rows:,} rows in {args.days} days x {BUCKETS} buckets: {time.perf_counter() - t0:.1f}s")
    wh = hivepark.connect(f"{base}/warehouse")
    spark = wh.spark
    shutil.copytree(root, f"{base}/same_files", copy_function=os.link)  # a table owns its directory: links
    for name, location, props in (("pruned", root, "TBLPROPERTIES ('bucketing_version'='2')"),
                                  ("whole", f"{base}/same_files", "")):
        wh.sql(f"DROP TABLE IF EXISTS {name}")
        wh.sql(f"CREATE EXTERNAL TABLE {name} (k INT, v STRING) PARTITIONED BY (ds STRING) CLUSTERED BY (k) "
               f"INTO {BUCKETS} BUCKETS STORED AS ORC LOCATION '{location}' {props}")
        wh.sql(f"MSCK REPAIR TABLE {name}")
    plain = spark.read.schema("k INT, v STRING, ds STRING").option("basePath", root).orc(root)
    plain.createOrReplaceTempView("plain")
    key = 4242
    where = f"k = {key}"
    print("\n".join(r[0] for r in wh.sql(f"EXPLAIN SELECT count(*) FROM pruned WHERE {where}").collect()
                    if "buckets=" in r[0] or "partitions=" in r[0]))
    queries = {
        "pruned": lambda: wh.sql(f"SELECT count(*), sum(length(v)) FROM pruned WHERE {where}").collect(),
        "whole": lambda: wh.sql(f"SELECT count(*), sum(length(v)) FROM whole WHERE {where}").collect(),
        "spark": lambda: spark.sql(f"SELECT count(*), sum(length(v)) FROM plain WHERE {where}").collect(),
    }
    answers = {name: q() for name, q in queries.items()}  # warm-up, and the rows must agree
    assert answers["pruned"] == answers["whole"] == answers["spark"], answers
    times: dict[str, list[float]] = {n: [] for n in queries}
    read: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, q in queries.items():
            before = input_bytes(spark)
            t = time.perf_counter()
            q()
            times[name].append(time.perf_counter() - t)
            read[name] = input_bytes(spark) - before
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} spark={spark.version} master={spark.sparkContext.master}")
    print(f"rows matching {where}: {answers['pruned'][0][0]:,}")
    med = {n: statistics.median(ts) for n, ts in times.items()}
    for name in queries:
        print(f"{name:7s} median {med[name]:.3f}s  read {read[name] / 1e6:.1f} MB")
    print(f"time ratio pruned/whole: {med['pruned'] / med['whole']:.2f}  pruned/spark: "
          f"{med['pruned'] / med['spark']:.2f}")
    print(f"bytes ratio pruned/whole: {read['pruned'] / max(read['whole'], 1):.3f}  pruned/spark: "
          f"{read['pruned'] / max(read['spark'], 1):.3f}")
    wh.close()
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
