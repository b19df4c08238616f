"""One file-system layer (pyarrow.fs) so local, hdfs:// and s3:// warehouses work alike."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int
    is_dir: bool


def _split(path: str) -> tuple[pafs.FileSystem, str]:
    if "://" in path and not path.startswith("file://"):
        return pafs.FileSystem.from_uri(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    return pafs.LocalFileSystem(), os.path.abspath(path)


def arrow_filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system of ``path`` and the path within it."""
    return _split(path)


def normalize(path: str) -> str:
    """Absolute local path, or the URI unchanged for remote file systems."""
    if "://" in path and not path.startswith("file://"):
        return path.rstrip("/")
    return _split(path)[1].rstrip("/") or "/"


def exists(path: str) -> bool:
    fs, p = _split(path)
    return fs.get_file_info(p).type != pafs.FileType.NotFound


def is_file(path: str) -> bool:
    fs, p = _split(path)
    return bool(fs.get_file_info(p).type == pafs.FileType.File)


def makedirs(path: str) -> None:
    fs, p = _split(path)
    fs.create_dir(p, recursive=True)


def list_files(path: str, recursive: bool = False) -> list[FileEntry]:
    """Data files under ``path`` (hidden ``.``/``_`` names skipped, like Hive and Spark)."""
    fs, p = _split(path)
    info = fs.get_file_info(p)
    if info.type == pafs.FileType.NotFound:
        return []
    if info.type == pafs.FileType.File:
        return [FileEntry(p, info.size or 0, False)]
    sel = pafs.FileSelector(p, recursive=False)
    out: list[FileEntry] = []
    for f in fs.get_file_info(sel):
        if f.base_name.startswith((".", "_")):
            continue
        if f.type == pafs.FileType.Directory:
            if recursive:
                out += list_files(f.path if "://" not in path else _join(path, f.base_name), True)
            else:
                out.append(FileEntry(f.path, 0, True))
        else:
            out.append(FileEntry(f.path, f.size or 0, False))
    return out


def _join(a: str, b: str) -> str:
    return a.rstrip("/") + "/" + b


def move(src: str, dst: str) -> None:
    fs, s = _split(src)
    _, d = _split(dst)
    fs.create_dir(os.path.dirname(d) if "://" not in dst else d.rsplit("/", 1)[0], recursive=True)
    fs.move(s, d)


def copy(src: str, dst: str) -> None:
    """Copies one file (across file systems too), creating the target's directory."""
    sfs, s = _split(src)
    dfs, d = _split(dst)
    dfs.create_dir(os.path.dirname(d) if "://" not in dst else d.rsplit("/", 1)[0], recursive=True)
    pafs.copy_files(s, d, source_filesystem=sfs, destination_filesystem=dfs)


def open_input(path: str) -> Any:
    """A readable, seekable binary file (for footers: parquet, orc)."""
    fs, p = _split(path)
    return fs.open_input_file(p)


def count_lines(path: str) -> int:
    """Lines of a text file, the last one counted even without its newline."""
    fs, p = _split(path)
    lines, last = 0, b"\n"
    with fs.open_input_stream(p) as f:
        while chunk := f.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def delete_file(path: str) -> None:
    fs, p = _split(path)
    try:
        fs.delete_file(p)
    except FileNotFoundError:
        pass


def delete_dir(path: str) -> None:
    fs, p = _split(path)
    try:
        fs.delete_dir(p)
    except FileNotFoundError:
        pass


def delete_dir_if_empty(path: str) -> None:
    fs, p = _split(path)
    try:
        if not fs.get_file_info(pafs.FileSelector(p)):
            fs.delete_dir(p)
    except (FileNotFoundError, OSError):
        pass


_MARKERS = ("_SUCCESS",)  # files Spark and Hadoop leave beside data, and their checksums


def _is_marker(name: str) -> bool:
    return name in _MARKERS or (name.startswith(".") and name.endswith(".crc"))


def prune_empty_dirs(path: str) -> bool:
    """Deletes the directories under ``path``, and ``path`` itself, that hold nothing but
    Spark's and Hadoop's marker files (``_SUCCESS``, ``.<name>.crc``); returns whether
    ``path`` is gone. A directory holding anything else (a data file, a hidden staging
    directory of a statement in flight) stays, with its parents."""
    fs, p = _split(path)

    def prune(d: str) -> bool:
        try:
            entries = fs.get_file_info(pafs.FileSelector(d))
        except FileNotFoundError:
            return True
        keep = False
        for e in entries:
            if e.type == pafs.FileType.Directory:
                keep |= not prune(e.path)
            elif not _is_marker(e.base_name):
                keep = True
        if keep:
            return False
        fs.delete_dir(d)
        return True

    return prune(p)


def write_text(path: str, text: str) -> None:
    fs, p = _split(path)
    fs.create_dir(p.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(p) as out:
        out.write(text.encode())


def write_text_atomic(path: str, text: str) -> None:
    """``path`` holds either its old content or ``text``, never a part of it: written to a
    hidden temporary file beside it, then renamed over it."""
    fs, p = _split(path)
    directory, name = p.rsplit("/", 1)
    fs.create_dir(directory, recursive=True)
    tmp = f"{directory}/.{name}.{uuid.uuid4().hex[:8]}.tmp"
    with fs.open_output_stream(tmp) as out:
        out.write(text.encode())
    fs.move(tmp, p)


def read_text(path: str) -> str:
    fs, p = _split(path)
    with fs.open_input_stream(p) as f:
        return f.read().decode()


def to_spark_path(path: str) -> str:
    """A path Spark reads unambiguously (``file:`` URI for local paths)."""
    if "://" in path:
        return path
    return "file://" + os.path.abspath(path)
