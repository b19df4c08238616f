"""A real, throwaway MariaDB server for the JDBC handler tests.

``mariadb_server()`` initialises a data directory in a temporary directory
(``mariadb-install-db``), starts ``mariadbd`` on a free loopback port with its socket in
that directory, creates a database and yields ``(host, port, database)``; the ``root``
user needs no password over TCP from 127.0.0.1. On exit it stops the server and removes
the directory. As root, the server runs as the ``mysql`` OS user (created by the Debian
package). When MariaDB is missing, :class:`MariaDBUnavailable` is raised (the fixtures skip,
or fail when ``HIVEPARK_REQUIRE_POSTGRES=1``, which the test command sets).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DB_NAME = "hivepark_test"


class MariaDBUnavailable(RuntimeError):
    """No usable MariaDB installation."""


def _binary(name: str) -> str:
    found = shutil.which(name) or (f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None)
    if found is None:
        raise MariaDBUnavailable(f"{name} not found; install MariaDB (Debian: apt-get install mariadb-server)")
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def mariadb_server() -> Iterator[tuple[str, int, str]]:
    mariadbd = _binary("mariadbd")
    install = _binary("mariadb-install-db")
    root = Path(tempfile.mkdtemp(prefix="hivepark-mariadb-"))
    data = root / "data"
    user = ["--user=mysql"] if os.geteuid() == 0 else []
    proc: subprocess.Popen[bytes] | None = None
    try:
        if os.geteuid() == 0:
            shutil.chown(root, "mysql", "mysql")
        init = subprocess.run([install, "--no-defaults", f"--datadir={data}",
                               "--auth-root-authentication-method=normal", "--skip-test-db", *user],
                              capture_output=True, text=True, timeout=180, check=False)
        if init.returncode != 0:
            raise MariaDBUnavailable(f"mariadb-install-db failed: {init.stderr[-2000:]}")
        port = _free_port()
        log = open(root / "server.log", "wb")  # noqa: SIM115 - closed with the server
        proc = subprocess.Popen([mariadbd, "--no-defaults", f"--datadir={data}", f"--port={port}",
                                 "--bind-address=127.0.0.1", f"--socket={root / 'mysqld.sock'}",
                                 f"--pid-file={root / 'mysqld.pid'}", "--skip-name-resolve",
                                 "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=64M",
                                 "--skip-log-bin", *user], stdout=log, stderr=subprocess.STDOUT)
        _create_database(port, proc, root)
        yield "127.0.0.1", port, DB_NAME
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(root, ignore_errors=True)


def _create_database(port: int, proc: subprocess.Popen[bytes], root: Path) -> None:
    import pymysql

    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise MariaDBUnavailable(f"mariadbd exited: {(root / 'server.log').read_text()[-2000:]}")
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
            break
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    with conn:
        cur = conn.cursor()
        cur.execute(f"CREATE DATABASE {DB_NAME} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        # the root user over TCP (the JDBC driver) without a password
        cur.execute("CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'")
        cur.execute("GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION")
