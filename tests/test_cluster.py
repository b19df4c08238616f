"""hivepark on a Spark standalone cluster (issue 14, item 7): a master and one worker on
127.0.0.1 (tests/spark_cluster.py), the executors in their own JVMs. The core of the suite
(partition pruning, dynamic partitions, list bucketing, map-join pruning, the CLI, bucketed
writes) runs again
with the cluster as its master (a parametrized test with its first cases, conftest.CLUSTER_CASES, and
the property tests with fewer examples, spark_cluster.PROPERTY_EXAMPLES), and a set of queries gives the
same rows on the cluster as in local mode over the same warehouse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import background
from background import NICE, Background
from jvm_start import FAST_START
from spark_cluster import spark_cluster

pytestmark = pytest.mark.skipif(bool(os.environ.get("HIVEPARK_TEST_MASTER")),
                                reason="already running on the cluster")

SUBSET = ["tests/exec/test_differential.py", "tests/exec/test_dynamic_partitions.py",
          "tests/exec/test_list_bucketing.py", "tests/exec/test_runtime_pruning.py",
          "tests/test_cli.py",
          # Hive's bucket files, each row's bucket computed by the executors' Python workers
          "tests/exec/test_bucketed_tables.py::test_inserts_write_hive_bucket_files"]
# What the cluster adds is executors in JVMs of their own: these tests of the subset check what
# the driver alone does (frames and listings kept between statements, DDL on the metastore,
# checks before a write), so they run in local mode only, which saves the run a third of its time.
LOCAL_ONLY = [
    "tests/exec/test_list_bucketing.py::" + name for name in (
        "test_a_repeated_list_bucketing_scan_reuses_its_dataframe_until_a_commit",
        "test_auto_topk_follows_the_data_per_partition", "test_alter_changes_only_later_partitions",
        "test_alter_forms_and_create_like", "test_alter_errors", "test_skew_ddl_errors",
        "test_created_files_limit_counts_the_list_bucketing_directories", "test_analyze_compute_skew",
        "test_unpartitioned_append_keeps_layout_and_alter_affects_later_partitions",
        "test_ctas_and_external_tables", "test_set_skewed_location", "test_msck_repair_keeps_list_bucketing_files")
] + [
    "tests/exec/test_runtime_pruning.py::" + name for name in (
        "test_runtime_listing_from_a_kept_frame_sees_every_commit",
        "test_static_counts_of_a_deferred_scan_follow_every_change",
        "test_small_side_keys_are_reused_only_for_the_same_filter_and_columns",
        "test_a_small_side_changed_by_a_commit_is_read_again",
        "test_a_small_side_file_rewritten_in_place_is_read_again",
        "test_switch_off_and_size_threshold", "test_value_cap_disables_pruning_with_a_reason",
        "test_plain_explain_shows_the_plan_without_running")
]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env(url: str) -> dict[str, str]:
    # Each application (the test driver, each CLI process) takes one core of the worker's,
    # so that a CLI run by a test finds an executor while the test's own holds one.
    return dict(os.environ, HIVEPARK_TEST_MASTER=url, HIVEPARK_MASTER=url,
                PYSPARK_SUBMIT_ARGS="--conf spark.cores.max=1 --conf spark.executor.memory=768m "
                f"--conf 'spark.executor.extraJavaOptions={FAST_START}' "
                "pyspark-shell")


def _core_suite_on_a_cluster(bg: Background) -> None:
    # three cores: the run's driver and a CLI it starts take one each, the reader of
    # test_queries_give_the_same_rows_on_the_cluster_as_locally the third
    with spark_cluster(cores=3, nice=NICE) as url:
        bg.put("url", url)
        proc = bg.popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         "--basetemp", os.path.join(bg.tmp, "pytest"), *SUBSET,
                         *(f"--deselect={test}" for test in LOCAL_ONLY)],
                        cwd=ROOT, env=env(url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=2400)
        bg.put("run", subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
        bg.stopping.wait()  # the cluster stays up for the other test of this module


#: tests/background.py: the run on the cluster starts as the suite starts and overlaps it
BACKGROUND_TESTS = {"test_the_core_suite_passes_on_the_cluster": _core_suite_on_a_cluster}


def test_every_test_left_out_on_the_cluster_is_a_test_of_the_subset():
    """pytest's --deselect ignores a name that matches nothing: a test of LOCAL_ONLY renamed would
    silently run on the cluster again, so each must name a test function its module defines."""
    import ast

    for test in LOCAL_ONLY:
        path, name = test.split("::")
        assert path in SUBSET, test
        with open(os.path.join(ROOT, path)) as f:
            defined = {node.name for node in ast.parse(f.read()).body if isinstance(node, ast.FunctionDef)}
        assert name in defined, f"{test} is not a test of {path}: rename it in LOCAL_ONLY"


@pytest.fixture(scope="module")
def cluster():
    try:
        return background.start(_core_suite_on_a_cluster).get("url")
    except RuntimeError as e:
        pytest.fail(f"the Spark standalone cluster did not start: {e}")


def test_the_core_suite_passes_on_the_cluster(cluster):
    run = background.start(_core_suite_on_a_cluster).get("run")
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    print(f"on {cluster}: {summary}")
    assert run.returncode == 0, run.stdout[-6000:]
    assert " passed" in summary and "failed" not in summary


QUERIES = [
    "SELECT ds, count(*), sum(k) FROM f WHERE ds >= '2024-01-02' GROUP BY ds",
    "SELECT f.k, d.name FROM f JOIN d ON f.ds = d.ds WHERE d.name = 'two'",
    "SELECT x, count(*) FROM s WHERE x IN (1, 7) GROUP BY x",
    "SELECT count(*) FROM s WHERE x = 3 AND ds = '2024-01-01'",
]

CLUSTER_READER = textwrap.dedent("""
    import json, sys, hivepark
    wh = hivepark.connect(sys.argv[1])
    out = [sorted([list(r) for r in wh.sql(q).collect()], key=repr) for q in json.loads(sys.argv[2])]
    print("ROWS " + json.dumps(out), flush=True)
""")


def test_queries_give_the_same_rows_on_the_cluster_as_locally(cluster, wh):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE f (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO f PARTITION (ds) SELECT id, concat('2024-01-0', CAST(id % 3 + 1 AS STRING)) FROM range(60)")
    wh.sql("CREATE TABLE d (ds STRING, name STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO d VALUES ('2024-01-01', 'one'), ('2024-01-02', 'two')")
    wh.sql("CREATE TABLE s (x INT, v STRING) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 7) "
           "STORED AS DIRECTORIES STORED AS PARQUET")
    wh.sql("INSERT INTO s PARTITION (ds='2024-01-01') SELECT CAST(id % 10 AS INT), 'v' FROM range(100)")
    local = [sorted([list(r) for r in wh.sql(q).collect()], key=repr) for q in QUERIES]
    run = subprocess.run([sys.executable, "-c", CLUSTER_READER, wh.location, json.dumps(QUERIES)],
                         cwd=ROOT, env=env(cluster), capture_output=True, text=True, timeout=600)
    line = next((x for x in run.stdout.splitlines() if x.startswith("ROWS ")), None)
    assert line is not None, run.stderr[-3000:]
    assert json.loads(line[5:]) == json.loads(json.dumps(local))
    assert all(rows for rows in local)
