"""Hive's bucket of a row (bucketing_version 2), checked against Hive's own output; Spark's hash of a
row, checked against Spark's."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from hivepark.catalog.buckets import bucket_of_file, hive_bucket, murmur3_32, spark_hash
from hivepark.types import HiveType
from spark_cluster import PROPERTY_EXAMPLES

# Hive's bucket2.q.out: `SELECT * FROM bucket2_1 TABLESAMPLE (BUCKET 1 OUT OF 2)` of src's keys written
# into a table CLUSTERED BY (key INT) INTO 2 BUCKETS: the keys Hive put in bucket 0
HIVE_BUCKET_0_OF_2 = {
    10, 105, 113, 116, 119, 126, 133, 134, 137, 146, 149, 153, 156, 157, 158, 162, 163, 164, 165, 169, 17, 177,
    178, 181, 187, 19, 190, 191, 195, 197, 199, 2, 20, 201, 202, 208, 214, 216, 221, 226, 229, 233, 237, 238, 239,
    244, 248, 249, 252, 255, 256, 260, 266, 27, 272, 284, 286, 287, 289, 291, 292, 30, 307, 308, 310, 311, 315, 316,
    317, 325, 327, 332, 336, 338, 339, 341, 342, 344, 348, 351, 353, 360, 362, 364, 365, 368, 369, 377, 378, 384,
    386, 392, 393, 394, 396, 397, 399, 402, 404, 407, 409, 41, 411, 414, 417, 419, 421, 427, 43, 430, 432, 435,
    437, 443, 444, 446, 449, 452, 453, 454, 458, 459, 463, 466, 467, 472, 478, 479, 480, 482, 483, 484, 485, 490,
    491, 495, 497, 498, 51, 54, 57, 58, 64, 65, 67, 69, 70, 77, 80, 83, 84, 85, 86, 90, 96, 97, 98}
# src's other keys (kv1.txt), which Hive's sample left out: bucket 1
HIVE_BUCKET_1_OF_2 = {0, 4, 5, 8, 9, 11, 12, 15, 18, 24, 26, 28, 33, 34, 35, 37, 42, 44, 47, 53}


def test_ints_fall_in_the_buckets_hive_put_them_in():
    t = [HiveType.parse("int")]
    assert {k for k in HIVE_BUCKET_0_OF_2 if hive_bucket([k], t, 2) != 0} == set()
    assert {k for k in HIVE_BUCKET_1_OF_2 if hive_bucket([k], t, 2) != 1} == set()


def test_murmur3_is_the_reference_function():
    # MurmurHash3_x86_32's published vectors (as signed Java ints)
    def signed(x: int) -> int:
        return x - (1 << 32) if x & 0x80000000 else x

    assert murmur3_32(b"", 0) == 0 and murmur3_32(b"", 1) == signed(0x514E28B7)
    assert murmur3_32(b"\x00\x00\x00\x00", 0) == signed(0x2362F9DE)
    assert murmur3_32(b"hello", 0) == signed(0x248BFA47)
    assert murmur3_32(b"Hello, world!", 1234) == signed(0xFAF6CDB3)
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog", 0x9747B28C) == signed(0x2FA826CD)


def test_types_and_files():
    s, b = HiveType.parse("string"), HiveType.parse("bigint")
    assert hive_bucket(["a"], [s], 4) == (murmur3_32(b"a") & 0x7FFFFFFF) % 4
    assert hive_bucket([7, "x"], [b, s], 8) == ((31 * murmur3_32((7).to_bytes(8, "big")) + murmur3_32(b"x"))
                                               & 0x7FFFFFFF) % 8
    assert hive_bucket([None], [s], 4) == 0
    assert hive_bucket(["7"], [HiveType.parse("int")], 4) is None  # a string for an INT column: not decided here
    assert hive_bucket([1.5], [HiveType.parse("double")], 4) is None
    # Hive's names (an extension or hivepark's commit after a dot too); Spark's are no bucket's
    assert [bucket_of_file(n) for n in ("000000_0", "000012_0_copy_3", "000001_0.orc", "000002_0.20261127_ab12",
                                        "part-00000.c000", "x000001_0")] == [0, 12, 1, 2, None, None]


_KEY_TEXT = st.one_of(st.none(), st.text(max_size=14))
_INTS = st.one_of(st.none(), st.integers(-2**31, 2**31 - 1))


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(_KEY_TEXT, _KEY_TEXT, _INTS), min_size=1, max_size=40))
def test_spark_hash_is_the_hash_spark_sends_rows_by(spark, rows):
    # the hash a dynamic write is sized by (partition texts and a directory or bucket number),
    # computed in Python, is the one Spark's repartition by those columns uses: Spark's own hash()
    from pyspark.sql import functions as F

    df = spark.createDataFrame(rows, "a STRING, b STRING, c INT")
    got = [tuple(r) for r in df.select(F.hash("a", "b", "c"), F.hash("a"), F.hash("c")).collect()]
    assert got == [(spark_hash(list(r)), spark_hash([r[0]]), spark_hash([r[2]])) for r in rows]
