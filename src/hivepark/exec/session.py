"""The SparkSession hivepark runs on."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from hivepark.errors import UserInputError

_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
# JDBC drivers of the JDBC storage handler: Debian's packages (scripts/setup.sh installs them)
JDBC_JARS = ("/usr/share/java/postgresql.jar", "/usr/share/java/mariadb-java-client.jar",
             "/usr/share/java/sqlite-jdbc.jar")


def jdbc_classpath() -> str:
    """The JDBC driver jars that exist here, as a class path."""
    return os.pathsep.join(j for j in JDBC_JARS if os.path.exists(j))


def no_variable_substitution(spark: SparkSession) -> SparkSession:
    """Turns Spark's own variable substitution off on ``spark``: with it, ``${env:HOME}`` or
    ``${system:user.name}`` anywhere in a statement, even inside a string literal, becomes the
    process's environment (``SELECT '${env:AWS_SECRET_ACCESS_KEY}'``). Hive's ``${hivevar:}``
    substitution, if any, is hivepark's own business, never Spark's."""
    spark.conf.set(VARIABLE_SUBSTITUTE, "false")
    return spark


VARIABLE_SUBSTITUTE = "spark.sql.variable.substitute"


def spark_settings(settings: Mapping[str, str] | None) -> dict[str, str]:
    """The ``spark.*`` entries of a connection's settings: Spark's, not hivepark's."""
    return {k.strip(): str(v).strip() for k, v in (settings or {}).items() if k.strip().startswith("spark.")}


def set_spark_setting(spark: SparkSession, key: str, value: str) -> None:
    """Applies a Spark setting to a running session (``SET spark.x=y``); one that Spark only
    reads at start (``spark.executor.memory``) is refused with how to give it."""
    try:
        spark.conf.set(key, value)
    except PySparkException as e:
        if "CANNOT_MODIFY" not in str(e) and "static" not in str(e).lower():
            raise
        raise UserInputError(
            f"{key} can only be set when Spark starts, not in a running session. Give it at start: "
            f"hivepark --conf {key}={value} ..., hivepark.connect(..., conf={{'{key}': '{value}'}}) "
            f"in a process with no Spark session yet, or spark-submit --conf {key}={value}.") from None


def driver_java_options() -> str:
    """The JVM options of a driver hivepark starts: its log4j settings, then
    ``HIVEPARK_DRIVER_JAVA_OPTIONS`` if set (for short runs on a small machine,
    ``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC`` starts Spark in about half the CPU time;
    the test suite gives it to the processes it starts)."""
    extra = os.environ.get("HIVEPARK_DRIVER_JAVA_OPTIONS", "").strip()
    return f"-Dlog4j2.configurationFile={_LOG4J}" + (f" {extra}" if extra else "")


def get_or_create_spark(master: str | None = None, settings: Mapping[str, str] | None = None) -> SparkSession:
    """The active SparkSession, else a new local one tuned for a laptop; either way with
    Spark's variable substitution off (:func:`no_variable_substitution`). The ``spark.*``
    entries of ``settings`` are given to a new session as it starts (they win over these
    defaults), and set on an active one (where one only read at start is an error)."""
    wanted = spark_settings(settings)
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        for k, v in wanted.items():
            if active.conf.get(k, None) != v:
                set_spark_setting(active, k, v)
        return no_variable_substitution(active)
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)  # type: ignore[attr-defined]
    builder = (SparkSession.builder.appName("hivepark")
               .master(master or os.environ.get("HIVEPARK_MASTER", "local[2]"))
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", os.environ.get("HIVEPARK_DRIVER_MEMORY", "2g"))
               .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
               .config("spark.sql.legacy.createHiveTableByDefault", "false")
               .config("spark.driver.extraJavaOptions", driver_java_options())
               .config("spark.ui.showConsoleProgress", "false")
               .config(VARIABLE_SUBSTITUTE, "false"))
    jars = jdbc_classpath()
    if jars:
        builder = (builder.config("spark.driver.extraClassPath", jars)
                   .config("spark.executor.extraClassPath", jars))
    for k, v in wanted.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return no_variable_substitution(spark)
