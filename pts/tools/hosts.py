"""Where a device's tools run and its /proc and /sys files are read: this machine (`LOCAL`)
or a DUT host over OpenSSH (`SshHost`). The device layer (identity, safety gate) and the
conditioning wrappers (purge by discard, write cache, health) go through a Host, so the same
code reads a local drive and a drive on another host.

A remote command is `ssh -o BatchMode=yes [-F FILE] [-p PORT] [USER@]HOST -- ARGV` with ARGV
quoted exactly once (shlex.join) for the remote shell: no hand-built shell strings. Remote
files are read with `cat`, directories listed with `ls -1A`, nodes examined with `stat -L`
and `readlink -f`. Every command, remote or local, is logged on the controller before it runs.

The commands to one host share one ssh connection (OpenSSH connection sharing: a master
started with ControlPersist=60, its socket in MUX_DIR; a command finding no master connects
on its own). A command then costs a few ms instead of a key exchange (~0.3 s even on one
machine), and a drive's start-up runs ~25 of them. The master is started with every stdio
on /dev/null: one that inherited a command's pipes would hold them open for its 60 s.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat as st
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pts.config.option_rows import FIO_PORT
from pts.tools import commands

SSH_SCHEME = "ssh://"
DEFAULT_FIO_PORT = FIO_PORT    # fio --server's default port (pts.config.option_rows)
SSH_TIMEOUT_S = 120
MUX_DIR = Path(tempfile.gettempdir()) / f"pts-ssh-{os.getuid()}"
MUX_PERSIST_S = 60            # a master outlives its last command by this long
_masters: dict[str, float] = {}     # control path -> when this process last used its master
_URL = re.compile(r"^ssh://(?:(?P<user>[A-Za-z0-9._-]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|"
                  r"[A-Za-z0-9._-]+)(?::(?P<port>\d+))?(?P<path>/dev/[A-Za-z0-9._/:+-]+)$")


class RemoteError(ValueError):
    """An ssh:// device cannot be used as given; the message names the fix."""


@dataclass(frozen=True)
class Remote:
    """A DUT host: reached by OpenSSH for its tools and files, by fio --client for I/O."""

    host: str
    user: str | None = None
    ssh_port: int | None = None
    ssh_config: str | None = None    # --ssh-config FILE: ssh -F FILE
    fio_port: int = DEFAULT_FIO_PORT

    @property
    def target(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def url(self, path: str) -> str:
        port = f":{self.ssh_port}" if self.ssh_port else ""
        return f"{SSH_SCHEME}{self.target}{port}{path}"

    def ssh_argv(self, argv: list[str]) -> list[str]:
        """The ssh command that runs `argv` on the host (argv quoted once, for its shell),
        through the host's shared connection when there is one."""
        return [*self._ssh(), "-o", "ControlMaster=no", self.target, "--", shlex.join(argv)]

    def master_argv(self) -> list[str]:
        """The ssh command that leaves a shared connection to the host behind it."""
        return [*self._ssh(), "-o", "ControlMaster=auto", "-o",
                f"ControlPersist={MUX_PERSIST_S}", self.target, "--", "true"]

    def _ssh(self) -> list[str]:
        out = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"]
        if self.ssh_config:
            out += ["-F", self.ssh_config]
        if self.ssh_port:
            out += ["-p", str(self.ssh_port)]
        return [*out, "-o", f"ControlPath={self.control_path}"]

    @property
    def control_path(self) -> str:
        """The shared connection's socket: ssh expands %C (a hash of host, port and user);
        the ssh config file is in the name too (another file may name another key)."""
        tag = hashlib.sha256((self.ssh_config or "").encode()).hexdigest()[:8]
        return str(MUX_DIR / f"{tag}-%C")

    def fio_client(self) -> str:
        """fio's --client connect string: HOST,PORT (an IPv6 literal in brackets as given)."""
        return f"{self.host.strip('[]')},{self.fio_port}"


def is_remote(given: str | None) -> bool:
    return bool(given) and given.startswith(SSH_SCHEME)


def parse(given: str, ssh_config: str | None = None,
          fio_port: int = DEFAULT_FIO_PORT) -> tuple[Remote, str]:
    """ssh://[USER@]HOST[:SSHPORT]/dev/NAME -> (Remote, "/dev/NAME"), or RemoteError."""
    m = _URL.match(given)
    if not m:
        raise RemoteError(f"--device {given}: a remote device is ssh://[USER@]HOST[:SSHPORT]"
                          "/dev/NAME, e.g. ssh://root@dut1/dev/nvme0n1 (a whole block device "
                          "node on that host; emulated SSDs are local only)")
    if not 0 < fio_port < 65536:
        raise RemoteError(f"--fio-port {fio_port}: a TCP port, 1-65535 (fio --server "
                          f"listens on {DEFAULT_FIO_PORT} by default)")
    port = int(m["port"]) if m["port"] else None
    if port is not None and not 0 < port < 65536:
        raise RemoteError(f"--device {given}: SSH port {port} is not a TCP port (1-65535)")
    if ssh_config and not os.path.isfile(ssh_config):
        raise RemoteError(f"--ssh-config {ssh_config}: no such file (an OpenSSH client "
                          "configuration, passed as ssh -F FILE)")
    return Remote(m["host"], m["user"], port, ssh_config, fio_port), m["path"]


@dataclass(frozen=True)
class Node:
    """What stat(2) says about a path (following links)."""

    kind: str                   # "block", "char", "dir", "file", "other"
    rdev: tuple[int, int]       # major, minor of a device node ((0, 0) otherwise)
    dev: int                    # st_dev: the device the path lives on
    ino: int


class Host:
    """This machine: the tools run here, files are read here."""

    remote: Remote | None = None
    name = "this host"

    def run(self, argv: list[str], *, log_file: Path | None = None,
            timeout: float | None = None, check: bool = True) -> commands.CommandResult:
        return commands.run(argv, log_file=log_file, timeout=timeout, check=check)

    def require(self, tool: str, package: str) -> None:
        commands.require(tool, package)

    def read(self, path: str | Path, default: str = "") -> str:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return default

    def exists(self, path: str | Path) -> bool:
        return os.path.exists(path)

    def listdir(self, path: str | Path) -> list[str]:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []

    def realpath(self, path: str | Path) -> str:
        return os.path.realpath(path)

    def stat(self, path: str | Path) -> Node | None:
        try:
            s = os.stat(path)
        except OSError:
            return None
        kind = ("block" if st.S_ISBLK(s.st_mode) else "char" if st.S_ISCHR(s.st_mode) else
                "dir" if st.S_ISDIR(s.st_mode) else "file" if st.S_ISREG(s.st_mode) else "other")
        return Node(kind, (os.major(s.st_rdev), os.minor(s.st_rdev)), s.st_dev, s.st_ino)


LOCAL = Host()
_KINDS = {"block special file": "block", "character special file": "char",
          "directory": "dir", "regular file": "file", "regular empty file": "file"}


class SshHost(Host):
    """A DUT host over OpenSSH (BatchMode: key authentication, never a password prompt)."""

    def __init__(self, remote: Remote):
        self.remote = remote
        self.name = f"host {remote.target}"

    def run(self, argv: list[str], *, log_file: Path | None = None,
            timeout: float | None = None, check: bool = True) -> commands.CommandResult:
        self._share_connection(log_file)
        try:
            result = commands.run(self.remote.ssh_argv(argv), log_file=log_file,
                                  timeout=timeout or SSH_TIMEOUT_S, check=False)
        except commands.ToolMissing:
            raise commands.ToolMissing("ssh is not installed (not found on PATH): install it "
                                       "with `apt-get install openssh-client`") from None
        if result.returncode == 255:
            raise commands.ToolFailed(
                f"ssh to {self.remote.target} failed (exit 255: connection or "
                f"authentication; BatchMode needs key authentication): {result.excerpt()}",
                result)
        if result.returncode == 127:
            raise commands.ToolMissing(f"{argv[0]} is not installed on {self.remote.target} "
                                       f"(exit 127 through ssh): install it there. "
                                       f"{result.excerpt()}")
        if check and result.returncode != 0:
            raise commands.ToolFailed(f"{argv[0]} on {self.remote.target} exited with status "
                                      f"{result.returncode}: {shlex.join(argv)}\n"
                                      f"{result.excerpt()}", result)
        return result

    def _share_connection(self, log_file: Path | None) -> None:
        """A master for this host's commands unless this process used one in the last
        MUX_PERSIST_S - 10 s. Its failure is not an error: the command connects on its own
        and says why if it cannot."""
        path, now = self.remote.control_path, time.monotonic()
        if now - _masters.get(path, -1e9) < MUX_PERSIST_S - 10:
            _masters[path] = now
            return
        _masters[path] = now
        MUX_DIR.mkdir(mode=0o700, exist_ok=True)
        argv = self.remote.master_argv()
        commands.log_command(log_file, argv)
        try:
            subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            pass

    def require(self, tool: str, package: str) -> None:
        """Checked when the tool runs: exit 127 is a ToolMissing naming the host."""

    def read(self, path: str | Path, default: str = "") -> str:
        r = self.run(["cat", "--", str(path)], check=False)
        return r.stdout.strip() if r.returncode == 0 else default

    def exists(self, path: str | Path) -> bool:
        return self.run(["test", "-e", str(path)], check=False).returncode == 0

    def listdir(self, path: str | Path) -> list[str]:
        r = self.run(["ls", "-1A", "--", str(path)], check=False)
        return sorted(r.stdout.split()) if r.returncode == 0 else []

    def realpath(self, path: str | Path) -> str:
        r = self.run(["readlink", "-f", "--", str(path)], check=False)
        return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else str(path)

    def stat(self, path: str | Path) -> Node | None:
        r = self.run(["stat", "-L", "-c", "%F|%t|%T|%d|%i", "--", str(path)], check=False)
        if r.returncode != 0:
            return None
        kind, major, minor, dev, ino = r.stdout.strip().rsplit("|", 4)
        return Node(_KINDS.get(kind, "other"), (int(major, 16), int(minor, 16)), int(dev),
                    int(ino))


def host_for(remote: Remote | None) -> Host:
    return LOCAL if remote is None else SshHost(remote)
