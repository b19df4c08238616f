"""No statement deletes or moves a path the metastore does not record as its own (issue 13,
item 2): a hand-copied file or a write in flight keeps its directory through DROP PARTITION
and DROP TABLE, and a run of every statement that deletes or moves files leaves every path
outside the table's own files exactly as it was."""

from __future__ import annotations

import os

import pytest

from hivepark.errors import HiveParkError


def _tree(root: str) -> dict[str, bytes]:
    out = {}
    for d, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[p] = fh.read()
        if not files and not dirs:
            out[d + "/"] = b""
    return out


@pytest.fixture
def p(wh):
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("CREATE TABLE p (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    wh.sql("INSERT INTO p PARTITION (ds) VALUES (1, 'x'), (2, 'y')")
    return wh


def test_drop_partition_deletes_its_files_and_keeps_one_it_does_not_own(p):
    part = os.path.join(p.location, "p", "ds=x")
    stray = os.path.join(part, "copied-by-hand.parquet")
    with open(stray, "wb") as f:
        f.write(b"not hivepark's")
    own = [os.path.join(part, f) for f in os.listdir(part) if f != "copied-by-hand.parquet"]
    p.sql("ALTER TABLE p DROP PARTITION (ds='x')")
    assert not any(os.path.exists(f) for f in own)
    assert os.listdir(part) == ["copied-by-hand.parquet"]
    assert [r[0] for r in p.sql("SHOW PARTITIONS p").collect()] == ["ds=y"]
    p.sql("ALTER TABLE p DROP PARTITION (ds='y')")
    assert not os.path.exists(os.path.join(p.location, "p", "ds=y"))  # all its own: gone


def test_drop_table_keeps_what_it_does_not_own_and_says_nothing_else_remains(p):
    stray = os.path.join(p.location, "p", "notes.txt")
    with open(stray, "w") as f:
        f.write("mine")
    p.sql("DROP TABLE p")
    assert _tree(os.path.join(p.location, "p")) == {stray: b"mine"}
    assert p.sql("SHOW TABLES").collect() == []
    p.sql("CREATE TABLE q (a INT) STORED AS PARQUET")
    p.sql("INSERT INTO q VALUES (1)")
    p.sql("DROP TABLE q")
    assert not os.path.exists(os.path.join(p.location, "q"))


def test_no_statement_touches_a_path_outside_its_own(p, tmp_path):
    """Every path that is not one of the statement's own table files (the metastore, other
    tables, sibling directories, directories next to the warehouse) is unchanged after a run
    of statements that overwrite, drop, rename and load; the attempts at foreign locations
    are refused."""
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "keep.parquet").write_bytes(b"x")
    p.sql("CREATE TABLE other (a INT) STORED AS PARQUET")
    p.sql("INSERT INTO other VALUES (7)")
    other = os.path.join(p.location, "other")
    watched = {**_tree(str(outside)), **_tree(other)}
    attempts = [
        f"CREATE TABLE bad1 (a INT) STORED AS PARQUET LOCATION '{other}'",
        f"CREATE TABLE bad2 (a INT) STORED AS PARQUET LOCATION '{p.location}'",
        f"ALTER TABLE p ADD PARTITION (ds='z') LOCATION '{p.location}/..'",
        f"ALTER TABLE p ADD PARTITION (ds='z') LOCATION '{other}'",
        f"LOAD DATA INPATH '{p.location}' INTO TABLE other",
        f"LOAD DATA INPATH '{other}' INTO TABLE p PARTITION (ds='w')",
        "CREATE TABLE `x.db` (a INT)",
        "CREATE TABLE `.hivepark` (a INT)",
        f"CREATE TABLE bad3 (a INT) STORED AS PARQUET LOCATION '{outside}/sub/keep.parquet'",
    ]
    for stmt in attempts:
        try:
            p.sql(stmt)
        except HiveParkError:
            pass
    for stmt in [
        "INSERT OVERWRITE TABLE p PARTITION (ds) VALUES (3, 'x'), (4, 'z')",
        "ALTER TABLE p DROP PARTITION (ds='y')",
        f"ALTER TABLE p ADD PARTITION (ds='e') LOCATION '{outside}/ext'",
        "ALTER TABLE p DROP PARTITION (ds='e')",
        "ALTER TABLE p RENAME TO p2",
        "INSERT OVERWRITE TABLE p2 PARTITION (ds='x') SELECT 5",
        "DROP TABLE p2",
    ]:
        p.sql(stmt)
    assert os.path.isfile(os.path.join(p.location, "metastore.db"))
    made = {f"{outside}/ext/": b""} if os.path.isdir(f"{outside}/ext") else {}
    assert {**_tree(str(outside)), **_tree(other)} == watched | made
    assert [r[0] for r in p.sql("SELECT a FROM other").collect()] == [7]
    assert sorted(r[0] for r in p.sql("SHOW TABLES").collect()) == ["other"]
