"""The SparkSession hivepark runs on."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pyspark import SparkConf, SparkContext
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
    if key == "spark.master":  # Spark takes it silently and keeps running where it runs
        check_master(spark, value)
        return
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


def _defaults(master: str | None) -> dict[str, str]:
    """hivepark's settings for a Spark it starts (tuned for a laptop); ``master`` given
    explicitly (``hivepark --master``) is the user's, not a default."""
    d = {"spark.master": master or os.environ.get("HIVEPARK_MASTER", "local[2]"),
         "spark.app.name": "hivepark",
         "spark.ui.enabled": "false",
         "spark.sql.shuffle.partitions": "4",
         "spark.sql.session.timeZone": "UTC",
         "spark.driver.memory": os.environ.get("HIVEPARK_DRIVER_MEMORY", "2g"),
         "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
         "spark.sql.legacy.createHiveTableByDefault": "false",
         "spark.driver.extraJavaOptions": driver_java_options(),
         "spark.ui.showConsoleProgress": "false",
         VARIABLE_SUBSTITUTE: "false"}
    jars = jdbc_classpath()
    if jars:
        d["spark.driver.extraClassPath"] = jars
        d["spark.executor.extraClassPath"] = jars
    return d


def running_session() -> SparkSession | None:
    """The Spark the user runs in this process, whichever thread started it: the thread's
    active session, else the default session, else a session on the running SparkContext
    (:meth:`SparkSession.getActiveSession` alone sees only the calling thread's)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    default = SparkSession._instantiatedSession
    if default is not None and default._sc._jsc is not None:
        return default
    if SparkContext._active_spark_context is not None:
        return SparkSession(SparkContext._active_spark_context)  # none of hivepark's settings
    return None


def check_master(running: SparkSession, master: str) -> None:
    """Refuses a master (``--master``, ``spark.master`` in ``connect(conf=...)`` or ``SET``)
    other than the one ``running`` runs on, naming both."""
    if running.sparkContext.master != master:
        raise UserInputError(
            f"Spark already runs in this process on {running.sparkContext.master}, so it cannot start "
            f"on {master}: leave the master out to use the running session, or stop it first "
            f"(spark.stop()).")


def check_sql_settings(settings: Mapping[str, str]) -> None:
    """Refuses a ``spark.sql.*`` value Spark's SQL configuration does not take (``spark.sql.
    shuffle.partitions=abc``), checked by Spark's own parser before the session starts: a session
    started with one cannot build its state, and PySpark, converting that error, asks the same
    broken configuration again and again (the process hung, printing nothing)."""
    jvm = SparkContext._jvm
    if jvm is None:
        return
    sql_conf = jvm.org.apache.spark.sql.internal.SQLConf()
    for key, value in settings.items():
        if not key.startswith("spark.sql."):
            continue
        try:
            sql_conf.setConfString(key, value)
        except Exception as e:  # noqa: BLE001 - Py4J's or PySpark's form of the JVM's error
            java = getattr(e, "java_exception", None)
            reason = str(java.getMessage() if java is not None else e.getMessage() if hasattr(e, "getMessage")
                         else e).strip().splitlines()[0].rstrip(".")
            raise UserInputError(f"Spark refuses the setting {key}={value}: {reason}. Give {key} a value Spark "
                                 "takes (--conf or connect(conf=...)).") from None


def get_or_create_spark(master: str | None = None, settings: Mapping[str, str] | None = None) -> SparkSession:
    """The running SparkSession (:func:`running_session`, used as it is), else a new one;
    either way with Spark's variable substitution off (:func:`no_variable_substitution`).

    A new session takes, in this order of precedence: the ``spark.*`` entries of ``settings``
    and ``master``; what the user gave Spark before Python asked (``spark-submit --master
    ... --conf k=v``, ``PYSPARK_SUBMIT_ARGS``, ``spark-defaults.conf``: Spark's own
    ``SparkConf``); then hivepark's defaults (:func:`_defaults`, master ``HIVEPARK_MASTER``
    or ``local[2]``) for what nobody gave. On a running session the ``settings`` are set
    (one Spark reads only at start is an error) and nothing else is changed."""
    wanted = spark_settings(settings)
    if master is not None:
        wanted["spark.master"] = master
    running = running_session()
    if running is not None:
        if "spark.master" in wanted:
            check_master(running, wanted["spark.master"])
        for k, v in wanted.items():
            if k != "spark.master" and running.conf.get(k, None) != v:
                set_spark_setting(running, k, v)
        return no_variable_substitution(running)
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)  # type: ignore[attr-defined]
    defaults = _defaults(master)
    # The JVM: spark-submit's, when it started this Python (PYSPARK_GATEWAY_PORT), else one
    # this starts, given what it reads at start (driver memory, JVM options, class path) on
    # spark-submit's command line, before PYSPARK_SUBMIT_ARGS (which wins)
    SparkContext._ensure_initialized(conf=SparkConf(loadDefaults=False).setAll([*defaults.items(),
                                                                                 *wanted.items()]))
    check_sql_settings(wanted)
    given = SparkConf()  # the JVM's: spark-submit's --master and --conf, spark-defaults.conf
    builder = SparkSession.builder
    for k, v in defaults.items():
        if not given.contains(k):
            builder = builder.config(k, v)
    for k, v in wanted.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return no_variable_substitution(spark)
