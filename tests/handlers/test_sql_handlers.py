"""STORED BY tables through HiveQL, on real PostgreSQL and SQLite: CREATE (columns given or
read from the source), DESCRIBE FORMATTED (secrets masked), queries whose pushed part the
database applies and whose residual Spark applies (rows compared with plain Spark reading the
same database table and running the same SQL), EXPLAIN, the ppd switches, joins with
warehouse tables, INSERT, and DROP TABLE leaving the database table alone."""

from __future__ import annotations

import datetime
import sqlite3
import sys
from decimal import Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hivepark import RecoveryWarning
from hivepark.errors import SemanticError, UnsupportedError
from hivepark.storage.handlers import UnknownStorageHandler, get_handler
from mariadb_server import MariaDBUnavailable, mariadb_server
from pg_server import PostgresUnavailable, postgres_server, require_postgres

JDBC = "org.apache.hive.storage.jdbc.JdbcStorageHandler"
STATUSES = ["open", "OPEN", "closed", "Open", None]
ORDERS = [(i, i % 37, STATUSES[i % len(STATUSES)], f"2024-0{1 + i % 9}-1{i % 10}",
           Decimal(i * 13 % 10000) / 100) for i in range(1, 3001)]
COLUMNS = "o_id BIGINT, o_cust BIGINT, o_status STRING, o_date DATE, o_total DECIMAL(12,2)"
QUERY = ("SELECT o_status, sum(o_total) AS total, count(*) AS n FROM {t} "
         "WHERE o_id BETWEEN 1000 AND 2000 AND upper(o_status) = 'OPEN' GROUP BY o_status")


@pytest.fixture(scope="module")
def pg():
    import psycopg

    server = postgres_server()
    try:
        url = server.__enter__()
    except PostgresUnavailable as e:
        if require_postgres():
            pytest.fail(f"database server unavailable: {e}")
        pytest.skip(f"database server unavailable: {e}")
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (o_id BIGINT PRIMARY KEY, o_cust BIGINT, o_status VARCHAR(10), "
                     "o_date DATE, o_total NUMERIC(12,2))")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO orders VALUES (%s, %s, %s, %s, %s)", ORDERS)
        conn.execute("CREATE TABLE sink (id BIGINT PRIMARY KEY, s VARCHAR(20))")
    props = {"hive.sql.database.type": "POSTGRES",
             "hive.sql.jdbc.url": f"jdbc:postgresql://{plain.split('@', 1)[1]}",
             "hive.sql.dbcp.username": "postgres", "hive.sql.dbcp.password": "s3cret-pw",
             "hive.sql.table": "orders"}
    yield {"props": props, "url": plain}
    server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def mariadb():
    import pymysql

    server = mariadb_server()
    try:
        host, port, db = server.__enter__()
    except MariaDBUnavailable as e:
        if require_postgres():
            pytest.fail(f"database server unavailable: {e}")
        pytest.skip(f"database server unavailable: {e}")
    conn = pymysql.connect(host=host, port=port, user="root", database=db, autocommit=True)
    with conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE orders (o_id BIGINT PRIMARY KEY, o_cust BIGINT, o_status VARCHAR(10), "
                    "o_date DATE, o_total DECIMAL(12,2))")
        cur.executemany("INSERT INTO orders VALUES (%s, %s, %s, %s, %s)", ORDERS)
    yield {"hive.sql.database.type": "MYSQL", "hive.sql.jdbc.url": f"jdbc:mariadb://{host}:{port}/{db}",
           "hive.sql.dbcp.username": "root", "hive.sql.table": "orders"}
    server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sqlite") / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (o_id INTEGER PRIMARY KEY, o_cust INTEGER, o_status TEXT, o_total REAL)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)",
                         [(i, c, s, float(t)) for i, c, s, _, t in ORDERS])
    return {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}",
            "hive.sql.table": "orders"}


def _tblprops(props: dict[str, str], **extra: str) -> str:
    return ", ".join(f"'{k}' = '{v}'" for k, v in {**props, **extra}.items())


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _plain(spark, props: dict[str, str], table: str, view: str, columns: str | None = None):
    """Plain Spark: its own JDBC source on the database table, registered as ``view``."""
    opts = get_handler("jdbc").jdbc_options(props)  # type: ignore[attr-defined]
    df = spark.read.format("jdbc").options(**opts).option("dbtable", table).load()
    if columns is not None:
        df = df.selectExpr(*[f"CAST({c.split()[0]} AS {c.split()[1]}) AS {c.split()[0]}"
                             for c in columns.split(", ")])
    df.createOrReplaceTempView(view)
    return df


def _create_orders(wh, pg, name="orders", **extra: str) -> None:
    wh.sql(f"CREATE EXTERNAL TABLE {name} ({COLUMNS}) STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(pg['props'], **extra)})")


def _explain(wh, text: str, style: str = "") -> str:
    return "\n".join(r[0] for r in wh.sql(f"EXPLAIN {style} {text}").collect())


def test_issue_example_pushed_and_residual(wh, spark, pg):
    _create_orders(wh, pg, **{"hive.sql.partitionColumn": "o_id", "hive.sql.numPartitions": "4"})
    got = _rows(wh.sql(QUERY.format(t="orders")))
    _plain(spark, pg["props"], "orders", "plain_orders", COLUMNS)
    expected = _rows(spark.sql(QUERY.format(t="plain_orders")))
    assert got == expected and got
    text = _explain(wh, QUERY.format(t="orders"))
    assert "storage handler: " + JDBC in text
    assert "pushed: ((o_id >= 1000) and (o_id <= 2000))" in text
    assert "residual: " in text and "upper(o_status)" in text.split("residual: ", 1)[1].splitlines()[0].lower()
    handler_line = next(line for line in text.splitlines() if line.startswith("  handler: "))
    assert "1000" in handler_line and "2000" in handler_line and "s3cret" not in text
    # only the columns the query uses are asked for; SELECT * asks for every one
    assert "o_status" in handler_line and "o_total" in handler_line, handler_line
    assert "o_cust" not in handler_line and "o_date" not in handler_line, handler_line
    star = next(line for line in _explain(wh, "SELECT * FROM orders WHERE o_id = 7").splitlines()
                if line.startswith("  handler: "))
    assert "o_cust" in star and "o_date" in star, star
    assert _rows(wh.sql("SELECT * FROM orders WHERE o_id < 50")) == _rows(
        spark.sql("SELECT * FROM plain_orders WHERE o_id < 50"))
    assert _rows(wh.sql("SELECT count(*) FROM orders")) == _rows(spark.sql("SELECT count(*) FROM plain_orders"))
    analyzed = _explain(wh, QUERY.format(t="orders"), "ANALYZE")
    assert "rows from the source: 1,001" in analyzed


def test_ppd_switches_push_nothing_and_keep_rows(wh, spark, pg):
    _create_orders(wh, pg)
    pushed = _rows(wh.sql(QUERY.format(t="orders")))
    for key in ("hive.optimize.ppd.storage", "hive.optimize.ppd"):
        assert _rows(wh.sql(f"SET {key}")) == [(f"{key}=true",)]
        assert (f"{key}=true",) in _rows(wh.sql("SET")) and (f"{key}=true",) in _rows(wh.sql("SET -v"))
        wh.sql(f"SET {key}=false")
        text = _explain(wh, QUERY.format(t="orders"))
        assert "pushed: none" in text and f"{key}=false" in text
        assert "rows from the source: 3,000" in _explain(wh, QUERY.format(t="orders"), "ANALYZE")
        assert _rows(wh.sql(QUERY.format(t="orders"))) == pushed
        wh.sql(f"SET {key}=true")


def test_columns_from_source_describe_masks_password(wh, pg):
    wh.sql(f"CREATE EXTERNAL TABLE src_cols STORED BY '{JDBC}' "
           f"WITH SERDEPROPERTIES ('serde.note' = 'kept') TBLPROPERTIES ({_tblprops(pg['props'])})")
    desc = _rows(wh.sql("DESCRIBE src_cols"))
    assert [r[:2] for r in sorted(desc)] == sorted([("o_id", "bigint"), ("o_cust", "bigint"),
                                                    ("o_status", "varchar(10)"), ("o_date", "date"),
                                                    ("o_total", "decimal(12,2)")])
    formatted = [tuple(r) for r in wh.sql("DESCRIBE FORMATTED src_cols").collect()]
    flat = repr(formatted)
    assert ("Storage Handler:", JDBC, "") in formatted
    assert "s3cret-pw" not in flat and "********" in flat
    assert ("", "serde.note", "kept") in formatted
    assert "s3cret-pw" not in repr(wh.sql("DESCRIBE EXTENDED src_cols").collect())
    assert "src_cols" in [r[0] for r in wh.sql("SHOW TABLES").collect()]
    assert wh.sql("SELECT count(*) FROM src_cols WHERE o_id <= 10").collect()[0][0] == 10
    assert wh.table("src_cols").count() == len(ORDERS)


def test_create_errors(wh, pg):
    with pytest.raises(UnknownStorageHandler, match="Unknown storage handler 'com.example.NoSuchHandler'"):
        wh.sql("CREATE TABLE nope (a INT) STORED BY 'com.example.NoSuchHandler'")
    with pytest.raises(UnsupportedError, match="PARTITIONED BY"):
        wh.sql(f"CREATE EXTERNAL TABLE parted (a BIGINT) PARTITIONED BY (ds STRING) STORED BY '{JDBC}' "
               f"TBLPROPERTIES ({_tblprops(pg['props'])})")
    assert wh.sql("SHOW TABLES").collect() == []


def test_join_with_partitioned_warehouse_table(wh, spark, pg):
    _create_orders(wh, pg)
    wh.sql("CREATE TABLE custs (c_id BIGINT, c_name STRING) PARTITIONED BY (region STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO custs PARTITION (region='eu') SELECT id, concat('eu', id) FROM "
           "(SELECT explode(sequence(0, 18)) AS id) x")
    wh.sql("INSERT INTO custs PARTITION (region='us') SELECT id, concat('us', id) FROM "
           "(SELECT explode(sequence(19, 36)) AS id) x")
    query = ("SELECT c.c_name, count(*) AS n, sum(o.o_total) AS total FROM {o} o JOIN {c} c ON o.o_cust = c.c_id "
             "WHERE c.region = 'eu' AND o.o_id < 500 AND o.o_status = 'open' GROUP BY c.c_name")
    got = _rows(wh.sql(query.format(o="orders", c="custs")))
    _plain(spark, pg["props"], "orders", "plain_orders", COLUMNS)
    spark.read.parquet(str(Path(wh.sql("DESCRIBE FORMATTED custs").where("col_name = 'Location:'")
                                .collect()[0][1].replace("file://", "")))).createOrReplaceTempView("plain_custs")
    expected = _rows(spark.sql(query.format(o="plain_orders", c="plain_custs")))
    assert got == expected and got
    text = _explain(wh, query.format(o="orders", c="custs"))
    assert "pushed: ((o_id < 500) and (o_status = 'open'))" in text
    assert "partitions=1/2" in text


def test_insert_select_drop(wh, pg):
    import psycopg

    wh.sql(f"CREATE EXTERNAL TABLE sink STORED BY 'jdbc' "
           f"TBLPROPERTIES ({_tblprops(pg['props'], **{'hive.sql.table': 'sink'})})")
    wh.sql("INSERT INTO sink SELECT 1, 'a'")
    wh.sql("INSERT INTO sink VALUES (2, \"it's\")")
    assert _rows(wh.sql("SELECT * FROM sink")) == [(1, "a"), (2, "it's")]
    wh.sql("INSERT OVERWRITE TABLE sink SELECT 7, 'z'")
    assert _rows(wh.sql("SELECT id, s FROM sink WHERE id > 1")) == [(7, "z")]
    with pytest.raises(SemanticError, match="PARTITION"):
        wh.sql("INSERT INTO sink PARTITION (ds='1') SELECT 8, 'y'")
    wh.sql("DROP TABLE sink")
    assert "sink" not in [r[0] for r in wh.sql("SHOW TABLES").collect()]
    with psycopg.connect(pg["url"], autocommit=True) as conn:
        assert conn.execute("SELECT id, s FROM sink").fetchall() == [(7, "z")]


def test_read_only_handler_is_clear(wh):
    from hivepark.storage.handlers import StorageHandler, register_handler

    @register_handler
    class Numbers(StorageHandler):
        name = "numbers_test"

        def schema(self, properties):
            return [("id", "bigint")]

        def read(self, spark, table, columns, pushed, settings):
            return spark.range(0, int(table.properties["n"])).select(*columns)

    wh.sql("CREATE TABLE nums STORED BY 'numbers_test' TBLPROPERTIES ('n' = '5')")
    assert _rows(wh.sql("SELECT id FROM nums WHERE id > 2")) == [(3,), (4,)]
    text = _explain(wh, "SELECT id FROM nums WHERE id > 2")
    assert "pushed: (id > 2)" in text and "residual: (id > 2)" in text
    with pytest.raises(UnsupportedError, match="read-only: its storage handler numbers_test does not support"):
        wh.sql("INSERT INTO nums SELECT 9")


def test_sqlite(wh, spark, sqlite_db):
    wh.sql(f"CREATE EXTERNAL TABLE lite STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(sqlite_db)})")
    query = ("SELECT o_status, count(*) AS n FROM {t} WHERE o_id BETWEEN 100 AND 400 "
             "AND upper(o_status) = 'OPEN' GROUP BY o_status")
    got = _rows(wh.sql(query.format(t="lite")))
    _plain(spark, sqlite_db, "orders", "plain_lite")
    assert got == _rows(spark.sql(query.format(t="plain_lite"))) and got
    assert "pushed: ((o_id >= 100) and (o_id <= 400))" in _explain(wh, query.format(t="lite"))



def test_a_relative_sqlite_path_is_the_file_create_table_read(wh, spark, tmp_path, monkeypatch):
    """Found by a hunt for bugs: 'jdbc:sqlite:shop.db' was kept as given, so the driver read
    ./shop.db at CREATE TABLE and Spark's executors opened shop.db in their own working
    directories (a cluster's: a new, empty database each; "no such table"). The path is resolved
    against the driver's working directory at CREATE, and SHOW CREATE TABLE shows it."""
    name = f"rel_{tmp_path.name}.db"
    jvm_dir = Path.cwd()  # the directory the suite started in, Spark's JVM's too
    monkeypatch.chdir(tmp_path)
    with sqlite3.connect(name) as conn:
        conn.execute("CREATE TABLE orders (o_id INTEGER PRIMARY KEY, o_status TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(1, "open"), (2, "done")])
    wh.sql(f"CREATE EXTERNAL TABLE rel (o_id BIGINT, o_status STRING) STORED BY '{JDBC}' TBLPROPERTIES ("
           f"'hive.sql.database.type'='SQLITE', 'hive.sql.jdbc.url'='jdbc:sqlite:{name}', 'hive.sql.table'='orders')")
    shown = "\n".join(r[0] for r in wh.sql("SHOW CREATE TABLE rel").collect())
    assert f"'hive.sql.jdbc.url'='jdbc:sqlite:{tmp_path}/{name}'" in shown
    monkeypatch.chdir(tmp_path.parent)  # the driver moves on; the table keeps its file
    wh.sql("INSERT INTO rel VALUES (3, 'new')")
    with sqlite3.connect(tmp_path / name) as conn:
        source = sorted(conn.execute("SELECT o_id, o_status FROM orders").fetchall())
    assert source == [(1, "open"), (2, "done"), (3, "new")]
    assert _rows(wh.sql("SELECT o_id, o_status FROM rel")) == source
    assert not (tmp_path.parent / name).exists() and not (jvm_dir / name).exists()  # no new empty database

def test_sqlite_dates_and_timestamps_in_every_form_sqlite_keeps(wh, spark, tmp_path):
    """Found by a hunt for bugs: SQLite has no date type, and sqlite-jdbc reads text only in its
    own form, so a DATE column written by Python's sqlite3 or SQLite's date() ('2024-01-05')
    failed every read with the driver's stack trace. Text of any form SQLite's date functions
    take, the driver's own numbers (hivepark's INSERT) and NULL all read; the oracle is Python's
    reading of the same database file."""
    path = tmp_path / "dates.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE ev (id INTEGER PRIMARY KEY, d DATE, ts DATETIME)")
        conn.executemany("INSERT INTO ev VALUES (?, ?, ?)", [
            (1, "2024-01-05", "2024-01-05 10:11:12"), (2, "2024-02-29", "2024-02-29T23:59:59.250"),
            (3, None, None), (4, "2024-03-01 00:00:00.000", "2024-03-01 08:00:00.000")])
        conn.execute("INSERT INTO ev VALUES (6, date('2024-05-06'), datetime('2024-05-06 07:08:09'))")
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "ev"}
    wh.sql(f"CREATE EXTERNAL TABLE ev STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    assert [tuple(r)[:2] for r in wh.sql("DESCRIBE ev").collect()] == [("id", "bigint"), ("d", "date"),
                                                                        ("ts", "timestamp")]
    wh.sql("INSERT INTO ev VALUES (5, DATE '2024-04-02', TIMESTAMP '2024-04-02 01:02:03.5')")  # stored as numbers

    def value(v, kind):  # Python's reading of what SQLite holds
        if v is None:
            return None
        if isinstance(v, int):  # sqlite-jdbc's milliseconds since the epoch (the session and JVM are UTC)
            t = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=v)
        else:
            t = datetime.datetime.fromisoformat(v)
        return t.date() if kind == "d" else t

    with sqlite3.connect(path) as conn:
        held = conn.execute("SELECT id, d, ts, typeof(d) FROM ev").fetchall()
    assert {r[3] for r in held} == {"text", "integer", "null"}
    spark.createDataFrame([(i, value(d, "d"), value(ts, "ts")) for i, d, ts, _ in held],
                          "id bigint, d date, ts timestamp").createOrReplaceTempView("py_ev")
    for q in ("SELECT * FROM {t}", "SELECT id, d FROM {t} WHERE d >= DATE '2024-02-29' AND id > 1",
              "SELECT id FROM {t} WHERE ts < TIMESTAMP '2024-03-01 08:00:00' OR ts IS NULL",
              "SELECT count(*), max(d), min(ts) FROM {t}"):
        assert _rows(wh.sql(q.format(t="ev"))) == _rows(spark.sql(q.format(t="py_ev"))), q
    assert len(_rows(wh.sql("SELECT * FROM ev"))) == 6


def test_sqlite_integers_read_as_64_bit(wh, spark, tmp_path):
    """Found by a hunt for bugs: sqlite-jdbc reports a column declared INTEGER as a 32-bit INT, and
    Spark read 5000000000 as 705032704 (pushed `k = 5000000000` returned that row with the wrong
    value, unpushed none); BIGINT it reports as DECIMAL(20,0), and a NULL in it failed the read.
    The oracle is Python's reading of the same database file."""
    path = tmp_path / "ints.db"
    rows = [(1, 5_000_000_000, 7, 1.5), (2, 3, None, None), (3, -9_007_199_254_740_993, 2**62, -0.25)]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, b BIGINT, r REAL)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "t"}
    wh.sql(f"CREATE EXTERNAL TABLE ints STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    with sqlite3.connect(path) as conn:
        held = conn.execute("SELECT id, k, b, r FROM t").fetchall()
    spark.createDataFrame(held, "id bigint, k bigint, b bigint, r double").createOrReplaceTempView("py_ints")
    for q in ("SELECT * FROM {t}", "SELECT id, k FROM {t} WHERE k = 5000000000", "SELECT b FROM {t}",
              "SELECT id FROM {t} WHERE k < -9007199254740992", "SELECT count(b), sum(k) FROM {t}"):
        assert _rows(wh.sql(q.format(t="ints"))) == _rows(spark.sql(q.format(t="py_ints"))) != [], q
    assert _rows(wh.sql("SELECT k FROM ints WHERE id = 1")) == [(5_000_000_000,)]


def test_rows_the_source_refuses_are_a_clear_error_and_change_nothing(wh, tmp_path):
    """Found by a hunt for bugs: a constraint the rows broke came out as the driver's raw
    sqlite3.IntegrityError. The source keeps its rows and no staging table is left."""
    from hivepark.errors import DataError

    path = tmp_path / "c.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT NOT NULL)")
        conn.execute("INSERT INTO t VALUES (1, 'orig')")
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "t"}
    wh.sql(f"CREATE EXTERNAL TABLE ct (id BIGINT, s STRING) STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    for stmt, broken in (("INSERT INTO ct VALUES (2, 'x'), (1, 'dup')", "UNIQUE constraint failed: t.id"),
                         ("INSERT OVERWRITE TABLE ct VALUES (9, NULL)", "NOT NULL constraint failed: t.s")):
        with pytest.raises(DataError) as e:
            wh.sql(stmt)
        assert str(e.value).startswith("The SQLITE source of default.ct refused the rows") and broken in str(e.value)
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT * FROM t").fetchall() == [(1, "orig")]
            assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["t"]


def test_mariadb_issue_example(wh, spark, mariadb):
    wh.sql(f"CREATE EXTERNAL TABLE orders ({COLUMNS}) STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(mariadb)})")
    query = QUERY + " UNION ALL SELECT o_status, sum(o_total), count(*) FROM {t} WHERE o_status = 'open' " \
        "AND o_id < 100 GROUP BY o_status"
    got = _rows(wh.sql(query.format(t="orders")))
    _plain(spark, mariadb, "orders", "plain_orders", COLUMNS)
    assert got == _rows(spark.sql(query.format(t="plain_orders"))) and got
    text = _explain(wh, query.format(t="orders"), "EXTENDED")
    assert "pushed: ((o_id >= 1000) and (o_id <= 2000))" in text and "== Spark plan ==" in text


def test_two_overwrites_at_once_leave_one_of_them_on_postgres(wh, spark, pg, tmp_path):
    """Found by a hunt for bugs: on PostgreSQL (READ COMMITTED) the DELETE of an INSERT
    OVERWRITE that waited for another overwrite's transaction did not see the rows that one
    inserted, so both statements' rows were left. A trigger holds the first overwrite's
    transaction open (as a large INSERT would) while a second warehouse overwrites."""
    import threading
    import time

    import psycopg

    import hivepark

    with psycopg.connect(pg["url"], autocommit=True) as conn:
        conn.execute("CREATE TABLE ow (id BIGINT, s VARCHAR(10))")
        conn.execute("CREATE FUNCTION ow_slow() RETURNS trigger AS $$ BEGIN "
                     "IF EXISTS (SELECT 1 FROM added WHERE s = 'A') THEN PERFORM pg_sleep(2); END IF; "
                     "RETURN NULL; END $$ LANGUAGE plpgsql")
        conn.execute("CREATE TRIGGER ow_slow AFTER INSERT ON ow REFERENCING NEW TABLE AS added "
                     "FOR EACH STATEMENT EXECUTE FUNCTION ow_slow()")
    wh.sql(f"CREATE EXTERNAL TABLE ow (id BIGINT, s STRING) STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(pg['props'], **{'hive.sql.table': 'ow'})})")
    wh.sql("INSERT INTO ow VALUES (0, 'old')")
    errors: list[BaseException] = []

    def first() -> None:
        try:
            wh.sql("INSERT OVERWRITE TABLE ow VALUES (1, 'A'), (2, 'A')")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    writer = threading.Thread(target=first)
    writer.start()
    with psycopg.connect(pg["url"], autocommit=True) as conn:
        while not conn.execute("SELECT 1 FROM pg_stat_activity WHERE query LIKE 'INSERT INTO \"ow\"%'").fetchall():
            assert writer.is_alive(), errors
            time.sleep(0.05)
    second = hivepark.connect(str(tmp_path / "warehouse"), spark=spark)
    second.sql("INSERT OVERWRITE TABLE ow VALUES (3, 'B')")
    writer.join()
    second.close()
    assert not errors
    with psycopg.connect(pg["url"], autocommit=True) as conn:
        source = sorted(conn.execute("SELECT id, s FROM ow").fetchall())
    assert source in ([(1, "A"), (2, "A")], [(3, "B")])
    assert _rows(wh.sql("SELECT id, s FROM ow")) == source


WRITER = """
import sys, hivepark
hivepark.connect(sys.argv[1]).sql(sys.argv[2])
"""


def test_a_killed_insert_leaves_its_staging_table_to_the_next_connect(spark, tmp_path):
    """Found by a hunt for bugs: a writer killed (kill -9) while Spark filled the staging table
    left hp_stage_* in the user's database for ever: no journal named it. The journal in
    <warehouse>/.hivepark/jdbc does, and the next connect() drops it; the target is as before."""
    import os
    import signal
    import subprocess

    import hivepark

    (tmp_path / "db").mkdir()
    path = tmp_path / "db" / "k.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'orig')")
    root = str(tmp_path / "warehouse")
    wh = hivepark.connect(root, spark=spark)
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "t",
             "hive.sql.dbcp.password": "never-in-a-journal"}
    wh.sql(f"CREATE EXTERNAL TABLE kt (id BIGINT, s STRING) STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    wh.close()

    def tables() -> list[str]:
        with sqlite3.connect(path) as conn:
            return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))

    env = dict(os.environ, HIVEPARK_FAULT="jdbc_staged", HIVEPARK_DRIVER_MEMORY="1g")
    proc = subprocess.run([sys.executable, "-c", WRITER, root, "INSERT OVERWRITE TABLE kt VALUES (2, 'new')"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    assert len(tables()) == 2 and tables()[0].startswith("hp_stage_")  # filled, never moved
    journals = list((tmp_path / "warehouse" / ".hivepark" / "jdbc").glob("*.json"))
    assert len(journals) == 1 and "never-in-a-journal" not in journals[0].read_text()
    os.rename(tmp_path / "db", tmp_path / "away")  # the database cannot be opened: a warning, and the journal stays
    with pytest.warns(RecoveryWarning, match=r"could not drop the staging table \S*hp_stage_\w+\S* in jdbc:sqlite:"
                                             r".*the next connect\(\) tries again \(make sure that database is "
                                             r"running and reachable with the table's properties\)") as warned:
        hivepark.connect(root, spark=spark).close()
    assert not any("never-in-a-journal" in str(w.message) for w in warned)
    assert len(list((tmp_path / "warehouse" / ".hivepark" / "jdbc").glob("*.json"))) == 1
    os.rename(tmp_path / "away", tmp_path / "db")
    wh = hivepark.connect(root, spark=spark)  # recovery drops it (with the metastore's properties)
    assert tables() == ["t"]
    assert not list((tmp_path / "warehouse" / ".hivepark" / "jdbc").glob("*.json"))
    assert _rows(wh.sql("SELECT * FROM kt")) == [(1, "orig")]
    wh.sql("INSERT INTO kt VALUES (3, 'next')")
    assert _rows(wh.sql("SELECT * FROM kt")) == [(1, "orig"), (3, "next")] and tables() == ["t"]
    wh.close()


def test_a_value_the_staging_table_refuses_is_the_same_clear_error(wh, pg, mariadb):
    """Found by a hunt for bugs: the staging table has the target's column types (and on
    MariaDB its NOT NULL), so a value too long for VARCHAR(n) or a NULL was refused by Spark's
    write into it: 'Spark failed: Job aborted ... INSERT INTO "hp_stage_..."', the staging table
    named and nothing said of the target. It is the DataError a refused move gives."""
    import psycopg

    from hivepark.errors import DataError
    from hivepark.storage.handlers.jdbc import run_sql

    with psycopg.connect(pg["url"], autocommit=True) as conn:
        conn.execute("CREATE TABLE narrow (id BIGINT, s VARCHAR(3))")
    run_sql(mariadb, "CREATE TABLE narrow (id BIGINT, s VARCHAR(3) NOT NULL)")
    for name, props, stmt, reason in (
            ("pg_narrow", pg["props"], "INSERT INTO pg_narrow VALUES (2, 'long')",
             "value too long for type character varying(3)"),
            ("my_narrow", mariadb, "INSERT INTO my_narrow VALUES (2, 'long')", "Data too long for column 's'"),
            ("my_narrow", mariadb, "INSERT OVERWRITE TABLE my_narrow VALUES (3, NULL)", "Column 's' cannot be null")):
        if name not in [r[0] for r in wh.sql("SHOW TABLES").collect()]:
            wh.sql(f"CREATE EXTERNAL TABLE {name} (id BIGINT, s STRING) STORED BY '{JDBC}' "
                   f"TBLPROPERTIES ({_tblprops(props, **{'hive.sql.table': 'narrow'})})")
            wh.sql(f"INSERT INTO {name} VALUES (1, 'ok')")
        with pytest.raises(DataError) as e:
            wh.sql(stmt)
        kind = "POSTGRES" if name.startswith("pg") else "MYSQL"
        assert str(e.value).startswith(f"The {kind} source of default.{name} refused the rows"), str(e.value)
        assert reason in str(e.value) and "hp_stage" not in str(e.value) and "Job aborted" not in str(e.value)
        assert _rows(wh.sql(f"SELECT * FROM {name}")) == [(1, "ok")]
    with psycopg.connect(pg["url"], autocommit=True) as conn:
        assert not conn.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'hp_stage%'").fetchall()
    assert not run_sql(mariadb, "SHOW TABLES LIKE 'hp_stage%'")


def test_another_writers_lock_is_a_clear_conflict_and_the_staging_table_goes(wh, spark, tmp_path):
    """Found by a hunt for bugs: while another program held SQLite's write lock, an INSERT
    failed with the driver's raw 'OperationalError: database is locked' (or Spark's 'Job
    aborted ... SQLITE_BUSY'), and a staging table it could not drop stayed. It is a
    CommitConflict that says to run it again; the next connect() drops the staging table."""
    import threading
    import time

    import hivepark
    from hivepark.errors import CommitConflict

    path = tmp_path / "l.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER, s TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'orig')")
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}?busy_timeout=500",
             "hive.sql.table": "t"}  # Spark's writes wait 0.5 s for the lock (3 s by default)
    wh.sql(f"CREATE EXTERNAL TABLE lt (id BIGINT, s STRING) STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    done = threading.Event()

    def other_program() -> None:  # takes the write lock once the INSERT made its staging table
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        while not conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'hp_stage%'").fetchall():
            time.sleep(0.005)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (99, 'other')")
        done.wait(60)
        conn.execute("COMMIT")
        conn.close()

    holder = threading.Thread(target=other_program)
    holder.start()
    try:
        with pytest.raises(CommitConflict) as e:
            wh.sql("INSERT INTO lt VALUES (2, 'new')")
    finally:
        done.set()
        holder.join()
    assert str(e.value).startswith("The SQLITE source of default.lt is held by another writer (")
    assert "database is locked" in str(e.value) and "Run the statement again" in str(e.value)
    again = hivepark.connect(str(tmp_path / "warehouse"), spark=spark)  # drops the staging table left
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["t"]
    assert _rows(again.sql("SELECT * FROM lt")) == [(1, "orig"), (99, "other")]
    again.close()


def test_a_mariadb_table_without_transactions_is_not_written_half(wh, mariadb):
    """Found by a hunt for bugs: on a MyISAM (or Aria) table the move is no transaction, so an
    INSERT OVERWRITE whose rows broke the primary key deleted the old rows and kept part of the
    new ones, under an error that said 'nothing was written and mi is as it was'. A write into
    a table of an engine without transactions is refused before anything is written."""
    from hivepark.storage.handlers.jdbc import run_sql

    run_sql(mariadb, "CREATE TABLE mi (id BIGINT PRIMARY KEY, s VARCHAR(10)) ENGINE=MyISAM")
    run_sql(mariadb, "INSERT INTO mi VALUES (1, 'orig'), (2, 'orig')")
    wh.sql(f"CREATE EXTERNAL TABLE mi (id BIGINT, s STRING) STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(mariadb, **{'hive.sql.table': 'mi'})})")
    for stmt in ("INSERT OVERWRITE TABLE mi VALUES (5, 'x'), (6, 'y'), (5, 'dup')", "INSERT INTO mi VALUES (3, 'a')"):
        with pytest.raises(UnsupportedError, match=r"its source table mi uses the MyISAM engine, which has no "
                           r"transactions.*ALTER TABLE mi ENGINE=InnoDB"):
            wh.sql(stmt)
        assert sorted(run_sql(mariadb, "SELECT id, s FROM mi")) == [(1, "orig"), (2, "orig")]
    assert not run_sql(mariadb, "SHOW TABLES LIKE 'hp_stage%'")
    assert _rows(wh.sql("SELECT * FROM mi")) == [(1, "orig"), (2, "orig")]  # reading it is fine


def test_a_source_that_cannot_be_reached_is_a_clear_error(wh, pg):
    """Found by a hunt for bugs: with the database down, an INSERT or a query of a JDBC table
    failed with SQLAlchemy's raw '(psycopg.OperationalError) connection failed: ...'. It says
    which table's source cannot be reached and what to check."""
    import socket

    from hivepark.errors import ExecutionError

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"jdbc:postgresql://127.0.0.1:{port}/nowhere"
    with pytest.warns(UserWarning, match="spark.sql cannot read table default.down .* cannot be reached"):
        wh.sql(f"CREATE EXTERNAL TABLE down (id BIGINT) STORED BY '{JDBC}' "
               f"TBLPROPERTIES ({_tblprops(pg['props'], **{'hive.sql.jdbc.url': url})})")
    for stmt in ("INSERT INTO down VALUES (1)", "SELECT * FROM down WHERE id > 0"):
        with pytest.raises(ExecutionError) as e:
            wh.sql(stmt).collect()
        text = str(e.value)
        assert text.startswith("The POSTGRES source of default.down cannot be reached (OperationalError: "), text
        assert "Connection refused" in text and "Check hive.sql.jdbc.url and the credentials" in text
        assert "s3cret-pw" not in text


def test_sqlite_integer_literals_beyond_64_bits_are_not_rounded(wh, spark, tmp_path):
    """Found by a hunt for bugs: SQLite reads an integer literal outside 64 bits as a REAL,
    rounded, so the pushed `big <= -9223372036854775809` became `<= -2**63` and returned the
    rows holding the smallest BIGINT, which Spark (comparing exactly, as decimals) does not keep.
    Such a literal is left to Spark."""
    path = tmp_path / "big.db"
    values = [-2**63, 2**63 - 1, 0, None]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, big BIGINT)")
        conn.executemany("INSERT INTO b VALUES (?, ?)", list(enumerate(values)))
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "b"}
    wh.sql(f"CREATE EXTERNAL TABLE b STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    spark.createDataFrame(list(enumerate(values)), "id bigint, big bigint").createOrReplaceTempView("plain_b")
    for cond in ("big <= -9223372036854775809", "big IN (-9223372036854775809, 0)",
                 "big >= 9223372036854775808", "NOT (big > -9223372036854775809)", "big = -9223372036854775808"):
        q = f"SELECT id FROM {{t}} WHERE {cond}"
        assert _rows(wh.sql(q.format(t="b"))) == _rows(spark.sql(q.format(t="plain_b"))), cond
    assert "pushed: (big = -9223372036854775808)" in _explain(wh, "SELECT id FROM b WHERE big = -9223372036854775808")


def test_postgres_uuid_and_json_columns_compare_as_the_text_spark_reads(wh, spark, pg):
    """Found by a hunt for bugs: PostgreSQL's uuid, json and jsonb columns are read as STRING,
    but the pushed comparisons compared them as their own types: `u = 'A0EE...'` matched the
    uuid Spark reads as 'a0ee...' (uuid input ignores case), `u = 'nope'` and `u < 'b'` failed
    the query (no uuid; no collation for uuid), `j = '{"a":1}'` matched the jsonb Spark reads as
    '{"a": 1}', and json has no `=` at all. Nothing but IS [NOT] NULL is pushed on them. LIKE was
    pushed on any string column, also a citext one (whose LIKE ignores case)."""
    from hivepark.storage.handlers.jdbc import run_sql

    run_sql(pg["props"], "CREATE EXTENSION IF NOT EXISTS citext")
    run_sql(pg["props"], "CREATE TABLE docs (id int, u uuid, j jsonb, js json, c citext)")
    run_sql(pg["props"], "INSERT INTO docs VALUES (1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\": 1}', "
                         "'{\"a\":1}', 'abc'), (2, 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '[1, 2]', '[1,2]', "
                         "'ABC'), (3, NULL, NULL, NULL, NULL)")
    wh.sql(f"CREATE EXTERNAL TABLE docs STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(pg['props'], **{'hive.sql.table': 'docs'})})")
    _plain(spark, pg["props"], "docs", "plain_docs", "id INT, u STRING, j STRING, js STRING, c STRING")
    for cond in ("u = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "u = 'nope'", "u < 'b'", "u LIKE 'a%'",
                 "u IN ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'x')", "j = '{\"a\":1}'", "j = '{\"a\": 1}'",
                 "j > '['", "js = '{\"a\":1}'", "js IN ('[1,2]')", "u IS NULL", "c LIKE 'a%'"):
        q = f"SELECT id FROM {{t}} WHERE {cond}"
        assert _rows(wh.sql(q.replace("{t}", "docs"))) == _rows(spark.sql(q.replace("{t}", "plain_docs"))), cond
    assert "pushed: none" in _explain(wh, "SELECT id FROM docs WHERE u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'")
    assert "pushed: (u is null)" in _explain(wh, "SELECT id FROM docs WHERE u IS NULL")


def test_sqlite_dates_no_date_function_reads_are_null_to_is_null(wh, spark, tmp_path):
    """Found by a hunt for bugs: a SQLite DATE or DATETIME column may hold text no date function
    reads ('', 'n/a'); hivepark reads it as NULL, but `d IS NULL` was pushed on the stored text,
    so `WHERE d IS NULL` lost those rows and `WHERE d IS NOT NULL` returned them with a NULL d.
    IS [NOT] NULL is sent on the value as read. Splits over such a column are refused clearly."""
    path = tmp_path / "odd_dates.db"
    stored = [(1, "2024-01-05", "2024-01-05 10:11:12"), (2, "", ""), (3, "n/a", "soon"), (4, None, None)]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE od (id INTEGER PRIMARY KEY, d DATE, ts DATETIME)")
        conn.executemany("INSERT INTO od VALUES (?, ?, ?)", stored)
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "od"}
    wh.sql(f"CREATE EXTERNAL TABLE od STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props)})")
    read = [(1, datetime.date(2024, 1, 5), datetime.datetime(2024, 1, 5, 10, 11, 12)), (2, None, None),
            (3, None, None), (4, None, None)]
    assert _rows(wh.sql("SELECT * FROM od")) == read  # what the reader makes of them
    spark.createDataFrame(read, "id bigint, d date, ts timestamp").createOrReplaceTempView("py_od")
    for cond in ("d IS NULL", "d IS NOT NULL", "ts IS NULL", "NOT (ts IS NULL) OR id = 2", "d IS NULL AND id > 1"):
        q = f"SELECT id FROM {{t}} WHERE {cond}"
        assert _rows(wh.sql(q.format(t="od"))) == _rows(spark.sql(q.format(t="py_od"))), cond
    assert "pushed: (d is null)" in _explain(wh, "SELECT id FROM od WHERE d IS NULL")
    # splits over such a column were refused with "'' is not a valid split bound for a date column"
    split = {"hive.sql.partitionColumn": "d", "hive.sql.numPartitions": "2"}
    with pytest.warns(UserWarning, match="cannot read table default.od_split .* a DATE column of a SQLite"):
        wh.sql(f"CREATE EXTERNAL TABLE od_split STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(props, **split)})")
    with pytest.raises(UnsupportedError, match="'d' is a DATE column of a SQLite source.*splits need a numeric"):
        wh.sql("SELECT * FROM od_split").collect()


@pytest.mark.parametrize("server", ["pg", "mariadb"])
def test_backslashes_mean_the_same_under_every_quoting_mode(wh, spark, request, server):
    """Found by a hunt for bugs: the pushed string literals were written with backslashes
    escaped, which holds only under the databases' default quoting: with MariaDB's sql_mode
    NO_BACKSLASH_ESCAPES or PostgreSQL's standard_conforming_strings off, `s = 'back\\\\slash'` was
    sent as another string (no rows) and `s > 'back\\\\'` as an unterminated literal (the query
    failed). A string with a backslash is written in a form with one meaning in every mode."""
    from sqlalchemy import text

    from hivepark.storage.handlers.jdbc import engine_for, run_sql

    props = request.getfixturevalue(server)
    props = props["props"] if server == "pg" else props
    run_sql(props, "CREATE TABLE bs (id INT, s VARCHAR(20))")
    run_sql(props, "INSERT INTO bs VALUES (1, 'back'), (2, 'x'), (3, NULL)")
    with engine_for(props).begin() as conn:  # values with backslashes, written by the driver
        conn.execute(text("INSERT INTO bs VALUES (:i, :s)"), [{"i": 4, "s": "back\\slash"}, {"i": 5, "s": "x\\_y"},
                                                              {"i": 6, "s": "a\\"}, {"i": 7, "s": "a\\' OR 'x'='x"}])
    wh.sql(f"CREATE EXTERNAL TABLE bs STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(props, **{'hive.sql.table': 'bs'})})")
    _plain(spark, props, "bs", "plain_bs", "id INT, s STRING")
    mode = ("ALTER DATABASE {db} SET standard_conforming_strings = {v}" if server == "pg" else
            "SET GLOBAL sql_mode = {v}")
    db = props["hive.sql.jdbc.url"].rsplit("/", 1)[1]
    old = None if server == "pg" else run_sql(props, "SELECT @@GLOBAL.sql_mode")[0][0]
    run_sql(props, mode.format(db=db, v="off" if server == "pg" else f"'{old},NO_BACKSLASH_ESCAPES'"))
    try:
        for cond in ("s = 'back\\\\slash'", "s IN ('x\\\\_y', 'a\\\\')", "s > 'back\\\\'", "s LIKE 'x\\\\\\\\%'",
                     "s = 'a\\\\\\' OR \\'x\\'=\\'x'", "s <> 'a\\\\'"):
            q = f"SELECT id FROM {{t}} WHERE {cond}"
            want = _rows(spark.sql(q.format(t="plain_bs")))
            assert _rows(wh.sql(q.format(t="bs"))) == want and want, cond
    finally:
        run_sql(props, f"ALTER DATABASE {db} RESET standard_conforming_strings" if server == "pg" else
                mode.format(v=f"'{old}'"))
    assert "pushed: (s = 'back\\\\slash')" in _explain(wh, "SELECT id FROM bs WHERE s = 'back\\\\slash'")


def test_a_literal_spark_refuses_is_not_answered_by_the_source(wh, spark, pg):
    """Found by a hunt for bugs: Spark refuses a numeric literal of more than 38 digits
    (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION), but such a comparison was pushed whole, so the
    query never reached Spark's parser and PostgreSQL answered it. It stays in Spark's filter and
    fails as plain Spark does."""
    from hivepark.errors import HiveParkError

    _create_orders(wh, pg)
    _plain(spark, pg["props"], "orders", "plain_orders", COLUMNS)
    for cond in ("o_id >= 1.0000000000000000000000000000000000000001",
                 "o_total > 0.100000000000000000000000000000000000001",
                 "o_cust < 99999999999999999999999999999999999999999"):
        q = f"SELECT count(*) FROM {{t}} WHERE {cond}"
        with pytest.raises(Exception, match="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"):
            spark.sql(q.format(t="plain_orders")).collect()
        with pytest.raises(HiveParkError, match="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"):
            wh.sql(q.format(t="orders")).collect()
    # 38 digits are Spark's DECIMAL(38, 0): pushed
    q = "SELECT count(*) FROM {t} WHERE o_cust < 99999999999999999999999999999999999999"
    assert _rows(wh.sql(q.format(t="orders"))) == _rows(spark.sql(q.format(t="plain_orders")))
    assert "pushed: (o_cust < 99999999999999999999999999999999999999)" in _explain(wh, q.format(t="orders"))


def test_mariadb_zero_dates_are_compared_as_read(wh, spark, mariadb):
    """Found by a hunt for bugs: MariaDB keeps zero dates ('0000-00-00', '2024-00-00'; its default
    strict sql_mode takes them), which the reader makes NULL and 2023-11-30, while the pushed
    `d IS NULL`, `d < '2000-01-01'` and `d <> '2024-01-05'` compared the stored values: the zero
    date was not NULL and before 2000. Nothing is pushed on MariaDB's DATE and DATETIME columns;
    splits over a DATE column still read each row once, their bounds from the real dates."""
    from hivepark.storage.handlers.jdbc import engine_for

    with engine_for(mariadb).begin() as conn:
        conn.exec_driver_sql("SET SESSION sql_mode = ''")
        conn.exec_driver_sql("CREATE TABLE zd (id INT, d DATE, ts DATETIME)")
        conn.exec_driver_sql("INSERT INTO zd VALUES (1, '0000-00-00', '0000-00-00 00:00:00'), "
                             "(2, '2024-01-05', '2024-01-05 10:00:00'), (3, NULL, NULL), "
                             "(4, '2024-00-00', '2024-01-06 00:00:00')")
    wh.sql(f"CREATE EXTERNAL TABLE zd STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(mariadb, **{'hive.sql.table': 'zd'})})")
    split = {"hive.sql.table": "zd", "hive.sql.partitionColumn": "d", "hive.sql.numPartitions": "3",
             "hive.sql.lowerBound": "2023-01-01", "hive.sql.upperBound": "2025-01-01"}
    wh.sql(f"CREATE EXTERNAL TABLE zd_split STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(mariadb, **split)})")
    _plain(spark, mariadb, "zd", "plain_zd", "id INT, d DATE, ts TIMESTAMP")
    assert _rows(wh.sql("SELECT id, d FROM zd")) == _rows(spark.sql("SELECT id, d FROM plain_zd")) == [
        (1, None), (2, datetime.date(2024, 1, 5)), (3, None), (4, datetime.date(2023, 11, 30))]
    for cond in ("d IS NULL", "d IS NOT NULL", "d < '2000-01-01'", "d <> '2024-01-05'", "d < '2023-12-01'",
                 "d = '2023-11-30'", "ts IS NULL", "d IN ('2024-01-05', '2023-11-30')"):
        q = f"SELECT id FROM {{t}} WHERE {cond}"
        want = _rows(spark.sql(q.format(t="plain_zd")))
        assert _rows(wh.sql(q.format(t="zd"))) == want, cond
        assert _rows(wh.sql(q.format(t="zd_split"))) == want, cond
    assert "pushed: none" in _explain(wh, "SELECT id FROM zd WHERE d IS NULL")
    # splits with bounds from MIN/MAX failed: "'0000-00-00' is not a valid split bound for a date column"
    minmax = {"hive.sql.table": "zd", "hive.sql.partitionColumn": "d", "hive.sql.numPartitions": "3"}
    wh.sql(f"CREATE EXTERNAL TABLE zd_minmax STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(mariadb, **minmax)})")
    assert _rows(wh.sql("SELECT id, d FROM zd_minmax")) == _rows(spark.sql("SELECT id, d FROM plain_zd"))


def test_mariadb_date_filters_push_a_wider_range_the_index_serves(wh, spark, mariadb):
    """Found by a hunt: nothing was pushed on a MariaDB DATE column (its zero and invalid dates are
    read as other days than they are stored as), so `d = '2024-05-01'` read the whole table and
    no index on `d` served it. A comparison, IN or BETWEEN with dates (1700 to 9999) is now also
    pushed as a range of the stored values three days wider below and 32 above (a zero month or
    day is read as the day before: '2024-00-00' as 2023-11-30; an invalid day as the days after
    the month's end: '2024-02-31' as 2024-03-02), which MariaDB answers by the index; Spark
    applies the filter itself to what is read. Rows are plain Spark's over the same table."""
    from hivepark.storage.handlers.jdbc import engine_for, run_sql

    with engine_for(mariadb).begin() as conn:
        conn.exec_driver_sql("SET SESSION sql_mode = 'ALLOW_INVALID_DATES'")
        conn.exec_driver_sql("CREATE TABLE wd (id INT PRIMARY KEY, d DATE, KEY by_d (d))")
        odd = ["0000-00-00", "2024-00-00", "2024-01-00", "2024-00-15", "2024-02-30", "2024-02-31", "2024-03-00",
               "2024-12-00", "1582-10-10", "0000-01-01", "9999-12-31", "2023-12-31", None]
        conn.exec_driver_sql("INSERT INTO wd VALUES " + ", ".join(
            f"({i}, {'NULL' if d is None else repr(d)})" for i, d in enumerate(odd)))
        conn.exec_driver_sql("INSERT INTO wd SELECT 100 + seq, '2023-06-01' + INTERVAL seq DAY FROM seq_0_to_499")
    wh.sql(f"CREATE EXTERNAL TABLE wd STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(mariadb, **{'hive.sql.table': 'wd'})})")
    _plain(spark, mariadb, "wd", "plain_wd", "id INT, d STRING")  # a year-0 date is no Python date
    for cond in ("d = '2023-11-30'", "d = '2024-03-02'", "d >= '2024-03-01'", "d > '2024-02-29'",
                 "d <= '2023-12-31'", "d < '2024-01-01'", "d IN ('2023-12-15', '2024-02-29', NULL)",
                 "d BETWEEN '2023-11-30' AND '2023-12-31'",
                 "d > '2024-02-28' OR id = 3", "d < '1600-01-01'", "d <> '2024-01-05'", "d NOT IN ('2024-03-01')",
                 "d >= '2024-11-29' AND d < '2024-12-01'", "d = '1582-10-20'"):
        q = f"SELECT id, CAST(d AS STRING) FROM {{t}} WHERE {cond}"
        want = _rows(spark.sql(q.format(t="plain_wd")))
        assert _rows(wh.sql(q.format(t="wd"))) == want and want, cond
    plan = _explain(wh, "SELECT id FROM wd WHERE d = '2024-05-01'")
    assert "pushed: ((d >= '2024-04-28') and (d <= '2024-06-02'))" in plan, plan
    assert "residual: (d = '2024-05-01')" in plan, plan
    sent = next(line for line in plan.splitlines() if "SELECT" in line).split("handler: ", 1)[1]
    assert "`d` >= CAST('2024-04-28' AS DATE) AND `d` <= CAST('2024-06-02' AS DATE)" in sent, sent
    used = run_sql(mariadb, "EXPLAIN " + sent)[0]
    assert "by_d" in used and "range" in used, used  # MariaDB reads it by the index on d
    assert "pushed: none" in _explain(wh, "SELECT id FROM wd WHERE d <> '2024-05-01'")


def test_postgres_infinite_dates_compare_as_read(wh, spark, pg):
    """Found by a hunt for bugs: PostgreSQL's 'infinity' and '-infinity' dates are read as
    9999-12-31 and 0001-01-03, but `d = '9999-12-31'` and `d < '0001-01-02'` were pushed and
    compared the infinities. A date literal outside the years 2 to 9999 is left to Spark. Splits
    take their bounds from the finite dates."""
    from hivepark.storage.handlers.jdbc import run_sql

    run_sql(pg["props"], "CREATE TABLE inf_d (id INT, d DATE)")
    run_sql(pg["props"], "INSERT INTO inf_d VALUES (1, 'infinity'), (2, '2024-01-05'), (3, NULL), "
                         "(4, '-infinity'), (5, '0001-01-01')")
    wh.sql(f"CREATE EXTERNAL TABLE inf_d STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(pg['props'], **{'hive.sql.table': 'inf_d'})})")
    _plain(spark, pg["props"], "inf_d", "plain_inf_d", "id INT, d DATE")
    for cond in ("d = '9999-12-31'", "d < '0001-01-02'", "d IN ('0001-01-03', '2024-01-05')", "d >= '9999-12-31'",
                 "d > '2024-01-01'", "d < '2024-01-06'"):
        q = f"SELECT id FROM {{t}} WHERE {cond}"
        assert _rows(wh.sql(q.format(t="inf_d"))) == _rows(spark.sql(q.format(t="plain_inf_d"))), cond
    assert "pushed: (d > '2024-01-01')" in _explain(wh, "SELECT id FROM inf_d WHERE d > '2024-01-01'")
    # splits with bounds from MIN/MAX failed: "date too small (before year 1): '-infinity'"
    minmax = {"hive.sql.table": "inf_d", "hive.sql.partitionColumn": "d", "hive.sql.numPartitions": "3"}
    wh.sql(f"CREATE EXTERNAL TABLE inf_split STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(pg['props'], **minmax)})")
    assert _rows(wh.sql("SELECT * FROM inf_split")) == _rows(spark.sql("SELECT * FROM plain_inf_d"))


def test_mariadb_enum_and_set_columns_are_strings(wh, spark, mariadb):
    """Found by a hunt for bugs: CREATE TABLE without columns over a MariaDB table with an ENUM
    or SET column failed ("has type ENUM('abc','ABD','b') ... which has no Hive counterpart"),
    though both are meant to read as STRING. They are read padded to their longest member ('b' as
    'b  ', as plain Spark reads them), so nothing but IS NULL is pushed on them."""
    from hivepark.storage.handlers.jdbc import run_sql

    run_sql(mariadb, "CREATE TABLE en (id INT, e ENUM('abc','ABD','b'), st SET('x','y'))")
    run_sql(mariadb, "INSERT INTO en VALUES (1, 'abc', 'x,y'), (2, 'ABD', 'y'), (3, NULL, ''), (4, 'b', 'x')")
    wh.sql(f"CREATE EXTERNAL TABLE en STORED BY '{JDBC}' "
           f"TBLPROPERTIES ({_tblprops(mariadb, **{'hive.sql.table': 'en'})})")
    assert [tuple(r)[:2] for r in wh.sql("DESCRIBE en").collect()] == [("id", "int"), ("e", "string"),
                                                                        ("st", "string")]
    _plain(spark, mariadb, "en", "plain_en", "id INT, e STRING, st STRING")
    assert _rows(wh.sql("SELECT * FROM en")) == _rows(spark.sql("SELECT * FROM plain_en"))
    for cond in ("e = 'ABC'", "e = 'abc'", "e < 'b'", "e IN ('abd', 'b')", "e <> 'abc'", "st = 'x,y'", "st = ''",
                 "e = 'b  '", "e IS NULL"):
        q = f"SELECT id FROM {{t}} WHERE {cond}"
        assert _rows(wh.sql(q.format(t="en"))) == _rows(spark.sql(q.format(t="plain_en"))), cond


def test_create_table_like_a_jdbc_table_copies_its_handler_and_source(wh, spark, sqlite_db):
    """Found by a hunt for bugs: CREATE TABLE t LIKE a JDBC table made an empty table of files with its
    columns (the handler and its properties dropped, with no word). As in Hive, which copies the table's
    parameters: a table of the same handler over the same source table."""
    wh.sql(f"CREATE EXTERNAL TABLE lite_src STORED BY '{JDBC}' TBLPROPERTIES ({_tblprops(sqlite_db)})")
    wh.sql("CREATE EXTERNAL TABLE lite_like LIKE lite_src")
    shown = "\n".join(r[0] for r in wh.sql("SHOW CREATE TABLE lite_like").collect())
    assert f"STORED BY '{JDBC}'" in shown and "'hive.sql.table'='orders'" in shown, shown
    _plain(spark, sqlite_db, "orders", "plain_lite_like")
    assert _rows(wh.sql("SELECT * FROM lite_like")) == _rows(spark.sql("SELECT * FROM plain_lite_like")) \
        == _rows(wh.sql("SELECT * FROM lite_src"))
    wh.sql("DROP TABLE lite_like")
    assert _rows(wh.sql("SELECT * FROM lite_src")) == _rows(spark.sql("SELECT * FROM plain_lite_like"))
