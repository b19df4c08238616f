"""Which of a SparkSession's temporary views hivepark made for ``spark.sql`` (exec/spark_views.py).

Its own module so that anything resolving a name (exec/context.py) can ask it without
importing what builds the views, which runs queries (exec/query.py) and so needs the context.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: per SparkSession: view name -> (owner warehouse's id, token). Only hivepark's views are here.
MADE: weakref.WeakKeyDictionary[SparkSession, dict[str, tuple[int, object]]] = weakref.WeakKeyDictionary()
#: held while a warehouse brings its views up to date
LOCK = threading.Lock()


def made_by_hivepark(spark: SparkSession, name: str) -> bool:
    """Whether the session's temporary view ``name`` is one of hivepark's table or view views."""
    return name.lower() in MADE.get(spark, {})
