"""Every error hivepark raises.

One root, :class:`HiveParkError`. Errors caused by the user's input also subclass
``ValueError``. Where Hive has an error code for the same mistake, the error carries it
in ``code`` and its message starts with Hive's text.

No message carries a credential: every error's text goes through :func:`mask_credentials`,
which the CLI and DESCRIBE/SHOW/SET output use too.
"""

from __future__ import annotations

import re

MASK = "***"
"""What a masked credential is shown as."""

# scheme://user:password@host (the password may itself hold '@' or ':'; up to the last '@')
_URL_PASSWORD = re.compile(r"(?P<pre>\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s'\"]*:)(?P<secret>[^\s'\"]*)@")
# Oracle's jdbc:oracle:thin:user/password@host
_ORACLE_PASSWORD = re.compile(r"(?P<pre>\bjdbc:oracle:\w+:[^/@\s'\"]*/)(?P<secret>[^@\s'\"]*)@", re.IGNORECASE)
# key=value, key: value, 'key'='value' whose key names a secret (password=..., dbcp.password,
# javax.jdo.option.ConnectionPassword, fs.s3a.secret.key, ...): a quoted value up to its closing quote
_SECRET_KEY = r"[\w.\-]*(?:password|passwd|pwd|secret|credential)[\w.\-]*"
_QUOTED_SECRET = re.compile(
    r"(?P<pre>" + _SECRET_KEY + r"[\"'`]?\s*[=:]\s*(?P<q>[\"']))(?P<secret>.*?)(?P=q)", re.IGNORECASE)
_BARE_SECRET = re.compile(
    r"(?P<pre>" + _SECRET_KEY + r"[\"'`]?\s*[=:]\s*)(?P<secret>[^\"'\s,;&)}\]]+?)"
    r"(?=[:.]?(?:\s|$)|[\"'\s,;&)}\]])", re.IGNORECASE)


def _masked(m: re.Match[str]) -> str:
    secret = m.group("secret")
    if not secret or secret.strip("*") == "":
        return m.group(0)
    return m.group("pre") + MASK + m.group(0)[m.end("secret") - m.start():]


def first_line(err: object) -> str:
    """The first line of an error's text (a driver's message may go on with the statement or a
    stack), or its class's name when it has no text.

    Example:
        >>> first_line(ValueError("value too long\\nDETAIL: ...")), first_line(KeyError())
        ('value too long', 'KeyError')
    """
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def mask_credentials(text: str) -> str:
    """``text`` with every credential it shows masked: the password of a URL
    (``scheme://user:password@host`` -> ``scheme://user:***@host``) and the value of a
    ``key=value`` (or ``key: value``, ``'key'='value'``) whose key names a password, a secret or
    a credential.

    Example:
        >>> mask_credentials("postgresql+psycopg://bob:pa:ss@db:5432/meta")
        'postgresql+psycopg://bob:***@db:5432/meta'
        >>> mask_credentials("jdbc:mysql://db/x?user=bob&password=s3cret&ssl=true")
        'jdbc:mysql://db/x?user=bob&password=***&ssl=true'
        >>> mask_credentials("'hive.sql.dbcp.password'='s 3cret', x=1")
        "'hive.sql.dbcp.password'='***', x=1"
        >>> mask_credentials("sqlite:////tmp/wh/metastore.db, jdbc:postgresql://db:5432/x")
        'sqlite:////tmp/wh/metastore.db, jdbc:postgresql://db:5432/x'
    """
    if not text:
        return text
    for rx in (_URL_PASSWORD, _ORACLE_PASSWORD, _QUOTED_SECRET, _BARE_SECRET):
        text = rx.sub(_masked, text)
    return text


class HiveParkError(Exception):
    """Root of every hivepark error."""

    code: int | None = None

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(mask_credentials(message))
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class UserInputError(HiveParkError, ValueError):
    """The statement or the arguments are wrong; the message says how to fix them."""


class ParseError(UserInputError):
    """HiveQL text that does not parse; carries the 1-based line and column."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        where = f"line {line}:{column} " if line is not None else ""
        super().__init__(f"ParseException {where}{message}")
        self.line = line
        self.column = column


class SemanticError(UserInputError):
    """A statement that parses but cannot run as written (Hive's SemanticException)."""


class UnsupportedError(SemanticError):
    """Valid HiveQL that hivepark does not implement."""


class NotFoundError(SemanticError):
    """A database, table, partition or column that does not exist."""


class NoSuchDatabase(NotFoundError):
    pass


class NoSuchTable(NotFoundError):
    pass


class NoSuchPartition(NotFoundError):
    pass


class UnmatchedFilter(NoSuchPartition):
    """``Catalog.drop_partitions``: its ``index``-th required filter matched no partition, so
    nothing was dropped (the statement names the spec in its own words)."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


class AlreadyExistsError(SemanticError):
    """A database, table or partition that is already there."""


class InvalidPartitionSpec(SemanticError):
    """A PARTITION clause that names the wrong columns or gives values of the wrong type."""


class DataError(UserInputError):
    """A value in the data cannot be stored as asked (a cast that fails, an overflow)."""


class CommitConflict(HiveParkError):
    """Another writer changed the table between this statement's start and its commit."""


class MetastoreError(HiveParkError):
    """The metastore database failed or holds something hivepark cannot read."""


class FileSystemError(HiveParkError):
    """The warehouse's file system cannot be opened from this (the driver's) process: an
    unknown scheme, an object store without credentials or endpoint, HDFS without Hadoop's
    client library. Nothing was created anywhere."""


class ExecutionError(HiveParkError):
    """Spark failed while running a statement; the message carries Spark's reason."""


class DataFileError(ExecutionError):
    """A file a statement reads or writes failed: it is missing (deleted outside hivepark),
    damaged, not writable, or its disk is full. ``reason`` says which (``missing``, ``corrupt``,
    ``permission``, ``no_space``), ``path`` names the file or directory, ``table`` the table
    it belongs to when known, ``cause`` is the file system's own words (the root of Java's
    cause chain)."""

    def __init__(self, message: str, reason: str, path: str | None = None,
                 table: str | None = None, cause: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.path = path
        self.table = table
        self.cause = cause


class LimitExceeded(UserInputError):
    """A write would create more partitions or files than the hive.exec.max.* settings allow.

    Raised before anything is written."""
