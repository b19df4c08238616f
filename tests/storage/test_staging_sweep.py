"""connect()'s recovery deletes staging directories no live statement owns (issue 14, item 1):
a killed process's Spark job can write its staging directory again after the journal went.
One whose journal belongs to a live statement (this process's, or another process's with a
fresh heartbeat) is never touched. No Spark: the metastore and the directories only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

from hivepark.catalog.models import Column, Database, Table
from hivepark.catalog.sql import SqlCatalog
from hivepark.storage.commit import STAGING_PREFIX, Commit, journal_dir, recover


def _warehouse(tmp_path):
    root = str(tmp_path / "wh")
    os.makedirs(root)
    catalog = SqlCatalog(f"sqlite:///{root}/metastore.db")
    catalog.create_database(Database("default", root, ""), if_not_exists=True)
    table = catalog.create_table(Table("default", "t", (Column("a", "int"),), (), f"{root}/t", "parquet"))
    os.makedirs(table.location)
    return root, catalog, table


def _staging(table, qid: str) -> str:
    path = f"{table.location}/{STAGING_PREFIX}{qid}/data/_temporary/0"
    os.makedirs(path)
    with open(f"{path}/part-00000.parquet", "w") as f:
        f.write("x" * 100)
    return f"{table.location}/{STAGING_PREFIX}{qid}"


def test_recover_sweeps_ownerless_staging_and_spares_live_ones(tmp_path):
    root, catalog, table = _warehouse(tmp_path)
    orphan = _staging(table, "20240101000000_deadbeef0001")  # no journal: its statement ended
    # another process, alive on this host, renewing its journal: a live writer
    other = subprocess.Popen(["sleep", "60"])
    try:
        live_qid = "20240101000000_deadbeef0002"
        live = _staging(table, live_qid)
        os.makedirs(journal_dir(root), exist_ok=True)
        with open(f"{journal_dir(root)}/{live_qid}.json", "w") as f:
            json.dump({"state": "writing", "table": ["default", "t"], "staging": live, "targets": [],
                       "obsolete": [], "pid": other.pid, "host": socket.gethostname(),
                       "heartbeat": time.time()}, f)
        with Commit(root, table) as mine:  # a statement of this process, in flight
            os.makedirs(f"{mine.staging}/data")
            assert recover(root, catalog) == 0
            assert not os.path.exists(orphan)
            assert os.path.isdir(live) and os.path.isdir(mine.staging)
            mine.abort()
    finally:
        other.kill()
        other.wait()
    # the other process is gone: its journal is undone and its staging directory goes too
    assert recover(root, catalog) == 1
    assert not os.path.exists(live)
    assert sorted(os.listdir(table.location)) == []
    assert os.listdir(journal_dir(root)) == []


def test_a_directory_write_killed_before_its_swap_leaves_the_directory_as_it_was(tmp_path):
    """INSERT OVERWRITE DIRECTORY killed while Spark wrote its rows (its journal says
    "writing"): recovery drops the half-written rows; the directory keeps its old ones."""
    root, catalog, _ = _warehouse(tmp_path)
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old\n")
    staging = tmp_path / ".hive-staging_q1_out"
    (staging / "_temporary").mkdir(parents=True)
    (staging / "_temporary" / "part-0").write_text("ne")
    os.makedirs(journal_dir(root))
    with open(f"{journal_dir(root)}/q1.json", "w") as f:
        json.dump({"kind": "directory", "state": "writing", "target": str(target), "staging": str(staging),
                   "replaced": str(tmp_path / ".hive-replaced_q1_out"), "pid": 2 ** 22 + 1,
                   "host": socket.gethostname(), "heartbeat": time.time()}, f)
    assert recover(root, catalog) == 1
    assert sorted(os.listdir(tmp_path)) == ["out", "wh"]
    assert (target / "old.txt").read_text() == "old\n" and os.listdir(target) == ["old.txt"]
