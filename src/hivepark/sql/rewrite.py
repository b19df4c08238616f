"""A query's text for Spark: each warehouse-table reference becomes a temp view.

``exec/`` holds a query's syntax tree only as an opaque object: it asks this module for
the scan sites (:func:`analyze`), builds one DataFrame per site, registers each as a temp
view, and runs the text :func:`spark_sql` returns. Spark SQL runs the rest of the query
(joins, aggregates, windows) unchanged.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from hivepark.catalog.buckets import BucketSample, hashed_input, spark_bucket_sql
from hivepark.errors import SemanticError
from hivepark.sql.analyzer import AtVersion, QueryAnalysis, ScanSite, TableFind, analyze_query


def analyze(tree: Any, find: TableFind, type_safety: bool = False, at_version: AtVersion | None = None
            ) -> QueryAnalysis:
    """The scan sites and join keys of a copy of ``tree`` (the caller's tree is left as
    it is; :func:`spark_sql` rewrites the copy). ``type_safety``: Hive's
    ``hive.strict.checks.type.safety`` (see :func:`analyzer.hive_comparisons`)."""
    if not isinstance(tree, exp.Expression):
        raise TypeError(f"not a query tree: {tree!r}")
    return analyze_query(virtual_columns(hoist_table_joins(tree.copy())), find, type_safety, at_version)


def hive_output_names(tree: Any, names: list[str]) -> list[str]:
    """``names`` (a query's output columns as Spark names them) with each expression that has
    no alias named as Hive names it, ``_c<position>`` (a UNION's by its first branch); the
    names as they are where the outputs cannot be matched to the SELECT list (several ``*``).

    >>> import sqlglot
    >>> hive_output_names(sqlglot.parse_one("SELECT a + 1, b, upper(s) AS u, 2 FROM t"),
    ...                   ["(a + 1)", "b", "u", "2"])
    ['_c0', 'b', 'u', '_c3']
    >>> hive_output_names(sqlglot.parse_one("SELECT *, k * 2 FROM t"), ["x", "y", "(k * 2)"])
    ['x', 'y', '_c2']
    """
    query = tree
    while isinstance(query, exp.SetOperation):
        query = query.this
    select = query.selects if isinstance(query, exp.Query) else []
    stars = [i for i, e in enumerate(select) if isinstance(e, exp.Star) or
             (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))]
    if len(stars) > 1 or not select:
        return list(names)
    out = list(names)
    width = len(names) - (len(select) - 1) if stars else 1  # the outputs the one star gives
    pos = 0
    for i, e in enumerate(select):
        if i in stars:
            pos += width
            continue
        if pos < len(out) and not isinstance(e, (exp.Alias, exp.Column)):
            out[pos] = f"_c{pos}"
        pos += 1
    return out


def virtual_columns(tree: exp.Expression) -> exp.Expression:
    """Hive's virtual columns: ``INPUT__FILE__NAME`` (the file a row was read from) is Spark's
    ``input_file_name()``; ``BLOCK__OFFSET__INSIDE__FILE`` and ``ROW__OFFSET__INSIDE__BLOCK``
    have no Spark counterpart and are refused by name.

    >>> import sqlglot
    >>> virtual_columns(sqlglot.parse_one("SELECT t.input__file__name, k FROM t", read="hive")).sql()
    'SELECT INPUT_FILE_NAME() AS input__file__name, k FROM t'
    """
    for col in list(tree.find_all(exp.Column)):
        name = col.name.lower()
        if name == "input__file__name":
            call = exp.Anonymous(this="input_file_name", expressions=[])
            parent = col.parent
            col.replace(exp.alias_(call, "input__file__name") if isinstance(parent, exp.Select) else call)
        elif name in ("block__offset__inside__file", "row__offset__inside__block", "raw__data__size", "row__id"):
            raise SemanticError(f"{col.name.upper()} is a Hive virtual column hivepark cannot give: Spark reads "
                                "rows, not byte offsets of files. INPUT__FILE__NAME (the file of each row) is "
                                "available.", code=10004)
    return tree


def hoist_table_joins(tree: exp.Expression) -> exp.Expression:
    """Hive's FROM-first form (``FROM a JOIN b ON ... SELECT ...``) parses with the joins
    hanging on the FROM's table; they belong to the SELECT, where every other query keeps
    them (the scan analysis reads them there, and a table replaced by its view keeps them).

    >>> import sqlglot
    >>> t = sqlglot.parse_one("FROM a JOIN b ON a.k = b.k SELECT count(*)", read="hive")
    >>> hoist_table_joins(t).sql()
    'SELECT COUNT(*) FROM a JOIN b ON a.k = b.k'
    >>> len(t.args["joins"]), t.args["from_"].this.args.get("joins")
    (1, None)
    """
    for select in list(tree.find_all(exp.Select)):
        source = select.args.get("from_")
        table = source.this if source is not None else None
        if isinstance(table, (exp.Table, exp.Subquery)) and table.args.get("joins"):
            joins = table.args["joins"]
            table.set("joins", None)
            select.set("joins", [*joins, *(select.args.get("joins") or [])])
    return tree


_KEPT = ("sample", "joins", "laterals", "pivots")


def filters_inline(site: ScanSite) -> bool:
    """Whether :func:`spark_sql` can read ``site`` as a filtered view (a subquery): not when
    the reference carries TABLESAMPLE, joins, LATERAL VIEW or PIVOT of its own."""
    return not any(site.node.args.get(k) for k in _KEPT)


def spark_sql(analysis: QueryAnalysis, views: Sequence[str], broadcast: Sequence[bool],
              applied: Sequence[Sequence[int]] = (), wheres: Sequence[str | None] = ()) -> str:
    """The analyzed query as Spark SQL, the i-th site read from temp view ``views[i]``
    under its own alias (as ``(SELECT * FROM view WHERE wheres[i])`` when that condition,
    Spark SQL text, is given; only where :func:`filters_inline`), with a BROADCAST hint for
    each site whose ``broadcast`` is set. ``applied[i]`` lists the conjuncts of
    ``sites[i].filters`` its source has already applied (a storage handler's exact pushed
    part): they become TRUE, so Spark does not filter those rows again. Rewrites the
    analyzed copy (and renders it in place, without copying it again): call once per
    analysis."""
    assert analysis.query is not None
    for site, done in zip(analysis.sites, applied):
        for i in done:
            site.filters[i].replace(exp.true())
    conds = list(wheres) + [None] * (len(views) - len(wheres))
    raw: dict[str, str] = {}  # placeholder -> condition text, put in after rendering (never parsed)
    for site, view, hint, where in zip(analysis.sites, views, broadcast, conds):
        alias = exp.TableAlias(this=exp.to_identifier(site.alias))
        if site.sample is not None:
            sampled = sample_condition(site.sample)
            where = sampled if where is None else f"({where}) AND {sampled}"
        if where is not None:
            assert filters_inline(site)
            mark = f"__hivepark_where_{len(raw)}_{uuid.uuid4().hex}"
            raw[mark] = where
            rows = exp.select("*").from_(exp.to_identifier(view)).where(exp.column(mark))
            site.node.replace(exp.Subquery(this=rows, alias=alias))
        else:
            # the view keeps what the reference asked of the rows (TABLESAMPLE, joins, LATERAL VIEW)
            kept = {k: site.node.args[k] for k in _KEPT if site.node.args.get(k)}
            site.node.replace(exp.Table(this=exp.to_identifier(view), alias=alias, **kept))
        if hint:
            _add_broadcast_hint(site)
    text = analysis.query.sql(dialect="spark", copy=False)  # the analysis's own copy
    for mark, where in raw.items():
        assert text.count(mark) == 1, text
        # `view WHERE (c)` with c one word (false, a BOOLEAN column) is, to Spark's parser, the
        # view aliased WHERE with a column list (c): the leading true keeps it a WHERE clause
        text = text.replace(f"`{mark}`", mark).replace(mark, f"true AND ({where})")
    return text


#: the Spark function TABLESAMPLE (BUCKET x OUT OF y ON c) filters with: f(y, c, ...) is the
#: row's bucket of y by Hive's hash (exec/query.py registers it, storage/bucket_files.py computes it)
SAMPLE_FUNCTION = "hivepark_hive_bucket"


def sample_condition(sample: BucketSample) -> str:
    """The Spark SQL condition keeping a TABLESAMPLE's rows: Hive's ``(hash(c) & INT_MAX) % y == x - 1``,
    a Spark expression where Spark's hash gives Hive's, else the Python workers' function.

    >>> sample_condition(BucketSample(2, 4, ("k", "v"), ("int", "string")))
    'hivepark_hive_bucket(4, `k`, `v`) = 1'
    >>> sample_condition(BucketSample(1, 2, ("c",), ("char",)))
    'hivepark_hive_bucket(2, rtrim(`c`)) = 0'
    >>> sample_condition(BucketSample(2, 4, ("b",), ("boolean",)))
    'CAST(((CASE WHEN `b` THEN 1 ELSE 0 END & 4294967295) & 2147483647) % 4 AS INT) = 1'
    """
    columns = [f"`{c}`" for c in sample.columns]
    bucket = spark_bucket_sql(columns, sample.types, sample.denominator) if sample.types else None
    if bucket is None:
        inputs = [hashed_input(c, t) for c, t in zip(columns, sample.types)] if sample.types else columns
        bucket = f"{SAMPLE_FUNCTION}({sample.denominator}, {', '.join(inputs)})"
    return f"{bucket} = {sample.numerator - 1}"


def _add_broadcast_hint(site: ScanSite) -> None:
    select = site.node.find_ancestor(exp.Select)
    if select is None:
        return
    hint = select.args.get("hint") or exp.Hint(expressions=[])
    hint.append("expressions", exp.Anonymous(this="BROADCAST",
                                             expressions=[exp.to_identifier(site.alias)]))
    select.set("hint", hint)


_STRICT_TAIL = (" are disabled for safety reasons. If you know what you are doing, please set {key} to false and "
                "make sure that hive.mapred.mode is not set to 'strict' to proceed. Note that you may get errors "
                "or incorrect results if you make a mistake while using some of the unsafe features.")


def check_strict(tree: Any, orderby_no_limit: bool, cartesian: bool) -> None:
    """Hive's strict-mode checks on a query's text (``hive.mapred.mode=strict``, or each
    check's own ``hive.strict.checks.*`` setting): an ORDER BY without LIMIT (10051), a join
    with no condition linking its sides (10052). Raises SemanticError with Hive's text."""
    if not isinstance(tree, exp.Expression):
        return
    for node in tree.find_all(exp.Select, exp.Union):
        if orderby_no_limit and node.args.get("order") is not None and node.args.get("limit") is None:
            raise SemanticError("Order by-s without limit" + _STRICT_TAIL.format(key="hive.strict.checks.orderby."
                                                                                     "no.limit"), code=10051)
        if cartesian and isinstance(node, exp.Select):
            for join in node.args.get("joins") or []:
                if _cartesian(node, join):
                    raise SemanticError("Cartesian products" + _STRICT_TAIL.format(
                        key="hive.strict.checks.cartesian.product"), code=10052)


def _cartesian(select: exp.Select, join: exp.Join) -> bool:
    """A join with no ON/USING whose right side no WHERE equality links to another source."""
    on = join.args.get("on")
    if (on is not None and not (isinstance(on, exp.Boolean) and on.this)) or join.args.get("using"):
        return False
    alias = join.this.alias_or_name.lower()
    where = select.args.get("where")
    for eq in (where.find_all(exp.EQ) if where is not None else []):
        sides = [c.table.lower() for c in (eq.this, eq.expression) if isinstance(c, exp.Column) and c.table]
        if len(sides) == 2 and alias in sides and sides[0] != sides[1]:
            return False
    return True
