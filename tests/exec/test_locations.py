"""Statements never take a directory they do not own (issue 13, item 2): a LOCATION that is or
contains the warehouse root, the metastore or another table's directory, LOCATION '/', a
relative LOCATION, a table named like a database directory, LOAD DATA moving the warehouse,
and a failing CTAS over an existing directory are refused or leave everything in place."""

from __future__ import annotations

import os

import pytest

from hivepark.errors import HiveParkError, SemanticError


@pytest.fixture
def w(wh):
    wh.sql("CREATE TABLE other (a INT) STORED AS PARQUET")
    wh.sql("INSERT INTO other VALUES (1), (2)")
    wh.sql("CREATE TABLE p (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    return wh


def _intact(wh) -> None:
    assert os.path.exists(os.path.join(wh.location, "metastore.db"))
    assert sorted(r[0] for r in wh.sql("SELECT a FROM other").collect()) == [1, 2]


@pytest.mark.parametrize("location,match", [
    ("{wh}", "is or contains the warehouse root"),
    ("{parent}", "is or contains the warehouse root"),
    ("/", "root of the file system"),
    ("{wh}/other", "overlaps the directory of table default.other"),
    ("{wh}/other/sub", "overlaps the directory of table default.other"),
    ("{wh}/.hivepark", "overlaps hivepark's own"),
    ("{wh}/metastore.db", "overlaps hivepark's own"),
])
def test_table_locations_that_are_not_its_own(w, location, match):
    loc = location.format(wh=w.location, parent=os.path.dirname(w.location))
    for stmt in (f"CREATE TABLE t (a INT) STORED AS PARQUET LOCATION '{loc}'",
                 f"CREATE EXTERNAL TABLE t (a INT) STORED AS PARQUET LOCATION '{loc}'",
                 f"CREATE TABLE t STORED AS PARQUET LOCATION '{loc}' AS SELECT 1 AS a"):
        with pytest.raises(SemanticError, match=match):
            w.sql(stmt)
        assert "t" not in [r[0] for r in w.sql("SHOW TABLES").collect()]
    _intact(w)
    w.sql("DROP TABLE IF EXISTS t")
    _intact(w)


def test_relative_location_is_hive_10244(w):
    with pytest.raises(SemanticError, match=r"^rel/dir  is not absolute.  Please specify a complete absolute uri") as e:
        w.sql("CREATE TABLE t (a INT) LOCATION 'rel/dir'")
    assert e.value.code == 10244
    # found by a hunt for bugs: a partition's SET LOCATION took a relative path (resolved against
    # the table, as only ADD PARTITION does in Hive), '../../x' one outside the warehouse
    w.sql("ALTER TABLE p ADD PARTITION (ds='x')")
    for loc in ("../../outside", "rel/dir"):
        with pytest.raises(SemanticError, match="is not absolute") as e:
            w.sql(f"ALTER TABLE p PARTITION (ds='x') SET LOCATION '{loc}'")
        assert e.value.code == 10244
    assert w.sql("DESCRIBE FORMATTED p PARTITION (ds='x')").filter("col_name LIKE 'Location%'").collect()[0][1] \
        .endswith("/p/ds=x")
    assert not os.path.exists(os.path.join(os.path.dirname(os.path.dirname(w.location)), "outside"))



def test_a_file_uri_of_a_relative_path_is_refused_as_a_relative_location(w, tmp_path, monkeypatch):
    """Found by a hunt for bugs: LOCATION 'file:x' (refused by Spark: "Relative path in absolute
    URI", and by Hive) was taken as '/x', and an INSERT wrote a directory at the file-system root."""
    monkeypatch.chdir(tmp_path)
    name = f"{tmp_path.name}_rel"
    w.sql("ALTER TABLE p ADD PARTITION (ds='x')")
    for stmt in (f"CREATE EXTERNAL TABLE t (a INT) LOCATION 'file:{name}'",
                 f"CREATE TABLE t STORED AS PARQUET LOCATION 'file:{name}' AS SELECT 1 AS a",
                 f"CREATE DATABASE d LOCATION 'file:{name}'",
                 f"ALTER TABLE p ADD PARTITION (ds='y') LOCATION 'file:{name}'",
                 f"ALTER TABLE p PARTITION (ds='x') SET LOCATION 'file:{name}'",
                 f"ALTER TABLE other SET LOCATION 'file:{name}'"):
        with pytest.raises(SemanticError, match=rf"^file:{name}  is not absolute.  Please specify a complete "
                                                "absolute uri") as e:
            w.sql(stmt)
        assert e.value.code == 10244
    with pytest.raises(SemanticError, match=rf"INSERT OVERWRITE DIRECTORY 'file:{name}' needs an absolute path"):
        w.sql(f"INSERT OVERWRITE LOCAL DIRECTORY 'file:{name}' SELECT 1")
    assert [r[0] for r in w.sql("SHOW TABLES").collect()] == ["other", "p"]
    assert [r[0] for r in w.sql("SHOW PARTITIONS p").collect()] == ["ds=x"]
    assert not os.path.exists("/" + name) and not os.path.exists(name)
    _intact(w)

def test_a_file_where_a_partition_directory_goes_fails_cleanly(w):
    """Found by a hunt for bugs: with a file at `p/ds=x`, ADD PARTITION failed but left the
    partition registered, and an INSERT failed with the error of its own undoing (`Cannot delete
    file .../ds=y/...`), leaving its staging directory and a journal every connect() warned of.
    Now the file system's own error, and nothing recorded or left."""
    from hivepark.errors import HiveParkError

    table_dir = os.path.join(w.location, "p")
    for name in ("ds=x", "ds=y"):
        with open(os.path.join(table_dir, name), "w") as f:
            f.write("not a directory\n")
    with pytest.raises(HiveParkError, match="Cannot create directory .*ds=x"):
        w.sql("ALTER TABLE p ADD PARTITION (ds='x')")
    with pytest.raises(HiveParkError, match="Cannot create directory .*ds=y"):
        w.sql("INSERT INTO p PARTITION (ds='y') VALUES (1)")
    assert w.sql("SHOW PARTITIONS p").collect() == []
    assert sorted(os.listdir(table_dir)) == ["ds=x", "ds=y"]
    assert os.listdir(os.path.join(w.location, ".hivepark", "journal")) == []
    _intact(w)


def test_partition_location_outside_its_own(w):
    for loc in ("..", w.location, f"{w.location}/other", "."):
        with pytest.raises(SemanticError, match="directory of its own|warehouse root|table default.other"):
            w.sql(f"ALTER TABLE p ADD PARTITION (ds='x') LOCATION '{loc}'")
    assert w.sql("SHOW PARTITIONS p").collect() == []
    w.sql("ALTER TABLE p ADD PARTITION (ds='y') LOCATION 'elsewhere_y'")  # below the table: fine
    w.sql("ALTER TABLE p DROP PARTITION (ds='y')")
    _intact(w)


def test_no_table_or_partition_takes_another_partitions_directory(w, tmp_path):
    """Found by a hunt for bugs: only tables' directories were compared, so a table created at a
    partition's LOCATION (or at its default directory, a partition having been given that one)
    shared the partition's files, and its INSERT OVERWRITE deleted them; two partitions could share
    one directory and read each other's rows. Each is refused before anything is written."""
    ext = str(tmp_path / "ext")
    w.sql(f"ALTER TABLE p ADD PARTITION (ds='x') LOCATION '{ext}/px'")
    w.sql("INSERT INTO p PARTITION (ds='x') VALUES (1), (2)")
    w.sql(f"ALTER TABLE p ADD PARTITION (ds='z') LOCATION '{w.location}/foo'")
    for stmt, match in (
            (f"CREATE TABLE t (a INT) STORED AS PARQUET LOCATION '{ext}/px'", "partition \\(x\\) of table default.p"),
            (f"CREATE EXTERNAL TABLE t (a INT) STORED AS PARQUET LOCATION '{ext}'", "partition \\(x\\)"),
            ("CREATE TABLE foo (a INT) STORED AS PARQUET", "partition \\(z\\) of table default.p"),
            (f"ALTER TABLE p ADD PARTITION (ds='y') LOCATION '{ext}/px'", "partition \\(x\\)"),
            (f"ALTER TABLE p ADD PARTITION (ds='y') LOCATION '{ext}/px/sub'", "partition \\(x\\)")):
        with pytest.raises(SemanticError, match=match):
            w.sql(stmt)
    assert sorted(r[0] for r in w.sql("SHOW TABLES").collect()) == ["other", "p"]
    assert [r[0] for r in w.sql("SHOW PARTITIONS p").collect()] == ["ds=x", "ds=z"]
    w.sql(f"ALTER TABLE p PARTITION (ds='x') SET LOCATION '{ext}/px'")  # its own directory: fine
    plain = w.spark.read.parquet(f"file://{ext}/px").selectExpr("a", "'x' AS ds")
    assert sorted(tuple(r) for r in w.sql("SELECT * FROM p").collect()) == sorted(tuple(r) for r in plain.collect()) \
        == [(1, "x"), (2, "x")]
    _intact(w)


def test_database_location_and_table_names(w):
    with pytest.raises(SemanticError, match="warehouse root"):
        w.sql(f"CREATE DATABASE d LOCATION '{w.location}'")
    with pytest.raises(SemanticError, match="overlaps the directory of table default.other"):
        w.sql(f"CREATE DATABASE d LOCATION '{w.location}/other'")
    w.sql("CREATE DATABASE x")
    with pytest.raises(SemanticError, match="cannot contain '.'"):
        w.sql("CREATE TABLE `x.db` (a INT)")
    with pytest.raises(SemanticError, match="cannot contain '.'"):
        w.sql("CREATE TABLE `.hivepark` (a INT)")
    assert os.path.isdir(os.path.join(w.location, "x.db"))
    # found by a hunt for bugs: RENAME TO `x.db` went through (the table's directory became database
    # x's) and then failed with Spark's error, on that and every later statement and connect()
    with pytest.raises(SemanticError, match="cannot contain '.'"):
        w.sql("ALTER TABLE other RENAME TO `x.db`")
    assert sorted(r[0] for r in w.sql("SHOW TABLES").collect()) == ["other", "p"]
    assert os.listdir(os.path.join(w.location, "x.db")) == []
    _intact(w)


def test_database_default_directory_taken_by_a_partition(w):
    """Found by a hunt for bugs: CREATE DATABASE x was not checked when it gave no LOCATION, so
    <warehouse>/x.db, a partition's directory (ADD PARTITION ... LOCATION), became the database's,
    whose every CREATE TABLE was then refused. Refused, naming the partition and the way out."""
    w.sql("ALTER TABLE p ADD PARTITION (ds='s') LOCATION '../x.db'")
    w.sql("INSERT INTO p PARTITION (ds='s') VALUES (1)")
    with pytest.raises(SemanticError, match=r"directory of database x '.*/x\.db' overlaps the directory of "
                       r"partition \(s\) of table default.p.*CREATE DATABASE x LOCATION"):
        w.sql("CREATE DATABASE x")
    assert "x" not in [r[0] for r in w.sql("SHOW DATABASES").collect()]
    assert w.sql("SELECT * FROM p").collect() == [(1, "s")]
    w.sql("CREATE DATABASE IF NOT EXISTS y")
    w.sql("CREATE DATABASE IF NOT EXISTS y")  # its own directory holds nothing of another's
    w.sql("CREATE TABLE y.t (a INT) STORED AS PARQUET")
    w.sql("CREATE DATABASE IF NOT EXISTS y")  # nor its own tables
    _intact(w)


def test_load_data_never_moves_the_warehouse_or_a_table(w):
    w.sql("CREATE TABLE l (a INT) STORED AS TEXTFILE")
    for src in (w.location, f"{w.location}/other", f"{w.location}/metastore.db"):
        with pytest.raises(SemanticError):
            w.sql(f"LOAD DATA INPATH '{src}' INTO TABLE l")
    _intact(w)
    assert w.sql("SELECT * FROM l").collect() == []


def test_failing_ctas_keeps_a_directory_it_did_not_create(w, tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "precious.txt").write_text("keep me")
    with pytest.raises(HiveParkError):
        w.sql(f"CREATE TABLE c STORED AS PARQUET LOCATION '{kept}' AS SELECT CAST('x' AS INT) AS a")
    assert (kept / "precious.txt").read_text() == "keep me"
    assert "c" not in [r[0] for r in w.sql("SHOW TABLES").collect()]


def test_a_location_that_is_a_file_is_refused(w, tmp_path):
    f = tmp_path / "data.parquet"
    f.write_bytes(b"x")
    with pytest.raises(SemanticError, match="is a file, not a directory"):
        w.sql(f"CREATE TABLE t (a INT) STORED AS PARQUET LOCATION '{f}'")
    with pytest.raises(SemanticError, match="is a file, not a directory"):
        w.sql(f"ALTER TABLE p ADD PARTITION (ds='a') LOCATION '{f}'")
    assert f.read_bytes() == b"x" and w.sql("SHOW TABLES").count() == 2


def test_no_partition_takes_the_default_directory_of_another(w, spark):
    """Found by a hunt for bugs: a partition given LOCATION 'ds=v' (resolved in the table's
    directory) took the directory where partition ds='v' is made by default, and the INSERT or
    ADD PARTITION that made ds='v' later was not checked (no LOCATION given): the two shared
    one directory, and one INSERT writing both wrote one file over the other (a row lost, the
    other read as both partitions'). Such a LOCATION is refused, on ADD and SET LOCATION; one
    below the partition's own default directory, or not named like a partition, is fine."""
    loc = os.path.join(w.location, "p")
    for stmt, whose in (("ALTER TABLE p ADD PARTITION (ds='w') LOCATION 'ds=v'", "partition {ds=v}"),
                        ("ALTER TABLE p ADD PARTITION (ds='w') LOCATION 'ds=v/sub'", "partition {ds=v}"),
                        ("ALTER TABLE p ADD PARTITION (ds='w') LOCATION 'ds=__HIVE_DEFAULT_PARTITION__'",
                         "partition {ds=__HIVE_DEFAULT_PARTITION__}"),
                        ("ALTER TABLE p ADD PARTITION (ds='w') LOCATION 'ds=v' PARTITION (ds='v')", "partition {ds=v}"),
                        (f"ALTER TABLE p ADD PARTITION (ds='w') LOCATION '{loc}/ds=a%2Fb'", "partition {ds=a/b}")):
        with pytest.raises(SemanticError, match="is where " + whose.replace("{", r"\{") + " of default.p is made by "
                                                "default: an INSERT or ADD PARTITION making it would share"):
            w.sql(stmt)
    assert w.sql("SHOW PARTITIONS p").collect() == [] and os.listdir(loc) == []
    w.sql("ALTER TABLE p ADD PARTITION (ds='w') LOCATION 'ds=w/own' PARTITION (ds='x') LOCATION 'x_files'")
    with pytest.raises(SemanticError, match=r"is where partition \{ds=v\} of default.p is made by default"):
        w.sql("ALTER TABLE p PARTITION (ds='x') SET LOCATION '" + loc + "/ds=v'")
    w.sql("CREATE TABLE p2 (a INT) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    with pytest.raises(SemanticError, match=r"is where every partition \{ds=1, ...\} of default.p2 is made by default"):
        w.sql("ALTER TABLE p2 ADD PARTITION (ds='1', hr=1) LOCATION 'ds=1'")
    w.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    w.sql("INSERT INTO p PARTITION (ds) VALUES (1, 'w'), (2, 'x'), (3, 'v')")
    assert sorted(tuple(r) for r in w.sql("SELECT a, ds FROM p").collect()) == [(1, "w"), (2, "x"), (3, "v")]
    assert sorted(tuple(r) for r in spark.sql("SELECT a, ds FROM p").collect()) == [(1, "w"), (2, "x"), (3, "v")]
    assert sorted(os.listdir(loc)) == ["ds=v", "ds=w", "x_files"] and os.listdir(f"{loc}/ds=w") == ["own"]
    _intact(w)


def test_a_write_never_puts_two_files_on_one_path(w):
    """Two partitions on one directory (a metastore written before LOCATIONs were checked, or by
    another tool): one INSERT writing both staged one file name for each, and the second move
    replaced the first file, both partitions recording the survivor (a row lost, one read twice).
    The statement is refused before anything moves, and a write to one of them alone works."""
    w.sql("ALTER TABLE p ADD PARTITION (ds='w') LOCATION 'elsewhere'")
    t = w.catalog.get_table("default", "p")
    part = w.catalog.get_partition(t, ("w",))
    w.catalog.commit(t, t.version, put=[part.evolve(location=f"{t.location}/ds=v", files=None)])
    w.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    with pytest.raises(HiveParkError, match=r"^Two files of this statement would be written to one path, .*/p/ds=v/"
                                            r".*\(partitions \['v'\] and \['w'\].*nothing was written"):
        w.sql("INSERT INTO p PARTITION (ds) VALUES (1, 'w'), (2, 'v')")
    assert [r[0] for r in w.sql("SHOW PARTITIONS p").collect()] == ["ds=w"]
    assert w.sql("SELECT * FROM p").collect() == [] and not os.path.exists(f"{t.location}/ds=v")
    assert os.listdir(os.path.join(w.location, ".hivepark", "journal")) == []
    w.sql("INSERT INTO p PARTITION (ds) VALUES (1, 'w'), (3, 'x')")
    assert sorted(tuple(r) for r in w.sql("SELECT a, ds FROM p").collect()) == [(1, "w"), (3, "x")]
    _intact(w)
