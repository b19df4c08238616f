"""HiveQL text in, typed statement (or Hive's error text) out: the statement builder and
Hive's validation rules, without a JVM."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from hivepark.catalog.models import Column, Table
from hivepark.catalog.skew import SkewLayout
from hivepark.errors import HiveParkError, InvalidPartitionSpec, ParseError, SemanticError
from hivepark.expr import And, EqualTo, IsNull
from hivepark.sql import statements as s
from hivepark.sql import validate as v
from hivepark.sql.parser import parse, parse_one


def stmt(text: str) -> s.Statement:
    return parse_one(text).statement


def error(text: str) -> str:
    st = stmt(text)
    assert isinstance(st, s.Failed), st
    return str(st.error)


SALES = Table("default", "sales", (Column("id", "int"), Column("x", "string")),
              (Column("ds", "date"), Column("hr", "int")))


def typed(name: str, typ: str) -> Table:
    return Table("default", "t", (Column("a", "int"),), (Column(name, typ),))


# ---------------------------------------------------------------- builder


def test_create_table_with_partitions_skew_and_properties():
    st = stmt("CREATE EXTERNAL TABLE IF NOT EXISTS db1.T (a INT COMMENT 'k', b STRING) "
              "PARTITIONED BY (ds STRING) SKEWED BY (a) ON (1, (2)) STORED AS DIRECTORIES "
              "STORED AS ORC LOCATION '/tmp/x' TBLPROPERTIES ('k'='v')")
    assert st == s.CreateTable(
        s.TableRef("db1", "t"), (Column("a", "int", "k"), Column("b", "string")),
        (Column("ds", "string"),),
        skew=s.SkewClause(("a",), ((s.SkewValue("1", "1"),), (s.SkewValue("2", "2"),)), True),
        format="ORC", location="/tmp/x", external=True, properties=(("k", "v"),),
        if_not_exists=True)


def test_ctas_and_like():
    ctas = stmt("CREATE TABLE t PARTITIONED BY (p) AS SELECT a, p FROM s")
    assert isinstance(ctas, s.CreateTable) and ctas.untyped_partition_columns == ("p",)
    assert isinstance(ctas.as_select, s.Query)
    assert s.Explain.of(ctas).query is ctas.as_select
    like = stmt("CREATE TABLE t2 LIKE other.t")
    assert isinstance(like, s.CreateTable) and like.like == s.TableRef("other", "t")


def test_insert_partition_spec_keeps_order_and_kind():
    st = stmt("INSERT OVERWRITE TABLE sales PARTITION (ds='2024-01-05', hr) IF NOT EXISTS "
              "SELECT * FROM src")
    assert isinstance(st, s.Insert) and st.overwrite and st.if_not_exists
    assert st.partition.entries == (("ds", "2024-01-05", False), ("hr", None, True))
    assert st.partition.dynamic == ["hr"] and st.partition.static == {"ds": "2024-01-05"}
    flag = stmt("INSERT INTO t PARTITION (flag=TRUE, n=-7, v=NULL) SELECT 1")
    assert isinstance(flag, s.Insert)
    assert flag.partition.entries == (("flag", "true", False), ("n", "-7", False),
                                      ("v", None, False))


@pytest.mark.parametrize("text", [
    "INSERT INTO TABLE t PARTITION (ds='1') IF NOT EXISTS SELECT 1",
    "FROM src INSERT OVERWRITE TABLE a SELECT x INSERT INTO TABLE b PARTITION (p='1') IF NOT EXISTS SELECT x",
])
def test_if_not_exists_goes_with_insert_overwrite_only(text):
    # Hive's grammar: KW_INSERT KW_OVERWRITE destination ifNotExists?; INSERT INTO takes none.
    with pytest.raises(ParseError, match="IF NOT EXISTS is only allowed with INSERT OVERWRITE"):
        stmt(text)


def test_multi_insert_reads_one_view():
    st = stmt("FROM src s INSERT INTO a SELECT x WHERE x > 1 INSERT INTO b PARTITION (p) "
              "SELECT x, p WHERE x < 0")
    assert isinstance(st, s.MultiInsert) and len(st.inserts) == 2
    assert st.view in st.inserts[0].query.tree.sql()
    assert "OR" in st.source.tree.sql()
    assert st.inserts[1].partition.dynamic == ["p"]


def test_alter_table_actions():
    st = stmt("ALTER TABLE sales ADD IF NOT EXISTS PARTITION (ds='1', hr=1) LOCATION 'sub' "
              "PARTITION (ds='2', hr=2)")
    assert isinstance(st, s.AlterTable)
    (add,) = st.actions
    assert isinstance(add, s.AddPartitions) and add.if_not_exists
    assert [loc for _, loc in add.partitions] == ["sub", None]
    drop = stmt("ALTER TABLE sales DROP IF EXISTS PARTITION (ds='1')")
    assert isinstance(drop, s.AlterTable)
    assert drop.actions == (s.DropPartitions((s.PartitionSpec((("ds", "1", False),)),), True),)
    assert stmt("ALTER TABLE a RENAME TO b.c") == s.AlterTable(
        s.TableRef(None, "a"), (s.RenameTable(s.TableRef("b", "c")),))
    conc = stmt("ALTER TABLE sales PARTITION (ds='1', hr=1) CONCATENATE")
    assert isinstance(conc, s.AlterTable) and conc.actions == (s.Concatenate(),)
    assert conc.partition is not None and conc.partition.columns == ["ds", "hr"]
    assert stmt("ALTER TABLE t NOT SKEWED") == s.AlterTable(s.TableRef(None, "t"), (s.NotSkewed(),))
    loc = stmt("ALTER TABLE t SET SKEWED LOCATION (1='file:///a', "
               "'HIVE_DEFAULT_LIST_BUCKETING_KEY'='file:///b')")
    assert isinstance(loc, s.AlterTable) and isinstance(loc.actions[0], s.SetSkewedLocation)


def test_show_describe_set_use_load_msck_analyze():
    assert stmt("SHOW TABLES IN Db1 LIKE 'a*'") == s.ShowTables("db1", "a*")
    assert stmt("SHOW DATABASES") == s.ShowDatabases()
    assert stmt("SHOW PARTITIONS sales PARTITION (ds='1')") == s.ShowPartitions(
        s.TableRef(None, "sales"), s.PartitionSpec((("ds", "1", False),)))
    shown = stmt("SHOW PARTITIONS sales WHERE hr >= 2 ORDER BY ds DESC, hr LIMIT 5")
    assert isinstance(shown, s.ShowPartitions) and (shown.order, shown.limit) == ((("ds", True), ("hr", False)), 5)
    assert shown.where is not None and shown.where.columns() == {"hr"}
    assert error("SHOW PARTITIONS sales LIMIT -1").startswith("SHOW PARTITIONS ... LIMIT")
    assert stmt("DESCRIBE FORMATTED sales") == s.Describe(s.TableRef(None, "sales"), "FORMATTED")
    assert stmt("SET a.b = c d") == s.Set("a.b", "c d")
    assert stmt("USE Db1") == s.Use("db1")
    assert stmt("LOAD DATA LOCAL INPATH 'file:///x/y' OVERWRITE INTO TABLE t") == s.LoadData(
        s.TableRef(None, "t"), "/x/y", local=True, overwrite=True)
    assert stmt("MSCK REPAIR TABLE d.t") == s.MsckRepair(s.TableRef("d", "t"))
    assert stmt("MSCK TABLE t") == s.MsckRepair(s.TableRef(None, "t"), repair=False)
    assert stmt("ANALYZE TABLE t COMPUTE SKEW FOR COLUMNS a, B") == s.AnalyzeSkew(
        s.TableRef(None, "t"), ("a", "b"))
    assert stmt("DROP DATABASE IF EXISTS x CASCADE") == s.DropDatabase("x", True, True)
    assert stmt("EXPLAIN ANALYZE SELECT 1").style == "ANALYZE"  # type: ignore[union-attr]


def test_invalid_statements_fail_when_run_not_when_parsed():
    script = parse("CREATE TABLE ok (a INT); CREATE TABLE bad (a INT, a STRING); SELECT 1")
    assert [type(p.statement) for p in script] == [s.CreateTable, s.Failed, s.Query]
    assert error("CREATE TABLE t (a INT, A STRING)").startswith("Duplicate column name: a.")
    assert stmt("INSERT INTO t PARTITION (p='1') (b, a) SELECT 1, 2").columns == ("b", "a")  # type: ignore[union-attr]
    assert error("CREATE TABLE t (a INT) PARTITIONED BY (p)").startswith(
        "Partition column p has no type")
    assert error("EXPLAIN CREATE TABLE t (a INT)").startswith("EXPLAIN works on queries")
    assert stmt("ANALYZE TABLE t COMPUTE STATISTICS NOSCAN") == s.AnalyzeStatistics(s.TableRef(None, "t"), noscan=True)
    assert stmt("ANALYZE TABLE t PARTITION (ds='1') COMPUTE STATISTICS FOR COLUMNS a, B") == s.AnalyzeColumns(
        s.TableRef(None, "t"), ("a", "b"), s.PartitionSpec((("ds", "1", False),)))
    assert stmt("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS") == s.AnalyzeColumns(s.TableRef(None, "t"), ())
    assert error("INSERT INTO t PARTITION (p=rand()) SELECT 1").startswith(
        "Partition value RAND() must be a constant")
    view = stmt("CREATE VIEW IF NOT EXISTS db.v (a COMMENT 'first', b) COMMENT 'c' TBLPROPERTIES ('k'='v') "
                "AS SELECT 1, 2")
    assert isinstance(view, s.CreateView) and view.table == s.TableRef("db", "v") and view.if_not_exists
    assert (view.columns, view.comment, view.properties) == ((("a", "first"), ("b", None)), "c", (("k", "v"),))
    altered = stmt("ALTER VIEW v AS SELECT 1")
    assert isinstance(altered, s.CreateView) and altered.alter and not altered.columns
    assert stmt("DROP VIEW IF EXISTS db.v") == s.DropTable(s.TableRef("db", "v"), True, view=True)
    assert stmt("SHOW VIEWS IN db LIKE 'a*'") == s.ShowTables("db", "a*", views=True)
    assert error("CREATE MATERIALIZED VIEW v AS SELECT 1").startswith(
        "CREATE MATERIALIZED VIEW is not supported by hivepark: CREATE VIEW keeps the query")
    assert error("CREATE TEMPORARY VIEW v AS SELECT 1").startswith("CREATE TEMPORARY VIEW is not supported")
    assert stmt("ALTER VIEW v SET TBLPROPERTIES ('a'='b')") == s.AlterTable(
        s.TableRef(None, "v"), (s.SetTableProperties((("a", "b"),)),), view=True)
    assert stmt("SHOW COLUMNS FROM t IN db LIKE 'a*'") == s.ShowColumns(s.TableRef("db", "t"), "a*")
    assert stmt("SHOW FUNCTIONS LIKE 'x*'") == s.ShowFunctions("x*")
    assert stmt("DESCRIBE EXTENDED db.t PARTITION (ds='1') v") == s.Describe(
        s.TableRef("db", "t"), "EXTENDED", s.PartitionSpec((("ds", "1", False),), "PARTITION(ds = '1')"), "v")
    assert stmt("DESCRIBE DATABASE EXTENDED d") == s.DescribeDatabase("d", True)
    assert error("CREATE TABLE c (a STRING) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde'").startswith(
        "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' is not supported by hivepark: it reads")
    assert error("CREATE TEMPORARY TABLE tmp (a INT)").startswith("CREATE TEMPORARY TABLE is not supported")
    assert stmt("DESCRIBE FUNCTION EXTENDED upper") == s.DescribeFunction("upper", True)
    assert stmt("ALTER TABLE t ADD COLUMNS (c INT COMMENT 'x') CASCADE") == s.AlterTable(
        s.TableRef(None, "t"), (s.AddColumns((Column("c", "int", "x"),)),))
    assert stmt("ALTER TABLE t REPLACE COLUMNS (c INT)").actions == (s.AddColumns((Column("c", "int"),), True),)
    assert stmt("ALTER VIEW db.v RENAME TO w") == s.AlterTable(
        s.TableRef("db", "v"), (s.RenameTable(s.TableRef(None, "w")),), view=True)
    assert error("ALTER VIEW v SET SERDEPROPERTIES ('a'='b')").startswith("ALTER VIEW v takes AS SELECT ...")
    assert stmt("CREATE OR REPLACE VIEW v AS SELECT 1").replace  # type: ignore[union-attr]
    with pytest.raises(ParseError):
        parse_one("SELEC 1")


@pytest.mark.parametrize("text, near, says", [
    ("DROP DATABASE x RESTRICT CASCADE", "1:32 cannot recognize input near 'CASCADE'",
     "DROP DATABASE takes CASCADE or RESTRICT once: DROP DATABASE [IF EXISTS] db [RESTRICT | CASCADE]"),
    ("DROP SCHEMA x CASCADE CASCADE", "'CASCADE' '<EOF>' '<EOF>'", "DROP SCHEMA takes CASCADE or RESTRICT once"),
    ("DROP DATABASE x PURGE", "'PURGE' '<EOF>' '<EOF>'", "DROP DATABASE takes no PURGE"),
    ("DROP TABLE t CASCADE", "1:20 cannot recognize input near 'CASCADE'",
     "DROP TABLE takes no CASCADE: DROP TABLE [IF EXISTS] t [PURGE] (CASCADE drops a database with its tables"),
    ("DROP TABLE IF EXISTS t RESTRICT", "'RESTRICT'", "DROP TABLE takes no RESTRICT"),
    ("DROP TABLE t PURGE PURGE", "1:24 cannot recognize input near 'PURGE'", "DROP TABLE takes PURGE once"),
    ("DROP VIEW v PURGE", "'PURGE'", "DROP VIEW takes no PURGE: DROP VIEW [IF EXISTS] v"),
    ("ALTER TABLE t ADD COLUMNS (a INT) RESTRICT CASCADE", "1:50 cannot recognize input near 'CASCADE'",
     "ADD COLUMNS takes CASCADE or RESTRICT once, not RESTRICT CASCADE"),
    ("ALTER TABLE t REPLACE COLUMNS (a INT) CASCADE RESTRICT", "'RESTRICT'",
     "REPLACE COLUMNS takes CASCADE or RESTRICT once"),
    ("ALTER TABLE t CHANGE a b INT CASCADE CASCADE", "'CASCADE'", "CHANGE COLUMN takes CASCADE or RESTRICT once"),
    ("ALTER TABLE t SET TBLPROPERTIES ('a'='b') CASCADE", "'CASCADE'",
     "CASCADE follows only ADD COLUMNS, REPLACE COLUMNS and CHANGE COLUMN"),
    ("ALTER TABLE t DROP PARTITION (ds='1') PURGE PURGE", "'PURGE'", "DROP PARTITION takes PURGE once"),
    ("DROP TABLE a, b", "1:13 cannot recognize input near ',' 'b' '<EOF>'",
     "DROP TABLE takes one name: DROP TABLE [IF EXISTS] t [PURGE]; drop each in a statement of its own"),
    ("DROP VIEW IF EXISTS a, b", "','", "DROP VIEW takes one name"),
    ("DROP TEMPORARY TABLE t", "'TEMPORARY' 'TABLE' 't'",
     "DROP TEMPORARY TABLE is not HiveQL, and hivepark has no temporary tables: DROP TABLE [IF EXISTS] t"),
    ("DROP MATERIALIZED VIEW v", "'MATERIALIZED'", "DROP MATERIALIZED VIEW drops a materialized view, and hivepark "
     "has none: DROP VIEW [IF EXISTS] v"),
])
def test_contradictory_or_repeated_drop_and_alter_clauses_are_parse_errors(text, near, says):
    """Found by a hunt for bugs: DROP TABLE t CASCADE, DROP DATABASE x PURGE, DROP VIEW v PURGE,
    ADD COLUMNS (...) RESTRICT CASCADE and SET TBLPROPERTIES (...) CASCADE were taken (the clause
    ignored), and CASCADE RESTRICT after a column change failed as an unsupported statement; DROP
    TABLE a, b dropped a alone, DROP TEMPORARY TABLE t the table t: Hive's grammar refuses each; the
    error names the clause and the statement's form."""
    with pytest.raises(ParseError) as e:
        parse_one(text)
    assert near in str(e.value) and says in str(e.value), str(e.value)
    assert error("TRUNCATE TABLE t CASCADE").startswith("TRUNCATE takes one table, and no CASCADE or RESTRICT")


def test_the_drop_and_alter_clauses_hive_takes_still_parse():
    assert stmt("DROP DATABASE x RESTRICT") == s.DropDatabase("x", False, False)
    assert stmt("DROP DATABASE IF EXISTS x CASCADE") == s.DropDatabase("x", True, True)
    assert stmt("DROP TABLE IF EXISTS purge PURGE") == s.DropTable(s.TableRef(None, "purge"), True)
    assert stmt("DROP VIEW force") == s.DropTable(s.TableRef(None, "force"), False, view=True)
    for text in ("ALTER TABLE t ADD COLUMNS (a INT) RESTRICT", "ALTER TABLE t REPLACE COLUMNS (a INT) CASCADE",
                 "ALTER TABLE t CHANGE a b INT AFTER c RESTRICT", "ALTER TABLE t DROP PARTITION (ds='1') PURGE"):
        assert isinstance(stmt(text), s.AlterTable), text


def test_create_and_drop_schema_name_the_database():
    """Found by a hunt for bugs: CREATE SCHEMA sales failed ("InvalidObjectException(message: is not a
    valid object name)") and DROP SCHEMA sales said "Database does not exist: ." (sqlglot reads a
    SCHEMA's name as a table's database); SCHEMA is DATABASE's other word in Hive."""
    assert stmt("CREATE SCHEMA IF NOT EXISTS Sales LOCATION '/w/s'") == s.CreateDatabase("sales", True, "/w/s")
    assert stmt("DROP SCHEMA IF EXISTS Sales CASCADE") == s.DropDatabase("sales", True, True)
    assert stmt("DROP SCHEMA sales RESTRICT") == stmt("DROP DATABASE sales") == s.DropDatabase("sales", False, False)


# ---------------------------------------------------------------- validation


def spec(*entries: tuple[str, str | None, bool]) -> s.PartitionSpec:
    return s.PartitionSpec(tuple(entries))


@pytest.mark.parametrize("typ, given, text", [
    ("boolean", "TRUE", "true"), ("boolean", True, "true"), ("boolean", "false", "false"),
    ("int", "007", "7"), ("int", "+7", "7"), ("int", " -007", "-7"), ("bigint", 7, "7"),
    ("decimal(10,2)", "1.5", "1.5"), ("decimal(10,2)", Decimal("1.50"), "1.5"), ("decimal(10,2)", "7.00", "7"),
    ("date", "2024-01-05", "2024-01-05"), ("date", datetime.date(2024, 1, 5), "2024-01-05"),
    ("timestamp", "2024-01-05 10:00:00", "2024-01-05 10:00:00"),
    ("timestamp", datetime.datetime(2024, 1, 5, 10), "2024-01-05 10:00:00"),
    ("double", "2", "2.0"), ("double", 2.0, "2.0"), ("string", "007", "007"),
    ("string", "", None), ("int", "__HIVE_DEFAULT_PARTITION__", None),
])
def test_partition_values_have_one_text_from_sql_and_python(typ, given, text):
    table = typed("p", typ)
    assert v.partition_value(table, "p", given) == text
    assert v.python_spec(table, {"P": given}).entries == (("p", text, False),)


def test_bad_partition_values():
    with pytest.raises(InvalidPartitionSpec, match=r"^Cannot add partition column p of type string as it cannot be "
                       r"converted to type int: partition value 'abc' for column p is not a valid int \(not a "
                       r"whole number: an int is written like 1\)\. Give an int value, e\.g\. PARTITION \(p=1\)$") as e:
        v.partition_value(typed("p", "int"), "p", "abc")
    assert e.value.code == 10248
    with pytest.raises(InvalidPartitionSpec, match="not a valid boolean"):
        v.partition_value(typed("p", "boolean"), "p", "maybe")


def test_full_spec_and_spec_filter():
    assert v.full_spec(SALES, spec(("hr", "01", False), ("ds", "2024-01-05", False))) == (
        "2024-01-05", "1")
    with pytest.raises(InvalidPartitionSpec, match=r"must give a value for every partition "
                       r"column \(ds, hr\); missing: hr"):
        v.full_spec(SALES, spec(("ds", "2024-01-05", False)))
    with pytest.raises(InvalidPartitionSpec, match=r"Partition spec \{zz=1\} contains "
                       "non-partition columns"):
        v.full_spec(SALES, spec(("zz", "1", False)))
    assert v.spec_filter(SALES, spec(("ds", "2024-01-05", False), ("hr", None, False))) == And(
        EqualTo("ds", "2024-01-05"), IsNull("hr"))
    assert v.spec_filter(SALES, spec(("hr", "07", False))) == EqualTo("hr", Decimal("7"))


def test_dynamic_partition_rules():
    assert v.dynamic_columns(SALES, spec(("ds", "1", False), ("hr", None, True)), True, True) == ["hr"]
    assert v.dynamic_columns(SALES, s.PartitionSpec(), True, False) == ["ds", "hr"]
    cases = [
        (spec(("ds", None, True), ("hr", None, True)), True, True, 10096),
        (spec(("ds", None, True), ("hr", "1", False)), True, False, 10094),
        # Hive puts the spec in the table's order first: (ds dynamic, hr='1') is 10094 before 10125
        (spec(("hr", "1", False), ("ds", None, True)), True, False, 10094),
        (spec(("hr", None, True), ("ds", "1", False)), True, False, 10125),
        (spec(("ds", "1", False), ("hr", None, True)), False, False, 10095),
    ]
    for sp, enabled, strict, code in cases:
        with pytest.raises(SemanticError) as e:
            v.dynamic_columns(SALES, sp, enabled, strict)
        assert e.value.code == code
    with pytest.raises(SemanticError, match="Dynamic partitions do not support IF NOT EXISTS"):
        v.check_if_not_exists(["hr"], True)


def test_skew_rules():
    clause = stmt("ALTER TABLE t SKEWED BY (id) ON ('007', 7)").actions[0].skew  # type: ignore[union-attr]
    assert v.skew_spec(SALES.columns, clause).values == (("7",),)
    bad = stmt("ALTER TABLE t SKEWED BY (ds) ON (1)").actions[0].skew  # type: ignore[union-attr]
    with pytest.raises(SemanticError, match="a partition column cannot be skewed") as e:
        v.skew_spec(SALES.columns, bad, SALES.partition_keys)
    assert e.value.code == 10203
    pair = stmt("ALTER TABLE t SKEWED BY (id, x) ON ((1))").actions[0].skew  # type: ignore[union-attr]
    with pytest.raises(SemanticError, match="are different: 2 : 1"):
        v.skew_spec(SALES.columns, pair)
    base = SkewLayout(("id",), (("1",),), ())
    loc = stmt("ALTER TABLE t SET SKEWED LOCATION (1='file:///a', "
               "'HIVE_DEFAULT_LIST_BUCKETING_KEY'='file:///b')").actions[0]
    assert isinstance(loc, s.SetSkewedLocation)
    assert v.location_changes(SALES, base, loc) == {("1",): "file:///a", None: "file:///b"}
    rel = stmt("ALTER TABLE t SET SKEWED LOCATION (1='a/b')").actions[0]
    with pytest.raises(SemanticError, match="a/b is not absolute"):
        v.location_changes(SALES, base, rel)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["!ls -l", "dfs -ls /tmp", "ADD JAR /x/udf.jar", "add files a.txt", "LIST JARS",
                                  "delete jar /x/udf.jar", "RELOAD FUNCTIONS", "source /tmp/q.sql"])
def test_hive_cli_commands_are_refused_as_such_when_they_run(text):
    """Hive's CLI runs these itself: each is refused naming it as a CLI command (when it runs,
    so a script's statements before it still run), not as a strange statement kind."""
    statement = stmt(text)
    assert isinstance(statement, s.Failed)
    with pytest.raises(HiveParkError, match="is a Hive CLI command, not a HiveQL statement"):
        statement.throw()


@pytest.mark.parametrize("text,near", [("RESETT", "'RESETT' '<EOF>' '<EOF>'"),
                                       ("hello world", "'hello' 'world' '<EOF>'"),
                                       ("a - b", "'a' '-' 'b'")])
def test_an_expression_is_not_a_statement(text, near):
    with pytest.raises(ParseError) as e:
        stmt(text)
    assert str(e.value) == f"ParseException line 1:1 cannot recognize input near {near}"


def test_reset():
    assert stmt("RESET") == s.Reset() and stmt("reset hive.exec.dynamic.partition.mode;") == s.Reset(
        "hive.exec.dynamic.partition.mode")
    assert stmt("DELETE FROM t WHERE a = 1") != s.Reset()  # DELETE is a statement, DELETE JAR a CLI command


@pytest.mark.parametrize("text,why", [("SHOW LOCKS", "takes no locks"), ("SHOW LOCKS t EXTENDED", "takes no locks"),
                                      ("SHOW TRANSACTIONS", "no ACID tables"), ("SHOW COMPACTIONS", "CONCATENATE"),
                                      ("SHOW CURRENT ROLES", "no authorization"),
                                      ("SHOW GRANT USER bob ON TABLE t", "no authorization"),
                                      ("EXPLAIN CBO COST SELECT 1", "EXPLAIN CBO shows what Hive's own planner"),
                                      ("EXPLAIN VECTORIZATION ONLY SUMMARY SELECT 1", "EXPLAIN VECTORIZATION"),
                                      ("EXPLAIN LOCKS INSERT INTO t SELECT 1", "EXPLAIN LOCKS")])
def test_hive_features_hivepark_has_not_are_refused_saying_why(text, why):
    assert why in error(text)


def test_show_conf():
    assert stmt("SHOW CONF 'hive.exec.dynamic.partition.mode'") == s.ShowConf("hive.exec.dynamic.partition.mode")


def test_comments_hive_strips_in_scripts_and_set():
    """Found by a hunt for bugs: a block comment after the last ``;`` failed the script ("expected
    exactly one statement"), and ``--`` inside a quoted SET value cut the value there."""
    assert [type(p.statement).__name__ for p in parse("SELECT 42;\n/* end of script */")] == ["Query"]
    assert [p.text for p in parse("SELECT 1; /* a */ -- b\n;\nSELECT '--;' /* c */;")] == \
        ["SELECT 1", "SELECT '--;' /* c */"]
    st = stmt("SET hivevar:pat='--x' -- the pattern")
    assert isinstance(st, s.Set) and (st.key, st.value) == ("hivevar:pat", "'--x'")
    st = stmt('SET a="x -- y"')
    assert isinstance(st, s.Set) and st.value == '"x -- y"'


def test_row_format_clauses_are_honoured_or_refused():
    """Found by a hunt for bugs: ESCAPED BY, COLLECTION ITEMS / MAP KEYS / LINES TERMINATED BY and
    NULL DEFINED AS were accepted and ignored (files of other bytes than Hive's: a value holding the
    delimiter read back split), and a LazySimpleSerDe's SERDEPROPERTIES delimiter was dropped. Now
    all but LINES (Hive supports '\\n' alone) are kept as LazySimpleSerDe's properties, under Hive's
    names, each read as Hive reads it ('9' is a tab)."""
    ok = stmt("CREATE TABLE t (a INT, m MAP<STRING, INT>) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
              "COLLECTION ITEMS TERMINATED BY '\\002' MAP KEYS TERMINATED BY '\\003' LINES TERMINATED BY '\\n' "
              "NULL DEFINED AS '\\\\N' STORED AS TEXTFILE")
    assert isinstance(ok, s.CreateTable) and ok.field_delim == ","
    kept = {"ESCAPED BY '\\\\'": ("escape.delim", "\\"),
            "COLLECTION ITEMS TERMINATED BY '|'": ("colelction.delim", "|"),
            "MAP KEYS TERMINATED BY '9'": ("mapkey.delim", "\t"),
            "NULL DEFINED AS 'NA'": ("serialization.null.format", "NA")}
    for clause, (key, value) in kept.items():
        st = stmt(f"CREATE TABLE t (a INT) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' {clause}")
        assert isinstance(st, s.CreateTable) and dict(st.properties)[key] == value, clause
        st = stmt(f"INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
                  f"{clause} SELECT 1")
        assert isinstance(st, s.InsertDirectory) and dict(st.serde)[key] == value, clause
    for text in ("CREATE TABLE t (a INT) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\r'",
                 "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/x' ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
                 "LINES TERMINATED BY '\\r' SELECT 1"):
        assert "is not supported by hivepark" in error(text), text
    serde = "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' WITH SERDEPROPERTIES"
    for props, delim in ((" ('field.delim'=',', 'serialization.format'=',')", ","),
                         (" ('serialization.format'='1')", "\x01"), (" ('field.delim'='9')", "\t")):
        st = stmt(f"CREATE TABLE t (a INT, b STRING) {serde}{props} STORED AS TEXTFILE")
        assert isinstance(st, s.CreateTable) and st.field_delim == delim, props
    st = stmt(f"CREATE TABLE t (a INT) {serde} ('field.delim'=',', 'serialization.null.format'='') STORED AS TEXTFILE")
    assert isinstance(st, s.CreateTable) and dict(st.properties)["serialization.null.format"] == ""
    st = stmt(f"CREATE TABLE t (a INT) {serde} ('field.delim'=',', 'escape.delim'='\\\\', 'collection.delim'='2', "
              "'mapkey.delim'=':') STORED AS TEXTFILE")
    assert isinstance(st, s.CreateTable) and {k: v for k, v in st.properties} == {
        "escape.delim": "\\", "colelction.delim": "\x02", "mapkey.delim": ":"}
    assert "is not supported by hivepark" in error(
        f"CREATE TABLE t (a INT) {serde} ('field.delim'=',', 'line.delim'='|') STORED AS TEXTFILE")


def test_multi_insert_into_a_directory_is_refused_by_name():
    """Found by a hunt for bugs: the directory's path was taken as a table's name (NoSuchTable)."""
    text = error("FROM src INSERT OVERWRITE LOCAL DIRECTORY '/tmp/out' SELECT a INSERT INTO TABLE t1 SELECT a, s")
    assert "into a DIRECTORY is not supported by hivepark" in text and "INSERT OVERWRITE [LOCAL] DIRECTORY" in text


def test_an_unterminated_string_leaves_the_statements_before_it_to_run():
    """A script is split as Hive's CLI reads it: an unterminated string makes the rest of the
    script one last statement, whose parse fails with its line; the statements before it are
    split as usual (a ``-f`` script runs them first), they do not fail with it."""
    from hivepark.sql.parser import split_statements

    text = ("SET hive.cli.errors.ignore=true;\nCREATE TABLE a1 (x INT);\nSELECT 'first';\n"
            "SELECT 'unterminated;\nSELECT 2;\n")
    pieces = split_statements(text)
    assert pieces == [("SET hive.cli.errors.ignore=true", 1), ("CREATE TABLE a1 (x INT)", 2),
                      ("SELECT 'first'", 3), ("SELECT 'unterminated;\nSELECT 2;", 4)]
    assert isinstance(parse_one(*pieces[1]).statement, s.CreateTable)
    with pytest.raises(ParseError) as e:
        parse_one(*pieces[3])
    assert str(e.value).startswith("ParseException line 4:8 unterminated string starting near ''unterminated;")
    with pytest.raises(ParseError) as e:  # Warehouse.sql_script parses all first: it still runs nothing
        parse(text)
    assert (e.value.line, e.value.column) == (4, 8)
