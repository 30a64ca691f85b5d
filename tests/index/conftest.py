"""The index's tests run against both backends: `backend` is an SQLite file beside the
reports, or a fresh database on one real PostgreSQL 15 server per test session
(tests/support/postgres.py: started here, stopped and removed at the end)."""

from __future__ import annotations

import pytest

from tests.support import postgres
from tests.support.postgres import NEEDS_POSTGRESQL, Backend


@pytest.fixture(scope="session")
def pg_server():
    with postgres.server() as server:
        yield server


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=NEEDS_POSTGRESQL)])
def backend(request) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite")
    return Backend("postgresql", request.getfixturevalue("pg_server").database())
