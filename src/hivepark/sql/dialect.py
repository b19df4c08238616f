"""HiveQL: sqlglot's Hive dialect, extended by subclassing with the statements it parses
only as opaque commands (SHOW, EXPLAIN, MSCK REPAIR TABLE, ALTER TABLE ADD PARTITION with
several partitions)."""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.hive import Hive
from sqlglot.tokens import TokenType


class Show(exp.Expression):
    """SHOW DATABASES | TABLES [IN db] [LIKE 'p'] | PARTITIONS t [PARTITION (...)]."""

    arg_types = {"kind": True, "this": False, "partition": False, "like": False, "db": False}


class Explain(exp.Expression):
    """EXPLAIN [EXTENDED] <statement>."""

    arg_types = {"this": True, "extended": False}


class MsckRepair(exp.Expression):
    """MSCK REPAIR TABLE t."""

    arg_types = {"this": True}


class AddPartitions(exp.Expression):
    """ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (...) [LOCATION '...'] [PARTITION ...]."""

    arg_types = {"exists": False, "expressions": True}


class HiveQL(Hive):
    """The dialect hivepark parses with."""

    class Tokenizer(Hive.Tokenizer):
        # Parse SHOW and EXPLAIN ourselves instead of swallowing them as raw commands.
        COMMANDS = Hive.Tokenizer.COMMANDS - {TokenType.SHOW, TokenType.COMMAND}
        KEYWORDS = {**Hive.Tokenizer.KEYWORDS, "MSCK": TokenType.COMMAND}

    class Parser(Hive.Parser):
        STATEMENT_PARSERS = {
            **Hive.Parser.STATEMENT_PARSERS,
            TokenType.SHOW: lambda self: self._parse_hp_show(),
            TokenType.COMMAND: lambda self: self._parse_hp_command(),
        }
        ALTER_PARSERS = {
            **Hive.Parser.ALTER_PARSERS,
            "ADD": lambda self: self._parse_hp_alter_add(),
        }

        def _parse_partition(self) -> exp.Partition | None:
            # Hive: INSERT OVERWRITE TABLE t PARTITION (...) IF NOT EXISTS SELECT ...
            partition = super()._parse_partition()
            if partition is not None and self._match_text_seq("IF", "NOT", "EXISTS"):
                partition.meta["if_not_exists"] = True
            return partition

        def _parse_hp_command(self) -> exp.Expression | None:
            word = self._prev.text.upper()
            if word == "EXPLAIN":
                extended = bool(self._match_texts(("EXTENDED", "FORMATTED", "ANALYZE")))
                style = self._prev.text.upper() if extended else None
                inner = self._parse_statement()
                if inner is None:
                    self.raise_error("EXPLAIN needs a statement after it")
                return self.expression(Explain(this=inner, extended=style))
            if word.startswith("MSCK"):
                if "REPAIR" not in word:
                    self._match_text_seq("REPAIR")
                if not self._match(TokenType.TABLE):
                    self.raise_error("Expected MSCK REPAIR TABLE <name>")
                return self.expression(MsckRepair(this=self._parse_table_parts()))
            return self._parse_as_command(self._prev)

        def _parse_hp_show(self) -> exp.Expression | None:
            if self._match_texts(("DATABASES", "SCHEMAS")):
                return self.expression(Show(kind="DATABASES", like=self._parse_hp_like()))
            if self._match_texts(("TABLES",)):
                db = None
                if self._match_texts(("IN", "FROM")):
                    db = self._parse_id_var()
                return self.expression(Show(kind="TABLES", db=db, like=self._parse_hp_like()))
            if self._match_texts(("PARTITIONS",)):
                table = self._parse_table_parts()
                partition = self._parse_partition() if self._match(
                    TokenType.PARTITION, advance=False) else None
                return self.expression(Show(kind="PARTITIONS", this=table, partition=partition))
            self.raise_error("Expected SHOW DATABASES, SHOW TABLES or SHOW PARTITIONS")
            return None

        def _parse_hp_like(self) -> exp.Expression | None:
            if self._match(TokenType.LIKE):
                return self._parse_string()
            return self._parse_string() if self._curr and self._curr.token_type == TokenType.STRING else None

        def _parse_hp_alter_add(self) -> t.Any:
            if not self._match(TokenType.PARTITION, advance=False) and not self._match_text_seq(
                "IF", "NOT", "EXISTS", advance=False):
                return self._parse_alter_table_add()
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
