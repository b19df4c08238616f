"""sqlglot's tree of one statement -> a typed statement (``sql/statements.py``).

Only what the text alone decides is checked here (unsupported forms, missing types, column
lists); checks against the target table are in ``sql/validate.py``.
"""

from __future__ import annotations

import re

from sqlglot import exp

from hivepark.catalog.buckets import Bucketing
from hivepark.catalog.models import Column
from hivepark.errors import InvalidPartitionSpec, ParseError, SemanticError, UnsupportedError
from hivepark.expr.from_sqlglot import from_sqlglot
from hivepark.sql import dialect as d
from hivepark.sql import statements as s
from hivepark.types import HiveType, type_parameter_problem


def build(tree: exp.Expression) -> s.Statement:
    """The statement a parsed tree describes; raises the user's error if it is invalid."""
    if isinstance(tree, exp.Query):
        return s.Query(tree)
    if isinstance(tree, d.Explain):
        return _explain(tree)
    builder = _BUILDERS.get(type(tree))
    if builder is None:
        raise UnsupportedError(f"{tree.key.upper()} statements are not supported by hivepark")
    return builder(tree)


# ---------------------------------------------------------------- parts


def table_ref(node: exp.Table) -> s.TableRef:
    db = node.args.get("db")
    return s.TableRef(db.name.lower() if db is not None else None, node.name.lower())


def hive_type(dt: exp.DataType, column: str | None = None) -> str:
    """A column type as Hive writes it, lower-case (``decimal(10,2)``, ``array<int>``); the
    declared type of ``column``, whose parameters Hive checks (``decimal(39,0)`` is refused)."""
    text = dt.sql(dialect="hive").lower()
    typ = HiveType.parse({"integer": "int", "text": "string"}.get(text, text)).text
    problem = type_parameter_problem(typ) if column is not None else None
    if problem is not None:
        raise SemanticError(f"Column {column} of type {typ}: {problem}.")
    return typ


_TRANSFORMS = {"year": "year", "years": "year", "month": "month", "months": "month", "day": "day", "days": "day",
               "hour": "hour", "hours": "hour", "bucket": "bucket", "truncate": "truncate", "trunc": "truncate"}


def partition_transform(e: exp.Expression) -> s.PartitionTransform:
    """One field of ``PARTITIONED BY SPEC (...)``: a column, or ``year|month|day|hour(col)``,
    ``bucket(n, col)``, ``truncate(w, col)``."""
    if isinstance(e, exp.Column):
        return s.PartitionTransform("identity", e.name.lower())
    name = str(e.this) if isinstance(e, exp.Anonymous) else type(e).__name__
    cols = list(e.find_all(exp.Column))
    nums = [lit for lit in e.find_all(exp.Literal) if not lit.is_string]
    kind = _TRANSFORMS.get(name.lower())
    needs_param = kind in ("bucket", "truncate")
    if kind is None or len(cols) != 1 or len(nums) != (1 if needs_param else 0):
        raise SemanticError(f"'{e.sql(dialect='hive')}' is not a partition transform: use a column, year(c), month(c), "
                            "day(c), hour(c), bucket(n, c) or truncate(w, c)")
    return s.PartitionTransform(kind, cols[0].name.lower(), int(nums[0].name) if needs_param else None)


def column_defs(schema: exp.Schema | None) -> list[Column]:
    """Columns of a ``(a INT COMMENT 'x', ...)`` clause, rejecting duplicate names."""
    cols: list[Column] = []
    if schema is None:
        return cols
    for cd in schema.expressions:
        if not isinstance(cd, exp.ColumnDef):
            continue
        comment = _column_comment(cd)
        kind = cd.args.get("kind")
        if kind is None:
            raise SemanticError(f"Column {cd.name} has no type: give it one, e.g. {cd.name} STRING")
        cols.append(Column(cd.name.lower(), hive_type(kind, cd.name.lower()), comment))
    names = [c.name for c in cols]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise SemanticError(f"Duplicate column name: {dups[0]}. Each column must have a unique name.")
    return cols


def literal_value(node: exp.Expression) -> str | None:
    """A partition value as Hive stores it: the literal's text; NULL is None."""
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return "-" + node.this.name
    if isinstance(node, exp.Literal):
        return node.name
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, (exp.Cast, exp.Date)) and isinstance(node.this, exp.Literal):
        return node.this.name
    raise InvalidPartitionSpec(
        f"Partition value {node.sql(dialect='hive')} must be a constant: write it as a "
        "string or number literal, e.g. PARTITION (ds='2008-04-08')")


_SPEC_OPS: dict[type, str] = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">",
                               exp.GTE: ">="}


def partition_spec(node: exp.Expression | None, comparisons: bool = False) -> s.PartitionSpec:
    """``PARTITION (ds='1', hr)`` in the order written; with ``comparisons`` (DROP
    PARTITION), also ``(c < 4)``, ``(ds <> 'x')``."""
    if node is None:
        return s.PartitionSpec()
    out: list[tuple[str, str | None, bool]] = []
    ops: list[str] = []
    for e in node.expressions:
        op = _SPEC_OPS.get(type(e))
        if op is not None and (op == "=" or comparisons) and isinstance(e.this, (exp.Column, exp.Identifier)):
            out.append((e.this.name.lower(), literal_value(e.expression), False))
            ops.append(op)
        elif isinstance(e, (exp.Column, exp.Identifier, exp.Var)):
            out.append((e.name.lower(), None, True))
            ops.append("=")
        else:
            hint = "write col='value'" + (", or compare: col < 4" if comparisons else "")
            raise InvalidPartitionSpec(f"Cannot read partition spec entry {e.sql(dialect='hive')}: {hint}")
    return s.PartitionSpec(tuple(out), node.sql(dialect="hive"), tuple(ops) if set(ops) != {"="} else ())


def _skew_value(node: exp.Expression) -> s.SkewValue:
    sql = node.sql(dialect="hive")
    try:
        return s.SkewValue(literal_value(node), sql)
    except SemanticError:
        return s.SkewValue(None, sql, constant=False)


def skew_clause(prop: d.SkewedByProperty) -> s.SkewClause:
    return s.SkewClause(
        tuple(c.name.lower() for c in prop.expressions),
        tuple(tuple(_skew_value(v) for v in t.expressions) for t in prop.args.get("values") or []),
        bool(prop.args.get("stored_as_dirs")))


def _drop_target(node: exp.Drop) -> exp.Expression:
    tables = node.args.get("tables") or []
    return tables[0] if tables else node.this


def _database_name(target: exp.Expression) -> str:
    """The database a CREATE / DROP DATABASE or SCHEMA names: sqlglot reads SCHEMA's name as a table's
    database (``Table(db=x)``), DATABASE's as a table's name."""
    db = target.args.get("db") if isinstance(target, exp.Table) else None
    return (db.name if not target.name and db is not None else target.name).lower()


# ---------------------------------------------------------------- statements


def _create(node: exp.Create) -> s.Statement:
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA"):
        return _create_database(node)
    if kind == "TABLE":
        return _create_table(node)
    if kind == "VIEW":
        return _create_view(node)
    raise UnsupportedError(f"CREATE {kind} is not supported by hivepark")


def _create_view(node: exp.Create) -> s.CreateView:
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    columns = tuple((c.name.lower(), _column_comment(c)) for c in node.this.expressions) \
        if isinstance(node.this, exp.Schema) else ()
    comment, props = None, []
    for p in node.args["properties"].expressions if node.args.get("properties") else []:
        if isinstance(p, (exp.TemporaryProperty, exp.MaterializedProperty)):
            kind = "TEMPORARY" if isinstance(p, exp.TemporaryProperty) else "MATERIALIZED"
            raise UnsupportedError(
                f"CREATE {kind} VIEW is not supported by hivepark: CREATE VIEW keeps the query in the "
                "metastore and runs it at each read; CREATE TABLE name AS SELECT keeps its rows")
        if isinstance(p, exp.SchemaCommentProperty):
            comment = p.this.name
        elif isinstance(p, exp.Property):
            props.append((p.name, p.args["value"].name))
        else:
            raise UnsupportedError(f"CREATE VIEW ... {p.sql(dialect='hive')} is not supported: a view "
                                   "takes a column list, COMMENT and TBLPROPERTIES")
    query = node.args.get("expression")
    if not isinstance(query, exp.Query):
        raise SemanticError("CREATE VIEW needs a query: CREATE VIEW v AS SELECT ...")
    return s.CreateView(table_ref(target), s.Query(query), columns, comment, tuple(props),
                        bool(node.args.get("exists")), replace=bool(node.args.get("replace")))


def _column_comment(c: exp.Expression) -> str | None:
    """The COMMENT of a column in a column list (of a table or a view), None without one."""
    comment = None
    for constraint in c.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.CommentColumnConstraint):
            comment = kind.this.name if kind.this is not None else None
    return comment


def _create_database(node: exp.Create) -> s.CreateDatabase:
    props = node.args.get("properties")
    location = comment = None
    properties: tuple[tuple[str, str], ...] = ()
    for p in props.expressions if props else []:
        if isinstance(p, exp.LocationProperty):
            location = p.this.name
        elif isinstance(p, exp.SchemaCommentProperty):
            comment = p.this.name
        elif isinstance(p, d.DbProperties):
            properties = _db_properties(p.expressions)
    return s.CreateDatabase(_database_name(node.this), bool(node.args.get("exists")), location,
                            comment, properties)


def _db_properties(props: list[exp.Expression]) -> tuple[tuple[str, str], ...]:
    return tuple((_property_text(p.this, "key"), _property_text(p.args.get("value"), "value")) for p in props)


def _alter_database(node: d.AlterDatabase) -> s.AlterDatabase:
    location = node.args.get("location")
    return s.AlterDatabase(node.this.name.lower(), _db_properties(node.expressions or []),
                           location.name if location is not None else None)


def _bucketing(p: exp.ClusteredByProperty) -> Bucketing:
    n = p.args.get("buckets")
    count = int(n.this) if isinstance(n, exp.Literal) and n.is_int else 0
    if count <= 0:
        raise SemanticError(f"Bucket number should be bigger than zero: INTO {n.sql(dialect='hive') if n else '?'} "
                            "BUCKETS", code=10037)
    sort = tuple((o.this.name.lower(), not o.args.get("desc")) for o in p.args.get("sorted_by") or [])
    return Bucketing(tuple(c.name.lower() for c in p.expressions), sort, count)


def _create_table(node: exp.Create) -> s.CreateTable:
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    columns = column_defs(node.this) if isinstance(node.this, exp.Schema) else []
    query = node.args.get("expression")
    props = node.args.get("properties")
    kw: dict = {}
    tblprops: dict[str, str] = {}
    lazy = False  # ROW FORMAT SERDE names LazySimpleSerDe (its SERDEPROPERTIES give the delimiter)
    for p in props.expressions if props else []:
        if isinstance(p, d.SkewedByProperty):
            kw["skew"] = skew_clause(p)
        elif isinstance(p, exp.ClusteredByProperty):
            kw["bucketing"] = _bucketing(p)
        elif isinstance(p, exp.PartitionedByProperty) and isinstance(p.this, exp.Anonymous) \
                and str(p.this.this).upper() == "SPEC":
            kw["partition_transforms"] = tuple(partition_transform(e) for e in p.this.expressions)
        elif isinstance(p, exp.PartitionedByProperty):
            kw["partition_columns"] = tuple(column_defs(p.this))
            untyped = tuple(e.name.lower() for e in p.this.expressions
                            if not isinstance(e, exp.ColumnDef))
            if untyped and query is None:
                raise SemanticError(f"Partition column {untyped[0]} has no type: give it one, "
                                    f"e.g. PARTITIONED BY ({untyped[0]} STRING)")
            kw["untyped_partition_columns"] = untyped
        elif isinstance(p, exp.RowFormatDelimitedProperty):
            delim, serde_props = delimited_fields(p)
            if delim is not None:
                kw["field_delim"] = delim
            tblprops.update(serde_props)  # LazySimpleSerDe's other properties, as Hive names them
        elif isinstance(p, exp.FileFormatProperty):
            kw["format"] = p.this.name
        elif isinstance(p, exp.LocationProperty):
            kw["location"] = p.this.name
        elif isinstance(p, exp.ExternalProperty):
            kw["external"] = True
        elif isinstance(p, exp.LikeProperty):
            kw["like"] = table_ref(p.this)
        elif isinstance(p, exp.StorageHandlerProperty):
            kw["storage_handler"] = p.this.name
        elif isinstance(p, exp.SerdeProperties):
            kw["serde_properties"] = tuple((e.name, e.args["value"].name) for e in p.expressions)
        elif isinstance(p, exp.TemporaryProperty):
            raise UnsupportedError("CREATE TEMPORARY TABLE is not supported: use a Spark temporary view "
                                   "(wh.sql(\"SELECT ...\").createOrReplaceTempView(\"name\")), which wh.sql() reads")
        elif isinstance(p, exp.RowFormatSerdeProperty):
            _check_serde(p.this.name)
            lazy = p.this.name.strip().lower() == "org.apache.hadoop.hive.serde2.lazy.lazysimpleserde"
            inner = p.args.get("serde_properties")
            if isinstance(inner, exp.SerdeProperties):  # ROW FORMAT SERDE '...' WITH SERDEPROPERTIES (...)
                kw["serde_properties"] = (*kw.get("serde_properties", ()),
                                          *((e.name, e.args["value"].name) for e in inner.expressions))
        elif isinstance(p, exp.SchemaCommentProperty):
            tblprops["comment"] = p.this.name
        elif isinstance(p, exp.Property) and isinstance(p.args.get("value"), exp.Expression):
            key = p.name
            if key in TEXT_SERDE_KEYS:  # LazySimpleSerDe reads its table's properties too
                tblprops.update(_lazy_serde_properties({key: p.args["value"].name}))
            else:
                tblprops[key] = p.args["value"].name
        elif isinstance(p, exp.Property):
            raise UnsupportedError(f"CREATE TABLE ... {p.sql(dialect='hive')[:80]} is not supported by hivepark: "
                                   "leave the clause out (README: Statements)")
    if lazy and "storage_handler" not in kw:
        serde = dict(kw.get("serde_properties", ()))
        delim = _lazy_serde_delimiter(serde)
        if delim is not None:
            kw.setdefault("field_delim", delim)
        for k, v in _lazy_serde_properties(serde).items():
            tblprops.setdefault(k, v)
        if "serialization.null.format" in serde:
            tblprops.setdefault("serialization.null.format", serde["serialization.null.format"])
    return s.CreateTable(table_ref(target), tuple(columns), properties=tuple(tblprops.items()),
                         as_select=s.Query(query) if query is not None else None,
                         if_not_exists=bool(node.args.get("exists")), **kw)


#: LazySimpleSerDe's properties beside its field delimiter and NULL text (SERDEPROPERTIES, TBLPROPERTIES
#: or ROW FORMAT DELIMITED's clauses), by the name hivepark keeps each under: Hive's own
#: (``colelction.delim``, its misspelling, is the one LazySimpleSerDe reads; ``collection.delim`` is
#: taken for it); see hivepark.storage.formats.TextSerDe
TEXT_SERDE_KEYS = {"colelction.delim": "colelction.delim", "collection.delim": "colelction.delim",
                   "mapkey.delim": "mapkey.delim", "escape.delim": "escape.delim"}
_DELIMITED_CLAUSES = {"collection_items": "colelction.delim", "map_keys": "mapkey.delim",
                      "escaped": "escape.delim"}


def _lazy_serde_properties(props: dict[str, str]) -> dict[str, str]:
    """LazySimpleSerDe's collection, map-key and escape characters among ``props`` (SERDEPROPERTIES
    or TBLPROPERTIES), under the names hivepark keeps them by, each the character Hive reads
    (:func:`serde_byte`; an empty ``escape.delim`` is ``\\``, as in Hive); ``line.delim`` other
    than ``\\n`` is refused, as Hive itself writes and reads no other line end."""
    line = props.get("line.delim")
    if line is not None and serde_byte(line) != "\n":
        raise UnsupportedError(
            f"SERDEPROPERTIES ('line.delim'='{line}') is not supported by hivepark: TEXTFILE lines end with "
            "'\\n' (Hive's LazySimpleSerDe supports no other). Leave the property out, or store the table AS "
            "PARQUET or ORC.")
    out: dict[str, str] = {}
    for key in ("collection.delim", "colelction.delim", "mapkey.delim", "escape.delim"):  # Hive's name wins
        value = props.get(key)
        if value is not None:
            char = serde_byte(value) or ("\\" if key == "escape.delim" else "")
            if char and ord(char) > 127:  # Hive takes one byte of its UTF-16 code: not the character's bytes
                raise UnsupportedError(
                    f"'{key}'='{value}' (a SerDe property or its ROW FORMAT DELIMITED clause) is not supported by "
                    "hivepark: LazySimpleSerDe takes one byte for it, and this character is more than one in UTF-8. "
                    "Give an ASCII character.")
            out[TEXT_SERDE_KEYS[key]] = char
    if "serialization.escape.crlf" in props:
        out["serialization.escape.crlf"] = props["serialization.escape.crlf"]
    return {k: v for k, v in out.items() if v}


def _lazy_serde_delimiter(props: dict[str, str]) -> str | None:
    """LazySimpleSerDe's field delimiter from its SERDEPROPERTIES (``field.delim``, else
    ``serialization.format``), read as Hive reads it: a number is the byte of that value
    (``'1'`` is \\001), other text its first character."""
    value = props.get("field.delim", props.get("serialization.format"))
    return serde_byte(value) if value is not None else None


def serde_byte(value: str) -> str:
    """Hive's LazyUtils.getByte: a number Java's ``Byte.parseByte`` takes (-128 to 127) is the
    byte of that value, other text its first character.

    >>> serde_byte("1"), serde_byte(","), serde_byte("9"), serde_byte("||"), serde_byte("200")
    ('\\x01', ',', '\\t', '|', '2')
    """
    if re.fullmatch(r"[+-]?[0-9]+", value) and -128 <= int(value) <= 127:
        return chr(int(value) & 0xFF)
    return value[:1]


def delimited_fields(p: exp.RowFormatDelimitedProperty) -> tuple[str | None, dict[str, str]]:
    """ROW FORMAT DELIMITED's field delimiter (None: not given) and LazySimpleSerDe's other
    properties it gives (COLLECTION ITEMS / MAP KEYS TERMINATED BY, ESCAPED BY, NULL DEFINED AS),
    as Hive names them. LINES TERMINATED BY other than ``\\n`` is refused: Hive supports no other."""
    lines = p.args.get("lines")
    if lines is not None and lines.name != "\n":
        raise UnsupportedError(
            f"ROW FORMAT DELIMITED LINES TERMINATED BY {lines.sql(dialect='hive')} is not supported by hivepark: "
            "TEXTFILE lines end with '\\n' (Hive's LazySimpleSerDe supports no other). Leave the clause out, or "
            "store the table AS PARQUET or ORC.")
    props = _lazy_serde_properties({_DELIMITED_CLAUSES[k]: p.args[k].name for k in _DELIMITED_CLAUSES
                                    if p.args.get(k) is not None})
    if p.args.get("null") is not None:  # NULL DEFINED AS
        props["serialization.null.format"] = p.args["null"].name
    fields = p.args.get("fields")
    return (serde_byte(fields.name) if fields is not None and fields.name else None), props


#: SerDes whose files hivepark reads as its formats do (the STORED AS format decides)
_NATIVE_SERDES = {"org.apache.hadoop.hive.serde2.lazy.lazysimpleserde",
                  "org.apache.hadoop.hive.ql.io.parquet.serde.parquethiveserde",
                  "org.apache.hadoop.hive.ql.io.orc.orcserde"}


def _check_serde(name: str) -> None:
    if name.strip().lower() not in _NATIVE_SERDES:
        raise UnsupportedError(
            f"ROW FORMAT SERDE '{name}' is not supported by hivepark: it reads and writes TEXTFILE with Hive's "
            "LazySimpleSerDe (ROW FORMAT DELIMITED FIELDS TERMINATED BY ...), PARQUET and ORC. Load such files "
            "with Spark (spark.read.csv(...)) and INSERT their rows into a table of one of those formats.")


def _drop(node: exp.Drop) -> s.Statement:
    kind = (node.args.get("kind") or "").upper()
    target = _drop_target(node)
    if kind in ("DATABASE", "SCHEMA"):
        return s.DropDatabase(_database_name(target), bool(node.args.get("exists")),
                              bool(node.args.get("cascade")))
    if kind == "TABLE":
        return s.DropTable(table_ref(target), bool(node.args.get("exists")))
    if kind == "VIEW":
        return s.DropTable(table_ref(target), bool(node.args.get("exists")), view=True)
    raise UnsupportedError(f"DROP {kind} is not supported by hivepark")


def _truncate(node: exp.TruncateTable) -> s.TruncateTable:
    targets = node.expressions
    if node.args.get("is_database") or len(targets) != 1 or not isinstance(targets[0], exp.Table) \
            or node.args.get("option") or node.args.get("identity"):
        raise UnsupportedError("TRUNCATE takes one table, and no CASCADE or RESTRICT: TRUNCATE TABLE t "
                               "[PARTITION (...)]")
    part = node.args.get("partition")
    return s.TruncateTable(table_ref(targets[0]), partition_spec(part) if part is not None else None)


def _use(node: exp.Use) -> s.Use:
    return s.Use(node.this.name.lower())


def _property_text(node: exp.Expression | None, what: str) -> str:
    """A TBLPROPERTIES key or value: a string literal, as Hive's grammar requires."""
    if isinstance(node, exp.Literal) and node.is_string:
        return node.name
    shown = node.sql(dialect="hive") if node is not None else "nothing"
    raise SemanticError(f"A table property {what} is a quoted string, got {shown}: write "
                        "('key'='value', ...) with both sides in quotes")


def _alter_action(action: exp.Expression, if_exists: bool) -> s.AlterAction:
    if isinstance(action, d.SetSkewedLocation):
        entries = []
        for entry in action.expressions:
            key_node, loc_node = entry.expressions
            loc = loc_node.name if isinstance(loc_node, exp.Literal) else ""
            entries.append((tuple(_skew_value(v) for v in key_node.expressions), loc))
        return s.SetSkewedLocation(tuple(entries), bool(action.args.get("mapped")))
    if isinstance(action, d.Concatenate):
        return s.Concatenate()
    if isinstance(action, d.SetTblProperties):
        given = [(_property_text(p.this, "key"), _property_text(p.args.get("value"), "value"))
                 for p in action.expressions]
        # LazySimpleSerDe reads its table's properties too: its characters as in CREATE TABLE
        return s.SetTableProperties(tuple(kv for k, v in given for kv in (
            _lazy_serde_properties({k: v}).items() if k in TEXT_SERDE_KEYS else [(k, v)])))
    if isinstance(action, d.UnsetTblProperties):
        return s.UnsetTableProperties(tuple(_property_text(k, "key") for k in action.expressions),
                                      bool(action.args.get("exists")))
    if isinstance(action, d.RenamePartition):
        return s.RenamePartition(partition_spec(action.this))
    if isinstance(action, d.ExchangePartition):
        return s.ExchangePartition(partition_spec(action.this), table_ref(action.expression))
    if isinstance(action, d.Touch):
        return s.Touch(tuple(partition_spec(p) for p in action.expressions))
    if isinstance(action, d.AlterSkewed):
        return s.SetSkewed(skew_clause(action.this))
    if isinstance(action, d.AlterNot):
        return s.NotSkewed() if action.args["kind"] == "SKEWED" else s.NotStoredAsDirectories()
    if isinstance(action, d.AddPartitions):
        parts = []
        for tup in action.expressions:
            spec_node, loc_node = tup.expressions
            parts.append((partition_spec(spec_node),
                          loc_node.name if isinstance(loc_node, exp.Literal) else None))
        return s.AddPartitions(tuple(parts), bool(action.args.get("exists")))
    if isinstance(action, exp.DropPartition):
        return s.DropPartitions(tuple(partition_spec(n, comparisons=True) for n in action.expressions),
                                if_exists or bool(action.args.get("exists")))
    if isinstance(action, exp.AlterRename):
        return s.RenameTable(table_ref(action.this))
    if isinstance(action, exp.AlterSet) and isinstance(action.args.get("location"), exp.Literal) \
            and len([v for v in action.args.values() if v]) == 1:
        return s.SetLocation(action.args["location"].name)
    if isinstance(action, exp.AlterSet) and action.args.get("file_format") and \
            len([v for v in action.args.values() if v]) == 1:
        return s.SetFileFormat(action.args["file_format"][0].name.lower())
    serde_props = [p for props in action.args.get("expressions") or [] if isinstance(props, exp.Properties)
                   for p in props.expressions if isinstance(p, exp.SerdeProperties)] \
        if isinstance(action, exp.AlterSet) else []
    if serde_props and not action.args.get("serde"):
        # the delimiters read as LazySimpleSerDe reads them ('2' is \002), as in CREATE TABLE
        pairs: list[tuple[str, str]] = []
        for p in (p for sp in serde_props for p in sp.expressions):
            name, value = p.this.name, p.text("value")
            if name in ("field.delim", "serialization.format"):
                pairs.append((name, serde_byte(value)))
            elif name in TEXT_SERDE_KEYS or name == "line.delim":
                pairs.extend(_lazy_serde_properties({name: value}).items())
            else:
                pairs.append((name, value))
        return s.SetSerdeProperties(tuple(pairs))
    if isinstance(action, exp.Schema):  # ADD COLUMNS (...)
        return s.AddColumns(tuple(column_defs(action)))
    if isinstance(action, exp.ReplaceColumns):
        return s.AddColumns(tuple(column_defs(exp.Schema(expressions=action.expressions))), replace=True)
    if isinstance(action, exp.AlterColumn):
        new_name = action.args.get("rename_to")
        dtype = action.args.get("dtype")
        comment = action.args.get("comment")
        where, after = action.meta.get("position", (None, None))
        return s.ChangeColumn(action.this.name.lower(),
                              new_name.name.lower() if new_name is not None else None,
                              hive_type(dtype, action.this.name.lower()) if dtype is not None else None,
                              comment.name if isinstance(comment, exp.Expression) else None, where == "FIRST", after)
    return s.UnsupportedAlter(action.sql(dialect="hive")[:80] or action.key.upper())


def _alter(node: exp.Alter) -> s.AlterTable | s.CreateView:
    if (node.args.get("kind") or "TABLE").upper() == "VIEW":
        return _alter_view(node)
    if_exists = bool(node.args.get("exists"))
    part_node = node.this.args.get("partition")
    return s.AlterTable(
        table_ref(node.this),
        tuple(_alter_action(a, if_exists) for a in node.args.get("actions") or []),
        partition_spec(part_node) if part_node is not None else None, if_exists)


_VIEW_ALTERS = (s.SetTableProperties, s.UnsetTableProperties, s.RenameTable)


def _alter_view(node: exp.Alter) -> s.CreateView | s.AlterTable:
    """ALTER VIEW v AS SELECT ..., or SET / UNSET TBLPROPERTIES and RENAME TO (Hive's three)."""
    actions = node.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.Query):
        return s.CreateView(table_ref(node.this), s.Query(actions[0]), alter=True)
    built = tuple(_alter_action(a, False) for a in actions if not isinstance(a, exp.Query))
    if not built or len(built) != len(actions) or not all(isinstance(a, _VIEW_ALTERS) for a in built):
        raise UnsupportedError("ALTER VIEW v takes AS SELECT ..., SET TBLPROPERTIES (...), UNSET TBLPROPERTIES "
                               "(...) or RENAME TO w: to change a view's columns or comment, CREATE OR REPLACE "
                               "VIEW it")
    return s.AlterTable(table_ref(node.this), built, view=True)


def _insert_target(target: exp.Expression) -> tuple[exp.Expression, tuple[str, ...] | None]:
    """The table of an INSERT and its column list (``t [PARTITION (...)] (c1, c2, ...)``)."""
    if isinstance(target, exp.Schema):
        return target.this, tuple(c.name.lower() for c in target.expressions)
    return target, None


def _with_ctes(node: exp.Expression) -> exp.Expression:
    """The query of an INSERT, with the statement's leading WITH (Hive's ``WITH q AS (...)
    INSERT ... SELECT ... FROM q``) made its own, before any WITH it has."""
    query = node.expression
    outer = node.args.get("with_")
    if outer is None:
        return query
    query = query.copy()
    inner = query.args.get("with_")
    ctes = [c.copy() for c in (*outer.expressions, *(inner.expressions if inner is not None else ()))]
    query.set("with_", exp.With(expressions=ctes, recursive=outer.args.get("recursive")))
    return query


def _insert(node: exp.Insert) -> s.Insert | s.InsertDirectory:
    if isinstance(node.this, exp.Directory):
        return _insert_directory(node)
    target, columns = _insert_target(node.this)
    return s.Insert(table_ref(target), partition_spec(target.args.get("partition")),
                    bool(node.args.get("overwrite")), s.Query(_with_ctes(node)), _if_not_exists(node, target),
                    columns)


def _if_not_exists(node: exp.Expression, target: exp.Expression) -> bool:
    """INSERT OVERWRITE TABLE t PARTITION (...) IF NOT EXISTS: the dialect marks the partition."""
    part_node = target.args.get("partition")
    marked = bool(node.args.get("exists")) or bool(part_node is not None and part_node.meta.get("if_not_exists"))
    if marked and not node.args.get("overwrite"):
        # Hive's grammar takes IF NOT EXISTS after INSERT OVERWRITE's destination only.
        raise ParseError("IF NOT EXISTS is only allowed with INSERT OVERWRITE: INSERT INTO always appends, so "
                         "write INSERT OVERWRITE TABLE t PARTITION (...) IF NOT EXISTS to fill a partition only "
                         "when it does not exist, or drop IF NOT EXISTS to append")
    return marked


def _insert_directory(node: exp.Insert) -> s.InsertDirectory:
    directory = node.this
    if not node.args.get("overwrite"):
        raise UnsupportedError("INSERT INTO DIRECTORY is not HiveQL: INSERT OVERWRITE [LOCAL] DIRECTORY 'path' "
                               "SELECT ... writes a query's rows into a directory, replacing what it holds")
    row_format, stored = directory.args.get("row_format"), node.args.get("stored")
    fields, props = delimited_fields(row_format) if isinstance(row_format, exp.RowFormatDelimitedProperty) \
        else (None, {})
    return s.InsertDirectory(directory.this.name, s.Query(_with_ctes(node)), bool(directory.args.get("local")),
                             stored.this.name if isinstance(stored, exp.FileFormatProperty) else "textfile",
                             fields, tuple(props.items()))


def _multi_insert(node: exp.MultitableInserts) -> s.MultiInsert:
    source = node.args["source"]
    alias = source.alias_or_name
    branches = list(node.expressions)
    wheres = [b.expression.args.get("where") for b in branches]
    src_query = exp.select("*").from_(source.copy())
    if all(w is not None for w in wheres):
        src_query = src_query.where(exp.or_(*[exp.paren(w.this.copy()) for w in wheres]))
    if node.args.get("with_") is not None:  # WITH q AS (...) FROM q INSERT ...: the source's CTEs
        src_query.set("with_", node.args["with_"].copy())
    view = f"__hivepark_multi_{abs(hash(node.sql())) % 10**8}"
    inserts = []
    for branch in branches:
        select = branch.expression.copy()
        select.set("from_", exp.From(this=exp.Table(
            this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(alias)))))
        target, columns = _insert_target(branch.this)
        if isinstance(target, exp.Directory):
            raise UnsupportedError(
                "A multi-table insert (FROM src INSERT ... INSERT ...) into a DIRECTORY is not supported by "
                "hivepark: its targets are tables. Write the directory in a statement of its own (INSERT "
                "OVERWRITE [LOCAL] DIRECTORY '...' SELECT ... FROM src).")
        inserts.append(s.Insert(table_ref(target), partition_spec(target.args.get("partition")),
                                bool(branch.args.get("overwrite")), s.Query(select),
                                _if_not_exists(branch, target), columns))
    return s.MultiInsert(s.Query(src_query), view, tuple(inserts))


def _load(node: exp.LoadData) -> s.LoadData:
    src = node.args["inpath"].name
    src = src[len("file://"):] if src.startswith("file://") else src
    return s.LoadData(table_ref(node.this), src, bool(node.args.get("local")),
                      bool(node.args.get("overwrite")), partition_spec(node.args.get("partition")))


def _msck(node: d.MsckRepair) -> s.MsckRepair:
    return s.MsckRepair(table_ref(node.this), bool(node.args.get("repair")), node.args.get("mode") or "ADD")


def _show(node: d.Show) -> s.Statement:
    kind = node.args["kind"]
    like = node.args.get("like")
    pattern = like.name if like is not None else None
    if kind == "DATABASES":
        return s.ShowDatabases(pattern)
    if kind in ("TABLES", "VIEWS"):
        db = node.args.get("db")
        return s.ShowTables(db.name.lower() if db is not None else None, pattern, views=kind == "VIEWS")
    if kind == "CONF":
        return s.ShowConf(pattern or "")
    if kind == "NOT OFFERED":
        raise UnsupportedError(node.this.name)
    if kind == "TABLE EXTENDED":
        db = node.args.get("db")
        return s.ShowTableExtended(db.name.lower() if db is not None else None, pattern or "",
                                   partition_spec(node.args.get("partition")))
    if kind == "CREATE TABLE":
        return s.ShowCreateTable(table_ref(node.this))
    if kind == "TBLPROPERTIES":
        return s.ShowTblProperties(table_ref(node.this), pattern)
    if kind == "FUNCTIONS":
        return s.ShowFunctions(pattern)
    if kind == "COLUMNS":
        return s.ShowColumns(table_ref(node.this), pattern)
    return _show_partitions(node)


def _show_partitions(node: d.Show) -> s.ShowPartitions:
    where, order, limit = node.args.get("where"), node.args.get("order"), node.args.get("limit")
    keys: list[tuple[str, bool]] = []
    for o in (order.expressions if order is not None else []):
        if not isinstance(o.this, exp.Column):
            raise SemanticError(f"SHOW PARTITIONS ... ORDER BY {o.this.sql(dialect='hive')}: order by partition "
                                "columns (ORDER BY ds DESC, hr)")
        keys.append((o.this.name.lower(), bool(o.args.get("desc"))))
    count = None
    if limit is not None:
        n = limit.expression
        if not (isinstance(n, exp.Literal) and n.is_int and int(n.this) >= 0):
            raise SemanticError(f"SHOW PARTITIONS ... LIMIT {n.sql(dialect='hive')}: give a whole number of rows")
        count = int(n.this)
    return s.ShowPartitions(table_ref(node.this), partition_spec(node.args.get("partition")),
                            from_sqlglot(where.this, lambda c: c.name.lower()) if where is not None else None,
                            tuple(keys), count)


def _describe(node: exp.Describe) -> s.Describe | s.DescribeFunction | s.DescribeDatabase:
    style = (node.args.get("style") or "").upper() or None
    if (node.args.get("kind") or "").upper() in ("DATABASE", "SCHEMA"):
        return s.DescribeDatabase(node.this.name.lower(), style == "EXTENDED")
    if (node.args.get("kind") or "").upper() == "FUNCTION":
        return s.DescribeFunction(node.this.name, style == "EXTENDED")
    return s.Describe(table_ref(node.this), style, partition_spec(node.args.get("partition")),
                      node.meta.get("column"))


def _create_macro(node: d.CreateMacro) -> s.CreateMacro:
    args = node.expressions or []
    names = {p.name.lower() for p in args}
    for n in node.expression.walk():
        if isinstance(n, exp.Query) or isinstance(n, exp.Column) and (n.table or n.name.lower() not in names):
            raise SemanticError(f"The body of macro {node.this.name} may use its arguments and constants only, "
                                f"not columns or subqueries ({n.sql(dialect='hive')[:60]}): give the value as an "
                                "argument")
    params = tuple((p.name.lower(), HiveType.parse(hive_type(p.args["kind"])).spark_ddl) for p in args)
    return s.CreateMacro(node.this.name.lower(), params, node.expression.sql(dialect="spark"))


def _drop_macro(node: d.DropMacro) -> s.DropMacro:
    return s.DropMacro(node.this.name.lower(), bool(node.args.get("exists")))


def _analyze(node: exp.Analyze) -> s.AnalyzeSkew | s.AnalyzeStatistics | s.AnalyzeColumns:
    inner = node.args.get("expression")
    if isinstance(inner, exp.AnalyzeStatistics) and (inner.args.get("kind") or "").upper() == "COMPUTE" \
            and str(inner.args.get("this") or "").upper() in ("", "NOSCAN"):
        return s.AnalyzeStatistics(table_ref(node.args["tables"][0]), partition_spec(node.args.get("partition")),
                                   str(inner.args.get("this") or "").upper() == "NOSCAN")
    if isinstance(inner, exp.AnalyzeStatistics) and (inner.args.get("kind") or "").upper() == "COMPUTE" \
            and str(inner.args.get("this") or "").upper() == "FOR COLUMNS":
        return s.AnalyzeColumns(table_ref(node.args["tables"][0]),
                                tuple(c.name.lower() for c in inner.expressions),
                                partition_spec(node.args.get("partition")))
    if not isinstance(inner, d.AnalyzeSkew):
        raise UnsupportedError(f"ANALYZE TABLE ... {node.sql(dialect='hive')[:80]} is not supported: ANALYZE TABLE t "
                               "[PARTITION (...)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS [c, ...]] and COMPUTE SKEW "
                               "FOR COLUMNS c are")
    return s.AnalyzeSkew(table_ref(node.args["tables"][0]),
                         tuple(c.name.lower() for c in inner.expressions),
                         partition_spec(node.args.get("partition")))


def _explain(node: d.Explain) -> s.Explain:
    inner = node.this
    style = (node.args.get("extended") or "").upper() or None
    if style not in (None, "EXTENDED", "FORMATTED", "ANALYZE", "DEPENDENCY"):
        raise UnsupportedError(f"EXPLAIN {style} shows what Hive's own planner decides, which hivepark does not "
                               "have: EXPLAIN [EXTENDED|ANALYZE|DEPENDENCY] shows the partitions, directories and "
                               "filters hivepark chose, EXTENDED with Spark's plan")
    if isinstance(inner, exp.Insert):
        inner = inner.expression
    elif isinstance(inner, exp.Create) and inner.args.get("expression") is not None:
        inner = inner.args["expression"]
    if not isinstance(inner, exp.Query):
        raise SemanticError("EXPLAIN works on queries (SELECT, INSERT ... SELECT, CREATE TABLE "
                            "AS SELECT)")
    return s.Explain(style, s.Query(inner))


_BUILDERS: dict = {
    d.AlterDatabase: _alter_database,
    d.CreateMacro: _create_macro,
    d.DropMacro: _drop_macro,
    exp.Create: _create,
    exp.Drop: _drop,
    exp.TruncateTable: _truncate,
    exp.Use: _use,
    exp.Alter: _alter,
    exp.Insert: _insert,
    exp.MultitableInserts: _multi_insert,
    exp.LoadData: _load,
    d.MsckRepair: _msck,
    d.Show: _show,
    exp.Describe: _describe,
    exp.Analyze: _analyze,
}
