"""Spark's, the JVM's and the file system's failures as hivepark errors a user can act on.

Spark reports a failed task as a chain of Java exceptions (``Py4JJavaError: An error
occurred while calling o159.collectToPython`` on top, the file system's own words at the
bottom). :func:`spark_error` walks that chain and keeps what the user needs: the root
cause's message, the file or directory it is about and (through :func:`translate`, which has
the statement's :class:`Context`) the table that file belongs to. Missing, damaged and
unwritable files and a full disk become :class:`DataFileError` with the fix; a NUL in a
dynamic partition value names the column.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hivepark.errors import (
    DataError,
    DataFileError,
    ExecutionError,
    HiveParkError,
    InvalidPartitionSpec,
    SemanticError,
    UserInputError,
)
from hivepark.storage import fs

_DATA_ERRORS = ("CAST_INVALID_INPUT", "CAST_OVERFLOW", "NUMERIC_VALUE_OUT_OF_RANGE",
                "ARITHMETIC_OVERFLOW", "DIVIDE_BY_ZERO", "INVALID_FRACTION_OF_SECOND")
_MISSING = ("FILE_NOT_EXIST", "PATH_NOT_FOUND", "FileNotFoundException", "No such file or directory")
_CORRUPT = ("FAILED_READ_FILE", "CANNOT_READ_FILE_FOOTER", "is not a Parquet file", "Could not read footer",
            "ParquetDecodingException", "Malformed ORC file", "ORC file is truncated",
            "can not read class org.apache.parquet", "Invalid ORC postscript")
# a file's column read as another type than it holds: the file is intact (checked before _CORRUPT,
# whose FAILED_READ_FILE Spark's message also carries)
_TYPE_MISMATCH = ("COLUMN_DATA_TYPE_MISMATCH", "SchemaColumnConvertNotSupportedException")
_NO_SPACE = ("No space left on device", "ENOSPC", "Disk quota exceeded")
_PERMISSION = ("Permission denied", "Operation not permitted", "AccessDeniedException", "Mkdirs failed to create",
               "Read-only file system")
_JVM_GONE = ("Py4JError", "Py4JNetworkError")

# where Spark's and Hadoop's messages name a path, most specific first
_PATH_PATTERNS = (
    r"Encountered error while reading file (?P<p>.+?)\.\s+Data type mismatches",
    r"Encountered error while reading file (?P<p>.+?)\.?\s+SQLSTATE",
    r"Path does not exist: (?P<p>.+?)\.?\s+SQLSTATE",
    r"File (?P<p>\S+) does not exist",
    r"Mkdirs failed to create (?P<p>.+?) \(exists=",
    r"(?P<p>(?:file:)?/\S+?) is not a (?:Parquet|ORC) file",
    r"Task failed while writing rows to (?P<p>.+?)\.?\s+SQLSTATE",
    r"Cannot (?:delete|create|open|write|move|rename|read)[^']*'(?P<p>[^']+)'",
    r"(?P<p>(?:file:)?/[^\s'\"]+)",
)


def java_causes(e: BaseException) -> list[tuple[str, str]]:
    """``(class name, message)`` of each exception in the Java cause chain of ``e``, the
    outermost first, the root cause last; from the text when there is no JVM object (Spark
    Connect) or the JVM is gone."""
    throwable = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    out: list[tuple[str, str]] = []
    try:
        while throwable is not None and len(out) < 32:
            out.append((str(throwable.getClass().getName()), str(throwable.getMessage() or "")))
            cause = throwable.getCause()
            if cause is None or cause.equals(throwable):
                break
            throwable = cause
    except Exception:  # noqa: BLE001 - the JVM is gone: what was read so far, then the text
        pass
    if out:
        return out
    text = str(e)
    out.append((type(e).__name__, text.strip().splitlines()[0] if text.strip() else ""))
    for m in re.finditer(r"^Caused by: (?P<cls>[\w.$]+)(?::\s*(?P<msg>.*))?$", text, re.MULTILINE):
        out.append((m.group("cls"), m.group("msg") or ""))
    return out


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else ""


def _root(causes: list[tuple[str, str]]) -> str:
    """The innermost cause that says something, as ``message`` (its class's short name when
    the message alone does not say what failed)."""
    for cls, msg in reversed(causes):
        line = _first_line(msg)
        if line:
            short = cls.rsplit(".", 1)[-1]
            return line if short in ("SparkException", "RuntimeException") else f"{short}: {line}"
    return causes[-1][0].rsplit(".", 1)[-1] if causes else ""


def _headline(e: BaseException, causes: list[tuple[str, str]]) -> str:
    """Spark's own first line (not py4j's ``An error occurred while calling o159.save``)."""
    if getattr(e, "java_exception", None) is not None:
        for _, msg in causes:
            if _first_line(msg):
                return _first_line(msg)
    return _first_line(str(e)) or type(e).__name__


def _path_in(text: str) -> str | None:
    """The file or directory ``text`` is about; for a write, the directory it was writing
    into (not Spark's staging and task directories inside it)."""
    for pattern in _PATH_PATTERNS:
        m = re.search(pattern, text)
        if m:
            path = fs.strip_file_scheme(m.group("p").rstrip(".,:;"))
            return re.split(r"/\.hive-staging|/_temporary/", path)[0]
    return None


def _nul_column(text: str) -> str | None:
    """The partition column whose directory ``col=value`` holds a NUL, in a path of ``text``."""
    for part in re.split(r"[/\n]", text):
        if "\x00" in part and "=" in part:
            return part.split("=", 1)[0]
    return None


#: Linux's limit on a whole path (PATH_MAX, with its NUL): a longer one cannot be made, whatever the permissions
PATH_MAX = 4096


def _path_too_long(text: str) -> UserInputError | None:
    """A directory Hadoop's local file system could not make because its path is longer than the
    system takes (deep partitions of long values): Hadoop says only "Mkdirs failed", as for a
    missing permission."""
    m = re.search(r"Mkdirs failed to create (?P<p>.+?) \(exists=", text)
    return too_long_error(m.group("p")) if m else None


def too_long_error(path: str) -> UserInputError | None:
    """The error for a local ``path`` the file system refuses as too long (ENAMETOOLONG): a name in
    it over 255 bytes, or the whole over PATH_MAX; None when it is neither."""
    local = path[len("file:"):] if path.startswith("file:") else path
    if not local.startswith("/"):
        return None
    size = len(local.encode("utf-8"))
    longest = max(len(c.encode("utf-8")) for c in local.split("/"))
    shown = path if len(path) <= 160 else path[:160] + "..."
    fix = ("the statement left nothing behind. Each partition column adds a level 'key=value' to the path: use "
           "shorter partition values (for example a hash or a prefix of a long one)")
    if longest > 255:
        return UserInputError(f"Cannot create {shown}: a name in it is {longest} bytes long, more than the file "
                              f"system's limit of 255; {fix}.")
    if size >= PATH_MAX:
        return UserInputError(f"Cannot create a directory whose path is {size:,} bytes long, more than the file "
                              f"system's limit of {PATH_MAX:,} bytes for a whole path ({shown}): {fix}, fewer "
                              "partition columns, or a table location with a shorter path.")
    return None


def spark_error(e: BaseException, table_of: Callable[[str], str | None] | None = None) -> Exception:
    """Spark's error as a hivepark error: Spark's first line (never py4j's), the root cause's
    words when they add something, the file and table it is about, and what to do; no JVM
    trace. ``table_of`` names the table a path belongs to."""
    if isinstance(e, HiveParkError):
        return e
    causes = java_causes(e)
    headline = _headline(e, causes)
    text = "\n".join([str(e)] + [m for _, m in causes])
    root = _root(causes)
    if type(e).__name__ in _JVM_GONE:
        return ExecutionError(f"Spark's JVM is not reachable ({headline}): it stopped or ran out of memory. "
                              "Start a new session (raise HIVEPARK_DRIVER_MEMORY if it ran out of memory).")
    names = {type(e).__name__} | {cls.rsplit(".", 1)[-1] for cls, _ in causes[:1]}
    if names & {"AnalysisException", "ParseException"}:  # its text may quote the statement: only its class
        if "[PATH_NOT_FOUND]" in headline:
            path = _path_in(headline)
            return file_error("missing", path, _table(table_of, path), "")
        return SemanticError(f"{headline}. Check the column and table names in the statement.")
    for cls in _DATA_ERRORS:  # before the file markers: a bad value may quote any text
        if "[" + cls in text:
            inner = re.search(r"\[" + cls + r"[^\]]*\][^\n]*", text)
            return DataError(f"{inner.group(0) if inner else headline} Fix the values, or convert "
                             "them explicitly in the SELECT (try_cast returns NULL instead).")
    found = _file_error(text, root, table_of)
    if found is not None:
        return found
    detail = f" Cause: {root}" if root and root not in headline else ""
    return ExecutionError(f"Spark failed: {headline}{detail}")


def _file_error(text: str, root: str, table_of: Callable[[str], str | None] | None) -> HiveParkError | None:
    if "\x00" in text:
        col = _nul_column(text)
        if col is not None:
            return InvalidPartitionSpec(
                f"A dynamic partition value for column {col} contains a NUL character (\\0), which no "
                "directory name can hold: the write left nothing behind. Remove it in the SELECT, e.g. "
                f"replace({col}, char(0), '').")
    too_long = _path_too_long(text)
    if too_long is not None:
        return too_long
    reason = next((r for r, marks in (("no_space", _NO_SPACE), ("missing", _MISSING),
                                      ("permission", _PERMISSION), ("type", _TYPE_MISMATCH),
                                      ("corrupt", _CORRUPT))
                   if any(m in text for m in marks)), None)
    if reason is None:
        return None
    path = _path_in(text)
    return file_error(reason, path, _table(table_of, path), root)


def _table(table_of: Callable[[str], str | None] | None, path: str | None) -> str | None:
    if path is None or table_of is None:
        return None
    try:
        return table_of(path)
    except Exception:  # noqa: BLE001 - naming the table is a courtesy; the error stands
        return None


def file_error(reason: str, path: str | None, table: str | None, cause: str) -> DataFileError:
    """The :class:`DataFileError` for ``reason`` about ``path`` (of ``table``), with the fix."""
    where = path or "a file"
    of = f" of table {table}" if table else ""
    said = f" ({_without_path(cause, path)})" if cause and _without_path(cause, path) else ""
    if reason == "no_space":
        msg = (f"No space left on device while writing {where}{of}{said}. Free space on that file "
               "system (or remove data you no longer need) and run the statement again: a write "
               "that failed left nothing behind.")
    elif reason == "missing":
        fix = (f"Run MSCK REPAIR TABLE {table} to record the files that are there now, or restore it"
               if table else "Restore it, or run MSCK REPAIR TABLE on its table to record the files that "
                             "are there now")
        msg = f"File {where}{of} does not exist: it was deleted or moved outside hivepark. {fix}."
    elif reason == "permission":
        msg = (f"No permission to use {where}{of}{said}. Give this user access to it, or run as its "
               "owner.")
    elif reason == "type":
        msg = (f"Cannot read {where}{of}{said}: the file holds a column under another type than the table gives "
               "it (a type changed by ALTER TABLE, a column dropped and added back with another type, or a file "
               "written elsewhere). The file is intact: keep it. Read the files with Spark (spark.read) and INSERT "
               "their rows, cast to the column's type, into a new table, or LOAD the file into a table whose column "
               "has the file's type.")
    else:
        fix = (f"Move it out of the table's directory and run MSCK REPAIR TABLE {table}, or restore it from a "
               "backup" if table else "Move it out of its table's directory (then MSCK REPAIR TABLE), or "
                                      "restore it from a backup")
        msg = f"Cannot read {where}{of}{said}: the file is damaged or not in the table's format. {fix}."
    return DataFileError(msg, reason, path, table, cause)


def _without_path(cause: str, path: str | None) -> str:
    """The cause's words without the path the message names already (``it`` instead), nor
    Hadoop's ``(exists=false, cwd=...)``."""
    cause = re.sub(r"\s*\(exists=\w+, cwd=[^)]*\)", "", cause)
    if path:
        cause = re.sub(r"(?:file:)?/*" + re.escape(path.lstrip("/")) + r"[^\s)]*", "it", cause)
    cause = cause.strip().rstrip(".")
    return "" if cause in ("it", "") else cause


def translate(e: BaseException, ctx: Any) -> BaseException:
    """``e`` as the hivepark error :func:`spark_error` makes of it, with the table its file
    belongs to named from ``ctx``'s metastore. Errors other than Spark's, the JVM's and the
    file system's (a hivepark bug) are left as they are."""
    table_of = (lambda path: table_at(ctx, path)) if ctx is not None else None
    if isinstance(e, DataFileError):
        if e.table is None:
            table = _table(table_of, e.path)
            if table is not None:
                return file_error(e.reason, e.path, table, e.cause)
        return e
    if isinstance(e, HiveParkError):
        return e
    if isinstance(e, OSError):
        return _os_error(e, table_of)
    if _is_spark_error(e):
        return spark_error(e, table_of)
    return e


def _os_error(e: OSError, table_of: Callable[[str], str | None] | None) -> BaseException:
    text = str(e)
    if e.errno == errno.ENAMETOOLONG:
        m = re.search(r"'(/[^']+)'", text)
        too_long = too_long_error(str(e.filename) if e.filename else m.group(1) if m else "")
        if too_long is not None:
            return too_long
    err = _file_error(text + (f"\n{e.filename}" if e.filename else ""), text, table_of)
    if err is None:
        return ExecutionError(f"File system error: {text}")
    if isinstance(err, DataFileError) and e.filename and err.path != e.filename:
        return file_error(err.reason, str(e.filename), err.table or _table(table_of, str(e.filename)), err.cause)
    return err


def _is_spark_error(e: BaseException) -> bool:
    from pyspark.errors import PySparkException

    return isinstance(e, PySparkException) or type(e).__name__ in ("Py4JJavaError", *_JVM_GONE)


def table_at(ctx: Any, path: str) -> str | None:
    """The qualified name of the table whose directory holds ``path`` (the deepest one), or None.
    Asks the metastore for every table: only an error's message pays for it."""
    target = fs.normalize(fs.strip_file_scheme(path))
    best: tuple[int, str] | None = None
    catalog = ctx.catalog
    for db in catalog.list_databases():
        for name in catalog.list_tables(db):
            try:
                table = catalog.get_table(db, name)
            except HiveParkError:
                continue
            if not table.location:
                continue
            loc = fs.normalize(table.location)
            if (target == loc or target.startswith(loc.rstrip("/") + "/")) and (best is None or len(loc) > best[0]):
                best = (len(loc), table.qualified_name)
    return best[1] if best else None


@contextmanager
def translated(ctx: Any) -> Iterator[None]:
    """Runs the block with its failures as :func:`translate` words them (the one wrapper of
    ``execute``, ``explain``, ``Warehouse.table`` and ``Warehouse.insert``)."""
    try:
        yield
    except Exception as e:
        out = translate(e, ctx)
        if out is e:
            raise
        raise out from None
