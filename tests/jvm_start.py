"""Faster JVM starts for the many Spark processes the suite starts (the shared session, each
CLI run, each writer a crash test kills, the test cluster's drivers).

Two JVM settings, given through ``HIVEPARK_DRIVER_JAVA_OPTIONS`` (exec/session.py):

* C1 only and the serial collector: a Spark start takes about half the CPU time on this
  2-core machine (six writers started together: 55 s -> 31 s), and the suite's small
  queries run no slower;
* a class-data-sharing archive of the classes a hivepark process loads (made once per Java,
  pyspark and class path, kept in ``.venv``): six writers started together 29 s -> 17 s.

If the archive cannot be made, or no longer matches the class path, the JVM starts without
it: only slower.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import textwrap

FAST_START = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# A run that loads what a statement loads: a table created, written, read.
_TRAINING = textwrap.dedent("""
    import sys, hivepark
    wh = hivepark.connect(sys.argv[1], conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    wh.sql("CREATE TABLE t (k INT, v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT OVERWRITE TABLE t PARTITION (ds) SELECT id, 'v', CAST(id % 2 AS STRING) FROM range(10)")
    wh.sql("SELECT ds, count(*) FROM t WHERE ds = '1' GROUP BY ds").collect()
    wh.close()
""")


def _archive_path() -> str:
    from pyspark import __version__ as pyspark_version

    from hivepark.exec.session import jdbc_classpath

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    key = hashlib.sha256("\0".join([java, pyspark_version, jdbc_classpath(), sys.executable,
                                    FAST_START]).encode()).hexdigest()[:16]
    return os.path.join(sys.prefix, "hivepark-test-jvm", f"classes-{key}.jsa")


def _make_archive(path: str) -> bool:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}.partial"
    with tempfile.TemporaryDirectory(prefix="hivepark-cds-") as tmp:
        env = dict(os.environ, HIVEPARK_MASTER="local[1]", HIVEPARK_DRIVER_MEMORY="1g",
                   HIVEPARK_DRIVER_JAVA_OPTIONS=f"{FAST_START} -XX:ArchiveClassesAtExit={partial} -Xlog:disable")
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        try:
            # output captured, so the run ends when the JVM (which writes the archive as it
            # exits, after Python has) closes its end of the pipes
            subprocess.run([sys.executable, "-c", _TRAINING, os.path.join(tmp, "warehouse")], env=env,
                           capture_output=True, timeout=300)
        except subprocess.TimeoutExpired:
            return False
    if not os.path.exists(partial):
        return False
    os.replace(partial, path)  # whole or not at all, for a run started alongside
    return True


def java_options() -> str:
    """The options for every driver JVM the suite starts."""
    try:
        path = _archive_path()
        if os.path.exists(path) or _make_archive(path):
            return f"{FAST_START} -XX:SharedArchiveFile={path} -Xlog:disable"
    except (OSError, subprocess.SubprocessError):
        pass
    return FAST_START
