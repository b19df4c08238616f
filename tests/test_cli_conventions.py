"""The Hive CLI's conventions (issue 14, items 2 and 5, part): after each statement ``OK`` and
``Time taken: ... seconds[, Fetched: N row(s)]`` on stderr, never stdout; ``-S`` silences them;
``--database`` starts in a database; ``--version``."""

from __future__ import annotations

import os
import re

import background
import hivepark
from background import Background
from cli_command import hivepark_command

SCRIPT = ("CREATE DATABASE IF NOT EXISTS sales; USE sales; CREATE TABLE t (a INT) STORED AS PARQUET; "
          "INSERT INTO t VALUES (1), (2); SELECT a FROM t ORDER BY a;")


def _runs(bg: Background) -> None:
    """The CLI runs of the test, in order (the second reads the first's table), in the
    background as the suite starts (tests/background.py): each starts a JVM."""
    wh = os.path.join(bg.tmp, "wh")
    bg.put("first", bg.run([*hivepark_command(), "--warehouse", wh, "-e", SCRIPT]))
    bg.put("second", bg.run([*hivepark_command(), "--warehouse", wh, "--database", "sales", "-S", "-e",
                             "SELECT count(*) FROM t"]))
    bg.put("missing", bg.run([*hivepark_command(), "--warehouse", wh, "--database", "nope", "-e", "SELECT 1"]))
    bg.put("version", bg.run([*hivepark_command(), "--version"], timeout=60))


BACKGROUND_TESTS = {"test_trailer_silence_database_and_version": _runs}


def test_trailer_silence_database_and_version():
    runs = background.start(_runs)
    first = runs.get("first")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "1\n2\n"  # rows only: the trailer is on stderr
    lines = first.stderr.splitlines()
    assert lines.count("OK") == 5
    taken = [line for line in lines if line.startswith("Time taken: ")]
    assert len(taken) == 5 and re.fullmatch(r"Time taken: \d+\.\d{3} seconds, Fetched: 2 row\(s\)", taken[-1])
    assert re.fullmatch(r"Time taken: \d+\.\d{3} seconds", taken[0])
    second = runs.get("second")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "2\n" and second.stderr == ""
    missing = runs.get("missing")
    assert missing.returncode == 1 and missing.stdout == ""
    assert "FAILED: Database does not exist: nope" in missing.stderr
    version = runs.get("version")
    assert version.returncode == 0 and version.stdout == f"hivepark {hivepark.__version__}\n"


def test_values_print_as_hives_cli_prints_them():
    """Found by a hunt for bugs: ARRAY, MAP, STRUCT and BINARY values and large DOUBLEs printed as
    Python's reprs (['p', 'q'], Row(x=1, y='z'), b'ab', 1e+20), which nothing downstream parses."""
    import datetime
    from decimal import Decimal

    from pyspark.sql import Row

    from hivepark.cli import _format

    assert _format(["p", "q"]) == '["p","q"]' and _format([]) == "[]"
    assert _format({"k": 1, "j": None}) == '{"k":1,"j":null}'
    assert _format(Row(x=1, y="z", d=datetime.date(2024, 1, 5), m=Decimal("1.50"))) == \
        '{"x":1,"y":"z","d":"2024-01-05","m":1.50}'
    assert _format([Row(a=[1.5, None])]) == '[{"a":[1.5,null]}]'
    assert _format(b"ab") == "ab" and _format(None) == "NULL" and _format(True) == "true"
    assert [_format(x) for x in (1e20, 2.0, 0.001, 1e-4, -12345678.9, 1234567.0, float("nan"), -0.0)] == \
        ["1.0E20", "2.0", "0.001", "1.0E-4", "-1.23456789E7", "1234567.0", "NaN", "-0.0"]
    assert _format(0.10000000149011612, single=True) == "0.1"  # a FLOAT column's value


def test_decimals_print_in_plain_notation_with_their_scale():
    """A DECIMAL prints as Hive pads it to its column's scale (HIVE-12063), never in Python's
    scientific notation (``0E-18``, ``1.00000000000E-7``), in every output format."""
    from decimal import Decimal

    from hivepark.cli import _cell, _format

    zero, small = Decimal("0E-18"), Decimal("1.00000000000E-7")  # Spark's DECIMAL(38,18) values
    assert _format(zero) == "0.000000000000000000" and _format(small) == "0.000000100000000000"
    assert _format(Decimal("1.00E-8")) == "0.0000000100" and _format(Decimal("12345.600")) == "12345.600"
    assert _format([Decimal("0E-8")]) == "[0.00000000]"  # inside an ARRAY
    assert _cell(zero) == "0.000000000000000000"  # tsv2, csv2 and json


class _Rows:
    """What print_formatted reads of a DataFrame."""

    def __init__(self, columns: list[str], types: list[str], rows: list[tuple]) -> None:
        from pyspark.sql.types import DoubleType, FloatType, StructField, StructType

        kinds = {"double": DoubleType(), "float": FloatType()}
        self.columns = columns
        self.schema = StructType([StructField(c, kinds[t]) for c, t in zip(columns, types)])
        self._rows = rows

    def toLocalIterator(self):  # noqa: N802 - DataFrame's name
        return iter(self._rows)


def test_json_output_is_valid_json_with_nan_and_infinity(capsys):
    import json

    from hivepark.cli import print_formatted

    inf = float("inf")
    df = _Rows(["n", "i", "m", "f", "x"], ["double", "double", "double", "float", "double"],
               [(float("nan"), inf, -inf, inf, 1.5)])
    assert print_formatted(df, "json") == 1

    def refuse(token: str) -> None:
        raise AssertionError(f"not JSON: {token}")

    out = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert out == {"resultset": [{"n": "NaN", "i": "Infinity", "m": "-Infinity", "f": "Infinity", "x": 1.5}]}


def test_json_output_keeps_every_column_of_a_name(capsys):
    """Found by following the README: ``--outputformat json`` made each row a dict, so of two
    columns of one name (``SELECT a.id, b.id``) only the last was printed."""
    import json

    from hivepark.cli import print_formatted

    df = _Rows(["id", "id", "x"], ["double", "double", "double"], [(1.0, 2.0, None)])
    assert print_formatted(df, "json") == 1
    text = capsys.readouterr().out
    rows = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    assert rows == [("resultset", [[("id", 1.0), ("id", 2.0), ("x", None)]])]
