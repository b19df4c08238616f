"""The SparkSession hivepark runs on."""

from __future__ import annotations

import os

from pyspark.sql import SparkSession

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


def get_or_create_spark(master: str | None = None) -> SparkSession:
    """The active SparkSession, else a new local one tuned for a laptop; either way with
    Spark's variable substitution off (:func:`no_variable_substitution`)."""
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
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
               .config("spark.driver.extraJavaOptions",
                       f"-Dlog4j2.configurationFile={_LOG4J}")
               .config("spark.ui.showConsoleProgress", "false")
               .config(VARIABLE_SUBSTITUTE, "false"))
    jars = jdbc_classpath()
    if jars:
        builder = (builder.config("spark.driver.extraClassPath", jars)
                   .config("spark.executor.extraClassPath", jars))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return no_variable_substitution(spark)
