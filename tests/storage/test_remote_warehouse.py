"""Warehouses on ``s3a://`` and ``hdfs://`` (issue 14, item 7): the URI goes to Spark as given,
and when this (the driver's) process cannot open that file system the user gets one error that
says why and what to install or set, and nothing is created anywhere (no stray local directory
named ``s3a:``, no metastore file)."""

from __future__ import annotations

import socket
import subprocess

import pytest

import hivepark
from cli_command import hivepark_command
from hivepark.errors import FileSystemError, UserInputError
from hivepark.storage import fs


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns: nothing listens there


@pytest.fixture
def no_s3(monkeypatch, tmp_path):
    """An S3 endpoint on loopback where nothing listens, credentials given: the driver's S3
    client fails to connect (as with a wrong endpoint or a store that is down)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "hivepark-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hivepark-test-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_s3a_warehouse_that_the_driver_cannot_reach_is_one_clear_error(no_s3):
    meta = no_s3 / "meta.db"
    with pytest.raises(FileSystemError) as err:
        hivepark.connect("s3a://hivepark-bucket/wh", metastore=f"sqlite:///{meta}")
    text = str(err.value)
    assert "s3a://hivepark-bucket/wh" in text and "Could not connect" in text
    assert "AWS_ENDPOINT_URL" in text and "hadoop-aws" in text and "Nothing was created" in text
    assert "hivepark-test-secret" not in text
    assert list(no_s3.iterdir()) == []  # no metastore file, no local "s3a:" directory


def test_hdfs_warehouse_without_hadoops_client_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileSystemError) as err:
        hivepark.connect(f"hdfs://127.0.0.1:{_closed_port()}/wh", metastore=f"sqlite:///{tmp_path}/m.db")
    text = str(err.value)
    assert "hdfs://127.0.0.1" in text and "HADOOP_HOME" in text and "libhdfs" in text
    assert text.count("dlopen") <= 1  # the loader's list of every path it tried is not repeated
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_scheme_names_the_ones_that_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileSystemError, match="Unrecognized filesystem type.*s3a://, hdfs://"):
        hivepark.connect("nosuchfs://x/wh", metastore=f"sqlite:///{tmp_path}/m.db")
    assert list(tmp_path.iterdir()) == []


def test_a_remote_warehouse_needs_a_metastore_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserInputError, match="not on a local disk.*metastore URL"):
        hivepark.connect("s3a://hivepark-bucket/wh")
    assert list(tmp_path.iterdir()) == []


def test_remote_uris_go_to_spark_as_given():
    for uri in ("s3a://bucket/wh/t/ds=1/part-0.parquet", "hdfs://nn:8020/wh/t", "gs://b/wh"):
        assert fs.to_spark_path(fs.normalize(uri)) == uri
    assert fs.normalize("s3a://bucket/wh/") == "s3a://bucket/wh"


@pytest.mark.spark  # the hivepark command starts Spark
def test_the_cli_prints_the_same_one_line_error_and_creates_nothing(no_s3):
    proc = subprocess.run([*hivepark_command(), "--warehouse", "s3a://hivepark-bucket/wh", "--metastore",
                           f"sqlite:///{no_s3}/meta.db", "-e", "SHOW TABLES"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "Cannot open the warehouse file system of s3a://hivepark-bucket/wh" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert list(no_s3.iterdir()) == []
