"""The index's tests run against both backends: `backend` is an SQLite file beside the
reports, or a fresh database on one real PostgreSQL 15 server per test session
(tests/support/postgres.py; the session fixture pg_server is tests/conftest.py's: started at
its first use in a test process, stopped and removed at the end)."""

from __future__ import annotations

import pytest

from tests.support.postgres import NEEDS_POSTGRESQL, Backend


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=NEEDS_POSTGRESQL)])
def backend(request) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite")
    return Backend("postgresql", request.getfixturevalue("pg_server").database())


@pytest.fixture(scope="session")
def indexed_reference(tmp_path_factory):
    """The reference run indexed once per test process, read-only: (connection, RunView)."""
    from tests.support.index_reference import copy_reference
    conn, run = copy_reference(tmp_path_factory.mktemp("reference-index"))
    yield conn, run
    conn.close()
