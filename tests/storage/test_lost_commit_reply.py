"""The metastore's reply to a commit is lost (the connection to PostgreSQL drops right after
the client sent its COMMIT: a TCP proxy between hivepark and the server closes it): whether the
transaction landed is known only from the record of the statement's id it made. A statement
whose commit landed keeps its files (they were deleted, and the table read files that were not
there, for good); one whose commit did not land is undone; one the metastore cannot tell about
yet is left to the next connect()."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hivepark
from hivepark.errors import HiveParkError
from hivepark.storage import commit


class CuttingProxy:
    """Forwards TCP connections to ``target``. Armed (``cut`` = "reply" or "commit"), it drops
    the connection of the next transaction that records a statement (an INSERT into
    hivepark_statements) at its COMMIT: after forwarding it ("reply": the server commits, its
    reply is lost) or instead of it ("commit": the server rolls back). ``refuse``: new
    connections are closed at once (the metastore unreachable)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.cut: str | None = None
        self.refuse = False
        self.cuts = 0
        self._open: list[socket.socket] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            if self.refuse:
                client.close()
                continue
            server = socket.create_connection(self.target)
            self._open += [client, server]
            state = {"marked": False}
            threading.Thread(target=self._pipe, args=(client, server, state, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, state, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, state: dict, from_client: bool) -> None:
        try:
            while data := src.recv(65536):
                if state.get("cut"):
                    break  # (the server's reply to the COMMIT)
                if from_client and self.cut and b"hivepark_statements" in data and b"INSERT" in data.upper():
                    state["marked"] = True
                if from_client and state["marked"] and b"COMMIT" in data:
                    how, self.cut, self.cuts = self.cut, None, self.cuts + 1
                    state["cut"] = True
                    if how == "reply":
                        dst.sendall(data)
                        time.sleep(0.5)  # the server commits; its reply is never passed on
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def down(self) -> None:
        """The metastore unreachable: every connection dropped, new ones refused."""
        self.refuse = True
        for s in self._open:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._open.clear()

    def close(self) -> None:
        self._sock.close()


@pytest.fixture
def proxied(pg_url, tmp_path, spark):
    """A warehouse whose metastore (a fresh schema on the server) is reached through a proxy."""
    import uuid
    from urllib.parse import quote

    import psycopg
    from sqlalchemy.engine import make_url

    plain = pg_url.replace("postgresql+psycopg://", "postgresql://")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = make_url(pg_url)
    proxy = CuttingProxy((url.host or "127.0.0.1", url.port or 5432))
    via = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    via += f"?options={quote(f'-csearch_path={schema}')}"
    root = str(tmp_path / "warehouse")
    wh = hivepark.connect(root, metastore=via, spark=spark)
    wh.sql("CREATE TABLE t (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO t PARTITION (ds='a') VALUES (1)")
    yield wh, proxy, via
    wh.close()
    proxy.close()


def _recorded(wh) -> list[str]:
    t = wh.catalog.get_table("default", "t")
    return sorted(f"{p.location}/{f}" for p in wh.catalog.list_partitions(t) for f in p.files or ())


def _on_disk(wh) -> list[str]:
    base = os.path.join(wh.location, "t")
    return sorted(os.path.join(d, f) for d, dirs, files in os.walk(base)
                  for f in files if not f.startswith((".", "_")))


def _rows(wh, spark):
    got = sorted(r[0] for r in wh.sql("SELECT k FROM t").collect())
    assert got == sorted(r[0] for r in spark.read.parquet(*_recorded(wh)).collect())
    return got


def test_a_commit_whose_reply_is_lost_keeps_its_files(proxied, spark):
    wh, proxy, _ = proxied
    proxy.cut = "reply"
    wh.sql("INSERT INTO t PARTITION (ds='a') VALUES (2)")  # it committed: it succeeds
    assert proxy.cuts == 1
    assert _recorded(wh) == _on_disk(wh) and len(_on_disk(wh)) == 2
    assert _rows(wh, spark) == [1, 2]
    assert os.listdir(commit.journal_dir(wh.location)) == []


def test_a_commit_cut_before_it_landed_is_undone(proxied, spark):
    wh, proxy, _ = proxied
    proxy.cut = "commit"
    with pytest.raises(HiveParkError, match="(?i)metastore"):
        wh.sql("INSERT INTO t PARTITION (ds='a') VALUES (2)")
    assert proxy.cuts == 1
    assert _recorded(wh) == _on_disk(wh) and len(_on_disk(wh)) == 1
    assert _rows(wh, spark) == [1]
    assert os.listdir(commit.journal_dir(wh.location)) == []


@pytest.mark.parametrize("statement", ["INSERT INTO t PARTITION (ds='a') VALUES (2)",
                                       "ALTER TABLE t PARTITION (ds='a') RENAME TO PARTITION (ds='z')"])
def test_a_commit_whose_reply_is_lost_with_the_metastore_gone_is_left_to_connect(proxied, spark, monkeypatch,
                                                                                  statement):
    """The metastore is unreachable right after the reply was lost: nothing is deleted, the
    journal stays, and the next connect() (the metastore back) finishes the statement."""
    from hivepark.exec import relocate

    wh, proxy, via = proxied
    proxy.cut = "reply"
    real = getattr(commit, "committed_after_all", None)

    def unreachable(*args):  # the metastore goes down as the statement asks it what happened
        proxy.down()
        try:
            return real(*args)
        finally:
            proxy.refuse = False

    monkeypatch.setattr(commit, "committed_after_all", unreachable, raising=False)
    monkeypatch.setattr(relocate, "committed_after_all", unreachable, raising=False)
    with pytest.raises(HiveParkError, match="Whether this statement's commit landed is not known") as e:
        wh.sql(statement)
    assert "the next connect() (once the metastore is reachable) finishes it" in str(e.value)
    monkeypatch.undo()
    assert proxy.cuts == 1 and os.listdir(commit.journal_dir(wh.location)) != []
    again = hivepark.connect(wh.location, metastore=via, spark=spark)  # recovery runs here
    assert os.listdir(commit.journal_dir(wh.location)) == []
    assert _recorded(again) == _on_disk(again)
    assert _rows(again, spark) == [1, 2] if statement.startswith("INSERT") else [1]
    again.close()
