"""SqlCatalog on SQLite and PostgreSQL: CRUD, errors, commits, schema upgrades, filters."""

from __future__ import annotations

import datetime
import itertools
import re
import sqlite3
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, inspect, select
from sqlalchemy.exc import DataError, IntegrityError

from hivepark.catalog import schema
from hivepark.catalog.base import TableChange
from hivepark.catalog.filters import Undecidable, codecs_for, compile_filter, evaluate, key_values
from hivepark.catalog.models import EXTERNAL, VIEW, Column, Database, Partition, Table
from hivepark.catalog.schema import PartitionRow
from hivepark.catalog.sql import (
    SqlCatalog,
    _bulk_insert,
    _driver_sql,
    _packed_columns,
    make_part_name,
)
from hivepark.errors import (
    AlreadyExistsError,
    CommitConflict,
    InvalidPartitionSpec,
    MetastoreError,
    NoSuchDatabase,
    NoSuchTable,
    SemanticError,
    UnmatchedFilter,
    UserInputError,
)
from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Like,
    Not,
    NotEqualTo,
    NotNull,
    Opaque,
    Or,
    or_all,
)

COLS = (Column("key", "int"), Column("value", "string"))


def make_db(cat: SqlCatalog, name: str = "db") -> None:
    cat.create_database(Database(name, f"/wh/{name}.db"))


def make_table(cat: SqlCatalog, name: str = "t", keys: tuple[Column, ...] = (
        Column("ds", "string"), Column("hr", "int")), db: str = "db") -> Table:
    if db not in cat.list_databases():
        make_db(cat, db)
    return cat.create_table(Table(db, name, COLS, keys, location=f"/wh/{db}.db/{name}"))


def part(table: Table, *values: str | None, **kw: Any) -> Partition:
    name = make_part_name(table.partition_key_names(), values)
    return Partition(tuple(values), f"{table.location}/{name}", **kw)


def values_of(parts: list[Partition]) -> list[tuple[str | None, ...]]:
    return [p.values for p in parts]


# databases ------------------------------------------------------------------------------

def test_databases(catalog: SqlCatalog) -> None:
    catalog.create_database(Database("Sales", "/wh/sales.db", "the sales", {"owner": "ann"}))
    catalog.create_database(Database("a", "/wh/a.db"))
    assert catalog.list_databases() == ["a", "sales"]
    db = catalog.get_database("SALES")
    assert (db.name, db.location, db.comment, dict(db.properties)) == \
        ("sales", "/wh/sales.db", "the sales", {"owner": "ann"})
    with pytest.raises(AlreadyExistsError, match="Database sales already exists"):
        catalog.create_database(Database("sales", "/x"))
    catalog.create_database(Database("sales", "/x"), if_not_exists=True)
    assert catalog.get_database("sales").location == "/wh/sales.db"
    with pytest.raises(NoSuchDatabase, match="Database does not exist: nope") as err:
        catalog.get_database("nope")
    assert err.value.code == 10072 and isinstance(err.value, ValueError)
    assert catalog.drop_database("a") == []
    assert catalog.list_databases() == ["sales"]
    # ALTER DATABASE SET DBPROPERTIES merges
    assert dict(catalog.alter_database("Sales", {"owner": "bo", "team": "data"}).properties) == \
        {"owner": "bo", "team": "data"}
    assert dict(catalog.get_database("sales").properties) == {"owner": "bo", "team": "data"}
    with pytest.raises(NoSuchDatabase):
        catalog.alter_database("nope", {"a": "b"})


def test_drop_database_not_empty_and_cascade(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    make_table(catalog, "u")
    catalog.add_partitions(t, [part(t, "2008-04-08", "11")])
    with pytest.raises(SemanticError,
                       match=r"Database db is not empty\. One or more tables exist\."):
        catalog.drop_database("db")
    dropped = catalog.drop_database("db", cascade=True)
    assert [x.name for x in dropped] == ["t", "u"]
    assert catalog.list_databases() == []
    make_table(catalog)  # same names again: nothing left over
    assert catalog.count_partitions(catalog.get_table("db", "t")) == 0
    with pytest.raises(NoSuchDatabase):
        catalog.drop_database("nope")


# tables ---------------------------------------------------------------------------------

def test_tables(catalog: SqlCatalog) -> None:
    make_db(catalog)
    t = catalog.create_table(Table("DB", "Events", (Column("Key", "int", "the key"),),
                                   (Column("DS", "string"),), location="/wh/db.db/events",
                                   format="textfile", field_delim=",", table_type=EXTERNAL,
                                   properties={"a": "1"}))
    assert (t.db, t.name, t.version) == ("db", "events", 1)
    assert t.columns == (Column("key", "int", "the key"),)
    assert t.partition_keys == (Column("ds", "string"),)
    assert t.create_time > 0
    got = catalog.get_table("db", "EVENTS")
    assert got == t
    assert (got.format, got.field_delim, got.table_type, dict(got.properties)) == \
        ("textfile", ",", EXTERNAL, {"a": "1"})
    make_table(catalog, "a")
    assert catalog.list_tables("db") == ["a", "events"]
    catalog.create_table(Table("db", "v", (Column("k", "int"),), table_type=VIEW))
    assert catalog.list_tables("db") == ["a", "events", "v"]
    assert catalog.list_tables("db", VIEW) == ["v"] and catalog.list_tables("db", EXTERNAL) == ["events"]
    with pytest.raises(AlreadyExistsError, match=r"Table already exists: db\.events") as err:
        catalog.create_table(t)
    assert err.value.code == 10073
    assert catalog.create_table(t.evolve(location="/other"), if_not_exists=True) == t


def test_locations_overlapping(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "d1", "1"), Partition(("d2", "2"), "/ext/p_2"),
                               Partition(("d3", "3"), "/ext/p_3_%")])
    make_table(catalog, "t_2")  # /wh/db.db/t_2: a name sharing t's prefix is not below it

    def found(loc: str) -> list[tuple[str, str, Any, str]]:
        return sorted(catalog.locations_overlapping(loc), key=repr)

    assert found("/wh/db.db/t") == [("db", "t", ("d1", "1"), "/wh/db.db/t/ds=d1/hr=1"),
                                    ("db", "t", None, "/wh/db.db/t")]
    assert found("/ext/p_2") == found("/ext/p_2/sub") == [("db", "t", ("d2", "2"), "/ext/p_2")]
    assert [r[2] for r in found("/ext")] == [("d2", "2"), ("d3", "3")]
    assert found("/ext/p") == found("/ext/p_") == found("/wh/db.db/t_") == found("/elsewhere") == []
    assert [r[1] for r in found("/wh")] == ["t", "t", "t_2"]
    # byte-wise neighbours of "/ext/q/" ('.' and '0' sort just before and after '/'), and a location
    # longer than the PostgreSQL index holds (schema.LOCATION_PREFIX: found by a scan)
    deep = "/ext/q/" + "/".join(["d" * 200] * 5)
    catalog.add_partitions(catalog.get_table("db", "t"), [
        Partition(("d4", "4"), "/ext/q.x"), Partition(("d5", "5"), "/ext/q0"), Partition(("d6", "6"), "/ext/q/r"),
        Partition(("d7", "7"), deep), Partition(("d8", "8"), "/ext/q\u00e9/s")])
    assert [r[2] for r in found("/ext/q")] == [("d6", "6"), ("d7", "7")]
    assert [r[2] for r in found("/ext/q/r/s")] == [("d6", "6")]
    assert [r[2] for r in found(deep + "/x")] == [("d7", "7")] and [r[2] for r in found(deep)] == [("d7", "7")]
    assert [r[2] for r in found("/ext/q\u00e9")] == [("d8", "8")]


def test_skewed_locations_overlapping(catalog: SqlCatalog) -> None:
    # SET SKEWED LOCATION's directories, kept in the partitions' parameters (or an unpartitioned
    # table's properties): found wherever they lie, a write's own relative ones never
    from hivepark.catalog.skew import SKEW_LOCATIONS, SkewLayout

    def lay(*locs: str) -> dict[str, str]:
        return {SKEW_LOCATIONS: SkewLayout(("x",), tuple((str(i),) for i in range(len(locs))),
                                           tuple(((str(i),), loc) for i, loc in enumerate(locs))).to_json()}

    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "d1", "1", parameters=lay("x=0", "/ext/s_1%")),
                               part(t, "d2", "2", parameters=lay("s3a://b/sk/x=1")),
                               part(t, "d3", "3", parameters=lay("x=0", "/ext/x=0"))])
    u = catalog.create_table(Table("db", "u", COLS, location="/wh/db.db/u", properties=lay("/ext/u/x=1")))
    assert u.properties[SKEW_LOCATIONS]

    def found(loc: str) -> list[tuple[str, str, Any, str]]:
        return sorted(catalog.skewed_locations_overlapping(loc), key=repr)

    assert found("/ext/s_1%") == found("/ext/s_1%/y") == [("db", "t", ("d1", "1"), "/ext/s_1%")]
    assert found("s3a://b") == found("s3a://b/sk/x=1/z") == [("db", "t", ("d2", "2"), "s3a://b/sk/x=1")]
    assert found("/ext/u") == [("db", "u", None, "/ext/u/x=1")]
    assert sorted(r[3] for r in found("/ext")) == ["/ext/s_1%", "/ext/u/x=1", "/ext/x=0"]
    assert found("/ext/s_1") == found("/ext/s_10") == found("/wh/db.db/t/ds=d1/hr=1/x=0") == found("/x=0") == []


def test_table_errors(catalog: SqlCatalog) -> None:
    make_db(catalog)
    with pytest.raises(NoSuchTable, match=r"Table not found 'db\.nope'.*SHOW TABLES") as err:
        catalog.get_table("db", "nope")
    assert err.value.code == 10001
    with pytest.raises(NoSuchDatabase):
        catalog.get_table("nodb", "t")
    with pytest.raises(NoSuchDatabase):
        catalog.list_tables("nodb")
    with pytest.raises(NoSuchDatabase):
        catalog.create_table(Table("nodb", "t", COLS))
    with pytest.raises(NoSuchTable):
        catalog.drop_table("db", "nope")


def test_drop_table(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "2008-04-08", "11"), part(t, "2008-04-08", "12")])
    t = catalog.get_table("db", "t")
    assert t.version == 2  # adding partitions moves the version on, as a commit does
    dropped = catalog.drop_table("db", "t")
    assert dropped == t
    assert catalog.list_tables("db") == []
    t2 = make_table(catalog)
    assert catalog.list_partitions(t2) == []


def test_alter_table_cas(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    new = catalog.alter_table(t.evolve(columns=COLS + (Column("extra", "double"),),
                                       properties={"p": "v"}), expected_version=1)
    assert new.version == 2 and new.columns[-1] == Column("extra", "double")
    assert catalog.get_table("db", "t") == new
    with pytest.raises(CommitConflict, match="version 2.*version 1"):
        catalog.alter_table(t.evolve(properties={"q": "w"}), expected_version=1)
    assert dict(catalog.get_table("db", "t").properties) == {"p": "v"}


def test_alter_partition_key_type_reencodes(catalog: SqlCatalog) -> None:
    t = make_table(catalog, keys=(Column("hr", "string"),))
    catalog.add_partitions(t, [part(t, v) for v in ("9", "10", "11")])
    assert values_of(catalog.list_partitions(t, GreaterThan("hr", "9"))) == []
    t2 = catalog.alter_table(t.evolve(partition_keys=(Column("hr", "int"),)), 2)
    assert values_of(catalog.list_partitions(t2, GreaterThan("hr", 9))) == [("10",), ("11",)]
    with pytest.raises(SemanticError, match="Cannot change the partition columns"):
        catalog.alter_table(t2.evolve(partition_keys=(Column("h", "int"),)), 3)


def test_rename_table_relocates_partitions(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    make_db(catalog, "other")
    parts = [part(t, "a", "1"), Partition(("b", "1"), "/elsewhere/b"),
             Partition(("c", "1"), "/wh/db.db/t10/c")]  # same prefix, different directory
    catalog.add_partitions(t, parts)
    new = catalog.rename_table("db", "t", "other", "T2", "/wh/other.db/t2")
    assert (new.db, new.name, new.location, new.version) == \
        ("other", "t2", "/wh/other.db/t2", 3)  # created, partitions added, renamed
    with pytest.raises(NoSuchTable):
        catalog.get_table("db", "t")
    locs = [p.location for p in catalog.list_partitions(new)]
    assert locs == ["/wh/other.db/t2/ds=a/hr=1", "/elsewhere/b", "/wh/db.db/t10/c"]
    make_table(catalog, "x")
    with pytest.raises(AlreadyExistsError, match=r"Table already exists: other\.t2"):
        catalog.rename_table("db", "x", "other", "t2", None)
    with pytest.raises(NoSuchTable):
        catalog.rename_table("db", "nope", "db", "y", None)
    kept = catalog.rename_table("db", "x", "db", "y", None)
    assert kept.location == "/wh/db.db/x"


# partitions -----------------------------------------------------------------------------

def test_partition_stats_count_and_size_in_one_query(catalog: SqlCatalog) -> None:
    """What a deferred scan needs to choose the map-join side without listing partitions."""
    from hivepark.expr import EqualTo, GreaterThan
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "2008-04-08", "11", parameters={"totalSize": "100"}),
                               part(t, "2008-04-08", "12", parameters={"totalSize": "250"}),
                               part(t, "2008-04-09", "1", parameters={"numFiles": "1"})])
    assert catalog.partition_stats(t, EqualTo("ds", "2008-04-08")) == (2, 350)
    assert catalog.partition_stats(t, GreaterThan("hr", 11)) == (1, 250)
    assert catalog.partition_stats(t) == (3, None)  # one partition has no totalSize
    assert catalog.partition_stats(t, EqualTo("ds", "2009-01-01")) == (0, 0)
    assert catalog.count_partitions(t, EqualTo("ds", "2008-04-08")) == 2


def test_partitions_crud(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    p1 = part(t, "2008-04-08", "11", parameters={"numFiles": "2"}, files=("a.parquet",
                                                                          "b.parquet"))
    p2 = part(t, "2008-04-08", "12")
    p3 = part(t, "2008-04-09", None, files=())
    added = catalog.add_partitions(t, [p2, p1, p3])
    assert len(added) == 3 and all(p.create_time > 0 for p in added)
    assert catalog.count_partitions(t) == 3
    listed = catalog.list_partitions(t)
    assert values_of(listed) == [("2008-04-08", "11"), ("2008-04-08", "12"),
                                 ("2008-04-09", None)]
    got = catalog.get_partition(t, ("2008-04-08", "11"))
    assert got is not None
    assert dict(got.parameters) == {"numFiles": "2"} and got.files == ("a.parquet",
                                                                       "b.parquet")
    assert got.location == "/wh/db.db/t/ds=2008-04-08/hr=11"
    p2_got = catalog.get_partition(t, ("2008-04-08", "12"))
    assert p2_got is not None and p2_got.files is None and dict(p2_got.parameters) == {}
    p3_got = catalog.get_partition(t, ("2008-04-09", ""))  # '' is the default partition
    assert p3_got is not None and p3_got.files == () and p3_got.values == ("2008-04-09", None)
    assert catalog.get_partition(t, ("2008-04-10", "1")) is None
    assert catalog.list_partitions(t, limit=2) == listed[:2]
    with pytest.raises(InvalidPartitionSpec):
        catalog.get_partition(t, ("2008-04-08",))


def test_add_partitions_duplicates(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "2008-04-08", "11")])
    new = part(t, "2008-04-09", "1")
    with pytest.raises(AlreadyExistsError) as err:
        catalog.add_partitions(t, [new, part(t, "2008-04-08", "11")])
    assert str(err.value) == ("Partition already exists: ds=2008-04-08/hr=11. "
                              "Use IF NOT EXISTS to skip it.")
    assert catalog.count_partitions(t) == 1  # one transaction: the new one was not added
    added = catalog.add_partitions(t, [new, part(t, "2008-04-08", "11"), new],
                                   if_not_exists=True)
    assert values_of(added) == [("2008-04-09", "1")]
    with pytest.raises(AlreadyExistsError, match="ds=__HIVE_DEFAULT_PARTITION__/hr=1"):
        catalog.add_partitions(t, [part(t, None, "1"), part(t, "", "1")])


def test_many_partitions_by_name_in_repeated_statements(catalog: SqlCatalog) -> None:
    """The lookups by partition name (ADD's existence check, get_partitions, a commit's drops
    and updates) and deletes by id: on PostgreSQL as one array parameter rather than an IN list
    of 500 (whose generic plan, prepared by psycopg after five runs, compared every partition
    with each name until the table was analyzed). Run more than five times each, across more
    names than one statement takes: each finds exactly its partitions."""
    t = make_table(catalog)
    batches = [[part(t, f"d{b}", str(h)) for h in range(1200)] for b in range(8)]
    for i, batch in enumerate(batches):  # each also repeats half of the previous batch
        again = batches[i - 1][600:] if i else []
        added = catalog.add_partitions(t, again + batch, if_not_exists=True)
        assert values_of(added) == values_of(batch)
        with pytest.raises(AlreadyExistsError, match=f"Partition already exists: ds=d{i}/hr=5"):
            catalog.add_partitions(t, [part(t, "new", "1"), batch[5]])
    assert catalog.count_partitions(t) == 9600
    wanted = [("d3", str(h)) for h in range(0, 1200, 2)] + [("d7", str(h)) for h in range(1200)] + \
        [("nope", str(h)) for h in range(11_000)]
    found = catalog.get_partitions(t, wanted)
    assert sorted(found) == sorted(wanted[:1800])
    assert all(p.values == v for v, p in found.items())
    gone = [("d1", str(h)) for h in range(1200)] + [("d2", str(h)) for h in range(0, 1200, 3)]
    kept = [part(t, "d0", str(h), parameters={"numFiles": "1"}) for h in range(1200)]
    catalog.commit(t, catalog.get_table("db", "t").version, put=kept, drop=gone)
    assert catalog.count_partitions(t) == 9600 - 1600
    assert catalog.get_partitions(t, gone) == {}
    assert all(p.parameters == {"numFiles": "1"} for p in catalog.list_partitions(t, EqualTo("ds", "d0")))
    assert len(catalog.drop_partitions(t, In("ds", ("d4", "d5", "d6")))) == 3600
    assert values_of(catalog.list_partitions(t, GreaterThanOrEqual("hr", 1199))) == \
        [("d0", "1199"), ("d2", "1199"), ("d3", "1199"), ("d7", "1199")]
    assert catalog.count_partitions(t, In("hr", (0, 1))) == 2 * 3 + 1  # d2 keeps hr=1, not hr=0


def test_bulk_insert_duplicate_is_an_integrity_error(catalog: SqlCatalog) -> None:
    """The fast paths (executemany, COPY) report duplicates like SQLAlchemy does."""
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "d", "1")])
    with catalog._engine.connect() as conn:
        tbl_id = conn.exec_driver_sql("SELECT id FROM hivepark_tables").scalar()
        conn.rollback()
        row = {"tbl_id": tbl_id, "part_name": "ds=d/hr=1", "part_values": '["d","1"]',
               "location": "/x", "parameters": "{}", "files": None, "create_time": 1}
        if catalog._is_pg:
            row["id"] = 10_000
        with pytest.raises(IntegrityError), conn.begin():
            _bulk_insert(conn, PartitionRow, [row])
    assert catalog.count_partitions(t) == 1


def test_partition_names_escape_like_hive(catalog: SqlCatalog) -> None:
    assert make_part_name(["DS", "hr"], ["a/b:c d", None]) == \
        "ds=a%2Fb%3Ac d/hr=__HIVE_DEFAULT_PARTITION__"
    tricky = "".join(chr(c) for c in range(0x20)) + "\"#%'*/:=?\\\x7f{[]^ é"
    assert make_part_name(["k"], [tricky]) == "k=" + "".join(
        f"%{c:02X}" for c in range(0x20)) + "%22%23%25%27%2A%2F%3A%3D%3F%5C%7F%7B%5B%5D%5E é"
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "a/b", "1"), part(t, "a%2Fb", "1")])  # distinct
    assert catalog.count_partitions(t) == 2
    got = catalog.get_partition(t, ("a/b", "1"))
    assert got is not None and got.values == ("a/b", "1")


def test_drop_partitions_exact(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "d", str(h)) for h in (8, 9, 10, 11)]
                           + [part(t, "d", None)])
    dropped = catalog.drop_partitions(t, GreaterThan("hr", 9))
    assert values_of(dropped) == [("d", "10"), ("d", "11")]
    assert values_of(catalog.list_partitions(t)) == [("d", "8"), ("d", "9"),
                                                     ("d", None)]
    with pytest.raises(UserInputError, match="cannot evaluate exactly: rand"):
        catalog.drop_partitions(t, And(EqualTo("hr", 8), Opaque("rand() < 0.5")))
    with pytest.raises(UserInputError, match="compared with 'x'"):
        catalog.drop_partitions(t, EqualTo("hr", "x"))
    assert catalog.count_partitions(t) == 3
    assert values_of(catalog.drop_partitions(t, IsNull("hr"))) == [("d", None)]
    assert catalog.drop_partitions(t, AlwaysFalse()) == []
    # required filters: each must match a partition, or nothing is dropped
    specs = [EqualTo("hr", 8), GreaterThan("hr", 100), EqualTo("hr", 9)]
    with pytest.raises(UnmatchedFilter) as e:
        catalog.drop_partitions(t, Or(Or(specs[0], specs[1]), specs[2]), specs)
    assert e.value.index == 1 and values_of(catalog.list_partitions(t)) == [("d", "8"), ("d", "9")]
    with pytest.raises(UnmatchedFilter) as e:
        catalog.drop_partitions(t, AlwaysFalse(), [AlwaysFalse()])
    assert e.value.index == 0 and catalog.count_partitions(t) == 2
    del specs[1]
    assert values_of(catalog.drop_partitions(t, Or(*specs), specs)) == [("d", "8"), ("d", "9")]
    assert catalog.count_partitions(t) == 0


def test_commit(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "d", "1"), part(t, "d", "2"), part(t, "d", "3")])
    replaced = Partition(("d", "1"), "/new/place", {"numRows": "5"}, ("f1.parquet",))
    with pytest.raises(CommitConflict):  # adding partitions moved the version on
        catalog.commit(t, 1, put=[replaced])
    new = catalog.commit(t, 2, put=[replaced, part(t, "d", "4", files=("x",))],
                         drop=[("d", "2")], table_parameters={"numFiles": "7"})
    assert new.version == 3 and dict(new.properties) == {"numFiles": "7"}
    assert catalog.get_table("db", "t") == new
    assert values_of(catalog.list_partitions(t)) == [("d", "1"), ("d", "3"), ("d", "4")]
    got = catalog.get_partition(t, ("d", "1"))
    assert got is not None
    assert (got.location, dict(got.parameters), got.files) == \
        ("/new/place", {"numRows": "5"}, ("f1.parquet",))
    # the replaced partition is still found by filters (its key rows were kept)
    assert values_of(catalog.list_partitions(t, LessThan("hr", 2))) == [("d", "1")]


def test_commit_conflict_changes_nothing(catalog: SqlCatalog) -> None:
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, "d", "1")])
    first = catalog.commit(t, 2, put=[part(t, "d", "2")])
    assert first.version == 3
    with pytest.raises(CommitConflict, match=r"at version 3.*started from version 2"):
        catalog.commit(t, 2, put=[part(t, "d", "3")], drop=[("d", "1")],
                       table_parameters={"x": "y"})
    assert values_of(catalog.list_partitions(t)) == [("d", "1"), ("d", "2")]
    now = catalog.get_table("db", "t")
    assert now.version == 3 and dict(now.properties) == {}
    with pytest.raises(NoSuchTable):
        catalog.commit(t.evolve(name="nope"), 1)


def test_commit_tables_moves_a_partition_in_one_transaction(catalog: SqlCatalog) -> None:
    """EXCHANGE PARTITION's commit: the partition leaves one table and enters the other at once;
    a conflict on either table changes neither."""
    src, dst = make_table(catalog, "src"), make_table(catalog, "dst")
    catalog.add_partitions(src, [part(src, "d", "1", files=("a",)), part(src, "d", "2")])
    src = catalog.get_table("db", "src")
    moved = part(dst, "d", "1", files=("a",))
    with pytest.raises(CommitConflict, match="db.dst"):  # dst is at version 1, not 5
        catalog.commit_tables([TableChange(src, src.version, drop=[("d", "1")]),
                               TableChange(dst, 5, put=[moved])])
    assert values_of(catalog.list_partitions(src)) == [("d", "1"), ("d", "2")]  # the drop rolled back
    assert catalog.list_partitions(dst) == [] and catalog.get_table("db", "src").version == src.version
    new_src, new_dst = catalog.commit_tables([TableChange(src, src.version, drop=[("d", "1")]),
                                              TableChange(dst, dst.version, put=[moved])])
    assert (new_src.version, new_dst.version) == (src.version + 1, dst.version + 1)
    assert values_of(catalog.list_partitions(src)) == [("d", "2")]
    got = catalog.get_partition(new_dst, ("d", "1"))
    assert got is not None and got.files == ("a",) and got.location == moved.location


def test_concurrent_commits_one_wins(catalog_url: str) -> None:
    """Writers on separate connections (and catalogs) race for the same version."""
    cats = [SqlCatalog(catalog_url) for _ in range(4)]
    t = make_table(cats[0])
    barrier = threading.Barrier(len(cats))
    outcome: list[str] = []

    def writer(i: int) -> None:
        barrier.wait()
        try:
            cats[i].commit(t, 1, put=[part(t, "d", str(i))])
            outcome.append("ok")
        except CommitConflict:
            outcome.append("conflict")

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(len(cats))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(outcome) == ["conflict"] * 3 + ["ok"]
    assert cats[0].get_table("db", "t").version == 2
    assert cats[0].count_partitions(t) == 1
    for c in cats:
        c.close()


def test_commit_meets_a_drop_table_in_flight(catalog_url: str) -> None:
    """A commit whose table a DROP TABLE (another connection) deletes while the commit waits
    for the row: a hivepark error saying so, never SQLAlchemy's "Could not refresh instance"
    (PostgreSQL: the UPDATE waited for the DROP's row lock and then found no row)."""
    a, b = SqlCatalog(catalog_url), SqlCatalog(catalog_url)
    t = make_table(a, keys=())
    deleted, go = threading.Event(), threading.Event()
    real = b._delete_table_rows

    def delete_then_hold(s: Any, tbl_id: int) -> None:
        real(s, tbl_id)
        deleted.set()
        go.wait(10)  # the DROP's transaction stays open until A's commit waits for it

    b._delete_table_rows = delete_then_hold  # type: ignore[method-assign]
    dropper = threading.Thread(target=b.drop_table, args=("db", "t"))
    dropper.start()
    assert deleted.wait(10)
    release = threading.Timer(0.5, go.set)  # once A's commit is blocked behind the DROP
    release.start()
    try:
        with pytest.raises(NoSuchTable, match=r"db\.t was dropped \(or renamed\) while this statement ran, "
                                              "so nothing was written"):
            a.commit(t, t.version, table_parameters={"k": "v"})
    finally:
        go.set()
        dropper.join()
        release.cancel()
    assert a.list_tables("db") == []
    a.close()
    b.close()


def test_crossed_commit_tables_do_not_deadlock(catalog_url: str) -> None:
    """Two transactions over the same two tables, given in crossed order (two crossed EXCHANGE
    PARTITIONs), each paused after its first table: the rows are locked in one order up front,
    so one wins and the other gets CommitConflict, never PostgreSQL's "deadlock detected"."""
    a, b = SqlCatalog(catalog_url), SqlCatalog(catalog_url)
    t1, t2 = make_table(a, "t1"), make_table(a, "t2")
    first_done = threading.Barrier(2, timeout=2)
    outcome: dict[str, str] = {}

    def paused(cat: SqlCatalog) -> Any:
        real = cat._commit_in
        calls: list[int] = []

        def commit_in(s: Any, change: TableChange) -> Table:
            out = real(s, change)
            calls.append(1)
            if len(calls) == 1:
                try:  # both transactions hold their first table (without the ordered locks)
                    first_done.wait()
                except threading.BrokenBarrierError:
                    pass
            return out
        return commit_in

    a._commit_in = paused(a)  # type: ignore[method-assign]
    b._commit_in = paused(b)  # type: ignore[method-assign]

    def run(name: str, cat: SqlCatalog, changes: list[TableChange]) -> None:
        try:
            cat.commit_tables(changes)
            outcome[name] = "ok"
        except CommitConflict as e:
            outcome[name] = "conflict" if "run the statement again" in str(e) else str(e)
        except Exception as e:  # noqa: BLE001 - the test reports what it was
            outcome[name] = f"{type(e).__name__}: {e}"

    ta = threading.Thread(target=run, args=("A", a, [
        TableChange(t1, t1.version, put=[part(t1, "a", "1")]), TableChange(t2, t2.version, put=[part(t2, "b", "1")])]))
    tb = threading.Thread(target=run, args=("B", b, [
        TableChange(t2, t2.version, put=[part(t2, "c", "1")]), TableChange(t1, t1.version, put=[part(t1, "d", "1")])]))
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    assert sorted(outcome.values()) == ["conflict", "ok"], outcome
    winner = a if outcome["A"] == "ok" else b
    assert {winner.get_table("db", "t1").version, winner.get_table("db", "t2").version} == {t1.version + 1}
    a.close()
    b.close()


def test_a_deadlock_the_database_breaks_is_a_commit_conflict(pg_schema_url: str) -> None:
    """A transaction PostgreSQL undoes (deadlock, serialization failure) is CommitConflict,
    whose text says to run the statement again, not the database's own text."""
    from sqlalchemy import text

    cat = SqlCatalog(pg_schema_url)
    for state in ("40P01", "40001"):
        with pytest.raises(CommitConflict, match="Nothing was changed; run the statement again"):
            with cat._session(write=True) as s:
                s.execute(text(f"DO $$ BEGIN RAISE EXCEPTION 'undone' USING ERRCODE = '{state}'; END $$"))
    cat.close()


WRITER = """
import sys
from hivepark.catalog.sql import SqlCatalog
from hivepark.catalog.models import Partition
from hivepark.errors import CommitConflict
cat = SqlCatalog(sys.argv[1])
t = cat.get_table("db", "t")
me = sys.argv[2]
for batch in range(4):
    cat.add_partitions(t, [Partition((me, str(batch * 50 + i)), "/x") for i in range(50)])
done = 0
while done < 5:
    t = cat.get_table("db", "t")
    try:
        cat.commit(t, t.version, put=[Partition((me + "c", str(done)), "/y")])
        done += 1
    except CommitConflict:
        pass
"""


def test_processes_share_a_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    cat = SqlCatalog(url)
    t = make_table(cat)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, f"w{i}"],
                              stderr=subprocess.PIPE, text=True) for i in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert cat.count_partitions(t) == 3 * (200 + 5)
    assert cat.get_table("db", "t").version == 1 + 3 * (4 + 5)  # 4 ADDs and 5 commits each
    cat.close()


# schema ---------------------------------------------------------------------------------

def test_schema_version_recorded_and_reopened(catalog_url: str) -> None:
    cat = SqlCatalog(catalog_url)
    assert cat.schema_version == schema.latest_version() == 6
    t = make_table(cat)
    cat.add_partitions(t, [part(t, "d", "1")])
    cat.close()
    again = SqlCatalog(catalog_url)
    assert again.schema_version == 6
    assert again.count_partitions(t) == 1
    again.close()


def test_schema_upgrade_in_place(catalog_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cat = SqlCatalog(catalog_url)  # a metastore at the latest version, with data
    t = make_table(cat)
    cat.add_partitions(t, [part(t, "d", "1")])
    cat.close()
    ran: list[int] = []
    latest = schema.latest_version()

    def extra(conn: Any) -> None:
        ran.append(latest + 1)
        conn.exec_driver_sql("CREATE TABLE hivepark_v2_extra (id INTEGER PRIMARY KEY)")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, extra])
    upgraded = SqlCatalog(catalog_url)
    assert upgraded.schema_version == latest + 1 and ran == [latest + 1]
    assert upgraded.count_partitions(t) == 1
    upgraded.close()
    reopened = SqlCatalog(catalog_url)  # already there: nothing runs again
    assert reopened.schema_version == latest + 1 and ran == [latest + 1]
    with reopened._engine.connect() as conn:
        assert inspect(conn).has_table("hivepark_v2_extra")
    reopened.close()
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:latest])
    with pytest.raises(MetastoreError, match=f"version {latest + 1}.*Upgrade hivepark"):
        SqlCatalog(catalog_url)


def old_metastore(catalog_url: str, version: int, fill: Any) -> None:
    """A metastore as a hivepark of schema ``version`` left it, holding what ``fill(catalog)``
    wrote: made by this hivepark, then each newer migration undone by hand (the ORM always
    describes the newest schema, so an older one cannot be written through it)."""
    cat = SqlCatalog(catalog_url)
    fill(cat)
    with cat._engine.begin() as conn:
        if version < 6:
            conn.exec_driver_sql(f"DROP INDEX {schema.ABSOLUTE_SKEW_INDEX}")
        if version < 5:
            conn.exec_driver_sql(f"DROP INDEX {schema.LOCATION_INDEX}")
        if version < 4:
            conn.exec_driver_sql("DROP TABLE hivepark_statements")
        if version < 3:
            conn.exec_driver_sql("ALTER TABLE hivepark_tables DROP COLUMN uid")
        if version < 2:
            for name in ("ix_hivepark_pkv_str_ids", "ix_hivepark_pkv_num_ids"):
                conn.exec_driver_sql(f"DROP INDEX {name}")
            conn.exec_driver_sql("CREATE INDEX ix_hivepark_pkv_str ON hivepark_partition_key_vals "
                                 "(tbl_id, idx, str_value)")
            conn.exec_driver_sql("CREATE INDEX ix_hivepark_pkv_num ON hivepark_partition_key_vals "
                                 "(tbl_id, idx, num_value)")
        conn.exec_driver_sql(f"UPDATE hivepark_schema SET version = {version}")
    cat.close()


def test_version_1_metastore_gets_the_covering_key_indexes(catalog_url: str) -> None:
    def fill(cat: SqlCatalog) -> None:
        t = make_table(cat)
        cat.add_partitions(t, [part(t, d, str(h)) for d in ("a", "b", "c") for h in (1, 2, 30)])

    old_metastore(catalog_url, 1, fill)
    cat = SqlCatalog(catalog_url)
    assert cat.schema_version == 6
    with cat._engine.connect() as conn:
        idx = {i["name"]: i["column_names"]
               for i in inspect(conn).get_indexes("hivepark_partition_key_vals")}
    assert idx == {"ix_hivepark_pkv_str_ids": ["tbl_id", "idx", "str_value", "part_id"],
                   "ix_hivepark_pkv_num_ids": ["tbl_id", "idx", "num_value", "num_exact",
                                               "part_id"]}
    t = cat.get_table("db", "t")
    got = values_of(cat.list_partitions(t, And(In("ds", ("a", "c")), GreaterThan("hr", 2))))
    assert got == [("a", "30"), ("c", "30")]
    cat.close()


def test_version_2_metastore_gives_each_table_a_uid(catalog_url: str) -> None:
    """Tables made before schema version 3 get a uid each when it is opened; a table created
    again under a dropped one's name gets a new one."""
    def fill(cat: SqlCatalog) -> None:
        make_table(cat, "a")
        t = make_table(cat, "b")
        cat.add_partitions(t, [part(t, "d", "1")])

    old_metastore(catalog_url, 2, fill)
    cat = SqlCatalog(catalog_url)
    assert cat.schema_version == 6
    a, b = cat.get_table("db", "a"), cat.get_table("db", "b")
    assert len({a.uid, b.uid}) == 2 and all(len(u) == 32 for u in (a.uid, b.uid))
    assert cat.get_table("db", "b").uid == b.uid  # kept, not drawn again on each read
    assert values_of(cat.list_partitions(b)) == [("d", "1")]
    cat.drop_table("db", "b")
    again = make_table(cat, "b")
    assert again.uid not in (a.uid, b.uid) and again.version == 1 < b.version
    cat.close()


def test_migrations_match_orm(catalog: SqlCatalog) -> None:
    with catalog._engine.connect() as conn:
        insp = inspect(conn)
        for table in schema.Base.metadata.sorted_tables:
            cols = {c["name"]: c["nullable"] for c in insp.get_columns(table.name)}
            assert cols == {c.name: c.nullable for c in table.columns}, table.name
        idx = {i["name"] for i in insp.get_indexes("hivepark_partition_key_vals")}
        assert idx == {"ix_hivepark_pkv_str_ids", "ix_hivepark_pkv_num_ids"}
        assert {schema.LOCATION_INDEX, schema.ABSOLUTE_SKEW_INDEX} <= {
            i["name"] for i in insp.get_indexes("hivepark_partitions")}


def test_version_4_metastore_gets_the_location_index(catalog_url: str) -> None:
    """Schema version 5's index on the partitions' locations: made when an older metastore is
    opened; the directory checks find the same partitions through it, and the query plan
    reads the index, not every partition."""
    def fill(cat: SqlCatalog) -> None:
        t = make_table(cat)
        cat.add_partitions(t, [part(t, d, str(h)) for d in ("a", "b") for h in range(50)])

    old_metastore(catalog_url, 4, fill)
    cat = SqlCatalog(catalog_url)
    assert cat.schema_version == 6
    assert sorted(map(repr, (r[2] for r in cat.locations_overlapping("/wh/db.db/t/ds=b/hr=7/x")))) == \
        ["('b', '7')", "None"]  # the partition and its table
    assert sorted(r[2] for r in cat.locations_overlapping("/wh/db.db/t/ds=a") if r[2]) == \
        sorted(("a", str(h)) for h in range(50))
    with cat._engine.connect() as conn:
        assert schema.LOCATION_INDEX in {i["name"] for i in inspect(conn).get_indexes("hivepark_partitions")}
        if cat._is_pg:  # (a hundred rows: PostgreSQL would scan them; can it use the index?)
            conn.exec_driver_sql("SET enable_seqscan = off")
        plan = " ".join(str(r) for r in conn.exec_driver_sql(
            ("EXPLAIN " if cat._is_pg else "EXPLAIN QUERY PLAN ") +
            "SELECT location FROM hivepark_partitions WHERE " +
            ('substr(location, 1, 600) COLLATE "C" >= \'/wh/db.db/t/ds=a/\' AND '
             'substr(location, 1, 600) COLLATE "C" < \'/wh/db.db/t/ds=a0\'' if cat._is_pg else
             "location >= '/wh/db.db/t/ds=a/' AND location < '/wh/db.db/t/ds=a0'")))
    assert schema.LOCATION_INDEX in plan, plan
    cat.close()



def test_version_5_metastore_gets_the_absolute_skew_index(catalog_url: str) -> None:
    """Schema version 6's partial index of the partitions recording SET SKEWED LOCATION's
    absolute directories: made when an older metastore is opened; the check of a directory
    finds the same partitions through it, and its query plan reads the index, not every
    partition's parameters."""
    from hivepark.catalog.skew import SKEW_LOCATIONS, SkewLayout

    def lay(*locs: str) -> dict[str, str]:
        return {SKEW_LOCATIONS: SkewLayout(("x",), tuple((str(i),) for i in range(len(locs))),
                                           tuple(((str(i),), loc) for i, loc in enumerate(locs))).to_json()}

    def fill(cat: SqlCatalog) -> None:
        t = make_table(cat)
        cat.add_partitions(t, [part(t, "d", str(h), parameters=lay("x=0") if h % 2 else {}) for h in range(60)])
        cat.add_partitions(t, [part(t, "e", "1", parameters=lay("x=0", "/ext/e")),
                               part(t, "e", "2", parameters=lay("s3a://b/e2"))])

    old_metastore(catalog_url, 5, fill)
    cat = SqlCatalog(catalog_url)
    assert cat.schema_version == 6
    assert [r[2:] for r in cat.skewed_locations_overlapping("/ext")] == [(("e", "1"), "/ext/e")]
    assert [r[2:] for r in cat.skewed_locations_overlapping("s3a://b/e2/z")] == [(("e", "2"), "s3a://b/e2")]
    with cat._engine.connect() as conn:
        if cat._is_pg:  # (a few rows: PostgreSQL would scan them; can it use the index?)
            conn.exec_driver_sql("SET enable_seqscan = off")
        cond = cat._absolute_skew("hivepark_partitions.parameters")
        plan = " ".join(str(r) for r in conn.exec_driver_sql(
            ("EXPLAIN " if cat._is_pg else "EXPLAIN QUERY PLAN ") +
            f"SELECT part_values FROM hivepark_partitions WHERE {cond.text}"))
    assert schema.ABSOLUTE_SKEW_INDEX in plan, plan
    cat.close()

# filters --------------------------------------------------------------------------------

@pytest.fixture
def hours(catalog: SqlCatalog) -> Table:
    """ds string, hr int: two days × hours 8..11, plus default partitions of each key."""
    t = make_table(catalog)
    parts = [part(t, ds, str(hr)) for ds in ("2008-04-08", "2008-04-09")
             for hr in (8, 9, 10, 11)]
    parts += [part(t, "2008-04-08", None), part(t, None, "9")]
    catalog.add_partitions(t, parts)
    return t


def pruned(catalog: SqlCatalog, t: Table, e: Expr) -> list[tuple[str | None, ...]]:
    return values_of(catalog.list_partitions(t, e))


D8, D9 = "2008-04-08", "2008-04-09"


def test_filter_numeric_key_compares_as_number(catalog: SqlCatalog, hours: Table) -> None:
    assert pruned(catalog, hours, GreaterThan("hr", 9)) == \
        [(D8, "10"), (D8, "11"), (D9, "10"), (D9, "11")]
    assert pruned(catalog, hours, And(EqualTo("ds", D8), LessThanOrEqual("hr", 9))) == \
        [(D8, "8"), (D8, "9")]
    assert pruned(catalog, hours, EqualTo("hr", 9.0)) == [(D8, "9"), (D9, "9"), (None, "9")]
    assert pruned(catalog, hours, GreaterThan("hr", Decimal("10.5"))) == [(D8, "11"),
                                                                          (D9, "11")]


def test_filter_string_key_compares_as_text(catalog: SqlCatalog) -> None:
    t = make_table(catalog, keys=(Column("s", "string"),))
    catalog.add_partitions(t, [part(t, v) for v in ("9", "10", "B", "a", "é")])
    assert pruned(catalog, t, GreaterThan("s", "9")) == [("B",), ("a",), ("é",)]
    assert pruned(catalog, t, LessThan("s", "9")) == [("10",)]
    assert pruned(catalog, t, GreaterThan("s", "a")) == [("é",)]  # byte order, like Spark


def test_filter_default_partition_is_null(catalog: SqlCatalog, hours: Table) -> None:
    assert pruned(catalog, hours, IsNull("hr")) == [(D8, None)]
    assert pruned(catalog, hours, IsNull("ds")) == [(None, "9")]
    assert (D8, None) not in pruned(catalog, hours, NotNull("hr"))
    assert pruned(catalog, hours, EqualTo("ds", "__HIVE_DEFAULT_PARTITION__")) == []
    assert (D8, None) not in pruned(catalog, hours, NotEqualTo("hr", 8))
    assert (D8, None) not in pruned(catalog, hours, Not(EqualTo("hr", 8)))
    assert (None, "9") not in pruned(catalog, hours, Not(EqualTo("ds", D8)))
    assert (D8, None) not in pruned(catalog, hours, Not(In("hr", (8,))))
    assert (D8, None) in pruned(catalog, hours, Or(IsNull("hr"), EqualTo("hr", 8)))
    assert (D8, None) in pruned(catalog, hours, Not(NotNull("hr")))


def test_filter_in_with_a_null_member(catalog: SqlCatalog, hours: Table) -> None:
    """``x IN (v, NULL)`` is TRUE where x is v and NULL elsewhere (never FALSE): it keeps v's
    partitions, and its negation none; a NULL member was not expressible, so every partition
    whose key is not NULL was kept either way."""
    assert pruned(catalog, hours, In("hr", (8, None))) == [(D8, "8"), (D9, "8")]
    assert pruned(catalog, hours, In("ds", (None, D9))) == [(D9, h) for h in ("10", "11", "8", "9")]
    assert pruned(catalog, hours, Not(In("hr", (8, None)))) == []
    assert pruned(catalog, hours, Not(In("ds", (D8, None)))) == []
    assert pruned(catalog, hours, Or(Not(In("hr", (None,))), EqualTo("hr", 9))) == \
        [(D8, "9"), (D9, "9"), (None, "9")]
    assert [p.values for p in catalog.drop_partitions(hours, Not(In("hr", (8, None))))] == []
    assert sorted(p.values for p in catalog.drop_partitions(hours, In("hr", (11, None)))) == \
        [(D8, "11"), (D9, "11")]


def test_filter_in_large_lists(catalog: SqlCatalog, hours: Table) -> None:
    hrs = tuple(range(1000, 2500)) + (9,)
    assert pruned(catalog, hours, In("hr", hrs)) == [(D8, "9"), (D9, "9"), (None, "9")]
    days = tuple(f"x'%\\_{i}" for i in range(1500)) + (D9,)
    assert pruned(catalog, hours, And(In("ds", days), In("hr", (8, 11)))) == \
        [(D9, "11"), (D9, "8")]  # sorted by partition name
    assert pruned(catalog, hours, Not(In("ds", days))) == [(D8, h) for h in
                                                           ("10", "11", "8", "9", None)]
    assert pruned(catalog, hours, Not(In("hr", hrs))) == \
        [(d, h) for d in (D8, D9) for h in ("10", "11", "8")]
    assert pruned(catalog, hours, In("hr", ())) == []


def _variable_limit(cat: SqlCatalog, limit: int) -> None:
    """New SQLite connections of ``cat`` bind at most ``limit`` parameters a statement."""
    def limited(conn: sqlite3.Connection, _: Any) -> None:
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)

    cat._engine.dispose()
    event.listen(cat._engine, "connect", limited)


def test_filter_of_many_in_lists_passes_no_parameter_limit(catalog: SqlCatalog) -> None:
    """Found by a hunt for bugs: 66 ORed IN lists of 1,000 values each (66,000 values) failed
    on PostgreSQL with the driver's raw error (its limit is 65,535 bound parameters a
    statement), while SQLite answered. Now every lookup answers on both, SQLite held to its
    default limit of 32,766 (this machine's build allows more)."""
    if catalog._engine.dialect.name == "sqlite":
        _variable_limit(catalog, 32_766)
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, f"d{i}", str(i % 24)) for i in range(300)])
    lists = [In("ds", tuple(f"d{j}" for j in range(i * 1000, (i + 1) * 1000, 7))
                + tuple(f"x{i}-{j}" for j in range(857))) for i in range(60)]
    lists += [In("hr", tuple(range(1000 + i * 1000, 2000 + i * 1000))) for i in range(5)]
    lists.append(In("hr", (5,) + tuple(range(100, 1099))))
    flt = Or(lists[0], lists[1])
    for e in lists[2:]:
        flt = Or(flt, e)
    assert sum(len(e.values) for e in lists) == 66_000
    want = sorted((v for v in ((f"d{i}", str(i % 24)) for i in range(300))
                   if int(v[0][1:]) % 7 == 0 or v[1] == "5"),
                  key=lambda v: make_part_name(["ds", "hr"], v))
    assert values_of(catalog.list_partitions(t, flt)) == want
    assert values_of(catalog.list_partitions(t, flt, limit=3)) == want[:3]
    assert values_of(catalog.list_partitions(t, Not(flt))) == sorted(
        {(f"d{i}", str(i % 24)) for i in range(300)} - set(want),
        key=lambda v: make_part_name(["ds", "hr"], v))
    assert catalog.count_partitions(t, flt) == len(want)
    assert catalog.partition_stats(t, flt)[0] == len(want)
    assert values_of(sorted(catalog.drop_partitions(t, flt), key=lambda p: make_part_name(["ds", "hr"], p.values))) \
        == want
    assert catalog.count_partitions(t) == 300 - len(want)


def test_sqlite_driver_error_of_a_lookup_is_a_metastore_error(tmp_path: Path) -> None:
    """Found by a hunt for bugs: an error of the driver in a partition lookup (read straight
    from the DB-API cursor) reached the user as the driver's own exception; now as every other
    metastore error, a MetastoreError naming it."""
    cat = SqlCatalog(f"sqlite:///{tmp_path}/m.db")
    try:
        t = make_table(cat)
        cat.add_partitions(t, [part(t, f"d{i}", "1") for i in range(20)])
        _variable_limit(cat, 5)  # a 20-value IN cannot be bound
        flt = In("ds", tuple(f"d{i}" for i in range(20)))
        for lookup in (lambda: cat.list_partitions(t, flt), lambda: cat.list_partitions(t, flt, limit=2)):
            with pytest.raises(MetastoreError, match="Metastore error: too many SQL variables"):
                lookup()
    finally:
        cat.close()


def test_filter_finds_only_its_tables_partitions(catalog: SqlCatalog, hours: Table) -> None:
    """Another table with the same keys and values: a filter on one finds none of the other's
    partitions, nor counts or drops them."""
    other = make_table(catalog, "other")
    catalog.add_partitions(other, [part(other, D8, "9"), part(other, D9, "10")])
    assert pruned(catalog, other, In("ds", (D8, D9))) == [(D8, "9"), (D9, "10")]
    assert [p.location for p in catalog.list_partitions(other, EqualTo("hr", 9))] == \
        [f"{other.location}/ds={D8}/hr=9"]
    assert catalog.count_partitions(other, In("hr", (8, 9, 10))) == 2
    assert pruned(catalog, hours, And(In("ds", (D8,)), GreaterThan("hr", 9))) == \
        [(D8, "10"), (D8, "11")]
    assert len(catalog.drop_partitions(other, EqualTo("ds", D8))) == 1
    assert len(pruned(catalog, hours, EqualTo("ds", D8))) == 5


def test_sqlite_filter_starts_from_the_key_value_index(tmp_path: Path) -> None:
    """On SQLite a filter's partitions are reached from the key-value index and looked up by
    rowid: no scan of the partitions table (at a million partitions, seconds per lookup),
    with the planner's statistics (taken after many partitions are added) and without."""
    cat = SqlCatalog(f"sqlite:///{tmp_path}/m.db")
    try:
        small = make_table(cat, "small")
        cat.add_partitions(small, [part(small, D8, "1")])
        big = make_table(cat, "big")
        cat.add_partitions(big, [part(big, f"2024-{m:02d}-{d:02d}", str(h)) for m in (1, 2)
                                 for d in range(1, 29) for h in range(24)])  # 1,344: analyzed
        for t, days in ((small, (D8,)), (big, tuple(f"2024-01-{d:02d}" for d in range(1, 29)))):
            for e in (In("ds", days), And(In("ds", days), GreaterThan("hr", 12)),
                      EqualTo("hr", 1)):
                with cat._session() as s:
                    stmt = cat._filtered(cat._table_row(s, t.db, t.name).id, t, e)
                    # as rows, and packed in one row (what list_partitions fetches)
                    sq = stmt.subquery("packed")
                    for form in (stmt, select(_packed_columns(sq, False)).select_from(sq)):
                        sql, args = _driver_sql(s.connection(), form)
                        plan = [r[-1] for r in s.connection().exec_driver_sql(
                            "EXPLAIN QUERY PLAN " + sql, args)]
                        assert re.match(r"SEARCH k\d USING COVERING INDEX", plan[0]), \
                            (t.name, e, plan)
                        assert not any(step.startswith("SCAN") for step in plan), \
                            (t.name, e, plan)
                        assert "SEARCH hivepark_partitions USING INTEGER PRIMARY KEY (rowid=?)" \
                            in plan
        assert len(cat.list_partitions(big, In("ds", days))) == 28 * 24
    finally:
        cat.close()


def test_sqlite_metastore_analyzed_as_partitions_arrive_in_small_batches(tmp_path: Path) -> None:
    """Found by a hunt for bugs: SQLite's planner statistics were taken only when one call
    added 1,000 partitions or more, so partitions added a day at a time were never analyzed,
    and ``ds IN (1,000 values) AND hr > 12`` started from the ``hr`` range (5 s at 25,000
    partitions, a minute at 200,000). Now they are taken once there are 1,000 partitions, and
    again each time their number has doubled since; lookups find the same partitions."""
    cat = SqlCatalog(f"sqlite:///{tmp_path}/m.db")
    try:
        t = make_table(cat)
        days = [f"2024-{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 29)]

        def recorded() -> int | None:
            with cat._engine.connect() as conn:
                if not conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").first():
                    return None
                stat = conn.exec_driver_sql("SELECT stat FROM sqlite_stat1 WHERE tbl = 'hivepark_partitions' "
                                            "AND idx IS NOT NULL").scalar()
                return None if stat is None else int(stat.split()[0])

        seen = []
        for i in range(0, 8 * 24 * 28, 24 * 14):  # two weeks of hourly partitions a call
            cat.add_partitions(t, [part(t, ds, str(h)) for ds in days[i // 24:i // 24 + 14] for h in range(24)])
            seen.append(recorded())
        assert seen[:2] == [None, None]  # 336, 672 partitions: not yet
        assert seen[2] is not None  # 1,008
        assert seen[-1] is not None and seen[-1] > 2 * seen[2]  # 5,376: analyzed again
        assert len(set(seen[2:])) <= 3  # not after every call
        flt = And(In("ds", tuple(days[::3])), GreaterThan("hr", 12))
        want = sorted(((ds, str(h)) for ds in days[:8 * 28:3] for h in range(13, 24)),
                      key=lambda v: make_part_name(["ds", "hr"], v))
        assert values_of(cat.list_partitions(t, flt)) == want
        with cat._session() as s:
            stmt = cat._filtered(cat._table_row(s, t.db, t.name).id, t, flt)
            sql, args = _driver_sql(s.connection(), stmt)
            plan = [r[-1] for r in s.connection().exec_driver_sql("EXPLAIN QUERY PLAN " + sql, args)]
        assert "ix_hivepark_pkv_str_ids" in plan[0], plan  # from the IN list, not the hr range
    finally:
        cat.close()


def test_lookups_return_every_field_in_name_order(catalog: SqlCatalog) -> None:
    """A lookup hands its partitions over packed in one row of long strings (values,
    parameters and file lists with commas and quotes, None, the default partition, a
    location holding the character that separates the packed locations): every field comes
    back, in partition-name order."""
    t = make_table(catalog)
    parts = [part(t, "d, \"q\"", str(h), parameters={"numFiles": "1", "k": "{},[]"},
                  files=(f"f{h},1.parquet",)) for h in range(12)]
    parts += [part(t, "é", None), part(t, None, "3", files=()), part(t, "x", "1")]
    catalog.add_partitions(t, parts)
    flt = Or(EqualTo("ds", "é"), GreaterThan("hr", 2))
    for got, want in ((catalog.list_partitions(t), parts),
                      (catalog.list_partitions(t, flt), parts[3:12] + parts[12:14])):
        assert [p.values for p in got] == sorted(
            (p.values for p in want), key=lambda v: make_part_name(["ds", "hr"], v))
        assert {p.values: (p.location, dict(p.parameters), p.files) for p in got} == \
            {p.values: (p.location, dict(p.parameters), p.files) for p in want}
    catalog.add_partitions(t, [part(t, "n", "1")._replace(location="/wh/a\x01b"),
                               part(t, "n", "2")])
    assert [p.location for p in catalog.list_partitions(t, EqualTo("ds", "n"))] == \
        ["/wh/a\x01b", f"{t.location}/ds=n/hr=2"]
    assert len(catalog.list_partitions(t)) == 17


def test_sqlite_lookup_beyond_the_length_limit_takes_rows(tmp_path: Path) -> None:
    """Where a packed string would pass SQLite's length limit, the lookup takes rows: the
    partitions registered, in name order, with every field."""
    cat = SqlCatalog(f"sqlite:///{tmp_path}/m.db")
    try:
        t = make_table(cat)
        parts = [part(t, "d", str(h), parameters={"numFiles": "1"}, files=(f"f{h}.parquet",))
                 for h in range(40)]
        cat.add_partitions(t, parts)
        flt = GreaterThan("hr", 2)
        by_name = sorted(parts, key=lambda p: make_part_name(["ds", "hr"], p.values))

        def fields(ps: list[Partition]) -> list[tuple[Any, ...]]:
            return [(p.values, p.location, dict(p.parameters), p.files) for p in ps]

        want_all, want_some = by_name, [p for p in by_name if int(p.values[1]) > 2]
        assert len(want_some) == 37

        def limited(conn: sqlite3.Connection, _: Any) -> None:
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 400)

        cat._engine.dispose()  # new connections, each with a 400-byte limit on a string
        event.listen(cat._engine, "connect", limited)
        with cat._engine.connect() as conn, pytest.raises(DataError, match="too big"):
            conn.exec_driver_sql("SELECT group_concat(location) FROM hivepark_partitions")
        assert fields(cat.list_partitions(t)) == fields(want_all)
        assert fields(cat.list_partitions(t, flt)) == fields(want_some)
    finally:
        cat.close()


def test_filter_like(catalog: SqlCatalog) -> None:
    t = make_table(catalog, keys=(Column("s", "string"),))
    catalog.add_partitions(t, [part(t, v) for v in ("abc", "ABC", "a_c", "a%c", "a\\c",
                                                     "xabc")])
    assert pruned(catalog, t, Like("s", "a%")) == [("a%c",), ("a\\c",), ("a_c",), ("abc",)]
    assert pruned(catalog, t, Like("s", "A%")) == [("ABC",)]  # case-sensitive
    assert pruned(catalog, t, Like("s", "a\\_c")) == [("a_c",)]
    assert pruned(catalog, t, Like("s", "a\\%c")) == [("a%c",)]
    assert pruned(catalog, t, Like("s", "a\\\\c")) == [("a\\c",)]
    assert pruned(catalog, t, Like("s", "_bc")) == [("abc",)]
    assert pruned(catalog, t, Not(Like("s", "%bc"))) == [("ABC",), ("a%c",), ("a\\c",),
                                                         ("a_c",)]
    assert len(pruned(catalog, t, Like("s", "a\\"))) == 6  # invalid pattern: keeps all


def test_filter_between_or_not(catalog: SqlCatalog, hours: Table) -> None:
    between = And(GreaterThanOrEqual("hr", 9), LessThanOrEqual("hr", 10))
    assert pruned(catalog, hours, between) == [(D8, "10"), (D8, "9"), (D9, "10"), (D9, "9"),
                                               (None, "9")]
    assert pruned(catalog, hours, Not(between)) == [(D8, "11"), (D8, "8"), (D9, "11"),
                                                    (D9, "8")]
    either = Or(And(EqualTo("ds", D8), EqualTo("hr", 8)), EqualTo("hr", 11))
    assert pruned(catalog, hours, either) == [(D8, "11"), (D8, "8"), (D9, "11")]
    assert pruned(catalog, hours, And(EqualTo("ds", D9), Not(GreaterThan("hr", 9)))) == \
        [(D9, "8"), (D9, "9")]
    assert pruned(catalog, hours, AlwaysFalse()) == []
    assert len(pruned(catalog, hours, AlwaysTrue())) == 10
    assert pruned(catalog, hours, Not(AlwaysTrue())) == []


def test_filter_untranslatable_atoms_keep_partitions(catalog: SqlCatalog,
                                                     hours: Table) -> None:
    opaque = Opaque("rand() < 0.5", frozenset({"hr"}))
    assert len(pruned(catalog, hours, opaque)) == 10
    assert len(pruned(catalog, hours, Not(opaque))) == 10
    assert pruned(catalog, hours, And(EqualTo("hr", 8), opaque)) == [(D8, "8"), (D9, "8")]
    assert pruned(catalog, hours, Not(Or(NotEqualTo("hr", 8), opaque))) == \
        [(D8, "8"), (D9, "8")]  # NOT(a OR o) => NOT a
    assert len(pruned(catalog, hours, Not(And(EqualTo("hr", 8), opaque)))) == 10
    # a literal of another type, LIKE on a number: kept unless the key is NULL
    assert (D8, None) not in pruned(catalog, hours, EqualTo("hr", "8x"))
    assert len(pruned(catalog, hours, EqualTo("hr", "8x"))) == 9
    assert len(pruned(catalog, hours, Not(Like("hr", "1%")))) == 9
    assert len(pruned(catalog, hours, EqualTo("nope", 1))) == 10  # not a partition key
    assert len(pruned(catalog, hours, Not(In("hr", ("x",))))) == 9  # all but NULL hr


def test_filter_typed_keys(catalog: SqlCatalog) -> None:
    t = make_table(catalog, keys=(Column("d", "date"), Column("b", "boolean"),
                                  Column("x", "double")))
    catalog.add_partitions(t, [part(t, "2008-4-9", "TRUE", "1e1"),
                               part(t, "2008-04-10", "false", "-0.5"),
                               part(t, "garbage", "t", "NaN")])
    assert pruned(catalog, t, GreaterThan("d", datetime.date(2008, 4, 8))) == \
        [("2008-04-10", "false", "-0.5"), ("2008-4-9", "TRUE", "1e1")]
    assert pruned(catalog, t, EqualTo("d", "2008-04-09")) == [("2008-4-9", "TRUE", "1e1")]
    assert pruned(catalog, t, IsNull("d")) == [("garbage", "t", "NaN")]
    assert len(pruned(catalog, t, EqualTo("b", True))) == 2
    assert pruned(catalog, t, LessThan("x", 0)) == [("2008-04-10", "false", "-0.5")]
    assert pruned(catalog, t, GreaterThan("x", 5)) == [("2008-4-9", "TRUE", "1e1"),
                                                      ("garbage", "t", "NaN")]  # NaN > all


def test_filter_precision_beyond_double_stays_sound(catalog: SqlCatalog) -> None:
    t = make_table(catalog, keys=(Column("big", "bigint"), Column("dec", "decimal(38,20)")))
    big = 2 ** 53
    catalog.add_partitions(t, [part(t, str(big + 1), "0.10000000000000000001"),
                               part(t, str(big), "0.1")])
    assert (str(big + 1), "0.10000000000000000001") in \
        pruned(catalog, t, GreaterThan("big", big))
    assert (str(big + 1), "0.10000000000000000001") in \
        pruned(catalog, t, GreaterThan("dec", Decimal("0.1")))
    assert pruned(catalog, t, EqualTo("dec", Decimal("0.1"))) != []
    dropped = catalog.drop_partitions(t, GreaterThan("dec", Decimal("0.1")))
    assert values_of(dropped) == [(str(big + 1), "0.10000000000000000001")]  # exact


@settings(max_examples=200, deadline=None)
@given(cols=st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=3),
       data=st.data())
def test_part_names_match_layout(cols: list[str], data: st.DataObject) -> None:
    """The catalog's fast part names equal the project's single definition in layout."""
    from hivepark import layout

    values = data.draw(st.lists(st.one_of(st.none(), st.text(max_size=6)),
                                min_size=len(cols), max_size=len(cols)))
    assert make_part_name(cols, values) == layout.make_part_name(cols, values)


# property: pruning never drops a partition that may match --------------------------------

ALPHABET = "ab%_\\"
TRUTHS = frozenset({True, False, None})
KEYS = (Column("a", "int"), Column("b", "string"))

ints = st.one_of(st.none(), st.integers(-2, 12))
strs = st.one_of(st.none(), st.text(ALPHABET, max_size=3))
literals = st.one_of(st.integers(-3, 13), st.text(ALPHABET, max_size=3))
columns = st.sampled_from(["a", "b", "c"])
comparisons = st.sampled_from([EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan,
                               GreaterThanOrEqual])
atoms = st.one_of(
    st.builds(lambda op, c, v: op(c, v), comparisons, columns, literals),
    st.builds(lambda c, vs: In(c, tuple(vs)), columns, st.lists(st.one_of(literals, st.none()), max_size=4)),
    st.builds(IsNull, columns), st.builds(NotNull, columns),
    st.builds(Like, st.sampled_from(["a", "b"]), st.text(ALPHABET, max_size=4)),
    st.just(Opaque("f(a)")), st.just(AlwaysTrue()), st.just(AlwaysFalse()),
)
predicates = st.recursive(atoms, lambda kids: st.one_of(
    st.builds(And, kids, kids), st.builds(Or, kids, kids), st.builds(Not, kids)),
    max_leaves=8)


def _like(pattern: str) -> re.Pattern[str] | None:
    out, i = "", 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 == len(pattern) or pattern[i + 1] not in "%_\\":
                return None
            out, i = out + re.escape(pattern[i + 1]), i + 2
            continue
        out, i = out + (".*" if ch == "%" else "." if ch == "_" else re.escape(ch)), i + 1
    return re.compile(out, re.DOTALL)


def _cmp(op: type, x: Any, y: Any) -> bool:
    return {EqualTo: x == y, NotEqualTo: x != y, LessThan: x < y, LessThanOrEqual: x <= y,
            GreaterThan: x > y, GreaterThanOrEqual: x >= y}[op]


def _fits(col: str, v: Any) -> bool:
    return (col == "a" and isinstance(v, int)) or (col == "b" and isinstance(v, str))


def possible(e: Expr, row: dict[str, Any]) -> frozenset[bool | None]:
    """Every truth value ``e`` can take for ``row`` in Spark's three-valued logic; an atom
    the catalog cannot know (Opaque, unknown column, literal of another type, invalid LIKE)
    may be anything."""
    if isinstance(e, (And, Or)):
        op = (lambda x, y: False if False in (x, y) else None if None in (x, y) else True) \
            if isinstance(e, And) else \
            (lambda x, y: True if True in (x, y) else None if None in (x, y) else False)
        return frozenset(op(x, y) for x, y in itertools.product(possible(e.left, row),
                                                                 possible(e.right, row)))
    if isinstance(e, Not):
        return frozenset(None if x is None else not x for x in possible(e.child, row))
    if isinstance(e, (AlwaysTrue, AlwaysFalse)):
        return frozenset({isinstance(e, AlwaysTrue)})
    if isinstance(e, Opaque) or e.term not in row:  # type: ignore[attr-defined]
        return TRUTHS
    x = row[e.term]  # type: ignore[attr-defined]
    if isinstance(e, (IsNull, NotNull)):
        return frozenset({(x is None) == isinstance(e, IsNull)})
    if isinstance(e, In) and not e.values:
        return frozenset({False})
    if x is None:
        return frozenset({None})  # any comparison with NULL is NULL
    if isinstance(e, Like):
        rx = _like(e.pattern)
        if e.term != "b" or rx is None:
            return TRUTHS
        return frozenset({rx.fullmatch(x) is not None})
    if isinstance(e, In):  # with a NULL member, NULL (not FALSE) where x is none of the others
        if any(_fits(e.term, v) and x == v for v in e.values):
            return frozenset({True})
        miss = None if None in e.values else False
        return frozenset({True, miss}) if any(v is not None and not _fits(e.term, v) for v in e.values) \
            else frozenset({miss})
    if not _fits(e.term, e.value):  # type: ignore[attr-defined]
        return TRUTHS
    return frozenset({_cmp(type(e), x, e.value)})  # type: ignore[attr-defined]


_counter = itertools.count()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(ints, strs), min_size=1, max_size=14), e=predicates)
def test_property_pruning_is_sound_and_exact(catalog: SqlCatalog, rows: list[Any],
                                             e: Expr) -> None:
    name = f"p{next(_counter)}"
    t = make_table(catalog, name, KEYS)
    parts = [part(t, None if a is None else str(a), b or None) for a, b in rows]
    added = catalog.add_partitions(t, parts, if_not_exists=True)

    def typed(p: Partition) -> dict[str, Any]:
        a, b = p.values
        return {"a": None if a is None else int(a), "b": b}

    may = {p.values for p in added if True in possible(e, typed(p))}
    got = {p.values for p in catalog.list_partitions(t, e)}
    assert may <= got, f"pruned a partition that may match: {sorted(may - got, key=str)}"
    if all(len(possible(e, typed(p))) == 1 for p in added):
        assert got == may  # every atom decidable: pruning is exact
    codecs = codecs_for(t)
    try:
        compiled = compile_filter(e, codecs)
    except Undecidable:
        compiled = None
    if compiled is not None:  # in memory, each IN a hash lookup: what drop decides, exactly
        for p in added:
            raw = dict(zip(t.partition_key_names(), p.values))
            assert compiled(key_values(raw, codecs)) is evaluate(e, raw, codecs), p.values
    try:
        dropped = {p.values for p in catalog.drop_partitions(t, e)}
    except UserInputError:
        pass  # the filter has an atom the metastore cannot decide: nothing dropped
    else:
        assert dropped == {p.values for p in added if possible(e, typed(p)) == {True}}
    catalog.drop_table("db", name)


def test_drop_partitions_compare_like_spark(catalog: SqlCatalog) -> None:
    """DROP PARTITION decides with the tree's evaluator, each literal bound to the value its
    key is compared in: a double literal against a decimal key compares as doubles (0.1 =
    0.1E0), NaN equals NaN and is above every double, a date key reads loose text as a date."""
    t = make_table(catalog, keys=(Column("dec", "decimal(5,2)"), Column("x", "double"),
                                  Column("d", "date")))
    catalog.add_partitions(t, [part(t, "0.10", "NaN", "2008-4-9"), part(t, "0.30", "2", "2008-4-8"),
                               part(t, "0.20", "1.5", "2008-04-10")])
    assert values_of(catalog.drop_partitions(t, EqualTo("dec", 0.3))) == [("0.30", "2", "2008-4-8")]
    assert values_of(catalog.drop_partitions(t, And(EqualTo("dec", 0.1), GreaterThan("x", 1e300)))) \
        == [("0.10", "NaN", "2008-4-9")]
    with pytest.raises(UserInputError, match="cannot evaluate LIKE 'x%' on d"):
        catalog.drop_partitions(t, Not(Like("d", "x%")))
    assert values_of(catalog.drop_partitions(t, LessThan("d", "2008-04-10"))) == []
    assert values_of(catalog.drop_partitions(t, EqualTo("d", datetime.date(2008, 4, 10)))) == \
        [("0.20", "1.5", "2008-04-10")]


def test_python_partition_values_take_the_canonical_text(catalog: SqlCatalog) -> None:
    """A partition given as Python values names the partition the SQL path names:
    ``flag=true`` (not ``flag=True``), ``hr=7``, ``d=2008-04-08``."""
    t = make_table(catalog, keys=(Column("flag", "boolean"), Column("hr", "int"),
                                  Column("d", "date")))
    catalog.add_partitions(t, [Partition((True, 7, datetime.date(2008, 4, 8)),  # type: ignore[arg-type]
                                         f"{t.location}/p")])
    assert values_of(catalog.list_partitions(t)) == [("true", "7", "2008-04-08")]
    assert catalog.get_partition(t, ("true", "7", "2008-04-08")) is not None
    with pytest.raises(InvalidPartitionSpec, match="partition column hr of db.t: '1.5' is not a valid int"):
        catalog.add_partitions(t, [Partition(("true", 1.5, None), f"{t.location}/q")])  # type: ignore[arg-type]


# Values that escaping, name order and the default partition make hard: "/" and "=" are
# escaped (%2F, %3D), "%" sorts before "/", "0" right after it, "a" is a prefix of "a0",
# "a/" and "a%2F" once escaped; "" and the default partition's name are the default partition.
HOSTILE = ["a", "a0", "a/", "a/b", "a=b", "a%2F", "a%", "a.b", "ab", "é", " a", "a b", "0", "",
           "__HIVE_DEFAULT_PARTITION__"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.one_of(st.none(), st.sampled_from(HOSTILE)),
                               st.integers(0, 2)), min_size=1, max_size=12),
       wanted=st.lists(st.sampled_from(HOSTILE), max_size=5),
       one_key=st.booleans())
# several wanted values, and partitions the other conjunct rejects among them
@example(rows=[("a/", 0), ("a/", 1), ("a=b", 0), ("a=b", 2)], wanted=["a/", "a=b"], one_key=False)
@example(rows=[("a/", 0), ("a=b", 0), ("é", 0)], wanted=["a/", "a=b", "é"], one_key=True)
def test_property_first_key_lookups_find_exactly_their_partitions(
        catalog: SqlCatalog, rows: list[tuple[str | None, int]], wanted: list[str],
        one_key: bool) -> None:
    """``s = v`` and ``s IN (...)`` on a STRING first key (on PostgreSQL, ranges of partition
    names): exactly the partitions whose first value is one of the wanted values, in name
    order, never the default partition, whether the key is the only one or not, alone or with
    another conjunct; counted and dropped alike."""
    name = f"k{next(_counter)}"
    keys = (Column("s", "string"),) if one_key else (Column("s", "string"), Column("n", "int"))
    t = make_table(catalog, name, keys)
    parts = [part(t, s) if one_key else part(t, s, str(n)) for s, n in rows]
    added = catalog.add_partitions(t, parts, if_not_exists=True)

    def matchable(values: list[str]) -> set[str]:  # NULL, '' and the default name never match
        return {v for v in values if v and v != "__HIVE_DEFAULT_PARTITION__"}

    named = matchable(wanted)
    # also with another conjunct, after or before it: the ranges find the rows, it tests them
    v0 = wanted[0] if wanted else "a"
    other: Expr = NotEqualTo("s", v0) if one_key else GreaterThan("n", 0)

    def passes_other(p: Partition) -> bool:
        return p.values[0] != v0 if one_key else p.values[1] is not None and int(p.values[1]) > 0

    key_filters: list[Expr] = [In("s", tuple(wanted)), *[EqualTo("s", v) for v in wanted[:2]]]
    cases = [(f, f, False) for f in key_filters] + [
        (And(key_filters[0], other), key_filters[0], True),
        (And(other, EqualTo("s", v0)), EqualTo("s", v0), True)]
    for flt, on_key, with_other in cases:
        want = named if isinstance(on_key, In) else matchable([on_key.value])  # type: ignore[attr-defined]
        expected = sorted((p for p in added if p.values[0] in want
                           and (not with_other or passes_other(p))),
                          key=lambda p: make_part_name(t.partition_key_names(), p.values))
        got = catalog.list_partitions(t, flt)
        assert [p.values for p in got] == [p.values for p in expected], flt
        assert [p.location for p in got] == [p.location for p in expected]
        assert [p.values for p in catalog.list_partitions(t, flt, limit=1)] == \
            [p.values for p in expected[:1]]
        assert catalog.count_partitions(t, flt) == len(expected)
        assert catalog.partition_stats(t, flt)[0] == len(expected)
    dropped = catalog.drop_partitions(t, And(key_filters[0], other))
    assert sorted(p.values for p in dropped) == \
        sorted(p.values for p in added if p.values[0] in named and passes_other(p))
    dropped += catalog.drop_partitions(t, In("s", tuple(wanted)))
    assert sorted(p.values for p in dropped) == sorted(p.values for p in added if p.values[0] in named)
    assert {p.values for p in catalog.list_partitions(t)} == \
        {p.values for p in added if p.values[0] not in named}
    catalog.drop_table("db", name)


def test_specs_on_boolean_and_big_bigint_keys_name_one_partition(catalog: SqlCatalog) -> None:
    """A static spec names exactly its partitions: ``b=false`` is bound as a boolean (the text
    'false' compares with no boolean, which kept every partition and dropped none), and
    ``k=2**53+1`` is told from ``k=2**53`` (one double in the metastore's filter, which may keep
    both) by :func:`named_partitions`, which decides each partition as DROP PARTITION does."""
    from hivepark.sql.statements import PartitionSpec
    from hivepark.sql.validate import named_partitions, spec_filter

    t = make_table(catalog, keys=(Column("b", "boolean"), Column("k", "bigint")))
    big = 2 ** 53
    catalog.add_partitions(t, [part(t, b, str(k)) for b in ("true", "false") for k in (big, big + 1)])

    def named(*entries: tuple[str, str]) -> list[tuple[str | None, ...]]:
        spec = PartitionSpec(tuple((c, v, False) for c, v in entries))
        return values_of(named_partitions(t, spec, catalog.list_partitions(t, spec_filter(t, spec))))

    assert named(("b", "false"), ("k", str(big + 1))) == [("false", str(big + 1))]
    assert named(("b", "TRUE")) == [("true", str(big)), ("true", str(big + 1))]
    assert named(("k", str(big))) == [("false", str(big)), ("true", str(big))]
    assert values_of(catalog.list_partitions(t, spec_filter(t, PartitionSpec((("b", "false", False),))))) == \
        [("false", str(big)), ("false", str(big + 1))]  # bound as a boolean: the metastore's filter is exact
    spec = PartitionSpec((("b", "false", False), ("k", str(big), False)))
    assert values_of(catalog.drop_partitions(t, spec_filter(t, spec), [spec_filter(t, spec)])) == \
        [("false", str(big))]
    assert values_of(catalog.drop_partitions(t, spec_filter(t, PartitionSpec((("b", "true", False),))))) == \
        [("true", str(big)), ("true", str(big + 1))]
    assert values_of(catalog.list_partitions(t)) == [("false", str(big + 1))]


def test_thousands_of_ors_and_drop_specs_filter_and_drop(catalog: SqlCatalog) -> None:
    """5,000 ORed equalities (a WHERE of many branches) and 2,000 ORed specs (DROP PARTITION of
    many): the tree is balanced (or_all), so neither Python's recursion limit nor SQLite's
    expression depth (1,000) is reached, and the partitions are found and dropped exactly."""
    t = make_table(catalog)
    catalog.add_partitions(t, [part(t, f"d{i}", str(i % 24)) for i in range(2500)])
    wanted = or_all(*(EqualTo("ds", f"d{i}") for i in range(0, 10000, 2)))
    assert len(catalog.list_partitions(t, wanted)) == catalog.count_partitions(t, wanted) == 1250
    specs = [And(EqualTo("ds", f"d{i}"), EqualTo("hr", i % 24)) for i in range(2000)]
    dropped = catalog.drop_partitions(t, or_all(*specs), specs)
    assert sorted(values_of(dropped)) == sorted((f"d{i}", str(i % 24)) for i in range(2000))
    assert sorted(values_of(catalog.list_partitions(t))) == sorted((f"d{i}", str(i % 24)) for i in range(2000, 2500))
