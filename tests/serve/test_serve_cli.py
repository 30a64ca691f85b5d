"""`python -m pts serve` as a user starts it: uvicorn on 127.0.0.1, the runs list over
HTTP; a folder that is not there is a usage error naming it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import pytest

from pts.cli.main import main
from tests.serve.runs import make


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serves_the_runs_list_over_http_on_localhost(tmp_path):
    root = tmp_path / "reports"
    make(root, "Alpha_SN-A/20261101T000000", model="Alpha")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pts", "serve", str(root), "--port",
                             str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().startswith(f"snia-pts dashboard: http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 30
        while True:               # the line is printed just before uvicorn binds
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
        assert r.status_code == 200 and "<td>Alpha</td>" in r.text
        assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_missing_folder_is_named(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "nope")]) == 2
    assert f"not a folder: {tmp_path / 'nope'}" in capsys.readouterr().err


def test_listed_in_the_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "serve" in capsys.readouterr().out
