"""What a test compares: a query's rows in a stable order, the error a statement raises."""

from __future__ import annotations

import pytest

from hivepark.errors import HiveParkError


def rows(df) -> list[tuple]:
    """A DataFrame's rows as tuples, sorted (the order a query does not promise is not compared)."""
    return sorted((tuple(r) for r in df.collect()), key=repr)


def error(wh, sql: str) -> HiveParkError:
    """The hivepark error running ``sql`` raises (the test fails if it raises none)."""
    with pytest.raises(HiveParkError) as info:
        wh.sql(sql).collect()
    return info.value
