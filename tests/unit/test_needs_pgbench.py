"""needs("pgbench") is met by what such a test runs: postgresql-15's own binaries in
/usr/lib/postgresql/15/bin (initdb, pg_ctl and postgres for a server, pgbench:
tests/support/postgres.py, apps.py), not by a `pgbench` on PATH. Debian's /usr/bin/pgbench is
postgresql-client-common's pg_wrapper, installed without any server (issue 47 §3): with only
it, the index's PostgreSQL tests ran and failed inside instead of naming the package."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support import helpers
from tests.support.helpers import REPO


def unmet(request):
    """tests/conftest.py's requirement check, as its needs marker calls it."""
    return request.config.pluginmanager.get_plugin(str(REPO / "tests" / "conftest.py"))._unmet


def executable(path, text="#!/bin/sh\nexit 0\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_pgbench_on_path_without_the_server_is_unmet(request, monkeypatch, tmp_path):
    wrapper = executable(tmp_path / "path" / "pgbench")        # as pg_wrapper alone
    monkeypatch.setenv("PATH", str(wrapper.parent))
    assert shutil.which("pgbench") == str(wrapper)
    server = tmp_path / "15" / "bin"
    executable(server / "pgbench")
    executable(server / "psql")
    (server / "postgres").write_text("")                         # there, not executable
    monkeypatch.setitem(helpers.BINARY_DIRS, "pgbench", server)
    assert unmet(request)("pgbench") == (
        f"needs pgbench with its server: initdb, pg_ctl, postgres not in {server} (apt-get "
        "install postgresql-15; the pgbench on PATH may be postgresql-client-common's "
        "wrapper alone)")
    for name in ("initdb", "pg_ctl", "postgres"):
        executable(server / name)
    assert unmet(request)("pgbench") is None


@pytest.mark.needs("pgbench")
def test_the_binaries_it_checks_are_postgresql_15s(request):
    """Where the requirement is met, the binaries it names run and are PostgreSQL 15's."""
    assert unmet(request)("pgbench") is None
    for name in helpers.BINARIES["pgbench"]:
        out = subprocess.run([str(helpers.PG15_BIN / name), "--version"], capture_output=True,
                             text=True, timeout=30).stdout
        assert out.startswith(f"{name} (PostgreSQL) 15."), (name, out)
