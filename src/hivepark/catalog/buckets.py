"""Hive's bucketing (CLUSTERED BY (c) [SORTED BY (c [ASC|DESC])] INTO n BUCKETS) as the metastore
keeps it for hivepark: three table properties, no schema change, and Hive's hash of a row's
bucket. hivepark reads a bucketed table as any other (every row, whichever file holds it) or,
with Hive's bucketing_version 2, only the files of the buckets a filter names; it writes Hive's
bucket files (storage/bucket_files.py)."""

from __future__ import annotations

import datetime
import json
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from hivepark.catalog.models import Table
from hivepark.types import HiveType

BUCKET_COLUMNS = "hivepark.bucket.columns"
BUCKET_SORT = "hivepark.bucket.sort"
BUCKET_COUNT = "hivepark.bucket.count"
KEYS = (BUCKET_COLUMNS, BUCKET_SORT, BUCKET_COUNT)
_EPOCH = datetime.date(1970, 1, 1)


#: the column types whose Hive hash hivepark computes (Hive's hashCodeMurmur of each)
HASHED_TYPES = ("tinyint", "smallint", "int", "bigint", "string", "varchar", "char", "date", "boolean")


@dataclass(frozen=True)
class BucketSample:
    """``TABLESAMPLE (BUCKET numerator OUT OF denominator ON columns)``: the rows whose Hive hash
    of ``columns`` falls in bucket ``numerator - 1`` of ``denominator``."""

    numerator: int
    denominator: int
    columns: tuple[str, ...]
    types: tuple[str, ...] = ()  # the columns' base types, when known

    def buckets_read(self, b: Bucketing) -> frozenset[int] | None:
        """The bucket files of a table bucketed by ``b`` that can hold sampled rows, or None
        when any can (other columns, or counts neither dividing the other).

        >>> s = BucketSample(2, 4, ("k",))
        >>> sorted(s.buckets_read(Bucketing(("k",), (), 16))), sorted(s.buckets_read(Bucketing(("k",), (), 2)))
        ([1, 5, 9, 13], [1])
        >>> s.buckets_read(Bucketing(("k",), (), 6)) is None, s.buckets_read(Bucketing(("v",), (), 16)) is None
        (True, True)
        """
        if self.columns != b.columns:
            return None
        x, y = self.numerator - 1, self.denominator
        if b.count % y == 0:  # h % count == i gives h % y == i % y
            return frozenset(i for i in range(b.count) if i % y == x)
        if y % b.count == 0:  # h % y == x gives h % count == x % count
            return frozenset({x % b.count})
        return None


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


# -- Hive's bucket of a row (bucketing_version 2, Hive 3 and 4) ------------------------------------
_SEED = 104729  # Hive's Murmur3.DEFAULT_SEED
_SPARK_SEED = 42  # Spark's hash(): Murmur3 x86_32, seed 42, each argument hashed with the one before as its seed
_MASK = 0xFFFFFFFF
_INT_BYTES = {"smallint": 2, "int": 4, "bigint": 8}
_BUCKET_FILE = re.compile(r"^(\d+)_\d+(_copy_\d+)?(\.[^/]*)?$")  # Hive: a suffix after a dot too


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix(k: int) -> int:
    return (_rotl((k * 0xCC9E2D51) & _MASK, 15) * 0x1B873593) & _MASK


def murmur3_32(data: bytes, seed: int = _SEED) -> int:
    """Murmur3 x86_32 of ``data`` as a signed Java int (Hive's ``Murmur3.hash32``).

    >>> murmur3_32(b"", 0), murmur3_32(b"hello", 0)
    (0, 613153351)
    """
    h = seed & _MASK
    whole = len(data) // 4 * 4
    for (k,) in struct.iter_unpack("<I", data[:whole]):
        h = _mix_h1(h, k)
    tail = data[whole:]
    if tail:
        h ^= _mix(int.from_bytes(tail, "little"))
    return _signed(_fmix(h, len(data)))


def _mix_h1(h: int, k: int) -> int:
    return (_rotl(h ^ _mix(k), 13) * 5 + 0xE6546B64) & _MASK


def _fmix(h: int, length: int) -> int:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def _signed(h: int) -> int:
    return h - (1 << 32) if h & 0x80000000 else h


def spark_hash(values: Sequence[str | int | None], seed: int = _SPARK_SEED) -> int:
    """Spark SQL's ``hash(v1, v2, ...)`` of STRING (``str``) and INT (``int``) values, as the
    JVM computes it: Murmur3 x86_32 of each value with the previous result as its seed (the
    first: 42), a NULL leaving it as it is; an INT hashed as one 4-byte block, a string as its
    UTF-8 bytes, whose tail bytes Spark mixes one by one as signed ints (``hashUnsafeBytes``;
    Hive mixes them as one little-endian word, :func:`murmur3_32`). What ``repartition`` by
    those columns sends a row by, known without a Spark job.

    >>> spark_hash(["ds=1"]), spark_hash([1]), spark_hash(["2024-01-01", None, 3])
    (-1813623859, -559580957, 1705929152)
    """
    h = seed & _MASK
    for v in values:
        if v is None:
            continue
        if isinstance(v, str):
            data = v.encode()
            whole = len(data) // 4 * 4
            for (k,) in struct.iter_unpack("<I", data[:whole]):
                h = _mix_h1(h, k)
            for b in data[whole:]:
                h = _mix_h1(h, (b - 256 if b > 127 else b) & _MASK)
            h = _fmix(h, len(data))
        else:
            h = _fmix(_mix_h1(h, v & _MASK), 4)
    return _signed(h)


def _field_hash(value: object, hive_type: HiveType) -> int | None:
    """Hive's ``hashCodeMurmur`` of one value, or None for a type (or value) not handled here."""
    if value is None:
        return 0
    base = hive_type.base
    if base in _INT_BYTES and isinstance(value, int) and not isinstance(value, bool):
        lo, hi = hive_type.integral_range() or (0, -1)
        if not lo <= value <= hi:
            return None
        return murmur3_32(value.to_bytes(_INT_BYTES[base], "big", signed=True))
    if base == "tinyint" and isinstance(value, int) and not isinstance(value, bool) and -128 <= value <= 127:
        return value
    if base in ("string", "varchar") and isinstance(value, str):
        return murmur3_32(value.encode("utf-8"))
    if base == "char" and isinstance(value, str):  # HiveChar's stripped value: no trailing spaces
        return murmur3_32(value.rstrip(" ").encode("utf-8"))
    if base == "date" and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        # Hive hashes the days since 1970-01-01 as an INT: four big-endian bytes
        return murmur3_32((value - _EPOCH).days.to_bytes(4, "big", signed=True))
    if base == "boolean" and isinstance(value, bool):
        return int(value)  # the value itself, 1 or 0
    return None


def hive_bucket(values: Sequence[object], types: Sequence[HiveType], count: int) -> int | None:
    """The bucket Hive (bucketing_version 2) puts a row with these bucket-column ``values`` in:
    ``31 * h + field`` over the columns, then ``(h & INT_MAX) % count``; None when a type is
    not handled (no pruning then).

    >>> hive_bucket([10], [HiveType.parse("int")], 2), hive_bucket([11], [HiveType.parse("int")], 2)
    (0, 1)
    """
    h = 0
    for v, t in zip(values, types):
        f = _field_hash(v, t)
        if f is None:
            return None
        h = (31 * h + f) & _MASK
    return (h & 0x7FFFFFFF) % count


# -- the same bucket as a Spark SQL expression (no Python workers), for the types Spark's hash can give it
_C1, _C2 = 0xCC9E2D51, 0x1B873593


def _rotr(x: int, r: int) -> int:
    return _rotl(x, 32 - r)


def _seed_preimage(seed: int) -> int:
    """The INT whose Spark ``hash`` is ``seed``: then Spark's ``hash(that, x)`` hashes ``x`` with
    ``seed`` as its seed. Murmur3 of one 4-byte block is a bijection; this undoes it step by step
    (the finalizer's shifts and multiplications, the block's step, the word's mix).

    >>> _seed_preimage(104729)
    1867871456
    """
    def inverse(c: int) -> int:
        return pow(c, -1, 1 << 32)

    h = seed & _MASK
    h ^= h >> 16
    h = (h * inverse(0xC2B2AE35)) & _MASK
    h ^= (h >> 13) ^ (h >> 26)
    h = (h * inverse(0x85EBCA6B)) & _MASK
    h ^= h >> 16
    h ^= 4  # the length
    k = _rotr(((h - 0xE6546B64) * inverse(5)) & _MASK, 13) ^ _SPARK_SEED
    word = (_rotr((k * inverse(_C2)) & _MASK, 15) * inverse(_C1)) & _MASK
    return _signed(word)


_HIVE_SEEDED = _seed_preimage(_SEED)


def _byte_swapped(column: str, bits: int) -> str:
    """``column`` (an INT or BIGINT expression) with its bytes reversed: Hive hashes a number's
    big-endian bytes, which Murmur3 reads as little-endian words, and Spark hashes the number's own
    words (a BIGINT's low word first), so Hive's hash of x is Spark's of x's bytes reversed."""
    parts = []
    for i in range(bits // 8):
        moved = f"shiftrightunsigned({column}, {8 * i}) & 255" if i else f"{column} & 255"
        parts.append(f"shiftleft({moved}, {bits - 8 - 8 * i})" if bits - 8 - 8 * i else f"({moved})")
    return "(" + " | ".join(parts) + ")"


def _spark_field_hash(column: str, base: str) -> str | None:
    """Spark SQL for Hive's ``hashCodeMurmur`` of ``column`` (a NULL hashes to 0), or None when
    Spark's hash cannot give it (SMALLINT's two bytes and strings end in a tail that Spark's
    Murmur3 hashes its own way)."""
    if base == "date":  # the days since 1970-01-01, hashed as an INT
        column, base = f"unix_date(CAST({column} AS DATE))", "int"
    if base in ("int", "bigint"):
        column = f"CAST({column} AS {base.upper()})"  # a no-op on the table's own column
        swapped = _byte_swapped(column, 32 if base == "int" else 64)
        return f"IF({column} IS NULL, 0, hash({_HIVE_SEEDED}, {swapped}))"
    if base == "tinyint":
        return f"coalesce(CAST({column} AS INT), 0)"
    if base == "boolean":
        return f"CASE WHEN {column} THEN 1 ELSE 0 END"
    return None


def hashed_input(column: str, base: str) -> str:
    """The Spark SQL a bucket column's hash takes: a CHAR without its trailing spaces (Hive hashes
    HiveChar's stripped value; Spark's ``rtrim`` strips spaces only, as Hive does), else the column.

    >>> hashed_input("`c`", "char"), hashed_input("`v`", "varchar")
    ('rtrim(`c`)', '`v`')
    """
    return f"rtrim({column})" if base == "char" else column


def spark_bucket_sql(columns: Sequence[str], types: Sequence[str], count: int) -> str | None:
    """Spark SQL giving the Hive bucket (of ``count``) of the row whose bucket columns are the
    SQL expressions ``columns`` of the base ``types``, as :func:`hive_bucket` does, or None when
    a type needs the Python workers' hash (storage/bucket_files.py).

    >>> spark_bucket_sql(["`k`"], ["tinyint"], 4)
    'CAST(((coalesce(CAST(`k` AS INT), 0) & 4294967295) & 2147483647) % 4 AS INT)'
    >>> spark_bucket_sql(["`k`", "`s`"], ["int", "string"], 4) is None
    True
    """
    h = ""
    for column, base in zip(columns, types):
        field = _spark_field_hash(column, base)
        if field is None:
            return None
        word = f"(CAST({field} AS BIGINT) & {_MASK})" if base in ("int", "bigint", "date") else f"({field} & {_MASK})"
        h = word if not h else f"(({h} * 31 + {word}) & {_MASK})"
    return f"CAST(({h} & {0x7FFFFFFF}) % {count} AS INT)" if h else None


def bucket_of_file(name: str) -> int | None:
    """The bucket a Hive bucket file's name gives (``000003_0``, ``000003_0_copy_1``, hivepark's
    ``000003_0.<commit>``), or None.

    >>> bucket_of_file("000003_0"), bucket_of_file("000003_0_copy_2"), bucket_of_file("000003_0.2026_ab")
    (3, 3, 3)
    >>> bucket_of_file("part-0.orc"), bucket_of_file("2026_ab-000003_0")
    (None, None)
    """
    m = _BUCKET_FILE.match(name)
    return int(m.group(1)) if m else None


def prunes_buckets(table: Table) -> Bucketing | None:
    """The table's bucketing when its files may be chosen by bucket: Hive's bucketing_version 2
    (Hive 3's default, a table property), unsorted or sorted alike; None otherwise."""
    b = table_buckets(table)
    return b if b is not None and table.properties.get("bucketing_version") == "2" else None
