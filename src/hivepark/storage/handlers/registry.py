"""Finding a storage handler by name: built-in ones, then the ``hivepark.storage_handlers``
entry point group (``importlib.metadata``), so an installed package adds its own.

A name matches a handler's ``name`` or any of its ``aliases`` (Hive class names such as
``org.apache.hive.storage.jdbc.JdbcStorageHandler``), case-insensitively; an entry point
also matches by its own name.
"""

from __future__ import annotations

import importlib
import threading
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from hivepark.errors import SemanticError
from hivepark.storage.handlers.base import STORAGE_HANDLER_KEY, StorageHandler

if TYPE_CHECKING:
    from hivepark.catalog.models import Table

ENTRY_POINT_GROUP = "hivepark.storage_handlers"

# name -> "module:Class", loaded on first use (the JDBC handler imports sqlglot/sqlalchemy)
BUILTIN: dict[str, str] = {
    "jdbc": "hivepark.storage.handlers.jdbc:JdbcStorageHandler",
    "iceberg": "hivepark.storage.handlers.iceberg:IcebergStorageHandler",
}
BUILTIN_ALIASES: dict[str, str] = {
    "org.apache.hive.storage.jdbc.jdbcstoragehandler": "jdbc",
    "org.apache.iceberg.mr.hive.hiveicebergstoragehandler": "iceberg",
}

_lock = threading.Lock()
_registered: dict[str, type[StorageHandler]] = {}
_instances: dict[type[StorageHandler], StorageHandler] = {}


class UnknownStorageHandler(SemanticError):
    """No built-in, registered or installed handler has the name."""


def _load(target: str) -> type[StorageHandler]:
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return _check(obj, target)


def _check(cls: object, origin: str) -> type[StorageHandler]:
    if not (isinstance(cls, type) and issubclass(cls, StorageHandler)):
        raise UnknownStorageHandler(f"{origin} is not a hivepark StorageHandler subclass")
    return cls


def register_handler(cls: type[StorageHandler]) -> type[StorageHandler]:
    """Make a handler class known in this process (usable as a class decorator)."""
    _check(cls, repr(cls))
    with _lock:
        for key in (cls.name, *cls.aliases):
            _registered[key.lower()] = cls
    return cls


def _names(cls: type[StorageHandler]) -> set[str]:
    return {n.lower() for n in (cls.name, *cls.aliases)}


def handler_class(name: str) -> type[StorageHandler]:
    """The handler class ``name`` denotes.

    Raises:
        UnknownStorageHandler: the name is unknown; the message says how to add one.
    """
    key = name.strip().lower()
    with _lock:
        if key in _registered:
            return _registered[key]
    builtin = BUILTIN_ALIASES.get(key, key)
    if builtin in BUILTIN:
        return _load(BUILTIN[builtin])
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.lower() == key or ep.value.replace(":", ".").lower() == key:
            return _check(ep.load(), f"entry point {ep.name} = {ep.value}")
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
        except Exception:  # noqa: BLE001 - a broken third-party handler must not hide the others
            continue
        if isinstance(cls, type) and issubclass(cls, StorageHandler) and key in _names(cls):
            return cls
    known = sorted({*BUILTIN, *BUILTIN_ALIASES, *_registered,
                    *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))})
    raise UnknownStorageHandler(
        f"Unknown storage handler '{name}'. Known handlers: {', '.join(known)}. A third-party handler "
        f"is a hivepark.storage.handlers.StorageHandler subclass installed with an entry point in the "
        f"'{ENTRY_POINT_GROUP}' group (pip install the package that provides it), or registered with "
        "hivepark.storage.handlers.register_handler().")


def get_handler(name: str) -> StorageHandler:
    """The (shared, stateless) handler instance ``name`` denotes."""
    cls = handler_class(name)
    with _lock:
        inst = _instances.get(cls)
        if inst is None:
            inst = _instances[cls] = cls()
    return inst


def handler_name(table: Table) -> str | None:
    """The handler a table names in its ``storage_handler`` property, or None."""
    for k, v in table.properties.items():
        if k.lower() == STORAGE_HANDLER_KEY:
            return v
    return None


def handler_for(table: Table) -> StorageHandler | None:
    """The table's storage handler, or None for a table of files."""
    name = handler_name(table)
    return None if name is None else get_handler(name)


def handler_properties(table: Table) -> dict[str, str]:
    """The properties a handler reads (the table's, without ``storage_handler``)."""
    return {k: v for k, v in table.properties.items() if k.lower() != STORAGE_HANDLER_KEY}
