"""Star Schema Benchmark (O'Neil et al.): hivepark's map-join runtime partition pruning
against Spark's own dynamic partition pruning, on SSB tables derived from TPC-H.

    .venv/bin/python bench/ssb.py [--sf 1] [--repeat 3] [--paired 6] [--dir .bench/ssb-sf1]
                                  [--queries Q1.1,Q3.4] [--rebuild]
                                  [--spark-new-listing stock|session]
                                  [--spark-conf KEY=VALUE ...]

Data. ``tpchgen-cli parquet -s <sf>`` (the ``test`` extra) writes the TPC-H tables; Spark
derives the SSB tables from them and hivepark loads them into a warehouse with an SQLite
metastore in ``<dir>/warehouse``. Both are reused on later runs (``--rebuild`` redoes them).

- lineorder = lineitem JOIN orders (JOIN partsupp for the cost), PARTITIONED BY
  (lo_orderdate INT yyyymmdd), loaded with ``INSERT OVERWRITE TABLE lineorder PARTITION
  (lo_orderdate) SELECT ...``: one partition per order date, 1992-01-01..1998-08-02, 2,406
  partitions. lo_quantity INT; lo_discount and lo_tax INT percent (0..10, 0..8, as in SSB);
  lo_extendedprice, lo_ordtotalprice DECIMAL(15,2) as in TPC-H; lo_revenue =
  extendedprice * (100 - discount) / 100; lo_supplycost = ps_supplycost * l_quantity (the
  line's cost from partsupp; SSB's generator invents a unit cost instead); lo_commitdate INT
  yyyymmdd; lo_orderpriority, lo_shippriority, lo_shipmode from TPC-H. Money is DECIMAL so
  that every engine's sums are exact and the four variants' rows can be compared exactly.
- customer / supplier: the TPC-H rows with nation and region names; c_city / s_city = the
  nation name cut or space-padded to 9 characters plus one digit, as in SSB
  (``UNITED KI1``); the digit is key % 10 (SSB draws it at random).
- part: p_mfgr ``MFGR#m`` from TPC-H ``Manufacturer#m``; p_category ``MFGR#mn`` from TPC-H
  ``Brand#mn`` (25 categories, MFGR#11..55, as in SSB); p_brand1 = p_category plus a
  two-digit 01..40 (1 + partkey % 40), giving SSB's 1,000 brands MFGR#1101..MFGR#5540;
  p_color = first word of p_name; p_type, p_size, p_container from TPC-H.
- dates: every day 1992-01-01..1998-12-31 (d_datekey INT yyyymmdd). d_date ``January 1,
  1992``; d_dayofweek ``Monday``; d_month ``January``; d_yearmonth ``Jan1992``;
  d_daynuminweek 1 = Sunday; d_weeknuminyear = (d_daynuminyear - 1) div 7 + 1;
  d_sellingseason Winter (Jan-Feb), Spring (Mar-May), Summer (Jun-Aug), Fall (Sep-Nov),
  Christmas (Dec); flags are INT 0/1; holidays are Jan 1, Jul 4, Nov 11 and Dec 25.

Queries. The 13 SSB queries with SSB's literals, written as ANSI joins (``JOIN ... ON``)
over the table ``dates`` (``date`` is a reserved word). Adaptations: none of the literals
had to change, because TPC-H order dates end on 1998-08-02, Q4.2/Q4.3's "d_year = 1997 or
1998" reads seven months of 1998 instead of twelve (they still return rows); Q3.3/Q3.4's
cities exist because c_city/s_city follow SSB's 9-character rule. The script fails if a
query returns no rows.

Variants, each run --repeat times in rotating order, median wall time from the call to the
end of ``.collect()``, ``spark.catalog.clearCache()`` before every run:
  hivepark     ``wh.sql(q).collect()`` with runtime (map-join) partition pruning (default);
  no-runtime   the same with ``SET hive.optimize.mapjoin.partition.pruning=false``;
  spark-new    a new job: ``spark.read.parquet`` of the lineorder table directory (listing
               and partition discovery included) and of the dimension tables, temp views,
               the same SQL with Spark's dynamic partition pruning (its default). With
               ``--spark-new-listing stock`` (the default) it lists as stock Spark does:
               ``spark.sql.sources.parallelPartitionDiscovery.threshold`` at Spark's
               default, 32, so 2,406 directories are listed by a Spark job; ``session``
               keeps hivepark's session value (100000: listed on the driver, faster here);
  spark-warm   the same DataFrames created once up front and reused (listing done).
Rows of all four are sorted and compared on every run; any difference stops the script.
A warm-up round runs first, untimed: Q1.1 in every variant, then every query by hivepark,
no-runtime and spark-warm (the JVM's compiled code for each query's analysis: without it the
first query measured carried 10 ms more of planning than the rest). Then (``--paired N``, default 6)
hivepark and spark-warm run N more times per query in alternating pairs, nothing between
them, for a second per-query hivepark/spark-warm ratio (printed on its own line): in the
rotation a variant may follow spark-new's listing job, which moves a 0.2 s query by 10-20%.
The JVM's collection pauses during each paired run are read from its garbage-collector beans
(outside the timed part) and printed: their total for each side, and the ratio over only the
pairs in which neither run had a collection, so that a ratio moved by collections shows as such.
A query whose spark-warm median is under 1 s runs in rounds of three instead, hivepark, spark-warm
and spark-warm again, each in each place in turn: the second spark-warm against the first (an
A/A control) shows how far such a query's ratio moves with no difference behind it; printed
with the quartiles of the per-round ratios of both.

Bytes. ``hp-bytes``: the partitions hivepark's lineorder scan reads, taken from its
``EXPLAIN ANALYZE`` (with ``hivepark.explain.max.directories`` raised so every chosen
directory is listed; its count is checked against ``partitions=K/N``) and summed from the
metastore's ``totalSize`` of those partitions. ``read``: Spark's own ``size of files read``
metric of the lineorder FileSourceScanExec after the collect, for every variant, hivepark
included (hivepark hands Spark a file list, so this is the same measure); ``n/m`` means
not measured. ``qualifying-bytes``: computed independently with plain Spark, the partitions
of lineorder whose date satisfies the query's conditions on ``dates`` (the WHERE conjuncts
that read only d_ columns, applied through the join), their files' sizes summed from a
listing of the table directory; also printed, how many partitions hold a row of the whole
query's result (the query's FROM and WHERE with ``SELECT DISTINCT lo_orderdate``), which
partition pruning cannot know without reading.

Planning. ``before collect``: the median time of ``wh.sql(q)`` (hivepark, no-runtime) and
of ``spark.sql(q)`` (spark-warm), the work done before the first Spark job. ``hivepark's
own``: the difference between hivepark's and spark-warm's, which is hivepark's own work
(parsing, the metastore, runtime values collected in-process, building the scans), Spark's
analysis of the final query being common to both. The last lines give it per query and
each query's hivepark/spark-warm ratio.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TABLES = ("lineorder", "dates", "customer", "supplier", "part")
VARIANTS = ("hivepark", "no-runtime", "spark-new", "spark-warm")
SELECTIVE = ("Q1.2", "Q1.3", "Q3.4")

# {lineorder} etc. are replaced by each variant's table or view names.
QUERIES: dict[str, str] = {
    "Q1.1": """SELECT sum(lo_extendedprice * lo_discount) AS revenue
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
        WHERE d_year = 1993 AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25""",
    "Q1.2": """SELECT sum(lo_extendedprice * lo_discount) AS revenue
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
        WHERE d_yearmonthnum = 199401 AND lo_discount BETWEEN 4 AND 6
          AND lo_quantity BETWEEN 26 AND 35""",
    "Q1.3": """SELECT sum(lo_extendedprice * lo_discount) AS revenue
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
        WHERE d_weeknuminyear = 6 AND d_year = 1994 AND lo_discount BETWEEN 5 AND 7
          AND lo_quantity BETWEEN 26 AND 35""",
    "Q2.1": """SELECT sum(lo_revenue) AS revenue, d_year, p_brand1
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
          JOIN {part} ON lo_partkey = p_partkey JOIN {supplier} ON lo_suppkey = s_suppkey
        WHERE p_category = 'MFGR#12' AND s_region = 'AMERICA'
        GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1""",
    "Q2.2": """SELECT sum(lo_revenue) AS revenue, d_year, p_brand1
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
          JOIN {part} ON lo_partkey = p_partkey JOIN {supplier} ON lo_suppkey = s_suppkey
        WHERE p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'ASIA'
        GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1""",
    "Q2.3": """SELECT sum(lo_revenue) AS revenue, d_year, p_brand1
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
          JOIN {part} ON lo_partkey = p_partkey JOIN {supplier} ON lo_suppkey = s_suppkey
        WHERE p_brand1 = 'MFGR#2239' AND s_region = 'EUROPE'
        GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1""",
    "Q3.1": """SELECT c_nation, s_nation, d_year, sum(lo_revenue) AS revenue
        FROM {lineorder} JOIN {customer} ON lo_custkey = c_custkey
          JOIN {supplier} ON lo_suppkey = s_suppkey JOIN {dates} ON lo_orderdate = d_datekey
        WHERE c_region = 'ASIA' AND s_region = 'ASIA' AND d_year >= 1992 AND d_year <= 1997
        GROUP BY c_nation, s_nation, d_year ORDER BY d_year ASC, revenue DESC""",
    "Q3.2": """SELECT c_city, s_city, d_year, sum(lo_revenue) AS revenue
        FROM {lineorder} JOIN {customer} ON lo_custkey = c_custkey
          JOIN {supplier} ON lo_suppkey = s_suppkey JOIN {dates} ON lo_orderdate = d_datekey
        WHERE c_nation = 'UNITED STATES' AND s_nation = 'UNITED STATES'
          AND d_year >= 1992 AND d_year <= 1997
        GROUP BY c_city, s_city, d_year ORDER BY d_year ASC, revenue DESC""",
    "Q3.3": """SELECT c_city, s_city, d_year, sum(lo_revenue) AS revenue
        FROM {lineorder} JOIN {customer} ON lo_custkey = c_custkey
          JOIN {supplier} ON lo_suppkey = s_suppkey JOIN {dates} ON lo_orderdate = d_datekey
        WHERE (c_city = 'UNITED KI1' OR c_city = 'UNITED KI5')
          AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5')
          AND d_year >= 1992 AND d_year <= 1997
        GROUP BY c_city, s_city, d_year ORDER BY d_year ASC, revenue DESC""",
    "Q3.4": """SELECT c_city, s_city, d_year, sum(lo_revenue) AS revenue
        FROM {lineorder} JOIN {customer} ON lo_custkey = c_custkey
          JOIN {supplier} ON lo_suppkey = s_suppkey JOIN {dates} ON lo_orderdate = d_datekey
        WHERE (c_city = 'UNITED KI1' OR c_city = 'UNITED KI5')
          AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5') AND d_yearmonth = 'Dec1997'
        GROUP BY c_city, s_city, d_year ORDER BY d_year ASC, revenue DESC""",
    "Q4.1": """SELECT d_year, c_nation, sum(lo_revenue - lo_supplycost) AS profit
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
          JOIN {customer} ON lo_custkey = c_custkey JOIN {supplier} ON lo_suppkey = s_suppkey
          JOIN {part} ON lo_partkey = p_partkey
        WHERE c_region = 'AMERICA' AND s_region = 'AMERICA'
          AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')
        GROUP BY d_year, c_nation ORDER BY d_year, c_nation""",
    "Q4.2": """SELECT d_year, s_nation, p_category, sum(lo_revenue - lo_supplycost) AS profit
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
          JOIN {customer} ON lo_custkey = c_custkey JOIN {supplier} ON lo_suppkey = s_suppkey
          JOIN {part} ON lo_partkey = p_partkey
        WHERE c_region = 'AMERICA' AND s_region = 'AMERICA'
          AND (d_year = 1997 OR d_year = 1998) AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')
        GROUP BY d_year, s_nation, p_category ORDER BY d_year, s_nation, p_category""",
    "Q4.3": """SELECT d_year, s_city, p_brand1, sum(lo_revenue - lo_supplycost) AS profit
        FROM {lineorder} JOIN {dates} ON lo_orderdate = d_datekey
          JOIN {customer} ON lo_custkey = c_custkey JOIN {supplier} ON lo_suppkey = s_suppkey
          JOIN {part} ON lo_partkey = p_partkey
        WHERE c_region = 'AMERICA' AND s_nation = 'UNITED STATES'
          AND (d_year = 1997 OR d_year = 1998) AND p_category = 'MFGR#14'
        GROUP BY d_year, s_city, p_brand1 ORDER BY d_year, s_city, p_brand1""",
}

# ---------------------------------------------------------------------------------------
# Data: TPC-H with tpchgen-cli, SSB derived with Spark, loaded with hivepark.

DDL = {
    "lineorder": """CREATE TABLE lineorder (lo_orderkey BIGINT, lo_linenumber INT,
        lo_custkey BIGINT, lo_partkey BIGINT, lo_suppkey BIGINT, lo_orderpriority STRING,
        lo_shippriority INT, lo_quantity INT, lo_extendedprice DECIMAL(15,2),
        lo_ordtotalprice DECIMAL(15,2), lo_discount INT, lo_revenue DECIMAL(15,2),
        lo_supplycost DECIMAL(15,2), lo_tax INT, lo_commitdate INT, lo_shipmode STRING)
        PARTITIONED BY (lo_orderdate INT) STORED AS PARQUET""",
    "customer": """CREATE TABLE customer (c_custkey BIGINT, c_name STRING, c_address STRING,
        c_city STRING, c_nation STRING, c_region STRING, c_phone STRING,
        c_mktsegment STRING) STORED AS PARQUET""",
    "supplier": """CREATE TABLE supplier (s_suppkey BIGINT, s_name STRING, s_address STRING,
        s_city STRING, s_nation STRING, s_region STRING, s_phone STRING) STORED AS PARQUET""",
    "part": """CREATE TABLE part (p_partkey BIGINT, p_name STRING, p_mfgr STRING,
        p_category STRING, p_brand1 STRING, p_color STRING, p_type STRING, p_size INT,
        p_container STRING) STORED AS PARQUET""",
    "dates": """CREATE TABLE dates (d_datekey INT, d_date STRING, d_dayofweek STRING,
        d_month STRING, d_year INT, d_yearmonthnum INT, d_yearmonth STRING,
        d_daynuminweek INT, d_daynuminmonth INT, d_daynuminyear INT, d_monthnuminyear INT,
        d_weeknuminyear INT, d_sellingseason STRING, d_lastdayinweekfl INT,
        d_lastdayinmonthfl INT, d_holidayfl INT, d_weekdayfl INT) STORED AS PARQUET""",
}

DERIVE = {
    "lineorder": """SELECT l_orderkey AS lo_orderkey, l_linenumber AS lo_linenumber,
        o_custkey AS lo_custkey, l_partkey AS lo_partkey, l_suppkey AS lo_suppkey,
        o_orderpriority AS lo_orderpriority, o_shippriority AS lo_shippriority,
        CAST(l_quantity AS INT) AS lo_quantity,
        CAST(l_extendedprice AS DECIMAL(15,2)) AS lo_extendedprice,
        CAST(o_totalprice AS DECIMAL(15,2)) AS lo_ordtotalprice,
        CAST(round(l_discount * 100) AS INT) AS lo_discount,
        CAST(l_extendedprice * (1 - l_discount) AS DECIMAL(15,2)) AS lo_revenue,
        CAST(ps_supplycost * l_quantity AS DECIMAL(15,2)) AS lo_supplycost,
        CAST(round(l_tax * 100) AS INT) AS lo_tax,
        CAST(date_format(l_commitdate, 'yyyyMMdd') AS INT) AS lo_commitdate,
        l_shipmode AS lo_shipmode,
        CAST(date_format(o_orderdate, 'yyyyMMdd') AS INT) AS lo_orderdate
        FROM tpch_lineitem JOIN tpch_orders ON l_orderkey = o_orderkey
          JOIN tpch_partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey""",
    "customer": """SELECT c_custkey, c_name, c_address,
        concat(rpad(substr(n_name, 1, 9), 9, ' '), CAST(c_custkey % 10 AS STRING)) AS c_city,
        n_name AS c_nation, r_name AS c_region, c_phone, c_mktsegment
        FROM tpch_customer JOIN tpch_nation ON c_nationkey = n_nationkey
          JOIN tpch_region ON n_regionkey = r_regionkey""",
    "supplier": """SELECT s_suppkey, s_name, s_address,
        concat(rpad(substr(n_name, 1, 9), 9, ' '), CAST(s_suppkey % 10 AS STRING)) AS s_city,
        n_name AS s_nation, r_name AS s_region, s_phone
        FROM tpch_supplier JOIN tpch_nation ON s_nationkey = n_nationkey
          JOIN tpch_region ON n_regionkey = r_regionkey""",
    "part": """SELECT p_partkey, p_name,
        concat('MFGR#', substr(p_mfgr, 14)) AS p_mfgr,
        concat('MFGR#', substr(p_brand, 7, 2)) AS p_category,
        concat('MFGR#', substr(p_brand, 7, 2), lpad(CAST(1 + p_partkey % 40 AS STRING), 2, '0'))
          AS p_brand1,
        substring_index(p_name, ' ', 1) AS p_color, p_type, p_size, p_container
        FROM tpch_part""",
    "dates": """SELECT CAST(date_format(d, 'yyyyMMdd') AS INT) AS d_datekey,
        date_format(d, 'MMMM d, yyyy') AS d_date, date_format(d, 'EEEE') AS d_dayofweek,
        date_format(d, 'MMMM') AS d_month, year(d) AS d_year,
        year(d) * 100 + month(d) AS d_yearmonthnum, date_format(d, 'MMMyyyy') AS d_yearmonth,
        dayofweek(d) AS d_daynuminweek, dayofmonth(d) AS d_daynuminmonth,
        dayofyear(d) AS d_daynuminyear, month(d) AS d_monthnuminyear,
        (dayofyear(d) - 1) DIV 7 + 1 AS d_weeknuminyear,
        CASE WHEN month(d) = 12 THEN 'Christmas' WHEN month(d) <= 2 THEN 'Winter'
             WHEN month(d) <= 5 THEN 'Spring' WHEN month(d) <= 8 THEN 'Summer'
             ELSE 'Fall' END AS d_sellingseason,
        CAST(dayofweek(d) = 7 AS INT) AS d_lastdayinweekfl,
        CAST(d = last_day(d) AS INT) AS d_lastdayinmonthfl,
        CAST(date_format(d, 'MM-dd') IN ('01-01', '07-04', '11-11', '12-25') AS INT)
          AS d_holidayfl,
        CAST(dayofweek(d) BETWEEN 2 AND 6 AS INT) AS d_weekdayfl
        FROM (SELECT explode(sequence(DATE'1992-01-01', DATE'1998-12-31')) AS d)""",
}

TPCH = ("lineitem", "orders", "partsupp", "customer", "supplier", "part", "nation", "region")


def tpchgen_binary() -> str:
    local = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    found = local if os.path.exists(local) else shutil.which("tpchgen-cli")
    if not found:
        sys.exit("tpchgen-cli not found: .venv/bin/pip install -e '.[test]'")
    return found


def generate_tpch(sf: float, out: str) -> None:
    """TPC-H parquet files in ``out`` (reused when a previous run finished)."""
    done = os.path.join(out, ".complete")
    if os.path.exists(done):
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    t = time.perf_counter()
    subprocess.run([tpchgen_binary(), "parquet", "-s", f"{sf:g}", "-o", out, "--quiet",
                    "--tables", ",".join(TPCH)], check=True)
    open(done, "w").close()
    print(f"tpchgen-cli sf={sf:g}: {time.perf_counter() - t:.1f}s", flush=True)


def load_warehouse(spark: Any, wh: Any, tpch: str, marker: str) -> None:
    """Derives the SSB tables with Spark and loads them with hivepark."""
    if os.path.exists(marker):
        return
    t = time.perf_counter()
    for name in TPCH:
        spark.read.parquet(os.path.join(tpch, f"{name}.parquet")) \
            .createOrReplaceTempView(f"tpch_{name}")
    for name in TABLES:
        spark.sql(DERIVE[name]).createOrReplaceTempView(f"ssb_src_{name}")
        wh.sql(f"DROP TABLE IF EXISTS {name}")
        wh.sql(DDL[name])
        if name == "lineorder":
            wh.sql("INSERT OVERWRITE TABLE lineorder PARTITION (lo_orderdate) "
                   "SELECT * FROM ssb_src_lineorder")
        else:
            wh.sql(f"INSERT OVERWRITE TABLE {name} SELECT * FROM ssb_src_{name}")
        print(f"loaded {name}: {time.perf_counter() - t:.1f}s", flush=True)
    for name in TPCH:
        spark.catalog.dropTempView(f"tpch_{name}")
    for name in TABLES:
        spark.catalog.dropTempView(f"ssb_src_{name}")
    open(marker, "w").close()


# ---------------------------------------------------------------------------------------
# Measuring: Spark's scan metrics, hivepark's chosen partitions, the qualifying partitions.

def _children(node: Any) -> list[Any]:
    name = node.getClass().getSimpleName()
    if name == "AdaptiveSparkPlanExec":
        return [node.executedPlan()]
    if name.endswith("QueryStageExec"):
        return [node.plan()]
    if name == "ReusedExchangeExec":
        return [node.child()]
    kids = node.children()
    return [kids.apply(i) for i in range(kids.size())]


def lineorder_scan_bytes(df: Any) -> int | None:
    """``size of files read`` of the lineorder FileSourceScanExec of an executed DataFrame
    (None when the plan holds no such node or the metric is missing)."""
    try:
        stack = [df._jdf.queryExecution().executedPlan()]
        found = []
        while stack:
            node = stack.pop()
            if node.getClass().getSimpleName() == "FileSourceScanExec":
                out = node.output()
                names = [out.apply(i).name() for i in range(out.size())]
                if any(n.startswith("lo_") for n in names):
                    found.append(node)
                continue
            stack += _children(node)
        if not found:
            return None
        total = 0
        for node in found:
            metric = node.metrics().get("filesSize")
            if metric.isEmpty():
                return None
            total += int(metric.get().value())
        return total
    except Exception:  # py4j: the plan's shape is not what this walk expects
        return None


def partition_sizes(table_dir: str) -> dict[int, int]:
    """Bytes of the visible files of each ``lo_orderdate=`` directory, from a listing."""
    sizes: dict[int, int] = {}
    for entry in os.scandir(table_dir):
        if not entry.is_dir() or not entry.name.startswith("lo_orderdate="):
            continue
        key = int(entry.name.split("=", 1)[1])
        sizes[key] = sum(f.stat().st_size for f in os.scandir(entry.path)
                         if f.is_file() and not f.name.startswith((".", "_")))
    return sizes


def hivepark_partitions(wh: Any, sql: str, by_location: dict[str, int]) -> tuple[str, int]:
    """(``K/N`` of the lineorder scan, bytes of those K partitions from the metastore)."""
    wh.sql("SET hivepark.explain.max.directories=1000000")
    try:
        text = "\n".join(r[0] for r in wh.sql("EXPLAIN ANALYZE " + sql).collect())
    finally:
        wh.sql("SET hivepark.explain.max.directories=5")
    block = text.split("TableScan default.lineorder")[1].split("TableScan")[0]
    k_n = re.search(r"partitions=(\d+)/(\d+)", block)
    assert k_n, block
    listed = re.search(r"directories: (.*)", block)
    assert listed, block
    dirs = listed.group(1).strip()
    chosen = [] if dirs == "(none)" else [d.strip() for d in dirs.split(", ")]
    if len(chosen) != int(k_n.group(1)):
        raise SystemExit(f"EXPLAIN ANALYZE lists {len(chosen)} directories, "
                         f"says partitions={k_n.group(0)}")
    return f"{k_n.group(1)}/{k_n.group(2)}", sum(by_location[d] for d in chosen)


def qualifying_bytes(spark: Any, sql: str, sizes: dict[int, int]) -> tuple[int, int, int]:
    """Computed with plain Spark over the warm views: (count, bytes) of the lineorder
    partitions whose date satisfies the query's conditions on ``dates`` (the partitions a
    partition-level decision can qualify), and the count of partitions that hold a row of
    the whole query's result (what no partition pruning can know before reading)."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read="spark")
    where = tree.args["where"].this if tree.args.get("where") else None
    conds = []
    stack = [where] if where is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, exp.And):
            stack += [node.this, node.expression]
        elif all(c.name.startswith("d_") for c in node.find_all(exp.Column)):
            conds.append(node.sql(dialect="spark"))
    date_sql = ("SELECT DISTINCT lo_orderdate FROM warm_lineorder JOIN warm_dates "
                "ON lo_orderdate = d_datekey" + (" WHERE " + " AND ".join(conds) if conds else ""))
    keys = [r[0] for r in spark.sql(date_sql).collect()]
    body = re.split(r"\bGROUP BY\b|\bORDER BY\b", sql)[0]
    q = re.sub(r"^\s*SELECT .*?\bFROM\b", "SELECT DISTINCT lo_orderdate FROM", body, flags=re.S)
    result = spark.sql(q).count()
    return len(keys), sum(sizes[k] for k in keys), result


# ---------------------------------------------------------------------------------------

def jvm_gc_ms(spark: Any) -> int:
    """Milliseconds the driver JVM (in local mode, the executors too) has spent in garbage
    collection pauses since it started, summed over its collectors."""
    beans = spark._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    return sum(int(beans.get(i).getCollectionTime()) for i in range(beans.size()))


def human(n: int | None) -> str:
    if n is None:
        return "n/m"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def git_head() -> str:
    src = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(["git", "-C", src, "describe", "--always", "--dirty"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"


def sort_rows(rows: list[Any]) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


#: queries whose spark-warm median is under this many seconds get an A/A control in the pairs
AA_UNDER_S = 1.0
AA_ROUND = ("hivepark", "spark-warm", "spark-warm-2")


def quartiles(xs: list[float]) -> tuple[float, float]:
    """The first and third quartiles of ``xs`` (two or more values)."""
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


class Runner:
    """The four ways to run a query; each returns (seconds, rows, lineorder bytes read)."""

    def __init__(self, spark: Any, wh: Any, new_listing: str = "stock") -> None:
        self.spark, self.wh = spark, wh
        self.new_listing = new_listing
        self.locations = {t: wh.catalog.get_table("default", t).location for t in TABLES}
        self.warm = {t: spark.read.parquet(self.locations[t]) for t in TABLES}
        for t, df in self.warm.items():
            df.createOrReplaceTempView(f"warm_{t}")
        self.new_id = 0
        self.plan_seconds = 0.0  # of the last hivepark run: wh.sql() before the collect

    def sql_for(self, name: str, prefix: str = "") -> str:
        return QUERIES[name].format(**{t: prefix + t for t in TABLES})

    def run(self, variant: str, name: str) -> tuple[float, list[tuple], int | None]:
        self.spark.catalog.clearCache()
        fn: dict[str, Callable[[str], tuple[float, Any, Any]]] = {
            "hivepark": self._hivepark, "no-runtime": self._no_runtime,
            "spark-new": self._spark_new, "spark-warm": self._spark_warm}
        seconds, rows, df = fn[variant](name)
        return seconds, sort_rows(rows), lineorder_scan_bytes(df)

    def _hivepark(self, name: str) -> tuple[float, Any, Any]:
        sql = self.sql_for(name)
        t = time.perf_counter()
        df = self.wh.sql(sql)
        self.plan_seconds = time.perf_counter() - t
        rows = df.collect()
        return time.perf_counter() - t, rows, df

    def _no_runtime(self, name: str) -> tuple[float, Any, Any]:
        self.wh.sql("SET hive.optimize.mapjoin.partition.pruning=false")
        try:
            return self._hivepark(name)
        finally:
            self.wh.sql("SET hive.optimize.mapjoin.partition.pruning=true")

    def _spark_new(self, name: str) -> tuple[float, Any, Any]:
        self.new_id += 1
        prefix = f"new{self.new_id}_"
        sql = self.sql_for(name, prefix)
        key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
        before = self.spark.conf.get(key)
        if self.new_listing == "stock":
            self.spark.conf.set(key, "32")
        try:
            t = time.perf_counter()
            for table in TABLES:
                self.spark.read.parquet(self.locations[table]) \
                    .createOrReplaceTempView(prefix + table)
            df = self.spark.sql(sql)
            rows = df.collect()
            seconds = time.perf_counter() - t
        finally:
            self.spark.conf.set(key, before)
        for table in TABLES:
            self.spark.catalog.dropTempView(prefix + table)
        return seconds, rows, df

    def _spark_warm(self, name: str) -> tuple[float, Any, Any]:
        sql = self.sql_for(name, "warm_")
        t = time.perf_counter()
        df = self.spark.sql(sql)
        self.plan_seconds = time.perf_counter() - t
        rows = df.collect()
        return time.perf_counter() - t, rows, df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="data and warehouse (default .bench/ssb-sf<sf>)")
    ap.add_argument("--queries", default=",".join(QUERIES),
                    help="comma-separated subset, e.g. Q1.1,Q3.4")
    ap.add_argument("--rebuild", action="store_true", help="regenerate data and warehouse")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark SQL setting for every variant (repeatable), e.g. "
                         "spark.sql.parquet.pushdown.inFilterThreshold=0")
    ap.add_argument("--spark-new-listing", choices=("stock", "session"), default="stock",
                    help="spark-new lists directories as stock Spark (a listing job over 32 "
                         "paths) or with this session's driver-side listing")
    ap.add_argument("--paired", type=int, default=6,
                    help="then run hivepark and spark-warm N more times per query, alternating, "
                         "for the per-query ratio (0: skip)")
    args = ap.parse_args()
    names = [q.strip().upper() for q in args.queries.split(",") if q.strip()]
    unknown = [q for q in names if q not in QUERIES]
    if unknown:
        sys.exit(f"unknown queries {unknown}; choose from {', '.join(QUERIES)}")
    root = os.path.abspath(args.dir or os.path.join(REPO, ".bench", f"ssb-sf{args.sf:g}"))
    if args.rebuild:
        shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root, exist_ok=True)

    os.environ.setdefault("HIVEPARK_DRIVER_MEMORY", "8g")
    import hivepark
    from hivepark.exec.session import get_or_create_spark

    generate_tpch(args.sf, os.path.join(root, "tpch"))
    spark = get_or_create_spark()
    wh = hivepark.connect(os.path.join(root, "warehouse"), spark=spark, conf={
        "hive.exec.dynamic.partition.mode": "nonstrict",
        "hive.exec.max.dynamic.partitions": "5000"})
    load_warehouse(spark, wh, os.path.join(root, "tpch"), os.path.join(root, ".loaded"))

    for kv in args.spark_conf:
        key, _, value = kv.partition("=")
        spark.conf.set(key.strip(), value.strip())
    runner = Runner(spark, wh, args.spark_new_listing)
    lineorder = wh.catalog.get_table("default", "lineorder")
    by_location = {p.location: int(p.parameters["totalSize"])
                   for p in wh.catalog.list_partitions(lineorder)}
    sizes = partition_sizes(runner.locations["lineorder"])

    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} spark={spark.version} "
          f"master={spark.sparkContext.master} sf={args.sf:g} repeat={args.repeat} "
          f"lineorder={len(sizes):,} partitions, {human(sum(sizes.values()))} "
          f"hivepark={hivepark.__file__} ({git_head()}) load={os.getloadavg()[0]:.1f}"
          + f" spark-new-listing={args.spark_new_listing}"
          + (f" spark-conf={','.join(args.spark_conf)}" if args.spark_conf else ""), flush=True)

    for variant in VARIANTS:  # warm-up, untimed: JIT, first reads
        runner.run(variant, "Q1.1")
    # and each query once by the variants that share a warm session (spark-new's is a listing
    # job per run): the JVM compiles the analysis of each query's shape; measured in one
    # process, Q1.1's wh.sql() took 16.5 ms more than spark-warm's spark.sql() when it was
    # the first query run, 5.3 ms after the others had run
    for name in names:
        for variant in ("hivepark", "no-runtime", "spark-warm"):
            runner.run(variant, name)

    medians: dict[str, dict[str, float]] = {v: {} for v in VARIANTS}
    own: dict[str, float] = {}  # ms: hivepark's wh.sql() minus spark-warm's spark.sql()
    for name in names:
        times: dict[str, list[float]] = {v: [] for v in VARIANTS}
        plans: dict[str, list[float]] = {"hivepark": [], "no-runtime": [], "spark-warm": []}
        read: dict[str, int | None] = {}
        expected: list[tuple] | None = None
        for i in range(args.repeat):
            order = VARIANTS[i % 4:] + VARIANTS[:i % 4]
            for variant in order:
                seconds, rows, nbytes = runner.run(variant, name)
                times[variant].append(seconds)
                if variant in plans:
                    plans[variant].append(runner.plan_seconds)
                read[variant] = nbytes
                if expected is None:
                    expected = rows
                    if not rows:
                        raise SystemExit(f"{name}: {variant} returned no rows")
                elif rows != expected:
                    raise SystemExit(f"{name}: {variant} returned different rows "
                                     f"({len(rows)} vs {len(expected)}):\n"
                                     f"{rows[:5]}\nexpected {expected[:5]}")
        for v in VARIANTS:
            medians[v][name] = statistics.median(times[v])
        k_n, hp_bytes = hivepark_partitions(wh, runner.sql_for(name), by_location)
        q_count, q_bytes, result_parts = qualifying_bytes(spark, runner.sql_for(name, "warm_"),
                                                          sizes)
        plan_ms = {v: statistics.median(p) * 1000 for v, p in plans.items()}
        own[name] = plan_ms["hivepark"] - plan_ms["spark-warm"]
        print(f"{name}  " + "  ".join(f"{v} {medians[v][name]:.2f}s" for v in VARIANTS)
              + "  (before collect: " + " ".join(f"{v} {ms:.0f}ms" for v, ms in plan_ms.items())
              + f"; hivepark's own {own[name]:.0f}ms)"
              + f"  partitions {k_n}  hp-bytes {human(hp_bytes)}"
              + f"  qualifying-bytes {human(q_bytes)} ({q_count} partitions; "
              + f"{result_parts} hold result rows)"
              + "  read: " + " ".join(f"{v}={human(read[v])}" for v in VARIANTS)
              + f"  rows {len(expected or [])}", flush=True)

    # item 1's per-query ratio once more, hivepark and spark-warm back to back (ABBA order,
    # nothing else between them; a short query in rounds of three, below): in the rotation
    # above, a variant may run right after spark-new's listing job and its garbage, which
    # moves a 0.2 s query by 10-20%
    paired: dict[str, float] = {}
    gc_total: dict[str, tuple[int, int]] = {}  # JVM collection ms during hivepark's, spark-warm's runs
    no_gc: dict[str, tuple[float, int] | None] = {}  # the ratio over pairs with no collection, and their count
    # A short query's rounds run spark-warm a second time too (an A/A control: the same
    # variant against itself shows how far a ratio moves with nothing behind it)
    aa: dict[str, tuple[float, tuple[float, float], tuple[float, float]]] = {}
    for name in names if args.paired else ():
        short = args.paired >= 2 and medians["spark-warm"][name] < AA_UNDER_S  # quartiles need two
        pair_times: dict[str, list[float]] = {"hivepark": [], "spark-warm": [], "spark-warm-2": []}
        pair_gc: dict[str, list[int]] = {"hivepark": [], "spark-warm": [], "spark-warm-2": []}
        for i in range(args.paired):
            if short:  # each of the three in each place in turn
                rnd: tuple[str, ...] = AA_ROUND[i % 3:] + AA_ROUND[:i % 3]
            else:
                rnd = ("hivepark", "spark-warm") if i % 2 == 0 else ("spark-warm", "hivepark")
            for label in rnd:
                before = jvm_gc_ms(spark)
                pair_times[label].append(runner.run(label.removesuffix("-2"), name)[0])
                pair_gc[label].append(jvm_gc_ms(spark) - before)
        paired[name] = statistics.median(pair_times["hivepark"]) / statistics.median(pair_times["spark-warm"])
        if short:
            warm = pair_times["spark-warm"]
            aa[name] = (statistics.median(pair_times["spark-warm-2"]) / statistics.median(warm),
                        quartiles([h / w for h, w in zip(pair_times["hivepark"], warm)]),
                        quartiles([a / w for a, w in zip(pair_times["spark-warm-2"], warm)]))
        gc_total[name] = (sum(pair_gc["hivepark"]), sum(pair_gc["spark-warm"]))
        calm = [i for i in range(args.paired) if pair_gc["hivepark"][i] == pair_gc["spark-warm"][i] == 0]
        no_gc[name] = (statistics.median(pair_times["hivepark"][i] for i in calm)
                       / statistics.median(pair_times["spark-warm"][i] for i in calm), len(calm)) if calm else None

    total = {v: sum(medians[v].values()) for v in VARIANTS}
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    print("hivepark's own work before the first Spark job (wh.sql() minus spark-warm's spark.sql(), "
          "median ms): " + "  ".join(f"{q} {ms:.0f}" for q, ms in own.items())
          + f"  max {max(own.values()):.0f}")
    print("per query hivepark/spark-warm: " + "  ".join(
        f"{q} {medians['hivepark'][q] / medians['spark-warm'][q]:.2f}" for q in names)
        + f"  max {max(medians['hivepark'][q] / medians['spark-warm'][q] for q in names):.2f}")
    if paired:
        print(f"per query hivepark/spark-warm, {args.paired} alternating pairs"
              + (f" (rounds of three for {','.join(aa)})" if aa else "") + ": " + "  ".join(
            f"{q} {r:.2f}" for q, r in paired.items()) + f"  max {max(paired.values()):.2f}")
        print("JVM collection pauses during the pairs, ms (hivepark/spark-warm): " + "  ".join(
            f"{q} {h}/{w}" for q, (h, w) in gc_total.items()))
        print("per query hivepark/spark-warm, pairs with no JVM collection in either run (count): "
              + "  ".join(f"{q} " + (f"{r[0]:.2f} ({r[1]})" if r else "- (0)") for q, r in no_gc.items()))
    if aa:
        print(f"A/A control, queries where spark-warm takes under {AA_UNDER_S:g} s (spark-warm run twice in "
              "the same rounds: the ratio of the second to the first has no difference behind it), "
              "median ratio and quartiles of the per-round ratios: " + "  ".join(
                  f"{q} spark-warm/spark-warm {r:.2f} ({a[0]:.2f}-{a[1]:.2f}), "
                  f"hivepark/spark-warm {paired[q]:.2f} ({h[0]:.2f}-{h[1]:.2f})"
                  for q, (r, h, a) in aa.items()))
    print("total  " + "  ".join(f"{v} {total[v]:.2f}s" for v in VARIANTS))
    hp = total["hivepark"]
    print(f"ratios (all {len(names)} queries): hivepark/spark-new {hp / total['spark-new']:.2f}  "
          f"hivepark/spark-warm {hp / total['spark-warm']:.2f}  "
          f"hivepark/no-runtime {hp / total['no-runtime']:.2f}")
    sel = [q for q in SELECTIVE if q in names]
    if sel:
        s = {v: sum(medians[v][q] for q in sel) for v in VARIANTS}
        print(f"ratios (selective {','.join(sel)}): "
              f"hivepark/spark-new {s['hivepark'] / s['spark-new']:.2f}  "
              f"hivepark/spark-warm {s['hivepark'] / s['spark-warm']:.2f}  "
              f"hivepark/no-runtime {s['hivepark'] / s['no-runtime']:.2f}")
    wh.close()


if __name__ == "__main__":
    main()
