"""The runnable examples in the docstrings of the pure core (expr/, plan/, layout) hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hivepark.expr
import hivepark.plan

MODULES = ["hivepark.errors", "hivepark.config", "hivepark.lru", "hivepark.layout", "hivepark.types",
           "hivepark.catalog.models", "hivepark.catalog.skew", "hivepark.storage.fs"] + [
    f"{pkg.__name__}.{m.name}" for pkg in (hivepark.expr, hivepark.plan)
    for m in pkgutil.iter_modules(pkg.__path__)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
