"""Hive's path rules (FileUtils.escapePathName / makePartName) and warehouse locations."""

from __future__ import annotations

import pytest

from hivepark.errors import UserInputError
from hivepark.layout import (
    DEFAULT_PARTITION_NAME,
    MAX_NAME_BYTES,
    check_part_value,
    database_location,
    escape_path_name,
    is_within,
    make_part_name,
    parse_part_name,
    partition_path,
    table_location,
    unescape_path_name,
)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a/b", "a%2Fb"),
        ("14:13:12", "14%3A13%3A12"),
        ("a b", "a b"),
        ("2008-04-08", "2008-04-08"),
        ("%", "%25"),
        ("\n\t\x00\x1f\x7f", "%0A%09%00%1F%7F"),
        ("\"#%'*/:=?\\{[]^", "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5E"),
        ("<>|}~!@$&()+,;`", "<>|}~!@$&()+,;`"),
        ("..", ".."),
        ("été 東京", "été 東京"),
    ],
)
def test_escape_matches_hive(raw: str, escaped: str) -> None:
    assert escape_path_name(raw) == escaped
    assert unescape_path_name(escaped) == raw


def test_null_and_empty_become_the_default_partition() -> None:
    assert escape_path_name(None) == DEFAULT_PARTITION_NAME == "__HIVE_DEFAULT_PARTITION__"
    assert escape_path_name("") == DEFAULT_PARTITION_NAME
    assert escape_path_name(None, "DFLT") == "DFLT"
    assert make_part_name(["a", "b"], [None, ""]) == (
        "a=__HIVE_DEFAULT_PARTITION__/b=__HIVE_DEFAULT_PARTITION__"
    )


def test_escape_uses_uppercase_hex() -> None:
    assert escape_path_name("?") == "%3F"
    assert unescape_path_name("%3f") == "?"  # either case reads back


@pytest.mark.parametrize("text", ["100%", "%", "%2", "%zz", "%g0", "a%%41"])
def test_unescape_copies_malformed_sequences(text: str) -> None:
    expected = {"a%%41": "a%A"}.get(text, text)
    assert unescape_path_name(text) == expected


def test_make_part_name() -> None:
    assert make_part_name(["ds", "hr"], ["2008-04-08", "11"]) == "ds=2008-04-08/hr=11"
    assert make_part_name(["DS"], ["a/b=c"]) == "ds=a%2Fb%3Dc"
    assert make_part_name(["value"], [" "]) == "value= "
    assert make_part_name([], []) == ""


def test_make_part_name_rejects_mismatched_lengths() -> None:
    with pytest.raises(UserInputError, match="2 columns"):
        make_part_name(["ds", "hr"], ["x"])


def test_parse_part_name() -> None:
    assert parse_part_name("ds=2008-04-08/hr=11") == [("ds", "2008-04-08"), ("hr", "11")]
    assert parse_part_name("ds=__HIVE_DEFAULT_PARTITION__") == [("ds", None)]
    assert parse_part_name("ds=a%2Fb%3Dc/x=") == [("ds", "a/b=c"), ("x", "")]
    assert parse_part_name("") == []
    assert parse_part_name("/ds=1/") == [("ds", "1")]


@pytest.mark.parametrize("name", ["ds", "ds=1/hr", "=1", "ds=1//hr=2"])
def test_parse_part_name_rejects_malformed(name: str) -> None:
    with pytest.raises(UserInputError, match="column=value"):
        parse_part_name(name)


def test_check_part_value_limit() -> None:
    check_part_value("c", "x" * (MAX_NAME_BYTES - 2))
    with pytest.raises(UserInputError) as info:
        check_part_value("c", "x" * (MAX_NAME_BYTES - 1))
    message = str(info.value)
    assert "'c'" in message and "256 bytes" in message and "shorter" in message
    with pytest.raises(UserInputError, match="258 bytes"):  # '/' escapes to 3 bytes
        check_part_value("c", "/" * 85 + "x")
    with pytest.raises(UserInputError):
        check_part_value("c", "é" * 127)  # 2 UTF-8 bytes each


def test_partition_path_local_and_uri() -> None:
    assert partition_path("/wh/t", ["ds"], ["1"]) == "/wh/t/ds=1"
    assert partition_path("/wh/t/", ["ds"], ["../.."]) == "/wh/t/ds=..%2F.."
    assert partition_path("s3://bucket/x", ["ds", "hr"], ["a", None]) == (
        "s3://bucket/x/ds=a/hr=__HIVE_DEFAULT_PARTITION__"
    )
    with pytest.raises(UserInputError):
        partition_path("/wh/t", ["ds"], ["x" * 300])
    with pytest.raises(UserInputError, match="no location"):
        partition_path("", ["ds"], ["1"])


def test_table_and_database_locations() -> None:
    assert table_location("/wh", "default", "t") == "/wh/t"
    assert table_location("/wh/", "Sales", "Orders") == "/wh/sales.db/orders"
    assert table_location("s3://b/wh", "db", "t") == "s3://b/wh/db.db/t"
    assert database_location("/wh", "default") == "/wh"
    assert database_location("/wh", "x") == "/wh/x.db"
    for bad in ("", ".", ".."):
        with pytest.raises(UserInputError):
            table_location("/wh", "default", bad)


@pytest.mark.parametrize(
    ("parent", "child", "inside"),
    [
        ("/wh/t", "/wh/t", True),
        ("/wh/t", "/wh/t/ds=1", True),
        ("/wh/t/", "/wh/t/ds=1/", True),
        ("/wh/t", "/wh/t2", False),
        ("/wh/t", "/wh/t/../u", False),
        ("/wh/t", "/wh/t/./a/../b", True),
        ("/wh/t", "/wh", False),
        ("s3://b/t", "s3://b/t/x", True),
        ("s3://b/t", "s3://c/t/x", False),
        ("s3://b/t", "gs://b/t/x", False),
        ("s3://b", "s3://b/t", True),
        ("/", "/anything", True),
        ("rel", "rel/x", True),
        ("rel", "other", False),
    ],
)
def test_is_within(parent: str, child: str, inside: bool) -> None:
    assert is_within(parent, child) is inside
