"""Session settings: Hive's names and defaults, plus hivepark's own."""

from __future__ import annotations

from collections.abc import Mapping

DEFAULTS: dict[str, str] = {
    "hive.exec.dynamic.partition": "true",
    "hive.exec.dynamic.partition.mode": "strict",
    "hive.exec.max.dynamic.partitions": "1000",
    "hive.exec.max.dynamic.partitions.pernode": "100",
    "hive.exec.max.created.files": "100000",
    "hive.exec.default.partition.name": "__HIVE_DEFAULT_PARTITION__",
    "hive.default.fileformat": "TextFile",
    "hive.mapred.mode": "nonstrict",
    "hive.exec.drop.ignorenonexistent": "true",  # DROP TABLE of a missing table succeeds
    "hive.decode.partition.name": "false",  # true: SHOW PARTITIONS prints names unescaped
    "hivepark.explain.max.directories": "5",
    # files an INSERT OVERWRITE replaced stay this long for readers that planned before it
    # (0: deleted at once, so a directory always holds exactly the table's files)
    "hivepark.files.retention.seconds": "0",
    "hive.auto.convert.join": "true",
    "hive.mapjoin.smalltable.filesize": "25000000",
    "hive.optimize.mapjoin.partition.pruning": "true",
    "hive.mapjoin.partition.pruning.max.values": "100000",
    "hive.optimize.ppd": "true",  # off: nothing is pushed to a storage handler
    "hive.optimize.ppd.storage": "true",  # off: likewise (Hive's two switches)
}


class Config:
    """Mutable per-Warehouse settings; unknown keys are kept (Hive does the same)."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = dict(DEFAULTS)
        for k, v in (overrides or {}).items():
            self.set(k, v)

    def set(self, key: str, value: object) -> None:
        self._values[key.strip()] = str(value).strip()

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._values.get(key.strip(), default)

    def get_int(self, key: str) -> int:
        return int(self._values[key])

    def get_bool(self, key: str) -> bool:
        return self._values.get(key, "false").lower() == "true"

    def items(self) -> list[tuple[str, str]]:
        return sorted(self._values.items())
