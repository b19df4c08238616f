"""Queries of partitions whose files the metastore does not record (made by ADD PARTITION over
files another tool wrote: each is listed when read), against a copy of them registered by MSCK
REPAIR TABLE (which records each partition's files) and against Spark's own warm DataFrame over
the listed table's directory.

    .venv/bin/python bench/listed_reads.py [--partitions 2000] [--repeat 5]

Two queries, every partition (``count(*)``) and about half of them (``ds >= '5'``), each run
``--repeat`` times on each side after two rounds of warm-up, the sides in a different order each
round. Before 2026-11-29 (night) such a table never had a whole-table frame (exec/scan.TableFrames):
each query handed Spark its directories and Spark built a file index over them (a parallel listing
job beyond 32 directories); now the driver lists them (one call per directory, the files of
statements in flight left out) and the frame is reused, patched where files were dropped in. Last,
the look at the journals a directory handed to Spark costs (commit.journals_seen), measured alone.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import hivepark
    from hivepark.storage.commit import journals_seen

    n = args.partitions
    base = tempfile.mkdtemp(prefix="hivepark-bench-listed-")
    wh = hivepark.connect(f"{base}/warehouse")
    spark = wh.spark
    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python={platform.python_version()} "
          f"spark={spark.version} master={spark.sparkContext.master} hivepark={hivepark.__file__}", flush=True)
    rows = spark.range(n * 20).selectExpr("CAST(id AS INT) AS k", f"CAST(id % {n} AS STRING) AS ds")
    for table in ("listed", "recorded"):  # the same rows in the same kind of files, written by another tool
        rows.repartition(n, "ds").write.partitionBy("ds").parquet(f"{base}/warehouse/{table}")
        wh.sql(f"CREATE TABLE {table} (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    for i in range(0, n, 500):
        wh.sql("ALTER TABLE listed ADD " + " ".join(f"PARTITION (ds='{v}')" for v in range(i, min(n, i + 500))))
    wh.sql("MSCK REPAIR TABLE recorded")  # registers each partition with its files
    spark.read.schema("k int, ds string").parquet(f"{base}/warehouse/listed").createOrReplaceTempView("warm")
    sides = {"hivepark, listed partitions": (wh.sql, "listed"),
             "hivepark, recorded partitions": (wh.sql, "recorded"),
             "spark-warm (spark.read DataFrame)": (spark.sql, "warm")}
    queries = {"every partition": "SELECT count(*), sum(k) FROM {t}",
               "about half": "SELECT count(*), sum(k) FROM {t} WHERE ds >= '5'"}
    for qname, q in queries.items():
        times: dict[str, list[float]] = {s: [] for s in sides}
        answers = set()
        for i in range(args.repeat + 2):
            order = list(sides.items())
            order = order[i % len(order):] + order[:i % len(order)]
            for name, (run, table) in order:
                t0 = time.perf_counter()
                answers.add(tuple(run(q.format(t=table)).collect()[0]))
                if i >= 2:  # two rounds of warm-up
                    times[name].append(time.perf_counter() - t0)
        assert len(answers) == 1, answers  # the three sides read the same rows
        med = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
        for name, m in med.items():
            print(f"{qname} ({n} partitions), {name}: median {m:.1f} ms over {args.repeat}")
        listed, recorded, warm = med.values()
        print(f"{qname}: listed/spark-warm {listed / warm:.2f}  recorded/spark-warm {recorded / warm:.2f}  "
              f"listed/recorded {listed / recorded:.2f}")
    looks = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for _ in range(100):
            journals_seen()
        looks.append((time.perf_counter() - t0) / 100)
    print(f"the look at the journals after Spark lists a directory (commit.journals_seen): median "
          f"{statistics.median(looks) * 1e6:.1f} us")
    wh.close()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
