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


def test_partition_location_outside_its_own(w):
    for loc in ("..", w.location, f"{w.location}/other", "."):
        with pytest.raises(SemanticError, match="directory of its own|warehouse root|table default.other"):
            w.sql(f"ALTER TABLE p ADD PARTITION (ds='x') LOCATION '{loc}'")
    assert w.sql("SHOW PARTITIONS p").collect() == []
    w.sql("ALTER TABLE p ADD PARTITION (ds='y') LOCATION 'elsewhere_y'")  # below the table: fine
    w.sql("ALTER TABLE p DROP PARTITION (ds='y')")
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
