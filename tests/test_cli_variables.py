"""Hive's variables and beeline's output formats (issue 14, item 5, part): ``--hivevar``,
``-i``, ``SET hivevar:k=v``, ``${k}``/``${hivevar:k}``/``${hiveconf:k}`` substituted and
``${env:...}`` never; ``--outputformat tsv2|csv2|json`` with values holding tabs, quotes and
line breaks round-tripping and NULL distinct from 'NULL'; a statement ending in ``; -- note``."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

import background
from background import Background
from cli_command import hivepark_command
from hivepark.sql.parser import statement_ends, substitute_variables


@pytest.mark.parametrize("text,ends", [
    ("SELECT 1;", True), ("SELECT 1; -- done", True), ("SELECT 'a;", False),
    ("SELECT 'a;\nb';", True), ("SELECT 1 -- not yet;", False), ("SELECT ';' -- x\n", False),
    ("SELECT 'it\\'s';", True),
])
def test_when_the_shell_runs_what_it_read(text, ends):
    assert statement_ends(text) is ends


@pytest.mark.parametrize("lines,entry", [
    ("SELECT 6\n-- a comment\n;", "SELECT 6 ;"),
    ("SELECT 'x\ny' AS s,  -- the value\n  \"a\\\"\nb\"\nFROM t; -- done",
     "SELECT 'x\\ny' AS s, \"a\\\"\\nb\" FROM t;"),
])
def test_a_statement_read_over_several_lines_is_recalled_as_one_line_that_runs_it(lines, entry):
    """Its lines were joined with spaces: a ``--`` comment then commented out the rest, and a
    string literal spanning lines lost its line break."""
    from hivepark.cli import history_entry
    from hivepark.sql.parser import parse_one

    assert history_entry(lines) == entry
    if "FROM t" in lines:  # the same statement: the literal keeps its line break
        assert parse_one(entry.rstrip(";")).statement == parse_one(lines.split(";")[0]).statement


def test_substitution_rules():
    conf = {"hive.x": "conf-x", "dt": "conf-dt"}.get
    assert substitute_variables("${dt} ${hivevar:dt} ${hiveconf:dt} ${hive.x} ${nope} ${env:HOME}",
                                {"dt": "var-dt"}, conf) == "var-dt var-dt conf-dt conf-x ${nope} ${env:HOME}"


@pytest.mark.parametrize("hivevars", [{"r": "${r}x"}, {"a": "${a}"}, {"a": "${b}", "b": "${a}"}])
def test_a_variable_defined_by_itself_is_refused_with_hives_error(hivevars):
    """As Hive's SystemVariables.substitute: a text still holding a defined variable after 40
    rounds fails (it was expanded 40 times, or left as written, silently)."""
    text = "SELECT '${r}${a}'"
    with pytest.raises(ValueError) as e:
        substitute_variables(text, hivevars, {}.get)
    assert str(e.value) == f"Variable substitution depth is deeper than 40 for expression {text}"


def test_substitution_goes_40_rounds_deep():
    chain = {f"v{i}": f"${{v{i + 1}}}" for i in range(39)} | {"v39": "end"}  # 40 rounds
    assert substitute_variables("${v0}", chain, {}.get) == "end"
    with pytest.raises(ValueError, match="deeper than 40"):
        substitute_variables("${v0}", {**chain, "v39": "${v40}", "v40": "end"}, {}.get)


SCRIPT = """\
CREATE TABLE t (id INT, s STRING) STORED AS PARQUET;
INSERT INTO t VALUES (1, 'tab\\there'), (2, 'quote " and, comma'), (3, 'line\\nbreak'), (4, 'NULL'), (5, NULL),
  (6, '');
SET hivevar:lo=2;
SELECT id, s FROM t WHERE id >= ${lo} AND id <= ${hivevar:hi} ORDER BY id; -- the rows
SELECT '${env:HOME}' AS h, '${hiveconf:hive.mapred.mode}' AS m;
"""


def _runs(bg: Background) -> None:
    """The CLI runs of the test, in order (the second reads the first's table), in the
    background as the suite starts (tests/background.py): each starts a JVM."""
    wh = os.path.join(bg.tmp, "wh")
    init, script = os.path.join(bg.tmp, "init.sql"), os.path.join(bg.tmp, "s.sql")
    with open(init, "w") as f:
        f.write("SET hivevar:hi=6;\n")
    with open(script, "w") as f:
        f.write(SCRIPT)
    bg.put("run", bg.run([*hivepark_command(), "--warehouse", wh, "-S", "-i", init, "--hivevar", "unused=1",
                          "--outputformat", "csv2", "-f", script]))
    bg.put("json", bg.run([*hivepark_command(), "--warehouse", wh, "-S", "--outputformat", "json", "-e",
                           "SELECT id, s FROM t WHERE id IN (1, 4, 5) ORDER BY id"]))
    bg.put("bad", bg.run([*hivepark_command(), "--warehouse", wh, "--outputformat", "xml", "-e", "SELECT 1"],
                         timeout=60))


BACKGROUND_TESTS = {"test_variables_init_file_and_output_formats": _runs}


def test_variables_init_file_and_output_formats():
    runs = background.start(_runs)
    run = runs.get("run")
    assert run.returncode == 0, run.stderr
    out = run.stdout.split("id,s\n", 1)[1]
    rows, rest = out.split("h,m\n")
    parsed = list(csv.reader(io.StringIO(rows)))
    assert parsed == [["2", 'quote " and, comma'], ["3", "line\nbreak"], ["4", "NULL"], ["5", ""], ["6", ""]]
    assert '5,\n' in rows and '6,""\n' in rows  # NULL is an empty field, '' is ""
    assert rest == "${env:HOME},nonstrict\n"
    js = runs.get("json")
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout) == {"resultset": [{"id": 1, "s": "tab\there"}, {"id": 4, "s": "NULL"},
                                                   {"id": 5, "s": None}]}
    bad = runs.get("bad")
    assert bad.returncode == 1 and "--outputformat must be one of table, tsv2, csv2, json" in bad.stderr
