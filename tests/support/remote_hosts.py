"""DUT hosts for the remote-drive e2e tests, for real on one machine: per host an sshd of
the test's own (its own host key, config and authorized key in a temp folder; the system's
sshd is not touched) and `fio --server`, listening either on 127.0.0.1 at free ports, or on
the address of a Linux network namespace of the host's own (`ip netns`, a veth pair, its own
address; issue 24 §2: several hosts on one machine). A host's drives are loop devices of
this machine: a network namespace shares the devices, so `ssh://root@ADDRESS/dev/loopN`
reaches them through that host's sshd and fio server. Everything made is removed at exit.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.helpers import free_port

SSH_PORT, FIO_PORT = 22, 8765       # in a namespace of its own a host has every port
SUBNET = "10.231"                   # host N: 10.231.N.1 here, 10.231.N.2 in its namespace


@dataclass
class Host:
    address: str
    ssh_port: int
    fio_port: int
    netns: str | None
    sshd_argv: list[str]
    fio_argv: list[str]
    folder: Path
    sshd: subprocess.Popen | None = None
    fio: subprocess.Popen | None = None

    def url(self, device: str) -> str:
        """The --device of one of its drives, as an --inventory host names it."""
        return f"ssh://root@{self.address}:{self.ssh_port}{device}"

    def start_sshd(self) -> None:
        """(Re)start its sshd (a fault: the host's ssh goes away, then comes back)."""
        self.sshd = subprocess.Popen(self.sshd_argv, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        wait_listening(self.address, self.ssh_port, self.sshd, "sshd")

    def start_fio(self) -> None:
        """(Re)start its fio --server (a test kills it, then brings it back)."""
        self.fio = subprocess.Popen(self.fio_argv, cwd=self.folder, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
        wait_listening(self.address, self.fio_port, self.fio, "fio --server")


@dataclass
class Keys:
    """One client key and one host key for every host of a test, and the ssh config that
    trusts exactly those hosts."""

    folder: Path

    @property
    def ssh_config(self) -> Path:
        return self.folder / "ssh_config"

    def trust(self, address: str, port: int) -> None:
        host_pub = " ".join((self.folder / "host_key.pub").read_text().split()[:2])
        name = address if port == SSH_PORT else f"[{address}]:{port}"
        with (self.folder / "known_hosts").open("a") as fh:
            fh.write(f"{name} {host_pub}\n")
        with self.ssh_config.open("a") as fh:
            fh.write(f"Host {address}\n  IdentityFile {self.folder / 'id_ed25519'}\n"
                     f"  IdentitiesOnly yes\n  UserKnownHostsFile {self.folder / 'known_hosts'}\n"
                     "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
                     "  LogLevel ERROR\n")


PRIVSEP = Path("/run/sshd")          # sshd's privilege separation dir (compiled in)


@contextlib.contextmanager
def keys() -> Iterator[Keys]:
    folder = Path(tempfile.mkdtemp(prefix="pts-remote-"))
    # Made when missing and left there: it is the machine's, not this test's. Removed at the
    # end, it went from under another test's sshd (the other worker's, another suite's, the
    # system's), whose next connection then failed ("Missing privilege separation
    # directory"); an empty root-owned folder is what Debian's sshd makes there itself.
    PRIVSEP.mkdir(mode=0o755, exist_ok=True)
    try:
        for key in ("host_key", "id_ed25519"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pts-test",
                            "-f", str(folder / key)], check=True)
        shutil.copy(folder / "id_ed25519.pub", folder / "authorized_keys")
        yield Keys(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def host(k: Keys, address: str = "127.0.0.1", netns: str | None = None) -> Iterator[Host]:
    """sshd and fio --server for one host on `address` (in `netns` when given). On
    127.0.0.1 their ports are probed free (neither can take port 0 and say which it got),
    and another program may take one before they bind it: they exit, and are started again
    on other free ports, up to ATTEMPTS times."""
    for attempt in range(1, ATTEMPTS + 1):
        h = _made(k, address, netns)
        try:
            h.start_sshd()
            h.start_fio()
        except NotListening:
            _stop(h)
            if netns is not None or attempt == ATTEMPTS:
                raise
            continue
        break
    try:
        yield h
    finally:
        _stop(h)


ATTEMPTS = 3


def _stop(h: Host) -> None:
    for proc in (h.fio, h.sshd):
        if proc is not None:
            stop(proc)


def _made(k: Keys, address: str, netns: str | None) -> Host:
    local = netns is None
    ssh_port, fio_port = (free_port(), free_port()) if local else (SSH_PORT, FIO_PORT)
    inside = [] if local else ["ip", "netns", "exec", netns]
    config = k.folder / f"sshd_config-{address}"
    config.write_text(
        f"Port {ssh_port}\nListenAddress {address}\nHostKey {k.folder / 'host_key'}\n"
        f"PidFile {k.folder / f'sshd-{address}.pid'}\n"
        f"AuthorizedKeysFile {k.folder / 'authorized_keys'}\n"
        "PubkeyAuthentication yes\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
        "UsePAM no\nStrictModes no\n")
    k.trust(address, ssh_port)
    # `ip netns exec` execs its command: the Popen is sshd or fio itself (a test kills it)
    return Host(address, ssh_port, fio_port, netns,
                [*inside, shutil.which("sshd"), "-D", "-e", "-f", str(config)],
                [*inside, "fio", f"--server=ip:{address},{fio_port}"], k.folder)


@contextlib.contextmanager
def namespace(n: int) -> Iterator[tuple[str, str]]:
    """A network namespace with a veth pair to this one: yields (its name, its address)."""
    tag = uuid.uuid4().hex[:6]
    name, here, there = f"pts-{tag}-{n}", f"pth{tag}{n}", f"ptn{tag}{n}"   # <= 15 chars
    address = f"{SUBNET}.{n}.2"

    def ip(*args: str, ns: bool = False) -> None:
        subprocess.run([*(["ip", "netns", "exec", name] if ns else []), "ip", *args],
                       check=True, capture_output=True, text=True)

    ip("netns", "add", name)
    try:
        ip("link", "add", here, "type", "veth", "peer", "name", there)
        ip("link", "set", there, "netns", name)
        ip("addr", "add", f"{SUBNET}.{n}.1/24", "dev", here)
        ip("link", "set", here, "up")
        ip("addr", "add", f"{address}/24", "dev", there, ns=True)
        ip("link", "set", there, "up", ns=True)
        ip("link", "set", "lo", "up", ns=True)
        yield name, address
    finally:
        # deleting the namespace deletes its end of the pair, and with it the other end
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", here], capture_output=True)


class NotListening(RuntimeError):
    """A daemon exited before it listened (its port taken meanwhile, among other causes)."""


def wait_listening(address: str, port: int, proc: subprocess.Popen, what: str) -> None:
    """Until `proc` listens on address:port: a connection accepted there while it still
    runs, and again a moment later (a program that had taken the port would answer the
    first while `proc` fails to bind and exits)."""
    for _ in range(200):
        if proc.poll() is not None:
            raise NotListening(f"{what} exited with {proc.returncode}: "
                               f"{proc.stderr.read() if proc.stderr else ''}")
        with contextlib.suppress(OSError), socket.create_connection((address, port), 0.2):
            time.sleep(0.2)
            if proc.poll() is None:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} is not listening on {address}:{port}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
