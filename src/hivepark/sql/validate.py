"""Hive's checks of a statement against its target table, with Hive's codes and texts:
partition specs (static values in their canonical text, dynamic-partition rules), skew
clauses, and the ALTERs a skewed table refuses. Pure: no Spark, no file system."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from hivepark import layout
from hivepark.catalog.filters import codecs_for, compile_filter, key_values
from hivepark.catalog.models import Column, Partition, Table
from hivepark.catalog.skew import SkewLayout, SkewSpec, canonical_value, lb_directories, skewable, table_skew
from hivepark.errors import InvalidPartitionSpec, SemanticError
from hivepark.expr import Expr, IsNull, NotNull, and_all
from hivepark.expr.nodes import COMPARISONS, Value
from hivepark.sql.statements import (
    AddColumns,
    ChangeColumn,
    PartitionSpec,
    SetSkewedLocation,
    SkewClause,
    SkewValue,
)
from hivepark.types import HiveType, PartitionValueError

# ---------------------------------------------------------------- partition specs


def not_partitioned(table: Table) -> str:
    """Why ``table`` has no metastore partitions: not partitioned, or a storage handler's table
    (an Iceberg table PARTITIONED BY keeps its partitions in its own metadata)."""
    if "storage_handler" in table.properties:  # storage.handlers.STORAGE_HANDLER_KEY
        return (f"Table {table.qualified_name} keeps its rows in the source of its storage handler, which "
                "places them itself (an Iceberg table by its partition spec), so it has no metastore partitions")
    return f"Table {table.qualified_name} is not partitioned"


def check_spec_columns(table: Table, spec: PartitionSpec) -> None:
    """The spec names only partition columns of ``table``, each once."""
    if not table.is_partitioned and spec:
        raise InvalidPartitionSpec(f"{not_partitioned(table)} but partition spec exists: remove the PARTITION clause")
    keys = set(table.partition_key_names())
    bad = [(c, v) for c, v, _ in spec if c not in keys]
    if bad:
        shown = ", ".join(f"{c}={v if v is not None else 'null'}" for c, v in bad)
        raise InvalidPartitionSpec(
            f"Partition spec {{{shown}}} contains non-partition columns. The partition "
            f"columns of {table.qualified_name} are: {', '.join(table.partition_key_names())}")
    names = spec.columns
    if len(set(names)) != len(names):
        raise InvalidPartitionSpec(f"Partition spec names a column twice: {names}")


def partition_value(table: Table, key: str, value: object, naming: bool = False) -> str | None:
    """A static partition value (text from SQL, or a Python value) in its column's
    canonical text (:meth:`HiveType.partition_text`, the text a dynamic insert writes too);
    None for the default partition. Raises InvalidPartitionSpec (Hive's 10248) when it is not
    of the type, naming the column, the value, the type, why, and a value that fits; and when
    it holds a NUL character, which no directory name (nor PostgreSQL's text) can hold, unless
    ``naming`` (a filter that finds partitions: one an older SQLite metastore holds can be dropped)."""
    if not naming and isinstance(value, str) and "\x00" in value:
        raise InvalidPartitionSpec(
            f"A static partition value for column {key} contains a NUL character (\\0), which no directory "
            "name can hold: nothing was written. Remove it from the PARTITION clause.")
    typ = table.partition_types()[key]
    hive_type = HiveType.parse(typ)
    try:
        text = hive_type.partition_text(value)
    except PartitionValueError as e:
        given = "string" if isinstance(value, str) else type(value).__name__
        raise InvalidPartitionSpec(
            f"Cannot add partition column {key} of type {given} as it cannot be converted to type {typ}: "
            f"partition value '{value}' for column {key} is not a valid {typ} ({e.reason}). Give "
            f"{'an' if typ[:1] in 'aeiou' else 'a'} {typ} value, e.g. PARTITION ({key}={hive_type.example_literal()})",
            code=10248) from None
    except ValueError as e:
        raise InvalidPartitionSpec(f"Partition column {key} of {table.qualified_name}: {e}") from None
    layout.check_part_value(key, text)
    return text


def check_not_default_partition(table: Table, spec: PartitionSpec) -> None:
    """ALTER TABLE ... ADD PARTITION or RENAME TO PARTITION naming the default partition: Hive's 10111
    for its name, and Hive's Partition check for NULL or '' (which a write stores there)."""
    types = table.partition_types()
    for c, v, dynamic in spec:
        blank_char = v is not None and c in types and HiveType.parse(types[c]).base == "char" and not v.strip(" ")
        if not dynamic and (v is None or v == "" or blank_char):  # a CHAR of spaces is '' once stripped
            raise InvalidPartitionSpec(
                f"partition spec is invalid; field {c} does not exist or is empty: a partition is named by "
                f"values, and the rows whose {c} is NULL or empty go to the default partition "
                f"({layout.DEFAULT_PARTITION_NAME}), which INSERT makes. Give {c} a value.")
        if not dynamic and v is not None and layout.DEFAULT_PARTITION_NAME in v:
            raise InvalidPartitionSpec(
                f"Partition value contains a reserved substring (User value: {v} Reserved substring: "
                f"{layout.DEFAULT_PARTITION_NAME}). The default partition holds the rows whose {c} is NULL or "
                "empty: it is made by INSERT, not added.", code=10111)


def full_spec(table: Table, spec: PartitionSpec, what: str = "partition") -> tuple[str | None, ...]:
    """Values for every partition key from a fully static spec, validated and canonical."""
    check_spec_columns(table, spec)
    given = spec.static
    missing = [k for k in table.partition_key_names() if k not in given]
    if missing or spec.dynamic:
        raise InvalidPartitionSpec(
            f"Partition spec for {what} must give a value for every partition column "
            f"({', '.join(table.partition_key_names())}); missing: "
            f"{', '.join(missing or spec.dynamic)}")
    return tuple(partition_value(table, k, given[k]) for k in table.partition_key_names())


def spec_filter(table: Table, spec: PartitionSpec) -> Expr:
    """The partitions a (possibly partial) static spec names, as a predicate."""
    check_spec_columns(table, spec)
    atoms: list[Expr] = []
    for i, (c, v, _) in enumerate(spec):
        nv = partition_value(table, c, v, naming=True)
        op = spec.op(i)
        if nv is None:
            if op not in ("=", "<>"):
                raise InvalidPartitionSpec(f"Partition column {c} cannot be compared with {op} to NULL or the "
                                           "default partition: use = or <>")
            atoms.append(IsNull(c) if op == "=" else NotNull(c))
        else:
            atoms.append(COMPARISONS[op](c, _spec_literal(HiveType.parse(table.partition_types()[c]), nv)))
    return and_all(*atoms)


def _spec_literal(typ: HiveType, text: str) -> Value:
    """A spec's canonical value as the literal its key is compared with: a Decimal for a
    number (exact, where a double is not beyond 2**53), a bool for a BOOLEAN (the text
    'false' compares with no boolean), else the text (dates and timestamps in canonical text)."""
    if typ.family == "numeric":
        return Decimal(text)
    if typ.kind == "boolean":
        return text == "true"  # the canonical text: true or false
    return text


def named_partitions(table: Table, spec: PartitionSpec, parts: Sequence[Partition]) -> list[Partition]:
    """The partitions among ``parts`` (the metastore's answer to :func:`spec_filter`, which may
    keep more: a BIGINT beyond 2**53 is filtered as a double) that the static ``spec`` names,
    each decided exactly by its typed values (as DROP PARTITION decides)."""
    return exactly(table, spec_filter(table, spec), parts)


def exactly(table: Table, predicate: Expr, parts: Sequence[Partition]) -> list[Partition]:
    """The partitions among ``parts`` for which ``predicate`` (over partition columns) is TRUE,
    decided exactly (:func:`hivepark.catalog.filters.compile_filter`).

    Raises:
        Undecidable: an atom that is not a comparison of a partition column with a constant.
    """
    codecs = codecs_for(table)
    keep = compile_filter(predicate, codecs)
    keys = table.partition_key_names()
    return [p for p in parts if keep(key_values(dict(zip(keys, p.values)), codecs)) is True]


def python_spec(table: Table, partition: Mapping[str, object] | None) -> PartitionSpec:
    """``Warehouse.insert``'s ``partition`` mapping (None: dynamic) as a spec, each static
    value in the same canonical text as the SQL path gives it. A mapping has no order: its
    entries are taken in the table's key order (``{"hr": None, "ds": "x"}`` is ds static, hr
    dynamic, as ``PARTITION (ds='x', hr)``); a name that is no key comes last, to be refused."""
    order = {k: i for i, k in enumerate(table.partition_key_names())}
    entries: list[tuple[str, str | None, bool]] = []
    for k, v in (partition or {}).items():
        k = k.lower()
        if v is None:
            entries.append((k, None, True))
        else:
            entries.append((k, partition_value(table, k, v) if k in order else str(v), False))
    entries.sort(key=lambda e: order.get(e[0], len(order)))
    return PartitionSpec(tuple(entries))


def dynamic_columns(table: Table, spec: PartitionSpec, dynamic_enabled: bool,
                    strict: bool) -> list[str]:
    """Checks an INSERT's PARTITION clause as Hive does; returns its dynamic columns, in
    order. No clause on a partitioned table means every key is dynamic."""
    if not table.is_partitioned:
        check_spec_columns(table, spec)
        return []
    if not spec:
        spec = PartitionSpec.all_dynamic(table.partition_key_names())
    dyn = spec.dynamic
    if dyn and not dynamic_enabled:
        raise SemanticError("Dynamic partition is disabled. Either enable it by setting "
                            "hive.exec.dynamic.partition=true or specify partition column values",
                            code=10095)
    check_spec_columns(table, spec)
    if dyn and len(dyn) == len(spec) and strict:
        raise SemanticError("Dynamic partition strict mode requires at least one static "
                            "partition column. To turn this off set "
                            "hive.exec.dynamic.partition.mode=nonstrict", code=10096)
    names = spec.columns
    keys = list(table.partition_key_names())
    if sorted(names) == sorted(keys) and names != keys:
        # Hive puts the spec in the table's order before its checks: a static column after a
        # dynamic one in that order is 10094, found before the order itself is checked (10125)
        dynamic_of = {c: d for c, _, d in spec}
        seen = False
        for k in keys:
            if not dynamic_of[k] and seen:
                raise SemanticError(f"Dynamic partition cannot be the parent of a static partition '{k}'",
                                    code=10094)
            seen = seen or dynamic_of[k]
    if names != keys:
        raise SemanticError(
            "Partition columns in partition specification are not the same as that defined in "
            "the table schema. The names and orders have to be exactly the same. Partition "
            f"columns in the table schema are: ({', '.join(table.partition_key_names())}), while "
            f"the partitions specified in the query are: ({', '.join(names)}).", code=10125)
    seen_dynamic = False
    for c, _, dynamic in spec:
        if not dynamic and seen_dynamic:
            raise SemanticError(f"Dynamic partition cannot be the parent of a static partition "
                                f"'{c}'", code=10094)
        seen_dynamic = seen_dynamic or dynamic
    return dyn


def check_if_not_exists(dynamic: list[str], if_not_exists: bool, spec: PartitionSpec | None = None) -> None:
    """INSERT ... PARTITION (...) IF NOT EXISTS with a dynamic column: Hive's 10127, which
    names the static part of the spec (``{ds=2008-04-08}``)."""
    if dynamic and if_not_exists:
        static = ", ".join(f"{c}={v}" for c, v, d in spec or () if not d)
        raise SemanticError("Dynamic partitions do not support IF NOT EXISTS. Specified "
                            f"partitions with value : {{{static}}}", code=10127)


# ---------------------------------------------------------------- skew (list bucketing)

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def skew_spec(columns: tuple[Column, ...] | list[Column], clause: SkewClause,
              part_keys: tuple[Column, ...] | list[Column] = ()) -> SkewSpec:
    """Validates a SKEWED BY clause against the table's data columns (Hive's checks, in
    Hive's order) and returns it with each value in its column's canonical text."""
    names = list(clause.columns)
    tuples = clause.values
    if not names and tuples:
        raise SemanticError("Skewed column name is empty but skewed value is not.", code=10204)
    if names and not tuples:
        raise SemanticError("Skewed column value is empty but skewed name is not.", code=10205)
    if not names:
        raise SemanticError("No skewed column name.", code=10200)
    dups = [n for i, n in enumerate(names) if n in names[:i]]
    if dups:
        raise SemanticError(f"Duplicate skewed column name: {dups[0]}", code=10202)
    types = {c.name: c.type for c in columns}
    bad = [n for n in names if n not in types]
    if bad:
        keys = {c.name for c in part_keys}
        why = ("a partition column cannot be skewed" if set(bad) & keys
               else "skewed columns must be data columns")
        raise SemanticError(f"Invalid skewed column name: {' '.join(bad)} ({why}; the data "
                            f"columns are: {', '.join(types)})", code=10203)
    for n in names:
        if not skewable(types[n]):
            raise SemanticError(f"Invalid skewed column name: {n} (a {types[n]} column cannot "
                                "be skewed: use a column of a scalar type)", code=10203)
        if clause.stored_as_dirs:  # its directories would be hidden: written, then not found by Hive
            layout.check_skewed_column_name(n)
    values: list[tuple[str, ...]] = []
    for tup in tuples:
        if len(tup) != len(names):
            raise SemanticError("The number of skewed column names and the number of skewed "
                                f"column values are different: {len(names)} : {len(tup)}",
                                code=10206)
        value = tuple(skew_value(n, types[n], v) for n, v in zip(names, tup))
        if clause.stored_as_dirs:
            _check_skew_directory(names, value)
        if value not in values:
            values.append(value)
    dirs = lb_directories(names, values)
    clash = [d for i, d in enumerate(dirs) if d in dirs[:i]]
    if clash:
        raise SemanticError(f"Two skewed values map to the same directory {clash[0]}: an "
                            "empty string and __HIVE_DEFAULT_PARTITION__ cannot both be skewed")
    return SkewSpec(tuple(names), tuple(values), clause.stored_as_dirs)


def _check_skew_directory(names: Sequence[str], value: tuple[str, ...]) -> None:
    """Each level of a skewed value's directory (``col=value``, escaped) must fit a file name,
    else every write that meets the value would fail when it makes the directory."""
    for n, v in zip(names, value):
        size = layout.name_bytes(n, v)
        if size > layout.MAX_NAME_BYTES:
            shown = v if len(v) <= 40 else v[:40] + "..."
            raise SemanticError(
                f"Skewed value '{shown}' for column {n} gives a directory name of {size} bytes (escaped, "
                f"UTF-8), more than the file-system limit of {layout.MAX_NAME_BYTES}: rows of that value "
                "could not be written. Remove it from SKEWED BY ... ON, or skew a shorter column (for "
                "example a hash or a prefix of this one).")


def skew_value(col: str, typ: str, value: SkewValue) -> str:
    if not value.constant:
        raise SemanticError(f"Skewed value {value.sql} for column {col} must be a constant: "
                            "write a string or number literal")
    if value.text is None:
        raise SemanticError(f"Skewed value NULL for column {col} is not allowed: rows whose "
                            "skewed column is NULL always go to the default directory")
    try:
        return canonical_value(value.text, typ)
    except ValueError:
        raise SemanticError(f"Skewed value '{value.text}' for column {col} is not a valid "
                            f"{typ}: give a {typ} value") from None


def check_partition_key_types(keys: Sequence[Column]) -> None:
    """Hive's 10126 for a partition column of a complex type, and a BINARY one refused too: a
    partition's value is the text of its directory's name, which neither has (every write
    into such a table failed). Checked at CREATE TABLE, CTAS (typed from the query) included."""
    for key in keys:
        typ = HiveType.parse(key.type)
        if typ.is_scalar:
            continue
        if typ.base in ("array", "map", "struct", "uniontype"):
            raise SemanticError(f"Partition column must be of primitive type. Found {key.name} of type: {typ.text}. "
                                "Partition by a primitive column (a number, string, date, ...), or keep "
                                f"{key.name} as a data column.", code=10126)
        raise SemanticError(f"Partition column {key.name} of type {typ.text} is not supported: a partition's value "
                            "is the text of its directory's name. Use a STRING partition column (for bytes, "
                            f"hex({key.name})), or keep {key.name} as a data column.")


def check_create_skew(table: Table, bucketed: bool) -> None:
    """LB combinations hivepark cannot keep correct: bucketing (CLUSTERED BY)."""
    if table_skew(table) and bucketed:
        raise SemanticError("A list bucketing (SKEWED BY) table cannot also be bucketed "
                            "(CLUSTERED BY): remove one of the two clauses")


def check_column_change(table: Table, action: object) -> None:
    """10207: a skewed column cannot be renamed or retyped (by CHANGE, or by REPLACE COLUMNS
    giving it another type; one REPLACE COLUMNS leaves out is refused where the columns change)."""
    spec = table_skew(table)
    if spec is not None and isinstance(action, AddColumns) and action.replace:
        types = {c.name: c.type for c in table.columns}
        for c in action.columns:
            if c.name in spec.columns and c.type.lower() != types.get(c.name, "").lower():
                raise SemanticError(f"{c.name} is a skewed column. It's not allowed to rename skewed column or "
                                    "change skewed column type.", code=10207)
        return
    if spec is None or not isinstance(action, ChangeColumn) or action.column not in spec.columns:
        return
    current = next((c.type for c in table.columns if c.name == action.column), None)
    renamed = action.new_name is not None and action.new_name != action.column
    retyped = action.new_type is not None and action.new_type != current
    if renamed or retyped:
        raise SemanticError(f"{action.column} is a skewed column. It's not allowed to rename "
                            "skewed column or change skewed column type.", code=10207)


def check_skewed_location(action: SetSkewedLocation) -> None:
    if not action.mapped:
        raise SemanticError("Alter table skewed location doesn't have location map.", code=10198)
    if not action.entries:
        raise SemanticError("Alter table skewed location doesn't have locations.", code=10197)


def location_changes(table: Table, base: SkewLayout, action: SetSkewedLocation
                     ) -> dict[tuple[str, ...] | None, str]:
    """SET SKEWED LOCATION's entries: skewed value (None: the default directory) -> URI as
    written (the caller normalises it)."""
    types = {c.name: c.type for c in table.columns}
    out: dict[tuple[str, ...] | None, str] = {}
    for items, loc in action.entries:
        if not loc:
            raise SemanticError("Alter table skewed location doesn't have locations.",
                                code=10197)
        if not _URI.match(loc):
            raise SemanticError(f"{loc} is not absolute or has no scheme information. Please "
                                "specify a complete absolute uri with scheme information.")
        if len(items) == 1 and items[0].constant and items[0].text == layout.LB_DEFAULT_KEY \
                and items[0].sql.startswith("'"):
            out[None] = loc
            continue
        if len(items) != len(base.columns):
            raise SemanticError("The number of skewed column names and the number of skewed "
                                f"column values are different: {len(base.columns)} : "
                                f"{len(items)}", code=10206)
        key = tuple(skew_value(c, types.get(c, "string"), v) for c, v in zip(base.columns, items))
        if key not in base.values:
            shown = ", ".join(key)
            raise SemanticError(f"Skewed value ({shown}) is not one of the skewed values of "
                                f"this data ({', '.join('(' + ', '.join(v) + ')' for v in base.values)}): "
                                "a location can be set only for a skewed value, or for "
                                f"'{layout.LB_DEFAULT_KEY}'")
        out[key] = loc
    return out


def check_skew_columns(table: Table, columns: tuple[str, ...]) -> None:
    """ANALYZE ... COMPUTE SKEW FOR COLUMNS: data columns of the table."""
    data_cols = [c.name for c in table.columns]
    bad = [c for c in columns if c not in data_cols]
    if bad or not columns:
        raise SemanticError(f"Invalid skewed column name: {' '.join(bad)} (COMPUTE SKEW needs "
                            f"data columns of {table.qualified_name}: {', '.join(data_cols)})",
                            code=10203)
