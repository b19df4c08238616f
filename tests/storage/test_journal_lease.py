"""Recovery undoes a statement only when its owner is proven dead (issue 13): a statement
still running in this process (another thread's ``connect()``), or on another host whose
heartbeat is fresh, is left alone; a silent one is undone after its lease; a journal that
cannot be read is an error naming the file. Journals are written atomically."""

from __future__ import annotations

import json
import os
import time

import pytest

import hivepark
from hivepark.storage import commit
from hivepark.storage.commit import Commit, JournalError, journal_dir, recover


@pytest.fixture
def table(tmp_path, spark):
    root = str(tmp_path / "warehouse")
    wh = hivepark.connect(root, spark=spark)
    wh.sql("CREATE TABLE t (a INT) STORED AS PARQUET")
    wh.sql("INSERT INTO t VALUES (1)")
    yield wh
    wh.close()


def _journals(wh) -> list[str]:
    """The journals recovery reads: a writer's hidden ``.name.json.xxxx.tmp`` (the atomic
    write's temporary file, empty while it is written) is not one."""
    d = journal_dir(wh.location)
    return sorted(n for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")) if os.path.isdir(d) else []


def test_a_statement_in_flight_in_this_process_is_not_undone(table):
    t = table.catalog.get_table("default", "t")
    with Commit(table.location, t) as c:
        staged = f"{c.staging}/data/part-0.parquet"
        os.makedirs(os.path.dirname(staged))
        with open(staged, "w") as f:
            f.write("x")
        assert recover(table.location, table.catalog) == 0  # what another thread's connect() runs
        hivepark.connect(table.location, spark=table.spark).close()
        assert os.path.exists(staged) and _journals(table) == [os.path.basename(c.journal)]
        c.abort()
    assert not os.path.exists(c.staging) and _journals(table) == []
    assert [r[0] for r in table.sql("SELECT a FROM t").collect()] == [1]


def _foreign_journal(wh, heartbeat: float) -> tuple[str, str]:
    staging = os.path.join(wh.location, "t", ".hive-staging_hivepark_other")
    os.makedirs(staging)
    with open(os.path.join(staging, "f.parquet"), "w") as f:
        f.write("x")
    path = os.path.join(journal_dir(wh.location), "other.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"pid": 4242, "host": "another-host", "heartbeat": heartbeat, "state": "writing",
                   "table": ["default", "t"], "staging": staging, "targets": [], "obsolete": []}, f)
    return path, staging


def test_another_hosts_statement_is_undone_only_after_its_lease(table):
    path, staging = _foreign_journal(table, heartbeat=time.time())
    hivepark.connect(table.location, spark=table.spark).close()
    assert os.path.exists(path) and os.path.exists(staging)  # alive elsewhere: left alone
    with open(path) as f:
        j = json.load(f)
    j["heartbeat"] = time.time() - commit.LEASE_SECONDS - 1
    with open(path, "w") as f:
        json.dump(j, f)
    hivepark.connect(table.location, spark=table.spark).close()
    assert not os.path.exists(path) and not os.path.exists(staging)
    assert [r[0] for r in table.sql("SELECT a FROM t").collect()] == [1]


def test_an_unreadable_journal_is_an_error_naming_it(table):
    path = os.path.join(journal_dir(table.location), "torn.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write('{"pid": 1, "state": "comm')
    with pytest.raises(JournalError, match="torn.json cannot be read"):
        hivepark.connect(table.location, spark=table.spark)
    os.remove(path)


def test_the_heartbeat_renews_the_lease(table, monkeypatch):
    monkeypatch.setattr(commit, "HEARTBEAT_SECONDS", 0.2)
    t = table.catalog.get_table("default", "t")
    with Commit(table.location, t) as c:
        with open(c.journal) as f:
            first = json.load(f)["heartbeat"]
        time.sleep(0.7)
        with open(c.journal) as f:
            assert json.load(f)["heartbeat"] > first
        c.abort()
    assert not os.path.exists(c.journal)


# Real processes (issue 13, item 1): a writer on "another host" (its own UTS namespace, so
# its host name differs while the files and the metastore are shared, as on a cluster).

OTHER_HOST_WRITER = """
import sys, hivepark
wh = hivepark.connect(sys.argv[1])
wh.sql("INSERT OVERWRITE TABLE t SELECT 2")
print("DONE", flush=True)
"""


def _other_host_writer(root: str, pause: float, lease: float):
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to give the writer another host name")
    env = dict(os.environ, HIVEPARK_DRIVER_MEMORY="1g", HIVEPARK_MASTER="local[1]",
               HIVEPARK_FAULT_PAUSE=str(pause), HIVEPARK_JOURNAL_LEASE_SECONDS=str(lease))
    env.pop("HIVEPARK_FAULT", None)
    # its own /etc/hosts too (a mount namespace), so that Java resolves the new name
    script = ('hostname hivepark-other-host && h=$(mktemp) && cat /etc/hosts > "$h" && '
              'echo "127.0.0.1 hivepark-other-host" >> "$h" && mount --bind "$h" /etc/hosts && '
              f'exec "{sys.executable}" -c "$0" "$1"')
    return subprocess.Popen(["unshare", "--uts", "--mount", "sh", "-c", script, OTHER_HOST_WRITER, root],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _wait_for_state(wh, proc, state: str) -> dict:
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        for name in _journals(wh):
            try:
                with open(os.path.join(journal_dir(wh.location), name)) as f:
                    j = json.load(f)
            except FileNotFoundError:
                continue  # the statement ended between the listing and the read
            if j.get("state") == state:
                return j
        time.sleep(0.01)
    raise AssertionError(f"the writer never reached '{state}'")


def test_a_write_in_flight_on_another_host_survives_connect_here(table):
    proc = _other_host_writer(table.location, pause=2.0, lease=60)
    j = _wait_for_state(table, proc, "committing")  # files moved, commit not yet made
    assert j["host"] == "hivepark-other-host"
    for _ in range(2):  # what any other session sharing the warehouse runs at start
        hivepark.connect(table.location, spark=table.spark).close()
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0 and "DONE" in out
    assert [r[0] for r in table.sql("SELECT a FROM t").collect()] == [2]
    assert _journals(table) == []


def test_a_killed_writer_on_another_host_is_undone_once_its_lease_ran_out(table, monkeypatch):
    monkeypatch.setattr(commit, "LEASE_SECONDS", 4.0)
    proc = _other_host_writer(table.location, pause=2.0, lease=4.0)
    _wait_for_state(table, proc, "moving")
    proc.kill()  # kill -9 of the whole writer: its heartbeat stops
    proc.wait()
    subprocess_left = [os.path.join(journal_dir(table.location), n) for n in _journals(table)]
    assert subprocess_left
    hivepark.connect(table.location, spark=table.spark).close()
    assert all(os.path.exists(p) for p in subprocess_left)  # its lease still runs: left alone
    time.sleep(4.5)
    hivepark.connect(table.location, spark=table.spark).close()
    assert _journals(table) == []
    assert [r[0] for r in table.sql("SELECT a FROM t").collect()] == [1]
    t = table.catalog.get_table("default", "t")
    on_disk = sorted(f for f in os.listdir(t.location) if not f.startswith((".", "_")))
    assert on_disk == sorted(json.loads(t.properties["hivepark.files"]))


def test_a_killed_writers_half_written_temporaries_are_swept_after_the_lease(table):
    """A writer killed between writing a record's temporary file and renaming it leaves the
    hidden temporary behind, for a journal, a list of files awaiting deletion or an Iceberg
    write's marker: recovery deletes each once it is older than the lease, and leaves a fresh
    one (a live writer's, in the moment of its write) alone."""
    root = os.path.join(table.location, ".hivepark")
    stale = [os.path.join(root, kind, ".dead.json.0a1b2c3d.tmp") for kind in ("journal", "expiring", "iceberg")]
    fresh = os.path.join(root, "journal", ".live.json.4e5f6a7b.tmp")
    old = time.time() - commit.LEASE_SECONDS - 60
    for path in (*stale, fresh):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write('{"pid": 4242, "sta')
        if path != fresh:
            os.utime(path, (old, old))
    hivepark.connect(table.location, spark=table.spark).close()
    assert [p for p in stale if os.path.exists(p)] == [] and os.path.exists(fresh)
    assert [r[0] for r in table.sql("SELECT a FROM t").collect()] == [1]
    os.remove(fresh)
