"""Filter pushdown to the JDBC handler on a real PostgreSQL table (issue 10, deliverable 10).

Starts a throwaway PostgreSQL server (tests/pg_server.py), loads ``--rows`` rows (default
500,000; the issue's figure is ``--rows 5000000``) with an index on the key, and runs six
queries: a 0.1% key range, one key, a string equality, an IN list of 100 keys, an OR of
two ranges, and a predicate with a function (all residual). Each query is read three ways,
alternating, ``--repeat`` times: hivepark (pushed SQL it writes itself + Spark residual),
Spark's own JDBC source with its own pushdown (same table, same filter as Spark SQL), and
no pushdown (the whole table read, Spark filters). Prints the machine, each figure (rows
the database returned for hivepark, rows matching the pushed part, medians), and the
ratios on the last lines.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from hivepark.catalog.models import Column, Table  # noqa: E402
from hivepark.expr import (  # noqa: E402
    And,
    EqualTo,
    Expr,
    GreaterThanOrEqual,
    In,
    LessThan,
    Opaque,
    Or,
    to_filter_string,
)
from hivepark.storage.handlers import PushedFilter, get_handler, push_filters  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import psycopg

    from hivepark.exec.session import get_or_create_spark
    from pg_server import postgres_server

    n = args.rows
    with postgres_server() as url:
        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute("CREATE TABLE orders (o_id BIGINT PRIMARY KEY, o_cust BIGINT, o_status TEXT, "
                         "o_total NUMERIC(12,2))")
            conn.execute(f"INSERT INTO orders SELECT g, g % 10007, (ARRAY['OPEN','CLOSED','HELD','open'])[g % 4 + 1],"
                         f" (g % 100000) / 100.0 FROM generate_series(1, {n}) g")
            conn.execute("CREATE INDEX orders_status ON orders (o_status)")
            conn.execute("ANALYZE orders")
        props = {"storage_handler": "jdbc", "hive.sql.database.type": "POSTGRES",
                 "hive.sql.jdbc.url": "jdbc:postgresql://" + plain.split("@", 1)[1],
                 "hive.sql.dbcp.username": "postgres", "hive.sql.table": "orders"}
        table = Table("default", "orders", (Column("o_id", "bigint"), Column("o_cust", "bigint"),
                                            Column("o_status", "string"), Column("o_total", "decimal(12,2)")),
                      properties=props)
        spark = get_or_create_spark()
        handler = get_handler("jdbc")
        opts = handler.jdbc_options(props)  # type: ignore[attr-defined]
        spark_own = {k: v for k, v in opts.items() if not k.startswith("pushDown")}
        lo = n // 2
        width = max(1, n // 1000)
        queries: dict[str, Expr] = {
            "0.1% key range": And(GreaterThanOrEqual("o_id", lo), LessThan("o_id", lo + width)),
            "one key": EqualTo("o_id", lo),
            "string equality": EqualTo("o_status", "HELD"),
            "IN of 100 keys": In("o_id", tuple(range(lo, lo + 100 * 97, 97))),
            "OR of two ranges": Or(And(GreaterThanOrEqual("o_id", 100), LessThan("o_id", 100 + width)),
                                   And(GreaterThanOrEqual("o_id", lo), LessThan("o_id", lo + width))),
            "function (residual)": Opaque("upper(o_status) = 'OPEN' AND o_id % 1000 = 7",
                                          frozenset({"o_status", "o_id"})),
        }
        cols = ["o_id", "o_cust", "o_status", "o_total"]
        print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
              f"python={platform.python_version()} spark={spark.version} rows={n:,}")

        def hivepark_read(pred: Expr) -> int:
            d = push_filters(handler, table, pred, {})
            df = handler.read(spark, table, cols, PushedFilter(d.pushed) if d.pushed is not None else None, {})
            return (df.filter(to_filter_string(d.residual)) if d.residual is not None else df).count()

        def spark_jdbc(pred: Expr, pushdown: bool) -> int:
            o = dict(spark_own if pushdown else opts)
            df = spark.read.format("jdbc").options(**o).option("dbtable", "orders").load()
            return df.filter(to_filter_string(pred)).count()

        summary = []
        for label, pred in queries.items():
            d = push_filters(handler, table, pred, {})
            fetched = spark.read.format("jdbc").options(**opts).option(
                "dbtable", f"({handler.statement(table, cols, PushedFilter(d.pushed) if d.pushed else None)}) q"  # type: ignore[attr-defined]
            ).load().count()
            with psycopg.connect(plain) as conn:
                where = handler.statement(table, ["o_id"], PushedFilter(d.pushed)).split(" WHERE ", 1)[1] \
                    if d.pushed is not None else "TRUE"  # type: ignore[attr-defined]
                row = conn.execute(f"SELECT count(*) FROM orders WHERE {where}").fetchone()
                matching = row[0] if row else 0
            times: dict[str, list[float]] = {"hivepark": [], "spark_jdbc": [], "no_pushdown": []}
            result = {}
            for _ in range(args.repeat):
                for name, fn in (("hivepark", lambda p=pred: hivepark_read(p)),
                                 ("spark_jdbc", lambda p=pred: spark_jdbc(p, True)),
                                 ("no_pushdown", lambda p=pred: spark_jdbc(p, False))):
                    t = time.perf_counter()
                    result[name] = fn()
                    times[name].append(time.perf_counter() - t)
            assert len(set(result.values())) == 1, (label, result)
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{label:22s} rows={result['hivepark']:>8,} fetched={fetched:>9,} matching_pushed={matching:>9,} "
                  f"hivepark={med['hivepark']:.2f}s spark_jdbc={med['spark_jdbc']:.2f}s "
                  f"no_pushdown={med['no_pushdown']:.2f}s")
            summary.append((label, fetched == matching, med))
        for label, ok, med in summary:
            print(f"ratio {label:22s} hivepark/spark_jdbc={med['hivepark'] / med['spark_jdbc']:.2f} "
                  f"hivepark/no_pushdown={med['hivepark'] / med['no_pushdown']:.3f} fetched==matching={ok}")
        spark.stop()


if __name__ == "__main__":
    main()
