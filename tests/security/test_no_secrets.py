"""No output or error contains a password (issue 13, security suite): the ``hivepark`` command
with a metastore URL that carries one (opening or failing, with and without --verbose),
JDBC tables whose URL and properties carry one (DESCRIBE, SHOW, EXPLAIN, SET, a failing
read), settings that hold one, and statements that fail while quoting one; the library's
errors, DESCRIBE/SET rows and reprs likewise.

Every password below is a distinct marker; each run's stdout and stderr are searched for all
of them.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import background
from background import Background
from hivepark.errors import HiveParkError, MetastoreError, mask_credentials

TIMEOUT = 600
JDBC = "org.apache.hive.storage.jdbc.JdbcStorageHandler"
SECRETS = {
    "metastore": "Mst0re-pw-7731",
    "metastore_query": "MstQuery-pw-5524",
    "jdbc_url": "JdbcUrl-pw-1187",
    "dbcp": "Dbcp-pw-9042",
    "setting": "Setting-pw-3310",
    "hiveconf": "Hiveconf-pw-6605",
    "statement": "Statement-pw-2268",
    "closed_url": "ClosedUrl-pw-4479",
}


def _command() -> list[str]:
    exe = Path(sys.executable).parent / "hivepark"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "hivepark.cli"]


def _closed_port() -> int:
    """A TCP port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Run:
    proc: subprocess.Popen
    _out: tuple[int, str, str] | None = None

    def result(self) -> tuple[int, str, str]:
        if self._out is None:
            out, err = self.proc.communicate(timeout=TIMEOUT)
            self._out = (self.proc.returncode, out, err)
        return self._out


def _assert_no_secret(*texts: str) -> None:
    for text in texts:
        for name, secret in SECRETS.items():
            assert secret not in text, f"the {name} password is shown:\n{text}"


def _start_runs(bg: Background) -> None:
    """The four CLI runs, started together in the background as the suite starts
    (tests/background.py); puts "runs": name -> Run (the process still running)."""
    root = Path(bg.tmp)
    env = dict(os.environ, HIVEPARK_DRIVER_MEMORY="512m", HIVEPARK_HISTORY=str(root / "history"))
    env.pop("HIVEPARK_MASTER", None)
    source = root / "source.db"
    with sqlite3.connect(source) as conn:
        conn.execute("CREATE TABLE items (id INTEGER, s TEXT)")
        conn.execute("INSERT INTO items VALUES (1, 'a'), (2, 'b')")
    port = _closed_port()
    s = SECRETS
    (root / "jdbc.sql").write_text(f"""\
CREATE EXTERNAL TABLE j (id INT, s STRING) STORED BY '{JDBC}' TBLPROPERTIES (
  'hive.sql.database.type'='SQLITE', 'hive.sql.table'='items',
  'hive.sql.jdbc.url'='jdbc:sqlite:{source}?password={s["jdbc_url"]}',
  'hive.sql.dbcp.username'='bob', 'hive.sql.dbcp.password'='{s["dbcp"]}');
SELECT id, s FROM j ORDER BY id;
DESCRIBE j;
DESCRIBE FORMATTED j;
DESCRIBE EXTENDED j;
SHOW CREATE TABLE j;
SHOW TABLES;
EXPLAIN SELECT s FROM j WHERE id = 1;
EXPLAIN EXTENDED SELECT s FROM j WHERE id = 1;
SET javax.jdo.option.ConnectionPassword={s["setting"]};
SET javax.jdo.option.ConnectionPassword;
SET fs.s3a.secret.key;
SET my.url=postgresql://bob:{s["setting"]}@db.example/x;
SET my.url;
SET;
SET -v;
CREATE EXTERNAL TABLE closed (id INT) STORED BY '{JDBC}' TBLPROPERTIES (
  'hive.sql.database.type'='POSTGRES', 'hive.sql.table'='t',
  'hive.sql.jdbc.url'='jdbc:postgresql://127.0.0.1:{port}/db?user=bob&password={s["closed_url"]}',
  'hive.sql.dbcp.username'='bob', 'hive.sql.dbcp.password'='{s["dbcp"]}');
DESCRIBE FORMATTED closed;
SELECT * FROM closed;
""")
    metastore_ok = f"sqlite:///{root / 'ok' / 'meta.db'}?password={s['metastore_query']}"
    pg_url = f"postgresql+psycopg://bob:{s['metastore']}@127.0.0.1:{port}/meta?password={s['metastore_query']}"
    (root / "ok").mkdir()

    def start(args: list[str]) -> Run:
        proc = bg.popen([*_command(), "--master", "local[1]", *args], cwd=root, env=env,
                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return Run(proc)

    bg.put("runs", {
        "jdbc": start(["--warehouse", str(root / "ok" / "wh"), "--metastore", metastore_ok,
                       "--hiveconf", f"fs.s3a.secret.key={s['hiveconf']}", "-f", str(root / "jdbc.sql")]),
        "pg": start(["--warehouse", str(root / "pg"), "--metastore", pg_url, "-e", "SHOW TABLES"]),
        "pg_verbose": start(["--warehouse", str(root / "pgv"), "--metastore", pg_url, "--verbose",
                             "-e", "SHOW TABLES"]),
        "statement": start(["--warehouse", str(root / "st"), "-e",
                            f"CREATE TABLE x (a INT) TBLPROPERTIES ('hive.sql.dbcp.password'='{s['statement']}' "
                            f"'b'='c')"]),
    })


BACKGROUND_TESTS = {name: _start_runs for name in (
    "test_jdbc_tables_settings_and_a_failing_read_show_no_password",
    "test_a_metastore_that_cannot_open_shows_no_password", "test_verbose_traceback_shows_no_password",
    "test_a_failing_statement_that_quotes_a_password_shows_none")}


@pytest.fixture(scope="module")
def runs():
    return background.start(_start_runs).get("runs")  # the processes end with the run (Background.stop)


def test_jdbc_tables_settings_and_a_failing_read_show_no_password(runs):
    rc, out, err = runs["jdbc"].result()
    _assert_no_secret(out, err)
    assert rc == 1, err
    lines = out.splitlines()
    assert lines[:2] == ["1\ta", "2\tb"]
    assert "\thive.sql.dbcp.password\t********" in lines
    assert [ln for ln in lines if "hive.sql.jdbc.url" in ln][0].endswith("?password=***")
    ddl = [ln for ln in lines if ln.startswith("  'hive.sql.jdbc.url'=")]  # SHOW CREATE TABLE
    assert len(ddl) == 1 and ddl[0].endswith("/source.db?password=***', ")
    assert "javax.jdo.option.ConnectionPassword=***" in lines
    assert "fs.s3a.secret.key=***" in lines
    assert "my.url=postgresql://bob:***@db.example/x" in lines
    failed = [ln for ln in err.splitlines() if ln.strip() and ln != "OK"
              and not ln.startswith("Time taken: ")]  # Hive's trailer
    assert len(failed) == 1 and failed[0].startswith("FAILED: "), err  # the read of 'closed'


def test_a_metastore_that_cannot_open_shows_no_password(runs):
    rc, out, err = runs["pg"].result()
    _assert_no_secret(out, err)
    assert rc == 1
    lines = [ln for ln in err.splitlines() if ln.strip() and ln != "OK"
             and not ln.startswith("Time taken: ")]  # Hive's trailer
    assert len(lines) == 1, err
    assert lines[0].startswith("FAILED: Cannot open the metastore at postgresql+psycopg://bob:***@127.0.0.1:")
    assert "password=***" in lines[0]


def test_verbose_traceback_shows_no_password(runs):
    rc, out, err = runs["pg_verbose"].result()
    _assert_no_secret(out, err)
    assert rc == 1
    assert "Traceback" in err and "FAILED: Cannot open the metastore" in err
    assert "locals" not in err  # no rich traceback with local variables


def test_a_failing_statement_that_quotes_a_password_shows_none(runs):
    rc, out, err = runs["statement"].result()
    _assert_no_secret(out, err)
    assert rc == 1
    assert err.startswith("FAILED: ParseException")


# -- the library ----------------------------------------------------------------------------

def test_mask_credentials_forms():
    pw = SECRETS["metastore"]
    for text, shown in [
        (f"postgresql+psycopg://bob:{pw}@db:5432/meta", "postgresql+psycopg://bob:***@db:5432/meta"),
        (f"mysql+pymysql://bob:{pw}@db/x?charset=utf8", "mysql+pymysql://bob:***@db/x?charset=utf8"),
        (f"jdbc:postgresql://db/x?user=bob&password={pw}&ssl=true", "jdbc:postgresql://db/x?user=bob&password=***&ssl=true"),
        (f"jdbc:sqlserver://db;user=bob;password={pw};encrypt=true", "jdbc:sqlserver://db;user=bob;password=***;encrypt=true"),
        (f"jdbc:oracle:thin:bob/{pw}@db:1521:orcl", "jdbc:oracle:thin:bob/***@db:1521:orcl"),
        (f"'hive.sql.dbcp.password'='{pw} x'", "'hive.sql.dbcp.password'='***'"),
        (f"javax.jdo.option.ConnectionPassword={pw}", "javax.jdo.option.ConnectionPassword=***"),
        (f"{{'password': '{pw}'}}", "{'password': '***'}"),
        (f"s3a://AKIA:{pw}@bucket/key", "s3a://AKIA:***@bucket/key"),
        (f"postgresql://bob:p@ss:{pw}@db/x: refused", "postgresql://bob:***@db/x: refused"),
    ]:
        assert mask_credentials(text) == shown
        assert pw not in shown
    for plain in ("sqlite:////tmp/wh/metastore.db", "file:/tmp/a:b@c", "jdbc:postgresql://db:5432/x",
                  "line 1:18 cannot recognize input near 'x'", "mysql://bob@db/x",
                  "password authentication failed for user \"bob\""):
        assert mask_credentials(plain) == plain


def test_every_hivepark_error_is_masked():
    pw = SECRETS["metastore"]
    e = MetastoreError(f"Cannot open the metastore at postgresql://bob:{pw}@h/x?password={pw}")
    assert pw not in str(e) and pw not in e.message and pw not in repr(e)
    assert pw not in str(HiveParkError(f"'hive.sql.dbcp.password'='{pw}'"))


def test_the_handler_environment_repr_hides_the_metastore_password():
    from hivepark.storage.handlers import HandlerEnvironment

    pw = SECRETS["metastore"]
    env = HandlerEnvironment("/wh", f"postgresql+psycopg://bob:{pw}@db/meta")
    assert pw not in repr(env) and "bob:***@db" in repr(env)
    assert env.metastore_url.endswith(f"{pw}@db/meta")  # the handler itself still gets it


def test_describe_and_set_rows_hide_passwords(wh, tmp_path):
    source = tmp_path / "s.db"
    with sqlite3.connect(source) as conn:
        conn.execute("CREATE TABLE items (id INTEGER)")
    pw, url_pw = SECRETS["dbcp"], SECRETS["jdbc_url"]
    wh.sql(f"CREATE EXTERNAL TABLE j (id INT) STORED BY '{JDBC}' TBLPROPERTIES ("
           f"'hive.sql.database.type'='SQLITE', 'hive.sql.table'='items', "
           f"'hive.sql.jdbc.url'='jdbc:sqlite:{source}?password={url_pw}', 'hive.sql.dbcp.password'='{pw}')")
    wh.sql(f"SET hive.sql.dbcp.password={pw}")
    shown = []
    for statement in ("DESCRIBE j", "DESCRIBE FORMATTED j", "DESCRIBE EXTENDED j", "SHOW CREATE TABLE j",
                      "SET", "SET -v",
                      "SET hive.sql.dbcp.password", "EXPLAIN SELECT id FROM j WHERE id = 1"):
        shown += [repr(tuple(r)) for r in wh.sql(statement).collect()]
    _assert_no_secret("\n".join(shown))
    assert wh.conf("hive.sql.dbcp.password") == pw  # kept, only never shown


def test_partition_names_are_data_and_stay_as_they_are(wh):
    wh.sql("CREATE TABLE logins (n INT) PARTITIONED BY (pwd STRING)")
    wh.sql("INSERT INTO logins PARTITION (pwd='home') VALUES (1)")
    assert [r[0] for r in wh.sql("SHOW PARTITIONS logins").collect()] == ["pwd=home"]
