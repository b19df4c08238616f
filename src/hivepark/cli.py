"""The ``hivepark`` command: -e, -f, or an interactive shell, like Hive's CLI."""

from __future__ import annotations

import datetime
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import typer

from hivepark.errors import HiveParkError, mask_credentials

# No rich traceback with local variables (they hold the --metastore URL and its password):
# every error is one masked line, or a masked plain traceback with --verbose.
app = typer.Typer(add_completion=False, help="hivepark: a Hive-compatible warehouse on Spark.",
                  pretty_exceptions_enable=False, pretty_exceptions_show_locals=False)

HISTORY = Path(os.environ.get("HIVEPARK_HISTORY", Path.home() / ".hivepark_history"))


def _format(value: object, single: bool = False) -> str:
    """A value as Hive's CLI prints it: NULL, ``true``, a DOUBLE as Java prints it (``1.0E20``),
    an ARRAY, MAP or STRUCT as Hive's JSON-like text (``["p","q"]``, ``{"k":1}``, ``{"x":1,"y":"z"}``),
    BINARY as its bytes, a DECIMAL in plain notation with its column's scale (``0.000000000000000000``
    for a DECIMAL(38,18) zero, as Hive pads it, never ``0E-18``); ``single``: a FLOAT column's value
    (Java prints its shortest float text).

    >>> _format([1.0e20, None, "ab"]), _format({"k": [True]}), _format(0.1), _format(12345678.0)
    ('[1.0E20,null,"ab"]', '{"k":[true]}', '0.1', '1.2345678E7')
    >>> from decimal import Decimal
    >>> _format(Decimal("0E-18")), _format([Decimal("1.00E-7")]), _format(Decimal("-12.50"))
    ('0.000000000000000000', '[0.000000100]', '-12.50')
    >>> _format(datetime.datetime(2024, 1, 5, 10, 0, 0, 500000)), _format([datetime.datetime(2024, 1, 5)])
    ('2024-01-05 10:00:00.5', '["2024-01-05 00:00:00"]')
    """
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return _java_float(value, single)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, (list, tuple, dict)):
        return _nested(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if type(value).__name__ == "Decimal":  # Spark's value has the column's scale: print every digit of it
        return format(value, "f")
    if isinstance(value, datetime.datetime):  # Hive's text: the fraction without trailing zeros
        text = value.isoformat(sep=" ")
        return text.rstrip("0") if value.microsecond else text
    return str(value)


def _nested(value: object) -> str:
    """A value inside an ARRAY, MAP or STRUCT as Hive writes it there (SerDeUtils.getJSONString):
    strings, dates and timestamps quoted, NULL as ``null``."""
    import json

    from pyspark.sql import Row

    if value is None:
        return "null"
    if isinstance(value, Row):
        return "{" + ",".join(f"{json.dumps(k)}:{_nested(v)}" for k, v in value.asDict().items()) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_nested(k)}:{_nested(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_nested(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) or type(value).__name__ == "Decimal":
        return _format(value)
    return json.dumps(_format(value), ensure_ascii=False)


def _java_float(x: float, single: bool = False) -> str:
    """Java's Double.toString (Float.toString with ``single``): the shortest digits that read
    back as the value, in plain notation from 10^-3 to below 10^7, else ``d.dddE±n``."""
    import math
    import struct

    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    text = repr(x)
    if single:  # the shortest text that is the same 32-bit float
        def same(t: str) -> bool:
            return struct.unpack("f", struct.pack("f", float(t)))[0] == struct.unpack("f", struct.pack("f", x))[0]
        text = next((t for t in (f"{x:.{p}g}" for p in range(1, 10)) if same(t)), text)
    from decimal import Decimal

    sign, digits, exp = Decimal(text).normalize().as_tuple()
    if x == 0:
        return "-0.0" if sign else "0.0"
    assert isinstance(exp, int)
    ds = "".join(map(str, digits))
    point = len(ds) + exp  # digits before the decimal point
    minus = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{minus}0.{'0' * -point}{ds}"
        whole, frac = ds[:point].ljust(point, "0"), ds[point:]
        return f"{minus}{whole}.{frac or '0'}"
    return f"{minus}{ds[0]}.{ds[1:] or '0'}E{point - 1}"


def _shown_type(t):
    """``t`` with each TIMESTAMP in it made TIMESTAMP_NTZ and each interval STRING, or None
    when it holds neither (see :func:`_displayed`)."""
    from pyspark.sql import types as T

    if isinstance(t, T.TimestampType):
        return T.TimestampNTZType()
    if isinstance(t, (T.DayTimeIntervalType, T.YearMonthIntervalType)):
        return T.StringType()
    if isinstance(t, T.ArrayType):
        e = _shown_type(t.elementType)
        return None if e is None else T.ArrayType(e, t.containsNull)
    if isinstance(t, T.MapType):
        k, v = _shown_type(t.keyType), _shown_type(t.valueType)
        return None if k is None and v is None else T.MapType(k or t.keyType, v or t.valueType, t.valueContainsNull)
    if isinstance(t, T.StructType):
        fields = [_shown_type(f.dataType) for f in t.fields]
        if all(f is None for f in fields):
            return None
        return T.StructType([T.StructField(f.name, n or f.dataType, f.nullable) for f, n in zip(t.fields, fields)])
    return None


def _displayed(df):
    """``df`` with the values PySpark would turn into wrong text converted by Spark first:
    a TIMESTAMP (at any depth) becomes the session time zone's wall-clock time (PySpark gives
    a TIMESTAMP in the Python process's local time zone, ``TZ``, not Spark's session time zone,
    so on a machine outside UTC every timestamp printed shifted), and an interval Spark's text
    of it (``INTERVAL '60' DAY``; PySpark cannot collect a YEAR TO MONTH interval at all)."""
    shown = [_shown_type(f.dataType) for f in df.schema.fields]
    if all(t is None for t in shown):
        return df
    from pyspark.sql.functions import col

    names = [f"_hp_c{i}" for i in range(len(shown))]  # by position: a result may repeat a name
    cols = [col(n) if t is None else col(n).cast(t) for n, t in zip(names, shown)]
    return df.toDF(*names).select(*cols).toDF(*df.columns)


_printed = [0]  # rows of the current statement already on stdout (a re-run must not repeat them)


class OutputClosed(Exception):
    """What reads stdout (or stderr) is gone (``hivepark -e ... | head``): the run ends there,
    quietly, with status 141, as a shell gives a command that SIGPIPE ended."""


def _out(write, *args: object, **kwargs: object) -> None:
    """``write(*args)`` to stdout or stderr; a closed pipe is :class:`OutputClosed`, never a
    "File system error"."""
    try:
        write(*args, **kwargs)
    except BrokenPipeError:
        raise OutputClosed() from None


def print_result(df, tty: bool) -> int | None:
    """Tab-separated rows without header when piped; a table on a terminal. Returns how many
    rows it printed (None for a statement without rows)."""
    if df is None or not df.columns:
        return None
    df = _displayed(df)
    # a query's rows are computed as they are read: its progress line shows until the first
    # row is printed
    if not tty:
        out = sys.stdout
        n = 0
        singles = _float_columns(df)
        for row in df.toLocalIterator():
            if n == 0:
                _clear_progress()
            _out(out.write, "\t".join(_format(v, i in singles) for i, v in enumerate(row)) + "\n")
            n += 1
            _printed[0] = n
        _out(out.flush)
        return n
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # every name and value as plain Text: a str would be read as rich's markup ('[b]x[/b]'
    # printed as a bold x, '[red]' not at all)
    table = Table()
    for name in df.columns:
        table.add_column(Text(name))
    count = 0
    singles = _float_columns(df)
    for row in df.toLocalIterator():
        table.add_row(*(Text(_format(v, i in singles)) for i, v in enumerate(row)))
        count += 1
    # as wide as its values: fitted to the terminal (80 columns off one), rich would cut them ('aaa…')
    width = Console(width=1 << 20).measure(table).maximum
    _clear_progress()
    _out(Console(width=width).print, table)
    return count


def _clear_progress() -> None:
    from hivepark.exec.running import clear_progress

    clear_progress()


def _error(e: BaseException, verbose: bool) -> None:
    """One line ``FAILED: ...`` on stderr (with --verbose, the traceback first); every
    credential masked."""
    if verbose:
        import traceback
        sys.stderr.write(mask_credentials("".join(traceback.format_exception(e))))
    msg = e.message if isinstance(e, HiveParkError) else f"{type(e).__name__}: {e}"
    first = str(msg).strip().splitlines()[0] if str(msg).strip() else type(e).__name__
    try:
        print(f"FAILED: {mask_credentials(first)}", file=sys.stderr, flush=True)
    except BrokenPipeError:  # nobody reads stderr: the exit status still says it failed
        _to_devnull(sys.stderr)


OUTPUT_FORMATS = ("table", "tsv2", "csv2", "json")


def _float_columns(df) -> set[int]:
    """The places of a result's FLOAT columns (Java prints a float's own shortest text)."""
    return {i for i, f in enumerate(df.schema.fields) if f.dataType.typeName() == "float"}


def _cell(value: object, single: bool = False) -> object:
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float) and single:
        return float(_java_float(value, True))
    if isinstance(value, float):
        return value
    return _format(value, single)


def print_formatted(df, fmt: str) -> int | None:
    """Rows in beeline's ``--outputformat``: ``tsv2``/``csv2`` with a header, a value holding
    the delimiter, a quote or a line break in double quotes (doubled inside), NULL as an empty
    field and the empty string as ``""`` (so NULL and 'NULL' differ); ``json`` as
    ``{"resultset": [{column: value}, ...]}`` with JSON's null, and a DOUBLE or FLOAT NaN or
    infinity as the string ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (JSON has no such number);
    ``table`` as on a terminal."""
    if df is None or not df.columns:
        return None
    if fmt == "table":
        return print_result(df, True)
    df = _displayed(df)
    singles = _float_columns(df)
    rows = [[_cell(v, i in singles) for i, v in enumerate(row)] for row in df.toLocalIterator()]
    _clear_progress()  # the rows are computed: nothing is drawn over them
    if fmt == "json":
        import json
        import math

        def value(v: object) -> object:
            return _java_float(v) if isinstance(v, float) and not math.isfinite(v) else v

        # each row's object written pair by pair: a dict would keep one of two columns of one name
        # (SELECT a.id, b.id), as beeline's JSON keeps both
        names = [json.dumps(c) for c in df.columns]

        def obj(r: list[object]) -> str:
            return "{" + ", ".join(f"{n}: {json.dumps(value(v), default=str, allow_nan=False)}"
                                   for n, v in zip(names, r)) + "}"

        text = '{"resultset": [' + ", ".join(obj(r) for r in rows) + "]}"
        _out(sys.stdout.write, text + "\n")
        _out(sys.stdout.flush)
        return len(rows)
    delim = "\t" if fmt == "tsv2" else ","

    def field(v: object) -> str:
        if v is None:
            return ""
        text = _format(v) if not isinstance(v, str) else v
        if text == "" or any(c in text for c in (delim, '"', "\n", "\r")):
            return '"' + text.replace('"', '""') + '"'
        return text

    out = sys.stdout
    _out(out.write, delim.join(field(c) for c in df.columns) + "\n")
    for r in rows:
        _out(out.write, delim.join(field(v) for v in r) + "\n")
    _out(out.flush)
    return len(rows)


def trailer(started: float, rows: int | None, silent: bool) -> None:
    """Hive's lines after a statement, on stderr: ``OK`` and ``Time taken: 1.23 seconds[,
    Fetched: 5 row(s)]``; ``-S`` silences them."""
    if silent:
        return
    fetched = f", Fetched: {rows} row(s)" if rows is not None else ""
    _out(print, f"OK\nTime taken: {time.monotonic() - started:.3f} seconds{fetched}", file=sys.stderr, flush=True)


class StatementCancelled(Exception):
    """A statement was cancelled by SIGINT (Ctrl-C) or SIGTERM; its line is printed. ``code`` is
    the exit status a shell gives for the signal (130, 143)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def statement_kind(parsed) -> str:
    """What the cancel line calls a statement: ``INSERT OVERWRITE``, ``query``, ``LOAD DATA``..."""
    import re

    from hivepark.sql import statements as st

    stmt = parsed.statement
    if isinstance(stmt, st.Insert):
        return "INSERT OVERWRITE" if stmt.overwrite else "INSERT INTO"
    if isinstance(stmt, st.Query):
        return "query"
    if isinstance(stmt, st.MultiInsert):
        return "multi-table INSERT"
    text = re.sub(r"--[^\n]*|/\*.*?\*/", " ", parsed.text, flags=re.S)
    return " ".join(re.findall(r"[A-Za-z]+", text)[:2]).upper() or "statement"


def _run_cancellable(wh, parsed, body, silent: bool):
    """Runs one statement's ``body`` so that SIGINT/SIGTERM cancel it (exec/running.py), with a
    progress line on a terminal's stderr (not with -S); a cancel prints one line and raises
    :class:`StatementCancelled`."""
    from hivepark.exec import running

    raw = wh._ctx.conf.get("hivepark.executor.wait.seconds") or "60"
    progress = sys.stderr if sys.stderr.isatty() and not silent else None
    try:
        return running.run(wh._ctx.spark, wh._ctx.warehouse, body, progress, float(raw))
    except running.Cancelled as c:
        kind = statement_kind(parsed)
        if c.finished:
            print(f"Cancelled: {kind} (too late: it had already finished)", file=sys.stderr, flush=True)
        else:
            print(f"Cancelled: {kind} (nothing written)", file=sys.stderr, flush=True)
        raise StatementCancelled(143 if c.signum == signal.SIGTERM else 130) from None


def run_script(wh, text: str, verbose: bool, tty: bool, silent: bool = False,
               outputformat: str | None = None) -> bool:
    """Runs statements one by one, stopping at the first error (like ``hive -f``), or, with
    ``hive.cli.errors.ignore=true`` (Hive's setting, also by SET in the script), printing it
    and going on: then the result is the last statement's, as Hive's exit status. A statement
    cancelled by a signal raises :class:`StatementCancelled` (the rest do not run)."""
    from hivepark.exec.dispatch import REPLANS, execute, read_a_replaced_file
    from hivepark.exec.failures import translate
    from hivepark.sql.parser import parse_one, split_statements
    from hivepark.sql.statements import Query

    try:
        pieces = split_statements(text)
    except Exception as e:  # noqa: BLE001 - one line, as for any error
        _error(translate(e, wh._ctx), verbose)
        return False
    ok = True
    for piece, line in pieces:
        try:
            started = time.monotonic()
            parsed = parse_one(wh._ctx.substitute(piece), line)

            def body(parsed=parsed) -> int | None:
                for attempt in range(REPLANS + 1):
                    _printed[0] = 0
                    try:
                        df = execute(wh._ctx, parsed)
                        return print_formatted(df, outputformat) if outputformat else print_result(df, tty)
                    except Exception as e:
                        # a query whose files a concurrent INSERT OVERWRITE replaced after it planned
                        # runs again on the new version, if none of its rows is printed yet
                        if not (isinstance(parsed.statement, Query) and _printed[0] == 0 and attempt < REPLANS
                                and (read_a_replaced_file(e) or read_a_replaced_file(translate(e, wh._ctx)))):
                            raise
                raise AssertionError("unreachable")

            rows = _run_cancellable(wh, parsed, body, silent)
            trailer(started, rows, silent)
            ok = True
        except (StatementCancelled, OutputClosed):
            raise
        except Exception as e:  # noqa: BLE001 - every error is one line; it ends the script unless ignored
            # rows are read while they are printed: a file that fails then is named here too
            _error(translate(e, wh._ctx), verbose)
            if not wh._ctx.conf.get_bool("hive.cli.errors.ignore"):
                return False
            ok = False
    return ok


def decode_script(data: bytes, name: str) -> str:
    """A script's bytes as text; invalid UTF-8 is one error naming the file and where.

    Example:
        >>> decode_script(b"SELECT 1;\\nSELECT '\\xff';", "q.sql")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hivepark.errors.UserInputError: q.sql is not valid UTF-8: byte 0xff at offset 18 (line 2, column 9)...
    """
    from hivepark.errors import UserInputError

    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = len(data[data.rfind(b"\n", 0, e.start) + 1:e.start].decode("utf-8", "replace")) + 1
        raise UserInputError(
            f"{name} is not valid UTF-8: byte 0x{data[e.start]:02x} at offset {e.start} (line {line}, "
            f"column {column}). Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8).") from None


def _check_text(text: str, what: str) -> None:
    """Text that came from the command line (or the terminal) with bytes that are not UTF-8
    (Python keeps them as lone surrogates) is refused, naming where they are."""
    from hivepark.errors import UserInputError

    for i, ch in enumerate(text):
        if "\udc80" <= ch <= "\udcff":
            raise UserInputError(f"{what} is not valid UTF-8: byte 0x{ord(ch) - 0xdc00:02x} at character "
                                 f"{i}. Give the statements as UTF-8.")


def history_entry(text: str) -> str:
    r"""A statement read over several lines as the one line the shell's history recalls: each
    line break becomes a space, but inside a string literal the escape ``\n`` (the same
    character to Hive), and a ``--`` comment is dropped (on one line, it would comment out the
    lines after it), so the line recalled runs the statement that was read.

    >>> print(history_entry("SELECT a,  -- the key\n  'x\ny' AS s\nFROM t;"))
    SELECT a, 'x\ny' AS s FROM t;
    """
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote is not None:
            if c == "\\" and quote != "`" and i + 1 < len(text):
                out.append(text[i:i + 2])
                i += 2
                continue
            if c == quote:
                quote = None
            out.append("\\n" if c == "\n" and quote != "`" else c)
        elif c == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif c == "\n":
            while out and out[-1] in (" ", "\t"):
                out.pop()
            out.append(" ")
            while i + 1 < len(text) and text[i + 1] in " \t":
                i += 1
        else:
            if c in "'\"`":
                quote = c
            out.append(c)
        i += 1
    return "".join(out).strip()


def shell(wh, verbose: bool, silent: bool = False, outputformat: str | None = None) -> None:
    """Interactive shell: statements may span lines and end with ';'. Statements piped in
    (``hivepark < q.sql``) run the same, without prompts (stdout holds the rows alone) and
    without touching the history file."""
    from hivepark.sql.parser import statement_ends

    typing = sys.stdin.isatty()
    readline: Any = None
    if typing and sys.stdout.isatty():  # only then does input() read with readline
        try:
            import readline as gnu

            readline = gnu
            if HISTORY.exists():
                readline.read_history_file(HISTORY)
        except (ImportError, OSError):
            readline = None
    # a terminal's user sees the prompt; with stdout redirected it goes to stderr
    prompts = sys.stdout if sys.stdout.isatty() else sys.stderr

    def ask(prompt: str) -> str:
        if not typing:
            return input()
        if prompts is sys.stdout:
            return input(prompt)
        prompts.write(prompt)
        prompts.flush()
        return input()

    buf: list[str] = []
    while True:
        try:
            line = ask("hivepark> " if not buf else "        > ")
            _check_text(line, "The line")
        except EOFError:
            if typing:
                print(file=prompts)
            break
        except KeyboardInterrupt:
            if typing:
                print(file=prompts)
            buf = []
            continue
        except (UnicodeDecodeError, HiveParkError) as e:
            print(f"FAILED: {e.message if isinstance(e, HiveParkError) else 'the line is not valid UTF-8'}",
                  file=sys.stderr)
            buf = []
            continue
        if not buf and line.strip().lower() in ("quit", "exit", "quit;", "exit;"):
            break
        buf.append(line)
        if statement_ends("\n".join(buf)):
            if readline is not None and len(buf) > 1:  # recalled as one entry, not line by line
                for _ in range(len(buf)):
                    n = readline.get_current_history_length()
                    if n:
                        readline.remove_history_item(n - 1)
                readline.add_history(history_entry("\n".join(buf)))
            try:
                run_script(wh, "\n".join(buf), verbose, sys.stdout.isatty(), silent, outputformat)
            except StatementCancelled as c:
                if c.code != 130:  # SIGTERM ends the shell too
                    _save_history(readline)
                    raise
            buf = []
    _save_history(readline)


def _save_history(readline) -> None:
    if readline is not None:
        try:
            readline.write_history_file(HISTORY)
        except OSError:
            pass


@app.command()
def main_command(
    e: str | None = typer.Option(None, "-e", help="Run these statements and exit."),
    f: Path | None = typer.Option(None, "-f", help="Run the statements in this file."),
    hiveconf: list[str] = typer.Option([], "--hiveconf", help="Set k=v (repeatable)."),
    sparkconf: list[str] = typer.Option([], "--conf", help="A Spark setting k=v, given at start (repeatable)."),
    warehouse: str = typer.Option("./warehouse", "--warehouse", help="Warehouse directory."),
    metastore: str | None = typer.Option(None, "--metastore", help="SQLAlchemy URL."),
    master: str | None = typer.Option(None, "--master", help="Spark master URL."),
    verbose: bool = typer.Option(False, "--verbose", help="Print full stack traces."),
    database: str | None = typer.Option(None, "--database", help="The database to start in (USE db)."),
    silent: bool = typer.Option(False, "-S", "--silent",
                                help="No OK, Time taken, Starting Spark or progress lines on stderr."),
    version: bool = typer.Option(False, "--version", help="Print hivepark's version and exit."),
    hivevar: list[str] = typer.Option([], "--hivevar", "--define", "-d",
                                      help="A variable k=v for ${k} / ${hivevar:k} (repeatable)."),
    init: Path | None = typer.Option(None, "-i", help="Run this file first (settings, variables)."),
    outputformat: str | None = typer.Option(None, "--outputformat", help="table, tsv2, csv2 or json."),
) -> None:
    if version:
        import hivepark

        print(f"hivepark {hivepark.__version__}")
        return
    if outputformat is not None and outputformat not in OUTPUT_FORMATS:
        print(f"FAILED: --outputformat must be one of {', '.join(OUTPUT_FORMATS)}, got '{outputformat}'",
              file=sys.stderr)
        raise typer.Exit(1)
    for item in hivevar:
        if "=" not in item:
            print(f"FAILED: --hivevar needs k=v, got '{mask_credentials(item)}'", file=sys.stderr)
            raise typer.Exit(1)
    variables = [f"hivevar:{item.strip()}" for item in hivevar]
    try:
        _main(e, f, hiveconf + sparkconf + variables, warehouse, metastore, master, verbose, sparkconf,
              database, silent, init, outputformat)
    except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 - anything unforeseen is one masked line too
        _error(err, verbose)
        raise typer.Exit(1) from None


def _main(e: str | None, f: Path | None, hiveconf: list[str], warehouse: str, metastore: str | None,
          master: str | None, verbose: bool, sparkconf: list[str] = (),  # type: ignore[assignment]
          database: str | None = None, silent: bool = False, init: Path | None = None,
          outputformat: str | None = None) -> None:
    _warnings_as_lines()
    conf = {}
    for item in hiveconf:
        if "=" not in item:
            option = "--conf" if item in sparkconf else "--hiveconf"
            print(f"FAILED: {option} needs k=v, got '{mask_credentials(item)}'", file=sys.stderr)
            raise typer.Exit(1)
        k, v = item.split("=", 1)
        if item in sparkconf and not k.strip().startswith("spark."):
            print(f"FAILED: --conf takes Spark settings (spark.*), got '{k.strip()}': give Hive's and "
                  "hivepark's settings with --hiveconf", file=sys.stderr)
            raise typer.Exit(1)
        conf[k.strip()] = v.strip()
    if e is not None and f is not None:
        print("FAILED: give -e or -f, not both", file=sys.stderr)
        raise typer.Exit(1)
    text = e
    init_text = _read_script(init) if init is not None else None  # read before Spark starts
    if f is not None:
        text = _read_script(f)
    elif text is not None:
        try:
            _check_text(text, "The -e text")
        except HiveParkError as err:
            _error(err, False)
            raise typer.Exit(1) from None
    import hivepark
    import hivepark.sql.dialect  # noqa: F401 - refuses sqlglot's compiled build before Spark starts

    conf.setdefault("hivepark.spark.views", "false")  # nobody can reach this session's spark.sql
    starting = sys.stderr.isatty() and not silent
    if starting:
        sys.stderr.write("Starting Spark...")
        sys.stderr.flush()
    try:
        wh = hivepark.connect(warehouse, metastore, _quiet_spark(master, verbose, conf), conf)
    except Exception as err:  # noqa: BLE001
        _error(err, verbose)
        raise typer.Exit(1) from None
    finally:
        if starting:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
    from hivepark.exec.running import Terminated

    _handle_signals()
    try:
        if database is not None and not run_script(wh, f"USE `{database}`", verbose, False, silent=True):
            raise typer.Exit(1)
        if init_text is not None and not run_script(wh, init_text, verbose, sys.stdout.isatty(), silent,
                                                    outputformat):
            raise typer.Exit(1)
        if text is None:
            shell(wh, verbose, silent, outputformat)
        elif not run_script(wh, text, verbose, sys.stdout.isatty(), silent, outputformat):
            raise typer.Exit(1)
    except StatementCancelled as c:
        raise typer.Exit(c.code) from None
    except OutputClosed:
        for stream in (sys.stdout, sys.stderr):  # what is left in a closed pipe's buffer goes nowhere
            try:
                stream.flush()
            except BrokenPipeError:
                _to_devnull(stream)
        raise typer.Exit(141) from None
    except Terminated:
        raise typer.Exit(143) from None
    finally:
        wh.close()


def _to_devnull(stream) -> None:
    """``stream`` (stdout, stderr) whose reader is gone writes to /dev/null from now on, so that
    Python's last flush at exit finds no broken pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)


def _handle_signals() -> None:
    """SIGINT raises KeyboardInterrupt (PySpark's own handler would cancel every job from inside
    the signal handler) and SIGTERM raises Terminated, in the main thread: a running statement
    is cancelled (exec/running.py), at the prompt the shell ends."""
    from hivepark.exec.running import Terminated

    def term(signum: int, frame: object) -> None:  # noqa: ARG001
        raise Terminated(signum)

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, term)


def _read_script(path: Path) -> str:
    """A script file's text (-f, -i); a file that cannot be read or is not UTF-8 ends the run
    with one line."""
    try:
        return decode_script(path.read_bytes(), str(path))
    except OSError as err:
        print(f"FAILED: cannot read {path}: {err.strerror}", file=sys.stderr)
        raise typer.Exit(1) from None
    except HiveParkError as err:
        _error(err, False)
        raise typer.Exit(1) from None


def _warnings_as_lines() -> None:
    """hivepark's warnings (connect()'s RecoveryWarning) as one masked ``WARNING: ...`` line."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001
        print(f"WARNING: {mask_credentials(str(message))}", file=sys.stderr)

    warnings.showwarning = show


_PYSPARK_ERROR_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")


def _quiet_pyspark_loggers() -> None:
    """PySpark logs every failed DataFrame operation as a JSON line with the Java stack
    trace; the CLI reports the error itself, as one line."""
    from pyspark.logger import PySparkLogger

    for name in _PYSPARK_ERROR_LOGGERS:
        PySparkLogger.getLogger(name).disabled = True


def _quiet_spark(master: str | None, verbose: bool, settings: dict[str, str] | None = None):
    """Starts Spark; without --verbose the JVM's own stderr (start-up banners, Java stack
    traces) is read away, since errors reach the user as one line from Python: a JVM that
    exits at start (a --master Spark does not know, a driver memory it cannot parse) is said
    with Spark's own reason, where PySpark only says its gateway exited."""
    import threading
    from collections import deque

    from hivepark.exec.session import get_or_create_spark

    if verbose:
        return get_or_create_spark(master, settings)
    _quiet_pyspark_loggers()
    said: deque[str] = deque(maxlen=50)  # the JVM's last lines; the JVM writes there while it runs
    read_end, write_end = os.pipe()

    def drain() -> None:
        with os.fdopen(read_end, "rb") as f:
            for raw in f:
                said.append(raw.decode("utf-8", "replace").rstrip())

    reader = threading.Thread(target=drain, name="hivepark-jvm-stderr", daemon=True)
    reader.start()
    saved = os.dup(2)
    try:
        os.dup2(write_end, 2)
        os.close(write_end)
        try:
            return get_or_create_spark(master, settings)
        except Exception as e:
            if "JAVA_GATEWAY_EXITED" not in str(e):
                raise
            os.dup2(saved, 2)  # the JVM is gone: its lines end once ours do
            reader.join(timeout=5)
            raise _jvm_start_error(list(said)) from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _jvm_start_error(lines: list[str]) -> HiveParkError:
    """Spark's reason, from what its JVM said before it exited at start.

    >>> print(_jvm_start_error(['Exception in thread "main" org.apache.spark.SparkException: Master '
    ...                         'must either be yarn or start with spark, k8s, or local', '\tat org']).message)
    ... # doctest: +ELLIPSIS
    Spark did not start: Master must either be yarn or start with spark, k8s, or local. Check --master...
    """
    from hivepark.errors import UserInputError

    reason = ""
    for line in lines:
        if line.startswith("Exception in thread"):
            reason = line.split(": ", 1)[1] if ": " in line else line
            break
    if not reason:
        told = [line.strip() for line in lines if line.strip() and not line[:1].isspace()
                and not line.startswith(("WARNING: Using incubator", "Error: A fatal exception"))]
        reason = "; ".join(told[:3]) or "its JVM exited"
    return UserInputError(f"Spark did not start: {reason.rstrip('.')}. Check --master and the Spark settings read "
                          "at start (--conf, HIVEPARK_DRIVER_JAVA_OPTIONS, spark-defaults.conf); --verbose shows "
                          "Spark's own output.")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
