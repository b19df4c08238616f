"""Dynamic partition insert: hivepark vs Spark's own partitionBy write, same data, same session.

    .venv/bin/python bench/dynamic_insert.py [--rows 5000000] [--days 84] [--repeat 3]

hivepark: INSERT OVERWRITE TABLE t PARTITION (ds, hr) SELECT ... (pre-flight limit check,
shuffle by partition, one file per partition, atomic commit).
Spark: df.write.partitionBy("ds", "hr").mode("overwrite") with
spark.sql.sources.partitionOverwriteMode=dynamic.
Runs alternate; medians of wall time; files created by each; ratios on the last lines.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))


def count_files(root: str) -> int:
    n = 0
    for _dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
        n += sum(1 for f in filenames if not f.startswith((".", "_")))
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--days", type=int, default=84, help="partitions = days x 24 hours")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()

    import hivepark
    from hivepark.exec.session import get_or_create_spark

    root = args.dir or tempfile.mkdtemp(prefix="hivepark-bench-dp-")
    spark = get_or_create_spark()
    parts = args.days * 24
    wh = hivepark.connect(os.path.join(root, "warehouse"), spark=spark, conf={
        "hive.exec.dynamic.partition.mode": "nonstrict",
        "hive.exec.max.dynamic.partitions": str(parts + 1)})
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    src = spark.range(args.rows).selectExpr(
        "id", "concat('user_', cast(id * 7919 % 100000 as string)) AS user",
        "cast(id % 1000 as double) / 10 AS amount",
        f"date_format(date_add(DATE'2024-01-01', cast(id % {args.days} as int)), 'yyyy-MM-dd') AS ds",
        f"cast((id div {args.days}) % 24 as int) AS hr")
    src.createOrReplaceTempView("bench_source")
    wh.sql("DROP TABLE IF EXISTS events")
    wh.sql("CREATE TABLE events (id BIGINT, user STRING, amount DOUBLE) "
           "PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    spark_dir = os.path.join(root, "spark_events")
    events_dir = wh.catalog.get_table("default", "events").location

    def run_hivepark() -> float:
        t = time.perf_counter()
        wh.sql("INSERT OVERWRITE TABLE events PARTITION (ds, hr) "
               "SELECT id, user, amount, ds, hr FROM bench_source")
        return time.perf_counter() - t

    def run_spark() -> float:
        t = time.perf_counter()
        src.write.partitionBy("ds", "hr").mode("overwrite").parquet(spark_dir)
        return time.perf_counter() - t

    run_hivepark()  # warm-up: JIT, first file creation
    run_spark()
    hp, sp = [], []
    for i in range(args.repeat):
        order = (run_hivepark, run_spark) if i % 2 == 0 else (run_spark, run_hivepark)
        for fn in order:
            (hp if fn is run_hivepark else sp).append(fn())
        print(f"run {i + 1}: hivepark {hp[-1]:.2f}s  spark {sp[-1]:.2f}s", flush=True)
    hp_files, sp_files = count_files(events_dir), count_files(spark_dir)
    n_parts = wh.catalog.count_partitions(wh.catalog.get_table("default", "events"))
    same = wh.table("events").count() == spark.read.parquet(spark_dir).count() == args.rows
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} spark={spark.version} master={spark.sparkContext.master}")
    print(f"data: {args.rows:,} rows into {parts:,} (ds, hr) partitions; runs={args.repeat}; "
          f"row counts equal: {same}")
    print(f"partitions registered by hivepark: {n_parts:,}")
    print(f"hivepark median {statistics.median(hp):.2f}s, files {hp_files:,}")
    print(f"spark    median {statistics.median(sp):.2f}s, files {sp_files:,}")
    print(f"time ratio hivepark/spark: {statistics.median(hp) / statistics.median(sp):.2f}")
    print(f"files ratio hivepark/spark: {hp_files / max(1, sp_files):.3f}; "
          f"hivepark files per partition: {hp_files / max(1, n_parts):.2f}")
    wh.close()
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
