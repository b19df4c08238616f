"""A real, throwaway PostgreSQL server for the tests.

``postgres_server()`` finds ``initdb``/``pg_ctl`` (PATH, then ``/usr/lib/postgresql/*/bin``),
initialises a cluster in a temporary directory, starts it on a free loopback port with its
unix socket in that directory, creates a database and yields its
``postgresql+psycopg://`` URL; on exit it stops the server and removes the directory.

PostgreSQL refuses to run as root: as root, the binaries run as the ``postgres`` OS user
(created by the Debian package) through ``runuser``, and the directory is chowned to it.

When PostgreSQL is missing, :func:`postgres_server` raises :class:`PostgresUnavailable`;
the fixtures turn that into a visible skip, or a failure when
``HIVEPARK_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DB_NAME = "hivepark_test"


class PostgresUnavailable(RuntimeError):
    """No usable PostgreSQL installation."""


def find_bin_dir() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(os.path.realpath(on_path)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                        key=lambda p: int(Path(p).parent.name)
                        if Path(p).parent.name.isdigit() else 0)
    for d in reversed(candidates):
        if (Path(d) / "initdb").exists() and (Path(d) / "pg_ctl").exists():
            return Path(d)
    raise PostgresUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl) were not found on PATH or in "
        "/usr/lib/postgresql/*/bin; install them (Debian: apt-get install postgresql).")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _runner() -> list[str]:
    """The command prefix that runs a PostgreSQL binary as a non-root user."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError as e:
        raise PostgresUnavailable("Running as root, but there is no 'postgres' OS user to "
                                  "run the PostgreSQL server as.") from e
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "postgres", "--"]
    raise PostgresUnavailable("Running as root, but 'runuser' is missing.")


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise PostgresUnavailable(f"{what} failed ({proc.returncode}): "
                                  f"{proc.stderr.strip() or proc.stdout.strip()}")


@contextmanager
def postgres_server() -> Iterator[str]:
    """Starts a throwaway server; yields a SQLAlchemy URL of a fresh database on it."""
    bin_dir = find_bin_dir()
    prefix = _runner()
    root = Path(tempfile.mkdtemp(prefix="hivepark-pg-"))
    data = root / "data"
    log = root / "server.log"
    started = False
    try:
        if prefix:
            shutil.chown(root, "postgres", "postgres")
            os.chmod(root, 0o700)
        _run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U",
              "postgres", "-E", "UTF8", "--no-sync"], "initdb")
        port = 0
        for _attempt in range(3):
            port = _free_port()
            opts = (f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
                    f"-c synchronous_commit=off -c full_page_writes=off "
                    f"-c max_connections=100")
            proc = subprocess.run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-l",
                                   str(log), "-o", opts, "-w", "-t", "60", "start"],
                                  capture_output=True, text=True, timeout=120, check=False)
            if proc.returncode == 0:
                started = True
                break
        if not started:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise PostgresUnavailable(f"pg_ctl start failed: {tail}")
        _create_database(port)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/{DB_NAME}"
    finally:
        if started:
            subprocess.run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                            "-w", "stop"], capture_output=True, timeout=120, check=False)
        shutil.rmtree(root, ignore_errors=True)


def _create_database(port: int) -> None:
    import psycopg

    deadline = time.monotonic() + 30
    while True:
        try:
            with psycopg.connect(host="127.0.0.1", port=port, user="postgres",
                                 dbname="postgres", autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {DB_NAME}")
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def require_postgres() -> bool:
    """Whether a missing PostgreSQL must fail the tests instead of skipping them."""
    return os.environ.get("HIVEPARK_REQUIRE_POSTGRES", "") == "1"
