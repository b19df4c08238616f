"""Writing a bucketed table: hivepark's INSERT OVERWRITE into a table CLUSTERED BY (k) INTO 16
BUCKETS (Hive's files: one per bucket and partition, each row in the bucket of Hive's Murmur3
hash: for an INT key a Spark expression, for a STRING key (``--key string``) computed in Spark's
Python workers over Arrow batches) against the same INSERT into the same table without buckets,
and against Spark's own bucketed write (``bucketBy``, Spark's hash, files Hive does not read as
buckets).

    .venv/bin/python bench/bucketed_write.py [--rows 4000000] [--days 4] [--repeat 3] [--key int|string]

The default size (4,000,000 rows) takes about two minutes on 2 cores; `--rows` takes more.
Each figure is a median of alternating runs; figures and ratios on the last lines.
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

BUCKETS = 16


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--days", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--key", choices=("int", "string"), default="int", help="the bucket column's type")
    args = ap.parse_args()

    import hivepark

    base = args.dir or tempfile.mkdtemp(prefix="hivepark-bench-bucketed-write-")
    shutil.rmtree(f"{base}/warehouse", ignore_errors=True)
    wh = hivepark.connect(f"{base}/warehouse", conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    spark = wh.spark
    key = args.key.upper()
    wh.sql(f"CREATE TABLE src (k {key}, v STRING, ds STRING) STORED AS PARQUET")
    wh.sql(f"INSERT OVERWRITE TABLE src SELECT CAST(id * 7919 % 200000 AS {key}), concat('payload-', id), "
           f"concat('2024-01-0', CAST(id % {args.days} + 1 AS STRING)) FROM range({args.rows})")
    for name, clause in (("bucketed", f"CLUSTERED BY (k) INTO {BUCKETS} BUCKETS "), ("plain", "")):
        wh.sql(f"CREATE TABLE {name} (k {key}, v STRING) PARTITIONED BY (ds STRING) {clause}STORED AS PARQUET")
    source = spark.read.parquet(f"{base}/warehouse/src")
    spark_dir = f"{base}/spark_bucketed"

    def spark_bucketed() -> None:
        spark.sql("DROP TABLE IF EXISTS spark_bucketed")
        source.write.partitionBy("ds").bucketBy(BUCKETS, "k").format("parquet") \
            .option("path", spark_dir).mode("overwrite").saveAsTable("spark_bucketed")

    writes = {
        "bucketed": lambda: wh.sql("INSERT OVERWRITE TABLE bucketed PARTITION (ds) SELECT k, v, ds FROM src"),
        "plain": lambda: wh.sql("INSERT OVERWRITE TABLE plain PARTITION (ds) SELECT k, v, ds FROM src"),
        "spark": spark_bucketed,
    }
    for w in writes.values():  # warm-up
        w()
    files = sorted(f for d in os.listdir(f"{base}/warehouse/bucketed") if d.startswith("ds=")
                   for f in os.listdir(f"{base}/warehouse/bucketed/{d}") if not f.startswith((".", "_")))
    assert len(files) == args.days * BUCKETS and all(f[6:8] == "_0" for f in files), files[:5]
    counts = {n: wh.sql(f"SELECT count(*) FROM {n}").collect()[0][0] for n in ("bucketed", "plain")}
    assert counts == {"bucketed": args.rows, "plain": args.rows}, counts
    times: dict[str, list[float]] = {n: [] for n in writes}
    for _ in range(args.repeat):
        for name, w in writes.items():
            t = time.perf_counter()
            w()
            times[name].append(time.perf_counter() - t)
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} spark={spark.version} master={spark.sparkContext.master}")
    print(f"{args.rows:,} rows into {args.days} partitions; bucketed: {len(files)} files ({BUCKETS} per partition), "
          f"key {key}")
    med = {n: statistics.median(ts) for n, ts in times.items()}
    for name in writes:
        print(f"{name:8s} median {med[name]:.2f}s  runs {', '.join(f'{t:.2f}' for t in times[name])}")
    print(f"time ratio bucketed/plain: {med['bucketed'] / med['plain']:.2f}  "
          f"bucketed/spark: {med['bucketed'] / med['spark']:.2f}")
    wh.close()
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
