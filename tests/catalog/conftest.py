"""The ``catalog`` fixture: a fresh metastore per test, on SQLite and on PostgreSQL.

The PostgreSQL server is started once per session (``pg_url`` in tests/conftest.py); each test gets
its own schema on it (through ``search_path``), so tests never see each other's rows.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hivepark.catalog.sql import SqlCatalog


@pytest.fixture
def pg_schema_url(pg_url: str) -> Iterator[str]:
    """A URL whose connections use a fresh, empty schema."""
    import psycopg

    plain = pg_url.replace("postgresql+psycopg://", "postgresql://")
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    yield f"{pg_url}?options={quote(f'-csearch_path={name}')}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def catalog_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/metastore.db"
    return str(request.getfixturevalue("pg_schema_url"))


@pytest.fixture
def catalog(catalog_url: str) -> Iterator[SqlCatalog]:
    cat = SqlCatalog(catalog_url)
    yield cat
    cat.close()
