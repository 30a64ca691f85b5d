"""Running external tools: argv lists only, logged before they run, output kept.

Every wrapper (fio, nvme-cli, blkdiscard, ...) goes through `run()`, so that the exact command
is in the run folder's commands.log even when the tool hangs or the suite is killed.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ToolError(RuntimeError):
    """An external tool could not be run or failed."""


class ToolMissing(ToolError):
    """The tool is not installed (not on PATH)."""


class ToolFailed(ToolError):
    """The tool ran and exited non-zero, or timed out."""

    def __init__(self, message: str, result: CommandResult | None = None):
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def excerpt(self, limit: int = 800) -> str:
        """The tail of stderr (or stdout), for error messages."""
        text = (self.stderr.strip() or self.stdout.strip())
        return text if len(text) <= limit else "..." + text[-limit:]


def require(tool: str, package: str) -> str:
    """Path of `tool`, or ToolMissing naming the Debian package that provides it."""
    path = shutil.which(tool)
    if path is None:
        raise ToolMissing(f"{tool} is not installed (not found on PATH): "
                          f"install it with `apt-get install {package}`")
    return path


def log_command(log_file: Path | None, argv: list[str]) -> None:
    if log_file is None:
        return
    with open(log_file, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"time": time.time(), "argv": argv}) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


PR_SET_PDEATHSIG = 1
SIG_DFL = None                       # signal(2)'s SIG_DFL, the null pointer
# The tool has ended but something still holds its output pipes open this long: processes it
# forked and left behind (fio's job processes when fio's main process was killed). They are
# the tool's, in its own process group: they are stopped, and the tool's result stands.
ORPHAN_GRACE_S = 2.0
POLL_S = 0.5
STOP_GRACE_S = 5.0   # for a stopped tool to end on SIGINT before SIGKILL
_libc = ctypes.CDLL(None, use_errno=True)
_libc.signal.argtypes, _libc.signal.restype = (ctypes.c_int, ctypes.c_void_p), ctypes.c_void_p


def set_parent_death_signal(sig: signal.Signals, parent: int | None = None) -> None:
    """In a child before exec: the kernel sends `sig` when the thread that started it ends.
    `parent`: the pid of the process that started it, read there before the fork
    (`on_parent_death`). The kernel sends nothing for a death before the prctl: a parent
    killed between the fork and here is seen by the child's parent no longer being it,
    and the signal sent now. With `parent`, the signal's disposition is the default first:
    a handler the child inherited from the suite (pts.session.plugin's for SIGTERM) would
    take a signal arriving before the exec, and the exec would forget it."""
    if parent is not None:
        _libc.signal(sig, SIG_DFL)
    _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)              # a signal whose default is not to end the process


def on_parent_death(sig: signal.Signals) -> Callable[[], None]:
    """The preexec_fn that gives a child `sig` when the thread starting it ends, however
    (kill -9 too) and whenever, before its exec included (set_parent_death_signal)."""
    return functools.partial(set_parent_death_signal, sig, os.getpid())


def run(argv: list[str], *, log_file: Path | None = None, timeout: float | None = None,
        check: bool = True, stdout_path: Path | None = None, cwd: Path | None = None,
        watch: Callable[[subprocess.Popen], Any] | None = None) -> CommandResult:
    """Run argv (no shell). Stops the child on timeout or Ctrl-C so nothing is left behind.
    `watch`: called with the child as soon as it runs (fio's watcher: pts.tools.fio_watch);
    what it returns kills the child and what it started when a stop must (`kill()`), and is
    closed once the child has ended (`close()`)."""
    log_command(log_file, argv)
    start = time.monotonic()
    out_fh = open(stdout_path, "w", encoding="utf-8") if stdout_path else None
    try:
        # Its own process group (start_new_session), so that what it forks can be found
        # and stopped with it; a Ctrl-C reaches it through stop(), as before.
        proc = subprocess.Popen(argv, stdout=out_fh or subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", cwd=cwd,
                                # the suite's death (kill -9 too) sends SIGTERM: no tool
                                # (fio, a purge) goes on writing to the device without it
                                preexec_fn=on_parent_death(signal.SIGTERM),
                                start_new_session=True)
    except FileNotFoundError:
        raise ToolMissing(f"{argv[0]} is not installed (not found on PATH)") from None
    watched = watch(proc) if watch else None
    kill = watched.kill if watched else None
    try:
        stdout, stderr = _communicate(proc, timeout)
    except subprocess.TimeoutExpired:
        stop(proc, STOP_GRACE_S, kill)
        raise ToolFailed(f"{argv[0]} did not finish within {timeout:.0f} s: {' '.join(argv)}") \
            from None
    except BaseException:
        stop(proc, STOP_GRACE_S, kill)     # Ctrl-C / SIGTERM: never leave the tool running
        raise
    finally:
        if out_fh:
            out_fh.close()
        if watched:
            watched.close()
    result = CommandResult(tuple(argv), proc.returncode, stdout or "", stderr or "",
                           time.monotonic() - start)
    if check and result.returncode != 0:
        raise ToolFailed(f"{argv[0]} exited with status {result.returncode}: "
                         f"{' '.join(argv)}\n{result.excerpt()}", result)
    return result


def _communicate(proc: subprocess.Popen, timeout: float | None) -> tuple[str, str]:
    """proc.communicate(), which waits for the end of the output: when the tool has ended
    but processes it left behind still hold its pipes, they are stopped after
    ORPHAN_GRACE_S instead of waiting for them (forever, or until `timeout`)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    ended_at = None
    while True:
        left = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
        try:
            return proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if proc.poll() is not None:
                ended_at = ended_at if ended_at is not None else now
                if now - ended_at >= ORPHAN_GRACE_S:
                    _stop_group(proc)
                    return proc.communicate()
            elif deadline is not None and now >= deadline:
                raise


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGKILL whatever is left of the tool's process group (its leader has ended)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def stop(proc: subprocess.Popen, grace: float = STOP_GRACE_S,
         kill: Callable[[], None] | None = None) -> None:
    """SIGINT first (fio then ends its jobs cleanly), SIGKILL if it does not exit in time
    (`kill`: what kills it and what it started, e.g. fio's jobs in their own sessions);
    then whatever it left behind in its process group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            (kill or proc.kill)()
            proc.wait()
    _stop_group(proc)
