"""Iceberg tables read through hivepark's storage handler (issue 11).

Writes ``--rows`` rows (default 2,000,000) into an Iceberg table partitioned by day (60 days,
``--writes`` INSERTs, so each day has several files whose ``id`` ranges do not overlap), then
runs four queries three ways, alternating, ``--repeat`` times:

* hivepark: pyiceberg plans the files with the pushed filter, Spark reads only those;
* pyiceberg alone: ``table.scan(row_filter).to_arrow()`` (its own reader, in this process);
* Spark over every data file of the snapshot (what a pip-installed PySpark can do without
  Iceberg's runtime jar: read the listed Parquet files and filter).

Prints the machine, per query the files hivepark read out of the snapshot's and each side's
median, and the ratios on the last lines.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

QUERIES = [
    ("one day", "day = DATE '2026-01-17'"),
    ("one day, id range", "day = DATE '2026-01-17' AND id >= {lo} AND id < {hi}"),
    ("id range (stats)", "id >= {lo} AND id < {hi}"),
    ("a week of days", "day BETWEEN DATE '2026-01-10' AND DATE '2026-01-16'"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--writes", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan, LessThanOrEqual
    from pyspark.sql import functions as F

    import hivepark
    from hivepark.exec.session import get_or_create_spark

    spark = get_or_create_spark("local[2]")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    root = tempfile.mkdtemp(prefix="hivepark-iceberg-bench-")
    try:
        wh = hivepark.connect(f"{root}/warehouse", spark=spark)
        n, per = args.rows, args.rows // args.writes
        print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
              f"python={platform.python_version()} spark={spark.version} rows={n:,} writes={args.writes}")
        wh.sql("CREATE TABLE events (id BIGINT, kind STRING, amount DOUBLE) PARTITIONED BY (day DATE) "
               "STORED BY ICEBERG")
        start = time.perf_counter()
        for w in range(args.writes):
            wh.sql(f"INSERT INTO events SELECT id, concat('k', id % 17), id * 0.5, "
                   f"date_add(DATE '2026-01-01', CAST(id % 60 AS INT)) FROM range({w * per}, {(w + 1) * per})")
        print(f"write: {time.perf_counter() - start:.1f}s for {args.writes} INSERTs")
        cat = SqlCatalog("hivepark", uri=wh.catalog.url, warehouse="file://" + wh.location)
        itbl = cat.load_table(("default", "events"))
        every = [t.file.file_path for t in itbl.scan().plan_files()]
        plain = spark.read.parquet(*every)
        lo, hi = per + per // 10, per + per // 10 + 5000  # inside the second write's ids
        def iceberg_filter(label: str):
            day = datetime.date(2026, 1, 17)
            ids = And(GreaterThanOrEqual("id", lo), LessThan("id", hi))
            return {"one day": EqualTo("day", day), "one day, id range": And(EqualTo("day", day), ids),
                    "id range (stats)": ids,
                    "a week of days": And(GreaterThanOrEqual("day", datetime.date(2026, 1, 10)),
                                          LessThanOrEqual("day", datetime.date(2026, 1, 16)))}[label]

        ratios = []
        for label, where in QUERIES:
            cond = where.format(lo=lo, hi=hi)
            q = f"SELECT kind, count(*) AS n, sum(amount) AS s FROM events WHERE {cond} GROUP BY kind"
            plan = wh.explain(q)
            files = plan.split("files=")[1].split()[0]
            times: dict[str, list[float]] = {"hivepark": [], "pyiceberg": [], "spark_all_files": []}
            results = {}
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                results["hivepark"] = sorted(tuple(r) for r in wh.sql(q).collect())
                times["hivepark"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                arrow = itbl.scan(row_filter=iceberg_filter(label), selected_fields=("kind", "amount")).to_arrow()
                grouped = arrow.group_by("kind").aggregate([("amount", "count"), ("amount", "sum")])
                times["pyiceberg"].append(time.perf_counter() - t0)
                results["pyiceberg"] = grouped.num_rows
                t0 = time.perf_counter()
                results["spark"] = sorted(tuple(r) for r in plain.where(cond).groupBy("kind").agg(
                    F.count("*").alias("n"), F.sum("amount").alias("s")).collect())
                times["spark_all_files"].append(time.perf_counter() - t0)
            med = {k: statistics.median(v) for k, v in times.items()}
            same = [(r[0], r[1], round(r[2], 3)) for r in results["hivepark"]] == \
                [(r[0], r[1], round(r[2], 3)) for r in results["spark"]]
            print(f"{label:20s} files={files:>9s} hivepark={med['hivepark']:.3f}s pyiceberg={med['pyiceberg']:.3f}s "
                  f"spark_all_files={med['spark_all_files']:.3f}s same_rows={same}")
            ratios.append((label, files, med))
        for label, files, med in ratios:
            print(f"ratio {label:20s} files={files:>9s} hivepark/spark_all_files="
                  f"{med['hivepark'] / med['spark_all_files']:.2f} hivepark/pyiceberg="
                  f"{med['hivepark'] / med['pyiceberg']:.2f}")
        wh.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
