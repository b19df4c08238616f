"""HiveQL: sqlglot's Hive dialect, extended by subclassing with the statements it parses
only as opaque commands (SHOW, EXPLAIN, MSCK REPAIR TABLE, ALTER TABLE ADD PARTITION with
several partitions, SET/UNSET TBLPROPERTIES, PARTITION (...) RENAME TO PARTITION (...), SHOW
TBLPROPERTIES, and the skewed-table / list-bucketing forms: CREATE TABLE ... SKEWED BY
... ON ... [STORED AS DIRECTORIES], ALTER TABLE ... SKEWED BY / NOT SKEWED / NOT STORED AS
DIRECTORIES / SET SKEWED LOCATION / CONCATENATE, ANALYZE TABLE ... COMPUTE SKEW)."""

from __future__ import annotations

import typing as t

from sqlglot import exp, tokens
from sqlglot.dialects.hive import Hive
from sqlglot.tokens import TokenType

if tokens.SQLGLOTC_INSTALLED:
    # sqlglot loads its compiled build whenever the package is present (another tool may
    # have pulled it in), and compiled classes cannot be subclassed from Python: every
    # statement would fail with "interpreted classes cannot inherit from compiled"
    raise ImportError(
        "hivepark cannot run with sqlglot's compiled build installed (the sqlglotc package, "
        "from sqlglot[c]): hivepark extends sqlglot's Hive dialect by subclassing its parser, "
        "generator and expressions, which compiled classes refuse. Uninstall it from this "
        "environment (pip uninstall sqlglotc) or install hivepark in an environment of its own.")


class Show(exp.Expression):
    """SHOW DATABASES | TABLES | VIEWS [IN db] [LIKE 'p'] | PARTITIONS t [PARTITION (...)] [WHERE ...]
    [ORDER BY ...] [LIMIT n] | COLUMNS IN t [IN db] [LIKE 'p'] | CREATE TABLE t | TBLPROPERTIES t [('k')]."""

    arg_types = {"kind": True, "this": False, "partition": False, "like": False, "db": False, "where": False,
                 "order": False, "limit": False}


class Explain(exp.Expression):
    """EXPLAIN [EXTENDED|FORMATTED|ANALYZE|DEPENDENCY] <statement>."""

    arg_types = {"this": True, "extended": False}


class MsckRepair(exp.Expression):
    """MSCK [REPAIR] TABLE t [ADD|DROP|SYNC PARTITIONS] (without REPAIR: only a check)."""

    arg_types = {"this": True, "repair": False, "mode": False}


class AddPartitions(exp.Expression):
    """ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (...) [LOCATION '...'] [PARTITION ...]."""

    arg_types = {"exists": False, "expressions": True}


class SkewedByProperty(exp.Property):
    """``SKEWED BY (c1, ...) ON (v, ...) | ON ((v1, w1), ...) [STORED AS DIRECTORIES]``.

    ``expressions`` are the column names; ``values`` one ``exp.Tuple`` per skewed value (a
    single value is a one-element tuple), as written."""

    arg_types = {"expressions": False, "values": False, "stored_as_dirs": False}


class AlterSkewed(exp.Expression):
    """ALTER TABLE t SKEWED BY (...) ON (...) [STORED AS DIRECTORIES]."""

    arg_types = {"this": True}  # a SkewedByProperty


class AlterNot(exp.Expression):
    """ALTER TABLE t NOT SKEWED (``kind`` SKEWED) | NOT STORED AS DIRECTORIES (DIRECTORIES)."""

    arg_types = {"kind": True}


class SetSkewedLocation(exp.Expression):
    """ALTER TABLE t [PARTITION (...)] SET SKEWED LOCATION (key='uri', (k1, k2)='uri', ...).

    ``expressions`` holds one ``exp.Tuple(key tuple, location)`` per entry; ``mapped`` is
    False when no parenthesised map followed LOCATION."""

    arg_types = {"expressions": False, "mapped": False}


class Concatenate(exp.Expression):
    """ALTER TABLE t [PARTITION (...)] CONCATENATE."""

    arg_types = {"this": False}


class SetTblProperties(exp.Expression):
    """ALTER TABLE t SET TBLPROPERTIES ('k'='v', ...): ``expressions`` are ``exp.Property``."""

    arg_types = {"expressions": True}


class UnsetTblProperties(exp.Expression):
    """ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)."""

    arg_types = {"expressions": True, "exists": False}


class RenamePartition(exp.Expression):
    """ALTER TABLE t PARTITION (...) RENAME TO PARTITION (...): ``this`` is the new spec."""

    arg_types = {"this": True}


class ExchangePartition(exp.Expression):
    """ALTER TABLE dest EXCHANGE PARTITION (...) WITH TABLE source: ``this`` is the (partial)
    spec, ``expression`` the source table."""

    arg_types = {"this": True, "expression": True}


class Touch(exp.Expression):
    """ALTER TABLE t TOUCH [PARTITION (...)] ...: ``expressions`` are the specs."""

    arg_types = {"expressions": False}


class DbProperties(exp.Property):
    """CREATE DATABASE ... WITH DBPROPERTIES ('k'='v', ...)."""

    arg_types = {"expressions": True}


class AlterDatabase(exp.Expression):
    """ALTER (DATABASE|SCHEMA) db SET DBPROPERTIES ('k'='v', ...) | SET LOCATION 'path'."""

    arg_types = {"this": True, "expressions": False, "location": False}


class CreateMacro(exp.Expression):
    """CREATE TEMPORARY MACRO name ([arg type, ...]) expression (Hive's macros)."""

    arg_types = {"this": True, "expressions": False, "expression": True}


class DropMacro(exp.Expression):
    """DROP TEMPORARY MACRO [IF EXISTS] name."""

    arg_types = {"this": True, "exists": False}


class AnalyzeSkew(exp.Expression):
    """The ``COMPUTE SKEW FOR COLUMNS c, ...`` part of ANALYZE TABLE t [PARTITION (...)]."""

    arg_types = {"expressions": True}


def _values_sql(values: list[exp.Expression]) -> str:
    return ", ".join("(" + ", ".join(v.sql(dialect="hive") for v in tup.expressions) + ")"
                     for tup in values)


def _skewed_sql(gen: t.Any, e: SkewedByProperty) -> str:
    cols = ", ".join(c.sql(dialect="hive") for c in e.expressions)
    dirs = " STORED AS DIRECTORIES" if e.args.get("stored_as_dirs") else ""
    return f"SKEWED BY ({cols}) ON ({_values_sql(e.args.get('values') or [])}){dirs}"


# SHOW statements of Hive's features hivepark does not have, and why
#: The start of a parse error's description that explains it: parser.parse_one adds the rest to Hive's
#: ``cannot recognize input near ...``
HINT = "hivepark hint: "

_NO_AUTHORIZATION = ("it has no authorization of its own (the file system's and the metastore database's "
                     "permissions hold)")
_SHOW_NOT_OFFERED = [
    (("LOCKS",), "it takes no locks: a write commits by compare-and-swap on the table version, and concurrent "
                 "writers retry (README, Commits)"),
    (("TRANSACTIONS",), "it has no ACID tables"),
    (("COMPACTIONS",), "it has no ACID tables; ALTER TABLE t [PARTITION (...)] CONCATENATE merges small files"),
    (("CURRENT", "ROLES"), _NO_AUTHORIZATION), (("ROLES",), _NO_AUTHORIZATION), (("ROLE",), _NO_AUTHORIZATION),
    (("GRANT",), _NO_AUTHORIZATION), (("PRINCIPALS",), _NO_AUTHORIZATION),
]


class HiveQL(Hive):
    """The dialect hivepark parses with."""

    class Tokenizer(Hive.Tokenizer):
        # Parse SHOW and EXPLAIN ourselves instead of swallowing them as raw commands.
        COMMANDS = Hive.Tokenizer.COMMANDS - {TokenType.SHOW, TokenType.COMMAND}
        KEYWORDS = {**Hive.Tokenizer.KEYWORDS, "MSCK": TokenType.COMMAND}

    class Parser(Hive.Parser):
        # Spark's localtimestamp(): sqlglot's node for it renders as LOCALTIMESTAMP without
        # parentheses, which Spark reads as a column name; kept a plain function call
        FUNCTIONS = {k: v for k, v in Hive.Parser.FUNCTIONS.items() if k != "LOCALTIMESTAMP"}
        STATEMENT_PARSERS = {
            **Hive.Parser.STATEMENT_PARSERS,
            TokenType.ALTER: lambda self: self._parse_hp_alter_statement(),
            TokenType.SHOW: lambda self: self._parse_hp_show(),
            TokenType.COMMAND: lambda self: self._parse_hp_command(),
            TokenType.CREATE: lambda self: self._parse_hp_create(),
            TokenType.DROP: lambda self: self._parse_hp_drop(),
        }
        ALTER_PARSERS = {
            **Hive.Parser.ALTER_PARSERS,
            "ADD": lambda self: self._parse_hp_alter_add(),
            "SKEWED": lambda self: self.expression(AlterSkewed(this=self._parse_hp_skewed())),
            "NOT": lambda self: self._parse_hp_alter_not(),
            "SET": lambda self: self._parse_hp_alter_set(),
            "CONCATENATE": lambda self: self.expression(Concatenate()),
            "EXCHANGE": lambda self: self._parse_hp_alter_exchange(),
            "TOUCH": lambda self: self.expression(Touch(expressions=self._parse_hp_partitions())),
            "UNSET": lambda self: self._parse_hp_alter_unset(),
            "RENAME": lambda self: self._parse_hp_alter_rename(),
            "DROP": lambda self: self._parse_hp_alter_drop(),
            "CHANGE": lambda self: self._parse_hp_alter_change(),
            "REPLACE": lambda self: self._parse_hp_restrict(self._parse_alter_table_replace_columns(),
                                                            "REPLACE COLUMNS"),
        }
        PROPERTY_PARSERS = {
            **Hive.Parser.PROPERTY_PARSERS,
            "WITH": lambda self: self._parse_hp_with_property(),
            "SKEWED": lambda self: self._parse_hp_skewed(),
        }
        # Hive 4's time travel: FOR SYSTEM_VERSION AS OF <snapshot id> (FOR SYSTEM_TIME AS OF
        # '<timestamp>' is sqlglot's own)
        VERSION_PHRASES = {**Hive.Parser.VERSION_PHRASES, ("FOR", "SYSTEM_VERSION"): "VERSION"}
        ANALYZE_EXPRESSION_PARSERS = {
            **Hive.Parser.ANALYZE_EXPRESSION_PARSERS,
            "COMPUTE": lambda self: self._parse_hp_compute(),
        }

        def _parse_table_sample(self, as_modifier: bool = False) -> exp.TableSample | None:
            """Hive's ``TABLESAMPLE (BUCKET x OUT OF y ON c1, c2, ...)``: several ON columns (sqlglot
            takes one) give a Tuple as the sample's ``bucket_field``; every other sample is sqlglot's."""
            index = self._index
            if not (self._match(TokenType.TABLE_SAMPLE) and self._match(TokenType.L_PAREN)
                    and self._match_text_seq("BUCKET")):
                self._retreat(index)
                return super()._parse_table_sample(as_modifier)
            numerator = self._parse_number()
            self._match_text_seq("OUT", "OF")
            denominator = self._parse_number()
            field: exp.Expression | None = None
            if self._match(TokenType.ON):
                fields = self._parse_csv(self._parse_field)
                field = fields[0] if len(fields) == 1 else exp.Tuple(expressions=fields)
            self._match_r_paren()
            return self.expression(exp.TableSample(bucket_numerator=numerator, bucket_denominator=denominator,
                                                   bucket_field=field))

        def _parse_hp_create(self) -> exp.Expression | None:
            """CREATE TEMPORARY MACRO name (arg type, ...) expression, else sqlglot's CREATE."""
            index = self._index
            if self._match_text_seq("TEMPORARY", "MACRO"):
                name = self._parse_id_var(any_token=False)
                if name is None or not self._match(TokenType.L_PAREN):
                    self.raise_error("Expected CREATE TEMPORARY MACRO name ([arg type, ...]) expression")
                params = [] if self._match(TokenType.R_PAREN) else self._parse_csv(
                    lambda: self.expression(exp.ColumnDef(this=self._parse_id_var(), kind=self._parse_types())))
                if params:
                    self._match_r_paren()
                body = self._parse_assignment()
                if body is None:
                    self.raise_error("Expected the macro's expression after its arguments")
                return self.expression(CreateMacro(this=name, expressions=params, expression=body))
            self._retreat(index)
            return self._parse_create()

        def _parse_hp_drop(self) -> exp.Expression | None:
            """DROP TEMPORARY MACRO [IF EXISTS] name, else sqlglot's DROP."""
            index = self._index
            if self._match_text_seq("TEMPORARY", "MACRO"):
                exists = self._parse_exists()
                return self.expression(DropMacro(this=self._parse_id_var(any_token=False), exists=exists))
            self._retreat(index)
            start = self._index
            node = self._parse_drop()
            if isinstance(node, exp.Drop):
                self._check_drop_clauses(node, start)
            return node

        def _check_drop_clauses(self, node: exp.Drop, start: int) -> None:
            """Hive's grammar: DROP DATABASE|SCHEMA [IF EXISTS] db [RESTRICT | CASCADE], DROP TABLE [IF
            EXISTS] t [PURGE], DROP VIEW [IF EXISTS] v; sqlglot takes any of them (and more) after any."""
            kind = (node.args.get("kind") or "").upper()
            forms = {"DATABASE": ("DROP DATABASE [IF EXISTS] db [RESTRICT | CASCADE]", ("CASCADE", "RESTRICT")),
                     "SCHEMA": ("DROP SCHEMA [IF EXISTS] db [RESTRICT | CASCADE]", ("CASCADE", "RESTRICT")),
                     "TABLE": ("DROP TABLE [IF EXISTS] t [PURGE]", ("PURGE",)),
                     "VIEW": ("DROP VIEW [IF EXISTS] v", ())}
            if kind not in forms:
                return
            form, allowed = forms[kind]
            for flag, word, why in (("temporary", "TEMPORARY", "is not HiveQL, and hivepark has no temporary tables"),
                                    ("materialized", "MATERIALIZED", "drops a materialized view, and hivepark has "
                                     "none")):
                if node.args.get(flag):  # (DROP TEMPORARY TABLE t dropped the table t)
                    self.raise_error(f"{HINT}DROP {word} {kind} {why}: {form}", next(
                        tok for tok in self._tokens[start:self._index] if tok.text.upper() == word))
            if len(node.args.get("tables") or []) > 1:  # (DROP TABLE a, b dropped a alone)
                comma = next(tok for tok in self._tokens[start:self._index] if tok.token_type == TokenType.COMMA)
                self.raise_error(f"{HINT}DROP {kind} takes one name: {form}; drop each in a statement of its own",
                                 comma)
            words = ("CASCADE", "RESTRICT", "PURGE", "CONSTRAINTS", "SYNC", "FORCE")
            taken = [tok for tok in self._tokens[start:self._index] if tok.text.upper() in words
                     and node.args.get(tok.text.lower())]
            bad = next((tok for tok in taken if tok.text.upper() not in allowed), None)
            if bad is None and self._curr is not None and self._curr.text.upper() in words:
                bad = self._curr  # a second one (RESTRICT CASCADE, PURGE PURGE)
            if bad is not None:
                word = bad.text.upper()
                what = f"{' or '.join(allowed)} once" if word in allowed else f"no {word}"
                self.raise_error(f"{HINT}DROP {kind} takes {what}: {form}"
                                 + (" (CASCADE drops a database with its tables: DROP DATABASE db CASCADE)"
                                    if kind in ("TABLE", "VIEW") and word == "CASCADE" else ""), bad)

        def _parse_hp_skewed(self) -> SkewedByProperty:
            if not self._match_text_seq("BY"):
                self.raise_error("Expected SKEWED BY (columns) ON (values)")
            cols = self._parse_wrapped_csv(self._parse_id_var, optional=False)
            if not self._match(TokenType.ON):
                self.raise_error("Expected ON (values) after SKEWED BY (columns)")
            values = self._parse_wrapped_csv(self._parse_hp_skewed_value)
            dirs = self._match_text_seq("STORED", "AS", "DIRECTORIES")
            return self.expression(SkewedByProperty(expressions=cols, values=values,
                                                    stored_as_dirs=dirs))

        def _parse_hp_skewed_value(self) -> exp.Tuple | None:
            if self._match(TokenType.L_PAREN):
                items = self._parse_csv(self._parse_bitwise)
                self._match_r_paren()
                return exp.Tuple(expressions=items)
            value = self._parse_bitwise()
            return exp.Tuple(expressions=[value]) if value is not None else None

        def _parse_hp_alter_not(self) -> exp.Expression:
            if self._match_text_seq("SKEWED"):
                return self.expression(AlterNot(kind="SKEWED"))
            if self._match_text_seq("STORED", "AS", "DIRECTORIES"):
                return self.expression(AlterNot(kind="DIRECTORIES"))
            self.raise_error("Expected NOT SKEWED or NOT STORED AS DIRECTORIES")
            return exp.Expression()

        def _parse_hp_alter_unset(self) -> exp.Expression:
            if not self._match_text_seq("TBLPROPERTIES"):
                self.raise_error("Expected UNSET TBLPROPERTIES [IF EXISTS] ('key', ...)")
            exists = self._parse_exists()
            keys = self._parse_wrapped_csv(self._parse_string)
            return self.expression(UnsetTblProperties(expressions=keys, exists=exists))

        def _parse_describe(self) -> exp.Describe:
            """Hive's DESCRIBE [EXTENDED|FORMATTED] t [PARTITION (...)] [col]: the column goes in
            ``meta``."""
            node = super()._parse_describe()
            if self._curr is not None and self._curr.token_type != TokenType.SEMICOLON \
                    and (node.args.get("kind") or "TABLE").upper() == "TABLE":
                column = self._parse_id_var(any_token=True)
                if column is not None:
                    node.meta["column"] = column.name.lower()
            return node

        def _parse_hp_alter_statement(self) -> exp.Expression | None:
            """ALTER (DATABASE|SCHEMA) db SET DBPROPERTIES (...) | SET LOCATION 'path', else sqlglot's ALTER."""
            index = self._index
            if self._match_texts(("DATABASE", "SCHEMA")):
                name = self._parse_id_var()
                if name is not None and self._match(TokenType.SET) and self._match_text_seq("DBPROPERTIES"):
                    return self.expression(AlterDatabase(this=name, expressions=self._parse_wrapped_csv(
                        self._parse_property)))
                if name is not None and self._prev.token_type == TokenType.SET and self._match_text_seq("LOCATION"):
                    return self.expression(AlterDatabase(this=name, location=self._parse_string()))
                self._retreat(index)
            return self._parse_alter()

        def _parse_hp_with_property(self) -> t.Any:
            if self._match_text_seq("DBPROPERTIES"):
                return self.expression(DbProperties(expressions=self._parse_wrapped_csv(self._parse_property)))
            return self._parse_with_property()

        def _parse_hp_alter_change(self) -> exp.Expression | None:
            """CHANGE [COLUMN] c new_name type [COMMENT '...'] [FIRST | AFTER c2] [CASCADE | RESTRICT]:
            sqlglot's Hive parser takes it up to COMMENT; the position goes in ``meta``."""
            node = self._parse_alter_table_change()
            if node is not None and self._match_text_seq("FIRST"):
                node.meta["position"] = ("FIRST", None)
            elif node is not None and self._match_text_seq("AFTER"):
                after = self._parse_id_var()
                node.meta["position"] = ("AFTER", after.name.lower() if after is not None else None)
            self._hp_cascade_or_restrict("CHANGE COLUMN")
            return node

        def _hp_cascade_or_restrict(self, clause: str) -> None:
            """Hive's one optional [CASCADE | RESTRICT] after ADD / REPLACE COLUMNS and CHANGE COLUMN
            (hivepark keeps no column list per partition: both change the table's alone)."""
            if self._match_texts(("CASCADE", "RESTRICT")) and self._curr is not None \
                    and self._curr.text.upper() in ("CASCADE", "RESTRICT"):
                self.raise_error(f"{HINT}{clause} takes CASCADE or RESTRICT once, not "
                                 f"{self._prev.text.upper()} {self._curr.text.upper()}", self._curr)

        def _parse_alter(self) -> t.Any:
            node = super()._parse_alter()
            if isinstance(node, exp.Alter) and node.args.get("cascade"):  # (the column clauses took theirs)
                self.raise_error(f"{HINT}CASCADE follows only ADD COLUMNS, REPLACE COLUMNS and CHANGE COLUMN "
                                 "(Hive's ALTER TABLE t ADD COLUMNS (...) [CASCADE | RESTRICT])", self._prev)
            return node

        def _parse_hp_alter_drop(self) -> t.Any:
            # Hive: DROP [IF EXISTS] PARTITION (...)[, PARTITION (...)] [PURGE]; hivepark keeps no
            # trash, so PURGE (skip the trash) changes nothing
            actions = self._parse_alter_table_drop()
            if any(isinstance(a, exp.DropPartition) for a in actions):
                if self._match_text_seq("PURGE") and self._curr is not None and self._curr.text.upper() == "PURGE":
                    self.raise_error(f"{HINT}DROP PARTITION takes PURGE once: ALTER TABLE t DROP [IF EXISTS] "
                                     "PARTITION (...)[, PARTITION (...)] [PURGE]", self._curr)
            return actions

        def _parse_hp_alter_exchange(self) -> exp.Expression:
            spec = self._parse_partition() if self._match(TokenType.PARTITION, advance=False) else None
            if spec is None or not self._match_text_seq("WITH", "TABLE"):
                self.raise_error("Expected EXCHANGE PARTITION (k='v', ...) WITH TABLE source")
            return self.expression(ExchangePartition(this=spec, expression=self._parse_table_parts()))

        def _parse_hp_partitions(self) -> list[exp.Expression]:
            specs = []
            while self._match(TokenType.PARTITION, advance=False):
                specs.append(self._parse_partition())
                self._match(TokenType.COMMA)
            return [s for s in specs if s is not None]

        def _parse_hp_alter_rename(self) -> t.Any:
            if self._match_text_seq("TO", "PARTITION", advance=False):
                self._match_text_seq("TO")
                return self.expression(RenamePartition(this=self._parse_partition()))
            return self._parse_alter_table_rename()

        def _parse_hp_alter_set(self) -> t.Any:
            if self._match_text_seq("TBLPROPERTIES"):
                return self.expression(SetTblProperties(
                    expressions=self._parse_wrapped_csv(self._parse_property)))
            if not self._match_text_seq("SKEWED", "LOCATION"):
                return self._parse_alter_table_set()
            if not self._match(TokenType.L_PAREN):
                return self.expression(SetSkewedLocation(expressions=[], mapped=False))
            entries = []
            while not self._match(TokenType.R_PAREN):
                key = self._parse_hp_skewed_value()
                if key is None or not self._match(TokenType.EQ):
                    self.raise_error("Expected key='location' in SET SKEWED LOCATION")
                entries.append(exp.Tuple(expressions=[key, self._parse_string() or exp.null()]))
                if not self._match(TokenType.COMMA):
                    self._match_r_paren()
                    break
            return self.expression(SetSkewedLocation(expressions=entries, mapped=True))

        def _parse_hp_compute(self) -> exp.Expression:
            if self._match_text_seq("SKEW"):
                if not (self._match(TokenType.FOR) and self._match_text_seq("COLUMNS")):
                    self.raise_error("Expected COMPUTE SKEW FOR COLUMNS c1[, c2 ...]")
                return self.expression(AnalyzeSkew(
                    expressions=self._parse_csv(self._parse_column_reference)))
            return self._parse_analyze_statistics()

        def _parse_partition(self) -> exp.Partition | None:
            # Hive: INSERT OVERWRITE TABLE t PARTITION (...) IF NOT EXISTS SELECT ...
            partition = super()._parse_partition()
            if partition is not None and self._match_text_seq("IF", "NOT", "EXISTS"):
                partition.meta["if_not_exists"] = True
            return partition

        def _parse_hp_command(self) -> exp.Expression | None:
            word = self._prev.text.upper()
            if word == "EXPLAIN":
                extended = bool(self._match_texts(("EXTENDED", "FORMATTED", "ANALYZE", "DEPENDENCY", "CBO", "AST",
                                                   "VECTORIZATION", "LOCKS", "AUTHORIZATION", "REOPTIMIZATION")))
                style = self._prev.text.upper() if extended else None
                while style in ("CBO", "VECTORIZATION") and self._match_texts(  # their own options
                        ("COST", "JOINCOST", "ONLY", "SUMMARY", "OPERATOR", "EXPRESSION", "DETAIL")):
                    pass
                inner = self._parse_statement()
                if inner is None:
                    self.raise_error("EXPLAIN needs a statement after it")
                return self.expression(Explain(this=inner, extended=style))
            if word.startswith("MSCK"):
                repair = "REPAIR" in word or self._match_text_seq("REPAIR")
                if not self._match(TokenType.TABLE):
                    self.raise_error("Expected MSCK [REPAIR] TABLE <name>")
                table = self._parse_table_parts()
                mode = "ADD"
                if self._match_texts(("ADD", "DROP", "SYNC")):
                    mode = self._prev.text.upper()
                    if not self._match_text_seq("PARTITIONS"):
                        self.raise_error("Expected MSCK [REPAIR] TABLE <name> [ADD|DROP|SYNC PARTITIONS]")
                return self.expression(MsckRepair(this=table, repair=repair, mode=mode))
            return self._parse_as_command(self._prev)

        def _parse_hp_show(self) -> exp.Expression | None:
            if self._match_texts(("DATABASES", "SCHEMAS")):
                return self.expression(Show(kind="DATABASES", like=self._parse_hp_like()))
            if self._match_texts(("TABLES", "VIEWS")):
                kind = self._prev.text.upper()
                db = None
                if self._match_texts(("IN", "FROM")):
                    db = self._parse_id_var()
                return self.expression(Show(kind=kind, db=db, like=self._parse_hp_like()))
            if self._match_texts(("PARTITIONS",)):
                table = self._parse_table_parts()
                partition = self._parse_partition() if self._match(
                    TokenType.PARTITION, advance=False) else None
                # Hive 4: [WHERE condition] [ORDER BY key [ASC|DESC], ...] [LIMIT n]
                where = self._parse_where()
                order = self._parse_order()
                limit = self._parse_limit()
                return self.expression(Show(kind="PARTITIONS", this=table, partition=partition, where=where,
                                            order=order, limit=limit))
            if self._match_text_seq("TABLE", "EXTENDED"):  # Hive's table status
                db = self._parse_id_var() if self._match_texts(("IN", "FROM")) else None
                if not self._match(TokenType.LIKE):
                    self.raise_error("Expected SHOW TABLE EXTENDED [IN db] LIKE 'pattern' [PARTITION (...)]")
                like = self._parse_string() or self._parse_id_var()
                partition = self._parse_partition() if self._match(TokenType.PARTITION, advance=False) else None
                return self.expression(Show(kind="TABLE EXTENDED", db=db, like=like, partition=partition))
            if self._match_text_seq("CREATE", "TABLE"):
                return self.expression(Show(kind="CREATE TABLE", this=self._parse_table_parts()))
            if self._match_texts(("FUNCTIONS",)):
                return self.expression(Show(kind="FUNCTIONS", like=self._parse_hp_like()))
            if self._match_texts(("COLUMNS",)):
                if not self._match_texts(("IN", "FROM")):
                    self.raise_error("Expected SHOW COLUMNS IN <table> [IN <database>] [LIKE 'pattern']")
                table = self._parse_table_parts()
                if self._match_texts(("IN", "FROM")):
                    table.set("db", self._parse_id_var())
                return self.expression(Show(kind="COLUMNS", this=table, like=self._parse_hp_like()))
            if self._match_text_seq("TBLPROPERTIES"):
                name = self._parse_id_var()
                db = None
                if self._match(TokenType.DOT):
                    db, name = name, self._parse_id_var()
                table = exp.Table(this=name, db=db)
                key = None
                if self._match(TokenType.L_PAREN):
                    key = self._parse_string()
                    self._match_r_paren()
                return self.expression(Show(kind="TBLPROPERTIES", this=table, like=key))
            if self._match_text_seq("CONF"):
                return self.expression(Show(kind="CONF", like=self._parse_string()))
            for words, why in _SHOW_NOT_OFFERED:
                if self._match_text_seq(*words):
                    while self._curr:  # the rest (a table, EXTENDED, ...) changes nothing
                        self._advance()
                    return self.expression(Show(kind="NOT OFFERED", this=exp.Literal.string(
                        f"SHOW {' '.join(words)} is not offered by hivepark: {why}")))
            self.raise_error("Expected SHOW DATABASES, SHOW TABLES, SHOW TABLE EXTENDED, SHOW VIEWS, SHOW PARTITIONS, "
                             "SHOW CREATE TABLE, "
                             "SHOW COLUMNS, SHOW FUNCTIONS or SHOW TBLPROPERTIES")
            return None

        def _parse_hp_like(self) -> exp.Expression | None:
            if self._match(TokenType.LIKE):
                return self._parse_string()
            return self._parse_string() if self._curr and self._curr.token_type == TokenType.STRING else None

        def _parse_hp_restrict(self, node: t.Any, clause: str = "ADD COLUMNS") -> t.Any:
            """ADD | REPLACE COLUMNS (...) RESTRICT: Hive's default (the table's columns alone; hivepark
            keeps no column list per partition, so CASCADE, which sqlglot takes, changes nothing more)."""
            if node is not None:
                self._hp_cascade_or_restrict(clause)
            return node

        def _parse_hp_alter_add(self) -> t.Any:
            if not self._match(TokenType.PARTITION, advance=False) and not self._match_text_seq(
                "IF", "NOT", "EXISTS", advance=False):
                return self._parse_hp_restrict(self._parse_alter_table_add())
            exists = self._parse_exists(not_=True)
            parts = []
            while self._match(TokenType.PARTITION, advance=False):
                partition = self._parse_partition()
                location = None
                if self._match_text_seq("LOCATION"):
                    location = self._parse_string()
                parts.append(exp.Tuple(expressions=[partition, location or exp.null()]))
            if not parts:
                self.raise_error("Expected PARTITION (...) after ADD")
            return self.expression(AddPartitions(exists=exists, expressions=parts))

    class Generator(Hive.Generator):
        TRANSFORMS = {
            **Hive.Generator.TRANSFORMS,
            SkewedByProperty: _skewed_sql,
            AlterSkewed: lambda self, e: _skewed_sql(self, e.this),
            AlterNot: lambda self, e: "NOT SKEWED" if e.args["kind"] == "SKEWED"
            else "NOT STORED AS DIRECTORIES",
            SetSkewedLocation: lambda self, e: "SET SKEWED LOCATION (" + ", ".join(
                f"{_values_sql([x.expressions[0]])}={self.sql(x.expressions[1])}"
                for x in e.expressions) + ")",
            Concatenate: lambda self, e: "CONCATENATE",
            ExchangePartition: lambda self, e: f"EXCHANGE {self.sql(e.this)} WITH TABLE {self.sql(e.expression)}",
            Touch: lambda self, e: " ".join(["TOUCH", *(self.sql(x) for x in e.expressions)]),
            AnalyzeSkew: lambda self, e: "COMPUTE SKEW FOR COLUMNS " + ", ".join(
                self.sql(c) for c in e.expressions),
        }
        PROPERTIES_LOCATION = {
            **Hive.Generator.PROPERTIES_LOCATION,
            SkewedByProperty: exp.Properties.Location.POST_SCHEMA,
        }

        def tablesample_sql(self, expression: exp.TableSample, tablesample_keyword: str | None = None) -> str:
            """Hive's ``ON c1, c2`` for a sample of several columns (sqlglot would write a tuple's
            parentheses): the columns, each written as sqlglot writes it, given as the clause's field."""
            field = expression.args.get("bucket_field")
            if isinstance(field, exp.Tuple):
                expression = expression.copy()
                expression.set("bucket_field", exp.var(", ".join(self.sql(c) for c in field.expressions)))
            return super().tablesample_sql(expression, tablesample_keyword)
