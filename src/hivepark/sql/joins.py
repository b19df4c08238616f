"""Equi-join keys between warehouse tables in one SELECT, and whether the values of one
side may prune the other (HIVE-5119's eligibility rules, extended to semi/anti joins)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from hivepark.plan.nodes import JoinKey, JoinReason

Resolver = Callable[[exp.Column], "str | None"]


def join_keys(select: exp.Select, resolvers: dict[str, Resolver],
              conjuncts: Callable[[exp.Expression | None], list[exp.Expression]]) -> list[JoinKey]:
    """Every equality between columns of two tables of this SELECT, in both directions."""
    from_ = select.args.get("from_") or select.args.get("from")
    first, null_supplying = join_sources(from_.this) if from_ is not None else (set(), set())
    preceding = set(first)
    keys: list[JoinKey] = []
    joined = [(join, join_sources(join.this)) for join in select.args.get("joins") or []]
    tables = {a.lower() for a in resolvers}
    derived = {a.lower() for a in first.union(*(r for _, (r, _) in joined))} - tables
    for join, (right, inner_null) in joined:
        null_supplying |= inner_null
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        for cond in conjuncts(join.args.get("on")):
            for big, bcol, small, scol, why, detail in _pairs(cond, resolvers, derived):
                by_join = _join_reason(big in right, side, kind)
                if why in _DERIVED and by_join is not None:  # the join's own reason first
                    why, detail = by_join, ""
                keys.append(JoinKey(big, bcol, small, scol, why or by_join, detail))
        null_supplying |= outer_null_supplying(preceding, right, side, kind)
        preceding |= right
    where = select.args.get("where")
    for cond in conjuncts(where.this if where is not None else None):
        for big, bcol, small, scol, why, detail in _pairs(cond, resolvers, derived):
            if (why is None or why in _DERIVED) and (big in null_supplying or small in null_supplying):
                why, detail = JoinReason.NULL_SUPPLYING, ""
            keys.append(JoinKey(big, bcol, small, scol, why, detail))
    return keys


_DERIVED = (JoinReason.THROUGH_DERIVED, JoinReason.NOT_A_TABLE)
"""What :func:`_pairs` says of a key with a subquery's, a CTE's or a view's column on one side (or
both): ``sql/analyzer.py`` follows it to the table column it passes through, if any."""


def join_sources(node: exp.Expression) -> tuple[set[str], set[str]]:
    """The aliases of the tables a FROM or JOIN item reads (a table, a derived table, or every
    table of a parenthesised join, ``(f LEFT JOIN e ON ...)``, at any nesting), and those of
    them on a null-supplying side of an outer join inside it.

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT 1 FROM d RIGHT JOIN ((f LEFT JOIN e ON f.k = e.k) "
    ...                       "CROSS JOIN g) ON f.k = d.k", read="hive")
    >>> [sorted(s) for s in join_sources(q.args["joins"][0].this)]
    [['e', 'f', 'g'], ['e']]
    """
    if isinstance(node, exp.Subquery) and isinstance(node.this, (exp.Table, exp.Subquery)):
        aliases, null_supplying = join_sources(node.this)  # a parenthesised join
    elif isinstance(node, (exp.Table, exp.Subquery)):
        aliases, null_supplying = {node.alias_or_name}, set()
    else:
        return set(), set()
    for join in node.args.get("joins") or []:
        right, inner_null = join_sources(join.this)
        null_supplying |= inner_null | outer_null_supplying(
            aliases, right, (join.side or "").upper(), (join.kind or "").upper())
        aliases |= right
    return aliases, null_supplying


def outer_null_supplying(left: set[str], right: set[str], side: str, kind: str) -> set[str]:
    """The tables an outer join ``left <side> JOIN right`` may extend with NULLs."""
    if side == "LEFT" and kind not in ("SEMI", "ANTI"):
        return set(right)
    if side == "RIGHT":
        return set(left)
    if side == "FULL":
        return left | right
    return set()


def _join_reason(big_is_right: bool, side: str, kind: str) -> JoinReason | None:
    """Why the big table, on the join's right side or not, cannot be pruned by the other
    side of this join (None when it can)."""
    if kind in ("SEMI", "ANTI"):
        if kind == "ANTI" and not big_is_right:
            return JoinReason.ANTI
        return None
    if side == "FULL":
        return JoinReason.FULL_OUTER
    if side == "LEFT" and not big_is_right:
        return JoinReason.LEFT_PRESERVED
    if side == "RIGHT" and big_is_right:
        return JoinReason.RIGHT_PRESERVED
    return None


def _owner(col: exp.Column, resolvers: dict[str, Resolver]) -> tuple[str, str] | None:
    hits = [(alias, name) for alias, r in resolvers.items() if (name := r(col)) is not None]
    return hits[0] if len(hits) == 1 else None


def _pairs(cond: exp.Expression, resolvers: dict[str, Resolver], derived: frozenset[str] | set[str] = frozenset()
           ) -> list[tuple[str, str, str, str, JoinReason | None, str]]:
    """The keys ``cond`` joins on, each way; with ``derived`` (the aliases of the SELECT's
    subqueries, CTEs and views), a table's column equal to one of theirs, which cannot prune."""
    cond = cond.unnest() if isinstance(cond, exp.Paren) else cond
    if not isinstance(cond, exp.EQ):
        return []
    left, right = cond.this.unnest(), cond.expression.unnest()
    if isinstance(left, exp.Column) and isinstance(right, exp.Column):
        a, b = _owner(left, resolvers), _owner(right, resolvers)
        for mine, other in ((a, right), (b, left)):
            if mine is not None and other.table and other.table.lower() in derived and _owner(other, resolvers) is None:
                return [(mine[0], mine[1], other.table, other.name.lower(), JoinReason.NOT_A_TABLE, other.table),
                        (other.table, other.name.lower(), mine[0], mine[1], JoinReason.THROUGH_DERIVED, other.table)]
        if a is None and b is None and left.table and right.table and left.table.lower() != right.table.lower() \
                and {left.table.lower(), right.table.lower()} <= set(derived):  # two subqueries' columns
            lk, rk = left.name.lower(), right.name.lower()
            return [(left.table, lk, right.table, rk, JoinReason.THROUGH_DERIVED, left.table),
                    (right.table, rk, left.table, lk, JoinReason.THROUGH_DERIVED, right.table)]
        if a is None or b is None or a[0] == b[0]:
            return []
        return [(a[0], a[1], b[0], b[1], None, ""), (b[0], b[1], a[0], a[1], None, "")]
    out: list[tuple[str, str, str, str, JoinReason | None, str]] = []
    for plain, wrapped in ((left, right), (right, left)):
        if not isinstance(plain, exp.Column):
            continue
        owner = _owner(plain, resolvers)
        inner = [o for c in wrapped.find_all(exp.Column) if (o := _owner(c, resolvers))]
        for alias, name in inner:
            if owner is not None and alias != owner[0]:
                out.append((alias, name, owner[0], owner[1], JoinReason.KEY_IN_FUNCTION,
                            f"{alias}.{name}"))
                out.append((owner[0], owner[1], alias, name, JoinReason.OTHER_SIDE_EXPRESSION,
                            wrapped.sql(dialect="hive")))
    return out
