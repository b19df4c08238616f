"""The storage pushdown decision (Hive's ``decomposePredicate`` negotiation), pure.

Given a scan's whole filter and the table's storage handler, :func:`push_filters` decides
what the handler receives (*pushed*) and what Spark must still apply (*residual*):

* ``hive.optimize.ppd`` or ``hive.optimize.ppd.storage`` off (both on by default): nothing
  is pushed, Spark applies the whole filter;
* a handler with ``decompose_predicate``: it receives the whole filter and returns
  :class:`DecomposedPredicate` (pushed, residual), or None to decline (nothing pushed);
* a handler without it: it still receives the filter (every ``Opaque`` atom weakened to
  true, see :func:`hivepark.expr.visitors.project`) and Spark applies all of the filter,
  as in Hive.

Anything ``Opaque`` is never pushed: a pushed conjunct that holds one moves back into the
residual. The invariant (checked by a Hypothesis property): on every row,
``pushed AND residual`` is true exactly when the whole filter is. A residual of None means
no Spark filter at all.

This module imports no storage code: the handler is any object; its optional
``decompose_predicate(table, predicate)`` method is looked up by name.

Example:
    >>> from hivepark.expr.nodes import And, GreaterThan, Opaque
    >>> class RangeOnly:
    ...     def decompose_predicate(self, table, predicate):
    ...         return DecomposedPredicate(GreaterThan("x", 3), Opaque("upper(y) = 'XYZ'"))
    >>> whole = And(GreaterThan("x", 3), Opaque("upper(y) = 'XYZ'"))
    >>> d = push_filters(RangeOnly(), None, whole, {})
    >>> d.pushed, d.residual.sql, d.reason
    (GreaterThan(term='x', value=3), "upper(y) = 'XYZ'", 'decomposed by the handler')
    >>> push_filters(RangeOnly(), None, whole, {"hive.optimize.ppd.storage": "false"}).pushed is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hivepark.expr.nodes import AlwaysTrue, And, Expr, Not, Opaque, Or, and_all
from hivepark.expr.visitors import conjuncts, project, simplify

PPD = "hive.optimize.ppd"
PPD_STORAGE = "hive.optimize.ppd.storage"
PPD_DEFAULTS = {PPD: "true", PPD_STORAGE: "true"}


@dataclass(frozen=True)
class DecomposedPredicate:
    """What a handler's ``decompose_predicate`` returns (Hive's class of the same name):
    ``pushed`` the source applies, ``residual`` Spark applies (None: nothing left)."""

    pushed: Expr | None
    residual: Expr | None


class PredicateHandler(Protocol):
    """A storage handler that negotiates the filter (the optional half of the interface)."""

    def decompose_predicate(self, table: Any, predicate: Expr) -> DecomposedPredicate | None: ...


class SettingsLike(Protocol):
    def get(self, key: str, default: str | None = None, /) -> str | None: ...


@dataclass(frozen=True)
class PushdownDecision:
    """``full``: the scan's whole filter; ``pushed``: what the handler receives (None:
    nothing); ``residual``: what Spark applies (None: no Spark filter); ``reason``: why,
    in words (for EXPLAIN)."""

    full: Expr | None
    pushed: Expr | None
    residual: Expr | None
    reason: str
    exact: bool = False  # the handler applies ``pushed`` exactly (it decomposed the filter)

    def applied_by_source(self, parts: Sequence[Expr]) -> tuple[int, ...]:
        """Which of ``parts`` (conjuncts of the scan's filter, bound like ``full``) the
        source applies entirely: each of their atoms is pushed and none is residual. Spark
        need not apply those again; with no residual, that is every part.

        >>> from hivepark.expr.nodes import EqualTo, GreaterThan, Opaque
        >>> d = PushdownDecision(None, GreaterThan("a", 1), Opaque("f(b)", frozenset({"b"})), "", True)
        >>> d.applied_by_source([GreaterThan("a", 1), Opaque("f(b)", frozenset({"b"})), EqualTo("a", 2)])
        (0,)
        """
        if not self.exact or self.pushed is None:
            return ()
        pushed = set(conjuncts(self.pushed))
        residual = set(conjuncts(self.residual)) if self.residual is not None else set()
        return tuple(i for i, part in enumerate(parts)
                     if all(c in pushed and c not in residual for c in conjuncts(part)))


def _has_opaque(expr: Expr) -> bool:
    if isinstance(expr, Opaque):
        return True
    if isinstance(expr, (And, Or)):
        return _has_opaque(expr.left) or _has_opaque(expr.right)
    if isinstance(expr, Not):
        return _has_opaque(expr.child)
    return False


def _none_if_true(expr: Expr | None) -> Expr | None:
    if expr is None:
        return None
    expr = simplify(expr)
    return None if isinstance(expr, AlwaysTrue) else expr


def _enabled(settings: SettingsLike | Mapping[str, str] | None, key: str) -> bool:
    value = settings.get(key, PPD_DEFAULTS[key]) if settings is not None else PPD_DEFAULTS[key]
    return str(value if value is not None else PPD_DEFAULTS[key]).strip().lower() != "false"


def push_filters(handler: object, table: Any, predicate: Expr | None,
                 settings: SettingsLike | Mapping[str, str] | None) -> PushdownDecision:
    """Decide pushed and residual for one handler scan (see the module docstring).

    Args:
        handler: the table's storage handler; its ``decompose_predicate`` is optional.
        table: passed to ``decompose_predicate`` as it is (a catalog ``Table``).
        predicate: the scan's whole filter, bound to the column types (None: no filter).
        settings: the session's settings (a ``Config`` or a mapping).
    """
    full = _none_if_true(predicate)
    if full is None:
        return PushdownDecision(None, None, None, "no filter")
    if not _enabled(settings, PPD):
        return PushdownDecision(full, None, full, f"{PPD}=false: Spark applies the whole filter")
    if not _enabled(settings, PPD_STORAGE):
        return PushdownDecision(full, None, full, f"{PPD_STORAGE}=false: Spark applies the whole filter")
    decompose = getattr(handler, "decompose_predicate", None)
    if decompose is None:
        given = _none_if_true(project(full, full.columns()))
        return PushdownDecision(full, given, full,
                                "the handler does not decompose filters: Spark applies the whole filter")
    decomposed = decompose(table, full)
    if decomposed is None:
        return PushdownDecision(full, None, full, "the handler declined the filter")
    pushed_parts: list[Expr] = []
    residual_parts: list[Expr] = []
    pushed = _none_if_true(decomposed.pushed)
    for part in conjuncts(pushed) if pushed is not None else []:
        (residual_parts if _has_opaque(part) else pushed_parts).append(part)
    residual = _none_if_true(decomposed.residual)
    residual_parts = ([residual] if residual is not None else []) + residual_parts
    return PushdownDecision(full, _none_if_true(and_all(*pushed_parts)) if pushed_parts else None,
                            _none_if_true(and_all(*residual_parts)) if residual_parts else None,
                            "decomposed by the handler", exact=True)
