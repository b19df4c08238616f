"""Storage handlers: tables whose rows live in another system (Hive's STORED BY).

The public interface is :class:`StorageHandler` (``base.py``); handlers are found by
:func:`handler_for` / :func:`get_handler` (``registry.py``). The JDBC handler
(``jdbc.py``) and the Iceberg handler (``iceberg.py``) are loaded only when a table uses them.
"""

from __future__ import annotations

from hivepark.plan.pushdown import DecomposedPredicate, PushdownDecision, push_filters
from hivepark.storage.handlers.base import (
    FILTER_EXPR_KEY,
    FILTER_TEXT_KEY,
    MASK,
    PARTITION_SPEC_KEY,
    STORAGE_HANDLER_KEY,
    HandlerEnvironment,
    PushedFilter,
    StorageHandler,
    current_environment,
    handler_environment,
)
from hivepark.storage.handlers.registry import (
    ENTRY_POINT_GROUP,
    UnknownStorageHandler,
    get_handler,
    handler_class,
    handler_for,
    handler_name,
    handler_properties,
    register_handler,
)

__all__ = [
    "ENTRY_POINT_GROUP", "FILTER_EXPR_KEY", "FILTER_TEXT_KEY", "MASK", "PARTITION_SPEC_KEY", "STORAGE_HANDLER_KEY",
    "DecomposedPredicate", "HandlerEnvironment", "PushdownDecision", "PushedFilter", "StorageHandler",
    "UnknownStorageHandler", "current_environment", "get_handler", "handler_class", "handler_environment",
    "handler_for", "handler_name", "handler_properties", "push_filters", "register_handler",
]
