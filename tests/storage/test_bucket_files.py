"""The bucket hivepark's writes put each row in (storage/bucket_files.py, over Arrow arrays) is the
one Hive's hash gives (catalog/buckets.hive_bucket, checked against Hive's own output in
tests/catalog/test_buckets.py). Pure: no JVM."""

from __future__ import annotations

import datetime

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.test_buckets import HIVE_BUCKET_0_OF_2, HIVE_BUCKET_1_OF_2
from hivepark.catalog.buckets import hive_bucket
from hivepark.storage.bucket_files import bucket_ids, file_name, row_buckets
from hivepark.types import HiveType

ARROW = {"tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
         "string": pa.string(), "varchar": pa.string(), "date": pa.date32(), "boolean": pa.bool_()}
BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


def _values(base: str) -> st.SearchStrategy:
    if base in BITS:
        n = BITS[base]
        edges = st.sampled_from([0, 1, -1, -(1 << (n - 1)), (1 << (n - 1)) - 1])
        return st.none() | edges | st.integers(-(1 << (n - 1)), (1 << (n - 1)) - 1)
    if base == "date":
        return st.none() | st.dates()
    if base == "boolean":
        return st.none() | st.booleans()
    return st.none() | st.text(max_size=40)  # several blocks and every tail length


@st.composite
def _rows(draw):
    types = draw(st.lists(st.sampled_from(sorted(ARROW)), min_size=1, max_size=3))
    rows = draw(st.lists(st.tuples(*[_values(t) for t in types]), min_size=1, max_size=40))
    return types, rows, draw(st.integers(1, 64))


@settings(max_examples=150, deadline=None)
@given(_rows())
def test_each_row_goes_to_the_bucket_hives_hash_gives(case):
    types, rows, count = case
    arrays = [pa.array([r[i] for r in rows], ARROW[t]) for i, t in enumerate(types)]
    hive = [HiveType.parse(t) for t in types]
    assert bucket_ids(arrays, types, count).to_pylist() == [hive_bucket(list(r), hive, count) for r in rows]


def test_strings_hash_alike_in_a_slice_of_a_batch_and_in_large_strings():
    """The string hash reads the array's own bytes and offsets: a slice (offsets not from 0) and a
    large_string array (64-bit offsets) give each row the bucket ``hive_bucket`` gives."""
    words = [None, "", "a", "abcd", "abcde", "ünïcødé ✓", "x" * 41, "tail3ab"]
    string_t = [HiveType.parse("string")]
    for array in (pa.array(words * 3).slice(5, 14), pa.array(words, pa.large_string()),
                  pa.array([None, None], pa.string())):
        assert bucket_ids([array], ["string"], 16).to_pylist() == \
            [hive_bucket([w], string_t, 16) for w in array.to_pylist()]


def test_ints_go_to_the_buckets_hive_wrote_them_to():
    keys = sorted(HIVE_BUCKET_0_OF_2 | HIVE_BUCKET_1_OF_2)
    got = dict(zip(keys, bucket_ids([pa.array(keys, pa.int32())], ["int"], 2).to_pylist()))
    assert {k for k, b in got.items() if b != (0 if k in HIVE_BUCKET_0_OF_2 else 1)} == set()


def test_a_date_hashes_as_the_int_of_its_days_and_a_boolean_as_one_or_zero():
    """Hive's hashCodeMurmur: DATE is ``putInt(getDays())`` hashed as an INT is, BOOLEAN the
    value itself (1 or 0)."""
    dates = [datetime.date(1970, 1, 1), datetime.date(2024, 2, 29), datetime.date(1969, 12, 31),
             datetime.date(1, 1, 1), datetime.date(9999, 12, 31)]
    days = [(d - datetime.date(1970, 1, 1)).days for d in dates]
    for count in (2, 7, 64):
        assert bucket_ids([pa.array(dates, pa.date32())], ["date"], count).to_pylist() == \
            bucket_ids([pa.array(days, pa.int32())], ["int"], count).to_pylist()
        assert [hive_bucket([d], [HiveType.parse("date")], count) for d in dates] == \
            [hive_bucket([n], [HiveType.parse("int")], count) for n in days]
    assert bucket_ids([pa.array([True, False, None])], ["boolean"], 64).to_pylist() == [1, 0, 0]


def test_file_names_are_hives():
    assert [file_name(0), file_name(3), file_name(123456), file_name(2, 1)] == \
        ["000000_0", "000003_0", "123456_0", "000002_0_copy_1"]


def test_the_workers_function_runs_where_hivepark_is_not_installed(tmp_path):
    """Spark's executors get the function by value: a Python with pyarrow and without hivepark
    (no site packages but pyarrow's directory) runs it, giving the rows' buckets."""
    import os
    import subprocess
    import sys

    from pyspark import cloudpickle

    pickled = tmp_path / "f.pickle"
    pickled.write_bytes(cloudpickle.dumps(row_buckets()))
    site = os.path.dirname(os.path.dirname(pa.__file__))
    script = (f"import sys; sys.path.insert(0, {site!r}); import pickle, pyarrow as pa\n"
              "try:\n    import hivepark\nexcept ImportError:\n    pass\nelse:\n    sys.exit('hivepark importable')\n"
              f"f = pickle.loads(open({str(pickled)!r}, 'rb').read())\n"
              "print(f(pa.array([8] * 3), pa.array([1, None, 70000], pa.int32()),\n"
              "        pa.array(['a', 'b', None])).to_pylist())")
    out = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    hive = [HiveType.parse("int"), HiveType.parse("string")]
    assert out.stdout.strip() == str([hive_bucket(r, hive, 8) for r in ([1, "a"], [None, "b"], [70000, None])])
