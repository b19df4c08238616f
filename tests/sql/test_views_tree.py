"""Views on the syntax tree (hivepark.sql.views), no JVM: a reference becomes the view's query,
and only filters that cannot change a row are pushed into it."""

from __future__ import annotations

import pytest

from hivepark.catalog.models import VIEW, VIEW_EXPANDED_TEXT, Column, Table
from hivepark.errors import SemanticError
from hivepark.sql import views
from hivepark.sql.parser import parse_one


def _view(name: str, query: str, out: list[str], names: list[str] | None = None) -> Table:
    tree = parse_one(query).statement.tree  # type: ignore[union-attr]
    text = views.expanded_text(tree, out, names or out)
    return Table("default", name, tuple(Column(n, "string") for n in names or out), location="",
                 table_type=VIEW, properties={VIEW_EXPANDED_TEXT: text})


def _finder(*defined: Table) -> views.ViewFind:
    by_name = {t.name: t for t in defined}
    return lambda db, name: by_name.get(name.lower()) if db in (None, "default") else None


#: the tables' column types the UNION rule asks for (t.k, u.id, w.id int; t.ds, u.day, w.day string; x.n string)
TYPES = {("t", "k"): "int", ("u", "id"): "int", ("w", "id"): "int", ("t", "ds"): "string", ("u", "day"): "string",
         ("w", "day"): "string", ("x", "n"): "string"}


def _typer(db: str | None, table: str, column: str) -> str | None:
    return TYPES.get((table, column))


def _expanded(query: str, *defined: Table) -> str:
    return views.expand(parse_one(query).statement.tree, _finder(*defined), _typer).sql(dialect="hive")  # type: ignore[union-attr]


DAYS = _view("days", "SELECT k, ds FROM default.t WHERE k > 0", ["k", "ds"])
ALL = _view("every", "SELECT * FROM default.t", ["k", "ds"])
PER_DAY = _view("per_day", "SELECT ds, count(*) AS n FROM default.t GROUP BY ds", ["ds", "n"])


def test_a_reference_becomes_the_query_and_a_filter_on_its_column_goes_in():
    out = _expanded("SELECT * FROM days WHERE ds = 'a'", DAYS)
    assert "FROM (SELECT k, ds FROM default.t WHERE k > 0 AND ds = 'a') AS __hivepark_view) AS days" in out
    assert out.endswith("WHERE ds = 'a'")  # the outer query keeps it
    out = _expanded("SELECT e.k FROM every AS e WHERE e.ds IN ('a', 'b') AND e.k = 1", ALL)
    assert "FROM default.t WHERE `ds` IN ('a', 'b') AND `k` = 1" in out
    out = _expanded("SELECT d.k FROM t2 JOIN days AS d ON t2.k = d.k WHERE d.ds = 'a' AND t2.x = 1", DAYS)
    assert "WHERE k > 0 AND ds = 'a')" in out and "t2.x" not in out.split(") AS d")[0]


@pytest.mark.parametrize("query", [
    "SELECT * FROM t2 LEFT JOIN days AS d ON t2.k = d.k WHERE d.ds IS NULL",  # null-supplying side
    "SELECT * FROM days AS d FULL JOIN t2 ON d.k = t2.k WHERE d.ds IS NULL OR d.ds = 'a'",  # so is FULL's
    "SELECT * FROM days AS d JOIN t2 ON d.k = t2.k RIGHT JOIN t3 ON t3.k = t2.k WHERE d.ds IS NULL",
    "SELECT * FROM days WHERE upper(ds) = 'A'",  # a function: may not be deterministic
    "SELECT * FROM days JOIN t2 ON days.k = t2.k WHERE ds = 'a'",  # unqualified with two sources
    "SELECT * FROM days WHERE ds = (SELECT max(ds) FROM t2)",  # a subquery
])
def test_filters_that_might_change_rows_stay_outside(query):
    assert "k > 0)" in _expanded(query, DAYS)


@pytest.mark.parametrize("query", [
    "SELECT * FROM days TABLESAMPLE (2 ROWS) WHERE ds = 'a'",  # the view's rows are sampled, then filtered
    "SELECT * FROM (SELECT k, ds FROM t WHERE k > 0) s TABLESAMPLE (10 PERCENT) WHERE ds = 'a'",
    "WITH c AS (SELECT k, ds FROM t WHERE k > 0) SELECT * FROM c TABLESAMPLE (2 ROWS) WHERE ds = 'a'",
])
def test_a_sampled_reference_takes_no_filter(query):
    """Spark samples a view, subquery or CTE reference's rows before the outer WHERE: a filter
    pushed into its query would change which rows are sampled. The view keeps its sample."""
    out = _expanded(query, DAYS)
    assert "k > 0)" in out and "ds = 'a'" not in out.split("TABLESAMPLE")[0], out
    assert "TABLESAMPLE" in out


def test_a_grouped_view_takes_filters_on_its_grouping_columns_alone_and_a_cte_hides_a_view():
    assert "FROM default.t WHERE ds = 'a' GROUP BY ds) AS __hivepark_view" in _expanded(
        "SELECT * FROM per_day WHERE ds = 'a' AND n > 2", PER_DAY)  # n is an aggregate: it stays out
    per_key = _view("per_key", "SELECT t.ds AS day, k, max(v) AS top FROM default.t GROUP BY ds, k HAVING "
                    "count(*) > 1", ["day", "k", "top"])
    out = _expanded("SELECT * FROM per_key WHERE day IN ('a', 'b') AND k < 3 AND top = 'x'", per_key)
    assert "WHERE t.ds IN ('a', 'b') AND k < 3 GROUP BY ds, k HAVING" in out
    distinct = _view("kinds", "SELECT DISTINCT ds, k FROM default.t", ["ds", "k"])
    assert "SELECT DISTINCT ds, k FROM default.t WHERE ds = 'a'" in _expanded(
        "SELECT * FROM kinds WHERE ds = 'a'", distinct)
    for query in ("SELECT ds, count(*) AS n FROM default.t GROUP BY ds WITH ROLLUP",
                  "SELECT ds, count(*) AS n FROM default.t GROUP BY GROUPING SETS ((ds), ())",
                  "SELECT ds, count(*) AS n FROM default.t GROUP BY CUBE (ds)",
                  "SELECT ds, count(*) AS n FROM default.t GROUP BY 1",
                  "SELECT max(ds) AS ds, count(*) AS n FROM default.t"):
        # rows standing for all values, a grouping not by a column, or one row of all rows
        rolled = _view("rolled", query, ["ds", "n"])
        assert "ds = 'a'" not in _expanded("SELECT * FROM rolled WHERE ds = 'a'", rolled).split("AS rolled")[0]
    assert _expanded("WITH days AS (SELECT 1 AS k) SELECT k FROM days", DAYS) == \
        "WITH days AS (SELECT 1 AS k) SELECT k FROM days"


def test_views_within_views_and_loops():
    outer = _view("outer_v", "SELECT k FROM days WHERE ds = 'a'", ["k"])
    out = _expanded("SELECT * FROM outer_v", outer, DAYS)
    assert "FROM default.t WHERE k > 0 AND ds = 'a'" in out  # the outer view's filter reaches the table
    a = _view("a", "SELECT k FROM b", ["k"])
    b = _view("b", "SELECT k FROM a", ["k"])
    with pytest.raises(SemanticError, match="reads itself through default.a -> default.b -> default.a"):
        _expanded("SELECT * FROM a", a, b)
    with pytest.raises(SemanticError, match="would read itself"):
        views.check_no_loop(parse_one("SELECT k FROM b").statement.tree, _finder(a, b), "default.a")  # type: ignore[union-attr]


def test_each_branch_of_a_union_takes_the_filters_it_can():
    years = _view("years", "SELECT k, ds FROM default.t UNION ALL SELECT id, day FROM default.u "
                  "UNION ALL SELECT max(id), day FROM default.w GROUP BY day", ["k", "ds"])
    out = _expanded("SELECT * FROM years WHERE ds = 'a' AND k > 1", years)
    # k is an aggregate in the third branch, whose type decides the union's too: its filter stays outside
    assert "FROM default.t WHERE ds = 'a' UNION ALL SELECT id, day FROM default.u WHERE day = 'a' " \
           "UNION ALL SELECT MAX(id), day FROM default.w WHERE day = 'a' GROUP BY day" in out
    two = _view("two", "SELECT k, ds FROM default.t UNION ALL SELECT id, day FROM default.u", ["k", "ds"])
    assert "FROM default.t WHERE ds = 'a' AND k > 1 UNION ALL SELECT id, day FROM default.u WHERE day = 'a' " \
           "AND id > 1" in _expanded("SELECT * FROM two WHERE ds = 'a' AND k > 1", two)
    distinct = _view("kinds", "SELECT k, ds FROM default.t UNION SELECT id, day FROM default.u", ["k", "ds"])
    assert "WHERE day = 'a')" in _expanded("SELECT * FROM kinds WHERE ds = 'a'", distinct)
    # a branch whose column has another type (x.n STRING under t.k INT) would compare the literal as its
    # own type: that column's filter stays outside every branch; without the types, none goes in
    mixed = _view("mixed", "SELECT k, ds FROM default.t UNION ALL SELECT n, ds FROM default.x", ["k", "ds"])
    out = _expanded("SELECT * FROM mixed WHERE k > '5'", mixed)
    assert "'5'" not in out.split("AS mixed")[0]
    untyped = views.expand(parse_one("SELECT * FROM years WHERE ds = 'a'").statement.tree,  # type: ignore[union-attr]
                           _finder(years)).sql(dialect="hive")
    assert "= 'a'" not in untyped.split("AS years")[0]
    limited = _view("limited", "SELECT k, ds FROM default.t UNION ALL SELECT id, day FROM default.u LIMIT 3",
                    ["k", "ds"])
    assert "= 'a'" not in _expanded("SELECT * FROM limited WHERE ds = 'a'", limited).split("AS limited")[0]


def test_columns_named_alike_are_named_by_position():
    query = parse_one("SELECT a.k, b.k AS k FROM a JOIN b ON a.x = b.x UNION ALL SELECT 1, 2").statement.tree  # type: ignore[union-attr]
    assert views.named_by_position(query, ["k1", "k2"]).sql(dialect="hive") == \
        "SELECT a.k AS `k1`, b.k AS `k2` FROM a JOIN b ON a.x = b.x UNION ALL SELECT 1, 2"
    starred = parse_one("SELECT *, a.k FROM a JOIN b ON a.x = b.x").statement.tree  # type: ignore[union-attr]
    with pytest.raises(SemanticError, match="distinct alias"):
        views.named_by_position(starred, ["x", "k", "x2", "k2"])
