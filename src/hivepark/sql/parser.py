"""HiveQL text to statements: split on ``;``, parse each with the HiveQL dialect, and
turn each tree into a typed statement (``sql/build.py``).

``SET k=v`` is kept raw, as Hive does (values may contain anything up to the end).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from hivepark.errors import HiveParkError, ParseError, UnsupportedError, UserInputError
from hivepark.sql import statements as s
from hivepark.sql.build import build
from hivepark.sql.dialect import HINT, HiveQL

_SET_RE = re.compile(r"^\s*SET(?:\s+(?P<key>[^=\s]+)\s*(?:=(?P<value>.*))?)?\s*$",
                     re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class ParsedStatement:
    """One parsed statement: its text, the line it starts on, and what it asks for. A
    statement Hive would reject when compiling it is :class:`statements.Failed`, raised
    when it runs (so the statements before it in a script still run)."""

    text: str
    line: int
    statement: s.Statement


_VARIABLE = re.compile(r"\$\{(?:(?P<ns>hivevar|hiveconf):)?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)\}")
SUBSTITUTE_DEPTH = 40  # Hive's hive.variable.substitute.depth


def substitute_variables(text: str, hivevars: Mapping[str, str],
                         hiveconf: Callable[[str], str | None]) -> str:
    """Hive's variable substitution of one statement's text: ``${hivevar:k}``, ``${hiveconf:k}``
    and ``${k}`` (a hivevar first, then a setting), repeated while values hold variables. An
    undefined variable stays as written, as in Hive; ``${env:...}`` and ``${system:...}`` always
    stay as written: a statement never reads the environment. As Hive's SystemVariables.substitute,
    a text still holding a defined variable after 40 rounds (a variable defined by itself,
    ``SET hivevar:r=${r}x``) is refused: ``Variable substitution depth is deeper than 40 for
    expression ...``.

    >>> substitute_variables("SELECT * FROM t WHERE ds = '${dt}' -- ${hiveconf:x.y}",
    ...                      {"dt": "2024-01-0${d}", "d": "5"}, {"x.y": "z"}.get)
    "SELECT * FROM t WHERE ds = '2024-01-05' -- z"
    """
    found = False

    def value(m: re.Match[str]) -> str:
        nonlocal found
        ns, name = m.group("ns"), m.group("name")
        if ns in (None, "hivevar") and name in hivevars:
            found = True
            return hivevars[name]
        if ns in (None, "hiveconf"):
            v = hiveconf(name)
            if v is not None:
                found = True
                return v
        return m.group(0)

    result = text
    for _ in range(SUBSTITUTE_DEPTH + 1):  # Hive's rounds: 0 to the depth
        found = False
        replaced = _VARIABLE.sub(value, result)
        if not found:
            return result
        result = replaced
    raise UserInputError(f"Variable substitution depth is deeper than {SUBSTITUTE_DEPTH} for expression {text}")


def statement_ends(text: str) -> bool:
    """Whether ``text`` (what the shell has read so far) ends a statement: its last character
    outside comments is a ``;`` outside any quotes (so ``SELECT 1; -- done`` runs, and a
    string literal that spans lines goes on)."""
    quote: str | None = None
    last = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote is not None:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                quote = None
            last = c
        elif c == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif c in "'\"`":
            quote = c
            last = c
        elif not c.isspace():
            last = c
        i += 1
    return quote is None and last == ";"


def split_statements(text: str) -> list[tuple[str, int]]:
    """Statement texts (without ``;``) and the 1-based line each starts on; blanks dropped.

    An unterminated string or quoted name makes the rest of the text, from the statement it is
    in, one last statement (as Hive's CLI reads it), whose parse fails (:func:`parse_one`): the
    statements before it are split as usual, so a script runs them first.

    >>> split_statements("SELECT 1;\\nSELECT 'a;\\nSELECT 2;")
    [('SELECT 1', 1), ("SELECT 'a;\\nSELECT 2;", 2)]
    """
    broken = False
    try:
        tokens = HiveQL().tokenize(text)
    except TokenError as e:
        m = _MISSING_RE.search(str(e.__cause__ or ""))
        if m is None:
            raise _token_error(e, text, 1) from None
        try:  # the text before the unterminated quote holds the complete statements
            tokens = HiveQL().tokenize(text[:int(m.group("offset"))])
        except TokenError:
            raise _token_error(e, text, 1) from None
        broken = True
    pieces: list[tuple[str, bool]] = []  # each text, and whether it holds a token (not only comments)
    start, words = 0, False
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            pieces.append((text[start:tok.start], words))
            start, words = tok.end + 1, False
        else:
            words = True
    pieces.append((text[start:], words or broken))
    out: list[tuple[str, int]] = []
    offset = 0
    for piece, holds_words in pieces:
        if holds_words:
            lead = len(piece) - len(piece.lstrip())
            line = text.count("\n", 0, offset + lead) + 1
            out.append((piece.strip(), line))
        offset += len(piece) + 1
    return out


_MISSING_RE = re.compile(r"Missing (?P<delim>.+) from \d+:(?P<offset>\d+)")


def _token_error(e: TokenError, text: str, first_line: int) -> ParseError:
    """A tokenizer failure (mostly an unterminated string or quoted name) with the line and
    column where the unterminated text starts."""
    m = _MISSING_RE.search(str(e.__cause__ or ""))
    if m is None:
        return ParseError(f"cannot read the statement text: {e}", first_line, 1)
    offset = min(int(m.group("offset")), len(text))
    line = first_line + text.count("\n", 0, offset)
    column = offset - text.rfind("\n", 0, offset)
    delim = m.group("delim")
    what = "string" if delim in ("'", '"') else "quoted name"
    return ParseError(f"unterminated {what} starting near '{text[offset:offset + 20]}': add "
                      f"the closing {delim}", line, column)


def _check_quoted_names(text: str, tokens: list[Token], first_line: int) -> None:
    """A quoted name holding a backtick (```a``b```, the name ``a`b``) is refused where it is
    written: hivepark passes names to Spark, to the metastore and into directory names, and a
    backtick inside one would break each of them later, far from the statement."""
    for tok in tokens:
        if tok.token_type == TokenType.IDENTIFIER and "`" in tok.text:
            offset = tok.start
            line = first_line + text.count("\n", 0, offset)
            column = offset - text.rfind("\n", 0, offset)
            raw = text[tok.start:tok.end + 1]
            raise ParseError(f"cannot recognize input near '{raw}': a name may not contain a backtick (the "
                             f"name {tok.text}). Rename it without one, e.g. `{tok.text.replace('`', '_')}`",
                             line, column)


_RESET_RE = re.compile(r"^\s*RESET(?:\s+(?P<key>[^\s;]+))?\s*;?\s*$", re.IGNORECASE)
# Hive CLI commands (CliDriver and its command processors), with the words that make them one
_CLI_RE = re.compile(r"^\s*(!\S*|DFS\b|(?:ADD|DELETE)\s+(?:JARS?|FILES?|ARCHIVES?)\b|LIST\s+(?:JARS?|FILES?|"
                     r"ARCHIVES?)\b|RELOAD\s+FUNCTIONS?\b|COMPILE\b|CRYPTO\b|SOURCE\b)", re.IGNORECASE)

# the words a HiveQL statement can start with (after comments)
_STARTERS = frozenset({"SELECT", "WITH", "FROM", "INSERT", "CREATE", "DROP", "ALTER", "SHOW", "DESCRIBE",
                       "DESC", "USE", "SET", "EXPLAIN", "LOAD", "MSCK", "ANALYZE", "TRUNCATE", "(", "VALUES"})


def _hive_parse_error(text: str, first_line: int, err_line: int, err_col: int, hint: str = "") -> ParseError:
    """A syntax error as Hive words it, ``cannot recognize input near 'a' 'b' 'c'``: the
    three tokens from the one the parser stopped at (``'<EOF>'`` past the end), or from the
    first one when the statement does not start with a statement's word (``SELEC * FROM``);
    then ``hint``, what is wrong and the form to use, when the parser said."""
    try:
        tokens = HiveQL().tokenize(text)
    except TokenError:
        tokens = []
    lines = text.split("\n")
    offset = sum(len(x) + 1 for x in lines[:err_line - 1]) + max(err_col - 1, 0)
    line, column = first_line + err_line - 1, err_col
    if tokens and tokens[0].text.upper() not in _STARTERS:
        idx = 0
        start = tokens[0].start
        line = first_line + text.count("\n", 0, start)
        column = start - text.rfind("\n", 0, start)
    else:
        idx = next((i for i, t in enumerate(tokens) if t.end >= offset), len(tokens))
    near = [text[t.start:t.end + 1] for t in tokens[idx:idx + 3]]
    near += ["<EOF>"] * (3 - len(near))
    return ParseError("cannot recognize input near " + " ".join(f"'{w}'" for w in near) + (f": {hint}" if hint else ""),
                      line, column)


def _strip_comments(s: str) -> str:
    """``s`` without its ``--`` comments: from ``--`` outside quotes to the end of the line
    (``SET v='--x'`` keeps its value, as Hive's CLI does).

    >>> _strip_comments("SET a='--x' -- the pattern\nSET b=1--c")
    "SET a='--x' \nSET b=1"
    """
    lines = []
    for line in s.splitlines():
        quote, i, cut = "", 0, len(line)
        while i < len(line):
            c = line[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = ""
            elif c in "'\"`":
                quote = c
            elif line.startswith("--", i):
                cut = i
                break
            i += 1
        lines.append(line[:cut])
    return "\n".join(lines)


def parse_one(text: str, line: int = 1) -> ParsedStatement:
    """Parses one statement; syntax errors carry line and column."""
    body = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("--")) \
        if text.lstrip().startswith("--") else text
    m = _RESET_RE.match(_strip_comments(body))
    if m:
        return ParsedStatement(text, line, s.Reset(m.group("key")))
    cli = _CLI_RE.match(_strip_comments(body))
    if cli:  # Hive's CLI runs these itself; they are not HiveQL
        word = cli.group(0).strip()
        return ParsedStatement(text, line, s.Failed(UnsupportedError(
            f"'{word}' is a Hive CLI command, not a HiveQL statement: hivepark runs statements only. Run shell "
            "and file-system commands in a shell, and give Spark jars or files at start (hivepark --conf "
            "spark.jars=...).")))
    m = _SET_RE.match(_strip_comments(body))
    if m and not re.match(r"^\s*SET\s+\w+\s*=\s*\(", body, re.IGNORECASE):
        value = m.group("value")
        return ParsedStatement(text, line, s.Set(m.group("key"), value.strip() if value is not None else None))
    dialect = HiveQL()
    try:
        tokens = dialect.tokenize(text)
    except TokenError as e:
        raise _token_error(e, text, line) from None
    _check_quoted_names(text, tokens, line)
    try:  # the tokens of the check, not a second tokenization (sqlglot.parse's)
        trees = dialect.parser().parse(tokens, text)
    except SqlglotParseError as e:
        err = e.errors[0] if e.errors else {}
        hint = err.get("description") or ""  # the parser's own word on what is wrong, if it has one
        raise _hive_parse_error(text, line, err.get("line") or 1, err.get("col") or 1,
                                hint[len(HINT):] if hint.startswith(HINT) else "") from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise ParseError("expected exactly one statement", line, 1)
    tree = trees[0]
    if isinstance(tree, (exp.Condition, exp.Alias)):  # an expression, not a statement (Hive's parse error)
        raise _hive_parse_error(text, line, 1, 1)
    if isinstance(tree, exp.Command):
        raise ParseError(f"cannot parse '{text.strip()[:80]}': this statement is not "
                         "supported by hivepark", line, 1)
    try:
        statement = build(tree)
    except ParseError:
        raise
    except HiveParkError as e:
        statement = s.Failed(e)
    return ParsedStatement(text, line, statement)


def parse(text: str) -> list[ParsedStatement]:
    """All statements of a ``;``-separated script."""
    return [parse_one(piece, line) for piece, line in split_statements(text)]
