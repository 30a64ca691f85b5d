"""`python -m pts serve` as a user starts it: uvicorn on 127.0.0.1, the runs list over
HTTP; a folder that is not there is a usage error naming it."""

from __future__ import annotations

import httpx
import pytest

from pts.cli.main import main
from tests.support.helpers import serving
from tests.support.serve_runs import make


def test_serves_the_runs_list_over_http_on_localhost(tmp_path):
    root = tmp_path / "reports"
    make(root, "Alpha_SN-A/20261101T000000", model="Alpha")
    with serving(root) as base:
        r = httpx.get(base + "/", timeout=5)
        assert r.status_code == 200 and '<a class="history" href="/history?model=Alpha"' \
            in r.text and ">Alpha</a></td>" in r.text
        assert httpx.get(base + "/metrics", timeout=5).status_code == 200


def test_a_missing_folder_is_named(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "nope")]) == 2
    assert f"not a folder: {tmp_path / 'nope'}" in capsys.readouterr().err


def test_listed_in_the_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "serve" in capsys.readouterr().out
