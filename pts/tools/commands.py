"""Running external tools: argv lists only, logged before they run, output kept.

Every wrapper (fio, nvme-cli, blkdiscard, ...) goes through `run()`, so that the exact command
is in the run folder's commands.log even when the tool hangs or the suite is killed.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


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
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    """In the child, before exec: the kernel sends SIGTERM if the suite dies (even kill -9),
    so no fio keeps writing to the device after the suite is gone."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def run(argv: list[str], *, log_file: Path | None = None, timeout: float | None = None,
        check: bool = True, stdout_path: Path | None = None,
        cwd: Path | None = None) -> CommandResult:
    """Run argv (no shell). Stops the child on timeout or Ctrl-C so nothing is left behind."""
    log_command(log_file, argv)
    start = time.monotonic()
    out_fh = open(stdout_path, "w", encoding="utf-8") if stdout_path else None
    try:
        proc = subprocess.Popen(argv, stdout=out_fh or subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", cwd=cwd,
                                preexec_fn=_die_with_parent)
    except FileNotFoundError:
        raise ToolMissing(f"{argv[0]} is not installed (not found on PATH)") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise ToolFailed(f"{argv[0]} did not finish within {timeout:.0f} s: {' '.join(argv)}") \
            from None
    except BaseException:
        stop(proc)            # Ctrl-C / SIGTERM: never leave the tool running
        raise
    finally:
        if out_fh:
            out_fh.close()
    result = CommandResult(tuple(argv), proc.returncode, stdout or "", stderr or "",
                           time.monotonic() - start)
    if check and result.returncode != 0:
        raise ToolFailed(f"{argv[0]} exited with status {result.returncode}: "
                         f"{' '.join(argv)}\n{result.excerpt()}", result)
    return result


def stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGINT first (fio then ends its jobs cleanly), SIGKILL if it does not exit in time."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
