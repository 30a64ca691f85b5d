"""The child runs of a several-device session: one `python -m pytest ... --device D` per
device, started together, each in its own process group (a Ctrl-C at the terminal reaches
the parent only; the parent passes ONE SIGTERM to every child, which takes the child's
interrupted-run path). Their output lines come back through a queue, each tagged with the
device, and are written by the caller's thread (the terminal is not thread-safe). A parent
killed however (kill -9 too) takes its children with it: the kernel sends each the same
SIGTERM when the parent dies (PR_SET_PDEATHSIG), so no child run goes on writing to a drive
without the session that started it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pts.device.lock import INHERITED_FD_ENV
from pts.tools import commands


@dataclass
class Child:
    label: str
    device: str
    argv: list[str]
    log_file: Path
    lock_fd: int | None = None
    env: dict[str, str] = field(default_factory=dict)     # set in the child's environment
    proc: subprocess.Popen | None = None
    returncode: int | None = None
    lines: list[str] = field(default_factory=list)


def start(child: Child, cwd: Path, out: queue.Queue) -> None:
    env = dict(os.environ) | child.env
    env.pop(INHERITED_FD_ENV, None)
    if child.lock_fd is not None:
        env[INHERITED_FD_ENV] = str(child.lock_fd)
    child.proc = subprocess.Popen(
        child.argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
        pass_fds=() if child.lock_fd is None else (child.lock_fd,), start_new_session=True,
        preexec_fn=commands.on_parent_death(signal.SIGTERM))

    def pump() -> None:
        assert child.proc is not None and child.proc.stdout is not None
        for line in child.proc.stdout:
            out.put((child, line.rstrip("\n")))
        out.put((child, None))          # end of this child's output

    threading.Thread(target=pump, name=f"pts-child-{child.label}", daemon=True).start()


def run_all(children: Sequence[Child], cwd: Path, write: Callable[[str], None],
            finished: Callable[[Child], None]) -> None:
    """Start every child, write their lines as `[label] line` until all have ended, and
    call finished(child) as each one ends. Ctrl-C / SIGTERM of the parent: every child
    still running gets one SIGTERM and is waited for."""
    out: queue.Queue = queue.Queue()
    previous = signal.signal(signal.SIGTERM, _as_interrupt)
    try:
        for c in children:
            start(c, cwd, out)
        _drain(children, out, write, finished)
    except KeyboardInterrupt:
        for c in children:
            if c.proc is not None and c.proc.poll() is None:
                write(f"[{c.label}] interrupted: SIGTERM to its run (pid {c.proc.pid})")
                c.proc.send_signal(signal.SIGTERM)
        _drain(children, out, write, finished)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _drain(children, out: queue.Queue, write, finished) -> None:
    open_ = {id(c) for c in children if c.returncode is None}
    while open_:
        try:
            child, line = out.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is not None:
            child.lines.append(line)
            write(f"[{child.label}] {line}")
            continue
        child.returncode = child.proc.wait()
        open_.discard(id(child))
        finished(child)


def _as_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def python() -> str:
    return sys.executable
