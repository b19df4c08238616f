"""Hive's bucket files, as hivepark writes them (bucketing_version 2, Hive 3 and 4): each row's
bucket computed over Arrow arrays in Spark's Python workers with Hive's hash
(``catalog.buckets.hive_bucket``, row by row, is the reference the tests hold this to), and the
files named as Hive names them (``000003_0``: bucket 3), one per bucket a partition has rows in.

A write puts the bucket in a column :data:`BUCKET_COL` that Spark writes as one more directory
level (``hivepark_bucket=3/part-...``); :func:`name_staged` then gives each such file its Hive
name in the partition's staging directory, before anything is visible."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hivepark.catalog.buckets import HASHED_TYPES, table_buckets
from hivepark.catalog.models import Table
from hivepark.catalog.skew import table_skew
from hivepark.storage import fs
from hivepark.types import HiveType

BUCKET_COL = "hivepark_bucket"  # not "_"-prefixed: such names are hidden from listings
_SEED = 104729
_U32 = pa.uint32()


def unwritable(table: Table) -> str | None:
    """Why hivepark cannot write ``table``'s bucket files as Hive would, or None when it can."""
    b = table_buckets(table)
    if b is None:
        return None
    if table.properties.get("bucketing_version", "2") != "2":
        return (f"its TBLPROPERTIES give bucketing_version={table.properties['bucketing_version']} (Hive 1 and 2's "
                "hash, which hivepark does not compute)")
    if table_skew(table) is not None:
        return "it is also SKEWED BY (list bucketing and bucketing together)"
    types = {c.name: HiveType.parse(c.type).base for c in table.columns}
    other = [f"{c} {types[c]}" for c in b.columns if types[c] not in HASHED_TYPES]
    if other:
        return (f"its bucket column {', '.join(other)} is of a type whose Hive hash hivepark does not compute "
                f"(it does for {', '.join(HASHED_TYPES)})")
    return None


def file_name(bucket: int, copy: int = 0) -> str:
    """Hive's name of a bucket's file (its task's, attempt 0; ``_copy_n`` for more files of it).

    >>> file_name(3), file_name(12, 1)
    ('000003_0', '000012_0_copy_1')
    """
    return f"{bucket:06d}_0" + (f"_copy_{copy}" if copy else "")


# -- Murmur3 x86_32 over Arrow arrays of unsigned 32-bit words (arithmetic wraps) ----------------
def _rotl(x: pa.Array, r: int) -> pa.Array:
    return pc.bit_wise_or(pc.shift_left(x, pa.scalar(r, _U32)), pc.shift_right(x, pa.scalar(32 - r, _U32)))


def _k(x: pa.Array) -> pa.Array:
    x = pc.multiply(x, pa.scalar(0xCC9E2D51, _U32))
    return pc.multiply(_rotl(x, 15), pa.scalar(0x1B873593, _U32))


def _block(h: pa.Array, word: pa.Array) -> pa.Array:
    h = _rotl(pc.bit_wise_xor(h, _k(word)), 13)
    return pc.add(pc.multiply(h, pa.scalar(5, _U32)), pa.scalar(0xE6546B64, _U32))


def _final(h: pa.Array, length: int | pa.Array) -> pa.Array:
    h = pc.bit_wise_xor(h, pa.scalar(length, _U32) if isinstance(length, int) else length)
    for shift, factor in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h = pc.multiply(pc.bit_wise_xor(h, pc.shift_right(h, pa.scalar(shift, _U32))), pa.scalar(factor, _U32))
    return pc.bit_wise_xor(h, pc.shift_right(h, pa.scalar(16, _U32)))


def _byte(x: pa.Array, i: int) -> pa.Array:
    """Byte ``i`` (0 = lowest) of each word."""
    return pc.bit_wise_and(pc.shift_right(x, pa.scalar(8 * i, _U32)), pa.scalar(0xFF, _U32))


def _swapped(x: pa.Array) -> pa.Array:
    """Each word's bytes reversed: a big-endian int read as Murmur3's little-endian block."""
    out = _byte(x, 3)
    for i in (2, 1, 0):
        out = pc.bit_wise_or(out, pc.shift_left(_byte(x, i), pa.scalar(8 * (3 - i), _U32)))
    return out


def _seeded(n: int) -> pa.Array:
    return pa.array([_SEED] * n, _U32)


def _string_hashes(values: pa.Array) -> pa.Array:
    """Murmur3 of each string's UTF-8 bytes, as words (a NULL's is 0), over the whole array at
    once: the array's bytes and offsets as Arrow arrays, block j of every string of at least
    4j + 4 bytes taken and mixed together, then each string's tail and its length."""
    n = len(values)
    if n == 0 or values.null_count == n:
        return pa.array([0] * n, _U32)
    _, offsets_buffer, data_buffer = values.buffers()
    wide = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    offsets = pc.cast(pa.Array.from_buffers(pa.int64() if wide else pa.int32(), n + 1, [None, offsets_buffer],
                                            offset=values.offset), pa.int64())
    starts = offsets.slice(0, n)
    lengths = pc.subtract(offsets.slice(1, n), starts)
    size = data_buffer.size if data_buffer is not None else 0
    data = pa.Array.from_buffers(pa.uint8(), size, [None, data_buffer]) if size else pa.array([0], pa.uint8())
    last = pa.scalar(max(size - 1, 0), pa.int64())

    def byte_at(at: pa.Array, i: int) -> pa.Array:  # the byte at ``at + i`` (a short string's: any)
        where = pc.min_element_wise(pc.add(at, pa.scalar(i, pa.int64())), last)
        return pc.shift_left(pc.cast(pc.take(data, where), _U32), pa.scalar(8 * i, _U32))

    h = _seeded(n)
    longest = pc.max(lengths).as_py() or 0
    for j in range(longest // 4):
        at = pc.add(starts, pa.scalar(4 * j, pa.int64()))
        word = byte_at(at, 0)
        for i in (1, 2, 3):
            word = pc.bit_wise_or(word, byte_at(at, i))
        h = pc.if_else(pc.greater_equal(lengths, pa.scalar(4 * j + 4, pa.int64())), _block(h, word), h)
    whole = pc.multiply(pc.divide(lengths, pa.scalar(4, pa.int64())), pa.scalar(4, pa.int64()))
    rest = pc.subtract(lengths, whole)
    at = pc.add(starts, whole)
    tail = pa.array([0] * n, _U32)
    for i in (0, 1, 2):
        tail = pc.if_else(pc.greater(rest, pa.scalar(i, pa.int64())), pc.bit_wise_or(tail, byte_at(at, i)), tail)
    h = pc.if_else(pc.greater(rest, pa.scalar(0, pa.int64())), pc.bit_wise_xor(h, _k(tail)), h)
    h = _final(h, pc.cast(lengths, _U32))
    return pc.if_else(pc.is_valid(values), h, pa.scalar(0, _U32))


def _field_hashes(values: pa.Array, base: str) -> pa.Array:
    """Hive's ``hashCodeMurmur`` of each value, as words; a NULL hashes to 0."""
    n = len(values)
    if base in ("string", "varchar"):
        return _string_hashes(values)
    if base == "date":  # the days since 1970-01-01, hashed as an INT
        values, base = pc.cast(values, pa.int32()), "int"
    if base in ("tinyint", "boolean"):  # the value itself (1 or 0)
        out = pc.cast(pc.cast(values, pa.int32()), _U32, safe=False)
    elif base == "smallint":  # two big-endian bytes: Murmur3's tail
        word = pc.cast(pc.cast(values, pa.uint16(), safe=False), _U32)
        tail = pc.bit_wise_or(_byte(word, 1), pc.shift_left(_byte(word, 0), pa.scalar(8, _U32)))
        out = _final(pc.bit_wise_xor(_seeded(n), _k(tail)), 2)
    elif base == "int":  # four big-endian bytes: one block
        out = _final(_block(_seeded(n), _swapped(pc.cast(pc.cast(values, pa.int32()), _U32, safe=False))), 4)
    elif base == "bigint":  # eight big-endian bytes: the high word's block, then the low word's
        word = pc.cast(pc.cast(values, pa.int64()), pa.uint64(), safe=False)
        high = pc.cast(pc.shift_right(word, pa.scalar(32, pa.uint64())), _U32)
        low = pc.cast(pc.bit_wise_and(word, pa.scalar(0xFFFFFFFF, pa.uint64())), _U32)
        out = _final(_block(_block(_seeded(n), _swapped(high)), _swapped(low)), 8)
    else:
        raise ValueError(f"no Hive hash for bucket column type {base}")
    return pc.fill_null(out, pa.scalar(0, _U32))


def bucket_ids(columns: Sequence[pa.Array], types: Sequence[str], count: int) -> pa.Array:
    """The bucket of each row whose bucket columns hold ``columns`` (of the base ``types``):
    ``h = 31 * h + hash(value)`` over the columns, then ``(h & INT_MAX) % count``, as Hive's
    ``ObjectInspectorUtils.getBucketNumber`` (bucketing_version 2)."""
    n = len(columns[0]) if columns else 0
    h = pa.array([0] * n, _U32)
    for values, base in zip(columns, types):
        h = pc.add(pc.multiply(h, pa.scalar(31, _U32)), _field_hashes(values, base))
    h = pc.bit_wise_and(h, pa.scalar(0x7FFFFFFF, _U32))
    rest = pc.subtract(h, pc.multiply(pc.divide(h, pa.scalar(count, _U32)), pa.scalar(count, _U32)))
    return pc.cast(rest, pa.int32())


def _by_value() -> None:
    """This module and ``catalog.buckets`` (the only hivepark code a worker's function runs) are
    pickled by value, so that an executor needs pyarrow (as any Arrow UDF does), not hivepark."""
    from pyspark import cloudpickle

    from hivepark.catalog import buckets as hash_module

    for module in (sys.modules[__name__], hash_module):
        cloudpickle.register_pickle_by_value(module)


_ARROW_TYPES = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
                pa.string(): "string", pa.large_string(): "string", pa.date32(): "date", pa.bool_(): "boolean"}


def row_buckets() -> Callable[..., pa.Array]:
    """The function Spark's Python workers run, ``f(count, c1, ...)``: each row's bucket of
    ``count`` by Hive's hash of the columns, their types read from the Arrow arrays (columns of
    :data:`HASHED_TYPES`: a write's bucket columns, checked by :func:`unwritable`; a
    TABLESAMPLE's, checked in sql/; a CHAR given without its trailing spaces, as
    ``catalog.buckets.hashed_input`` gives it)."""
    _by_value()

    def buckets(count: pa.Array, *arrays: pa.Array) -> pa.Array:
        n = count[0].as_py() if len(count) else 1
        return bucket_ids(arrays, [_ARROW_TYPES[a.type] for a in arrays], n)

    return buckets


def name_staged(leaves: Sequence[str]) -> int:
    """Gives each file Spark staged in a partition's staging directory (one of ``leaves``) under
    ``hivepark_bucket=N`` its Hive name in that directory; returns how many files."""
    named = 0
    for leaf in leaves:
        for sub in fs.list_files(leaf):
            name = sub.path.rstrip("/").rsplit("/", 1)[-1]
            if not (sub.is_dir and name.startswith(BUCKET_COL + "=")):
                continue
            bucket = int(name.split("=", 1)[1])
            for i, f in enumerate(sorted(e.path for e in fs.list_files(sub.path) if not e.is_dir)):
                fs.move(f, f"{leaf.rstrip('/')}/{file_name(bucket, i)}")
                named += 1
            fs.delete_dir(sub.path)
    return named
