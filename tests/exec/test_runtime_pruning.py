"""Map-join (runtime) partition pruning: the small sides' join keys decide which partitions
of the big table are read. Every result is compared with plain Spark SQL over the same files;
EXPLAIN ANALYZE shows what was pruned and why pruning did not apply where it did not."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_cluster import PROPERTY_EXAMPLES


@pytest.fixture(scope="module")
def star(tmp_path_factory, spark):
    """sales(amount) PARTITIONED BY (ds, region): 12 days x 3 regions + a default partition;
    dates(ds, holiday, month), stores(store, region), dims partitioned too."""
    import hivepark

    root = tmp_path_factory.mktemp("star")
    wh = hivepark.connect(str(root / "warehouse"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    wh.sql("CREATE TABLE sales (id BIGINT, store INT, amount DOUBLE) "
           "PARTITIONED BY (ds STRING, region STRING) STORED AS PARQUET")
    rows = []
    for i in range(360):
        ds = f"2024-01-{1 + i % 12:02d}"
        region = ["eu", "us", "apac"][(i // 12) % 3] if i % 37 else None
        rows.append((i, i % 5, float(i), ds, region))
    wh.insert(spark.createDataFrame(rows, "id bigint, store int, amount double, ds string, "
                                          "region string"), "sales", {"ds": None, "region": None})
    wh.sql("CREATE TABLE dates (ds STRING, holiday BOOLEAN, month INT) STORED AS PARQUET")
    wh.sql("INSERT INTO dates VALUES " + ", ".join(
        f"('2024-01-{d:02d}', {str(d in (1, 6, 7)).lower()}, 1)" for d in range(1, 13))
        + ", (NULL, true, 1), ('2024-02-01', true, 2)")
    wh.sql("CREATE TABLE stores (store INT, region STRING, big BOOLEAN) STORED AS PARQUET")
    wh.sql("INSERT INTO stores VALUES (0, 'eu', true), (1, 'eu', false), (2, 'us', true), "
           "(3, 'apac', false), (4, NULL, true)")
    wh.sql("CREATE TABLE days (note STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO days PARTITION (ds='2024-01-03') VALUES ('a')")
    wh.sql("INSERT INTO days PARTITION (ds='2024-01-04') VALUES ('b')")
    for name, schema in [("sales", "id bigint, store int, amount double, ds string, region string"),
                         ("dates", "ds string, holiday boolean, month int"),
                         ("stores", "store int, region string, big boolean"),
                         ("days", "note string, ds string")]:
        t = wh.catalog.get_table("default", name)
        spark.read.schema(schema).parquet(t.location).createOrReplaceTempView(f"plain_{name}")
    yield wh
    wh.close()


def same_as_plain(wh, spark, sql: str) -> str:
    ours = sorted(map(tuple, wh.sql(sql).collect()), key=repr)
    plain_sql = re.sub(r"\b(sales|dates|stores|days|pairs|keyset|widedim|nanfact|nandim)\b", r"plain_\1", sql)
    theirs = sorted(map(tuple, spark.sql(plain_sql).collect()), key=repr)
    assert ours == theirs
    return "\n".join(r[0] for r in wh.sql("EXPLAIN ANALYZE " + sql).collect())


def sales_partitions(explain: str) -> str:
    block = explain.split("TableScan default.sales")[1].split("TableScan")[0]
    return re.search(r"partitions=(\d+/\d+)", block).group(1)


def qualifying(spark, where: str) -> str:
    """K/N for sales: the partitions plain Spark finds holding rows that satisfy ``where``
    (the exact answer runtime pruning should reach), out of all partitions."""
    total = spark.sql("SELECT count(DISTINCT ds, coalesce(region, '~')) FROM plain_sales").first()[0]
    k = spark.sql(f"SELECT count(DISTINCT ds, coalesce(region, '~')) FROM plain_sales s "
                  f"WHERE {where}").first()[0]
    return f"{k}/{total}"


HOLIDAY = "s.ds IN (SELECT ds FROM plain_dates WHERE holiday)"


def test_inner_join_reads_only_holiday_partitions(star, spark):
    out = same_as_plain(star, spark, "SELECT s.ds, sum(s.amount) FROM sales s JOIN dates d "
                                     "ON s.ds = d.ds WHERE d.holiday = true GROUP BY s.ds")
    assert sales_partitions(out) == qualifying(spark, HOLIDAY) == "12/46"
    assert "runtime pruning (d.ds -> s.ds): 4 distinct values" in out  # NULL key dropped
    assert "from default.dates (pyarrow)" in out  # no Spark job for the small side


@pytest.mark.parametrize("where, via", [
    ("NOT (st.region IN ('eu'))", "pyarrow"),          # NULL region: NOT IN is not TRUE
    ("st.region <> 'eu' OR st.big", "pyarrow"),
    ("NOT (st.big AND st.region = 'us')", "pyarrow"),  # NULL under NOT
    ("st.region IS NULL OR st.store BETWEEN 1 AND 2", "pyarrow"),
    ("st.region LIKE 'e%'", "spark"),                   # LIKE: left to Spark
    ("upper(st.region) = 'US'", "spark"),               # a function: left to Spark
])
def test_small_side_filters_in_pyarrow_agree_with_spark(star, spark, where, via):
    """The small side's own filters run in pyarrow when they translate exactly, else in
    Spark; either way the chosen partitions are exactly those plain Spark qualifies."""
    out = same_as_plain(star, spark, "SELECT s.id, st.store FROM sales s JOIN stores st "
                                     f"ON s.region = st.region WHERE {where}")
    plain_where = where.replace("st.", "")
    assert sales_partitions(out) == qualifying(
        spark, f"s.region IN (SELECT region FROM plain_stores WHERE {plain_where})")
    assert f"from default.stores ({via})" in out


def test_runtime_intersects_with_static_pruning(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN dates d ON s.ds = d.ds "
                                     "WHERE d.holiday AND s.region = 'eu'")
    assert sales_partitions(out) == qualifying(spark, HOLIDAY + " AND s.region = 'eu'")
    assert "static pruning: 12/46" in out


def test_cascading_dimensions_on_two_partition_columns(star, spark):
    out = same_as_plain(star, spark,
                        "SELECT s.id, st.store FROM sales s JOIN dates d ON s.ds = d.ds "
                        "JOIN stores st ON s.region = st.region "
                        "WHERE d.holiday AND st.big AND st.region IS NOT NULL")
    assert sales_partitions(out) == qualifying(
        spark, HOLIDAY + " AND s.region IN (SELECT region FROM plain_stores WHERE big)") == "6/46"


def test_multi_column_key(star, spark):
    star.sql("DROP TABLE IF EXISTS pairs")
    star.sql("CREATE TABLE pairs (ds STRING, region STRING) STORED AS PARQUET")
    star.sql("INSERT INTO pairs VALUES ('2024-01-02', 'us'), ('2024-01-05', 'eu')")
    t = star.catalog.get_table("default", "pairs")
    spark.read.schema("ds string, region string").parquet(t.location) \
        .createOrReplaceTempView("plain_pairs")
    out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN pairs p "
                                     "ON s.ds = p.ds AND s.region = p.region")
    assert sales_partitions(out) == "2/46"  # exact pairs, not the 4 of the cross product


def test_left_join_preserving_the_small_side_prunes(star, spark):
    out = same_as_plain(star, spark, "SELECT d.ds, s.id FROM dates d LEFT JOIN sales s "
                                     "ON s.ds = d.ds WHERE d.holiday")
    assert sales_partitions(out) == qualifying(spark, HOLIDAY)


def test_left_join_preserving_the_big_table_does_not_prune(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id, d.holiday FROM sales s LEFT JOIN dates d "
                                     "ON s.ds = d.ds AND d.holiday")
    assert sales_partitions(out) == "46/46"
    assert "preserved side of a LEFT OUTER JOIN" in out


def test_right_join_both_ways(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id, d.ds FROM sales s RIGHT JOIN dates d "
                                     "ON s.ds = d.ds WHERE d.month = 2")
    assert sales_partitions(out) == "0/46"
    out = same_as_plain(star, spark, "SELECT s.id, d.ds FROM dates d RIGHT JOIN sales s "
                                     "ON s.ds = d.ds AND d.holiday")
    assert sales_partitions(out) == "46/46"


NESTED = "SELECT s.ds, count(*) FROM {} GROUP BY s.ds"
DAYS = "s.ds IN ('2024-01-03', '2024-01-04')"


@pytest.mark.parametrize("source, pruned", [
    # a parenthesised join on a preserved side: every table in it is preserved
    ("days y RIGHT JOIN (sales s LEFT JOIN stores st ON s.store = st.store) ON s.ds = y.ds", False),
    ("days y RIGHT JOIN (sales s CROSS JOIN stores st) ON s.ds = y.ds", False),
    ("days y RIGHT JOIN (stores st JOIN sales s ON s.store = st.store) ON s.ds = y.ds", False),
    ("days y RIGHT JOIN ((stores st CROSS JOIN dates d) LEFT JOIN sales s ON s.ds = d.ds) "
     "ON s.ds = y.ds", False),
    ("(sales s CROSS JOIN stores st) LEFT JOIN days y ON s.ds = y.ds", False),
    ("(sales s JOIN stores st ON s.store = st.store) FULL JOIN days y ON s.ds = y.ds", False),
    ("days y FULL JOIN (sales s CROSS JOIN stores st) ON s.ds = y.ds", False),
    # on a null-supplying side, or inner joined: pruned
    ("days y LEFT JOIN (sales s JOIN stores st ON s.store = st.store) ON s.ds = y.ds", True),
    ("(stores st CROSS JOIN sales s) RIGHT JOIN days y ON s.ds = y.ds", True),
    ("days y JOIN (sales s LEFT JOIN stores st ON s.store = st.store) ON s.ds = y.ds", True),
    ("(sales s CROSS JOIN stores st) JOIN days y ON s.ds = y.ds", True),
])
def test_parenthesised_joins_on_either_side_of_an_outer_join(star, spark, source, pruned):
    out = same_as_plain(star, spark, NESTED.format(source))
    assert sales_partitions(out) == (qualifying(spark, DAYS) if pruned else "46/46")


def test_full_outer_join_does_not_prune(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id, d.ds FROM sales s FULL OUTER JOIN dates d "
                                     "ON s.ds = d.ds")
    assert sales_partitions(out) == "46/46"
    assert "FULL OUTER JOIN" in out


def test_function_on_the_key_does_not_prune(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN dates d "
                                     "ON substr(s.ds, 1, 10) = d.ds WHERE d.holiday")
    assert sales_partitions(out) == "46/46"
    assert "inside a function" in out


@pytest.mark.parametrize("query", [
    "SELECT s.id FROM sales s JOIN (SELECT ds FROM dates WHERE holiday) h ON s.ds = h.ds",
    "WITH h AS (SELECT ds FROM dates WHERE holiday) SELECT s.id FROM sales s, h WHERE s.ds = h.ds",
    "SELECT s.id, h.n FROM sales s JOIN (SELECT ds, count(*) n FROM dates WHERE holiday GROUP BY ds) h ON s.ds = h.ds",
    "SELECT s.id FROM sales s JOIN (SELECT ds AS day FROM dates WHERE holiday) h ON s.ds = h.day",
    "SELECT s.id FROM sales s JOIN (SELECT ds FROM (SELECT * FROM dates WHERE month = 1) m WHERE holiday) h "
    "ON s.ds = h.ds",
    "SELECT s.id, h.ds FROM (SELECT ds FROM dates WHERE holiday) h LEFT JOIN sales s ON s.ds = h.ds",
    # a LIMIT keeps some of the values: the table's are a superset, and prune soundly
    "SELECT s.id FROM sales s JOIN (SELECT ds FROM dates WHERE holiday ORDER BY ds LIMIT 2) h ON s.ds = h.ds",
    # both sides through subqueries
    "SELECT s.id FROM (SELECT id, ds FROM sales WHERE amount > 0) s JOIN (SELECT ds FROM dates WHERE holiday) h "
    "ON s.ds = h.ds",
])
def test_a_subquery_or_cte_small_side_prunes_by_its_tables_values(star, spark, query):
    """A dimension filtered in a subquery or a CTE collected no values (only a table joined directly
    did): every partition was read. Its key passed through from a table, the table's own filters give
    its values (every key the subquery can hold, or more), and they prune."""
    out = same_as_plain(star, spark, query)
    assert sales_partitions(out) == qualifying(spark, HOLIDAY) == "12/46"
    assert "distinct values from default.dates (pyarrow)" in out


@pytest.mark.parametrize("query, said", [
    ("SELECT s.id FROM sales s JOIN (SELECT max(ds) AS ds FROM dates) h ON h.ds = s.ds",
     "(h.ds -> s.ds): the other side's key (h.ds) is not a table's column passed through"),
    # a UNION's values are every branch's: one table's are not all of them
    ("SELECT s.id FROM sales s JOIN (SELECT ds FROM dates WHERE holiday UNION ALL SELECT '2024-01-03') h "
     "ON s.ds = h.ds", "(h.ds -> s.ds): the other side's key (h.ds) is not a table's column passed through"),
    ("SELECT s.id, h.ds FROM sales s LEFT JOIN (SELECT ds FROM dates WHERE holiday) h ON s.ds = h.ds",
     "(dates.ds -> s.ds): the big table is on the preserved side of a LEFT OUTER JOIN"),
])
def test_a_subquery_small_side_that_cannot_prune_says_why(star, spark, query, said):
    out = same_as_plain(star, spark, query)
    assert sales_partitions(out) == "46/46"
    assert f"runtime pruning not applied {said}" in out


def test_empty_small_side_reads_nothing(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN dates d ON s.ds = d.ds "
                                     "WHERE d.month = 7")
    assert sales_partitions(out) == "0/46"


def test_null_keys_and_default_partition(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id, st.store FROM sales s JOIN stores st "
                                     "ON s.region = st.region")
    # the default (NULL) region partitions go: NULL equals nothing
    assert sales_partitions(out) == qualifying(spark, "s.region IS NOT NULL") == "36/46"
    assert "__HIVE_DEFAULT_PARTITION__" not in out


def test_both_sides_partitioned_is_decided_from_the_metastore(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id, y.note FROM sales s JOIN days y "
                                     "ON s.ds = y.ds")
    assert sales_partitions(out) == qualifying(spark, "s.ds IN ('2024-01-03', '2024-01-04')")
    assert "(metastore)" in out


def test_a_pruned_scan_that_is_also_a_small_side(star, spark):
    """days is pruned by dates at runtime and is itself the small side pruning sales: its
    partitions are listed before execution, so sales is never pruned by an empty set."""
    out = same_as_plain(star, spark, "SELECT s.id, y.note FROM sales s JOIN days y "
                                     "ON s.ds = y.ds JOIN dates d ON y.ds = d.ds "
                                     "WHERE d.month = 1")
    assert sales_partitions(out) == qualifying(spark, "s.ds IN ('2024-01-03', '2024-01-04')")


def test_non_partition_key_becomes_a_reader_filter(star, spark):
    out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN stores st "
                                     "ON s.store = st.store WHERE st.big")
    assert "row filter pushed to the reader: store IN (3 values)" in out


def test_large_value_set_reaches_the_reader_as_a_range(star, spark):
    """Over 200 values the reader gets BETWEEN min AND max (cheap to parse, what Parquet
    skips row groups by), unless that range covers most of the small table's key range
    and would skip nothing; the join keeps exactly the matching rows either way."""
    star.sql("DROP TABLE IF EXISTS widedim")
    star.sql("CREATE TABLE widedim (store INT, low BOOLEAN, even BOOLEAN) STORED AS PARQUET")
    star.sql("INSERT INTO widedim SELECT id + 2, id < 499, id % 2 = 0 FROM range(0, 1200)")
    t = star.catalog.get_table("default", "widedim")
    spark.read.schema("store int, low boolean, even boolean").parquet(t.location) \
        .createOrReplaceTempView("plain_widedim")
    out = same_as_plain(star, spark, "SELECT s.id, w.store FROM sales s JOIN widedim w "
                                     "ON s.store = w.store WHERE w.low")
    assert "row filter pushed to the reader: store BETWEEN 2 AND 500 (range of 499 values)" \
        in out
    out = same_as_plain(star, spark, "SELECT s.id, w.store FROM sales s JOIN widedim w "
                                     "ON s.store = w.store WHERE w.even")
    assert "row filter pushed" not in out
    assert "row filter not pushed (w.store -> s.store): 600 values span 100% of the small " \
           "table's key range" in out


@pytest.fixture(scope="module")
def nanfact(star, spark):
    """nanfact(v, x DOUBLE): x = v % 400, NaN where that is 399 (10 rows)."""
    star.sql("CREATE TABLE nanfact (v BIGINT, x DOUBLE) STORED AS PARQUET")
    star.sql("INSERT INTO nanfact SELECT id, CASE WHEN id % 400 = 399 THEN CAST('NaN' AS DOUBLE) "
             "ELSE CAST(id % 400 AS DOUBLE) END FROM range(4000)")
    t = star.catalog.get_table("default", "nanfact")
    spark.read.schema("v bigint, x double").parquet(t.location).createOrReplaceTempView("plain_nanfact")
    return star


@pytest.mark.parametrize("n", [5, 50, 300])
def test_nan_keys_of_a_double_column_are_kept_by_the_reader_filter(nanfact, spark, n):
    """Spark's join matches NaN with NaN: a small side holding NaN keeps the big side's NaN
    rows whatever the filter's shape (IN, or over 200 values a range, open above since Spark
    orders NaN above every number; BETWEEN min AND max lost them)."""
    star = nanfact
    star.sql("DROP TABLE IF EXISTS nandim")
    star.sql("CREATE TABLE nandim (x DOUBLE) STORED AS PARQUET")
    star.sql(f"INSERT INTO nandim SELECT CAST(id AS DOUBLE) FROM range({n}) "
             "UNION ALL SELECT CAST('NaN' AS DOUBLE)")
    t = star.catalog.get_table("default", "nandim")
    spark.read.schema("x double").parquet(t.location).createOrReplaceTempView("plain_nandim")
    out = same_as_plain(star, spark, "SELECT f.v, CAST(d.x AS STRING) FROM nanfact f JOIN nandim d "
                                     "ON f.x = d.x")
    assert f"runtime pruning (d.x -> f.x): {n + 1} distinct values" in out
    if n > 200:
        assert f"row filter pushed to the reader: x >= 0.0E0 (range of {n + 1} values, NaN included)" \
            in out
    assert star.sql("SELECT count(*) FROM nanfact f JOIN nandim d ON f.x = d.x "
                    "WHERE isnan(f.x)").first()[0] == 10


@pytest.mark.parametrize("on, where, parts", [
    ("s.ds = d.ds AND s.ds = d.ds", "d.holiday", "12/46"),                  # pyarrow
    ("s.ds = d.ds AND s.ds = d.ds", "d.holiday AND d.ds LIKE '2024%'", "12/46"),  # Spark
    ("s.ds = d.ds", "d.ds = s.ds AND d.holiday", "12/46"),
    ("s.ds = d.ds AND s.region = d.ds", "d.holiday", "0/46"),               # one small column, two keys
    ("s.store = st.store AND s.store = st.store", "st.big", None),
    ("s.store = st.store AND s.id = st.store", "st.big", None),
])
def test_a_key_repeated_in_the_join_condition(star, spark, on, where, parts):
    """The same small column twice in the condition (the same pair repeated, or compared
    with two big columns) asks for its values once; it failed with Arrow's 'Multiple matches
    for FieldRef'."""
    small = "stores st" if "st." in on else "dates d"
    out = same_as_plain(star, spark, f"SELECT s.id FROM sales s JOIN {small} ON {on} WHERE {where}")
    if parts is not None:
        assert sales_partitions(out) == parts
    assert "runtime pruning (" in out


def test_value_cap_disables_pruning_with_a_reason(star, spark):
    star.sql("SET hive.mapjoin.partition.pruning.max.values=2")
    try:
        out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN dates d "
                                         "ON s.ds = d.ds WHERE d.holiday")
    finally:
        star.sql("SET hive.mapjoin.partition.pruning.max.values=100000")
    assert sales_partitions(out) == "46/46"
    assert "more than 2 distinct key values" in out


def test_switch_off_and_size_threshold(star, spark):
    star.sql("SET hive.optimize.mapjoin.partition.pruning=false")
    try:
        out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN dates d "
                                         "ON s.ds = d.ds WHERE d.holiday")
    finally:
        star.sql("SET hive.optimize.mapjoin.partition.pruning=true")
    assert sales_partitions(out) == "46/46"
    star.sql("SET hive.mapjoin.smalltable.filesize=10")
    try:
        out = same_as_plain(star, spark, "SELECT s.id FROM sales s JOIN dates d "
                                         "ON s.ds = d.ds WHERE d.holiday")
        assert "is not a map-join side" in out and sales_partitions(out) == "46/46"
        out = same_as_plain(star, spark, "SELECT /*+ MAPJOIN(d) */ s.id FROM sales s JOIN dates d "
                                         "ON s.ds = d.ds WHERE d.holiday")
        assert sales_partitions(out) == qualifying(spark, HOLIDAY)
    finally:
        star.sql("SET hive.mapjoin.smalltable.filesize=25000000")


def test_plain_explain_shows_the_plan_without_running(star):
    text = star.explain("SELECT s.id FROM sales s JOIN dates d ON s.ds = d.ds WHERE d.holiday")
    assert "runtime pruning of partitions: s.ds IN (d.ds of default.dates; values collected " \
           "at execution)" in text
    assert "partitions=46/46" in text


def test_broadcast_join_in_spark_plan(star):
    text = star.explain("EXPLAIN EXTENDED SELECT s.id FROM sales s JOIN dates d ON s.ds = d.ds "
                        "WHERE d.holiday")
    assert "BroadcastHashJoin" in text


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(days=st.sets(st.integers(1, 14), max_size=5), with_null=st.booleans(),
       join=st.sampled_from(["JOIN", "LEFT SEMI JOIN"]),
       extra=st.sampled_from(["", " AND s.region = 'eu'", " AND s.amount > 100"]))
def test_runtime_pruning_never_loses_a_row(star, spark, days, with_null, join, extra):
    values = [f"('2024-01-{d:02d}')" for d in sorted(days)] + (["(NULL)"] if with_null else [])
    star.sql("DROP TABLE IF EXISTS keyset")
    star.sql("CREATE TABLE keyset (ds STRING) STORED AS PARQUET")
    if values:
        star.sql(f"INSERT INTO keyset VALUES {', '.join(values)}")
    t = star.catalog.get_table("default", "keyset")
    spark.read.schema("ds string").parquet(t.location).createOrReplaceTempView("plain_keyset")
    cols = "s.id, s.ds" if join == "JOIN" else "s.id"
    sql = f"SELECT {cols} FROM sales s {join} keyset k ON s.ds = k.ds{extra}"
    ours = sorted(map(tuple, star.sql(sql).collect()))
    theirs = sorted(map(tuple, spark.sql(sql.replace("sales s", "plain_sales s")
                                         .replace("keyset k", "plain_keyset k")).collect()))
    assert ours == theirs


def test_a_small_side_changed_by_a_commit_is_read_again(star, spark):
    """The small side's rows read in-process are reused by later queries only while its
    files are the same: a commit to it (a new file) changes what prunes the big table."""
    star.sql("DROP TABLE IF EXISTS hol")
    star.sql("CREATE TABLE hol (ds STRING, on_sale BOOLEAN) STORED AS PARQUET")
    star.sql("INSERT INTO hol VALUES ('2024-01-02', true), ('2024-01-03', false)")
    sql = ("SELECT s.ds, count(*) FROM sales s JOIN hol h ON s.ds = h.ds "
           "WHERE h.on_sale GROUP BY s.ds")

    def check(expected_days: list[str]) -> str:
        t = star.catalog.get_table("default", "hol")
        spark.read.schema("ds string, on_sale boolean").parquet(t.location) \
            .createOrReplaceTempView("plain_hol")
        ours = sorted(map(tuple, star.sql(sql).collect()))
        theirs = sorted(map(tuple, spark.sql(sql.replace(" hol ", " plain_hol ")
                                             .replace("sales s", "plain_sales s")).collect()))
        assert ours == theirs and [r[0] for r in ours] == expected_days
        return "\n".join(r[0] for r in star.sql("EXPLAIN ANALYZE " + sql).collect())

    assert "1 distinct values" in check(["2024-01-02"])
    star.sql("INSERT INTO hol VALUES ('2024-01-05', true)")
    assert "2 distinct values" in check(["2024-01-02", "2024-01-05"])
    star.sql("INSERT OVERWRITE TABLE hol VALUES ('2024-01-07', true)")
    assert "1 distinct values" in check(["2024-01-07"])


def test_a_small_side_file_rewritten_in_place_is_read_again(star, spark, tmp_path):
    """An external small side whose one file is rewritten under the same name, at the same
    size (no compression, no dictionary, no statistics: the size does not depend on the
    values): the next join prunes by the new rows, not by the rows read before."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    location = tmp_path / "ext_hol"
    location.mkdir()
    path = location / "part-0.parquet"

    def write(days: list[str], mtime: int) -> None:
        table = pa.table({"ds": days, "on_sale": [True] * len(days)})
        pq.write_table(table, path, compression="none", use_dictionary=False,
                       write_statistics=False)
        os.utime(path, (mtime, mtime))  # a new modification time, however coarse the clock

    write(["2024-01-02", "2024-01-03"], 1_700_000_000)
    size = path.stat().st_size
    star.sql("DROP TABLE IF EXISTS ext_hol")
    star.sql(f"CREATE EXTERNAL TABLE ext_hol (ds STRING, on_sale BOOLEAN) STORED AS PARQUET "
             f"LOCATION '{location}'")
    sql = ("SELECT s.ds, count(*) FROM sales s JOIN ext_hol h ON s.ds = h.ds "
           "WHERE h.on_sale GROUP BY s.ds")
    spark.read.schema("ds string, on_sale boolean").parquet(str(location)) \
        .createOrReplaceTempView("plain_ext_hol")
    plain_sql = sql.replace(" ext_hol ", " plain_ext_hol ").replace("sales s", "plain_sales s")
    for days in (["2024-01-02", "2024-01-03"], ["2024-01-08", "2024-01-09"]):
        if days[0] != "2024-01-02":
            write(days, 1_700_000_100)
            assert path.stat().st_size == size  # the same name and size: only the time differs
        ours = sorted(map(tuple, star.sql(sql).collect()))
        theirs = sorted(map(tuple, spark.sql(plain_sql).collect()))
        assert ours == theirs and [r[0] for r in ours] == days
        assert "runtime pruning" in "\n".join(
            r[0] for r in star.sql("EXPLAIN ANALYZE " + sql).collect())
    star.sql("DROP TABLE ext_hol")


def test_static_counts_of_a_deferred_scan_follow_every_change(tmp_path, spark, monkeypatch):
    """The planner keeps a table's static count and size by (uid, version, filter): an added
    or dropped partition, and a table created again within the same second at the same
    version (new uid), each show in the next plan's ``partitions=S/N``."""
    import time
    from types import SimpleNamespace

    import hivepark
    import hivepark.exec.tables as tables

    monkeypatch.setattr(tables, "time", SimpleNamespace(time=lambda: 1_700_000_000.0,
                                                        strftime=time.strftime))
    wh = hivepark.connect(str(tmp_path / "wh"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    sql = "EXPLAIN SELECT f.v FROM f JOIN k ON f.ds = k.ds WHERE k.keep AND f.ds > '1'"

    def counts() -> str:
        text = wh.explain(sql)
        return re.search(r"partitions=(\d+/\d+) after static pruning", text).group(1)

    try:
        wh.sql("CREATE TABLE k (ds STRING, keep BOOLEAN) STORED AS PARQUET")
        wh.sql("INSERT INTO k VALUES ('2', true), ('3', true)")
        wh.sql("CREATE TABLE f (v INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        wh.sql("INSERT INTO f PARTITION (ds) SELECT id, CAST(id % 2 + 1 AS STRING) FROM range(20000)")
        assert counts() == "1/2" and counts() == "1/2"
        wh.sql("INSERT INTO f PARTITION (ds='3') SELECT id FROM range(20000)")
        assert counts() == "2/3"
        wh.sql("ALTER TABLE f DROP PARTITION (ds='2')")
        assert counts() == "1/2"
        version = wh.catalog.get_table("default", "f").version
        wh.sql("DROP TABLE f")  # the same name and version again, in the same second
        wh.sql("CREATE TABLE f (v INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        wh.sql("INSERT INTO f PARTITION (ds) SELECT id, CAST(id % 3 + 2 AS STRING) FROM range(20000)")
        while wh.catalog.get_table("default", "f").version < version:
            wh.sql("INSERT INTO f PARTITION (ds='5') SELECT id FROM range(20000)")
        assert wh.catalog.get_table("default", "f").version == version
        assert counts() == "4/4"
    finally:
        wh.close()


def test_small_side_keys_are_reused_only_for_the_same_filter_and_columns(star, spark):
    """A small side's key set is kept by (its files, its own filter, the key columns): the
    same dimension filtered two ways, queried alternately, prunes each query by its own
    filter, and rows equal plain Spark's every time."""
    star.sql("DROP TABLE IF EXISTS hol")
    star.sql("CREATE TABLE hol (ds STRING, on_sale BOOLEAN) STORED AS PARQUET")
    star.sql("INSERT INTO hol VALUES ('2024-01-02', true), ('2024-01-03', false), ('2024-01-05', false)")
    t = star.catalog.get_table("default", "hol")
    spark.read.schema("ds string, on_sale boolean").parquet(t.location).createOrReplaceTempView("plain_hol")
    queries = {
        "SELECT s.ds, count(*) FROM sales s JOIN hol h ON s.ds = h.ds WHERE h.on_sale GROUP BY s.ds":
            (["2024-01-02"], "1 distinct values"),
        "SELECT s.ds, count(*) FROM sales s JOIN hol h ON s.ds = h.ds WHERE NOT h.on_sale GROUP BY s.ds":
            (["2024-01-03", "2024-01-05"], "2 distinct values"),
    }
    for _ in range(2):
        for sql, (days, explained) in queries.items():
            ours = sorted(map(tuple, star.sql(sql).collect()))
            theirs = sorted(map(tuple, spark.sql(sql.replace(" hol ", " plain_hol ")
                                                 .replace("sales s", "plain_sales s")).collect()))
            assert ours == theirs and [r[0] for r in ours] == days
            assert explained in "\n".join(r[0] for r in star.sql("EXPLAIN ANALYZE " + sql).collect())


def test_runtime_listing_from_a_kept_frame_sees_every_commit(tmp_path, spark):
    """Once a fact table's whole-table frame is kept, runtime pruning lists its partitions
    in memory, but only while the table is at the frame's version: a commit to the fact
    table (a new partition, an overwritten one) is in the next query's result."""
    import hivepark

    wh = hivepark.connect(str(tmp_path / "wh"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    try:
        wh.sql("CREATE TABLE f (v BIGINT) PARTITIONED BY (d INT, r STRING) STORED AS PARQUET")
        wh.sql("INSERT INTO f PARTITION (d, r) SELECT id, id % 10, CAST(id % 3 AS STRING) FROM range(300)")
        wh.sql("CREATE TABLE dd (d INT, hot BOOLEAN) STORED AS PARQUET")
        wh.sql("INSERT INTO dd VALUES (1, true), (2, false), (3, true), (11, true)")
        sql = "SELECT f.d, f.r, count(*), sum(v) FROM f JOIN dd ON f.d = dd.d WHERE dd.hot GROUP BY f.d, f.r"

        def check() -> str:
            t, d = (wh.catalog.get_table("default", n) for n in ("f", "dd"))
            spark.read.schema("v bigint, d int, r string").parquet(t.location).createOrReplaceTempView("plain_f")
            spark.read.parquet(d.location).createOrReplaceTempView("plain_dd")
            ours = sorted(map(tuple, wh.sql(sql).collect()), key=repr)
            plain = sql.replace("FROM f JOIN dd", "FROM plain_f f JOIN plain_dd dd")
            theirs = sorted(map(tuple, spark.sql(plain).collect()), key=repr)
            assert ours == theirs
            return "\n".join(r[0] for r in wh.sql("EXPLAIN ANALYZE " + sql).collect())

        wh.sql("SELECT count(*) FROM f").collect()  # every partition: the frame is built and kept
        assert "partitions=6/30" in check()
        assert "partitions=6/30" in check()  # listed from the frame: the same answer
        wh.sql("INSERT INTO f PARTITION (d=11, r='x') VALUES (7)")  # a new partition
        assert "partitions=7/31" in check()
        wh.sql("INSERT OVERWRITE TABLE f PARTITION (d=3, r='0') VALUES (1000)")
        check()
        wh.sql("SELECT count(*) FROM f").collect()  # rebuilt at the new version
        assert "partitions=7/31" in check()
    finally:
        wh.close()


def test_timestamp_keys_are_the_session_time_zone_wall_clock(tmp_path, spark):
    """With a session time zone other than the process's, a TIMESTAMP key collected by Spark
    is the session's wall clock, as a partition value and a literal are: the matching
    partition is read (it was pruned away: no rows), and so are the rows of a TIMESTAMP data
    column filtered in the reader. DATE keys have no time zone and prune the same way."""
    import time

    import hivepark

    before = spark.conf.get("spark.sql.session.timeZone")
    zone = "America/Los_Angeles" if time.localtime().tm_gmtoff >= 0 else "Asia/Tokyo"
    wh = hivepark.connect(str(tmp_path / "wh"), spark=spark,
                          conf={"hive.exec.dynamic.partition.mode": "nonstrict"})
    try:
        wh.sql(f"SET spark.sql.session.timeZone={zone}")
        wh.sql("CREATE TABLE f (v BIGINT, at TIMESTAMP) PARTITIONED BY (ts TIMESTAMP) STORED AS PARQUET")
        for hour in (10, 11):
            wh.sql(f"INSERT INTO f PARTITION (ts='2024-01-0{hour - 9} {hour}:00:00') SELECT id, "
                   "IF(id % 2 = 0, TIMESTAMP '2024-01-01 10:00:00', TIMESTAMP '2024-01-01 11:30:00') "
                   "FROM range(100)")
        wh.sql("CREATE TABLE fd (v BIGINT) PARTITIONED BY (dt DATE) STORED AS PARQUET")
        wh.sql("INSERT INTO fd PARTITION (dt) SELECT id, IF(id % 2 = 0, DATE '2024-01-01', "
               "DATE '2024-01-02') FROM range(100)")
        wh.sql("CREATE TABLE dim (ts TIMESTAMP, dt DATE, name STRING) STORED AS PARQUET")
        wh.sql("INSERT INTO dim VALUES (TIMESTAMP '2024-01-01 10:00:00', DATE '2024-01-01', 'a')")
        for name, schema in [("f", "v bigint, at timestamp, ts timestamp"),
                             ("fd", "v bigint, dt date"), ("dim", "ts timestamp, dt date, name string")]:
            spark.read.schema(schema).parquet(wh.catalog.get_table("default", name).location) \
                .createOrReplaceTempView(f"plain_{name}")

        def check(sql: str, expected: str) -> None:
            ours = sorted(map(tuple, wh.sql(sql).collect()), key=repr)
            theirs = sorted(map(tuple, spark.sql(re.sub(r"\b(f|fd|dim) (?=[a-z]+\b)", r"plain_\1 ",
                                                        sql)).collect()), key=repr)
            assert ours == theirs and ours
            assert expected in "\n".join(r[0] for r in wh.sql("EXPLAIN ANALYZE " + sql).collect())

        check("SELECT f.ts, count(*) FROM f f JOIN dim d ON f.ts = d.ts GROUP BY f.ts", "partitions=1/2")
        check("SELECT f.v, f.at FROM f f JOIN dim d ON f.at = d.ts",
              "row filter pushed to the reader: at IN (1 values)")
        check("SELECT fd.dt, count(*) FROM fd fd JOIN dim d ON fd.dt = d.dt GROUP BY fd.dt",
              "partitions=1/2")
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        wh.close()


def test_timestamp_reader_filter_keeps_both_instants_of_a_repeated_hour(tmp_path, spark):
    """When clocks go back, a wall-clock time names two instants (01:30 in Los Angeles on
    2024-11-03 is 08:30 and 09:30 UTC). The small side's keys are collected as the session's wall
    clock, and the reader filter's literal was one of the two: the rows at the other were lost.
    Also as a range (over IN_LIST_MAX values)."""
    import hivepark
    from hivepark.plan.nodes import IN_LIST_MAX

    before = spark.conf.get("spark.sql.session.timeZone")
    wh = hivepark.connect(str(tmp_path / "wh"), spark=spark)
    try:
        wh.sql("SET spark.sql.session.timeZone=America/Los_Angeles")
        wh.sql("CREATE TABLE f (v BIGINT, at TIMESTAMP) STORED AS PARQUET")
        # 07:30, 08:30, 09:30 and 10:30 UTC: 00:30, 01:30 (PDT), 01:30 (PST), 02:30 local
        wh.sql("INSERT INTO f SELECT id, timestamp_seconds(1730619000 + (id % 4) * 3600) FROM range(20000)")
        wh.sql("CREATE TABLE dim (ts TIMESTAMP, k INT) STORED AS PARQUET")
        wh.sql("INSERT INTO dim VALUES (timestamp_seconds(1730626200), 1), (timestamp_seconds(1730622600), 2)")
        # the range's top is the repeated 01:30: its literal was the earlier instant
        wh.sql(f"INSERT INTO dim SELECT timestamp_seconds(1730610000 - id * 60), 3 FROM range({IN_LIST_MAX + 1})")
        for name, schema in [("f", "v bigint, at timestamp"), ("dim", "ts timestamp, k int")]:
            spark.read.schema(schema).parquet(wh.catalog.get_table("default", name).location) \
                .createOrReplaceTempView(f"plain_{name}")
        for where, shape in (("d.k < 3", "at IN (1 values)"), ("d.k > 0", "(range of 202 values)")):
            sql = "SELECT f.v, f.at FROM {f} f JOIN {d} d ON f.at = d.ts WHERE " + where
            ours = sorted(map(tuple, wh.sql(sql.format(f="f", d="dim")).collect()))
            theirs = sorted(map(tuple, spark.sql(sql.format(f="plain_f", d="plain_dim")).collect()))
            assert ours == theirs and len(ours) == 10000, (where, len(ours), len(theirs))
            plan = "\n".join(r[0] for r in wh.sql("EXPLAIN ANALYZE " + sql.format(f="f", d="dim")).collect())
            assert "row filter pushed to the reader" in plan and shape in plan, plan
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        wh.close()


@pytest.mark.parametrize("where, pruned", [
    # Hive's dynamic_partition_pruning.q: an IN subquery is planned as a semi join and prunes
    ("s.ds IN (SELECT ds FROM dates WHERE holiday)", True),
    ("ds IN (SELECT d.ds FROM dates d WHERE d.holiday) AND s.amount > 10", True),
    ("s.ds IN (SELECT DISTINCT ds FROM dates WHERE holiday AND month = 1)", True),
    # not the same query as a semi join, or not a plain column of one table: left as written
    ("s.ds NOT IN (SELECT ds FROM dates WHERE NOT holiday AND ds IS NOT NULL)", False),
    ("s.ds IN (SELECT ds FROM dates WHERE holiday) OR s.id = 5", False),
    ("s.ds IN (SELECT max(ds) FROM dates WHERE holiday)", False),
    ("s.ds IN (SELECT ds FROM dates d WHERE d.holiday AND d.month = s.store)", False),
])
def test_an_in_subquery_prunes_as_a_semi_join(star, spark, where, pruned):
    out = same_as_plain(star, spark, f"SELECT s.id, s.ds FROM sales s WHERE {where}")
    assert (sales_partitions(out) == qualifying(spark, HOLIDAY)) == pruned
    if not pruned:
        assert sales_partitions(out) == "46/46"


def test_strict_mode_takes_a_semi_join_on_a_partition_key_as_an_inner_join(star, spark):
    """Hive adds ``ds IS NOT NULL`` to the scan of a table joined on its partition key, semi joined
    (an IN subquery) too: strict mode accepted the inner join and refused the semi join."""
    star.sql("SET hive.mapred.mode=strict")
    try:
        for sql in ("SELECT s.id FROM sales s LEFT SEMI JOIN dates d ON s.ds = d.ds AND d.holiday",
                    "SELECT s.id FROM sales s WHERE s.ds IN (SELECT ds FROM dates WHERE holiday)",
                    "SELECT s.id FROM sales s JOIN dates d ON s.ds = d.ds WHERE d.holiday"):
            same_as_plain(star, spark, sql)
    finally:
        star.sql("SET hive.mapred.mode=nonstrict")


def test_strict_mode_takes_a_join_through_a_subquery_on_a_partition_key_as_a_direct_one(star, spark):
    """``hive.mapred.mode=strict`` accepted a fact table joined on its partition key directly (Hive adds
    ``ds IS NOT NULL`` to the key) and refused the same join through a subquery or a view, whose scan
    runtime pruning narrows just the same (Hive pushes that filter down through the subquery)."""
    star.sql("CREATE VIEW IF NOT EXISTS eu_sales AS SELECT * FROM sales WHERE region = 'eu'")
    star.sql("SET hive.mapred.mode=strict")
    try:
        for sql in ("SELECT s.id FROM (SELECT * FROM sales WHERE amount > 0) s JOIN dates d ON s.ds = d.ds "
                    "WHERE d.holiday",
                    "WITH s AS (SELECT id, ds FROM sales) SELECT s.id FROM s, dates d WHERE s.ds = d.ds AND d.holiday"):
            assert sales_partitions(same_as_plain(star, spark, sql)) == "12/46"
        star.sql("SELECT e.id FROM eu_sales e JOIN dates d ON e.ds = d.ds").collect()
        # the preserved side of an outer join: its partitions are all read, and strict mode refuses it
        with pytest.raises(Exception, match="No partition predicate for Alias \"sales\" Table \"sales\""):
            star.sql("SELECT s.id FROM (SELECT * FROM sales) s LEFT JOIN dates d ON s.ds = d.ds").collect()
    finally:
        star.sql("SET hive.mapred.mode=nonstrict")


@pytest.mark.parametrize("sql", [
    "SELECT id FROM sales WHERE region = 'us' AND store IN (SELECT store FROM stores WHERE big)",
    "SELECT id FROM sales LEFT SEMI JOIN stores ON sales.store = stores.store AND big WHERE region = 'us'",
    "SELECT id FROM sales LEFT ANTI JOIN stores ON sales.store = stores.store AND big WHERE region = 'us'",
])
def test_a_semi_joined_tables_columns_do_not_make_the_where_ambiguous(star, spark, sql):
    """Found by a hunt: the right table of a semi or anti join (an IN subquery becomes one) is
    visible only in its ON, yet its ``region`` made the WHERE's unqualified ``region`` ambiguous:
    the outer table read all 46 partitions, strict mode refused the query as unfiltered, and
    Hive's string-number comparison was left to Spark, which failed on ``store = '1.0'``."""
    assert sales_partitions(same_as_plain(star, spark, sql)) == "12/46"
    star.sql("SET hive.mapred.mode=strict")
    try:
        same_as_plain(star, spark, sql)
    finally:
        star.sql("SET hive.mapred.mode=nonstrict")
    hive = sql.replace("region = 'us'", "store = '1.0'")  # compared as DOUBLE, as in Hive: store 1
    ours = sorted(r[0] for r in star.sql(hive).collect())
    theirs = sorted(r[0] for r in spark.sql(re.sub(r"\b(sales|stores)\b", r"plain_\1", hive)
                                            .replace("'1.0'", "1")).collect())
    assert ours == theirs


@pytest.mark.parametrize("sql", [
    "SELECT d.ds, d.note FROM days d WHERE EXISTS (SELECT 1 FROM sales s WHERE s.ds <> d.ds "
    "AND d.ds = '2024-01-03' AND s.ds IN (SELECT ds FROM days d))",
    "SELECT y.ds, y.note FROM days y WHERE EXISTS (SELECT 1 FROM sales s WHERE s.ds <> y.ds "
    "AND y.note = 'a' AND s.ds IN (SELECT ds FROM days y WHERE y.note = 'b'))",
    "SELECT d.ds, (SELECT count(*) FROM sales s WHERE s.ds <> d.ds AND d.ds = '2024-01-03' "
    "AND s.ds IN (SELECT ds FROM days d)) FROM days d",
])
def test_an_in_subquery_made_a_semi_join_does_not_take_an_outer_querys_alias(star, spark, sql):
    """Found by a hunt: the IN's table joined the correlated subquery under its own alias ``d``,
    which the subquery's WHERE used for the outer query's table: ``d.ds = '2024-01-03'`` pruned the
    joined table instead, and the outer row was lost (0 rows, or a count of 0, where Spark gives
    the row and 30)."""
    same_as_plain(star, spark, sql)


@pytest.mark.parametrize("where", [
    "s.ds IN (SELECT ds FROM dates WHERE holiday AND rand(1) < 2)",
    "s.ds IN (SELECT ds FROM dates WHERE holiday AND uuid() IS NOT NULL)",
])
def test_an_in_subquery_with_a_random_filter_stays_an_in(star, spark, where):
    """Found by a hunt: made a semi join, its random filter became part of a join condition,
    which Spark refuses (INVALID_NON_DETERMINISTIC_EXPRESSIONS), and would draw once per pair of
    rows instead of once per row of the subquery; plain Spark runs the IN."""
    assert sales_partitions(same_as_plain(star, spark, f"SELECT s.id FROM sales s WHERE {where}")) == "46/46"


@pytest.mark.parametrize("query, where", [
    ("SELECT s.ds, sum(s.amount) FROM (SELECT * FROM sales WHERE amount > 0) s JOIN dates d ON s.ds = d.ds "
     "WHERE d.holiday GROUP BY s.ds", HOLIDAY),
    ("WITH s AS (SELECT ds, amount FROM sales) SELECT s.ds, s.amount FROM s JOIN dates d ON s.ds = d.ds "
     "WHERE d.holiday", HOLIDAY),
    ("SELECT x.id FROM (SELECT id, ds AS day FROM sales) x JOIN dates d ON x.day = d.ds WHERE d.holiday", HOLIDAY),
    ("SELECT b.id FROM (SELECT * FROM (SELECT s.* FROM sales s WHERE amount > 5) a) b, dates d "
     "WHERE b.ds = d.ds AND d.holiday", HOLIDAY),
    # rows of one key stay apart: grouped by it, a window partitioned by it, DISTINCT, joined
    ("SELECT x.ds, x.n FROM (SELECT ds, count(*) n FROM sales GROUP BY ds, region HAVING count(*) > 1) x "
     "JOIN dates d ON x.ds = d.ds WHERE d.holiday", HOLIDAY),
    ("SELECT x.id, x.rn FROM (SELECT id, ds, row_number() OVER (PARTITION BY ds ORDER BY id) rn FROM sales) x "
     "JOIN dates d ON x.ds = d.ds WHERE d.holiday", HOLIDAY),
    ("SELECT x.ds, x.store FROM (SELECT DISTINCT ds, store FROM sales) x JOIN dates d ON x.ds = d.ds "
     "WHERE d.holiday", HOLIDAY),
    ("SELECT x.day, x.n FROM (SELECT ds AS day, count(*) n FROM sales GROUP BY day) x JOIN dates d "
     "ON x.day = d.ds WHERE d.holiday", HOLIDAY),
    # an IN subquery on a subquery's column is a semi join too
    ("SELECT x.id FROM (SELECT id, ds AS day FROM sales) x WHERE x.day IN (SELECT ds FROM dates WHERE holiday)",
     HOLIDAY),
    ("SELECT x.id FROM (SELECT s.id, s.ds FROM stores st FULL JOIN sales s ON s.store = st.store) x "
     "JOIN dates d ON x.ds = d.ds WHERE d.holiday", HOLIDAY),
    # the subquery on the null-supplying side of an outer join
    ("SELECT d.ds, s.id FROM dates d LEFT JOIN (SELECT * FROM sales) s ON s.ds = d.ds WHERE d.holiday", HOLIDAY),
    ("SELECT d.ds, s.id FROM (SELECT * FROM sales) s RIGHT JOIN dates d ON s.ds = d.ds WHERE d.holiday", HOLIDAY),
    # each branch of a UNION ALL (its key a table's column in every branch)
    ("SELECT x.id FROM (SELECT id, ds FROM sales WHERE region = 'eu' UNION ALL SELECT id, ds FROM sales "
     "WHERE region = 'us') x JOIN dates d ON x.ds = d.ds WHERE d.holiday", HOLIDAY + " AND s.region = 'eu'"),
    # NULL keys (the default partitions) match nothing; a column renamed to another's name
    ("SELECT x.id FROM (SELECT id, region AS place FROM sales) x JOIN stores st ON x.place = st.region",
     "s.region IS NOT NULL"),
    ("SELECT x.id FROM (SELECT id, ds AS region, region AS ds FROM sales) x JOIN stores st ON x.ds = st.region "
     "WHERE st.big", "s.region IN (SELECT region FROM plain_stores WHERE big)"),
    # a CTE read in two FROMs is read as a subquery in each: the joined one is pruned
    ("WITH s AS (SELECT * FROM sales) SELECT s.id FROM s JOIN dates d ON s.ds = d.ds WHERE d.holiday "
     "UNION ALL SELECT id FROM s WHERE id < 10", HOLIDAY),
])
def test_a_big_table_read_through_a_subquery_or_cte_is_pruned(star, spark, query, where):
    """A fact table read through a subquery or a CTE (its key passed through unchanged) read every
    partition its own filter left: the join's values pruned only a table joined directly. Every step
    here keeps each key's rows apart, so dropping the partitions of keys the join cannot match drops
    exactly the rows it drops."""
    out = same_as_plain(star, spark, query)
    assert sales_partitions(out) == qualifying(spark, where)
    assert re.search(r"runtime pruning \((d\.ds|st\.region|dates\.ds) -> (sales|s)\.(ds|region)\): \d+ distinct values",
                     out)


@pytest.mark.parametrize("query, said", [
    ("SELECT x.id FROM (SELECT y.id, y.ds FROM (SELECT * FROM sales) y) x LEFT JOIN dates d "
     "ON x.ds = d.ds AND d.holiday", "the big table is on the preserved side of a LEFT OUTER JOIN"),
    ("SELECT x.id, d.ds FROM (SELECT * FROM sales) x FULL JOIN dates d ON x.ds = d.ds",
     "a FULL OUTER JOIN preserves both sides"),
    ("SELECT x.id FROM (SELECT id, ds FROM sales ORDER BY id LIMIT 100) x JOIN dates d ON x.ds = d.ds "
     "WHERE d.holiday", "read through a subquery, a CTE or a view (x) with a LIMIT"),
    ("SELECT x.ds, x.n FROM (SELECT ds, region, count(*) n FROM sales GROUP BY ds, region WITH ROLLUP) x "
     "JOIN dates d ON x.ds = d.ds WHERE d.holiday", "(x) that aggregates rows of several key values"),
    ("SELECT x.id, x.rn FROM (SELECT id, ds, row_number() OVER (ORDER BY id) rn FROM sales) x "
     "JOIN dates d ON x.ds = d.ds WHERE d.holiday", "(x) with a window not partitioned by the key"),
    ("SELECT x.id FROM (SELECT id, substr(ds, 1, 10) AS ds FROM sales) x JOIN dates d ON x.ds = d.ds "
     "WHERE d.holiday", "the key (x.ds) is an expression of the big table's column"),
    ("SELECT x.id FROM (SELECT id, ds FROM sales UNION SELECT 1, '2024-01-02') x JOIN dates d "
     "ON x.ds = d.ds WHERE d.holiday", "read through a UNION, EXCEPT or INTERSECT (x)"),
    ("WITH s AS (SELECT *, rand(3) AS r FROM sales) SELECT s.id FROM s JOIN dates d ON s.ds = d.ds "
     "WHERE d.holiday", "(s) with random values"),
    # read again in an IN: one CTE, its rows both readers'
    ("WITH s AS (SELECT * FROM sales) SELECT s.id FROM s JOIN dates d ON s.ds = d.ds WHERE d.holiday "
     "AND s.id IN (SELECT id FROM s WHERE ds = '2024-01-06')", "read through a CTE (s) read more than once"),
])
def test_a_big_table_read_through_a_subquery_that_mixes_keys_says_why(star, spark, query, said):
    """Where dropping another key's rows could change a row the join keeps (a LIMIT, an aggregate or
    a window across keys, random values, a CTE read elsewhere too) or the big table's rows are kept
    whatever the join finds, every partition is read, and EXPLAIN says why."""
    out = same_as_plain(star, spark, query)
    assert sales_partitions(out) == "46/46"
    assert "runtime pruning not applied (d.ds -> sales.ds): " in out and said in out


def test_a_big_table_read_through_a_view_is_pruned(star, spark):
    """A view with a WHERE over the fact table, joined with a dimension, and with a view over the
    dimension: its own filter prunes statically, the join's values at runtime."""
    star.sql("CREATE VIEW IF NOT EXISTS eu_sales AS SELECT * FROM sales WHERE region = 'eu'")
    star.sql("CREATE VIEW IF NOT EXISTS holidays AS SELECT ds, month FROM dates WHERE holiday")
    for sql in ("SELECT e.id FROM eu_sales e JOIN dates d ON e.ds = d.ds WHERE d.holiday",
                "SELECT e.id FROM eu_sales e JOIN holidays h ON e.ds = h.ds",
                "SELECT e.id FROM eu_sales e WHERE e.ds IN (SELECT ds FROM dates WHERE holiday)"):
        ours = sorted(r[0] for r in star.sql(sql).collect())
        assert ours == sorted(r[0] for r in spark.sql(
            "SELECT s.id FROM plain_sales s JOIN plain_dates d ON s.ds = d.ds "
            "WHERE d.holiday AND s.region = 'eu'").collect())
        out = "\n".join(r[0] for r in star.sql("EXPLAIN ANALYZE " + sql).collect())
        assert sales_partitions(out) == qualifying(spark, HOLIDAY + " AND s.region = 'eu'") == "3/46"
        assert "(static pruning: 12/46, then runtime pruning)" in out
    # a view with a LIMIT is named by its reference in the reason (not by its query's own alias)
    star.sql("CREATE VIEW IF NOT EXISTS some_sales AS SELECT * FROM sales LIMIT 20")
    out = "\n".join(r[0] for r in star.sql("EXPLAIN ANALYZE SELECT l.id FROM some_sales l JOIN dates d "
                                           "ON l.ds = d.ds WHERE d.holiday").collect())
    assert sales_partitions(out) == "46/46"
    assert "read through a subquery, a CTE or a view (l) with a LIMIT" in out


@pytest.mark.parametrize("where", ["rand(7) < 0.5 + 0 * d.month", "d.month + rand(11) > 1.5"])
def test_a_random_filter_on_the_small_side_does_not_choose_its_values(star, spark, where):
    """Found by a hunt: a WHERE conjunct with rand() on the dimension's columns was taken as the
    dimension's own filter and drawn once per dimension row to collect its keys (5 or 6 of 13
    days), while Spark draws it for each joined row, above the join: whole days of the fact table
    were pruned away (75 rows where the same query without pruning gives 193)."""
    sql = f"SELECT s.id, d.ds FROM sales s JOIN dates d ON s.ds = d.ds WHERE {where}"
    out = "\n".join(r[0] for r in star.sql("EXPLAIN ANALYZE " + sql).collect())
    assert "runtime pruning (d.ds -> s.ds): 13 distinct values" in out
    ours = sorted(map(tuple, star.sql(sql).collect()))
    star.sql("SET hive.optimize.mapjoin.partition.pruning=false")
    try:
        assert ours == sorted(map(tuple, star.sql(sql).collect()))
    finally:
        star.sql("SET hive.optimize.mapjoin.partition.pruning=true")


def test_a_join_with_an_empty_table_or_a_one_word_filter(wh, spark):
    """Found by a hunt for bugs: a join with an empty table failed with Spark's
    ASSIGNMENT_ARITY_MISMATCH: the other side, pruned to no value, was read as ``(SELECT * FROM view
    WHERE (false))``, which Spark's parser takes as the view aliased ``WHERE`` with a column list
    (false). A filter on a BOOLEAN column alone reads as before."""
    wh.sql("CREATE TABLE facts (k INT, v STRING) STORED AS ORC")
    wh.sql("INSERT INTO facts VALUES (10, 'ten'), (2, 'two')")
    wh.sql("CREATE TABLE nothing_yet (k INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("CREATE TABLE flags (flag BOOLEAN) STORED AS PARQUET")
    wh.sql("INSERT INTO flags VALUES (true), (false)")
    for query in ("SELECT * FROM nothing_yet n JOIN facts f ON n.k = f.k",
                  "SELECT * FROM facts f JOIN nothing_yet n ON n.k = f.k"):
        assert wh.sql(query).collect() == [], query
    wh.sql("SELECT * FROM flags").collect()  # warm: its frame is then filtered inline
    assert [tuple(r) for r in wh.sql("SELECT * FROM flags WHERE flag").collect()] == [(True,)]
    assert [tuple(r) for r in wh.sql("SELECT * FROM flags f JOIN facts ON f.flag WHERE facts.k = 2").collect()] \
        == [(True, 2, "two")]


@pytest.mark.parametrize("query, where", [
    ("WITH c (region, ds, id) AS (SELECT ds, region, id FROM sales) SELECT c.id FROM c JOIN dates d "
     "ON c.region = d.ds WHERE d.holiday", HOLIDAY),
    ("SELECT x.id FROM (SELECT ds, region, id FROM sales) AS x (region, ds, id) JOIN stores st "
     "ON x.ds = st.region WHERE st.big", "s.region IN (SELECT region FROM plain_stores WHERE big)"),
    ("SELECT x.id FROM (SELECT ds, region, id FROM sales) AS x (region, ds, id) "
     "WHERE x.region IN (SELECT ds FROM dates WHERE holiday)", HOLIDAY),
    ("SELECT x.id FROM (SELECT ds, region, id FROM sales) AS x (region, ds, id) WHERE x.region = '2024-01-06'",
     "s.ds = '2024-01-06'"),
    ("SELECT s.id FROM sales s JOIN (SELECT month, ds FROM dates WHERE holiday) AS h (ds, month) "
     "ON s.ds = h.month", HOLIDAY),
    # a list over a *: its columns are not known from the text, so nothing is traced through it
    ("SELECT x.a FROM (SELECT * FROM sales) AS x (a, b, c, region, ds) JOIN stores st ON x.ds = st.region",
     "s.ds IS NOT NULL"),
    # a list over an alias its GROUP BY, HAVING and ORDER BY read: followed by position, grouped by the key
    ("SELECT x.day, x.n FROM (SELECT ds AS k, count(*) AS c FROM sales GROUP BY k HAVING c > 29 ORDER BY k) "
     "AS x (day, n) JOIN dates d ON x.day = d.ds WHERE d.holiday", HOLIDAY),
])
def test_a_derived_tables_column_list_names_its_columns(star, spark, query, where):
    """Found by a second hunt, beside the fix of the same cause (a column list on an alias, read
    by position): ``AS x (region, ds)``, ``WITH c (region, ds) AS`` were traced by the names
    their SELECT gives, so a join on ``x.region`` (the table's ds) pruned the table's region by
    dates and a pushed ``x.region = ...`` filtered region: no rows where plain Spark finds 90."""
    out = same_as_plain(star, spark, query)
    assert sales_partitions(out) == qualifying(spark, where)
