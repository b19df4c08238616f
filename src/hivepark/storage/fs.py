"""One file-system layer (pyarrow.fs) so local, hdfs:// and s3:// warehouses work alike."""

from __future__ import annotations

import errno
import os
import time
import unicodedata
import urllib.parse
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow.fs as pafs

from hivepark.errors import FileSystemError, first_line

T = TypeVar("T")


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int
    is_dir: bool
    mtime_ns: int | None = None  # when the file system gives it


# Hadoop's names for S3 (what Spark reads and writes) -> pyarrow's (what the driver lists and moves)
_ARROW_SCHEMES = {"s3a": "s3", "s3n": "s3"}
_REMOTE: dict[str, tuple[pafs.FileSystem, str]] = {}  # "scheme://authority" -> (fs, its root path)


def _is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def strip_file_scheme(path: str) -> str:
    """A ``file:`` URI as its path (``file:///x`` and ``file:/x``, as Hadoop writes it, are
    ``/x``; ``file:x`` is the relative path ``x``, never ``/x``); other paths and URIs unchanged.

    >>> strip_file_scheme("file:///w/t"), strip_file_scheme("file:/w/t"), strip_file_scheme("s3a://b/t")
    ('/w/t', '/w/t', 's3a://b/t')
    >>> strip_file_scheme("file:x/y")
    'x/y'
    """
    if not path.startswith("file:"):
        return path
    rest = path[len("file:"):]
    return "/" + rest.lstrip("/") if rest.startswith("/") else rest


def _local_path(path: str) -> str:
    """A local path or ``file:`` URI as an absolute path."""
    return os.path.abspath(strip_file_scheme(path))


def _uri_parts(uri: str) -> tuple[str, str, str]:
    """``(scheme, authority, key)`` of ``scheme://authority/key``."""
    scheme, _, rest = uri.partition("://")
    authority, _, key = rest.partition("/")
    return scheme, authority, key


def _split(path: str) -> tuple[pafs.FileSystem, str]:
    if _is_remote(path):
        return _remote(path)
    return pafs.LocalFileSystem(), _local_path(path)


def _remote(uri: str) -> tuple[pafs.FileSystem, str]:
    """A remote URI's pyarrow file system (made once per scheme and authority: opening one may
    ask the network, S3's region) and the path within it. The URI itself stays as given for
    Spark (``s3a://`` is Hadoop's S3 connector; pyarrow calls it ``s3://``)."""
    scheme, authority, key = _uri_parts(uri)
    root = f"{scheme.lower()}://{authority}"
    if root not in _REMOTE:
        arrow_root = f"{_ARROW_SCHEMES.get(scheme.lower(), scheme.lower())}://{authority}/"
        try:
            fs, base = pafs.FileSystem.from_uri(arrow_root)
            fs.get_file_info(base or "/")  # credentials, endpoint, Hadoop's library: fail here, once
        except Exception as e:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
            raise FileSystemError(_cannot_open(uri, scheme.lower(), e)) from None
        _REMOTE[root] = (fs, base)
    fs, base = _REMOTE[root]
    return fs, (base.rstrip("/") + "/" + key).rstrip("/") if key else (base or "/")


def _cannot_open(uri: str, scheme: str, e: BaseException) -> str:
    reason = first_line(e)[:300]  # Hadoop's loader lists every libjvm path it tried: the first line says it
    if scheme in ("s3", "s3a", "s3n"):
        fix = ("give the driver S3 credentials and endpoint (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
               "AWS_REGION, AWS_ENDPOINT_URL for a store other than AWS), and Spark the s3a connector "
               "(--packages org.apache.hadoop:hadoop-aws:<Spark's Hadoop version>)")
    elif scheme in ("hdfs", "viewfs"):
        fix = ("install Hadoop's client on the driver (JAVA_HOME, HADOOP_HOME with lib/native/libhdfs.so, "
               "and CLASSPATH=$(hadoop classpath --glob)) and check the name node's address")
    else:
        fix = ("use a local path, file://, s3a://, hdfs://, gs:// or abfs:// with that file system's "
               "credentials on the driver")
    return (f"Cannot open the warehouse file system of {uri} from this process: {reason}. hivepark's "
            f"driver lists, moves and deletes the warehouse's files itself (with pyarrow), so it must "
            f"reach the same file system as Spark's executors: {fix}. Nothing was created.")


def arrow_filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system of ``path`` and the path within it."""
    return _split(path)


def normalize(path: str) -> str:
    """Absolute local path, or the URI unchanged for remote file systems (the path
    :func:`_split` gives, without making a file system: a scan of list-bucketed partitions
    normalizes each directory of each partition)."""
    if _is_remote(path):
        return path.rstrip("/")
    return _local_path(path).rstrip("/") or "/"


def exists(path: str) -> bool:
    fs, p = _split(path)
    return fs.get_file_info(p).type != pafs.FileType.NotFound


def all_exist(paths: Sequence[str]) -> bool:
    """Whether every one of ``paths`` exists, asked of the file system in one call per file
    system (pyarrow's list form of ``get_file_info``)."""
    by_fs: dict[int, tuple[pafs.FileSystem, list[str]]] = {}
    for path in paths:
        pfs, p = _split(path)
        by_fs.setdefault(id(pfs) if _is_remote(path) else 0, (pfs, []))[1].append(p)
    return all(info.type != pafs.FileType.NotFound
               for pfs, ps in by_fs.values() for info in pfs.get_file_info(ps))


def modified_ns(path: str) -> int | None:
    """When ``path`` last changed (a directory: an entry added, removed or renamed in it), in
    nanoseconds, if the file system says (an object store's directory does not); None if missing."""
    fs, p = _split(path)
    info = fs.get_file_info(p)
    return None if info.type == pafs.FileType.NotFound else info.mtime_ns


def is_file(path: str) -> bool:
    fs, p = _split(path)
    return bool(fs.get_file_info(p).type == pafs.FileType.File)


def makedirs(path: str) -> None:
    fs, p = _split(path)
    fs.create_dir(p, recursive=True)


def stamps(path: str) -> tuple[tuple[str, int, int | None], ...]:
    """What ``path`` holds now, at any depth: each data file's path, size and modification
    time, sorted; compared with an earlier call's, it tells whether another tool wrote,
    appended to or deleted a file there."""
    return tuple(sorted((e.path, e.size, e.mtime_ns) for e in list_files(path, recursive=True)))


def list_files(path: str, recursive: bool = False) -> list[FileEntry]:
    """Data files under ``path`` (hidden ``.``/``_`` names skipped, like Hive and Spark)."""
    fs, p = _split(path)
    info = fs.get_file_info(p)
    if info.type == pafs.FileType.NotFound:
        return []
    if info.type == pafs.FileType.File:
        return [FileEntry(p, info.size or 0, False, info.mtime_ns)]
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
            out.append(FileEntry(f.path, f.size or 0, False, f.mtime_ns))
    return out


def _entries(path: str, recursive: bool = False) -> tuple[pafs.FileSystem, list[pafs.FileInfo]]:
    """Everything under ``path``, hidden names included; none when it does not exist."""
    fs, p = _split(path)
    try:
        return fs, fs.get_file_info(pafs.FileSelector(p, recursive=recursive))
    except (FileNotFoundError, NotADirectoryError):
        return fs, []


def list_dirs_starting(path: str, prefix: str) -> list[str]:
    """The directories directly under ``path`` whose name starts with ``prefix`` (hidden names
    included: staging directories are hidden)."""
    return [_join(path, f.base_name) for f in _entries(path)[1]
            if f.type == pafs.FileType.Directory and f.base_name.startswith(prefix)]


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
    """Lines of a text file as Hadoop's LineReader (Hive's and Spark's text reader) ends them:
    at ``\\n``, ``\\r`` or ``\\r\\n``; the last one counted even without its end."""
    fs, p = _split(path)
    lines, last = 0, b"\n"
    with fs.open_input_stream(p) as f:
        while chunk := f.read(1 << 20):
            lines += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
            if last == b"\r" and chunk[:1] == b"\n":  # a \r\n split between two reads
                lines -= 1
            last = chunk[-1:]
    return lines + (last not in (b"\n", b"\r"))


def delete_file(path: str) -> None:
    """Deletes a file; one that is not there, or cannot be there (a file where a parent
    directory would be, a name the file system refuses as too long: a write that failed
    there is being undone), is nothing to do."""
    fs, p = _split(path)
    try:
        fs.delete_file(p)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            raise


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


def delete_markers(directory: str) -> None:
    """Deletes Spark's and Hadoop's marker files (``_SUCCESS``, every ``.<name>.crc``) directly
    in ``directory``: what a Hive reader of it finds is the rows alone."""
    fs, entries = _entries(directory)
    for e in entries:
        if e.type == pafs.FileType.File and _is_marker(e.base_name):
            fs.delete_file(e.path)


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


#: file-system calls at once in :func:`each_at_once` (a thread each; the GIL is released while they wait)
PARALLEL_CALLS = 8


def each_at_once(fn: Callable[[T], object], items: Sequence[T]) -> None:
    """``fn`` of every item, :data:`PARALLEL_CALLS` at a time: for file-system work on many
    directories (a DROP of thousands of partitions), whose calls mostly wait on the disk or
    the network, not on Python. Every item is tried; the first failure (in ``items``' order) is
    raised once all are done."""
    if len(items) < 2:
        for item in items:
            fn(item)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(PARALLEL_CALLS, len(items)), thread_name_prefix="hivepark-fs") as pool:
        futures = [pool.submit(fn, item) for item in items]
    for f in futures:
        f.result()


def delete_files_and_prune(directory: str, paths: Sequence[str]) -> bool:
    """Deletes ``paths`` and each one's checksum ``.<name>.crc``, then ``directory`` as
    :func:`prune_empty_dirs` does; returns whether ``directory`` is gone. The files directly in
    ``directory`` are found in one listing of it, so a name that is not there (most files have
    no checksum) costs no call, and a local directory left with nothing but markers is removed
    with ``rmdir`` (which fails, keeping it, if another statement's file just arrived) rather
    than a second listing: a DROP of 20,000 partitions makes a few calls a partition. An object
    store, which has no such rmdir, is listed again just before (:func:`prune_empty_dirs`)."""
    pfs, p = _split(directory)
    try:
        infos = pfs.get_file_info(pafs.FileSelector(p))
    except (FileNotFoundError, NotADirectoryError):
        infos = None
    present = {i.base_name: i for i in infos or ()}
    inside = directory.rstrip("/")
    for f in paths:
        head, _, name = f.rpartition("/")
        if infos is not None and (head == inside or normalize(head) == normalize(directory)):
            for n in (name, f".{name}.crc"):
                if present.pop(n, None) is not None:
                    delete_file(f"{head}/{n}")
        else:  # in a subdirectory (list bucketing) or elsewhere: asked for by name
            delete_file(f)
            delete_file(f"{head}/.{name}.crc")
    if infos is None:
        return True
    if any(i.type == pafs.FileType.Directory for i in present.values()):
        return prune_empty_dirs(directory)
    if any(not _is_marker(n) for n in present):
        return False
    if _is_remote(directory):  # no rmdir that fails on a file just arrived: a listing right before
        return prune_empty_dirs(directory)
    for n in present:
        delete_file(f"{inside}/{n}")
    try:
        os.rmdir(p)
    except FileNotFoundError:
        pass
    except OSError as e:
        if e.errno in (errno.ENOTEMPTY, errno.EEXIST):  # something arrived since the listing: it stays
            return False
        raise
    return True


def write_text(path: str, text: str) -> None:
    fs, p = _split(path)
    fs.create_dir(p.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(p) as out:
        out.write(text.encode())


_TEMPORARY = ".tmp"  # write_text_atomic's hidden temporary: ".<name>.<8 hex digits>.tmp"


def write_text_atomic(path: str, text: str) -> None:
    """``path`` holds either its old content or ``text``, never a part of it: written to a
    hidden temporary file beside it, then renamed over it."""
    fs, p = _split(path)
    directory, name = p.rsplit("/", 1)
    fs.create_dir(directory, recursive=True)
    tmp = f"{directory}/.{name}.{uuid.uuid4().hex[:8]}{_TEMPORARY}"
    with fs.open_output_stream(tmp) as out:
        out.write(text.encode())
    fs.move(tmp, p)


def delete_stale_temporaries(directory: str, older_than: float) -> int:
    """Deletes the temporary files :func:`write_text_atomic` left under ``directory`` (at any
    depth) when its process died between writing and renaming, those last changed more than
    ``older_than`` seconds ago: a live writer's exists for the moment of one write. Returns
    how many it deleted."""
    fs, infos = _entries(directory, recursive=True)
    cutoff = (time.time() - older_than) * 1e9
    deleted = 0
    for f in infos:
        if (f.type == pafs.FileType.File and f.base_name.startswith(".") and f.base_name.endswith(_TEMPORARY)
                and f.mtime_ns is not None and f.mtime_ns < cutoff):
            try:
                fs.delete_file(f.path)
                deleted += 1
            except FileNotFoundError:
                pass  # another process's recovery deleted it first
    return deleted


def read_text(path: str) -> str:
    fs, p = _split(path)
    with fs.open_input_stream(p) as f:
        return f.read().decode()


def to_spark_path(path: str) -> str:
    """A path Spark reads unambiguously (``file:`` URI for local paths)."""
    return path if _is_remote(path) else "file://" + _local_path(path)


# Characters java.net.URI leaves as they are in a path (RFC 2396's unreserved and punct, "/"
# and "@"); every other US-ASCII character is quoted, "%" included
_URI_PATH_SAFE = "/@!*'();:$&+=,"


def _uri_quoted(ch: str) -> str:
    """One character of a path as java.net.URI's multi-argument constructors write it: other
    than US-ASCII, it is kept unless it is a control or space character."""
    if ord(ch) > 0x9F and unicodedata.category(ch) not in ("Zs", "Zl", "Zp", "Cs"):
        return ch
    return urllib.parse.quote(ch.encode("utf-8", "surrogatepass"), safe="")


def spark_file_uri(path: str) -> str:
    """A file's path as Spark gives it in ``_metadata.file_path`` (Hadoop's
    ``Path.toUri().toString()``). Best effort: a path written otherwise (an unusual file system)
    simply never equals one Spark gives, and a percent-encoding never makes two different paths
    equal, so a lookup by this form is exact or misses.

    >>> spark_file_uri("/w/t/ds=a%20b c/x=1/f.parquet")
    'file:/w/t/ds=a%2520b%20c/x=1/f.parquet'
    >>> spark_file_uri("s3a://bucket/t/ds=é/f.parquet")
    's3a://bucket/t/ds=é/f.parquet'
    """
    if _is_remote(path):
        scheme, authority, key = _uri_parts(path)
        prefix, tail = f"{scheme}://{authority}", "/" + key if key else ""
    else:
        prefix, tail = "file:", normalize(path)
    if tail.isascii():
        return prefix + urllib.parse.quote(tail, safe=_URI_PATH_SAFE)
    return prefix + "".join(urllib.parse.quote(ch, safe=_URI_PATH_SAFE) if ch.isascii()
                            else _uri_quoted(ch) for ch in tail)
