"""Counting a text file's rows (a TEXTFILE write's numRows) as its reader reads them."""

from __future__ import annotations

import pytest

from hivepark.storage import fs


@pytest.mark.parametrize(("data", "rows"), [
    (b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"a\r\nb\r\n", 2), (b"1,a\r2,b\r3,c\r", 3),
    (b"a\r\rb", 3), (b"\n\n", 2), (b"a\rb\nc\r\n", 3),
])
def test_lines_end_where_hadoops_line_reader_ends_them(tmp_path, data, rows):
    """Found by a hunt for bugs: a file of bare \\r line ends read as three rows (Hadoop's
    LineReader, which Spark's and Hive's text readers use, ends a line at \\n, \\r or \\r\\n) but its
    numRows was 1."""
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    assert fs.count_lines(str(path)) == rows


def test_a_crlf_split_between_two_reads_is_one_line_end(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * ((1 << 20) - 1) + b"\r\nnext\r\n")
    assert fs.count_lines(str(path)) == 2
