"""Hive's bucketing (CLUSTERED BY (c) [SORTED BY (c [ASC|DESC])] INTO n BUCKETS) as the metastore
keeps it for hivepark: three table properties, no schema change. hivepark reads a bucketed
table as any other (every row, whichever file holds it: always right) and does not write one,
since Hive's bucket files (one per bucket, rows placed by Hive's hash) are not what Spark writes."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hivepark.catalog.models import Table

BUCKET_COLUMNS = "hivepark.bucket.columns"
BUCKET_SORT = "hivepark.bucket.sort"
BUCKET_COUNT = "hivepark.bucket.count"
KEYS = (BUCKET_COLUMNS, BUCKET_SORT, BUCKET_COUNT)


@dataclass(frozen=True)
class Bucketing:
    """The clause: bucket columns, sort columns with ascending or not, and the number of buckets."""

    columns: tuple[str, ...]
    sorted_by: tuple[tuple[str, bool], ...]
    count: int

    def properties(self) -> dict[str, str]:
        return {BUCKET_COLUMNS: json.dumps(list(self.columns)),
                BUCKET_SORT: json.dumps([[c, asc] for c, asc in self.sorted_by]), BUCKET_COUNT: str(self.count)}


def table_buckets(table: Table) -> Bucketing | None:
    """The table's bucketing, or None.

    >>> t = Table("db", "t", (), properties=Bucketing(("a",), (("b", False),), 4).properties())
    >>> table_buckets(t)
    Bucketing(columns=('a',), sorted_by=(('b', False),), count=4)
    """
    raw = table.properties.get(BUCKET_COUNT)
    if not raw:
        return None
    return Bucketing(tuple(json.loads(table.properties.get(BUCKET_COLUMNS) or "[]")),
                     tuple((c, bool(asc)) for c, asc in json.loads(table.properties.get(BUCKET_SORT) or "[]")),
                     int(raw))
