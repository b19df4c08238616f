"""Every error hivepark raises.

One root, :class:`HiveParkError`. Errors caused by the user's input also subclass
``ValueError``. Where Hive has an error code for the same mistake, the error carries it
in ``code`` and its message starts with Hive's text.
"""

from __future__ import annotations


class HiveParkError(Exception):
    """Root of every hivepark error."""

    code: int | None = None

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
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


class ExecutionError(HiveParkError):
    """Spark failed while running a statement; the message carries Spark's reason."""


class LimitExceeded(UserInputError):
    """A write would create more partitions or files than the hive.exec.max.* settings allow.

    Raised before anything is written."""
