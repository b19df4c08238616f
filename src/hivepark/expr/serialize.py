"""The serialized form of a predicate (Hive's ``hive.io.filter.expr.serialized``): JSON.

Every node and every literal round-trips exactly: ``from_json(to_json(e)) == e``. Literals
carry a type tag (``int``, ``decimal``, ``float`` as ``float.hex``, ``date``, ``timestamp``,
``str``, ``bool``, ``null``) so a decimal stays a decimal and a date a date.

Example:
    >>> import datetime
    >>> from hivepark.expr.nodes import And, EqualTo, In
    >>> e = And(EqualTo("ds", datetime.date(2008, 4, 8)), In("hr", (1, None)))
    >>> '"value": {"date": "2008-04-08"}' in to_json(e)
    True
    >>> from_json(to_json(e)) == e
    True
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from typing import Any

from hivepark.errors import UserInputError
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
)

_COMPARISONS: dict[str, type[Comparison]] = {
    c.op: c for c in (EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual)
}


def _value(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v) if abs(v) >= 2**53 else v}
    if isinstance(v, float):
        return {"float": v.hex()}
    if isinstance(v, Decimal):
        return {"decimal": str(v)}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, datetime.datetime):
        return {"timestamp": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"date": v.isoformat()}
    raise TypeError(f"Not a literal value: {v!r}")


def _read_value(d: Any) -> Any:
    if d is None:
        return None
    (tag, raw), = d.items()
    if tag == "bool":
        return bool(raw)
    if tag == "int":
        return int(raw)
    if tag == "float":
        return float.fromhex(raw)
    if tag == "decimal":
        return Decimal(raw)
    if tag == "str":
        return str(raw)
    if tag == "timestamp":
        return datetime.datetime.fromisoformat(raw)
    if tag == "date":
        return datetime.date.fromisoformat(raw)
    raise ValueError(f"unknown literal tag {tag!r}")


def to_dict(expr: Expr) -> dict[str, Any]:
    """The JSON-ready dictionary of a predicate."""
    if isinstance(expr, AlwaysTrue):
        return {"op": "true"}
    if isinstance(expr, AlwaysFalse):
        return {"op": "false"}
    if isinstance(expr, (And, Or)):
        return {"op": "and" if isinstance(expr, And) else "or",
                "left": to_dict(expr.left), "right": to_dict(expr.right)}
    if isinstance(expr, Not):
        return {"op": "not", "child": to_dict(expr.child)}
    if isinstance(expr, IsNull):
        return {"op": "is null", "term": expr.term}
    if isinstance(expr, NotNull):
        return {"op": "is not null", "term": expr.term}
    if isinstance(expr, Comparison):
        return {"op": expr.op, "term": expr.term, "value": _value(expr.value)}
    if isinstance(expr, In):
        return {"op": "in", "term": expr.term, "values": [_value(v) for v in expr.values]}
    if isinstance(expr, Like):
        return {"op": "like", "term": expr.term, "pattern": expr.pattern}
    if isinstance(expr, Opaque):
        return {"op": "opaque", "sql": expr.sql, "refs": sorted(expr.refs)}
    raise TypeError(f"Cannot serialize {type(expr).__name__}: not a predicate node")


def from_dict(d: dict[str, Any]) -> Expr:
    """The predicate of a dictionary made by :func:`to_dict`."""
    op = d["op"]
    if op == "true":
        return AlwaysTrue()
    if op == "false":
        return AlwaysFalse()
    if op == "and":
        return And(from_dict(d["left"]), from_dict(d["right"]))
    if op == "or":
        return Or(from_dict(d["left"]), from_dict(d["right"]))
    if op == "not":
        return Not(from_dict(d["child"]))
    if op == "is null":
        return IsNull(d["term"])
    if op == "is not null":
        return NotNull(d["term"])
    if op in _COMPARISONS:
        return _COMPARISONS[op](d["term"], _read_value(d["value"]))
    if op == "in":
        return In(d["term"], tuple(_read_value(v) for v in d["values"]))
    if op == "like":
        return Like(d["term"], d["pattern"])
    if op == "opaque":
        return Opaque(d["sql"], frozenset(d["refs"]))
    raise ValueError(f"unknown node {op!r}")


def to_json(expr: Expr) -> str:
    """The serialized form (compact, keys in a fixed order)."""
    return json.dumps(to_dict(expr), ensure_ascii=False)


def from_json(text: str) -> Expr:
    """The predicate of a serialized form.

    Raises:
        UserInputError: The text is not a serialized predicate.
    """
    try:
        return from_dict(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise UserInputError(f"Not a serialized predicate (hive.io.filter.expr.serialized): {e}") from None
