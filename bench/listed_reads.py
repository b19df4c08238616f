"""What a query of directories the metastore records no files for (partitions made by MSCK
REPAIR TABLE or ADD PARTITION) pays for the look at the journals after Spark listed them
(exec/scan._Flight.moved: a statement beginning between the reader's first look and Spark's
listing is never read).

    .venv/bin/python bench/listed_reads.py [--partitions 200] [--repeat 15]

A table of ``--partitions`` partitions, one Parquet file each, registered by MSCK REPAIR TABLE (so
each is read by its directory). Each round runs ``SELECT count(*) FROM t`` (planned and run) with
the look after the listing and without it (``_Flight.moved`` made to say no), each first in every
other round; the
medians and their ratio are on the last lines, then the cost of the look itself (what the check
adds: one listing of the journal directory), measured alone. No statement is in flight.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()

    import hivepark
    from hivepark.exec import scan
    from hivepark.storage.commit import journals_seen

    base = tempfile.mkdtemp(prefix="hivepark-bench-listed-")
    wh = hivepark.connect(f"{base}/warehouse")
    spark = wh.spark
    spark.range(args.partitions).selectExpr("CAST(id AS INT) AS k", "CAST(id AS STRING) AS ds") \
        .repartition(args.partitions, "ds").write.partitionBy("ds").parquet(f"{base}/warehouse/t")
    wh.sql("CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("MSCK REPAIR TABLE t")
    real = scan._Flight.moved
    times: dict[str, list[float]] = {"with the look after the listing": [], "without it": []}
    for i in range(args.repeat + 2):
        sides = [("with the look after the listing", real), ("without it", lambda self: False)]
        for name, moved in sides if i % 2 else sides[::-1]:  # each first in every other round
            scan._Flight.moved = moved
            t0 = time.perf_counter()
            n = wh.sql("SELECT count(*) FROM t").collect()[0][0]
            if i >= 2:  # two rounds of warm-up
                times[name].append(time.perf_counter() - t0)
            assert n == args.partitions
    scan._Flight.moved = real
    looks = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for _ in range(100):
            journals_seen()
        looks.append((time.perf_counter() - t0) / 100)
    med = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
    for name, m in med.items():
        print(f"{name}: median {m:.1f} ms over {args.repeat} queries of {args.partitions} listed partitions")
    print(f"ratio (with / without): {med['with the look after the listing'] / med['without it']:.3f} "
          "(on a busy machine, two runs of the same code differ by as much)")
    look = statistics.median(looks) * 1000
    print(f"the look itself (commit.journals_seen): median {look * 1000:.1f} us, "
          f"{look / med['without it'] * 100:.4f} % of a query")
    wh.close()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
