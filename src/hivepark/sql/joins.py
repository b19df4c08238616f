"""Equi-join keys between warehouse tables in one SELECT, and whether the values of one
side may prune the other (HIVE-5119's eligibility rules, extended to semi/anti joins)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from hivepark.plan.nodes import JoinKey, JoinReason

Resolver = Callable[[exp.Column], "str | None"]


def join_keys(select: exp.Select, resolvers: dict[str, Resolver],
              conjuncts: Callable[[exp.Expression | None], list[exp.Expression]],
              source_alias: Callable[[exp.Expression], str | None]) -> list[JoinKey]:
    """Every equality between columns of two tables of this SELECT, in both directions."""
    from_ = select.args.get("from_") or select.args.get("from")
    order: list[str | None] = [source_alias(from_.this)] if from_ is not None else []
    null_supplying: set[str | None] = set()
    keys: list[JoinKey] = []
    for join in select.args.get("joins") or []:
        right = source_alias(join.this)
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        for cond in conjuncts(join.args.get("on")):
            for big, bcol, small, scol, why, detail in _pairs(cond, resolvers):
                keys.append(JoinKey(big, bcol, small, scol,
                                    why or _join_reason(big, right, side, kind), detail))
        if side == "LEFT" and kind not in ("SEMI", "ANTI"):
            null_supplying.add(right)
        elif side == "RIGHT":
            null_supplying.update(order)
        elif side == "FULL":
            null_supplying.update(order)
            null_supplying.add(right)
        order.append(right)
    where = select.args.get("where")
    for cond in conjuncts(where.this if where is not None else None):
        for big, bcol, small, scol, why, detail in _pairs(cond, resolvers):
            if why is None and (big in null_supplying or small in null_supplying):
                why = JoinReason.NULL_SUPPLYING
            keys.append(JoinKey(big, bcol, small, scol, why, detail))
    return keys


def _join_reason(big: str, right: str | None, side: str, kind: str) -> JoinReason | None:
    """Why ``big`` cannot be pruned by the other side of this join (None when it can)."""
    big_is_right = big == right
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


def _pairs(cond: exp.Expression, resolvers: dict[str, Resolver]
           ) -> list[tuple[str, str, str, str, JoinReason | None, str]]:
    cond = cond.unnest() if isinstance(cond, exp.Paren) else cond
    if not isinstance(cond, exp.EQ):
        return []
    left, right = cond.this.unnest(), cond.expression.unnest()
    if isinstance(left, exp.Column) and isinstance(right, exp.Column):
        a, b = _owner(left, resolvers), _owner(right, resolvers)
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
