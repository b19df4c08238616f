"""Maintenance statements on large partitioned tables: what a retention or repair job waits for.

    .venv/bin/python bench/maintenance.py                     # 10,000 partitions (a few minutes)
    .venv/bin/python bench/maintenance.py --large             # 20,000 (drop, MSCK) and 40,000 (SHOW)
    .venv/bin/python bench/maintenance.py --metastore postgresql+psycopg://u:p@127.0.0.1:5432/db
    .venv/bin/python bench/maintenance.py --only one --no-views     # as the CLI runs: no Spark views
    PYTHONPATH=/other/checkout/src .venv/bin/python bench/maintenance.py   # that checkout's code

A managed Parquet table ``t (v string) PARTITIONED BY (ds string)`` gets ``--partitions``
directories, one small file each, registered by ``MSCK REPAIR TABLE`` (timed), with a view
``t_v`` over it (so each statement that changes ``t`` also brings the Spark views of the table
and the view up to date, as every statement does). Then, each a median of ``--repeat`` runs:

* ``MSCK REPAIR TABLE`` of all the directories, and ``MSCK`` with nothing to add;
* ``ALTER TABLE t DROP PARTITION (ds < ...)`` of half of the partitions (a retention job), of
  this table and of one partitioned by ``(region, ds)`` (4 regions);
* ``SHOW PARTITIONS t``, ``SHOW PARTITIONS t WHERE ds >= ...`` (a tenth of them) and
  ``DESCRIBE FORMATTED t PARTITION (...)`` of a table of ``--show-partitions``;
* ``ANALYZE TABLE t PARTITION (...) COMPUTE STATISTICS``, ``ALTER TABLE t PARTITION (...) RENAME
  TO PARTITION (...)``, ``TRUNCATE TABLE t PARTITION (...)``, ``ALTER TABLE t ADD PARTITION`` of
  one empty partition, ``INSERT INTO`` a new partition and ``INSERT OVERWRITE`` of one: statements
  on one partition of the large table (each brings the table's Spark view up to date), and a
  whole-table ``SELECT count(*)`` of a table of as many partitions after an INSERT of one, against
  plain Spark's count of a new ``spark.read.parquet`` of its directory (how a Spark job sees new files);
* ``ALTER TABLE t ADD PARTITION`` of 1,000 specs in one statement, and their DROP by name;
* ``ALTER TABLE t RENAME TO u`` (and back) with every partition;
* ``INSERT OVERWRITE TABLE d PARTITION (ds) SELECT ...`` writing ``--dynamic`` partitions, against
  Spark's own same INSERT into a Spark table (``partitionOverwriteMode=dynamic``);
* ``connect()`` to a warehouse whose default database holds ``--tables`` tables.

Each line names the statement, its median in seconds, and the work it does.
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
from collections.abc import Callable

if "PYTHONPATH" not in os.environ:  # PYTHONPATH=/other/checkout/src measures that code
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

START = datetime.date(1990, 1, 1)


def day(i: int) -> str:
    return (START + datetime.timedelta(days=i)).isoformat()


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def report(name: str, times: list[float], work: str) -> None:
    print(f"{name:52s} median {statistics.median(times):8.3f} s  (n={len(times)}, "
          f"min {min(times):.3f}, max {max(times):.3f})  {work}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--show-partitions", type=int, default=None,
                    help="partitions of the table SHOW PARTITIONS lists (default --partitions)")
    ap.add_argument("--large", action="store_true", help="20,000 partitions, SHOW at 40,000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dynamic", type=int, default=3_000, help="partitions of the dynamic INSERT")
    ap.add_argument("--tables", type=int, default=200, help="tables of the connect() warehouse")
    ap.add_argument("--metastore", default=None, help="a SQLAlchemy URL (default a SQLite file)")
    ap.add_argument("--no-views", action="store_true",
                    help="hivepark.spark.views=false (as the CLI runs): no Spark view of each table is kept")
    ap.add_argument("--only", default=None,
                    help="comma-separated sections: msck (with the DROPs), one, show, add, rename, insert, connect")
    args = ap.parse_args()
    if args.large:
        args.partitions = 20_000
        args.show_partitions = args.show_partitions or 40_000
    n = args.partitions
    only = set(args.only.split(",")) if args.only else None

    def want(section: str) -> bool:
        return only is None or section in only

    import hivepark

    base = tempfile.mkdtemp(prefix="hivepark-bench-maintenance-")
    conf = {"hive.exec.dynamic.partition.mode": "nonstrict",
            "hive.exec.max.dynamic.partitions": "100000",
            "hive.exec.max.dynamic.partitions.pernode": "100000",
            "spark.master": "local[1]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    if args.no_views:
        conf["hivepark.spark.views"] = "false"
    metastore = args.metastore
    wh = hivepark.connect(f"{base}/warehouse", metastore=metastore, conf=conf)
    spark = wh.spark
    db = "bench"
    wh.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    wh.sql(f"CREATE DATABASE {db}")
    wh.sql(f"USE {db}")
    wh.sql("CREATE TABLE seed (v STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO seed VALUES ('x')")
    seed = f"{base}/seed.parquet"  # one file of one row, copied into every partition
    shutil.copyfile(next(e.path for e in os.scandir(f"{base}/warehouse/{db}.db/seed")
                         if not e.name.startswith((".", "_"))), seed)
    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python={platform.python_version()} "
          f"spark={spark.version} master={spark.sparkContext.master} hivepark={hivepark.__file__} metastore="
          f"{'sqlite' if metastore is None else metastore.split(':', 1)[0]}", flush=True)
    loc = f"{base}/warehouse/{db}.db"

    def fresh_table(table: str, count: int, view: bool = True) -> float:
        """``table`` with ``count`` partitions registered by MSCK; the seconds MSCK took."""
        wh.sql(f"DROP VIEW IF EXISTS {table}_v")
        wh.sql(f"DROP TABLE IF EXISTS {table}")
        wh.sql(f"CREATE TABLE {table} (v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        if view:
            wh.sql(f"CREATE VIEW {table}_v AS SELECT v, ds FROM {table} WHERE v IS NOT NULL")
        for i in range(count):
            os.makedirs(f"{loc}/{table}/ds={day(i)}")
            shutil.copyfile(seed, f"{loc}/{table}/ds={day(i)}/part-00000.parquet")
        return timed(lambda: wh.sql(f"MSCK REPAIR TABLE {table}"))

    def rm_floor(count: int) -> float:
        """The file system's own cost of what a retention DROP deletes: ``count`` directories of
        one file each, removed by ``shutil.rmtree`` (no metastore, no Spark)."""
        root = f"{base}/floor"
        for i in range(count):
            os.makedirs(f"{root}/ds={day(i)}")
            shutil.copyfile(seed, f"{root}/ds={day(i)}/part-00000.parquet")
        return timed(lambda: [shutil.rmtree(f"{root}/ds={day(i)}") for i in range(count)])

    ratios: list[str] = []

    def drop_inner_key(count: int) -> float:
        """A (region, ds) table of ``count`` partitions (4 regions); seconds to drop half by ds."""
        wh.sql("DROP TABLE IF EXISTS rd")
        wh.sql("CREATE TABLE rd (v STRING) PARTITIONED BY (region STRING, ds STRING) STORED AS PARQUET")
        for i in range(count):
            d = f"{loc}/rd/region=r{i % 4}/ds={day(i // 4)}"
            os.makedirs(d)
            shutil.copyfile(seed, f"{d}/part-00000.parquet")
        wh.sql("MSCK REPAIR TABLE rd")
        took = timed(lambda: wh.sql(f"ALTER TABLE rd DROP PARTITION (ds < '{day(count // 8)}')"))
        assert wh.sql("SHOW PARTITIONS rd").count() == count - count // 2
        assert sorted(os.listdir(f"{loc}/rd")) == [f"region=r{i}" for i in range(4)]
        wh.sql("DROP TABLE rd")
        return took

    if want("msck"):
        msck, drop, sync, nested, floor = [], [], [], [], []
        for _ in range(args.repeat):
            floor.append(rm_floor(n // 2))
            msck.append(fresh_table("t", n))
            sync.append(timed(wh.refresh_views))
            drop.append(timed(lambda: wh.sql(f"ALTER TABLE t DROP PARTITION (ds < '{day(n // 2)}')")))
            assert wh.sql("SHOW PARTITIONS t").count() == n - n // 2
            assert len(os.listdir(f"{loc}/t")) == n - n // 2
            nested.append(drop_inner_key(n))
        report("MSCK REPAIR TABLE (adds all)", msck, f"{n:,} directories, 1 file each, a view over it")
        report("refresh_views() with nothing changed", sync, f"{n:,} partitions")
        report("DROP PARTITION (ds < half), PARTITIONED BY (ds)", drop, f"{n // 2:,} of {n:,} partitions, managed")
        report("DROP PARTITION (ds < half), (region, ds)", nested,
               f"{n // 2:,} of {n:,} partitions in 4 region= directories, managed")
        again = [timed(lambda: wh.sql("MSCK REPAIR TABLE t")) for _ in range(args.repeat)]
        report("MSCK REPAIR TABLE (nothing to add)", again, f"{n - n // 2:,} partitions")
        report("rm of the same directories (shutil.rmtree)", floor, f"{n // 2:,} directories of 1 file")
        for what, times in (("(ds)", drop), ("(region, ds)", nested)):
            ratios.append(f"time ratio DROP PARTITION {what} / rm of its directories: "
                          f"{statistics.median(times) / statistics.median(floor):.2f}")

    if want("show"):
        shown = args.show_partitions or n
        fresh_table("s", shown, view=False)
        report("SHOW PARTITIONS t", [timed(lambda: wh.sql("SHOW PARTITIONS s").collect())
                                     for _ in range(args.repeat)], f"{shown:,} partitions")
        cut = day(shown - shown // 10)
        report("SHOW PARTITIONS t WHERE ds >= ...", [timed(lambda: wh.sql(
            f"SHOW PARTITIONS s WHERE ds >= '{cut}'").collect()) for _ in range(args.repeat)],
            f"{shown // 10:,} of {shown:,}")
        report("DESCRIBE FORMATTED t PARTITION (...)", [timed(lambda: wh.sql(
            f"DESCRIBE FORMATTED s PARTITION (ds='{day(7)}')").collect()) for _ in range(args.repeat)],
            f"1 of {shown:,}")
        wh.sql("DROP TABLE s")

    if want("one") or want("add") or want("rename"):
        fresh_table("t", n)
    if want("one"):
        report("ANALYZE TABLE t PARTITION (...) COMPUTE STATISTICS", [timed(lambda: wh.sql(
            f"ANALYZE TABLE t PARTITION (ds='{day(8)}') COMPUTE STATISTICS")) for _ in range(args.repeat)],
            f"1 of {n:,}, 1 file")
        report("ALTER TABLE ADD PARTITION (one, empty)", [timed(lambda i=i: wh.sql(
            f"ALTER TABLE t ADD PARTITION (ds='x{i}')")) for i in range(args.repeat)], f"to {n:,} partitions")
        report("ALTER TABLE PARTITION RENAME TO PARTITION", [timed(lambda i=i: wh.sql(
            f"ALTER TABLE t PARTITION (ds='{day(i)}') RENAME TO PARTITION (ds='r{i}')"))
            for i in range(args.repeat)], f"1 of {n:,}, 1 file")
        report("TRUNCATE TABLE t PARTITION (ds='...')", [timed(lambda i=i: wh.sql(
            f"TRUNCATE TABLE t PARTITION (ds='{day(20 + i)}')")) for i in range(args.repeat)], f"1 of {n:,}, 1 file")
        report("INSERT INTO t PARTITION (ds='...') (a new one)", [timed(lambda i=i: wh.sql(
            f"INSERT INTO t PARTITION (ds='n{i}') VALUES ('x')")) for i in range(args.repeat)], f"to {n:,} partitions")
        report("INSERT OVERWRITE TABLE t PARTITION (ds='...')", [timed(lambda i=i: wh.sql(
            f"INSERT OVERWRITE TABLE t PARTITION (ds='{day(40 + i)}') VALUES ('y')")) for i in range(args.repeat)],
            f"1 of {n:,}, 1 file")
        plans, after, reads, fresh = [], [], [], []
        fresh_table("q", n, view=False)  # every partition's files recorded (none ADDed empty)
        wh.sql("SELECT count(*) FROM q").collect()  # hivepark's whole-table DataFrame of q, as a job had it
        for i in range(args.repeat):
            wh.sql(f"INSERT INTO q PARTITION (ds='{day(n + i)}') VALUES ('z')")
            t0 = time.perf_counter()
            df = wh.sql("SELECT count(*) FROM q")
            plans.append(time.perf_counter() - t0)
            df.collect()
            after.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            df = spark.read.parquet(f"{loc}/q")
            reads.append(time.perf_counter() - t0)
            df.count()
            fresh.append(time.perf_counter() - t0)
        wh.sql("DROP TABLE q")
        report("wh.sql(SELECT count(*) FROM q) after an INSERT", plans, f"{n:,} partitions: to its DataFrame")
        report("spark.read.parquet(q), a new DataFrame", reads, f"{n:,} partitions: to its DataFrame")
        report("the same with its count", after, "hivepark")
        report("the same with its count", fresh, "plain Spark")
        ratios.append("time ratio whole-table query after a commit hivepark/spark: to the DataFrame "
                      f"{statistics.median(plans) / statistics.median(reads):.2f}, with the count "
                      f"{statistics.median(after) / statistics.median(fresh):.2f}")
    if want("add"):
        adds, drops = [], []
        for r in range(args.repeat):
            specs = [f"PARTITION (ds='a{r}-{i:05d}')" for i in range(1000)]
            adds.append(timed(lambda specs=specs: wh.sql(f"ALTER TABLE t ADD {' '.join(specs)}")))
            drops.append(timed(lambda specs=specs: wh.sql(f"ALTER TABLE t DROP {', '.join(specs)}")))
        report("ALTER TABLE ADD PARTITION x 1,000", adds, f"to {n:,} partitions")
        report("ALTER TABLE DROP PARTITION x 1,000 (by name)", drops, f"of {n + 1000:,} partitions")
    if want("rename"):
        rn = []
        for _ in range(args.repeat):
            rn.append(timed(lambda: wh.sql("ALTER TABLE t RENAME TO u")))
            rn.append(timed(lambda: wh.sql("ALTER TABLE u RENAME TO t")))
        report("ALTER TABLE t RENAME TO u", rn, f"{wh.sql('SHOW PARTITIONS t').count():,} partitions, managed")

    if want("insert"):
        k = args.dynamic
        spark.range(k).selectExpr("concat('v', id) AS v", f"CAST(date_add(DATE '{START}', CAST(id AS INT)) "
                                  "AS STRING) AS ds").write.parquet(f"{base}/src")
        spark.read.parquet(f"{base}/src").createOrReplaceTempView("src_files")
        wh.sql(f"CREATE EXTERNAL TABLE src (v STRING, ds STRING) STORED AS PARQUET LOCATION '{base}/src'")
        wh.sql("CREATE TABLE d (v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        spark.sql(f"CREATE TABLE sw (v STRING, ds STRING) USING parquet PARTITIONED BY (ds) "
                  f"LOCATION '{base}/spark_w'")
        hp, sp = [], []
        for _ in range(args.repeat):
            hp.append(timed(lambda: wh.sql("INSERT OVERWRITE TABLE d PARTITION (ds) SELECT v, ds FROM src")))
            sp.append(timed(lambda: spark.sql("INSERT OVERWRITE sw PARTITION (ds) SELECT v, ds FROM src_files")))
        assert wh.sql("SELECT count(*) FROM d").collect()[0][0] == k
        report("INSERT OVERWRITE PARTITION (ds) hivepark", hp, f"{k:,} dynamic partitions")
        report("INSERT OVERWRITE PARTITION (ds) spark", sp, f"{k:,} dynamic partitions")
        ratios.append(f"time ratio dynamic insert hivepark/spark: {statistics.median(hp) / statistics.median(sp):.2f}")
        spark.sql("DROP TABLE sw")

    wh.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    wh.close()

    if want("connect"):
        # another warehouse: its default database (the one connect() makes Spark views of)
        # holds --tables tables of 3 partitions, 1 file each
        other = hivepark.connect(f"{base}/many", conf=conf)
        for i in range(args.tables):
            other.sql(f"CREATE TABLE m{i} (v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
            for d in ("a", "b", "c"):
                os.makedirs(f"{base}/many/m{i}/ds={d}")
                shutil.copyfile(seed, f"{base}/many/m{i}/ds={d}/part-00000.parquet")
            other.sql(f"MSCK REPAIR TABLE m{i}")
        other.close()
        conns = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            w2 = hivepark.connect(f"{base}/many", conf=conf)
            conns.append(time.perf_counter() - t0)
            assert w2.spark.sql(f"SELECT count(*) FROM m{args.tables - 1}").first()[0] == 3
            w2.close()
        report("connect() (Spark views of every table)", conns, f"{args.tables} tables, 3 partitions each")
    shutil.rmtree(base, ignore_errors=True)
    for line in ratios:  # the last lines: each statement against the work it cannot avoid, or Spark's
        print(line)


if __name__ == "__main__":
    main()
