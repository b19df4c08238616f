"""Small statements on a wide table: what a statement costs beyond the data it touches.

    .venv/bin/python bench/small_statements.py [--columns 40] [--rows 10] [--repeat 15] [--skewed 10]

A table of ``--columns`` columns (INT, BIGINT, STRING, DOUBLE, DATE, DECIMAL(12,2) in turn),
partitioned by ``ds``. Each round runs, alternately:

* static: hivepark's ``INSERT INTO w PARTITION (ds='dN') SELECT ... FROM src`` (Parquet) against
  Spark's same statement into a Spark table of the same columns (``USING parquet PARTITIONED BY (ds)``);
* dynamic: ``INSERT OVERWRITE ... PARTITION (ds) SELECT ..., ds FROM src`` (two partitions),
  Spark's with ``spark.sql.sources.partitionOverwriteMode=dynamic``;
* skewed: hivepark's static INSERT into a list-bucketed table of the same columns (``SKEWED BY
  (c0) ON (--skewed values) STORED AS DIRECTORIES``: each row routed to its directory) against
  the static INSERT into the plain table above (issue 15's item 4 for a small statement), and the
  dynamic INSERT into it and into a table ``CLUSTERED BY (c1) INTO 8 BUCKETS`` against the dynamic
  INSERT into the plain table; the same two INSERTs into a table whose skewed values each write
  chooses (``'hivepark.skew.auto.topk'='3'``: the three heaviest values of c0 in each partition,
  found by an aggregation of the rows before they are written);
* text query: hivepark's first query of a TEXTFILE table (Hive's default format, split into its
  columns by Spark expressions) after a commit to it, against the same query of the same table
  STORED AS PARQUET after a commit (the query's plan is made anew after each commit).

each reading ``--rows`` rows. hivepark's work per statement (parse, metastore, the checks before
a write, the commit, the columns' expressions) is what a small statement adds to Spark's own; the
medians, and their ratios, are on the last lines.
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

TYPES = ["INT", "BIGINT", "STRING", "DOUBLE", "DATE", "DECIMAL(12,2)"]
VALUES = {"INT": "CAST(id AS INT)", "BIGINT": "id * 1000003", "STRING": "concat('s', id)",
          "DOUBLE": "id / 7.0", "DATE": "date_add(DATE '2024-01-01', CAST(id AS INT))",
          "DECIMAL(12,2)": "CAST(id / 3 AS DECIMAL(12,2))"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--columns", type=int, default=40)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--skewed", type=int, default=10, help="skewed values of the list-bucketed table")
    args = ap.parse_args()

    import hivepark

    base = tempfile.mkdtemp(prefix="hivepark-bench-small-writes-")
    wh = hivepark.connect(f"{base}/warehouse", conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    spark = wh.spark
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    cols = [(f"c{i}", TYPES[i % len(TYPES)]) for i in range(args.columns)]
    ddl = ", ".join(f"{n} {t}" for n, t in cols)
    names = ", ".join(n for n, _ in cols)
    wh.sql(f"CREATE TABLE src ({ddl}, ds STRING) STORED AS PARQUET")
    wh.sql(f"INSERT OVERWRITE TABLE src SELECT {', '.join(f'{VALUES[t]} AS {n}' for n, t in cols)}, "
           f"concat('p', id % 2) FROM range({args.rows})")
    wh.sql(f"CREATE TABLE w ({ddl}) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    skewed = ", ".join(str(i) for i in range(args.skewed))
    wh.sql(f"CREATE TABLE lbw ({ddl}) PARTITIONED BY (ds STRING) SKEWED BY (c0) ON ({skewed}) "
           "STORED AS DIRECTORIES STORED AS PARQUET")
    wh.sql(f"CREATE TABLE tkw ({ddl}) PARTITIONED BY (ds STRING) SKEWED BY (c0) ON (0) "
           "STORED AS DIRECTORIES STORED AS PARQUET TBLPROPERTIES ('hivepark.skew.auto.topk'='3')")
    wh.sql(f"CREATE TABLE bkw ({ddl}) PARTITIONED BY (ds STRING) CLUSTERED BY (c1) INTO 8 BUCKETS STORED AS PARQUET")
    spark.read.parquet(f"{base}/warehouse/src").createOrReplaceTempView("src_files")
    spark.sql(f"CREATE TABLE sw ({ddl}, ds STRING) USING parquet PARTITIONED BY (ds) LOCATION '{base}/spark_w'")

    for fmt in ("textfile", "parquet"):
        wh.sql(f"CREATE TABLE q_{fmt} ({ddl}) PARTITIONED BY (ds STRING) STORED AS {fmt.upper()}")
        wh.sql(f"INSERT INTO q_{fmt} PARTITION (ds='a') SELECT {names} FROM src")

    def query_after_commit(fmt: str) -> float:
        wh.sql(f"INSERT INTO q_{fmt} PARTITION (ds='b') SELECT {names} FROM src LIMIT 1")  # not timed
        t = time.perf_counter()
        wh.sql(f"SELECT c1, c2 FROM q_{fmt} WHERE ds = 'b'").collect()  # the partition just written
        return time.perf_counter() - t

    rounds = iter(range(10**9))
    runs = {
        "static hivepark": lambda: wh.sql(f"INSERT INTO w PARTITION (ds='d{next(rounds)}') SELECT {names} FROM src"),
        "static spark": lambda: spark.sql(
            f"INSERT INTO sw PARTITION (ds='d{next(rounds)}') SELECT {names} FROM src_files"),
        "skewed hivepark": lambda: wh.sql(f"INSERT INTO lbw PARTITION (ds='d{next(rounds)}') SELECT {names} FROM src"),
        "dynamic hivepark": lambda: wh.sql(f"INSERT OVERWRITE TABLE w PARTITION (ds) SELECT {names}, ds FROM src"),
        "dynamic skewed": lambda: wh.sql(f"INSERT OVERWRITE TABLE lbw PARTITION (ds) SELECT {names}, ds FROM src"),
        "static top-k": lambda: wh.sql(f"INSERT INTO tkw PARTITION (ds='d{next(rounds)}') SELECT {names} FROM src"),
        "dynamic top-k": lambda: wh.sql(f"INSERT OVERWRITE TABLE tkw PARTITION (ds) SELECT {names}, ds FROM src"),
        "dynamic bucketed": lambda: wh.sql(f"INSERT OVERWRITE TABLE bkw PARTITION (ds) SELECT {names}, ds FROM src"),
        "dynamic spark": lambda: spark.sql(f"INSERT OVERWRITE sw PARTITION (ds) SELECT {names}, ds FROM src_files"),
    }
    for run in runs.values():  # warm-up
        run()
    queries = {"text query": "textfile", "parquet query": "parquet"}
    for fmt in queries.values():
        query_after_commit(fmt)
    times: dict[str, list[float]] = {name: [] for name in [*runs, *queries]}
    for _ in range(args.repeat):
        for name, run in runs.items():
            t = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t)
        for name, fmt in queries.items():
            times[name].append(query_after_commit(fmt))
    hive_rows = wh.sql("SELECT count(*) FROM w").collect()[0][0]
    spark_rows = spark.sql("SELECT count(*) FROM sw").collect()[0][0]
    assert hive_rows == spark_rows, (hive_rows, spark_rows)
    lb_rows = wh.sql("SELECT count(*) FROM lbw").collect()[0][0]  # the static rounds' and the last dynamic's
    assert lb_rows == args.rows * (args.repeat + 2), lb_rows
    assert wh.sql("SELECT count(*) FROM tkw").collect()[0][0] == lb_rows
    assert wh.sql("SELECT count(*) FROM bkw").collect()[0][0] == args.rows
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} spark={spark.version} master={spark.sparkContext.master}")
    print(f"{args.columns} columns, {args.rows} rows a statement, {args.repeat} rounds; both tables "
          f"{hive_rows:,} rows; the list-bucketed table {args.skewed} skewed values")
    med = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
    for name in times:
        quartiles = statistics.quantiles([t * 1000 for t in times[name]], n=4)
        print(f"{name:17s} median {med[name]:7.1f} ms  quartiles {quartiles[0]:.1f}-{quartiles[2]:.1f} ms")
    print(f"time ratio static hivepark/spark: {med['static hivepark'] / med['static spark']:.2f}  "
          f"dynamic hivepark/spark: {med['dynamic hivepark'] / med['dynamic spark']:.2f}  "
          f"text/parquet query: {med['text query'] / med['parquet query']:.2f}  "
          f"skewed/plain static hivepark: {med['skewed hivepark'] / med['static hivepark']:.2f}")
    print(f"time ratio dynamic skewed/plain hivepark: {med['dynamic skewed'] / med['dynamic hivepark']:.2f}  "
          f"dynamic bucketed/plain hivepark: {med['dynamic bucketed'] / med['dynamic hivepark']:.2f}  "
          f"static top-k/plain: {med['static top-k'] / med['static hivepark']:.2f}  "
          f"dynamic top-k/plain: {med['dynamic top-k'] / med['dynamic hivepark']:.2f}")
    wh.close()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
