"""The predicate tree and its visitors (no pyspark, sqlalchemy or sqlglot here)."""

from __future__ import annotations

from hivepark.expr.analyzer import IndexPredicateAnalyzer, IndexSearchCondition, flip_operator
from hivepark.expr.bind import bind, bind_literal
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
from hivepark.expr.serialize import from_json, to_json
from hivepark.expr.visitors import (
    BooleanExpressionVisitor,
    conjuncts,
    evaluate,
    like_regex,
    project,
    render_literal,
    render_name,
    simplify,
    to_filter_string,
    to_nnf,
    visit,
)

__all__ = [
    "AlwaysFalse", "AlwaysTrue", "And", "Comparison", "EqualTo", "Expr", "GreaterThan",
    "GreaterThanOrEqual", "In", "IsNull", "LessThan", "LessThanOrEqual", "Like", "Not",
    "NotEqualTo", "NotNull", "Opaque", "Or", "Value", "and_all", "or_all",
    # visitors and binding (from_sqlglot is imported on its own: it needs sqlglot)
    "BooleanExpressionVisitor", "bind", "bind_literal", "conjuncts", "evaluate", "like_regex",
    "project", "render_literal", "render_name", "simplify", "to_filter_string", "to_nnf",
    "visit",
    # IndexPredicateAnalyzer and the serialized form (hive.io.filter.expr.serialized)
    "IndexPredicateAnalyzer", "IndexSearchCondition", "flip_operator", "from_json", "to_json",
]
