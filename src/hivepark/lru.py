"""A small least-recently-used map bounded by the summed weight of its values, shared by the
caches of query planning (``plan/runtime_pruning``) and execution (``exec/runtime``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Lru(Generic[V]):
    """Values by key, least recently used out first once their weights pass ``limit``
    (the one left is kept whatever its weight). Thread-safe.

    >>> cache = Lru(3, len)
    >>> cache.put("a", "xx"); cache.put("b", "y"); cache.get("a")
    'xx'
    >>> cache.put("c", "zz"); cache.get("b") is None, cache.get("a"), cache.get("c")
    (True, None, 'zz')
    """

    def __init__(self, limit: int, weight: Callable[[V], int]) -> None:
        self._limit, self._weight = limit, weight
        self._map: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            hit = self._map.get(key)
            if hit is not None:
                self._map.move_to_end(key)
            return hit

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._map[key] = value
            self._map.move_to_end(key)
            while len(self._map) > 1 and sum(map(self._weight, self._map.values())) > self._limit:
                self._map.popitem(last=False)
