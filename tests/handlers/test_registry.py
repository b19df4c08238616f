"""Finding handlers: built-in names and Hive class names, a third-party handler installed
through the ``hivepark.storage_handlers`` entry point group, and the unknown-handler error."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from hivepark.catalog.models import Column, Table
from hivepark.expr import GreaterThanOrEqual, LessThan, Opaque, and_all
from hivepark.storage.handlers import (
    UnknownStorageHandler,
    get_handler,
    handler_for,
    push_filters,
)

TINY = '''
from hivepark.expr import IndexPredicateAnalyzer
from hivepark.storage.handlers import DecomposedPredicate, StorageHandler


class RangeHandler(StorageHandler):
    """The numbers 0 .. range.n - 1; pushes bounds on id."""

    name = "tiny-range"
    aliases = ("com.example.RangeStorageHandler",)

    def validate(self, properties):
        int(properties["range.n"])

    def schema(self, properties):
        return [("id", "bigint")]

    def decompose_predicate(self, table, predicate):
        analyzer = IndexPredicateAnalyzer()
        for op in (">=", "<"):
            analyzer.add_comparison_op(op)
        analyzer.clear_allowed_column_names()
        analyzer.allow_column_name("id")
        conditions = []
        residual = analyzer.analyze_predicate(predicate, conditions)
        if not conditions:
            return None
        return DecomposedPredicate(analyzer.translate_search_conditions(conditions), residual)

    def read(self, spark, table, columns, pushed, settings):
        from hivepark.expr import IndexPredicateAnalyzer as A
        lo, hi = 0, int(table.properties["range.n"])
        conds = []
        a = A()
        a.add_comparison_op(">=")
        a.add_comparison_op("<")
        if pushed is not None:
            a.analyze_predicate(pushed.expr, conds)
        for c in conds:
            lo, hi = (max(lo, c.constant), hi) if c.operator == ">=" else (lo, min(hi, c.constant))
        return spark.range(lo, max(lo, hi)).select(*columns)
'''


@pytest.fixture
def tiny_installed(tmp_path, monkeypatch):
    """A package with a dist-info declaring the entry point, on a temporary sys.path entry."""
    (tmp_path / "tiny_handler.py").write_text(TINY)
    info = tmp_path / "tiny_handler-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-handler\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""\
        [hivepark.storage_handlers]
        tiny-range = tiny_handler:RangeHandler
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield
    sys.modules.pop("tiny_handler", None)


def _table(handler: str, **props: str) -> Table:
    return Table("default", "t", (Column("id", "bigint"),), location="",
                 properties={"storage_handler": handler, **props})


def test_builtin_handler_answers_to_hive_class_name():
    assert get_handler("org.apache.hive.storage.jdbc.JdbcStorageHandler") is get_handler("jdbc")
    assert get_handler("jdbc").name == "jdbc"


def test_unknown_handler_is_a_clear_error():
    with pytest.raises(UnknownStorageHandler) as e:
        handler_for(_table("org.example.NoSuchHandler"))
    msg = str(e.value)
    assert "Unknown storage handler 'org.example.NoSuchHandler'" in msg
    assert "hivepark.storage_handlers" in msg and "jdbc" in msg


def test_table_without_handler_has_none():
    assert handler_for(Table("default", "t", (Column("id", "bigint"),))) is None


def test_third_party_handler_found_through_entry_point(tiny_installed):
    by_name = handler_for(_table("tiny-range", **{"range.n": "10"}))
    assert type(by_name).__name__ == "RangeHandler"
    assert handler_for(_table("com.example.RangeStorageHandler")) is by_name
    whole = and_all(GreaterThanOrEqual("id", 3), LessThan("id", 6), Opaque("id % 2 = 0", frozenset({"id"})))
    d = push_filters(by_name, None, whole, {})
    assert d.pushed == and_all(GreaterThanOrEqual("id", 3), LessThan("id", 6))
    assert d.residual == Opaque("id % 2 = 0", frozenset({"id"}))


def test_third_party_handler_reads_with_spark(tiny_installed, spark):
    from hivepark.storage.handlers import PushedFilter

    table = _table("tiny-range", **{"range.n": "100"})
    handler = handler_for(table)
    assert handler is not None
    whole = and_all(GreaterThanOrEqual("id", 10), LessThan("id", 20), Opaque("id % 2 = 0", frozenset({"id"})))
    d = push_filters(handler, table, whole, {})
    assert d.pushed is not None and d.residual is not None
    df = handler.read(spark, table, ["id"], PushedFilter(d.pushed), {}).filter(d.residual.sql)  # type: ignore
    expected = spark.range(0, 100).filter("id >= 10 AND id < 20 AND id % 2 = 0")
    assert sorted(r.id for r in df.collect()) == sorted(r.id for r in expected.collect())


def test_masked_properties_hide_passwords():
    masked = get_handler("jdbc").masked_properties({"hive.sql.dbcp.password": "s3cret", "hive.sql.table": "t"})
    assert masked == {"hive.sql.dbcp.password": "********", "hive.sql.table": "t"}
