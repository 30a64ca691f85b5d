"""Where a device's tools run and its /proc and /sys files are read: this machine (`LOCAL`)
or a DUT host over OpenSSH (`SshHost`). The device layer (identity, safety gate) and the
conditioning wrappers (purge by discard, write cache, health) go through a Host, so the same
code reads a local drive and a drive on another host.

A remote command is `ssh -o BatchMode=yes [-F FILE] [-p PORT] [USER@]HOST -- ARGV` with ARGV
quoted exactly once (shlex.join) for the remote shell: no hand-built shell strings. Remote
files are read with `cat`, directories listed with `ls -1A`, nodes examined with `stat -L`
and `readlink -f`. Every command, remote or local, is logged on the controller before it runs.

The commands to one host share one ssh connection (OpenSSH connection sharing): a command
then costs a few ms instead of a key exchange (~0.3 s even on one machine), and a drive's
start-up runs ~25 of them. The connection's master is this process's own child (`ssh -N -o
ControlMaster=yes -o ControlPersist=no`), never a daemon: it gets SIGTERM when the suite ends
however it ends (kill -9 too: pts.tools.commands.on_parent_death), is stopped at a clean exit,
and its socket is in a folder this process made, removed then. A command finding no
master connects on its own. The master's stdio is /dev/null: one holding a command's pipes
would keep them open as long as it lives.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import queue
import re
import secrets
import shlex
import shutil
import signal
import stat as st
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pts.config.option_rows import FIO_PORT
from pts.tools import commands, liveness

SSH_SCHEME = "ssh://"
DEFAULT_FIO_PORT = FIO_PORT    # fio --server's default port (pts.config.option_rows)
SSH_TIMEOUT_S = 120
MASTER_WAIT_S = 30    # for a master to connect and listen (ConnectTimeout=20, then the keys)
MASTER_RETRY_S = 50   # a master that ended (host unreachable, sshd gone) is retried after this
MASTERS_PREFIX = "pts-ssh-"    # the masters' folder in the temporary directory, one a process
MASTERS_LOCK = "owner.lock"    # held while its process lives (pts.tools.liveness): a folder a
                               # process killed -9 left is told from a live one's and removed
                               # by the next run (pts.device.leftovers)
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
        """The ssh command that holds the shared connection to the host while it runs (in
        the foreground, no command: -N; ControlPersist=no: it never forks into a daemon)."""
        return [*self._ssh(), "-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-N",
                self.target]

    def _ssh(self) -> list[str]:
        out = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"]
        if self.ssh_config:
            out += ["-F", self.ssh_config]
        if self.ssh_port:
            out += ["-p", str(self.ssh_port)]
        return [*out, "-o", f"ControlPath={self.control_path}"]

    @property
    def control_path(self) -> str:
        """The shared connection's socket, in this process's folder: one per host, port,
        user and ssh config file (another file may name another key). Named here, not by
        ssh's %C, so that the master's socket can be seen to listen."""
        key = "\0".join((self.target, str(self.ssh_port), self.ssh_config or ""))
        return str(_shared.folder / hashlib.sha256(key.encode()).hexdigest()[:16])

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
        """This host's master, started unless it runs (or ended less than MASTER_RETRY_S
        ago), and waited for until its socket listens. Its failure is not an error: the
        command connects on its own and says why if it cannot."""
        path = self.remote.control_path
        master = _shared.master(path, self.remote.master_argv(), log_file)
        if master is None:
            return
        proc, deadline = master
        while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)

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


class _Masters:
    """This process's shared connections: per control path the master (our child) and
    when it was started. Every master is forked by one thread that lives as long as the
    process: the parent-death signal comes when the THREAD that forked the child ends, and
    the hosts' commands also run in threads that end (pts.session.gate's pool). A process
    forked from this one starts afresh (os.register_at_fork): its own folder, no masters."""

    def __init__(self) -> None:
        self.mutex = threading.Lock()
        # named now, made (mode 0700, never one that exists) when a master first starts: an
        # ssh command started without one (the remote capture's) leaves no folder behind
        self.folder = Path(tempfile.gettempdir()) / f"{MASTERS_PREFIX}{secrets.token_hex(6)}"
        # its owner lock, held once the folder is made (a forked child makes its own)
        self.lock: int | None = None
        self.held: dict[str, tuple[subprocess.Popen, float]] = {}
        self.requests: queue.SimpleQueue | None = None

    def master(self, path: str, argv: list[str],
               log_file: Path | None) -> tuple[subprocess.Popen, float] | None:
        """The master of `path` and the time its start may take until, or None: none
        runs, and the last one started less than MASTER_RETRY_S ago."""
        with self.mutex:
            proc, started = self.held.get(path, (None, -1e9))
            if proc is None or proc.poll() is not None:
                if time.monotonic() - started < MASTER_RETRY_S:
                    return None
                if self.lock is None:
                    try:
                        os.mkdir(self.folder, 0o700)
                    except OSError:
                        return None
                    try:
                        self.lock = liveness.hold(self.folder / MASTERS_LOCK)
                    except OSError:
                        shutil.rmtree(self.folder, ignore_errors=True)
                        return None
                # a socket left by an earlier master of ours killed -9 (stale: it ended)
                # would keep the new one from listening
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                commands.log_command(log_file, argv)
                started, proc = time.monotonic(), self._start(argv)
                if proc is None:
                    return None
                self.held[path] = (proc, started)
            return proc, started + MASTER_WAIT_S

    def _start(self, argv: list[str]) -> subprocess.Popen | None:
        if self.requests is None:
            self.requests = queue.SimpleQueue()
            threading.Thread(target=_starter, args=(self.requests,), daemon=True,
                             name="ssh-masters").start()
        reply: queue.SimpleQueue = queue.SimpleQueue()
        self.requests.put((argv, reply))
        return reply.get()

    def end(self) -> None:
        """At a clean exit: every master stopped (SIGTERM, on which ssh removes its socket;
        SIGKILL after 5 s), the folder removed. Only our children, by the Popen we hold (a
        pid not yet waited for cannot be another process's)."""
        for proc, _ in self.held.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.held.clear()
        if self.lock is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            os.close(self.lock)          # after the folder went: never seen there unheld
            self.lock = None


def _starter(requests: queue.SimpleQueue) -> None:
    while True:
        argv, reply = requests.get()
        try:
            # SIGTERM when this process ends, however (kill -9 too); its own session, so a
            # Ctrl-C at the terminal leaves it to the suite's cleanup commands
            reply.put(subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       preexec_fn=commands.on_parent_death(signal.SIGTERM),
                                       start_new_session=True))
        except OSError:
            reply.put(None)


_shared = _Masters()
os.register_at_fork(after_in_child=_shared.__init__)
atexit.register(_shared.end)
