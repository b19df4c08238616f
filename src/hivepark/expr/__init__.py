"""The predicate tree and its visitors (no pyspark, sqlalchemy or sqlglot here)."""

from __future__ import annotations

from hivepark.expr.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
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
    Value,
    and_all,
    or_all,
)

__all__ = [
    "AlwaysFalse", "AlwaysTrue", "And", "Comparison", "EqualTo", "Expr", "GreaterThan",
    "GreaterThanOrEqual", "In", "IsNull", "LessThan", "LessThanOrEqual", "Like", "Not",
    "NotEqualTo", "NotNull", "Opaque", "Or", "Value", "and_all", "or_all",
]
