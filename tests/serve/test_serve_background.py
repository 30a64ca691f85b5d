"""`pytest ... --serve [HOST:]PORT` (pts.serve.background): the dashboard from a thread of
the run's own process; a bad or busy port stops the session before any device is touched;
a several-device session's children do not serve (the parent does)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pts.serve import background
from pts.session.devices import child_args
from tests.support.helpers import REPO
from tests.support.serve_runs import make


@pytest.mark.parametrize("text, address", [("8080", ("127.0.0.1", 8080)),
                                           ("0.0.0.0:9000", ("0.0.0.0", 9000)),
                                           ("[::1]:8081", ("::1", 8081)),
                                           ("0", ("127.0.0.1", 0))])    # a free one
def test_addresses(text, address):
    assert background.parse_address(text) == address


@pytest.mark.parametrize("text", ["", "http", "-1", "65536", "70000", "host:", "8080x"])
def test_a_bad_address_names_the_option_and_the_fix(text):
    with pytest.raises(background.ServeError, match=rf"--serve {text}: give a port"):
        background.parse_address(text)


def test_serves_from_a_thread_and_stops(tmp_path):
    make(tmp_path, "Alpha_SN-A/20261101T000000", model="Alpha")
    served = background.start(background.bind("0"), tmp_path)   # a port the kernel picks
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:[1-9]\d*/", served.url), served.url
        r = httpx.get(served.url, timeout=10)
        assert r.status_code == 200 and "Alpha" in r.text
    finally:
        served.stop()
    assert not served.thread.is_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(served.url, timeout=5)


def test_a_busy_port_stops_the_session_before_the_device(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        p = subprocess.run([sys.executable, "-m", "pytest", "pts/suite/test_iops.py", "-p",
                            "no:cacheprovider", "--device", "/dev/pts-no-such-device",
                            "--destructive", "--reports-dir", str(tmp_path / "r"),
                            "--serve", str(port)],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    assert p.returncode == 4, p.stdout + p.stderr          # pytest's usage error
    assert f"--serve {port}: cannot listen on 127.0.0.1:{port} (Address already in use)" \
        in p.stderr
    assert "pts-no-such-device" not in p.stderr            # stopped before the device
    assert not (tmp_path / "r").exists()


def test_children_of_a_session_do_not_serve():
    args = child_args(["pts/", "--device", "/dev/a", "--serve", "8080", "--device", "/dev/b",
                       "--serve=9000", "--destructive"], "/dev/a", Path("/tmp/log.jsonl"))
    assert "--serve" not in args and not any(a.startswith("--serve=") for a in args)
    assert args[:2] == ["pts/", "--destructive"]
