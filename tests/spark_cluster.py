"""A real, throwaway Spark standalone cluster for the tests: a master and one worker started
on 127.0.0.1 from pyspark's own launch script (``pyspark/bin/spark-class``, no download), in
their own processes, so the driver (the test's Python process and its JVM) and the executors
share nothing but the file system.

``spark_cluster()`` yields the master URL ``spark://127.0.0.1:<port>`` once the worker has
registered, and stops both on exit.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jvm_start import FAST_START

#: examples a property test of the core draws: 18 in the suite (each run draws new ones: the
#: examples add up over runs, the suite's time does not), 8 when the core runs again on the
#: cluster (tests/test_cluster.py), where each one's queries cost executor round trips and
#: what the run adds is the executors' side, not more of the same random cases
PROPERTY_EXAMPLES = 8 if os.environ.get("HIVEPARK_TEST_MASTER") else 18


class ClusterUnavailable(RuntimeError):
    """The master or the worker did not come up."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_class() -> tuple[str, str]:
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    return os.path.join(home, "bin", "spark-class"), home


def _wait_for(log: Path, text: str, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise ClusterUnavailable(f"'{text}' did not appear in {log} within {seconds} s:\n{tail}")


@contextmanager
def spark_cluster(cores: int = 2, memory: str = "2g", worker: bool = True, nice: int = 0) -> Iterator[str]:
    spark_class, home = _spark_class()
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
               SPARK_DAEMON_JAVA_OPTS=FAST_START)
    with tempfile.TemporaryDirectory(prefix="hivepark-cluster-") as tmp:
        work = Path(tmp)
        env["SPARK_LOG_DIR"] = str(work)
        procs: list[subprocess.Popen] = []
        try:
            master_log = work / "master.log"
            with open(master_log, "w") as out:
                procs.append(subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(port), "--webui-port", str(_free_port())],
                    env=env, stdout=out, stderr=subprocess.STDOUT))
            _wait_for(master_log, "I have been elected leader", procs[0], 120)
            if not worker:  # a master alone: applications wait for an executor forever
                yield url
                return
            worker_log = work / "worker.log"
            with open(worker_log, "w") as out:
                procs.append(subprocess.Popen(
                    ["nice", "-n", str(nice), spark_class, "org.apache.spark.deploy.worker.Worker", url,
                     "--host", "127.0.0.1",
                     "--cores", str(cores), "--memory", memory, "--webui-port", str(_free_port()),
                     "--work-dir", str(work / "work")],
                    env=env, stdout=out, stderr=subprocess.STDOUT))
            # (a niced worker on a loaded machine took over 120 s to register once: five helper
            # sessions beside the suite)
            _wait_for(worker_log, "Successfully registered with master", procs[1], 300)
            yield url
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
