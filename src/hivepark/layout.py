"""Hive's path rules: escaping, partition directory names and table locations.

Mirrors ``FileUtils.java`` (``escapePathName``, ``unescapePathName``, ``makePartName``) and
``Warehouse.java`` (default database and table paths). Paths are plain strings joined with
``/`` so that local paths and URIs such as ``s3://bucket/warehouse`` are handled alike;
``os.path`` is never used on them.

Example:
    >>> make_part_name(["ds", "hr"], ["2008-04-08", "11"])
    'ds=2008-04-08/hr=11'
    >>> parse_part_name("ds=2008-04-08/hr=__HIVE_DEFAULT_PARTITION__")
    [('ds', '2008-04-08'), ('hr', None)]
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from hivepark.errors import InvalidPartitionSpec, SemanticError, UserInputError

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
"""Directory value of a NULL or empty partition value; reads back as NULL."""

MAX_NAME_BYTES = 255
"""Longest directory name (in UTF-8 bytes) common file systems accept."""

_CHARS_TO_ESCAPE = frozenset(
    [chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^")
)
_ESCAPE_TABLE = {ord(c): f"%{ord(c):02X}" for c in _CHARS_TO_ESCAPE}
_HEX = frozenset("0123456789abcdefABCDEF")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*:(?://[^/]*)?)(.*)$", re.DOTALL)


def escape_path_name(s: str | None, default: str = DEFAULT_PARTITION_NAME) -> str:
    """Escape one path component the way Hive's ``FileUtils.escapePathName`` does.

    Args:
        s: The text to escape; ``None`` or ``""`` yields ``default``.
        default: What an absent value becomes.

    Returns:
        ``s`` with every character of Hive's escape set replaced by ``%`` and two
        upper-case hex digits. Spaces and non-ASCII characters are kept.

    Example:
        >>> escape_path_name("a/b"), escape_path_name("14:13:12"), escape_path_name("a b")
        ('a%2Fb', '14%3A13%3A12', 'a b')
        >>> escape_path_name(None)
        '__HIVE_DEFAULT_PARTITION__'
    """
    if s is None or s == "":
        return default
    return s.translate(_ESCAPE_TABLE)


def unescape_path_name(s: str) -> str:
    """Undo :func:`escape_path_name`: ``%XX`` (hex) becomes its character.

    A ``%`` not followed by two hex digits is copied through unchanged.

    Example:
        >>> unescape_path_name("a%2Fb"), unescape_path_name("100%"), unescape_path_name("%zz")
        ('a/b', '100%', '%zz')
    """
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "%" and i + 2 < n and s[i + 1] in _HEX and s[i + 2] in _HEX:
            out.append(chr(int(s[i + 1 : i + 3], 16)))
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _component(col: str, value: str | None, default: str) -> str:
    if not col:
        raise UserInputError("Partition column names must not be empty.")
    return escape_path_name(col.lower()) + "=" + escape_path_name(value, default)


def make_part_name(
    cols: Sequence[str],
    values: Sequence[str | None],
    default: str = DEFAULT_PARTITION_NAME,
) -> str:
    """Build a partition's relative directory name, like Hive's ``makePartName``.

    Each component is ``escape(lower(col)) + "=" + escape(value)``; ``None`` and ``""``
    values become ``default``.

    Raises:
        UserInputError: ``cols`` and ``values`` differ in length, or a column name is empty.

    Example:
        >>> make_part_name(["ds", "HR"], ["2008-04-08", None])
        'ds=2008-04-08/hr=__HIVE_DEFAULT_PARTITION__'
    """
    if len(cols) != len(values):
        raise UserInputError(
            f"Partition spec has {len(values)} values for {len(cols)} columns "
            f"({', '.join(cols)}); give one value per partition column."
        )
    return "/".join(_component(c, v, default) for c, v in zip(cols, values))


def parse_part_name(
    name: str, default: str = DEFAULT_PARTITION_NAME
) -> list[tuple[str, str | None]]:
    """Split a partition directory name into ``(column, value)`` pairs.

    The inverse of :func:`make_part_name`: components are unescaped and a value equal to
    ``default`` reads back as ``None``. Leading and trailing ``/`` are ignored.

    Raises:
        UserInputError: A component has no ``=`` or an empty column name.

    Example:
        >>> parse_part_name("ds=2008-04-08/hr=a%2Fb")
        [('ds', '2008-04-08'), ('hr', 'a/b')]
    """
    stripped = name.strip("/")
    if not stripped:
        return []
    out: list[tuple[str, str | None]] = []
    for part in stripped.split("/"):
        key, eq, raw = part.partition("=")
        if not eq or not key:
            raise UserInputError(
                f"Malformed partition directory name {name!r}: component {part!r} is not "
                "of the form column=value."
            )
        value = unescape_path_name(raw)
        out.append((unescape_path_name(key), None if value == default else value))
    return out


def check_partition_column_name(col: str) -> None:
    """A partition column's name starts its directories' names (``col=value``): one starting
    with ``_`` or ``.`` makes every partition directory hidden to Hadoop's and Spark's file
    listing (and to Hive's own, ``FileUtils.HIDDEN_FILES_PATH_FILTER``), so its data would be
    written and then never found. Hive's grammar only takes such a name in backquotes.

    Raises:
        SemanticError: the name starts with ``_`` or ``.``; the message says why and how to fix it.

    Example:
        >>> check_partition_column_name("p_1")
        >>> check_partition_column_name("_p")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hivepark.errors.SemanticError: Partition column name '_p' starts with '_': ...
    """
    _check_directory_column_name(col, "Partition column", "partition directories")


def check_skewed_column_name(col: str) -> None:
    """A list-bucketing skewed column's name starts its skewed-value directories' names
    (``col=value``, inside each partition): one starting with ``_`` or ``.`` makes them hidden
    to Hive's listing (``FileUtils.HIDDEN_FILES_PATH_FILTER``), ``.`` to Spark's and Hadoop's
    too, so readers other than hivepark would miss the rows in them.

    Raises:
        SemanticError: the name starts with ``_`` or ``.``; the message says why and how to fix it.

    Example:
        >>> check_skewed_column_name("k_1")
        >>> check_skewed_column_name(".k")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hivepark.errors.SemanticError: Skewed column name '.k' starts with '.': ...
    """
    _check_directory_column_name(col, "Skewed column", "skewed-value directories")


def _check_directory_column_name(col: str, kind: str, directories: str) -> None:
    if col[:1] in ("_", "."):
        raise SemanticError(
            f"{kind} name '{col}' starts with '{col[0]}': its {directories} "
            f"({escape_path_name(col.lower())}=...) would be hidden files for Hadoop, Spark and Hive, so "
            f"the rows written to them could never be found. Rename the column so that it starts with "
            f"a letter or a digit (e.g. '{_visible(col)}').")


def _visible(col: str) -> str:
    rest = col.lstrip("_.")
    return f"p{col}" if not rest else rest


PARTITION_NAME_PATTERN = "hive.metastore.partition.name.whitelist.pattern"
"""The setting of Hive's metastore whitelist for partition values (empty: any value)."""


def check_partition_name_pattern(pattern: str | None, values: Sequence[str | None]) -> None:
    """Hive's metastore check of new partitions against ``hive.metastore.partition.name.whitelist.pattern``
    (``MetaStoreServerUtils.validatePartitionNameCharacters``): each value, the default partition's name
    for NULL or ``''`` (as Hive's FileSinkOperator gives it), must match ``pattern`` as a whole. An
    empty or absent pattern allows every value.

    Raises:
        InvalidPartitionSpec: A value does not match, with Hive's text and what to do.
        UserInputError: The pattern is not a regular expression.

    Example:
        >>> check_partition_name_pattern("[^9]*", ["2008-04-08", None])
        >>> check_partition_name_pattern("[^9]*", ["val_9"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hivepark.errors.InvalidPartitionSpec: Partition value 'val_9' contains a character not matched by ...
    """
    problem = partition_name_problem(pattern, values)
    if problem is not None:
        raise InvalidPartitionSpec(f"{problem} Nothing was written: change the value, or the pattern.")


def partition_name_problem(pattern: str | None, values: Sequence[str | None]) -> str | None:
    """Hive's text for the first of ``values`` that :func:`check_partition_name_pattern` refuses
    (MSCK REPAIR reports it for the directory), None when every value matches.

    Raises:
        UserInputError: The pattern is not a regular expression.
    """
    if not pattern:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        raise UserInputError(
            f"{PARTITION_NAME_PATTERN}='{pattern}' is not a regular expression ({e}). Fix it, or SET it to "
            "nothing to allow every partition value.") from None
    for v in values:
        text = DEFAULT_PARTITION_NAME if v is None or v == "" else v
        if compiled.fullmatch(text) is None:
            return (f"Partition value '{text}' contains a character not matched by whitelist pattern '{pattern}'.  "
                    f"(configure with {PARTITION_NAME_PATTERN})")
    return None


def name_bytes(col: str, value: str | None, default: str = DEFAULT_PARTITION_NAME) -> int:
    """The length in UTF-8 bytes of the directory name ``col=value``, escaped.

    Example:
        >>> name_bytes("ds", "2008-04-08"), name_bytes("k", "a/b"), name_bytes("k", "é")
        (13, 7, 4)
    """
    return len(_component(col, value, default).encode("utf-8"))


def check_part_value(col: str, value: str | None, default: str = DEFAULT_PARTITION_NAME) -> None:
    """Check that the directory ``col=value`` fits a file-system name (255 UTF-8 bytes).

    Raises:
        UserInputError: The escaped component is too long; the message names the column,
            the length and the fix.

    Example:
        >>> check_part_value("ds", "2008-04-08")
        >>> check_part_value("ds", "x" * 300)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hivepark.errors.UserInputError: Partition value for column 'ds' gives a directory ...
    """
    size = name_bytes(col, value, default)
    if size > MAX_NAME_BYTES:
        raise UserInputError(
            f"Partition value for column {col.lower()!r} gives a directory name of {size} "
            f"bytes (escaped, UTF-8), more than the file-system limit of {MAX_NAME_BYTES}. "
            "Use a shorter value (for example a hash or a prefix of it) for this column."
        )


def _split_uri(path: str) -> tuple[str, str]:
    """``("s3://bucket", "/x/y")`` for URIs, ``("", path)`` for plain paths."""
    m = _SCHEME.match(path)
    if m and len(m.group(1)) > 2:  # not a Windows drive letter such as "C:"
        return m.group(1), m.group(2)
    return "", path


def _normalise(path: str) -> tuple[str, str]:
    prefix, rest = _split_uri(path)
    if rest == "":
        return prefix, ""
    norm = posixpath.normpath(rest)
    return prefix, "" if norm == "." else norm


def is_within(parent: str, child: str) -> bool:
    """Whether ``child`` is ``parent`` or lies below it, after resolving ``.`` and ``..``.

    Purely lexical (no file-system access, symbolic links are not followed); URIs must
    share scheme and authority.

    Example:
        >>> is_within("s3://b/t", "s3://b/t/ds=1"), is_within("/w/t", "/w/t/../u")
        (True, False)
    """
    p_prefix, p_path = _normalise(parent)
    c_prefix, c_path = _normalise(child)
    if p_prefix != c_prefix:
        return False
    if c_path == p_path:
        return True
    if p_path == "":
        if p_prefix:  # "s3://bucket" holds every path of the bucket
            return c_path.startswith("/")
        return not (c_path.startswith("/") or c_path == ".." or c_path.startswith("../"))
    return c_path.startswith(p_path.rstrip("/") + "/")


def _join(base: str, relative: str) -> str:
    return base.rstrip("/") + "/" + relative if relative else base


def partition_path(
    table_location: str,
    cols: Sequence[str],
    values: Sequence[str | None],
    default: str = DEFAULT_PARTITION_NAME,
) -> str:
    """The directory of one partition: ``table_location/k=v/k2=v2``.

    Every value is checked with :func:`check_part_value`. The result always lies inside
    ``table_location``: escaped components have the form ``k=v`` with no ``/``, so none is
    empty, ``.`` or ``..`` (this is asserted).

    Example:
        >>> partition_path("s3://bucket/t", ["ds", "hr"], ["2008-04-08", "../x"])
        's3://bucket/t/ds=2008-04-08/hr=..%2Fx'
    """
    if not table_location:
        raise UserInputError("The table has no location; cannot place its partitions.")
    for col, value in zip(cols, values):
        check_part_value(col, value, default)
    name = make_part_name(cols, values, default)
    parts = name.split("/") if name else []
    assert all(p not in ("", ".", "..") and "=" in p for p in parts), name
    path = _join(table_location, name)
    assert is_within(table_location, path), path
    return path


def default_partition_at(
    table_location: str, cols: Sequence[str], location: str
) -> tuple[list[str | None], bool] | None:
    """Whether ``location`` is where partitions of the table are made by default: the values of
    the partition whose default directory (:func:`partition_path`) is ``location`` or holds it, and
    False; or the values a prefix of the keys has, and True, when ``location`` holds the default
    directories of every partition with those values; None when no partition's default directory
    is, holds or lies in ``location``.

    Example:
        >>> default_partition_at("/w/t", ["ds", "hr"], "/w/t/ds=a%2Fb/hr=1/x")
        (['a/b', '1'], False)
        >>> default_partition_at("/w/t", ["ds", "hr"], "/w/t/ds=1")
        (['1'], True)
        >>> default_partition_at("/w/t", ["ds"], "/w/t/other"), default_partition_at("/w/t", ["ds"], "/w/u/ds=1")
        (None, None)
    """
    t_prefix, t_path = _normalise(table_location)
    l_prefix, l_path = _normalise(location)
    if t_prefix != l_prefix or not l_path.startswith(t_path.rstrip("/") + "/"):
        return None
    parts = l_path[len(t_path.rstrip("/")) + 1:].split("/")
    values: list[str | None] = []
    for col, part in zip(cols, parts):
        key, eq, raw = part.partition("=")
        if not eq or key != escape_path_name(col.lower()):
            return None
        value = unescape_path_name(raw)
        values.append(None if value == DEFAULT_PARTITION_NAME else value)
    return (values, len(values) < len(cols)) if values else None


def _check_name(kind: str, name: str) -> str:
    lowered = name.lower()
    if lowered in ("", ".", ".."):
        raise UserInputError(f"Invalid {kind} name {name!r}: use a non-empty identifier.")
    return escape_path_name(lowered)


def database_location(warehouse: str, db: str) -> str:
    """Default location of a database: the warehouse for ``default``, else ``<db>.db``.

    Example:
        >>> database_location("/wh", "default"), database_location("s3://b/wh/", "Sales")
        ('/wh', 's3://b/wh/sales.db')
    """
    name = _check_name("database", db)
    if name == "default":
        return warehouse
    return _join(warehouse, name + ".db")


def table_location(warehouse: str, db: str, table: str) -> str:
    """Default location of a managed table, as Hive's ``Warehouse`` computes it.

    Example:
        >>> table_location("/wh", "default", "T"), table_location("/wh", "sales", "t")
        ('/wh/t', '/wh/sales.db/t')
    """
    return table_dir(database_location(warehouse, db), table)


def table_dir(db_location: str, table: str) -> str:
    """A managed table's directory in its database's location.

    Example:
        >>> table_dir("/data/sales", "T")
        '/data/sales/t'
    """
    return _join(db_location, _check_name("table", table))


# ---------------------------------------------------------------- list bucketing

LB_DEFAULT_DIR_NAME = "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"
"""Directory of the rows whose skewed columns hold no skewed value (once per skewed column)."""

LB_DEFAULT_KEY = "HIVE_DEFAULT_LIST_BUCKETING_KEY"
"""Key of the default directory in a skewed-value-to-location map."""


def lb_dir_name(cols: Sequence[str], values: Sequence[str]) -> str:
    """Relative directory of one skewed value, like Hive's ``makeListBucketingDirName``.

    Example:
        >>> lb_dir_name(["key", "value"], ["484", "val/484"])
        'key=484/value=val%2F484'
    """
    return make_part_name(cols, values)


def lb_default_dir_name(n_cols: int) -> str:
    """Relative default directory: the default name nested once per skewed column.

    Example:
        >>> lb_default_dir_name(2)
        'HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME/HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME'
    """
    return "/".join([LB_DEFAULT_DIR_NAME] * max(1, n_cols))


def is_absolute(location: str) -> bool:
    """Whether a location is an absolute path or a URI (not relative to a partition).

    Example:
        >>> is_absolute("s3://b/x"), is_absolute("/w/t"), is_absolute("x=1/y=2")
        (True, True, False)
    """
    return location.startswith("/") or bool(_split_uri(location)[0])


def resolve_location(base: str, location: str) -> str:
    """``location`` if absolute, else joined below ``base``.

    Example:
        >>> resolve_location("/w/t/ds=1", "x=30"), resolve_location("/w/t", "s3://b/y")
        ('/w/t/ds=1/x=30', 's3://b/y')
    """
    return location if is_absolute(location) else _join(base, location)
