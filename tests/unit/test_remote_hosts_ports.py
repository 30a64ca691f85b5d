"""tests/support/remote_hosts.py on 127.0.0.1: sshd cannot take port 0 and say which it got,
so its port is probed free first, and another program may take it before sshd binds it
(issue 47 §1: tests run two at a time beside other suites). The host is then started again
on other ports instead of failing the test; /run/sshd, the machine's, is left in place."""

from __future__ import annotations

import socket

import pytest

from tests.support import remote_hosts

pytestmark = pytest.mark.needs("root", "sshd", "ssh-keygen")


def test_a_port_taken_before_sshd_binds_it_is_replaced(monkeypatch):
    with socket.socket() as taken:            # bound, not listening: refused, not answered
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        # the first sshd's port is taken; then free ones (ssh, fio per attempt)
        probes = iter([port] + [remote_hosts.free_port() for _ in range(3)])
        monkeypatch.setattr(remote_hosts, "free_port", lambda: next(probes))
        monkeypatch.setattr(remote_hosts.Host, "start_fio", lambda self: None)   # sshd only
        with remote_hosts.keys() as k, remote_hosts.host(k) as h:
            assert h.ssh_port != port and h.sshd.poll() is None
            with socket.create_connection(("127.0.0.1", h.ssh_port), 5) as ssh:
                assert ssh.recv(64).startswith(b"SSH-2.0-")        # our sshd answers there


def test_the_privilege_separation_folder_is_left_in_place(tmp_path, monkeypatch):
    """Made when missing, never removed: another sshd (the other worker's, another suite's,
    the system's) may need it after this test ends."""
    monkeypatch.setattr(remote_hosts, "PRIVSEP", tmp_path / "run-sshd")    # not the machine's
    with remote_hosts.keys():
        assert remote_hosts.PRIVSEP.is_dir()
    assert remote_hosts.PRIVSEP.is_dir()
