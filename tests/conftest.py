"""Shared fixtures: one SparkSession for the whole suite, a fresh warehouse per test."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import background  # noqa: E402
import jvm_start  # noqa: E402

# Every JVM the suite starts (the shared session's, each CLI or writer process's) starts
# faster: tests/jvm_start.py. A run with Spark tests also shares the classes' data.
_OWN_JVM_OPTIONS = "HIVEPARK_DRIVER_JAVA_OPTIONS" in os.environ
os.environ.setdefault("HIVEPARK_DRIVER_JAVA_OPTIONS", jvm_start.FAST_START)


@pytest.fixture(scope="session")
def spark():
    from hivepark.exec.session import get_or_create_spark

    # HIVEPARK_TEST_MASTER runs the suite on a Spark cluster (tests/test_cluster.py does)
    session = get_or_create_spark(os.environ.get("HIVEPARK_TEST_MASTER", "local[2]"))
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def pg_url():
    """The URL of a database on a throwaway PostgreSQL server on loopback, started once per
    session (tests/pg_server.py); skips when it is unavailable, unless HIVEPARK_REQUIRE_POSTGRES=1."""
    from pg_server import PostgresUnavailable, postgres_server, require_postgres

    server = postgres_server()
    try:
        url = server.__enter__()
    except PostgresUnavailable as e:
        if require_postgres():
            pytest.fail(f"HIVEPARK_REQUIRE_POSTGRES=1 but PostgreSQL is unavailable: {e}")
        pytest.skip(f"PostgreSQL unavailable: {e}")
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def wh(tmp_path, spark):
    """An empty warehouse (SQLite metastore) in a temp directory, on the shared session."""
    import hivepark

    w = hivepark.connect(str(tmp_path / "warehouse"), spark=spark)
    yield w
    w.close()


def pytest_collection_modifyitems(config, items):
    """Tests that use the shared SparkSession (directly or through ``wh``) are marked
    ``spark``, and so are those whose work runs in Spark processes of its own (a module's
    ``BACKGROUND_TESTS``: CLI runs, killed writers, the cluster), so ``pytest -m "not spark"``
    runs the pure core alone, without a JVM. A test that starts Spark processes itself is
    marked ``spark`` where it is defined."""
    spark_tests = False
    for item in items:
        name = getattr(item, "originalname", None) or item.name
        if name in getattr(getattr(item, "module", None), "BACKGROUND_TESTS", {}):
            item.add_marker(pytest.mark.spark)
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
            spark_tests = True
    if spark_tests and not _OWN_JVM_OPTIONS:
        os.environ["HIVEPARK_DRIVER_JAVA_OPTIONS"] = jvm_start.java_options()
    if os.environ.get("HIVEPARK_TEST_MASTER"):
        _cases_on_the_cluster(config, items)


def pytest_collection_finish(session):
    """Work of the selected tests that runs in processes of its own starts now, in the
    background (tests/background.py): it overlaps the rest of the suite."""
    if os.environ.get("HIVEPARK_TEST_MASTER"):
        return  # the run that tests/test_cluster.py starts
    for item in session.items:
        name = getattr(item, "originalname", None) or item.name  # a parametrized test's, without its case
        work = getattr(getattr(item, "module", None), "BACKGROUND_TESTS", {}).get(name)
        if work is not None:
            background.start(work)


def pytest_sessionfinish(session):
    background.stop_all()


#: cases of a parametrized test run again on the cluster (tests/test_cluster.py): the first ones
CLUSTER_CASES = 2


def _cases_on_the_cluster(config, items) -> None:
    """On the cluster, every test runs, a parametrized one with its first CLUSTER_CASES cases:
    what the cluster adds is executors in their own JVMs, which each test's first cases
    exercise as its others do; every case runs in local mode."""
    seen: dict[str, int] = {}
    kept, dropped = [], []
    for item in items:
        name = item.nodeid.split("[", 1)[0]
        seen[name] = seen.get(name, 0) + 1
        (kept if seen[name] <= CLUSTER_CASES or not hasattr(item, "callspec") else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
