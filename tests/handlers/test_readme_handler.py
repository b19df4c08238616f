"""The README's complete handler example runs as written: its Python block defines and
registers the handler, its SQL creates a table through it, and the rows equal plain Spark's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks(lang: str) -> list[str]:
    text = README.read_text()
    section = text[text.index("## Storage handlers and filter pushdown"):]
    section = section[: section.index("\n## ", 5)]
    return re.findall(rf"```{lang}\n(.*?)```", section, flags=re.S)


@pytest.fixture(scope="module")
def numbers_handler():
    code = next(b for b in _blocks("python") if "class NumbersHandler" in b)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    return namespace["NumbersHandler"]


def test_readme_handler_reads_only_the_pushed_range(wh, spark, numbers_handler):
    create, query = next(b for b in _blocks("sql") if "NumbersStorageHandler" in b).strip().splitlines()
    wh.sql(create)
    got = wh.sql(query.split("--")[0].strip().rstrip(";")).collect()
    want = spark.sql("SELECT count(*) FROM range(1000000) WHERE id >= 10 AND id < 20 AND id % 2 = 0").collect()
    assert got == want == [(5,)]
    plan = "\n".join(r[0] for r in wh.sql("EXPLAIN " + query.split("--")[0].strip().rstrip(";")).collect())
    assert "((id >= 10) and (id < 20))" in plan, plan
    assert "residual: (id % 2 = 0)" in plan, plan


@pytest.mark.parametrize("where", ["id > 2.5 AND id <= 7", "id = 999999", "id < 0", "id >= 5 OR id = 1",
                                   "id BETWEEN 100 AND 90", "id = 3.5"])
def test_readme_handler_rows_equal_spark(wh, spark, numbers_handler, where):
    wh.sql("CREATE EXTERNAL TABLE IF NOT EXISTS numbers STORED BY 'numbers' TBLPROPERTIES ('numbers.n'='1000000')")
    got = sorted(wh.sql(f"SELECT id FROM numbers WHERE {where}").collect())
    want = sorted(spark.sql(f"SELECT id FROM range(1000000) WHERE {where}").collect())
    assert got == want


def _spark_plan(wh, query: str) -> str:
    text = "\n".join(r[0] for r in wh.sql("EXPLAIN EXTENDED " + query).collect())
    return text[text.index("== Spark plan =="):]


def test_what_the_source_applied_is_not_filtered_again(wh, spark, numbers_handler):
    """Hive drops the Filter operator when the residual is empty; so does hivepark: Spark's
    plan keeps only the residual conjuncts."""
    wh.sql("CREATE EXTERNAL TABLE IF NOT EXISTS numbers STORED BY 'numbers' TBLPROPERTIES ('numbers.n'='1000000')")
    only_pushed = _spark_plan(wh, "SELECT id FROM numbers WHERE id BETWEEN 10 AND 12")
    assert "Filter" not in only_pushed, only_pushed
    mixed = _spark_plan(wh, "SELECT id FROM numbers WHERE id >= 10 AND id < 20 AND id % 2 = 0")
    filters = [line for line in mixed.splitlines() if "Filter" in line]
    assert len(filters) == 1 and "% 2" in filters[0] and ">=" not in filters[0], mixed
    wh.sql("SET hive.optimize.ppd.storage=false")
    try:
        off = _spark_plan(wh, "SELECT id FROM numbers WHERE id BETWEEN 10 AND 12")
        assert "Filter" in off and ">= 10" in off, off
    finally:
        wh.sql("SET hive.optimize.ppd.storage=true")
