"""ALTER TABLE ADD COLUMNS, REPLACE COLUMNS and CHANGE COLUMN: the metastore's columns change,
no file is rewritten, and the rows are those plain Spark SQL reads from the same files with
the new columns (a column added reads NULL from the files written before it); a change that
would make existing Parquet or ORC files read wrong is refused, changing nothing."""

from __future__ import annotations

import json
import os

import pytest

from hivepark.errors import SemanticError, UnsupportedError


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _plain(spark, wh, table: str, schema: str, fmt: str):
    base = "file://" + os.path.join(wh.location, table)
    return spark.read.format(fmt).schema(schema).option("basePath", base).load(base)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_added_columns_read_null_from_older_files_as_plain_spark_does(wh, spark, fmt):
    wh.sql(f"CREATE TABLE fruit (id INT, name STRING) PARTITIONED BY (ds STRING) STORED AS {fmt}")
    wh.sql("INSERT INTO fruit PARTITION (ds='a') VALUES (1, 'apple'), (2, 'pear')")
    wh.sql("ALTER TABLE fruit ADD COLUMNS (color STRING COMMENT 'its color', kg DOUBLE) CASCADE")
    wh.sql("INSERT INTO fruit PARTITION (ds='b') VALUES (3, 'fig', 'purple', 0.5)")
    described = [tuple(r)[:3] for r in wh.sql("DESCRIBE fruit").collect()][:4]
    assert described == [("id", "int", ""), ("name", "string", ""), ("color", "string", "its color"),
                         ("kg", "double", "")]
    plain = _plain(spark, wh, "fruit", "id INT, name STRING, color STRING, kg DOUBLE, ds STRING", fmt)
    assert _rows(wh.sql("SELECT * FROM fruit")) == _rows(plain)
    assert (1, "apple", None, None, "a") in _rows(wh.sql("SELECT * FROM fruit"))
    assert _rows(wh.sql("SELECT id FROM fruit WHERE color = 'purple'")) == [(3,)]
    assert spark.table("fruit").columns == ["id", "name", "color", "kg", "ds"]  # Spark's view follows

    # REPLACE COLUMNS leaves kg out: it is no longer read, the files keep it
    wh.sql("ALTER TABLE fruit REPLACE COLUMNS (id INT, name STRING, color STRING COMMENT 'its color')")
    plain = _plain(spark, wh, "fruit", "id INT, name STRING, color STRING, ds STRING", fmt)
    assert _rows(wh.sql("SELECT * FROM fruit")) == _rows(plain)
    before = _rows(wh.sql("DESCRIBE fruit"))
    refused = {"ALTER TABLE fruit CHANGE COLUMN name label STRING": "renaming column name"}
    if fmt == "parquet":  # Spark's Parquet reader does not convert int to float or to text (ORC's does)
        refused |= {"ALTER TABLE fruit CHANGE COLUMN id id FLOAT": "changing column id from int to float",
                    "ALTER TABLE fruit REPLACE COLUMNS (id STRING, name STRING)": "column id from int to string"}
    for text, fix in refused.items():
        with pytest.raises(UnsupportedError, match=fix):
            wh.sql(text)
    assert _rows(wh.sql("DESCRIBE fruit")) == before
    # a new comment and place for a column: its files are read by name
    wh.sql("ALTER TABLE fruit CHANGE COLUMN color color STRING COMMENT 'what it looks like' FIRST")
    assert [tuple(r)[:3] for r in wh.sql("DESCRIBE fruit").collect()][:3] == [
        ("color", "string", "what it looks like"), ("id", "int", ""), ("name", "string", "")]
    plain = _plain(spark, wh, "fruit", "color STRING, id INT, name STRING, ds STRING", fmt)
    assert _rows(wh.sql("SELECT * FROM fruit")) == _rows(plain)
    # a table without files takes any change
    wh.sql(f"CREATE TABLE empty_one (id INT, name STRING) STORED AS {fmt}")
    wh.sql("ALTER TABLE empty_one CHANGE COLUMN name label STRING")
    wh.sql("INSERT INTO empty_one VALUES (1, 'x')")
    assert _rows(wh.sql("SELECT label FROM empty_one")) == [("x",)]


def test_a_text_table_renames_and_retypes_by_position(wh, spark):
    wh.sql("CREATE TABLE raw (id INT, price STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','")
    wh.sql("INSERT INTO raw VALUES (1, '3.5'), (2, '1.25')")
    # a string becomes a number only when Hive's metastore check is off (as in Hive)
    with pytest.raises(SemanticError, match=r"incompatible .* : price_eur \(price_eur of default.raw is string"):
        wh.sql("ALTER TABLE raw CHANGE COLUMN price price_eur DOUBLE")
    wh.sql("SET hive.metastore.disallow.incompatible.col.type.changes=false")
    wh.sql("ALTER TABLE raw CHANGE COLUMN price price_eur DOUBLE")
    plain = spark.read.schema("id INT, price_eur DOUBLE").csv("file://" + os.path.join(wh.location, "raw"))
    assert _rows(wh.sql("SELECT * FROM raw")) == _rows(plain) == [(1, 3.5), (2, 1.25)]
    wh.sql("ALTER TABLE raw ADD COLUMNS (note STRING)")
    assert _rows(wh.sql("SELECT * FROM raw WHERE note IS NULL")) == [(1, 3.5, None), (2, 1.25, None)]
    wh.sql("ALTER TABLE raw CHANGE price_eur price_eur DOUBLE COMMENT 'euros' CASCADE")
    assert ("price_eur", "double", "euros") in [tuple(r) for r in wh.sql("DESCRIBE raw").collect()]
    with pytest.raises(UnsupportedError, match="by position"):  # its files would read into other columns
        wh.sql("ALTER TABLE raw CHANGE COLUMN price_eur price_eur DOUBLE AFTER note")
    assert _rows(wh.sql("SELECT * FROM raw")) == [(1, 3.5, None), (2, 1.25, None)]


def test_bad_column_changes_name_the_problem(wh, spark):
    wh.sql("CREATE TABLE t (x INT, v STRING) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1) "
          "STORED AS DIRECTORIES STORED AS PARQUET")
    before = _rows(wh.sql("DESCRIBE t"))
    for text, code in {"ALTER TABLE t ADD COLUMNS (ds STRING)": 10036,  # a partition column's name
                       "ALTER TABLE t ADD COLUMNS (v INT)": 10036,
                       "ALTER TABLE t CHANGE COLUMN missing other INT": 10002,
                       "ALTER TABLE t CHANGE COLUMN x y INT": 10207,  # a skewed column
                       "ALTER TABLE t REPLACE COLUMNS (v STRING)": 10207}.items():
        with pytest.raises(SemanticError) as e:
            wh.sql(text)
        assert e.value.code == code, text
    assert _rows(wh.sql("DESCRIBE t")) == before


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_a_column_widens_in_place_and_reads_as_plain_spark_does(wh, spark, fmt):
    """INT to BIGINT (the value outgrew INT), FLOAT to DOUBLE, a decimal given more digits, a
    VARCHAR made a STRING: the metastore changes, the files written before are read as the new
    types, and the rows are those plain Spark reads from the same files with them."""
    wh.sql(f"CREATE TABLE m (id INT, amount FLOAT, price DECIMAL(5,2), name VARCHAR(10)) PARTITIONED BY "
           f"(ds STRING) STORED AS {fmt}")
    wh.sql("INSERT INTO m PARTITION (ds='a') VALUES (1, 1.5, 999.99, 'a'), (2147483647, NULL, -1.5, NULL)")
    for change in ("id id BIGINT", "amount amount DOUBLE", "price price DECIMAL(12,4)", "name name STRING"):
        wh.sql(f"ALTER TABLE m CHANGE COLUMN {change}")
    wh.sql("INSERT INTO m PARTITION (ds='b') VALUES (9999999999, 0.1, 12345678.1234, 'b')")
    schema = "id BIGINT, amount DOUBLE, price DECIMAL(12,4), name STRING, ds STRING"
    assert _rows(wh.sql("SELECT * FROM m")) == _rows(_plain(spark, wh, "m", schema, fmt))
    assert _rows(wh.sql("SELECT id, ds FROM m WHERE id >= 2147483647")) == [(2147483647, "a"), (9999999999, "b")]
    assert [tuple(r)[:2] for r in wh.sql("DESCRIBE m").collect()][:4] == [
        ("id", "bigint"), ("amount", "double"), ("price", "decimal(12,4)"), ("name", "string")]

    before = _rows(wh.sql("DESCRIBE m"))
    # narrowing, as Hive's metastore: refused with its text, whatever the format
    with pytest.raises(SemanticError, match=r"types incompatible with the existing columns .* : id \(id of "
                                            r"default.m is bigint, and int"):
        wh.sql("ALTER TABLE m CHANGE COLUMN id id INT")
    # Hive allows these, but Spark's reader would read the files wrong or fail
    bad = "ALTER TABLE m CHANGE COLUMN id id STRING" if fmt == "parquet" else \
        "ALTER TABLE m CHANGE COLUMN price price STRING"
    with pytest.raises(UnsupportedError, match="which Spark's reader does not convert"):
        wh.sql(bad)
    assert _rows(wh.sql("DESCRIBE m")) == before
    assert _rows(wh.sql("SELECT * FROM m")) == _rows(_plain(spark, wh, "m", schema, fmt))


@pytest.mark.parametrize("fmt", ["parquet", "orc", "textfile"])
def test_a_string_narrowed_to_varchar_or_char_reads_cut_as_hive(wh, spark, fmt):
    """Found by a hunt for bugs: after CHANGE b b VARCHAR(2) (or CHAR(n)) the files written before
    read back longer than the type allows ('one' where Hive's HiveVarchar reads 'on'), so WHERE
    b = 'on' missed the old row and GROUP BY gave two groups. Each value is read cut to n (a CHAR
    without its trailing spaces, as hivepark stores CHAR), as plain Spark reads the same files
    through substring/rtrim; a map-join small side read by pyarrow sees the same values."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql(f"CREATE TABLE nv (a INT, b STRING, c STRING) STORED AS {fmt}")
    wh.sql("INSERT INTO nv VALUES (1, 'one', 'ab  x'), (2, 'on', 'ab'), (3, NULL, 'abcd')")
    wh.sql("ALTER TABLE nv CHANGE b b VARCHAR(2)")
    wh.sql("ALTER TABLE nv CHANGE c c CHAR(3)")
    wh.sql("INSERT INTO nv VALUES (4, 'one', 'abc ')")
    base = "file://" + os.path.join(wh.location, "nv")
    if fmt == "textfile":
        raw = spark.read.schema("a INT, b STRING, c STRING").options(sep="\x01", nullValue="\\N").csv(base)
    else:
        raw = spark.read.format(fmt).schema("a INT, b STRING, c STRING").load(base)
    plain = raw.selectExpr("a", "substring(b, 1, 2) AS b", "rtrim(substring(c, 1, 3)) AS c")
    assert _rows(wh.sql("SELECT * FROM nv")) == _rows(plain) == [
        (1, "on", "ab"), (2, "on", "ab"), (3, None, "abc"), (4, "on", "abc")]
    assert _rows(wh.sql("SELECT a FROM nv WHERE b = 'on' AND c = 'ab'")) == [(1,), (2,)]
    assert _rows(wh.sql("SELECT b, count(*) FROM nv GROUP BY b")) == [("on", 3), (None, 1)]
    # the small side of a map-join, read in-process, keeps the partitions its cut values name
    wh.sql("CREATE TABLE big (v INT) PARTITIONED BY (k STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO big PARTITION (k) SELECT CAST(id AS INT), element_at(array('on', 'one', 'ab'), "
           "CAST(id % 3 + 1 AS INT)) FROM range(3000)")
    query = "SELECT n.a, count(*) FROM big g JOIN nv n ON g.k = n.b WHERE n.a = 1 GROUP BY n.a"
    assert _rows(wh.sql(query)) == [(1, 1000)]
    explained = "\n".join(r[0] for r in wh.sql("EXPLAIN ANALYZE " + query).collect())
    assert "partitions=1/3" in explained, explained
    assert ("from default.nv (pyarrow)" in explained) == (fmt != "textfile")
    # a small side filtered on a cut column: the filter sees the values as cut
    query = "SELECT n.a, count(*) FROM big g JOIN nv n ON g.k = n.b WHERE n.b = 'on' AND n.a < 3 GROUP BY n.a"
    assert _rows(wh.sql(query)) == [(1, 1000), (2, 1000)]
    # only the narrowed columns are read cut (a cut keeps Spark from pushing their filters into the
    # reader); a VARCHAR a table was made with holds values hivepark cut when it wrote them
    from hivepark.storage.formats import CUT_COLUMNS

    assert json.loads(wh.catalog.get_table("default", "nv").properties[CUT_COLUMNS]) == ["b", "c"]
    wh.sql(f"CREATE TABLE fresh (b VARCHAR(2)) STORED AS {fmt}")
    wh.sql("INSERT INTO fresh VALUES ('one'), ('x')")
    wh.sql("ALTER TABLE fresh CHANGE b b VARCHAR(5)")  # wider: every value fits
    assert CUT_COLUMNS not in wh.catalog.get_table("default", "fresh").properties
    assert _rows(wh.sql("SELECT * FROM fresh WHERE b = 'on'")) == [("on",)]


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_char_and_varchar_values_of_files_hivepark_did_not_write_read_cut_as_hive(wh, spark, tmp_path, fmt):
    """Found by a hunt for bugs: a file another tool wrote (LOAD DATA, an EXTERNAL table's
    LOCATION, ADD PARTITION ... LOCATION, MSCK REPAIR) holding 'abcdef' in a CHAR(3) column, or
    a CHAR's padding ('ab   ', as Hive's ORC writer pads), read back as written, so WHERE c =
    'abc' found nothing where Hive's HiveChar and HiveVarchar read the values cut. Each such
    value is read as plain Spark reads the same file through substring/rtrim."""
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    rows = [(1, "abcdef", "xyzuvw"), (2, "ab   ", "ab   "), (3, "ab", None)]
    src = str(tmp_path / "src")
    spark.createDataFrame(rows, "k int, c string, v string").coalesce(1).write.format(fmt).save(src)
    cols = "k INT, c CHAR(3), v VARCHAR(4)"
    plain = _rows(spark.read.format(fmt).schema("k int, c string, v string").load(src)
                  .selectExpr("k", "rtrim(substring(c, 1, 3)) AS c", "substring(v, 1, 4) AS v"))
    assert plain == [(1, "abc", "xyzu"), (2, "ab", "ab  "), (3, "ab", None)]
    wh.sql(f"CREATE TABLE ld ({cols}) STORED AS {fmt}")
    name = next(f for f in os.listdir(src) if f.startswith("part-"))
    wh.sql(f"LOAD DATA LOCAL INPATH '{src}/{name}' INTO TABLE ld")
    wh.sql(f"CREATE EXTERNAL TABLE ext ({cols}) STORED AS {fmt} LOCATION 'file://{src}'")
    wh.sql(f"CREATE TABLE pl ({cols}) PARTITIONED BY (d STRING) STORED AS {fmt}")
    spark.read.format(fmt).load(src).write.format(fmt).save(f"{tmp_path}/pl_x")
    wh.sql(f"ALTER TABLE pl ADD PARTITION (d='x') LOCATION 'file://{tmp_path}/pl_x'")
    wh.sql(f"CREATE TABLE ms ({cols}) PARTITIONED BY (d STRING) STORED AS {fmt}")
    spark.read.format(fmt).load(src).write.format(fmt).save(os.path.join(wh.location, "ms", "d=y"))
    wh.sql("MSCK REPAIR TABLE ms")
    for table in ("ld", "ext", "pl", "ms"):
        assert _rows(wh.sql(f"SELECT k, c, v FROM {table}")) == plain, table
        assert _rows(wh.sql(f"SELECT k FROM {table} WHERE c = 'abc' OR v = 'ab  '")) == [(1,), (2,)], table
        assert _rows(spark.sql(f"SELECT k, c, v FROM {table}")) == plain, table


def test_char_and_varchar_values_read_cut_after_set_location(wh, spark, tmp_path):
    """Found by a hunt for bugs: ALTER TABLE t [PARTITION (...)] SET LOCATION at another tool's
    files, or CREATE TABLE at a default directory holding them, did not record the CHAR/VARCHAR
    columns as read cut, as ADD PARTITION ... LOCATION does: 'abcdef' in a CHAR(3) column read
    back whole, so WHERE c = 'abc' found nothing."""
    rows = [(1, "abcdef", "xyzuvw"), (2, "ab   ", "ab   "), (3, "ab", None)]
    src = str(tmp_path / "src")
    spark.createDataFrame(rows, "k int, c string, v string").coalesce(1).write.parquet(src)
    spark.read.parquet(src).write.parquet(f"{tmp_path}/part")
    plain = _rows(spark.read.schema("k int, c string, v string").parquet(src)
                  .selectExpr("k", "rtrim(substring(c, 1, 3)) AS c", "substring(v, 1, 4) AS v"))
    assert plain == [(1, "abc", "xyzu"), (2, "ab", "ab  "), (3, "ab", None)]
    wh.sql("CREATE TABLE sl (k INT, c CHAR(3), v VARCHAR(4)) STORED AS PARQUET")
    wh.sql(f"ALTER TABLE sl SET LOCATION 'file://{src}'")
    wh.sql("CREATE TABLE slp (k INT, c CHAR(3), v VARCHAR(4)) PARTITIONED BY (d STRING) STORED AS PARQUET")
    wh.sql("ALTER TABLE slp ADD PARTITION (d='x')")
    wh.sql(f"ALTER TABLE slp PARTITION (d='x') SET LOCATION 'file://{tmp_path}/part'")
    # CREATE TABLE at its default directory, where another tool left files: they are the table's
    spark.read.parquet(src).write.parquet(os.path.join(wh.location, "pre"))
    wh.sql("CREATE TABLE pre (k INT, c CHAR(3), v VARCHAR(4)) STORED AS PARQUET")
    for table in ("sl", "slp", "pre"):
        assert _rows(wh.sql(f"SELECT k, c, v FROM {table}")) == plain, table
        assert _rows(wh.sql(f"SELECT k FROM {table} WHERE c = 'abc' OR v = 'ab  '")) == [(1,), (2,)], table


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_a_dropped_column_comes_back_only_with_a_type_its_files_read_as(wh, spark, fmt):
    """Found by a hunt for bugs: REPLACE COLUMNS (a INT) then ADD COLUMNS (b INT) over files holding
    b as STRING was accepted (CHANGE b b INT is refused), and every later SELECT failed with Spark's
    PARQUET_COLUMN_DATA_TYPE_MISMATCH, whose message called the file damaged. The types of the
    columns REPLACE COLUMNS drops are kept, and a column of that name comes back only with a type
    the reader reads them as; the table reads as plain Spark reads its files."""
    wh.sql(f"CREATE TABLE rd (a INT, b STRING) STORED AS {fmt}")
    wh.sql("INSERT INTO rd VALUES (1, 'hello')")
    wh.sql("ALTER TABLE rd REPLACE COLUMNS (a INT)")
    for stmt in ("ALTER TABLE rd ADD COLUMNS (b INT)", "ALTER TABLE rd REPLACE COLUMNS (a INT, b BIGINT)",
                 "ALTER TABLE rd CHANGE a b INT"):
        with pytest.raises(UnsupportedError, match=f"is stored as {fmt.upper()}.*(its files hold column b as "
                           "string \\(dropped by REPLACE COLUMNS\\)|renaming column a)"):
            wh.sql(stmt)
    assert [tuple(r)[:2] for r in wh.sql("DESCRIBE rd").collect()] == [("a", "int")]
    assert _rows(wh.sql("SELECT * FROM rd")) == _rows(_plain(spark, wh, "rd", "a INT", fmt)) == [(1,)]
    wh.sql("ALTER TABLE rd ADD COLUMNS (b STRING)")  # the type its files hold: read again
    wh.sql("INSERT INTO rd VALUES (2, 'two')")
    assert _rows(wh.sql("SELECT * FROM rd")) == _rows(_plain(spark, wh, "rd", "a INT, b STRING", fmt)) \
        == [(1, "hello"), (2, "two")]
    wh.sql("ALTER TABLE rd REPLACE COLUMNS (a INT)")  # dropped again: still refused
    with pytest.raises(UnsupportedError, match="its files hold column b as string"):
        wh.sql("ALTER TABLE rd ADD COLUMNS (b INT)")
    wh.sql("TRUNCATE TABLE rd")  # no file holds it any more: any type
    wh.sql("ALTER TABLE rd ADD COLUMNS (b INT)")
    wh.sql("INSERT INTO rd VALUES (3, 3)")
    assert _rows(wh.sql("SELECT * FROM rd")) == _rows(_plain(spark, wh, "rd", "a INT, b INT", fmt)) == [(3, 3)]


def test_a_filter_on_an_orc_column_retyped_across_kinds_reads_the_old_partitions(wh, spark):
    """Found by a hunt for bugs: after CHANGE COLUMN code code STRING (INT files), amount DOUBLE
    (DECIMAL files) or day STRING (DATE files) of an ORC table, every query filtering on the column
    failed (FAILED_READ_FILE: ClassCastException, "Wrong value class java.lang.String for DATE"):
    Spark's ORC reader builds the pushed filter's literal for the file's type. Such a column is read
    through a projection, so no filter on it is pushed; a widened INT keeps its pushdown."""
    wh.sql("CREATE TABLE sales (code INT, amount DECIMAL(7,2), day DATE, id INT, ts TIMESTAMP) "
           "PARTITIONED BY (ds STRING) STORED AS ORC")
    wh.sql("INSERT INTO sales PARTITION (ds='2024-01') VALUES (10, 1.25, DATE'2024-01-05', 1, "
           "TIMESTAMP'2024-01-05 10:00:00'), (-2, 3.50, DATE'2024-01-09', 2, NULL)")
    for change in ("code code STRING", "amount amount DOUBLE", "day day STRING", "id id BIGINT", "ts ts STRING"):
        wh.sql(f"ALTER TABLE sales CHANGE COLUMN {change}")
    wh.sql("INSERT INTO sales PARTITION (ds='2024-02') VALUES ('A7', 9.75, '2024-02-01', 3000000000, 'noon')")
    schema = "code STRING, amount DOUBLE, day STRING, id BIGINT, ts STRING, ds STRING"
    plain = _plain(spark, wh, "sales", schema, "orc")
    plain.createOrReplaceTempView("sales_plain")
    for where in ("code = '10'", "code IN ('-2', 'A7')", "amount = 1.25", "amount > 3.0 AND amount < 9",
                  "day = '2024-01-09'", "day LIKE '2024-02%'", "ts = '2024-01-05 10:00:00'", "id > 1",
                  "id = 3000000000 OR code = '10'"):
        with _pushdown_off(spark):
            want = _rows(spark.sql(f"SELECT * FROM sales_plain WHERE {where}"))
        assert want, where
        assert _rows(wh.sql(f"SELECT * FROM sales WHERE {where}")) == want, where
    assert _rows(wh.sql("SELECT ds, count(*), sum(amount) FROM sales WHERE code <> 'x' GROUP BY ds")) == [
        ("2024-01", 2, 4.75), ("2024-02", 1, 9.75)]
    # the widened integer is still pushed into the reader
    plan = wh.sql("SELECT * FROM sales WHERE id > 1 AND code = '10'")._jdf.queryExecution().executedPlan().toString()
    assert "GreaterThan(id,1)" in plan and "code" not in plan.split("PushedFilters:")[1].split("]")[0], plan


class _pushdown_off:
    """Plain Spark with ORC filter pushdown off: the rows the files hold (with it on, plain Spark
    fails the same way hivepark did)."""

    def __init__(self, spark):
        self.spark = spark

    def __enter__(self):
        self.spark.conf.set("spark.sql.orc.filterPushdown", "false")

    def __exit__(self, *exc):
        self.spark.conf.set("spark.sql.orc.filterPushdown", "true")


def test_restrict_and_partition_level_column_changes(wh, spark):
    """Found by a hunt for bugs: ``ADD COLUMNS (...) RESTRICT`` (and REPLACE COLUMNS ... RESTRICT),
    Hive's own default spelled out, failed to parse ("this statement is not supported"), though
    CASCADE was taken; ``ALTER TABLE t PARTITION (...) ADD COLUMNS`` / ``CHANGE`` / ``SET FILEFORMAT``
    were refused naming Hive's internal operation (ADDCOLS, ALTERCOLUMN) and no way forward. RESTRICT
    is taken as CASCADE is (one column list for the table and its partitions); a partition's change
    names the statement to run instead and changes nothing."""
    wh.sql("CREATE TABLE ev (id INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO ev PARTITION (ds='a') VALUES (1)")
    wh.sql("ALTER TABLE ev ADD COLUMNS (region STRING) RESTRICT")
    wh.sql("ALTER TABLE ev REPLACE COLUMNS (id INT, region STRING, note STRING) RESTRICT")
    wh.sql("INSERT INTO ev PARTITION (ds='b') VALUES (2, 'eu', 'n')")
    assert _rows(wh.sql("SELECT * FROM ev")) == [(1, None, None, "a"), (2, "eu", "n", "b")]
    before = _rows(wh.sql("DESCRIBE ev"))
    for text, clause in {"ALTER TABLE ev PARTITION (ds='a') ADD COLUMNS (x INT)": "ADD COLUMNS",
                         "ALTER TABLE ev PARTITION (ds='a') REPLACE COLUMNS (id INT)": "REPLACE COLUMNS",
                         "ALTER TABLE ev PARTITION (ds='a') CHANGE COLUMN id id BIGINT": "CHANGE COLUMN"}.items():
        with pytest.raises(UnsupportedError, match=rf"one column list for default.ev and all its partitions.*"
                           rf"Nothing was changed; run it on the table.*ALTER TABLE ev {clause}"):
            wh.sql(text)
    with pytest.raises(UnsupportedError, match=r"read as the table's format, PARQUET.*Nothing was changed.*"
                                               r"STORED AS ORC, then INSERT OVERWRITE"):
        wh.sql("ALTER TABLE ev PARTITION (ds='a') SET FILEFORMAT ORC")
    assert _rows(wh.sql("DESCRIBE ev")) == before
    assert _rows(wh.sql("SELECT * FROM ev")) == [(1, None, None, "a"), (2, "eu", "n", "b")]


def test_a_text_table_drops_a_middle_column_only_by_a_new_table(wh, spark):
    """Found by a hunt for bugs: REPLACE COLUMNS (id, name, extra) of a TEXTFILE table of (id, name,
    code, extra) with files was accepted, and extra then read code's field from every file written
    before (by position, as Hive reads it) with no word, where CHANGE ... AFTER, which would do the
    same, is refused. A kept column that would move is refused the same way, changing nothing;
    dropping the last columns, and renaming in place, still work."""
    wh.sql("CREATE TABLE tx (id INT, name STRING, code STRING, extra STRING) PARTITIONED BY (ds STRING) "
           "STORED AS TEXTFILE")
    wh.sql("INSERT INTO tx PARTITION (ds='a') VALUES (1, 'alpha', 'x', 'e1')")
    before = _rows(wh.sql("DESCRIBE tx"))
    with pytest.raises(UnsupportedError, match=r"would put column extra at position 3, where it was 4, so it "
                                               r"would read the field its files hold for code.*Nothing was changed"):
        wh.sql("ALTER TABLE tx REPLACE COLUMNS (id INT, name STRING, extra STRING)")
    assert _rows(wh.sql("DESCRIBE tx")) == before
    assert _rows(wh.sql("SELECT * FROM tx WHERE extra = 'e1'")) == [(1, "alpha", "x", "e1", "a")]
    wh.sql("ALTER TABLE tx REPLACE COLUMNS (id INT, name STRING, label STRING)")  # the last dropped, one renamed
    plain = spark.read.schema("id INT, name STRING, label STRING").options(sep="\x01", nullValue="\\N").csv(
        "file://" + os.path.join(wh.location, "tx"))
    assert _rows(wh.sql("SELECT * FROM tx")) == _rows(plain) == [(1, "alpha", "x", "a")]
    wh.sql("CREATE TABLE empty_tx (a INT, b STRING, c STRING) STORED AS TEXTFILE")
    wh.sql("ALTER TABLE empty_tx REPLACE COLUMNS (a INT, c STRING)")  # no files: any change


def test_exchanged_partitions_keep_reading_as_in_their_table(wh, spark):
    """Found by a hunt for bugs: EXCHANGE PARTITION moved the files of a table whose ORC column k
    was INT then STRING, and whose v was narrowed to VARCHAR(2), into a table made with those types:
    there v read 'hello' (no longer cut) and WHERE k = '1' failed the read. The records of what the
    moved files hold come with them."""
    wh.sql("CREATE TABLE src (k INT, v VARCHAR(10)) PARTITIONED BY (ds STRING) STORED AS ORC")
    wh.sql("INSERT INTO src PARTITION (ds='a') VALUES (1, 'hello')")
    wh.sql("ALTER TABLE src CHANGE COLUMN k k STRING")
    wh.sql("ALTER TABLE src CHANGE COLUMN v v VARCHAR(2)")
    assert _rows(wh.sql("SELECT * FROM src WHERE k = '1'")) == [("1", "he", "a")]
    wh.sql("CREATE TABLE dst (k STRING, v VARCHAR(2)) PARTITIONED BY (ds STRING) STORED AS ORC")
    wh.sql("ALTER TABLE dst EXCHANGE PARTITION (ds='a') WITH TABLE src")
    assert _rows(wh.sql("SELECT * FROM dst")) == [("1", "he", "a")]
    assert _rows(wh.sql("SELECT * FROM dst WHERE k = '1' AND v = 'he'")) == [("1", "he", "a")]


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_exchanged_partitions_bring_the_record_of_their_dropped_columns(wh, spark, fmt):
    """Found by a hunt for bugs: EXCHANGE PARTITION moved files holding b STRING, which REPLACE COLUMNS
    had dropped from src, into dst without src's record of it: ALTER TABLE dst ADD COLUMNS (b INT) was
    accepted (refused on src), and every read of dst then failed in Spark's reader. The record of the
    dropped columns comes with the files, as the other records of what they hold."""
    wh.sql(f"CREATE TABLE xs (a INT, b STRING) PARTITIONED BY (ds STRING) STORED AS {fmt}")
    wh.sql("INSERT INTO xs PARTITION (ds='a') VALUES (1, 'hello')")
    wh.sql("ALTER TABLE xs REPLACE COLUMNS (a INT)")
    wh.sql(f"CREATE TABLE xd (a INT) PARTITIONED BY (ds STRING) STORED AS {fmt}")
    wh.sql("ALTER TABLE xd EXCHANGE PARTITION (ds='a') WITH TABLE xs")
    with pytest.raises(UnsupportedError, match="its files hold column b as string \\(dropped by REPLACE COLUMNS\\)"):
        wh.sql("ALTER TABLE xd ADD COLUMNS (b INT)")
    assert _rows(wh.sql("SELECT * FROM xd")) == _rows(_plain(spark, wh, "xd", "a INT, ds STRING", fmt)) \
        == [(1, "a")]
    wh.sql("ALTER TABLE xd ADD COLUMNS (b STRING)")  # the type its files hold: read again
    assert _rows(wh.sql("SELECT a, b, ds FROM xd")) == _rows(_plain(spark, wh, "xd", "a INT, b STRING, ds STRING",
                                                                    fmt)) == [(1, "hello", "a")]
