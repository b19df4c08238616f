"""A query the CLI runs whose files a concurrent INSERT OVERWRITE replaced after it planned
(issue 13, item 4) runs again on the new version instead of failing: two connections, the
overwrite made by the second one between the first one's planning and its reading."""

from __future__ import annotations

import hivepark
from hivepark import cli


def test_a_query_planned_before_an_overwrite_is_run_again(wh, capsys, monkeypatch):
    wh.sql("CREATE TABLE t (a INT) STORED AS PARQUET")
    wh.sql("INSERT INTO t VALUES (1), (2)")
    other = hivepark.connect(wh.location, spark=wh.spark)
    real = cli.print_result
    calls: list[int] = []

    def overwritten_before_reading(df, tty):
        calls.append(1)
        if len(calls) == 1:
            other.sql("INSERT OVERWRITE TABLE t SELECT 7")  # replaces the files df planned on
        return real(df, tty)

    monkeypatch.setattr(cli, "print_result", overwritten_before_reading)
    assert cli.run_script(wh, "SELECT a FROM t ORDER BY a", verbose=False, tty=False, silent=True)
    assert capsys.readouterr().out == "7\n"
    assert len(calls) == 2  # the first reading found its files gone and printed nothing
    other.close()
