"""Views on the syntax tree: a reference to a view replaced by the view's query, the outer
query's filters on the view's columns pushed into it, and the texts a view keeps.

A view keeps two texts, as Hive's metastore does: the query as written (SHOW CREATE TABLE,
DESCRIBE FORMATTED) and the "expanded" one that is read: its tables named with their
databases (a view reads the same tables from any current database) and its columns selected
by name under the view's column names (a column added to a table later does not change the
view's columns, as in Hive)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from sqlglot import exp

from hivepark.catalog.models import VIEW_EXPANDED_TEXT, Table
from hivepark.errors import SemanticError
from hivepark.sql import statements as s
from hivepark.sql.dialect import HiveQL
from hivepark.sql.parser import parse_one

#: views read through views, at most this deep (a loop is refused before this)
MAX_DEPTH = 32
_INNER = "__hivepark_view"  # the alias of the view's own query inside its expanded text

ViewFind = Callable[[str | None, str], Table | None]
"""``find(db, name)``: the view a reference names (``db`` None when the query gives none),
None for anything else (a table, a Spark view, a missing name)."""


ColumnTyper = Callable[[str | None, str, str], str | None]
"""``typer(db, table, column)``: the Hive type of a warehouse table's column, None when unknown.
It decides whether a filter may go into each branch of a UNION: only where every branch's
column has the same type (a branch of another type would compare the filter's literal as that
type, and drop rows the union's own type keeps)."""


def expand(tree: exp.Expression, find: ViewFind, typer: ColumnTyper | None = None) -> exp.Expression:
    """``tree`` with each reference to a view replaced by the view's query (views within it
    too), aliased as the reference was, and the outer filters on a view's, a subquery's or a
    CTE's columns pushed into its query (:func:`push_into_derived`); ``tree`` itself when it
    names no view and nothing is pushed."""
    if any(_view_of(t, find, frozenset()) for t in tree.find_all(exp.Table)):
        tree = push_into_derived(tree.copy(), copy=False, typer=typer)
        _expand_in(tree, find, (), typer)
        return tree
    return push_into_derived(tree, typer=typer)


def push_into_derived(tree: exp.Expression, copy: bool = True, typer: ColumnTyper | None = None) -> exp.Expression:
    """The WHERE conjuncts on the columns of a subquery in FROM (or an inner join), or of a CTE
    read once, ANDed into its query as well, as into a view's (:func:`_push_filters`), outer
    queries first so that a filter goes down through several: its tables' partitions are
    pruned by hivepark's plan (and EXPLAIN and strict mode see it), as Hive's predicate pushdown
    does. ``tree`` itself (not copied) when nothing can be pushed."""
    having = [q for q in tree.find_all(exp.Select) if _having_filters(q)]
    if having:  # HAVING conjuncts on grouping columns join the WHERE first: they may go further down
        tree = tree.copy() if copy else tree
        copy = False
        for q in tree.find_all(exp.Select):
            for cond in _having_filters(q):
                q.where(cond.copy(), copy=False)
    shared = _shared_ctes(tree)
    if shared:  # a deterministic CTE read in several places: each reads its own copy, filtered by its own WHERE
        tree = tree.copy() if copy else tree
        copy = False
        shared = _shared_ctes(tree)  # (the copy's)
        while shared:  # (a CTE read once by one read twice is read twice once that one is inlined)
            _inline_ctes(tree, shared)
            shared = _shared_ctes(tree)
    derived = [q for q in tree.find_all(exp.Subquery) if isinstance(q.parent, (exp.From, exp.Join))
               and q.alias and _outer_where(q) is not None]
    ctes = _single_use_ctes(tree)
    if not derived and not ctes:
        return tree
    if copy:
        return push_into_derived(tree.copy(), copy=False, typer=typer)
    for node in list(tree.find_all(exp.Subquery, exp.Table)):  # pre-order: outer queries first
        if isinstance(node, exp.Subquery) and isinstance(node.parent, (exp.From, exp.Join)) and node.alias:
            _push_filters(node, _same_types(_query_columns(node.this, _outer_names(node), _named(node)), typer))
        elif isinstance(node, exp.Table) and node.args.get("db") is None and node.name.lower() in ctes \
                and not _in_subquery_expression(node):
            # (a CTE read inside EXISTS or IN (...) may be filtered by the outer query's columns,
            # which its body, at the top of the statement, cannot see)
            cte = ctes[node.name.lower()]
            _push_filters(node, _same_types(_query_columns(cte.this, _outer_names(node), _named(node) or _named(cte)),
                                            typer))
    return tree


def _having_filters(select: exp.Select) -> list[exp.Expression]:
    """The HAVING conjuncts of a grouped ``select`` that may be ANDed into its WHERE as well:
    those of columns, literals and comparisons on its plain grouping columns alone (``GROUP BY
    ds HAVING ds = 'x'``). Such a conjunct keeps or drops whole groups, so filtering the rows
    first gives the same groups and aggregates (Hive's predicate pushdown and Spark's optimizer
    push it below the aggregation; then it prunes partitions, and strict mode sees it). Not
    with ROLLUP, CUBE or GROUPING SETS (a NULL there stands for all values), a LATERAL VIEW, or
    a column the SELECT list names as something else (``upper(ds) AS ds``: HAVING reads the
    alias)."""
    having, group = select.args.get("having"), select.args.get("group")
    if having is None or group is None or select.args.get("laterals"):
        return []
    keys = _grouping_columns(select)
    if not keys:
        return []
    outputs: dict[str, list[exp.Expression]] = {}
    for p in select.expressions:
        outputs.setdefault(p.alias_or_name.lower(), []).append(p.this if isinstance(p, exp.Alias) else p)
    out = []
    cond = having.this
    for c in cond.flatten() if isinstance(cond, exp.And) else [cond]:
        cols = list(c.find_all(exp.Column))
        if not cols or not all(isinstance(n, _PUSHABLE) for n in c.walk()):
            continue
        if all(any(_same_column(col, k) for k in keys) and all(
                isinstance(o, exp.Column) and _same_column(o, col) for o in outputs.get(col.name.lower(), []))
               for col in cols):
            out.append(c)
    return out


def _in_subquery_expression(node: exp.Expression) -> bool:
    """Whether ``node`` lies in a subquery used as a value or condition (EXISTS, IN, a scalar)."""
    parent = node.parent
    while parent is not None:  # IN (...) and a scalar hold a Subquery; EXISTS its query itself
        if isinstance(parent, exp.Exists) or (
                isinstance(parent, exp.Subquery) and not isinstance(parent.parent, (exp.From, exp.Join))):
            return True
        parent = parent.parent
    return False


def _same_types(targets: list[tuple[exp.Select, dict[str, exp.Column]]], typer: ColumnTyper | None
                ) -> list[tuple[exp.Select, dict[str, exp.Column]]]:
    """``targets`` with, where there are several (a UNION's branches), only the columns whose
    type is known and the same in every branch (none without ``typer``)."""
    if len(targets) <= 1:
        return targets
    keep = set.intersection(*(set(cols) for _, cols in targets))
    for name in list(keep):
        types = {_branch_type(select, cols[name], typer) if typer is not None else None for select, cols in targets}
        if None in types or len(types) != 1:
            keep.discard(name)
    return [(select, {n: c for n, c in cols.items() if n in keep}) for select, cols in targets]


def _branch_type(select: exp.Select, col: exp.Column, typer: ColumnTyper) -> str | None:
    """The Hive type of ``col`` as ``select`` reads it from its one warehouse table of that name."""
    source = select.args.get("from_")
    tables = [t for t in [source.this if source is not None else None,
                          *(j.this for j in select.args.get("joins") or [])] if isinstance(t, exp.Table)]
    if col.table:
        tables = [t for t in tables if t.alias_or_name.lower() == col.table.lower()]
    found = set()
    for t in tables:
        db = t.args.get("db")
        typ = typer(db.name if db is not None else None, t.name, col.name.lower())
        if typ is not None:
            found.add(typ.lower())
    return found.pop() if len(found) == 1 else None


def _outer_where(node: exp.Expression) -> exp.Expression | None:
    holder = node.parent
    select = holder.parent if isinstance(holder, (exp.From, exp.Join)) else None
    return select.args.get("where") if isinstance(select, exp.Select) else None


def _outer_names(node: exp.Expression) -> set[str]:
    where = _outer_where(node)
    return {c.name.lower() for c in where.find_all(exp.Column)} if where is not None else set()


#: nodes that make a CTE's rows differ from one reading to the next (or may: a function
#: sqlglot does not know, a user's UDF), so it is read once, as Spark reads it, and not copied
_NONDETERMINISTIC = (exp.Rand, exp.Randn, exp.Uuid, exp.Shuffle, exp.Anonymous, exp.TableSample)


def _cte_references(tree: exp.Expression) -> dict[str, list[exp.Table]]:
    """Each name the statement's CTEs define once, with the tables that read it."""
    defined = [c.alias_or_name.lower() for c in tree.find_all(exp.CTE)]
    refs: dict[str, list[exp.Table]] = {n: [] for n in defined if defined.count(n) == 1}
    for t in tree.find_all(exp.Table):
        if t.args.get("db") is None and isinstance(t.this, exp.Identifier) and t.name.lower() in refs:
            refs[t.name.lower()].append(t)
    return refs


def _shared_ctes(tree: exp.Expression) -> list[exp.CTE]:
    """The CTEs read more than once, each time in a FROM or a JOIN of a query that filters
    its rows (WHERE), whose query is deterministic and names its columns itself: Spark reads
    such a CTE in each place as a subquery of its own (InlineCTE), and so does Hive
    (``hive.optimize.cte.materialize.threshold`` = -1), so each reference may take its own
    filters (:func:`_inline_ctes`), as a CTE read once does."""
    if not any(True for _ in tree.find_all(exp.CTE)):  # most queries: no walk of their tables
        return []
    refs = _cte_references(tree)
    out = []
    for cte in tree.find_all(exp.CTE):
        uses = refs.get(cte.alias_or_name.lower(), [])
        if len(uses) < 2 or not isinstance(cte.this, (exp.Select, exp.Union)) or cte.args["alias"].columns:
            continue
        if any(not isinstance(t.parent, (exp.From, exp.Join)) or t.args.get("sample") is not None
               or _in_subquery_expression(t) for t in uses) or not any(_outer_where(t) is not None for t in uses):
            continue
        if any(isinstance(n, _NONDETERMINISTIC) for n in cte.this.walk()):
            continue
        out.append(cte)
    return out


def _inline_ctes(tree: exp.Expression, ctes: list[exp.CTE]) -> None:
    """Each reference to ``ctes`` replaced by a copy of its query, aliased as the reference
    was (or by the CTE's name), in the order they are defined (a later one's query holds the
    copies of an earlier one it reads); the CTEs dropped from their WITH."""
    for cte in ctes:
        name = cte.alias_or_name.lower()
        for t in _cte_references(tree).get(name, []):
            alias = t.args.get("alias")
            t.replace(exp.Subquery(this=cte.this.copy(),
                                   alias=alias.copy() if alias is not None else exp.TableAlias(
                                       this=exp.to_identifier(cte.alias_or_name))))
        holder = cte.parent
        cte.pop()
        if isinstance(holder, exp.With) and not holder.expressions:
            holder.pop()


def _single_use_ctes(tree: exp.Expression) -> dict[str, exp.CTE]:
    """The CTEs read by exactly one reference (a filter pushed into one read by two would
    change the other's rows), their names defined once in the statement."""
    defined = list(tree.find_all(exp.CTE))
    if not defined:  # every query passes here: no walk of its tables when it has no WITH
        return {}
    names = [c.alias_or_name.lower() for c in defined]
    uses: dict[str, int] = {}
    for t in tree.find_all(exp.Table):
        if t.args.get("db") is None and isinstance(t.this, exp.Identifier):
            uses[t.name.lower()] = uses.get(t.name.lower(), 0) + 1
    return {n: c for n, c in zip(names, defined) if names.count(n) == 1 and uses.get(n) == 1
            and isinstance(c.this, (exp.Select, exp.Union))}


def _named(node: exp.Expression) -> list[str] | None:
    """The column names an alias gives, ``(SELECT ...) z(a, b)``, ``WITH c(a, b) AS ...``; None without."""
    alias = node.args.get("alias")
    return [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) and alias.columns else None


def _query_columns(query: exp.Expression, names_used: set[str], named: list[str] | None = None
                   ) -> list[tuple[exp.Select, dict[str, exp.Column]]]:
    """Where the outer filters on a subquery's (or CTE's) columns may go, as
    :func:`_view_columns` says for a view: each SELECT (each branch of a UNION [ALL]) with, for
    each output that is a plain column of it, that column as it reads it (``SELECT * FROM t``:
    each of ``names_used``, the names the outer WHERE reads, as itself). ``named``: the names
    its alias gives its columns, by position (``z(a, b)``), in place of its own."""
    branches = _branches(query) if isinstance(query, exp.Union) else [query]
    if not all(isinstance(b, exp.Select) for b in branches):
        return []
    first = branches[0]
    assert isinstance(first, exp.Select)
    names = named if named is not None else _output_names(first)
    targets: list[tuple[exp.Select, dict[str, exp.Column]]] = []
    for branch in branches:
        assert isinstance(branch, exp.Select)
        if any(isinstance(p, exp.Star) for p in branch.expressions):  # SELECT * FROM t: its names
            if named is None and len(branches) == 1 and len(branch.expressions) == 1 \
                    and not branch.args.get("joins") \
                    and not branch.args.get("group") and _plain_outputs(branch) is not None:
                targets.append((branch, {n: exp.column(n, quoted=True) for n in names_used}))
            continue
        outputs = _plain_outputs(branch)
        if outputs is not None and len(outputs) == len(names):
            targets.append((branch, {n: c for n, c in zip(names, outputs) if c is not None}))
    return targets


def _expand_in(tree: exp.Expression, find: ViewFind, stack: tuple[str, ...], typer: ColumnTyper | None = None) -> None:
    ctes = _cte_names(tree)
    for node in list(tree.find_all(exp.Table)):
        view = _view_of(node, find, ctes)
        if view is None:
            continue
        if view.qualified_name in stack or len(stack) >= MAX_DEPTH:
            chain = " -> ".join((*stack, view.qualified_name))
            raise SemanticError(f"View {stack[0]} reads itself through {chain}: ALTER VIEW one of them so "
                                "that it no longer reads the other")
        body = _parsed(view.properties[VIEW_EXPANDED_TEXT]).copy()
        _push_filters(node, _same_types(_view_columns(body, _named(node)), typer))
        # then the view's own and the pushed filters into its subqueries and CTEs
        body = push_into_derived(body, copy=False, typer=typer)
        _expand_in(body, find, (*stack, view.qualified_name), typer)
        alias = node.args.get("alias")
        sample = node.args.get("sample")  # FROM v TABLESAMPLE (...): Spark samples the view's rows
        node.replace(exp.Subquery(this=body, alias=alias.copy() if alias is not None else exp.TableAlias(
            this=exp.to_identifier(node.name)), sample=sample.copy() if sample is not None else None))


def dependencies(tree: exp.Expression, find: ViewFind
                 ) -> dict[tuple[str | None, str], tuple[Table | None, list[str]]]:
    """What a query reads, directly or through views (EXPLAIN DEPENDENCY's input tables):
    each view and table reference, (db, name) (db None where the query gives none), in the
    order met, outer views before the views and tables they read, with the view it names (None
    for a table) and the views that read it (qualified names; empty for what the query names
    itself). CTEs are not references."""
    found: dict[tuple[str | None, str], tuple[Table | None, list[str]]] = {}
    level: list[tuple[exp.Expression, str | None]] = [(tree, None)]
    for _ in range(MAX_DEPTH):
        inner: list[tuple[exp.Expression, str | None]] = []
        for node_tree, parent in level:
            ctes = _cte_names(node_tree)
            for node in node_tree.find_all(exp.Table):
                if not isinstance(node.this, exp.Identifier) or node.args.get("catalog") is not None \
                        or (node.args.get("db") is None and node.name.lower() in ctes):
                    continue
                view = find(node.args["db"].name if node.args.get("db") is not None else None, node.name)
                key = (view.db, view.name) if view is not None else (
                    node.args["db"].name.lower() if node.args.get("db") is not None else None, node.name.lower())
                parents = found.setdefault(key, (view, []))[1]
                if parent is not None and parent not in parents:
                    parents.append(parent)
                if view is not None and not any(p == view.qualified_name for _, p in inner):
                    inner.append((_parsed(view.properties[VIEW_EXPANDED_TEXT]), view.qualified_name))
        if not inner:
            break
        level = inner
    return found


def view_dependencies(view: Table, find: ViewFind
                      ) -> dict[tuple[str | None, str], tuple[Table | None, list[str]]]:
    """:func:`dependencies` of what ``view`` itself reads (its stored query)."""
    return dependencies(_parsed(view.properties[VIEW_EXPANDED_TEXT]), find)


def _view_of(node: exp.Table, find: ViewFind, ctes: frozenset[str]) -> Table | None:
    """The view ``node`` names, None for a table, a CTE, a Spark view or a table function."""
    if not isinstance(node.this, exp.Identifier) or node.args.get("catalog") is not None:
        return None
    db = node.args.get("db")
    if db is None and node.name.lower() in ctes:
        return None
    return find(db.name if db is not None else None, node.name)


def _cte_names(tree: exp.Expression) -> frozenset[str]:
    return frozenset(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))


# What a filter pushed into a view may be made of: columns, literals and the operators static
# pruning understands (a function call might not be deterministic: it stays outside)
_PUSHABLE = (exp.Column, exp.Identifier, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.And, exp.Or,
             exp.Not, exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.In, exp.Between, exp.Is,
             exp.Like, exp.Tuple)


def _push_filters(node: exp.Expression, targets: list[tuple[exp.Select, dict[str, exp.Column]]]) -> None:
    """The outer query's WHERE conjuncts on the columns of a view (or a subquery, a CTE),
    ANDed into ``targets``, its own query's SELECTs, as well, so that they prune its tables'
    partitions (and strict mode sees them), as Hive's predicate pushdown does. Only where that
    cannot change a row: the view is read in FROM or an inner join and no RIGHT or FULL join
    may fill it with NULLs, its query has no LIMIT (nor a window not partitioned by the filter's columns),
    each column the filter reads is a
    column of the view's query (a grouping column of a grouped one: :func:`_view_columns`), and
    the filter holds only columns, literals and comparisons, and the reference has no TABLESAMPLE
    of its own (``(SELECT ...) TABLESAMPLE (2 ROWS) s``, a sampled view or CTE: the sample is taken
    before the outer WHERE, so a filter below it would change which rows are sampled).
    The outer WHERE keeps the conjunct."""
    if node.args.get("sample") is not None:
        return
    holder = node.parent
    select = holder.parent if isinstance(holder, (exp.From, exp.Join)) else None
    if not isinstance(select, exp.Select) or select.args.get("where") is None:
        return
    if isinstance(holder, exp.Join) and (holder.side or (holder.kind or "").upper() not in ("", "INNER")):
        return
    if any(j.side.upper() in ("RIGHT", "FULL") for j in select.args.get("joins") or []):
        return  # the view may be on a side an outer join fills with NULLs
    if not targets:
        return
    alias = node.alias_or_name.lower()
    alone = not select.args.get("joins")
    # a LATERAL VIEW's columns are the outer query's, not the view's (its default names, `col`,
    # `pos`, `key`, ... when it gives none: then no unqualified column is known to be the view's)
    made: set[str] | None = set()
    for lateral in select.args.get("laterals") or []:
        lateral_alias = lateral.args.get("alias")
        if made is None or lateral_alias is None or not lateral_alias.columns:
            made = None
        else:
            made |= {c.name.lower() for c in lateral_alias.columns}
    where = select.args["where"].this
    for cond in where.flatten() if isinstance(where, exp.And) else [where]:
        cols = list(cond.find_all(exp.Column))
        if not cols or not all(isinstance(n, _PUSHABLE) for n in cond.walk()):
            continue
        if not all((c.table.lower() == alias or not c.table and alone and made is not None
                    and c.name.lower() not in made) and not c.args.get("db") for c in cols):
            continue
        for inner, columns in targets:  # a UNION's branches each take what they can
            if all(c.name.lower() in columns for c in cols):
                # (transform, not replace: a condition that is a column alone, `WHERE x.flag`, is the root)
                pushed = cond.transform(
                    lambda n, cols=columns: cols[n.name.lower()].copy() if isinstance(n, exp.Column) else n)
                inner.where(pushed, copy=False)


def _view_columns(body: exp.Expression, named: list[str] | None = None
                  ) -> list[tuple[exp.Select, dict[str, exp.Column]]]:
    """Where the outer filters may go: each SELECT of the view's own query (inside its
    expanded text; each branch of a UNION [ALL], whose rows are the union of theirs) with, for
    each view column that is a plain column of it, that column as it reads it. A grouped
    query (GROUP BY, without ROLLUP, CUBE or GROUPING SETS) takes filters on its grouping
    columns alone: such a filter keeps or drops whole groups, so it gives the same groups and
    aggregates before the grouping as after it (Hive's predicate pushdown does the same).
    DISTINCT keeps whole rows of the view's columns, so a filter on them goes in too.
    ``named``: the names the reference's alias gives the view's columns, by position
    (``FROM v x(a, b)``), in place of the view's own."""
    if named is not None:
        own = [p.alias_or_name.lower() for p in body.expressions] if isinstance(body, exp.Select) else []
        if len(own) != len(named):
            return []
        renamed = dict(zip(own, named))
        return [(select, {renamed[n]: c for n, c in cols.items() if n in renamed})
                for select, cols in _view_columns(body)]
    source = body.args.get("from_") if isinstance(body, exp.Select) else None
    inner = source.this.this if source is not None and isinstance(source.this, exp.Subquery) else None
    wanted = {p.this.name.lower(): p.alias.lower() for p in body.expressions if isinstance(p, exp.Alias)}
    if isinstance(inner, exp.Select):
        outputs = _plain_outputs(inner)
        if outputs is None:
            return []
        if any(isinstance(p, exp.Star) for p in inner.expressions):  # SELECT * FROM t
            alone = len(inner.expressions) == 1 and not inner.args.get("joins") and not inner.args.get("group")
            return [(inner, {n: exp.column(o, quoted=True) for o, n in wanted.items()})] if alone else []
        return [(inner, {wanted[o]: c for o, c in zip(_output_names(inner), outputs)
                         if c is not None and o in wanted})]
    branches = _branches(inner) if isinstance(inner, exp.Union) else []
    if not branches or not all(isinstance(b, exp.Select) for b in branches):  # a LIMIT on the union: one
        return []
    names = _output_names(branches[0])  # a union's columns are named by its first branch
    targets = []
    for branch in branches:
        outputs = _plain_outputs(branch)
        if outputs is not None and len(outputs) == len(names):
            targets.append((branch, {wanted[o]: c for o, c in zip(names, outputs) if c is not None and o in wanted}))
    return targets


def _branches(node: exp.Expression) -> list[exp.Expression]:
    """A UNION's SELECTs; a union with its own LIMIT, OFFSET or ORDER BY is one branch."""
    if isinstance(node, exp.Union) and not any(node.args.get(k) for k in ("limit", "offset", "order")):
        return [*_branches(node.this), *_branches(node.expression)]
    return [node]


def _output_names(select: exp.Select) -> list[str]:
    return [p.alias_or_name.lower() for p in select.expressions]


def _plain_outputs(select: exp.Select) -> list[exp.Column | None] | None:
    """For each output of ``select``, the column it is when a filter on it may go into the
    select's WHERE (a plain column; a grouping column of a grouped select), else None; None
    for all when nothing may go in (LIMIT, a window, an aggregate of all rows...)."""
    if any(select.args.get(k) for k in ("limit", "offset", "qualify", "windows", "laterals")) or any(
            isinstance(e, (exp.Explode, exp.Posexplode)) for p in select.expressions for e in p.walk()):
        return None
    keys = _grouping_columns(select)
    if keys is None:
        return None
    windows = _window_partitions(select)
    if windows is None:
        return None
    grouped = select.args.get("group") is not None
    outputs: list[exp.Column | None] = []
    for p in select.expressions:
        col = p.this if isinstance(p, exp.Alias) else p
        plain = isinstance(col, exp.Column) and not isinstance(col.this, exp.Star)
        # a column that is not a grouping column has no single value within a group; one that
        # is not in every window's PARTITION BY would take rows out of a window's frame
        outputs.append(col if plain and (not grouped or any(_same_column(col, k) for k in keys))
                       and all(any(_same_column(col, k) for k in w) for w in windows) else None)
    return outputs


def _window_partitions(select: exp.Select) -> list[list[exp.Column]] | None:
    """The plain PARTITION BY columns of each window function of ``select`` ([] without
    windows); None when a window has none (it reads all rows) or is named (``OVER w``). A
    filter on columns every window partitions by keeps or drops whole window partitions, so
    it gives the same values before the windows as after them (Spark's optimizer and Hive's
    predicate pushdown push it below them too)."""
    out = []
    for p in select.expressions:
        for w in p.find_all(exp.Window):
            parts = w.args.get("partition_by") or []
            cols = [c for c in parts if isinstance(c, exp.Column)]
            if not cols:
                return None
            out.append(cols)
    return out


def _grouping_columns(select: exp.Select) -> list[exp.Column] | None:
    """The plain columns a query groups by ([] when it does not group), None when a filter
    may not go in whatever it reads: an aggregate without GROUP BY (one row from all of
    them), ROLLUP, CUBE or GROUPING SETS (rows whose grouping column is NULL stand for all
    values)."""
    group = select.args.get("group")
    if group is None:
        aggregated = any(isinstance(e, exp.AggFunc) and not (isinstance(e.parent, exp.Window) and e.arg_key == "this")
                         for p in select.expressions for e in p.walk())  # sum(x) OVER (...) is a window's
        return None if aggregated or select.args.get("having") else []
    if any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")) or any(
            isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)) for g in group.expressions for e in g.walk()):
        return None
    return [g for g in group.expressions if isinstance(g, exp.Column)]


def _same_column(a: exp.Column, b: exp.Column) -> bool:
    return a.name.lower() == b.name.lower() and (not a.table or not b.table or a.table.lower() == b.table.lower())


def qualified(tree: exp.Expression, db: str, is_table: Callable[[str], bool],
              is_spark_view: Callable[[str], bool]) -> exp.Expression:
    """A view's query with each table it reads from the current database ``db`` named with
    it. A Spark temporary view is refused: it ends with its session, the view would not."""
    tree = tree.copy()
    ctes = _cte_names(tree)
    for node in tree.find_all(exp.Table):
        if not isinstance(node.this, exp.Identifier) or node.args.get("db") is not None \
                or node.args.get("catalog") is not None or node.name.lower() in ctes:
            continue
        if is_table(node.name.lower()):
            node.set("db", exp.to_identifier(db))
        elif is_spark_view(node.name):
            raise SemanticError(f"A view cannot read the Spark temporary view {node.name}: a temporary view "
                                "ends with its session and the view would not. Keep its rows in a table "
                                "(CREATE TABLE ... AS SELECT) and read that.")
    return tree


def check_no_loop(query: exp.Expression, find: ViewFind, name: str) -> None:
    """Refuses a view ``name`` whose query reads it (ALTER VIEW a AS ... FROM b, b reading a)."""
    seen: set[str] = set()
    todo = [query]
    while todo:
        tree = todo.pop()
        ctes = _cte_names(tree)
        for node in tree.find_all(exp.Table):
            view = _view_of(node, find, ctes)
            if view is None or view.qualified_name in seen:
                continue
            if view.qualified_name == name:
                raise SemanticError(f"View {name} would read itself (through {node.sql(dialect='hive')}): a view "
                                    "reads only tables and views made before it")
            seen.add(view.qualified_name)
            todo.append(_parsed(view.properties[VIEW_EXPANDED_TEXT]))


def text(tree: exp.Expression) -> str:
    """A query as HiveQL text (what a view keeps)."""
    return tree.sql(dialect=HiveQL)


def named_by_position(query: exp.Expression, names: Sequence[str]) -> exp.Expression:
    """``query`` with its columns named ``names`` (its first SELECT's, for a UNION): for a
    query whose columns share a name (``SELECT a.k, b.k``), which the expanded text could not
    select by name. A ``*`` there is refused: its columns are not known from the text."""
    query = query.copy()
    first = query
    while isinstance(first, exp.Union):
        first = first.this
    if not isinstance(first, exp.Select) or len(first.expressions) != len(names) or any(
            isinstance(p, exp.Star) or isinstance(p, exp.Column) and isinstance(p.this, exp.Star)
            for p in first.expressions):
        raise SemanticError("The view's query gives two columns the same name: give each of its columns a "
                            "distinct alias (SELECT a.k AS a_k, b.k AS b_k ...) rather than a *", code=10036)
    first.set("expressions", [exp.alias_(p.this if isinstance(p, exp.Alias) else p, n, quoted=True)
                              for p, n in zip(first.expressions, names)])
    return query


def expanded_text(query: exp.Expression, out: Sequence[str], names: Sequence[str]) -> str:
    """The text a view is read by: its query's columns ``out`` selected by name as ``names``."""
    select = ", ".join(f"{_quoted(o)} AS {_quoted(n)}" for o, n in zip(out, names))
    return f"SELECT {select} FROM ({text(query)}) {_INNER}"


@functools.lru_cache(maxsize=256)
def _parsed(stored: str) -> exp.Expression:
    """A view's expanded text as a tree (shared: callers copy it before changing it)."""
    statement = parse_one(stored).statement
    if not isinstance(statement, s.Query):
        raise SemanticError(f"A view's stored query does not parse as a query: {stored[:200]}")
    tree: exp.Expression = statement.tree
    return tree


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
