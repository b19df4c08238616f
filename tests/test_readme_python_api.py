"""The README's Python API example runs as written (found by following it as a new user: it
inserted ``spark_df``, which it never defined), and leaves the table it describes."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readmes_python_api_example_runs_as_written(spark, tmp_path, monkeypatch, capsys):
    text = README.read_text()
    section = text[text.index("## The Python API"):]
    code = re.findall(r"```python\n(.*?)```", section[: section.index("\n## ", 5)], flags=re.S)[0]
    monkeypatch.chdir(tmp_path)  # its warehouse is ./warehouse
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    assert "partitions=1/1" in capsys.readouterr().out  # its print(wh.explain(...))
    parts = spark.read.parquet(str(tmp_path / "warehouse" / "page_views")).orderBy("user_id").collect()
    assert [(r.user_id, r.url, str(r.ds), r.hr) for r in parts] == [
        (1, "/", "2024-05-01", 9), (2, "/cart", "2024-05-01", 9), (3, "/help", "2024-05-02", 10)]
