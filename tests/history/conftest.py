"""The synthetic lab (tests/history/labruns.py) built once per test session, indexed in
SQLite beside it; and a real PostgreSQL 15 server for the test that compares the two
backends (tests/support/postgres.py, as tests/index uses it)."""

from __future__ import annotations

import pytest

from pts.index import build, db
from tests.history.labruns import build_lab
from tests.support import postgres


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """The REPORTS_DIR of the lab, its index.sqlite made by pts index's own update."""
    root = build_lab(tmp_path_factory.mktemp("lab") / "reports")
    conn = db.connect(root / db.FILE_NAME)
    try:
        summary = build.update(conn, [root])
    finally:
        conn.close()
    assert len(summary.added) == 12, summary.line()
    return root


@pytest.fixture
def index(lab):
    conn = db.connect(lab / db.FILE_NAME)
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def pg_server():
    with postgres.server() as server:
        yield server
