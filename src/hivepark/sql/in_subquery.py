"""``x IN (SELECT c FROM t WHERE ...)`` as a LEFT SEMI JOIN, so that map-join partition pruning
sees it as Hive's dynamic partition pruning does (``dynamic_partition_pruning.q``:
``WHERE ds IN (SELECT ds FROM srcpart_date WHERE ...)``; Hive and Spark both plan such an IN
as a semi join).

Only where the two are the same query: the IN is a top-level conjunct of a SELECT's WHERE
(under no OR or NOT, where NULL and false differ), its subquery reads one warehouse table and
selects one of its columns, with no GROUP BY, HAVING, LIMIT, window or nested subquery, and
every column of its WHERE is that table's (it is not correlated); the outer column is a
warehouse table's column, or a subquery's or a view's passing one through, of the same type (so that
the equality compares as the IN did).
Then ``x IN (SELECT t.c FROM t WHERE p)`` keeps exactly the rows ``LEFT SEMI JOIN t ON x = t.c
AND p`` keeps: each outer row once when some row of t has ``c = x`` and ``p`` (NULL matches
nothing in either)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from hivepark.catalog.models import Table
from hivepark.expr.from_sqlglot import maybe_nondeterministic

TableFind = Callable[[str | None, str], Table | None]
_INTEGRAL = {"tinyint", "smallint", "int", "bigint"}


def as_semi_joins(tree: exp.Expression, find: TableFind) -> exp.Expression:
    """``tree`` with each such IN (:mod:`module doc <hivepark.sql.in_subquery>`) made a LEFT SEMI
    JOIN of its SELECT; ``tree`` itself (not copied) when there is none."""
    candidates = [
        (select, cond)
        for select in tree.find_all(exp.Select)
        for cond in _top_conjuncts(select)
        if isinstance(cond, exp.In) and isinstance(cond.args.get("query"), exp.Subquery)
    ]
    if not candidates:
        return tree
    tree = tree.copy()
    done = 0
    for select in list(tree.find_all(exp.Select)):
        for cond in _top_conjuncts(select):
            if isinstance(cond, exp.In) and isinstance(cond.args.get("query"), exp.Subquery):
                join = _semi_join(select, cond, find, done)
                if join is not None:
                    cond.replace(exp.true())
                    select.append("joins", join)
                    done += 1
    return tree


def _top_conjuncts(select: exp.Select) -> list[exp.Expression]:
    where = select.args.get("where")
    if where is None:
        return []
    out: list[exp.Expression] = []
    stack = [where.this]
    while stack:
        e = stack.pop()
        while isinstance(e, exp.Paren):
            e = e.this
        if isinstance(e, exp.And):
            stack += [e.this, e.expression]
        else:
            out.append(e)
    return out


def _sources(select: exp.Select) -> dict[str, exp.Expression] | None:
    """The SELECT's FROM and joined sources by alias (lower case); None for a LATERAL VIEW."""
    if select.args.get("laterals"):
        return None
    src = select.args.get("from_") or select.args.get("from")
    if src is None:
        return None
    nodes = [src.this] + [j.this for j in select.args.get("joins") or []]
    out: dict[str, exp.Expression] = {}
    for node in nodes:
        name = node.alias_or_name if isinstance(node, (exp.Table, exp.Subquery)) else ""
        if not name:
            return None
        out[name.lower()] = node
    return out


def _table(node: exp.Expression, find: TableFind) -> Table | None:
    if (
        not isinstance(node, exp.Table)
        or not isinstance(node.this, exp.Identifier)
        or node.args.get("version") is not None
        or node.args.get("sample") is not None
        or node.args.get("catalog") is not None
    ):
        return None
    db = node.args.get("db")
    try:
        return find(db.name if db is not None else None, node.name)
    except Exception:  # noqa: BLE001 - not a warehouse table that can be read: keep the IN
        return None


def _key_type(node: exp.Expression, column: str, find: TableFind, depth: int = 0) -> str | None:
    """The type of column ``column`` of source ``node``: a warehouse table's, or a subquery's (a view
    is read as one) that passes a warehouse table's column through unchanged, at any depth; None for
    anything else."""
    if not isinstance(node, exp.Subquery):
        t = _table(node, find)
        return _type_of(t, column) if t is not None else None
    select = node.this
    if not isinstance(select, exp.Select) or depth > 32:
        return None
    proj = next((p for p in select.selects if p.alias_or_name.lower() == column.lower()), None)
    inner = proj.this if isinstance(proj, exp.Alias) else proj
    if proj is None and any(isinstance(p, exp.Star) for p in select.selects):
        inner = exp.column(column)
    sources = _sources(select)
    if not isinstance(inner, exp.Column) or not isinstance(inner.this, exp.Identifier) or sources is None:
        return None
    owner = inner.table.lower() if inner.table else (next(iter(sources)) if len(sources) == 1 else None)
    if owner is None or owner not in sources:
        return None
    return _key_type(sources[owner], inner.name, find, depth + 1)


def _type_of(table: Table, column: str) -> str | None:
    return next((c.type.lower() for c in table.all_columns if c.name.lower() == column.lower()), None)


def _same_comparison(a: str, b: str) -> bool:
    return a == b or (a in _INTEGRAL and b in _INTEGRAL)


def _semi_join(select: exp.Select, cond: exp.In, find: TableFind, n: int) -> exp.Join | None:
    outer = _sources(select)
    inner = cond.args["query"].this
    if (
        outer is None
        or not isinstance(inner, exp.Select)
        or any(cond.args.get(k) for k in ("expressions", "unnest", "field"))
    ):
        return None
    if any(
        inner.args.get(k)
        for k in (
            "joins",
            "laterals",
            "group",
            "having",
            "limit",
            "offset",
            "order",
            "qualify",
            "windows",
            "with",
            "distribute",
            "sort",
            "cluster",
        )
    ):
        return None
    if inner.find(exp.Window, exp.AggFunc) is not None or (
        inner.args.get("where") is not None and inner.args["where"].find(exp.Subquery) is not None
    ):
        return None
    if maybe_nondeterministic(inner):  # Spark refuses it in a join condition, and it would run per pair
        return None
    src = inner.args.get("from_") or inner.args.get("from")
    if src is None or len(inner.expressions) != 1 or not isinstance(inner.expressions[0], exp.Column):
        return None
    t = _table(src.this, find)
    if t is None:
        return None
    inner_name = src.this.alias_or_name.lower()
    picked = inner.expressions[0]
    # the outer key: a warehouse table's column, qualified (or the only source's)
    key = cond.this
    if not isinstance(key, exp.Column) or not isinstance(key.this, exp.Identifier):
        return None
    owner = key.table.lower() if key.table else (next(iter(outer)) if len(outer) == 1 else None)
    if owner is None or owner not in outer:
        return None
    outer_type = _key_type(outer[owner], key.name, find)
    if outer_type is None:
        return None
    # the joined table keeps its name unless that name means something else in the query: a source
    # of this SELECT, or a qualifier outside the subquery (``WHERE EXISTS (SELECT 1 FROM s WHERE
    # s.ds <> d.ds AND s.ds IN (SELECT ds FROM days d))``: that ``d`` is the outer query's, which
    # the joined ``days d`` would have taken)
    own = {id(c) for c in inner.find_all(exp.Column)}
    named = inner_name in outer or any(
        c.table.lower() == inner_name for c in select.root().find_all(exp.Column)
        if c.table and id(c) not in own)
    alias = f"__hivepark_in{n}" if named else inner_name
    # every column of the subquery's SELECT and WHERE is its table's: qualify them with the alias
    columns = [picked, *(inner.args["where"].find_all(exp.Column) if inner.args.get("where") else [])]
    for col in columns:
        if (
            not isinstance(col.this, exp.Identifier)
            or (col.table and col.table.lower() != inner_name)
            or col.args.get("db")
            or _type_of(t, col.name) is None
        ):
            return None
    key_type, value_type = outer_type, _type_of(t, picked.name)
    if key_type is None or value_type is None or not _same_comparison(key_type, value_type):
        return None
    for col in columns:
        col.set("table", exp.to_identifier(alias))
    outer_key = key.copy()
    if not key.table:
        outer_key.set("table", exp.to_identifier(owner))
    on: exp.Expression = exp.EQ(this=outer_key, expression=picked.copy())
    if inner.args.get("where") is not None:
        on = exp.and_(on, exp.Paren(this=inner.args["where"].this.copy()))
    table = src.this.copy()
    table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return exp.Join(this=table, side="LEFT", kind="SEMI", on=on)
