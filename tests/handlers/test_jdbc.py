"""The JDBC handler against real PostgreSQL, MariaDB and SQLite: every read (pushed part in
the database, residual in Spark) keeps exactly the rows plain Spark keeps when it reads the
same database table with no pushdown and applies the whole filter."""

from __future__ import annotations

import datetime
import sqlite3
import sys
from decimal import Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hivepark.catalog.models import Column, Table
from hivepark.expr import (
    And,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Like,
    Not,
    NotEqualTo,
    Opaque,
    Or,
    to_filter_string,
)
from hivepark.storage.handlers import PushedFilter, get_handler, push_filters
from hivepark.types import HiveType
from mariadb_server import MariaDBUnavailable, mariadb_server
from pg_server import PostgresUnavailable, postgres_server, require_postgres

TRICKY = ["x", "X", "x ", "it's", "a\\b", "%", "", "ab", "b", "é", "' OR '1'='1", None]
ROWS = [(i, (i % 7) - 3 if i % 5 else None, TRICKY[i % len(TRICKY)],
         datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 9) if i % 4 else None,
         Decimal(i * 37 % 1000) / 100 if i % 6 else None, i % 3)
        for i in range(1, 61)]
HIVE_COLUMNS = (Column("id", "bigint"), Column("k", "int"), Column("s", "string"), Column("d", "date"),
                Column("amt", "decimal(12,2)"), Column("mixed case", "int"))
DDL = ('CREATE TABLE {t} (id BIGINT PRIMARY KEY, k INT, s VARCHAR(20), d DATE, amt DECIMAL(12,2), '
       '{q}Mixed Case{q} INT)')


def _server(cm, unavailable):
    server = cm()
    try:
        return server, server.__enter__()
    except unavailable as e:
        if require_postgres():
            pytest.fail(f"database server unavailable: {e}")
        pytest.skip(f"database server unavailable: {e}")


@pytest.fixture(scope="module")
def postgres():
    import psycopg

    server, url = _server(postgres_server, PostgresUnavailable)
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(DDL.format(t='"Items"', q='"'))
        with conn.cursor() as cur:
            cur.executemany('INSERT INTO "Items" VALUES (%s, %s, %s, %s, %s, %s)', ROWS)
    host_port_db = plain.split("@", 1)[1]
    yield {"hive.sql.database.type": "POSTGRES", "hive.sql.jdbc.url": f"jdbc:postgresql://{host_port_db}",
           "hive.sql.dbcp.username": "postgres", "hive.sql.dbcp.password": "unused-secret",
           "hive.sql.table": "Items"}
    server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def mariadb():
    import pymysql

    server, (host, port, db) = _server(mariadb_server, MariaDBUnavailable)
    conn = pymysql.connect(host=host, port=port, user="root", database=db, autocommit=True)
    with conn:
        cur = conn.cursor()
        cur.execute(DDL.format(t="`Items`", q="`"))
        cur.executemany("INSERT INTO `Items` VALUES (%s, %s, %s, %s, %s, %s)", ROWS)
    yield {"hive.sql.database.type": "MARIADB", "hive.sql.jdbc.url": f"jdbc:mariadb://{host}:{port}/{db}",
           "hive.sql.dbcp.username": "root", "hive.sql.table": "Items"}
    server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sqlite") / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute('CREATE TABLE "Items" (id INTEGER PRIMARY KEY, k INTEGER, s TEXT, n STRING, f REAL)')
        conn.executemany('INSERT INTO "Items" VALUES (?, ?, ?, ?, ?)',
                         [(i, k, s, "007" if i % 2 else "7", i / 4) for i, k, s, *_ in ROWS])
    return {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}",
            "hive.sql.table": "Items"}


SERVER_PREDICATES: list[Expr] = [
    And(GreaterThanOrEqual("id", 10), LessThanOrEqual("id", 20)),
    NotEqualTo("k", 1),
    Not(In("k", (1, 2))),
    In("k", (1, None)),
    Not(In("k", (1, None))),
    EqualTo("s", "x"),
    In("s", ("x", "it's", "a\\b", "' OR '1'='1")),
    LessThan("s", "b"),
    NotEqualTo("s", "x"),
    Or(EqualTo("s", "%"), IsNull("s")),
    Like("s", "%'%"),
    GreaterThan("d", datetime.date(2024, 1, 5)),
    EqualTo("d", "2024-01-03"),
    GreaterThanOrEqual("amt", Decimal("3.70")),
    EqualTo("mixed case", 2),
    And(LessThan("id", 30), Opaque("upper(s) = 'X'", frozenset({"s"}))),
]


def _table(props: dict[str, str], columns=HIVE_COLUMNS, **extra: str) -> Table:
    return Table("default", "items", columns, table_type="EXTERNAL_TABLE",
                 properties={"storage_handler": "org.apache.hive.storage.jdbc.JdbcStorageHandler", **props, **extra})


def _plain(spark, table: Table):
    """Plain Spark: its JDBC source on the same database table, no pushdown at all; a SQLite
    table's columns read as their declared types (``customSchema``: sqlite-jdbc reports INTEGER as
    a 32-bit INT and NUMERIC as a decimal, so a STRING column's 7 would read '7.000000000000000000')."""
    h = get_handler("jdbc")
    opts = h.jdbc_options(table.properties)  # type: ignore[attr-defined]
    if "SQLITE" in str(table.properties):
        opts["customSchema"] = ", ".join(f"`{c.name}` {HiveType.parse(c.type).spark_ddl}" for c in table.columns)
    if "hive.sql.query" in table.properties:
        df = spark.read.format("jdbc").options(**opts).option("query", table.properties["hive.sql.query"]).load()
    else:
        name = table.properties["hive.sql.table"]
        quote = "`" if "MARIADB" in str(table.properties) else '"'
        df = spark.read.format("jdbc").options(**opts).option("dbtable", quote + name + quote).load()
    df = df.toDF(*[c.lower() for c in df.columns])
    types = {c.name: HiveType.parse(c.type).spark_ddl for c in table.columns}
    return df.select(*[df[f"`{c}`"].cast(types[c]).alias(c) for c in df.columns if c in types])


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _check(spark, table: Table, predicate: Expr, columns: list[str]):
    handler = get_handler("jdbc")
    d = push_filters(handler, table, predicate, {})
    got = handler.read(spark, table, columns, PushedFilter(d.pushed) if d.pushed is not None else None, {})
    if d.residual is not None:
        got = got.filter(to_filter_string(d.residual))
    plain = _plain(spark, table)
    expected = plain.filter(to_filter_string(predicate)).select(*[f"`{c}`" for c in columns])
    assert _rows(got) == _rows(expected), (to_filter_string(predicate), d)
    return d


@pytest.mark.parametrize("predicate", SERVER_PREDICATES, ids=to_filter_string)
@pytest.mark.parametrize("server", ["postgres", "mariadb"])
def test_reads_match_plain_spark(spark, request, server, predicate):
    props = request.getfixturevalue(server)
    _check(spark, _table(props), predicate, [c.name for c in HIVE_COLUMNS])


def test_postgres_pushes_what_compares_exactly(postgres):
    handler, table = get_handler("jdbc"), _table(postgres)
    whole = And(And(GreaterThanOrEqual("id", 10), Like("s", "a%")), Opaque("upper(s) = 'X'", frozenset({"s"})))
    d = push_filters(handler, table, whole, {})
    assert d.pushed == And(GreaterThanOrEqual("id", 10), Like("s", "a%"))
    sql = handler.describe_scan(table, ["id", "s"], PushedFilter(d.pushed))
    assert sql == ('SELECT "id" AS "id", "s" AS "s" FROM "Items" WHERE "id" >= 10 AND "s" LIKE \'a%\' ESCAPE e\'\\\\\'')
    assert "unused-secret" not in sql


def test_mariadb_string_equality_is_exact(spark, mariadb):
    handler, table = get_handler("jdbc"), _table(mariadb)
    d = _check(spark, table, EqualTo("s", "x"), ["id", "s"])
    assert d.residual is None  # pushed in a form that compares exactly
    sql = handler.describe_scan(table, ["s"], PushedFilter(d.pushed))  # type: ignore[arg-type]
    assert "CAST(`s` AS BINARY) = CAST('x' AS BINARY)" in sql
    assert push_filters(handler, table, Like("s", "x%"), {}).pushed is None  # LIKE ignores case there


def test_quotes_and_backslashes_never_change_the_statement(postgres, mariadb):
    handler = get_handler("jdbc")
    evil = "' OR '1'='1"
    pg = handler.describe_scan(_table(postgres), ["id"], PushedFilter(EqualTo("s", evil)))
    assert pg.endswith("""WHERE "s" = ''' OR ''1''=''1'""")
    my = handler.describe_scan(_table(mariadb), ["id"], PushedFilter(EqualTo("s", "a'b")))
    assert "'a''b'" in my
    # a backslash: in a form that means the same with or without NO_BACKSLASH_ESCAPES
    my = handler.describe_scan(_table(mariadb), ["id"], PushedFilter(EqualTo("s", "a\\b'")))
    assert "_utf8mb4 x'615c6227'" in my


def test_sqlite_affinity(spark, sqlite_db):
    columns = (Column("id", "bigint"), Column("k", "int"), Column("s", "string"), Column("n", "string"),
               Column("f", "double"))
    table = _table(sqlite_db, columns)
    handler = get_handler("jdbc")
    for predicate in [And(GreaterThan("id", 5), LessThan("k", 2)), EqualTo("s", "x"), EqualTo("n", "007"),
                      GreaterThan("f", 2.5), In("k", (0, None))]:
        _check(spark, table, predicate, ["id", "k", "s", "n", "f"])
    # n is declared STRING: NUMERIC affinity stored '007' as 7, so it is never pushed
    assert push_filters(handler, table, EqualTo("n", "007"), {}).pushed is None
    assert push_filters(handler, table, EqualTo("s", "x"), {}).residual is None


def test_sqlite_columns_of_another_collation_compare_bytewise(spark, tmp_path):
    """Found by a hunt for bugs: a SQLite column declared COLLATE NOCASE or RTRIM compared the
    pushed `s = 'abc'` ignoring case (or trailing spaces) where Spark compares bytes: rows Spark
    would not keep came back. String comparisons are sent under COLLATE BINARY."""
    path = tmp_path / "coll.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE coll (id INTEGER PRIMARY KEY, s TEXT COLLATE NOCASE, v TEXT COLLATE RTRIM)")
        conn.executemany("INSERT INTO coll VALUES (?, ?, ?)", [(1, "abc", "a"), (2, "ABC", "a  "), (3, "b", "B")])
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}", "hive.sql.table": "coll"}
    table = _table(props, (Column("id", "bigint"), Column("s", "string"), Column("v", "string")))
    for predicate in (EqualTo("s", "abc"), LessThan("s", "b"), In("s", ("ABC", "x")), EqualTo("v", "a"),
                      NotEqualTo("v", "a")):
        assert _check(spark, table, predicate, ["id", "s", "v"]).pushed is not None


def test_postgres_pushes_nothing_the_source_would_compare_otherwise(spark, postgres):
    """Found by a hunt for bugs: PostgreSQL compares a citext column, or one of a nondeterministic
    collation, ignoring case; an unconstrained NUMERIC is compared unrounded but read as
    DECIMAL(38,18); and a column CREATE TABLE declared with another type than the source's (DATE
    over a timestamp, BIGINT over a float, INT over text) compares as the source's type. Each
    was pushed: wrong rows, or a syntax error the source raised. A column of a type with no Hive
    counterpart (point) failed every read of the table, even when not read."""
    import psycopg

    url = "postgresql://" + postgres["hive.sql.jdbc.url"].split("//", 1)[1]
    with psycopg.connect(url, user="postgres", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS citext")
        conn.execute("CREATE COLLATION IF NOT EXISTS ci_und (provider = icu, locale = 'und-u-ks-level2', "
                     "deterministic = false)")
        conn.execute("CREATE TABLE oddities (id int, c citext, n text COLLATE ci_und, x numeric, ts timestamp, "
                     "f float8, vt text, loc point)")
        conn.execute("INSERT INTO oddities VALUES (1, 'abc', 'abc', 1, '2024-01-05 10:00', 1.5, '0100', '(1,2)'), "
                     "(2, 'ABC', 'ABC', 1::numeric / 3, '2024-01-05 00:00', 2.0, '100', NULL), "
                     "(3, 'Y', 'Y', 0.0000000000000000001, NULL, NULL, 'x', NULL)")
    columns = (Column("id", "int"), Column("c", "string"), Column("n", "string"), Column("x", "decimal(38,18)"),
               Column("ts", "date"), Column("f", "bigint"), Column("vt", "string"))
    table = _table({**postgres, "hive.sql.table": "oddities"}, columns)
    for predicate in (EqualTo("c", "abc"), LessThan("c", "b"), EqualTo("n", "abc"), NotEqualTo("n", "abc"),
                      EqualTo("x", 1), GreaterThan("x", 0), EqualTo("x", Decimal("0.333333333333333333")),
                      EqualTo("ts", datetime.date(2024, 1, 5)), GreaterThan("f", 1), EqualTo("vt", "100"),
                      IsNull("ts")):
        _check(spark, table, predicate, [c.name for c in columns])
    for predicate in (EqualTo("c", "abc"), EqualTo("n", "abc"), GreaterThan("x", 0), EqualTo("ts", "2024-01-05"),
                      GreaterThan("f", 1)):
        assert push_filters(get_handler("jdbc"), table, predicate, {}).pushed is None, predicate
    assert push_filters(get_handler("jdbc"), table, EqualTo("vt", "100"), {}).pushed is not None


def test_schema_from_the_source(postgres, mariadb, sqlite_db):
    from hivepark.errors import UnsupportedError

    handler = get_handler("jdbc")
    assert handler.schema(postgres) == [("id", "bigint"), ("k", "int"), ("s", "varchar(20)"), ("d", "date"),
                                        ("amt", "decimal(12,2)"), ("mixed case", "int")]
    assert handler.schema(mariadb) == handler.schema(postgres)
    # SQLite: a column declared STRING has NUMERIC affinity (no Hive type holds it exactly)
    with pytest.raises(UnsupportedError, match="Column 'n' has type STRING in the SQLITE source"):
        handler.schema(sqlite_db)


@pytest.mark.parametrize("server", ["postgres", "mariadb"])
def test_splits_read_each_row_exactly_once(spark, request, server):
    props = request.getfixturevalue(server)
    handler = get_handler("jdbc")
    for extra in ({"hive.sql.partitionColumn": "k", "hive.sql.numPartitions": "4"},
                  {"hive.sql.partitionColumn": "id", "hive.sql.numPartitions": "3",
                   "hive.sql.lowerBound": "20", "hive.sql.upperBound": "40"}):
        table = _table(props, **extra)
        df = handler.read(spark, table, ["id", "k"], None, {})
        assert df.rdd.getNumPartitions() > 1
        ids = [r.id for r in df.collect()]
        assert sorted(ids) == list(range(1, 61))
    table = _table(props, **{"hive.sql.partitionColumn": "id", "hive.sql.numPartitions": "3",
                             "hive.sql.lowerBound": "20", "hive.sql.upperBound": "40"})
    text = handler.describe_scan(table, ["id"], None)
    assert "split 1" in text and "IS NULL" in text


def test_unknown_source_type_is_clear(postgres):
    import psycopg

    from hivepark.errors import UnsupportedError

    url = postgres["hive.sql.jdbc.url"].replace("jdbc:postgresql://", "postgresql://postgres@")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE odd (id INT, span INTERVAL)")
    with pytest.raises(UnsupportedError, match="Column 'span' has type interval"):
        get_handler("jdbc").schema({**postgres, "hive.sql.table": "odd"})


@pytest.mark.parametrize("server", ["postgres", "mariadb"])
def test_insert_and_overwrite_all_or_nothing(spark, request, server):
    props = request.getfixturevalue(server)
    handler = get_handler("jdbc")
    quote = '"' if server == "postgres" else "`"
    target = "w_" + server
    create = f"CREATE TABLE {quote}{target}{quote} (id BIGINT PRIMARY KEY, s VARCHAR(20))"
    if server == "postgres":
        import psycopg

        url = props["hive.sql.jdbc.url"].replace("jdbc:postgresql://", "postgresql://postgres@")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(create)
    else:
        from hivepark.storage.handlers.jdbc import run_sql

        run_sql(props, create)
    table = _table({**props, "hive.sql.table": target}, (Column("id", "bigint"), Column("s", "string")))
    handler.write(spark, table, spark.createDataFrame([(1, "a"), (2, "it's")], "id bigint, s string"), False)
    handler.write(spark, table, spark.createDataFrame([(3, "c")], "id bigint, s string"), False)
    assert _rows(handler.read(spark, table, ["id", "s"], None, {})) == [(1, "a"), (2, "it's"), (3, "c")]
    # a failing write (duplicate key) changes nothing
    with pytest.raises(Exception):  # noqa: B017 - the database's own error
        handler.write(spark, table, spark.createDataFrame([(4, "d"), (1, "dup")], "id bigint, s string"), False)
    assert _rows(handler.read(spark, table, ["id"], None, {})) == [(1,), (2,), (3,)]
    handler.write(spark, table, spark.createDataFrame([(9, "z")], "id bigint, s string"), True)
    assert _rows(handler.read(spark, table, ["id", "s"], None, {})) == [(9, "z")]


def _mariadb_run(props: dict[str, str], sql: str, rows: list[tuple] | None = None) -> None:
    import pymysql

    host_port, db = props["hive.sql.jdbc.url"].split("//", 1)[1].split("/", 1)
    host, port = host_port.split(":")
    with pymysql.connect(host=host, port=int(port), user="root", database=db, autocommit=True,
                         charset="utf8mb4") as conn:
        cur = conn.cursor()
        if rows is None:
            cur.execute(sql)
        else:
            cur.executemany(sql, rows)


def test_mariadb_strings_of_another_character_set(spark, mariadb):
    """Found by a hunt for bugs: on a column whose character set is not utf8mb4 (latin1), the
    pushed `CAST(name AS BINARY) = CAST('é' AS BINARY)` compared the column's latin1 bytes with
    the literal's utf8 bytes (no row matched 'é', ranges were wrong) and a literal latin1 cannot
    hold ('😀') failed the query ('Illegal mix of collations'). The column is compared as its
    utf8mb4 conversion, which is what the reader receives."""
    _mariadb_run(mariadb, "CREATE TABLE cs (id INT PRIMARY KEY, l VARCHAR(20) CHARACTER SET latin1, "
                          "m VARCHAR(20) CHARACTER SET utf8mb3, u VARCHAR(20) CHARACTER SET utf8mb4)")
    values = ["é", "e", "ä", "z", "É", "x ", "X", None]
    _mariadb_run(mariadb, "INSERT INTO cs VALUES (%s, %s, %s, %s)",
                 [(i, v, v, v) for i, v in enumerate(values)] + [(100, None, None, "😀")])
    columns = (Column("id", "int"), Column("l", "string"), Column("m", "string"), Column("u", "string"))
    handler = get_handler("jdbc")
    for props in ({**mariadb, "hive.sql.table": "cs"},
                  {k: v for k, v in {**mariadb, "hive.sql.query": "SELECT id, l, m, u FROM cs"}.items()
                   if k != "hive.sql.table"}):
        table = _table(props, columns)
        for col in ("l", "m", "u"):
            for predicate in (EqualTo(col, "é"), In(col, ("é", "ä", None)), LessThan(col, "é"),
                              GreaterThan(col, "z"), NotEqualTo(col, "é"), EqualTo(col, "😀"),
                              In(col, ("😀", "e")), EqualTo(col, "x")):
                assert _check(spark, table, predicate, ["id", col]).residual is None, (props, predicate)
        sql = handler.describe_scan(table, ["id"], PushedFilter(EqualTo("u", "é")))
        assert "`u` = 'é' AND" in sql  # utf8mb4: the index's own comparison first


def test_mariadb_boolean_holding_other_values(spark, mariadb):
    """Found by a hunt for bugs: a MariaDB BOOLEAN (TINYINT(1)) may hold 2 or -1, which the reader
    reads as true, but `active = true` was pushed as `active = 1` (those rows were lost, and
    `NOT active` kept them). The column is compared as `(active <> 0)`."""
    _mariadb_run(mariadb, "CREATE TABLE flags (id INT PRIMARY KEY, active BOOLEAN)")
    _mariadb_run(mariadb, "INSERT INTO flags VALUES (1, 1), (2, 0), (3, 2), (4, -1), (5, NULL), (6, 127)")
    table = _table({**mariadb, "hive.sql.table": "flags"}, (Column("id", "int"), Column("active", "boolean")))
    assert _rows(get_handler("jdbc").read(spark, table, ["id", "active"], None, {})) == [
        (1, True), (2, False), (3, True), (4, True), (5, None), (6, True)]
    for predicate in (EqualTo("active", True), EqualTo("active", False), NotEqualTo("active", True),
                      Not(EqualTo("active", True)), In("active", (True,)), In("active", (False, None)),
                      Not(In("active", (False,))), LessThan("active", True), GreaterThan("active", False),
                      LessThanOrEqual("active", True), GreaterThanOrEqual("active", True)):
        assert _check(spark, table, predicate, ["id", "active"]).residual is None, predicate


def test_query_tables_follow_the_source_types(spark, postgres, mariadb):
    """Found by a hunt for bugs: for a hive.sql.query table every column was taken as comparing
    exactly, so a DATE declared over a timestamp result column was pushed as `d = DATE '...'`
    (only midnight matched) and an unconstrained NUMERIC compared unrounded. The query's result
    columns are typed by the source (a temporary view / an empty temporary table of it), and the
    rules of hive.sql.table hold."""
    import psycopg

    url = "postgresql://" + postgres["hive.sql.jdbc.url"].split("//", 1)[1]
    with psycopg.connect(url, user="postgres", autocommit=True) as conn:
        conn.execute("CREATE COLLATION IF NOT EXISTS ci_und (provider = icu, locale = 'und-u-ks-level2', "
                     "deterministic = false)")
        conn.execute("CREATE TABLE ev (id BIGINT, created TIMESTAMP, amt NUMERIC, name TEXT)")
        conn.execute("INSERT INTO ev VALUES (1, '2024-01-05 00:00:00', 1.1234567890123456789, 'abc'), "
                     "(2, '2024-01-05 13:30:00', 2.5, 'ABC'), (3, '2024-01-06 09:00:00', 3, 'x'), "
                     "(4, NULL, NULL, NULL)")
    _mariadb_run(mariadb, "CREATE TABLE ev (id BIGINT, created DATETIME, name VARCHAR(20))")
    _mariadb_run(mariadb, "INSERT INTO ev VALUES (1, '2024-01-05 00:00:00', 'abc'), (2, '2024-01-05 13:30:00', 'ABC'), "
                          "(3, '2024-01-06 09:00:00', 'x'), (4, NULL, NULL)")
    handler = get_handler("jdbc")
    for props, query, columns in (
            (postgres, 'SELECT id, created AS d, amt, name COLLATE ci_und AS n, name AS s FROM "ev"',
             (Column("id", "bigint"), Column("d", "date"), Column("amt", "decimal(38,18)"), Column("n", "string"),
              Column("s", "string"))),
            (mariadb, "SELECT id, created AS d, name AS s FROM ev",
             (Column("id", "bigint"), Column("d", "date"), Column("s", "string")))):
        props = {k: v for k, v in props.items() if k != "hive.sql.table"}
        table = _table({**props, "hive.sql.query": query}, columns)
        names = [c.name for c in columns]
        for predicate in (EqualTo("d", datetime.date(2024, 1, 5)), GreaterThan("d", "2024-01-05"),
                          EqualTo("amt", Decimal("1.123456789012345679")), GreaterThan("amt", 2),
                          EqualTo("n", "abc"), EqualTo("s", "abc"), GreaterThan("id", 1)):
            if predicate.term in names:
                _check(spark, table, predicate, names)
        for predicate in (EqualTo("d", datetime.date(2024, 1, 5)), EqualTo("amt", 1), EqualTo("n", "abc")):
            if predicate.term in names:
                assert push_filters(handler, table, predicate, {}).pushed is None, predicate
        for predicate in (GreaterThan("id", 1), EqualTo("s", "abc")):
            assert push_filters(handler, table, predicate, {}).residual is None, predicate


def test_sqlite_values_of_another_storage_class(spark, tmp_path):
    """Found by a hunt for bugs: SQLite keeps a value of another storage class than the column's
    affinity (1.5 or 'n/a' in an INTEGER column, 'n/a' in a REAL one, a BLOB in a TEXT one); the
    reader shows it converted (1, 0, 0.0, the blob's text) and an INT column's 5000000000 as its
    low 32 bits, but the pushed SQL compared the stored values: `k = 1` lost the 1.5 row. Pushed
    comparisons read the column as the reader does; a STRICT table's columns are compared as
    they are."""
    path = tmp_path / "classes.db"
    values = [1, 1.5, -1.5, 2, "n/a", "12abc", " 12", "1e3", b"12", 5000000000, 705032704, -2**31 - 1, 1e20,
              70000, 200, None]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, k INTEGER, f REAL, t TEXT)")
        conn.executemany("INSERT INTO m VALUES (?, ?, ?, ?)", [(i, v, v, v) for i, v in enumerate(values)])
        conn.execute("CREATE TABLE s (id INTEGER PRIMARY KEY, k INTEGER, f REAL, t TEXT) STRICT")
        conn.executemany("INSERT INTO s VALUES (?, ?, ?, ?)",
                         [(1, 1, 1.5, "a"), (2, 5000000000, 0, "12"), (3, None, None, None), (4, 0, 2, "b")])
    props = {"hive.sql.database.type": "SQLITE", "hive.sql.jdbc.url": f"jdbc:sqlite:{path}"}
    handler = get_handler("jdbc")
    predicates = [EqualTo("k", 1), GreaterThan("k", 1), NotEqualTo("k", 1), EqualTo("k", 0), In("k", (0, 12, None)),
                  Not(In("k", (1, 12))), EqualTo("k", 705032704), LessThan("k", -100), EqualTo("k", 1000),
                  EqualTo("f", 0.0), GreaterThan("f", 1.0), EqualTo("f", 12.0), EqualTo("t", "12"), LessThan("t", "2")]
    for name in ("m", "s"):
        for k_type in ("bigint", "int", "smallint", "tinyint"):
            columns = (Column("id", "bigint"), Column("k", k_type), Column("f", "double"), Column("t", "string"))
            table = _table({**props, "hive.sql.table": name}, columns)
            for predicate in predicates:
                d = _check(spark, table, predicate, ["id", "k", "f", "t"])
                assert d.residual is None, (name, k_type, predicate)
    # a STRICT table holds each column's own class: its values are compared as they are
    strict = _table({**props, "hive.sql.table": "s"},
                    (Column("id", "bigint"), Column("k", "bigint"), Column("f", "double"), Column("t", "string")))
    sql = handler.describe_scan(strict, ["id"], PushedFilter(And(And(EqualTo("k", 1), EqualTo("f", 1.5)),
                                                                   EqualTo("t", "a"))))
    assert sql.endswith('WHERE ("k" = 1 AND "f" = 1.5E0) AND "t" COLLATE BINARY = \'a\''), sql
    sql = handler.describe_scan(_table({**props, "hive.sql.table": "m"}, strict.columns), ["id"],
                                PushedFilter(EqualTo("k", 1)))
    assert sql.endswith('WHERE (CAST("k" AS INTEGER)) = 1'), sql
