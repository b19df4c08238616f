"""Names resolved against the catalog: table references, partition specs, column
definitions, and, for queries, each warehouse-table scan with the predicate that applies
to its rows (used for pruning)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType, traverse_scope

from hivepark.catalog.buckets import HASHED_TYPES, BucketSample, table_buckets
from hivepark.catalog.models import AS_OF_TIME, AS_OF_VERSION, Table
from hivepark.errors import SemanticError
from hivepark.expr import AlwaysTrue, Expr, and_all
from hivepark.expr.from_sqlglot import ConditionFacts, from_sqlglot, maybe_nondeterministic, spark_text
from hivepark.plan.nodes import JoinKey, JoinReason
from hivepark.sql.joins import join_keys, join_sources, outer_null_supplying
from hivepark.types import HiveType


@dataclass
class ScanSite:
    """One reference to a warehouse table in a query, and what its rows must satisfy."""

    node: exp.Table
    table: Table
    alias: str
    predicate: Expr
    scope: int = 0
    filters: tuple[exp.Expression, ...] = ()
    hinted: bool = False
    own: Expr = field(default_factory=AlwaysTrue)  # ``filters`` as one predicate tree
    filter_sql: tuple[str, ...] = ()  # ``filters`` as Spark SQL text, one per conjunct
    own_trees: tuple[Expr, ...] = ()  # ``filters`` as predicate trees, one per conjunct
    columns: tuple[str, ...] | None = None  # the table's columns the query may read; None: all
    sample: BucketSample | None = None  # TABLESAMPLE (BUCKET x OUT OF y ON c): by Hive's hash, not Spark's
    sampled: bool = False  # Spark's TABLESAMPLE (ROWS, PERCENT, random BUCKET): taken before any filter


@dataclass
class QueryAnalysis:
    """The scans of a query and the equi-join keys between them, per SELECT scope."""

    sites: list[ScanSite]
    joins: list[tuple[int, JoinKey]]
    query: exp.Expression | None = None  # the tree analyzed (``sites`` point into it)


TableFind = Callable[[str | None, str], Table | None]
"""``find(db, name)``: the warehouse table a reference names (``db`` None when the query
does not give one), None when it names something else (a Spark view)."""


AtVersion = Callable[[Table], Table]
"""``at_version(table)``: ``table`` as its time-travel properties (:func:`as_of`) name it, with
the columns it had then (a storage handler's snapshot schema)."""


def referenced_table(node: exp.Table, find: TableFind, at_version: AtVersion | None = None) -> Table | None:
    """The warehouse table ``node`` names, None for a table-valued function such as
    ``range(10)`` or for what ``find`` does not know as a warehouse table."""
    if not isinstance(node.this, exp.Identifier):
        return None
    db = node.args.get("db")
    catalog = node.args.get("catalog")
    if catalog is not None and db is not None:  # db.t.snapshots: a metadata table
        table = find(catalog.name, f"{db.name}.{node.name}")
    else:
        table = find(db.name if db is not None else None, node.name)
    version = node.args.get("version")
    if table is None or version is None:
        return table
    marked = as_of(table, version)
    return at_version(marked) if at_version is not None else marked


def as_of(table: Table, version: exp.Version) -> Table:
    """``table`` as ``FOR SYSTEM_VERSION AS OF n`` or ``FOR SYSTEM_TIME AS OF 'ts'`` names it
    (transient properties the storage handler reads; a table of files refuses them)."""
    value = version.expression
    if str(version.args.get("kind", "")).upper() != "AS OF" or not isinstance(value, exp.Literal):
        raise SemanticError(f"Time travel needs AS OF and a literal (a snapshot id, or a timestamp string), got "
                            f"'{version.sql(dialect='hive')}'")
    key = AS_OF_VERSION if str(version.this).upper() == "VERSION" else AS_OF_TIME
    return table.evolve(properties={**dict(table.properties), key: value.name})


def bucket_sample(node: exp.Table, table: Table) -> BucketSample | None:
    """Hive's ``TABLESAMPLE (BUCKET x OUT OF y [ON c])`` of a table reference: the rows whose Hive
    hash of ``c`` (without ON, of a bucketed table's bucket columns) is in bucket x of y, taken
    off the reference (Spark has no such sample; sql/rewrite.py filters with it). ``ON rand()``
    is left to Spark, whose ``BUCKET x OUT OF y`` is that random sample, as is BUCKET without ON
    on a table without buckets (Hive refuses it), PERCENT and ROWS. None when nothing is taken."""
    sample = node.args.get("sample")
    if not isinstance(sample, exp.TableSample) or sample.args.get("bucket_numerator") is None:
        return None
    try:
        x, y = int(sample.args["bucket_numerator"].name), int(sample.args["bucket_denominator"].name)
    except (KeyError, ValueError, AttributeError):
        return None
    if x > y:
        raise SemanticError(f"Numerator should not be bigger than denominator in sample clause for table {table.name}",
                            code=10061)
    if x < 1:
        raise SemanticError(f"TABLESAMPLE (BUCKET {x} OUT OF {y}) of {table.name}: buckets are numbered from 1 to "
                            f"{y}. Give one of them.")
    on = sample.args.get("bucket_field")
    if isinstance(on, (exp.Rand, exp.Anonymous)) or (isinstance(on, exp.Func) and on.sql().lower() == "rand()"):
        sample.set("bucket_field", None)  # Spark's BUCKET x OUT OF y is random
        return None
    b = table_buckets(table)
    if on is None:
        if b is None:
            return None
        columns = b.columns
    elif isinstance(on, (exp.Identifier, exp.Column)):
        columns = (on.name.lower(),)
    elif isinstance(on, exp.Tuple) and all(isinstance(c, (exp.Identifier, exp.Column)) for c in on.expressions):
        columns = tuple(c.name.lower() for c in on.expressions)  # ON c1, c2: Hive's hash of the row's columns
    else:
        raise SemanticError(f"TABLESAMPLE (BUCKET {x} OUT OF {y} ON {on.sql()}) of {table.name}: Hive samples ON a "
                            "column of the table or rand(). Give one of those.")
    types = {c.name: HiveType.parse(c.type).base for c in table.columns}
    for c in columns:
        if c not in types:
            raise SemanticError(f"Sampling column {c} of TABLESAMPLE is not a column of {table.name}"
                                f"{' (it is a partition column)' if c in table.partition_key_names() else ''}: "
                                f"sample ON one of {', '.join(types)}.")
        if types[c] not in HASHED_TYPES:
            raise SemanticError(f"TABLESAMPLE ON {c} of {table.name}: {c} is {types[c]}, whose Hive hash hivepark "
                                f"does not compute (it does for {', '.join(HASHED_TYPES)}). Sample ON another "
                                "column, or ON rand().")
    if table.properties.get("bucketing_version", "2") != "2":
        raise SemanticError(f"TABLESAMPLE (BUCKET {x} OUT OF {y}) of {table.name}: its TBLPROPERTIES give "
                            f"bucketing_version={table.properties['bucketing_version']}, Hive 1 and 2's hash, which "
                            "hivepark does not compute. Sample ON rand() instead.")
    if any(node.args.get(k) for k in ("laterals", "pivots")):
        raise SemanticError(f"TABLESAMPLE (BUCKET {x} OUT OF {y} ON ...) of {table.name} with a LATERAL VIEW or PIVOT "
                            f"of its own: sample in a subquery first (FROM (SELECT * FROM {table.name} TABLESAMPLE "
                            "(...)) s LATERAL VIEW ...).")
    node.set("sample", None)
    return BucketSample(x, y, columns, tuple(types[c] for c in columns))


def find_scans(query: exp.Expression, find: TableFind) -> list[ScanSite]:
    """Every warehouse-table reference in ``query`` with its prunable predicate."""
    return analyze_query(query, find).sites


def analyze_query(query: exp.Expression, find: TableFind, type_safety: bool = False,
                  at_version: AtVersion | None = None) -> QueryAnalysis:
    """Every warehouse-table reference in ``query`` with its prunable predicate, and the
    equi-join keys between them.

    WHERE conjuncts apply to tables not on the null-supplying side of an outer join; ON
    conjuncts of inner joins likewise; ON conjuncts of a LEFT/SEMI/ANTI join apply to its
    right table. A reference Spark samples (TABLESAMPLE n ROWS, PERCENT, a random BUCKET) takes
    none: Spark samples its rows before any of them (``sampled``), nor is it a runtime-pruned big
    side. Anything else is left to Spark (never used to drop data).
    """
    sites: list[ScanSite] = []
    joins: list[tuple[int, JoinKey]] = []
    names = _names_used(query)
    texts = ConditionFacts()  # conditions' Spark SQL and columns, once for all the query's tables
    scopes = traverse_scope(query)
    scope_ids = {id(s): i for i, s in enumerate(scopes)}
    refs = _reference_counts(scopes)
    for scope_id, scope in enumerate(scopes):
        if scope.scope_type == ScopeType.UDTF:  # a LATERAL VIEW: its sources are its SELECT's own tables
            continue
        tables = {alias: src for alias, src in scope.sources.items()
                  if isinstance(src, exp.Table)}
        found = {alias: referenced_table(node, find, at_version) for alias, node in tables.items()}
        resolved = {a: t for a, t in found.items() if t is not None}
        if not resolved:
            if any(isinstance(src, Scope) for src in scope.sources.values()):  # a view's or a subquery's columns
                if isinstance(scope.expression, exp.Select):  # subqueries joined: their tables' keys
                    derived = _Derived(scope, find, at_version, refs)
                    for k in join_keys(scope.expression, {}, _conjuncts):
                        joins += _through_derived(k, scope_id, resolved, derived, scope_ids, sites)
                hive_comparisons(scope.expression, {}, {}, type_safety, _Derived(scope, find, at_version))
            continue
        applicable = _applicable_conjuncts(scope, set(resolved))
        inside = _bound_inside(scope, find, at_version)
        resolvers = {a: _resolver(scope, a, t, resolved, inside) for a, t in resolved.items()}
        hinted = _hinted_aliases(scope.expression)
        samples = {a: bucket_sample(tables[a], t) for a, t in resolved.items()}
        # Spark's own TABLESAMPLE (ROWS, PERCENT, a random BUCKET) samples the table's rows before
        # any WHERE or ON: no filter may narrow what it samples (no pruning, no pushdown, no
        # runtime pruning of it), as in Spark, whose filters never go below a Sample or Limit
        sampled = {a for a in resolved if tables[a].args.get("sample") is not None}
        for alias, table in resolved.items():
            conj = [] if alias in sampled else applicable.get(alias, [])
            trees = [from_sqlglot(c, resolvers[alias], texts) for c in conj]
            # a table's own filters (which collect a small side's values): never a random one, which
            # Spark draws for each joined row, above the join (``WHERE rand() < 0.5 + 0 * d.month``)
            mine = [_only_references(c, resolvers[alias], texts) and not maybe_nondeterministic(c) for c in conj]
            pred = and_all(*trees)
            own = tuple(c for c, m in zip(conj, mine) if m)
            own_pred = and_all(*(t for t, m in zip(trees, mine) if m))
            sites.append(ScanSite(tables[alias], table, alias, pred, scope_id, own,
                                  alias.lower() in hinted, own_pred,
                                  tuple(spark_text(c, texts) for c in own),
                                  tuple(t for t, m in zip(trees, mine) if m),
                                  _columns_read(table, names), samples[alias], alias in sampled))
        if isinstance(scope.expression, exp.Select):
            derived = _Derived(scope, find, at_version, refs)
            for k in join_keys(scope.expression, resolvers, _conjuncts):
                if k.big in resolved and k.small in resolved:
                    joins.append((scope_id, replace(k, reason=JoinReason.SAMPLED, detail="")
                                  if k.big in sampled and k.eligible else k))
                    continue
                joins += _through_derived(k, scope_id, resolved, derived, scope_ids, sites)
        hive_comparisons(scope.expression, resolvers, resolved, type_safety, _Derived(scope, find, at_version))
    return QueryAnalysis(sites, joins, query)


def _reference_counts(scopes: list[Scope]) -> dict[int, int]:
    """How many FROMs and JOINs of the query read each subquery's, CTE's or view's scope (by id):
    a CTE read twice is one scope, whose tables' rows both readers get."""
    counts: dict[int, int] = {}
    for sc in scopes:
        for name, _ in sc.references:
            src = sc.sources.get(name)
            if isinstance(src, Scope):
                counts[id(src)] = counts.get(id(src), 0) + 1
    return counts


@dataclass(frozen=True)
class _Traced:
    """A warehouse table's column that a derived table's column passes through: the table's scope
    (its id), alias and column, and why its values may not prune it (None: they may)."""

    scope: int
    alias: str
    column: str
    reason: JoinReason | None = None
    detail: str = ""
    type: str | None = None


_PLACEHOLDERS = (JoinReason.THROUGH_DERIVED, JoinReason.NOT_A_TABLE)
_VIEW_QUERY = "__hivepark_view"  # sql/views.py: the alias of a view's query inside its expanded text


def _through_derived(k: JoinKey, scope_id: int, resolved: dict[str, Table], derived: _Derived,
                     scope_ids: dict[int, int], sites: list[ScanSite]) -> list[tuple[int, JoinKey]]:
    """A join key with a subquery's, a CTE's or a view's column on one side or both, as keys between
    the tables those columns pass through: the big table's scan is pruned by the small table's
    values when every step keeps its rows' keys apart (a filter, a projection, a join, DISTINCT,
    a GROUP BY or a window on the key) and the small side's values are a table's column passed
    through (its own filters give a superset of the subquery's keys); else the reason, said on
    the big table's scan."""
    join_reason = None if k.reason in _PLACEHOLDERS else k.reason
    here = id(derived.scope)
    if k.big in resolved:
        bigs = [_Traced(here, k.big, k.big_col)]
    else:
        bigs = derived.via(k.big, k.big_col, big=True)
    if k.small in resolved:
        small: _Traced | None = _Traced(here, k.small, k.small_col)
    else:
        smalls = derived.via(k.small, k.small_col, big=False)
        small = smalls[0] if len(smalls) == 1 and smalls[0].reason is None else None
    out = []
    for b in bigs:
        if b.scope not in scope_ids:
            continue
        reason, detail = join_reason, k.detail if join_reason is not None else ""
        if reason is None and b.reason is not None:
            reason, detail = b.reason, b.detail
        if reason is None and small is None:
            reason, detail = JoinReason.NOT_A_TABLE, f"{k.small}.{k.small_col}"
        b_scope = scope_ids[b.scope]
        if reason is None and any(s.scope == b_scope and s.alias.lower() == b.alias.lower() and s.sampled
                                  for s in sites):
            reason, detail = JoinReason.SAMPLED, ""
        s_scope = scope_ids.get(small.scope, scope_id) if small is not None else scope_id
        out.append((b_scope, JoinKey(b.alias, b.column, small.alias if small is not None else k.small,
                                     small.column if small is not None else k.small_col, reason, detail,
                                     small_scope=s_scope, small_direct=k.small in resolved)))
    return out


class _Derived:
    """The Hive type of a column a scope reads from a derived table (a view's query, a
    subquery in FROM, a CTE) whose SELECT passes a warehouse table's column through."""

    def __init__(self, scope: Scope, find: TableFind, at_version: AtVersion | None = None,
                 refs: dict[int, int] | None = None) -> None:
        self.scope, self.find, self.at_version, self.refs = scope, find, at_version, refs or {}

    def via(self, alias: str, name: str, big: bool, depth: int = 0, label: str = "") -> list[_Traced]:
        """The warehouse tables' columns that column ``name`` of derived source ``alias`` passes
        through (one per branch of a UNION), each with why its values may not prune that table
        (``big``) or be collected from it (not ``big``); [] when it is no table's column. A reason
        names the source by ``label`` when given (a view's reference, for its query's own alias)."""
        src = next((s for a, s in self.scope.sources.items() if a.lower() == alias.lower()), None)
        if not isinstance(src, Scope) or depth > 32:
            return []
        shown = label or alias
        why: tuple[JoinReason, str] | None = None
        ref = next((n for a, n in self.scope.references if a.lower() == alias.lower()), None)
        if ref is not None and ref.args.get("sample") is not None:
            why = (JoinReason.DERIVED_SAMPLED, shown)
        elif self.refs.get(id(src), 1) > 1:
            why = (JoinReason.DERIVED_SHARED, shown)
        named = self._named(alias, src)
        if named is not None and name.lower() not in named:
            return []
        out = self._through(src, shown, name, None, big, depth) if named is None else \
            self._through(src, shown, None, named.index(name.lower()), big, depth)
        if why is not None and big:
            out = [replace(t, reason=why[0], detail=why[1]) if t.reason is None else t for t in out]
        return out

    def _named(self, alias: str, src: Scope) -> list[str] | None:
        """The names a column list on source ``alias`` gives its columns, by position (``(SELECT
        ...) z(a, b)``, ``WITH c(a, b) AS ...``, ``FROM c y(a, b)``): they hide the query's own."""
        ref = next((n for a, n in self.scope.references if a.lower() == alias.lower()), None)
        parent = src.expression.parent
        for node in (ref, parent if isinstance(parent, (exp.Subquery, exp.CTE)) else None):
            named = node.args.get("alias") if node is not None else None
            if isinstance(named, exp.TableAlias) and named.columns:
                return [c.name.lower() for c in named.columns]
        return None

    def _through(self, src: Scope, alias: str, name: str | None, pos: int | None, big: bool,
                 depth: int) -> list[_Traced]:
        node = src.expression
        if name is None and isinstance(node, exp.Select) and any(isinstance(p, exp.Star) for p in node.selects):
            return []  # a column by position of a `*`: not known here
        if isinstance(node, exp.SetOperation):
            first = node
            while isinstance(first, exp.SetOperation):
                first = first.this
            first = first.unnest() if isinstance(first, exp.Subquery) else first
            if pos is None:
                if not isinstance(first, exp.Select) or any(isinstance(p, exp.Star) for p in first.selects):
                    return []
                pos = next((i for i, p in enumerate(first.selects) if p.alias_or_name.lower() == name.lower()),
                           None) if name is not None else None
                if pos is None:
                    return []
            out: list[_Traced] = []
            for branch in src.set_operation_scopes:
                out += self._through(branch, alias, None, pos, big, depth + 1)
            # each branch's rows are its own (UNION ALL), or kept or dropped by a comparison of whole
            # rows, key included (UNION, INTERSECT, EXCEPT): a branch may be pruned alone, when every
            # branch passes a table's key through in one type (the union's, so compared as it is)
            uniform = len(out) == _branches(node) and len({t.type for t in out}) == 1
            if big and not uniform:
                out = [replace(t, reason=JoinReason.DERIVED_UNION, detail=alias) if t.reason is None else t
                       for t in out]
            return out if big else []  # a UNION's values are every branch's: not one table's
        if not isinstance(node, exp.Select):
            return []
        if name is not None:
            proj = next((p for p in node.selects if p.alias_or_name.lower() == name.lower()), None)
        else:
            proj = node.selects[pos] if pos is not None and pos < len(node.selects) else None
        inner = proj.this if isinstance(proj, exp.Alias) else proj
        if proj is None and name is not None:
            if any(isinstance(p, exp.Star) for p in node.selects):
                inner = exp.column(name)  # SELECT *: the column of that name of its sources
            else:  # SELECT t.*: that table's column
                star = [p for p in node.selects if isinstance(p, exp.Column) and isinstance(p.this, exp.Star)]
                inner = exp.column(name, table=star[0].table) if len(star) == 1 else None
        tables = {a: t for a, n in src.sources.items() if isinstance(n, exp.Table)
                  for t in [referenced_table(n, self.find, self.at_version)] if t is not None}
        if inner is not None and not isinstance(inner, exp.Column):
            if not big:
                return []
            owners = {(a, c) for col in inner.find_all(exp.Column) for a, t in tables.items()
                      if (c := _resolver(src, a, t, tables)(col)) is not None}
            if len(owners) != 1:
                return []
            (a, c), = owners
            label = proj.alias_or_name if proj is not None else name
            return [_Traced(id(src), a, c, JoinReason.DERIVED_EXPRESSION, f"{alias}.{label}")]
        if not isinstance(inner, exp.Column):
            return []
        names = {c.name.lower() for t in tables.values() for c in t.all_columns}
        if len(tables) != sum(1 for n in src.sources.values() if isinstance(n, exp.Table)) or any(
                isinstance(n, Scope) for a, n in _read_sources(src).items()):
            names.add("*")  # a source whose columns are not known here
        why = _mixes_keys(node, inner, names) if big else None
        for a, t in tables.items():
            column = _resolver(src, a, t, tables)(inner)
            if column is not None:
                typ = next(c.type for c in t.all_columns if c.name == column)
                return [_Traced(id(src), a, column, why, alias if why is not None else "", typ)]
        read = _read_sources(src)
        through = inner.table or (next(iter(read)) if len(read) == 1 else "")  # a view's expanded text
        if not through:
            return []
        out = _Derived(src, self.find, self.at_version, self.refs).via(
            through, inner.name, big, depth + 1, alias if through.lower().startswith(_VIEW_QUERY) else "")
        if why is not None:
            out = [replace(t, reason=why, detail=alias) if t.reason is None else t for t in out]
        return out

    def type_of(self, col: exp.Column, depth: int = 0) -> tuple[str, str | None] | None:
        name = col.name.lower()
        if col.table:
            alias = next((a for a in self.scope.sources if a.lower() == col.table.lower()), None)
        else:  # unqualified: the one source that has it (a table's columns are not known here)
            having = [a for a, s in _read_sources(self.scope).items()
                      if not isinstance(s, Scope) or {name, "*"} & set(
                          self._named(a, s) or (n.lower() for n in s.expression.named_selects))]
            alias = having[0] if len(having) == 1 else None
        src = self.scope.sources.get(alias) if alias is not None else None
        if not isinstance(src, Scope) or not isinstance(src.expression, exp.Select) or depth > 32:
            return None
        assert alias is not None
        named = self._named(alias, src)
        if named is not None:  # (SELECT ...) z(a, b): z.a is its first column, whatever its name
            if name not in named or any(isinstance(p, exp.Star) for p in src.expression.selects):
                return None
            proj = src.expression.selects[named.index(name)] if named.index(name) < len(src.expression.selects) \
                else None
        else:
            proj = next((p for p in src.expression.selects if p.alias_or_name.lower() == name), None)
        inner = proj.this if isinstance(proj, exp.Alias) else proj
        if proj is None and named is None and any(isinstance(p, exp.Star) for p in src.expression.selects):
            inner = exp.column(name)  # SELECT *: the column of that name of its sources
        if not isinstance(inner, exp.Column):
            return None
        tables = {a: t for a, node in src.sources.items() if isinstance(node, exp.Table)
                  for t in [referenced_table(node, self.find, self.at_version)] if t is not None}
        resolvers = {a: _resolver(src, a, t, tables) for a, t in tables.items()}
        return _side_type(inner, resolvers, tables, _Derived(src, self.find, self.at_version), depth + 1)

    def projection_type(self, select: exp.Select) -> tuple[str, str | None] | None:
        """The Hive type of the one column a subquery of this scope selects (``x IN (SELECT c
        FROM t)``), when it is a warehouse table's column."""
        sub = next((s for s in self.scope.subquery_scopes if s.expression is select), None)
        proj = select.selects[0] if sub is not None and select.selects else None
        inner = proj.this if isinstance(proj, exp.Alias) else proj
        if sub is None or not isinstance(inner, exp.Column):
            return None
        tables = {a: t for a, node in sub.sources.items() if isinstance(node, exp.Table)
                  for t in [referenced_table(node, self.find, self.at_version)] if t is not None}
        resolvers = {a: _resolver(sub, a, t, tables) for a, t in tables.items()}
        return _side_type(inner, resolvers, tables, _Derived(sub, self.find, self.at_version))


def _branches(node: exp.Expression) -> int:
    """How many SELECTs a UNION, EXCEPT or INTERSECT combines."""
    if isinstance(node, exp.Subquery):
        return _branches(node.this)
    if isinstance(node, exp.SetOperation):
        return _branches(node.this) + _branches(node.expression)
    return 1


def _same_column(a: exp.Expression, b: exp.Column) -> bool:
    a = a.unnest() if isinstance(a, exp.Paren) else a
    return isinstance(a, exp.Column) and a.name.lower() == b.name.lower() and (
        not a.table or not b.table or a.table.lower() == b.table.lower())


def _mixes_keys(select: exp.Select, key: exp.Column, columns: set[str] | None = None) -> JoinReason | None:
    """Why dropping the rows of ``select``'s sources whose ``key`` is not among some values could
    change its other rows (None when it drops exactly its rows whose ``key`` is not among them):
    a LIMIT, an aggregate over rows of several keys, a window across keys, random values.
    ``columns`` are its sources' column names (``*`` for a source whose are not known), which tell
    ``GROUP BY day`` naming ``SELECT ds AS day``'s alias from a column ``day``."""
    if select.args.get("limit") is not None or select.args.get("offset") is not None:
        return JoinReason.DERIVED_LIMIT
    if maybe_nondeterministic(select):
        return JoinReason.DERIVED_RANDOM
    group = select.args.get("group")
    if group is not None:
        if any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")):
            return JoinReason.DERIVED_GROUPED
        items = []
        aliases = {p.alias.lower(): p.this for p in select.selects if isinstance(p, exp.Alias)}
        for g in group.expressions:
            if isinstance(g, exp.Literal) and g.is_int and 0 < int(g.name) <= len(select.selects):
                p = select.selects[int(g.name) - 1]  # GROUP BY 1
                g = p.this if isinstance(p, exp.Alias) else p
            elif isinstance(g, exp.Column) and not g.table and g.name.lower() in aliases \
                    and columns is not None and not {g.name.lower(), "*"} & columns:  # SELECT ds AS day
                g = aliases[g.name.lower()]
            items.append(g)
        if not any(_same_column(g, key) for g in items):
            return JoinReason.DERIVED_GROUPED
    elif select.args.get("having") is not None or any(
            not agg.find_ancestor(exp.Window) and agg.parent_select is select for agg in select.find_all(exp.AggFunc)):
        return JoinReason.DERIVED_GROUPED  # one group of every row
    for w in select.find_all(exp.Window):
        if w.parent_select is select and not any(_same_column(p, key) for p in w.args.get("partition_by") or []):
            return JoinReason.DERIVED_WINDOW
    return None


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)


_UNSAFE_COMPARES = (
    "Unsafe compares between different types are disabled for safety reasons. If you know what you are "
    "doing, please set hive.strict.checks.type.safety to false and make sure that hive.mapred.mode is not "
    "set to 'strict' to proceed. Note that you may get errors or incorrect results if you make a mistake "
    "while using some of the unsafe features.")


def _check_type_safety(node: exp.Expression, operands: list[exp.Expression],
                       types: list[tuple[str, str | None] | None]) -> None:
    """Hive's ``hive.strict.checks.type.safety`` (GenericUDFBaseCompare): a BIGINT compared with
    a STRING or a DOUBLE is refused. Only columns count: Hive turns a literal into the column's
    type before the check, so ``bigint_col = '5'`` passes there too."""
    kinds = [HiveType.parse(t[1]).kind if t is not None and t[1] is not None
             and not isinstance(o, exp.Literal) else None for o, t in zip(operands, types)]
    names = [t[1].lower() if t is not None and t[1] is not None else None for t in types]
    if "bigint" not in names:
        return
    big = names.index("bigint")
    for i, (name, kind) in enumerate(zip(names, kinds)):
        if i != big and kind is not None and kinds[big] is not None and (name == "double" or kind == "string"):
            raise SemanticError(
                f"Wrong arguments '{operands[i].sql(dialect='hive')}': {_UNSAFE_COMPARES} Comparing bigint and "
                f"{name} in '{node.sql(dialect='hive')}' may lose precision: CAST one side to the other's "
                "type, or SET hive.strict.checks.type.safety=false.", code=10014)


def hive_comparisons(select: exp.Expression, resolvers: dict[str, Callable[[exp.Column], str | None]],
                     tables: dict[str, Table], type_safety: bool = False, derived: _Derived | None = None) -> None:
    """Hive's implicit conversion where a string meets a number in a comparison, an IN list or
    a BETWEEN: every operand is compared as DOUBLE (``int_col = 'abc'`` matches nothing, ``str_col = 1`` matches
    '1' and '1.0'), where Spark's ANSI rules would cast the string to the number's type and
    fail on 'abc'. Rewritten in place (``TRY_CAST(x AS DOUBLE)`` on both sides) after the
    scan predicates were read, so pruning sees the query as written: such an atom never
    binds, so it never prunes. A string literal that binds exactly to the numeric column
    (``hr = '11'``) is left alone: Spark compares it as Hive does. ``derived`` types the
    columns a view's query or a subquery passes through from a table."""
    for node in list(select.find_all(*_COMPARISONS, exp.In, exp.Between)):
        if node.parent_select is not select:  # a subquery's comparisons are its own scope's
            continue
        if isinstance(node, exp.In) and isinstance(node.args.get("query"), exp.Subquery):
            _in_subquery_as_double(node, resolvers, tables, derived)
            continue
        operands = _operands(node)
        types = [_side_type(o, resolvers, tables, derived) for o in operands]
        if type_safety and not isinstance(node, exp.In):  # Hive's IN makes no such check
            _check_type_safety(node, operands, types)
        if any(t is None for t in types) or {t[0] for t in types if t} != {"string", "numeric"}:
            continue
        number = next((t[1] for t in types if t and t[0] == "numeric" and t[1] is not None), None)
        strings = [o for o, t in zip(operands, types) if t and t[0] == "string"]
        if number is not None and all(isinstance(o, exp.Literal) and HiveType.parse(number).bind_literal(o.name)
                                      is not None for o in strings):
            continue
        for side in operands:
            side.replace(exp.TryCast(this=side.copy(), to=exp.DataType.build("double"), safe=True))


def _in_subquery_as_double(node: exp.In, resolvers: dict[str, Callable[[exp.Column], str | None]],
                           tables: dict[str, Table], derived: _Derived | None) -> None:
    """``x IN (SELECT c FROM ...)`` where one of x and c is a string and the other a number, as Hive
    runs it (a semi join on ``x = c``, compared as DOUBLE: ``int_col IN (SELECT '01' ...)`` matches
    1), where Spark's ANSI rules would fail on a string that is not an integer. Only where the IN
    is a conjunct of a WHERE or HAVING, so that NULL (``TRY_CAST('abc')``) and false are the same."""
    inner = node.args["query"].this
    if derived is None or not isinstance(inner, exp.Select) or len(inner.selects) != 1:
        return
    parent = node.parent
    while isinstance(parent, (exp.And, exp.Paren)):
        parent = parent.parent
    if not isinstance(parent, (exp.Where, exp.Having)):
        return
    types = [_side_type(node.this, resolvers, tables, derived), derived.projection_type(inner)]
    if any(t is None for t in types) or {t[0] for t in types if t} != {"string", "numeric"}:
        return
    double = exp.DataType.build("double")
    node.this.replace(exp.TryCast(this=node.this.copy(), to=double, safe=True))
    proj = inner.selects[0]
    value = proj.this if isinstance(proj, exp.Alias) else proj
    proj.replace(exp.alias_(exp.TryCast(this=value.copy(), to=double, safe=True), proj.alias_or_name))


def _operands(node: exp.Expression) -> list[exp.Expression]:
    """The values a comparison, ``x IN (v, ...)`` (not a subquery) or ``x BETWEEN a AND b``
    compares; Hive compares them all in one common type."""
    if isinstance(node, exp.In):
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            return []
        return [node.this, *node.expressions]
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    return [node.this, node.expression]


def _side_type(node: exp.Expression, resolvers: dict[str, Callable[[exp.Column], str | None]],
               tables: dict[str, Table], derived: _Derived | None = None,
               depth: int = 0) -> tuple[str, str | None] | None:
    """(family, Hive type) of a literal or a warehouse column (read directly, or through
    ``derived`` sources); None for anything else."""
    if isinstance(node, exp.Paren):
        return _side_type(node.this, resolvers, tables, derived, depth)
    if isinstance(node, exp.Literal):
        return ("string", None) if node.is_string else ("numeric", None)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "numeric", None  # -1: a number too (hr IN ('1.5', -1) is Hive's comparison as DOUBLE)
    if isinstance(node, exp.Column):
        for alias, resolve in resolvers.items():
            name = resolve(node)
            if name is not None:
                typ = next(c.type for c in tables[alias].all_columns if c.name == name)
                family = HiveType.parse(typ).family
                if HiveType.parse(typ).kind == "char":
                    return None
                return family, typ
        if derived is not None:
            return derived.type_of(node, depth)
    return None


def _names_used(query: exp.Expression) -> set[str] | None:
    """Every identifier in the query, lower-case; None when a ``*`` (other than in
    ``count(*)``) may read every column."""
    if any(not isinstance(star.parent, exp.Count) for star in query.find_all(exp.Star)):
        return None
    return {i.name.lower() for i in query.find_all(exp.Identifier)}


def _columns_read(table: Table, names: set[str] | None) -> tuple[str, ...] | None:
    """The table's columns the query may read: a superset (a name used for anything counts),
    at least one column; None for all of them."""
    if names is None:
        return None
    cols = tuple(c.name for c in table.columns if c.name.lower() in names)
    if len(cols) == len(table.columns):
        return None
    return cols or tuple(c.name for c in table.columns[:1])


def _only_references(cond: exp.Expression, resolve: Callable[[exp.Column], str | None],
                     texts: ConditionFacts) -> bool:
    """True when every column of ``cond`` belongs to this scan and it holds no subquery."""
    cols, nested = texts.columns(cond)
    return not nested and bool(cols) and all(resolve(c) is not None for c in cols)


def _hinted_aliases(select: exp.Expression) -> set[str]:
    """Aliases named in a MAPJOIN / BROADCAST / BROADCASTJOIN hint."""
    hint = select.args.get("hint") if isinstance(select, exp.Select) else None
    out: set[str] = set()
    for h in hint.expressions if hint is not None else []:
        name = (h.name if isinstance(h, exp.Anonymous) else h.this if isinstance(h, exp.Func)
                else "")
        if str(name).upper() in ("MAPJOIN", "BROADCAST", "BROADCASTJOIN"):
            out |= {a.name.lower() for a in h.expressions}
    return out


def _conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    """The conjuncts of ``e`` (through parentheses), in order; without recursion, as a WHERE
    of thousands of ANDs is a chain that deep."""
    out: list[exp.Expression] = []
    todo = [e] if e is not None else []
    while todo:
        n = todo.pop()
        n = n.unnest() if isinstance(n, exp.Paren) else n
        if isinstance(n, exp.And):
            todo += [n.expression, n.this]  # popped left first
        else:
            out.append(n)
    return out


def _source_alias(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Table):
        return node.alias_or_name
    if isinstance(node, exp.Subquery):
        return node.alias_or_name
    return None


def _applicable_conjuncts(scope: Scope, aliases: set[str]) -> dict[str, list[exp.Expression]]:
    select = scope.expression
    if not isinstance(select, exp.Select):
        return {}
    from_ = select.args.get("from_") or select.args.get("from")
    first, null_supplying = join_sources(from_.this) if from_ is not None else (set(), set())
    preceding = set(first)  # a parenthesised join's tables, and those null-supplying inside it
    on_preds: dict[str, list[exp.Expression]] = {}
    inner_on: list[exp.Expression] = []
    semi_on: list[tuple[str, list[exp.Expression]]] = []
    for join in select.args.get("joins") or []:
        right, inner_null = join_sources(join.this)
        null_supplying |= inner_null
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        on = _conjuncts(join.args.get("on"))
        if side in ("LEFT",) or kind in ("SEMI", "ANTI"):
            if (alias := _source_alias(join.this)):  # one table, not a parenthesised join
                on_preds.setdefault(alias, []).extend(on)
                if kind == "SEMI":  # a row it keeps meets every ON conjunct, as an inner join's
                    semi_on.append((alias, on))
        elif side not in ("RIGHT", "FULL"):
            inner_on.extend(on)
        null_supplying |= outer_null_supplying(preceding, right, side, kind)
        preceding |= right
    where = _conjuncts(select.args["where"].this) if select.args.get("where") else []
    out: dict[str, list[exp.Expression]] = {}
    for alias in aliases:
        preds = list(on_preds.get(alias, []))
        if alias not in null_supplying:
            preds += where + inner_on + [c for right, on in semi_on if right != alias for c in on]
        out[alias] = preds
    return out


def _read_sources(scope: Scope) -> dict[str, exp.Table | Scope]:
    """The sources a scope reads: sqlglot's ``sources`` hold every CTE of the statement in
    scope too, read or not; one that the SELECT does not read (``WITH e AS (SELECT * FROM d)
    SELECT ... FROM t WHERE ds = 'x' ...``, ``e`` read in a subquery or another branch of a
    UNION, or not at all) names no column of it, so it must not make them ambiguous (its
    WHERE no longer pruned, nor compared as Hive compares)."""
    unread = set(scope.cte_sources) - {name for name, _ in scope.references}
    if not unread:
        return scope.sources
    return {a: src for a, src in scope.sources.items() if a not in unread}


def _semi_joined(scope: Scope) -> dict[str, set[int]]:
    """The tables a LEFT SEMI or LEFT ANTI JOIN of the scope's SELECT reads, by alias, with the ids
    of the columns in that join's ON: only there are their columns visible (a semi join's rows are
    its left side's; Hive allows the right table only in the ON, and Spark resolves nothing else
    against it). ``WHERE region = 'us' AND store IN (SELECT store FROM stores)``, whose IN becomes
    such a join, still filters the outer table's ``region``."""
    select = scope.expression
    out: dict[str, set[int]] = {}
    joins = select.args.get("joins") if isinstance(select, exp.Select) else None
    for join in joins or []:
        if (join.kind or "").upper() in ("SEMI", "ANTI") and isinstance(join.this, exp.Table):
            on = join.args.get("on")
            out[join.this.alias_or_name] = {id(c) for c in on.find_all(exp.Column)} if on is not None else set()
    return out


def _bound_inside(scope: Scope, find: TableFind, at_version: AtVersion | None) -> frozenset[int]:
    """The ids of the columns in the scope's subqueries (``ds = (SELECT max(d) FROM dates WHERE
    month = 1)``, at any depth) that name a column of a source of the subquery or of one between
    it and the scope: Spark resolves them there, so they are never a column of the scope's
    tables (``month`` is dates', not the outer table's ``month``, which made strict mode refuse
    the query as filtered on a column that is not a partition key). A column no source of them
    is known to hold (a correlated ``s.month``, or ``month`` read from a source that is not a
    warehouse table) may be the scope's: it is left to the scope's resolver."""
    innermost: dict[int, tuple[exp.Column, Scope]] = {}
    for sub in scope.subquery_scopes:
        for child in sub.traverse():  # innermost scopes first
            for col in child.columns:
                innermost.setdefault(id(col), (col, child))
    bound = set()
    for key, (col, child) in innermost.items():
        s: Scope | None = child
        while s is not None and s is not scope:
            if _names_column(s, col, find, at_version):
                bound.add(key)
                break
            s = s.parent
    return frozenset(bound)


def _names_column(scope: Scope, col: exp.Column, find: TableFind, at_version: AtVersion | None) -> bool:
    """Whether a source of ``scope`` surely holds ``col`` (by its alias when qualified, else by a
    warehouse table's or a derived table's column of its name)."""
    name, sources = col.name.lower(), _read_sources(scope)
    if col.table:
        return any(a.lower() == col.table.lower() for a in sources)
    for src in sources.values():
        if isinstance(src, Scope):
            if name in {n.lower() for n in src.expression.named_selects}:
                return True
        elif isinstance(src, exp.Table):
            table = referenced_table(src, find, at_version)
            if table is not None and any(c.name == name for c in table.all_columns):
                return True
    return False


def _resolver(scope: Scope, alias: str, table: Table, tables: dict[str, Table],
              inside: frozenset[int] = frozenset()) -> Callable[[exp.Column], str | None]:
    own = {c.name for c in table.all_columns}
    others: set[str] = set()
    semi = _semi_joined(scope)
    semi_names: dict[str, set[str]] = {}  # a semi-joined table's columns: ambiguous only in its ON
    for a, src in _read_sources(scope).items():
        if a == alias:
            continue
        if a in tables:
            names = {c.name for c in tables[a].all_columns}
        elif isinstance(src, Scope):
            names = {s.lower() for s in src.expression.named_selects}
        else:
            names = {"*"}  # unknown source: unqualified names are ambiguous
        if a in semi:
            semi_names[a] = names
        else:
            others |= names

    def resolve(col: exp.Column) -> str | None:
        if id(col) in inside:
            return None  # a column of a subquery's own source
        name = col.name.lower()
        if col.table:
            return name if col.table.lower() == alias.lower() and name in own else None
        if alias in semi and id(col) not in semi[alias]:
            return None  # outside its ON, a semi-joined table's column is never named
        if name not in own:
            return None
        for a, names in semi_names.items():
            if id(col) in semi[a] and (name in names or "*" in names):
                return None
        return name if name not in others and "*" not in others else None

    return resolve
