"""A tracefs instance of our own: the kernel's block tracepoints for one device, streamed.

rwsw-digest §7: `mkdir <tracefs>/instances/<name>` gives a private ring buffer (its own
`events/`, `buffer_size_kb`, `tracing_on`, per-CPU `trace_pipe_raw`); other users' tracing
is untouched and `rmdir` removes it. blktrace is not used: its per-CPU relay files under
debugfs were refused (EPERM) as root here while tracefs worked (digest §7). Nothing here
opens the traced device: it is only named in an event filter.

Named PREFIX + our pid namespace + pid: a capture killed with SIGKILL cannot remove its
instance (which would keep tracing), so every capture first removes those of its namespace's
dead captures (`clean_leftovers`); a pid means nothing in another namespace (a container
sharing tracefs: issue 47 §1), whose instances, and names without a namespace, are kept.

This file travels alone: pts/workload/capture/remote.py sends its source to a DUT host as
the body of its agent (python3 -c), so it imports nothing of the project, stdlib only, and
holds only what the agent needs; this host's side of making one (mounting tracefs, the
dev_t its filter takes) is pts/workload/capture/sources.py."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

PREFIX = "snia-pts-capture-"
EVENTS = ("block/block_rq_issue", "block/block_rq_complete")
# Writeback attribution (pts/workload/capture/writeback.py): enabled where the kernel has them (the
# capture works without; a spool without them decodes, its writeback "not traced"). Each
# entry: the names it may have (older kernels: writeback_dirty_page), its filter (MAJ, MIN:
# the device; DEV: its dev_t). The flusher's bios only: an O_DIRECT application's own bios
# are filtered out in the kernel (comm ~ "kworker/*"), so it pays no more than before.
ATTRIBUTION_EVENTS = (
    (("block/block_bio_queue",), 'dev == {dev} && comm ~ "kworker/*"'),
    (("writeback/writeback_dirty_folio", "writeback/writeback_dirty_page"),
     'name == "{major}:{minor}"'),
    (("writeback/writeback_single_inode_start",), 'name == "{major}:{minor}"'),
    (("writeback/writeback_single_inode",), 'name == "{major}:{minor}"'),
    (("task/task_newtask",), ""), (("task/task_rename",), ""))   # fork; exec, prctl: names
# what decodes the instance's pages (ringbuf.Layout), by the name a spool keeps it under
# (not `|`: the remote agent runs this file on the DUT host's python3, maybe < 3.9)
LAYOUT_FILES = dict({"header_page": "events/header_page",
                     "block_rq_issue.format": "events/block/block_rq_issue/format",
                     "block_rq_complete.format": "events/block/block_rq_complete/format"},
                    **{f"{name.split('/')[1]}.format": f"events/{name}/format"
                       for names, _ in ATTRIBUTION_EVENTS for name in names})
REQUIRED_LAYOUTS = ("header_page", "block_rq_issue.format", "block_rq_complete.format")
MOUNTS = Path("/proc/mounts")
MOUNT_HINT = "mount it with: mount -t tracefs nodev /sys/kernel/tracing"
# The trace clock: "mono" is CLOCK_MONOTONIC, so the capture's start can be read with
# time.clock_gettime_ns and event times put relative to it (raw pages carry its ns).
CLOCK = "mono"
PAGE_READ = 1 << 16          # a read of trace_pipe_raw returns one page
PIPE_BYTES = 1 << 20         # each CPU's splice pipe (fcntl F_SETPIPE_SZ): 256 pages a call
F_SETPIPE_SZ = 1031          # fcntl.F_SETPIPE_SZ (Linux; named in fcntl from Python 3.10)
# (the remote agent runs this file on the DUT host's python3: os.splice is 3.10+; older
# ones read every page, partly filled ones too)
SPLICE_FLAGS = getattr(os, "SPLICE_F_MOVE", 1) | getattr(os, "SPLICE_F_NONBLOCK", 2)


class TracefsError(RuntimeError):
    """tracefs is missing, or the instance cannot be made; the message names the fix."""


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived during a capture (raised so that `with` blocks unwind)."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def find_tracefs(mounts: Path | None = None) -> Path:
    """The tracefs mount point (from /proc/mounts), or TracefsError naming the fix."""
    mounts = mounts or MOUNTS
    try:
        lines = mounts.read_text().splitlines()
    except OSError as exc:
        raise TracefsError(f"cannot read {mounts} ({exc.strerror}) to find tracefs") from None
    found = [Path(f.split()[1].replace("\\040", " ")) for f in lines
             if len(f.split()) > 2 and f.split()[2] == "tracefs"]
    for root in found:
        if (root / "instances").is_dir():
            return root
    raise TracefsError(f"tracefs is not mounted ({mounts} lists no tracefs); {MOUNT_HINT} "
                       "(needs root; debugfs-only kernels mount it under "
                       "/sys/kernel/debug/tracing)")


def namespace_mark() -> str:
    """Our pid namespace's inode (pts.tools.liveness's mark; this file travels alone)."""
    with contextlib.suppress(OSError):
        return "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit()) or "0"
    return "0"


def instance_name(pid: int | None = None) -> str:
    return f"{PREFIX}{namespace_mark()}-{os.getpid() if pid is None else pid}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def stale_instances(names: list[str], alive: Callable[[int], bool] = pid_alive) -> list[str]:
    """Our instances whose capture process is gone (others' instances are never touched;
    a live pid, even if reused by another program, keeps its instance: we cannot tell)."""
    mark, stale = namespace_mark(), []
    for name in names:
        ns, _, pid = (name[len(PREFIX):] if name.startswith(PREFIX) else "").partition("-")
        stale += [name] if ns == mark and pid.isdigit() and not alive(int(pid)) else []
    return sorted(stale)


def clean_leftovers(root: Path, alive: Callable[[int], bool] = pid_alive) -> list[str]:
    """Remove the instances left by killed captures; returns their names."""
    base, removed = root / "instances", []
    for name in stale_instances([p.name for p in base.iterdir()], alive):
        with contextlib.suppress(FileNotFoundError):
            remove_instance(base / name)
            removed.append(name)
    return removed


def remove_instance(path: Path) -> None:
    """Stop and remove an instance; a reader still holding trace_pipe_raw makes rmdir fail
    with EBUSY for a moment after its close, so it is retried briefly."""
    with contextlib.suppress(OSError):
        (path / "tracing_on").write_text("0")
    for attempt in range(50):
        try:
            os.rmdir(path)
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or attempt == 49:
                raise
            time.sleep(0.02)


@contextlib.contextmanager
def on_signals(handler: Callable) -> Iterator[None]:
    """SIGINT and SIGTERM go to `handler` for the block; the previous handlers after it."""
    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def signals_raise() -> contextlib.AbstractContextManager:
    """For the capture's duration SIGINT and SIGTERM raise Interrupted (so the instance is
    removed by the unwinding `with`); the previous handlers are restored afterwards."""
    def handler(signum, frame):
        raise Interrupted(signum)
    return on_signals(handler)


def _read_ready(fd: int) -> bytes:
    """One page from a non-blocking trace_pipe_raw or pipe; b"" when none is ready."""
    try:
        return os.read(fd, PAGE_READ)
    except BlockingIOError:
        return b""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def task_names(proc: Path = Path("/proc")) -> dict[str, str]:
    """pid (as a string: JSON keys) -> comm of every task (threads too), from
    /proc/PID/task/TID/comm; tasks that end while it reads are skipped."""
    out = {}
    for comm in proc.glob("[0-9]*/task/[0-9]*/comm"):
        with contextlib.suppress(OSError):
            out[comm.parent.name] = comm.read_text().rstrip("\n")
    return out


class Instance:
    """A tracefs instance tracing block_rq_issue/complete of one whole device.

    The filter is the whole disk's dev_t only: requests on a partition are reported on the
    whole disk (the tracepoints record the request queue's disk, disk_devt(rq->q->disk), and
    the sector after partition remapping). Checked on this kernel: I/O on /dev/loop0p2
    (259:1) appeared as `7,0 ... 68568 + 8` with 68568 inside p2 (start 67584)."""

    def __init__(self, root: Path, dev_t: int, buffer_kb: int, name: str | None = None,
                 writeback: bool = True):
        self.root = root
        self.path = root / "instances" / (name or instance_name())
        self.dev_t = dev_t
        self.buffer_kb = buffer_kb
        self.writeback = writeback            # trace the ATTRIBUTION_EVENTS too
        self.kernel = os.uname().release      # the traced host's (an agent's: the DUT's)
        self.fds: list[int] = []
        self.pipes: list[tuple[int, int]] = []
        self.attribution: list[str] = []      # the ATTRIBUTION_EVENTS enabled

    def __enter__(self) -> Instance:
        try:
            self.path.mkdir()
        except FileExistsError:
            raise TracefsError(f"{self.path} exists: another capture of this process runs, "
                               f"or remove it with: rmdir {self.path}") from None
        except OSError as exc:
            raise TracefsError(f"cannot create the tracefs instance {self.path}: "
                               f"{exc.strerror} (needs root)") from None
        try:
            self._write("tracing_on", "0")   # made on: off until start(), none before it
            self._write("buffer_size_kb", str(self.buffer_kb))
            self._write("trace_clock", CLOCK)
            for event in EVENTS:
                self._write(f"events/{event}/filter", f"dev == {self.dev_t}")
                self._write(f"events/{event}/enable", "1")
            self.attribution = self._enable_attribution() if self.writeback else []
            self.fds = [os.open(f, os.O_RDONLY | os.O_NONBLOCK) for f in
                        sorted(self.path.glob("per_cpu/cpu*/trace_pipe_raw"))]
        except BaseException:
            self.close()
            raise
        return self

    def _enable_attribution(self) -> list[str]:
        """The writeback attribution's events this kernel has, enabled with their filters;
        one it lacks, or whose filter it refuses, is left off (said by its absence from
        the layouts kept: the decoding then names the writeback "not traced")."""
        on = []
        fill = {"dev": self.dev_t, "major": self.dev_t >> 20, "minor": self.dev_t & 0xFFFFF}
        for names, filt in ATTRIBUTION_EVENTS:
            for name in names:
                where = self.path / "events" / name
                if not (where / "format").is_file():
                    continue
                try:
                    if filt:
                        (where / "filter").write_text(filt.format(**fill))
                    (where / "enable").write_text("1")
                except OSError:
                    with contextlib.suppress(OSError):
                        (where / "enable").write_text("0")
                    break
                on.append(name)
                break
        return on

    def _write(self, rel: str, value: str) -> None:
        target = self.path / rel
        try:
            target.write_text(value)
        except OSError as exc:
            raise TracefsError(f"cannot write {value!r} to {target}: {exc.strerror} (does "
                               "this kernel have the block tracepoints? see "
                               f"{self.root}/available_events)") from None

    def start(self) -> int:
        """Turn tracing on; returns the CLOCK_MONOTONIC ns the event times count from, read
        before: every event recorded is later."""
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self._write("tracing_on", "1")
        return now

    def stop(self) -> None:
        self._write("tracing_on", "0")

    def clock(self) -> int:       # now, on the trace clock (CLOCK_MONOTONIC ns)
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC)

    def read_pages(self, most: int, full: bool = False) -> list[bytes]:
        """Per CPU, the ring buffer pages ready now (consumed), at most `most` each; never
        blocks. A page is returned as soon as it holds an event (partly filled); with
        `full`, only the pages the kernel has filled (moved by splice through a pipe)."""
        out = []
        full = full and hasattr(os, "splice")
        for cpu, fd in enumerate(self.fds):
            pages = []
            while len(pages) < most:
                if full:
                    r, w = self._pipe(cpu)
                    if not self._splice(fd, w, min(most - len(pages), PIPE_BYTES // 4096)):
                        break
                    while (page := _read_ready(r)):
                        pages.append(page)
                    continue
                page = _read_ready(fd)
                if not page:
                    break
                pages.append(page)
            out.append(b"".join(pages))
        return out

    def pages_to(self, files: list[int], partial: bool) -> int:
        """Move the ring buffer's filled pages of CPU i to the open file files[i], by
        splice (the kernel moves them: no copy, no decoding here); with `partial`, then the
        partly filled pages too (read). Never blocks; returns the bytes moved."""
        moved = 0
        for cpu, (fd, out) in enumerate(zip(self.fds, files, strict=True)):
            r, w = self._pipe(cpu)
            while (n := self._splice(fd, w, PIPE_BYTES // 4096)):
                moved += n
                while n:
                    n -= os.splice(r, out, n, flags=os.SPLICE_F_MOVE)
            while partial and (page := _read_ready(fd)):
                moved += len(page)
                _write_all(out, page)
        return moved

    def _pipe(self, cpu: int) -> tuple[int, int]:
        while len(self.pipes) <= cpu:
            r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            with contextlib.suppress(OSError):     # a smaller pipe only costs more calls
                fcntl.fcntl(w, F_SETPIPE_SZ, PIPE_BYTES)
            self.pipes.append((r, w))
        return self.pipes[cpu]

    @staticmethod
    def _splice(fd: int, pipe_w: int, pages: int) -> int:
        """Whole filled pages from a trace_pipe_raw into a pipe (0: none ready)."""
        try:
            return os.splice(fd, pipe_w, pages * 4096, flags=SPLICE_FLAGS)
        except BlockingIOError:
            return 0

    def formats(self) -> dict[str, bytes]:
        """The page and event layouts the pages are decoded with (LAYOUT_FILES)."""
        on = {f"events/{name}/format" for name in self.attribution}
        return {name: (self.path / rel).read_bytes() for name, rel in LAYOUT_FILES.items()
                if name in REQUIRED_LAYOUTS or rel in on}

    def comms(self) -> dict[str, str]:
        """Every task's name now (pid -> comm): a dirtier from before the capture (its
        task_newtask/task_rename cover the tasks started or renamed after)."""
        return task_names()

    @property
    def ncpus(self) -> int:       # the ring buffer's CPUs (a trace_pipe_raw each)
        return len(self.fds)

    def lost(self) -> int:
        """Events lost so far, all CPUs: the ring buffer's `overrun` (overwritten before
        read) plus `dropped events` (not recorded: buffer full in no-overwrite mode)."""
        total = 0
        for stats in (self.path / "per_cpu").glob("cpu*/stats"):
            for line in stats.read_text().splitlines():
                key, _, value = line.partition(":")
                if key.strip() in ("overrun", "dropped events"):
                    total += int(value.split()[0])
        return total

    def close(self) -> None:
        for fd in self.fds + [fd for pair in self.pipes for fd in pair]:
            os.close(fd)
        self.fds, self.pipes = [], []
        if self.path.exists():
            remove_instance(self.path)

    def __exit__(self, *exc) -> None:
        self.close()
