"""Session settings: Hive's names and defaults, plus hivepark's own."""

from __future__ import annotations

from collections.abc import Mapping

from hivepark.errors import UnsupportedError, UserInputError

DEFAULTS: dict[str, str] = {
    "hive.exec.dynamic.partition": "true",
    "hive.exec.dynamic.partition.mode": "strict",
    "hive.exec.max.dynamic.partitions": "1000",
    "hive.exec.max.dynamic.partitions.pernode": "100",
    "hive.exec.max.created.files": "100000",
    "hive.exec.default.partition.name": "__HIVE_DEFAULT_PARTITION__",
    "hive.default.fileformat": "TextFile",
    "hive.mapred.mode": "nonstrict",
    # each of Hive 3's StrictChecks on its own (hive.mapred.mode=strict turns them all on)
    "hive.strict.checks.no.partition.filter": "false",
    "hive.strict.checks.orderby.no.limit": "false",
    "hive.strict.checks.cartesian.product": "false",
    "hive.strict.checks.type.safety": "true",
    "hive.cli.errors.ignore": "false",  # -f: an error stops the script
    "hive.msck.path.validation": "throw",  # MSCK REPAIR: a directory it cannot register fails it
    # none: a back-quoted name in a SELECT list is a regular expression over the columns
    "hive.support.quoted.identifiers": "column",
    "hive.exec.drop.ignorenonexistent": "true",  # DROP TABLE of a missing table succeeds
    # ALTER TABLE ... CHANGE / REPLACE COLUMNS: a column's type only widens (Hive's metastore)
    "hive.metastore.disallow.incompatible.col.type.changes": "true",
    "hive.decode.partition.name": "false",  # true: SHOW PARTITIONS prints names unescaped
    # a regular expression every new partition value must match (empty: any value; Hive's metastore)
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hivepark.explain.max.directories": "5",
    # each written file holds at most this many rows (0: no limit, one file per partition or task)
    "hivepark.max.rows.per.file": "0",
    # files an INSERT OVERWRITE replaced stay this long for readers that planned before it
    # (0: deleted at once, so a directory always holds exactly the table's files)
    "hivepark.files.retention.seconds": "0",
    # warehouse tables as Spark temporary views, kept current (exec/spark_views.py)
    "hivepark.spark.views": "true",
    "hive.auto.convert.join": "true",
    "hive.mapjoin.smalltable.filesize": "25000000",
    "hive.optimize.mapjoin.partition.pruning": "true",
    "hive.mapjoin.partition.pruning.max.values": "100000",
    "hive.optimize.ppd": "true",  # off: nothing is pushed to a storage handler
    "hive.optimize.ppd.storage": "true",  # off: likewise (Hive's two switches)
    # the CLI cancels a statement whose tasks wait this long with no executor (cluster masters)
    "hivepark.executor.wait.seconds": "60",
}


# The settings whose value has a type (Hive's HiveConf.ConfVars types): SET refuses any other
# value at once, with Hive's text, instead of failing the statement that later reads it.
TYPED: dict[str, str] = {
    "hive.exec.max.dynamic.partitions": "INT",
    "hive.exec.max.dynamic.partitions.pernode": "INT",
    "hive.exec.max.created.files": "LONG",
    "hive.mapjoin.smalltable.filesize": "LONG",
    "hive.mapjoin.partition.pruning.max.values": "LONG",
    "hivepark.explain.max.directories": "INT",
    "hivepark.max.rows.per.file": "LONG",
    "hivepark.files.retention.seconds": "FLOAT",
    "hive.exec.dynamic.partition": "BOOLEAN",
    "hive.exec.drop.ignorenonexistent": "BOOLEAN",
    "hive.strict.checks.no.partition.filter": "BOOLEAN",
    "hive.strict.checks.orderby.no.limit": "BOOLEAN",
    "hive.strict.checks.cartesian.product": "BOOLEAN",
    "hive.strict.checks.type.safety": "BOOLEAN",
    "hive.cli.errors.ignore": "BOOLEAN",
    "hive.metastore.disallow.incompatible.col.type.changes": "BOOLEAN",
    "hive.decode.partition.name": "BOOLEAN",
    "hive.auto.convert.join": "BOOLEAN",
    "hivepark.spark.views": "BOOLEAN",
    "hive.optimize.mapjoin.partition.pruning": "BOOLEAN",
    "hive.optimize.ppd": "BOOLEAN",
    "hive.optimize.ppd.storage": "BOOLEAN",
    "hivepark.executor.wait.seconds": "FLOAT",
}
# The settings Hive validates against a set of values (HiveConf's StringSet, case-insensitive):
# SET refuses any other at once, with Hive's text, where a typo would act as the default.
CHOICES: dict[str, tuple[str, ...]] = {
    "hive.msck.path.validation": ("throw", "skip", "ignore"),
    "hive.support.quoted.identifiers": ("none", "column"),
}
# Hive settings hivepark keeps at one value: SET (and connect(conf=...), --hiveconf) of another
# is refused, naming why, rather than kept and silently ignored.
FIXED: dict[str, str] = {
    # every path (writes, MSCK, pruning, the metastore's filters, reads) knows the default
    # partition by this name, and Spark's partition discovery reads it as NULL
    "hive.exec.default.partition.name": "__HIVE_DEFAULT_PARTITION__",
}
_FIXED_WHY = {
    "hive.exec.default.partition.name":
        "hivepark always writes the rows whose partition value is NULL or '' to the directory "
        "__HIVE_DEFAULT_PARTITION__ (Hive's default name), and reads that directory back as NULL; "
        "another name is not supported, so that every table's default partition reads the same",
}
_BOUNDS = {"INT": 2**31, "LONG": 2**63}
_EXAMPLE = {"INT": "a whole number", "LONG": "a whole number", "FLOAT": "a number",
            "BOOLEAN": "true or false"}


def is_type(kind: str, value: str) -> bool:
    """Whether ``value`` is a value of Hive's setting type ``kind`` (INT, LONG, FLOAT, BOOLEAN).

    Example:
        >>> is_type("INT", "1000"), is_type("INT", "abc"), is_type("INT", "3000000000")
        (True, False, False)
        >>> is_type("BOOLEAN", "TRUE"), is_type("BOOLEAN", "yes"), is_type("FLOAT", "0.5")
        (True, False, True)
    """
    if kind == "BOOLEAN":
        return value.lower() in ("true", "false")
    if kind == "FLOAT":
        try:
            float(value)
        except ValueError:
            return False
        return value.lower().lstrip("+-") not in ("nan", "inf", "infinity")
    try:
        n = int(value)
    except ValueError:
        return False
    return -_BOUNDS[kind] <= n < _BOUNDS[kind]


class Config:
    """Mutable per-Warehouse settings; unknown keys are kept (Hive does the same)."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = dict(DEFAULTS)
        for k, v in (overrides or {}).items():
            self.set(k, v)
        self._initial = dict(self._values)

    def reset(self, key: str | None = None) -> None:
        """``RESET [key]``: every setting (or ``key``) back to its value when this Config was
        made (Hive's defaults and the settings given then)."""
        if key is None:
            self._values = dict(self._initial)
        elif key.strip() in self._initial:
            self._values[key.strip()] = self._initial[key.strip()]
        else:
            self._values.pop(key.strip(), None)

    def set(self, key: str, value: object) -> None:
        """Sets ``key``; a typed setting (:data:`TYPED`) refuses a value of another type with
        Hive's text (``'SET k=v' FAILED because k expects INT type value.``) and the fix, one
        of a set of values (:data:`CHOICES`) any other (``... FAILED in validation : Invalid
        value.. expects one of [throw, skip, ignore].``), a fixed one (:data:`FIXED`) any other
        value, saying why."""
        key, text = key.strip(), str(value).strip()
        fixed = FIXED.get(key)
        if fixed is not None and text != fixed:
            raise UnsupportedError(f"'SET {key}={text}' is refused: {_FIXED_WHY[key]}. Leave {key} "
                                   f"at {fixed}.")
        choices = CHOICES.get(key)
        if choices is not None and text.lower() not in choices:
            raise UserInputError(f"'SET {key}={text}' FAILED in validation : Invalid value.. expects one of "
                                 f"[{', '.join(choices)}]. Give one of them, e.g. SET {key}={DEFAULTS[key]} "
                                 f"(the default).")
        kind = TYPED.get(key)
        if kind is not None and not is_type(kind, text):
            default = DEFAULTS.get(key)
            example = f"SET {key}={default} (the default)" if default is not None else f"SET {key}=0"
            raise UserInputError(f"'SET {key}={text}' FAILED because {key} expects {kind} type value. "
                                 f"Give {_EXAMPLE[kind]}, e.g. {example}.")
        self._values[key] = text

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._values.get(key.strip(), default)

    def get_int(self, key: str) -> int:
        return int(self._values[key])

    def get_bool(self, key: str) -> bool:
        return self._values.get(key, "false").lower() == "true"

    def items(self) -> list[tuple[str, str]]:
        return sorted(self._values.items())
