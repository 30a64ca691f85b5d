"""Real applications on a real file system, for the RWSW capture tests (issue 32 §5) and the
demo's --rwsw: an ext4 loop device mounted in a temporary folder, RocksDB's db_bench
(Debian rocksdb-tools) and PostgreSQL's pgbench (Debian postgresql-15) run on it, the
capture started beside them, and the kernel's own per-device counters.

- ext4_loop(): a /dev/shm loop device (tests.support.helpers.loop_device) with ext4 on it,
  mounted; unmounted and detached at the end
- db_bench(), DB_BENCH_ARGS: db_bench's run, its block cache small and its flush/compaction
  and reads O_DIRECT so that its I/O reaches the device (digest §9)
- postgres(): an initdb'd cluster on the file system, server started as the postgres user
  with a small shared_buffers, stopped at the end; pgbench_init(), pgbench()
- capturing(): `python -m pts capture` beside the block, started as a user does, tracing
  before the block runs and ended by SIGINT once it is over (the workload done), as a user
  ends it; start_capture(), wait_for_instance(), end_captures() are its steps
- ran_inside(): the guard of every test that compares a capture with what a workload did:
  the workload began and ended inside the capture's window, else a clear failure
- diskstats(): /sys/block/DEV/stat as integers
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pts.tools import commands
from pts.workload.capture import spool, tracefs
from pts.workload.capture.events import open_capture
from tests.support import postgres as pgserver
from tests.support.helpers import REPO, loop_device

# db_bench (rocksdb-tools 7.8.3): a 1 MiB block cache so reads miss it; reads, flushes and
# compactions O_DIRECT so they reach the block layer; no compression (plain sizes). The
# write-ahead log stays buffered (db_bench has no O_DIRECT WAL): its writeback is the
# kernel's (kworker), which the capture's process share shows (tests/data/rwsw/README.md).
DB_BENCH_ARGS = ("--value_size=400", "--cache_size=1048576", "--use_direct_reads=true",
                 "--use_direct_io_for_flush_and_compaction=true", "--compression_type=none",
                 "--threads=2")
PG_BIN = Path("/usr/lib/postgresql/15/bin")       # Debian's postgresql-15 server binaries


@contextlib.contextmanager
def ext4_loop(size: int = 512 << 20) -> Iterator[tuple[str, Path]]:
    """(device, mount point): ext4 made with its inode tables and journal initialised now
    (no ext4lazyinit writes during a capture) and mounted noatime."""
    with loop_device(size) as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                        dev], check=True, capture_output=True)
        mnt = Path(tempfile.mkdtemp(prefix="pts-apps-"))
        subprocess.run(["mount", "-o", "noatime", dev, str(mnt)], check=True,
                       capture_output=True)
        try:
            yield dev, mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
            with contextlib.suppress(OSError):
                mnt.rmdir()


def db_bench(db: Path, benchmarks: str, *, num: int = 200000, seconds: float | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess:
    """db_bench's `benchmarks` on the database folder `db` (kept between runs: fillrandom
    then readrandomwriterandom with --use_existing_db=1); `seconds` bounds each benchmark
    (--duration)."""
    argv = ["db_bench", f"--benchmarks={benchmarks}", f"--db={db}", f"--num={num}",
            *DB_BENCH_ARGS]
    if seconds is not None:
        argv.append(f"--duration={max(1, round(seconds))}")
    if db.exists() and any(db.iterdir()):
        argv.append("--use_existing_db=1")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr}"
    return done


def as_postgres(argv: list[str], timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """A server binary run as the postgres user (initdb and postgres refuse root)."""
    done = subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True,
                          text=True, timeout=timeout, **kw)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr}"
    return done


@contextlib.contextmanager
def postgres(mnt: Path, shared_buffers: str = "1MB") -> Iterator[Path]:
    """A PostgreSQL 15 cluster whose data folder is on the mounted file system, listening on
    a Unix socket only (in the data folder's parent), with a small shared_buffers so that
    page reads and checkpoint writes reach the block layer. Yields the socket folder.

    The postmaster is this process's child in the foreground (not daemonised by pg_ctl), with
    the parent-death signal set as tests/support/postgres.py's server has it: whatever kills
    the tests, kill -9 included, the kernel stops it (a pg_ctl-started one outlived them)."""
    home = mnt / "postgres"          # the postgres user's: data, socket, server log
    data, sock = home / "data", home / "sock"
    for d in (home, data, sock):
        d.mkdir()
        shutil.chown(d, "postgres", "postgres")
    as_postgres([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                 "--no-sync"])
    argv = [str(PG_BIN / "postgres"), "-D", str(data), "-c", f"shared_buffers={shared_buffers}",
            "-c", "listen_addresses=", "-c", f"unix_socket_directories={sock}",
            "-c", "fsync=on"]
    with open(home / "server.log", "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=pgserver.server_env(),
                                preexec_fn=pgserver.as_account(pwd.getpwnam("postgres")))
    try:
        deadline = time.monotonic() + pgserver.READY_S
        while subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_isready"),
                              "-q", "-h", str(sock)], capture_output=True).returncode != 0:
            assert proc.poll() is None, \
                f"postgres exited ({proc.returncode}): {(home / 'server.log').read_text()}"
            assert time.monotonic() < deadline, f"postgres not ready in {pgserver.READY_S} s"
            time.sleep(0.1)
        yield sock
    finally:
        proc.send_signal(signal.SIGINT)             # fast shutdown
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pgbench_init(sock: Path, scale: int = 2) -> None:
    as_postgres([str(PG_BIN / "pgbench"), "-h", str(sock), "-i", "-q", "-s", str(scale),
                 "postgres"])


def pgbench(sock: Path, seconds: int, clients: int = 2) -> subprocess.CompletedProcess:
    """The TPC-B-like transaction for `seconds`."""
    return as_postgres([str(PG_BIN / "pgbench"), "-h", str(sock), "-c", str(clients), "-j",
                        str(clients), "-T", str(seconds), "postgres"])


# The --seconds of a capture a test ends with SIGINT once its workload is done: only a
# bound (the capture ends there on its own, decoding what it traced); tests never wait on it.
BOUND_S = 600


def start_capture(dev: str, out: Path, seconds: float, *extra: str) -> subprocess.Popen:
    """`python -m pts capture DEV --seconds N -o OUT ...` as a user runs it; it gets SIGTERM
    from the kernel when this process ends (PR_SET_PDEATHSIG): however the test dies, the
    capture ends too (cleanly: its instance removed)."""
    return subprocess.Popen([sys.executable, "-m", "pts", "capture", dev, "--seconds",
                             str(seconds), "-o", str(out), *extra], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: commands.set_parent_death_signal(signal.SIGTERM))


def wait_tracing(proc: subprocess.Popen, timeout: float = 30) -> None:
    """Once the capture `proc` traces: its spool's descriptor exists (the capture writes it
    right after turning tracing on: pts/workload/capture.py). Fails if it exits first."""
    argv = [str(a) for a in proc.args]
    meta = spool.spool_of(REPO / argv[argv.index("-o") + 1]) / spool.META
    end = time.monotonic() + timeout
    while not meta.is_file():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, f"the capture did not start tracing in {timeout} s"
        time.sleep(0.02)


def wait_for_instance(proc: subprocess.Popen, timeout: float = 30) -> Path:
    """The capture's tracefs instance, once tracing is on (wait_tracing)."""
    wait_tracing(proc, timeout)
    path = tracefs.find_tracefs() / "instances" / tracefs.instance_name(proc.pid)
    assert path.is_dir(), f"the capture traces, but not in {path}"
    return path


def end_captures(*procs: subprocess.Popen, timeout: float = 120) -> list[str]:
    """SIGINT to every capture (all at once: they end and decode side by side), then each
    one's stdout once it exited 0 (its stderr in the failure)."""
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, stderr
        out.append(stdout)
    return out


@dataclass
class Capturing:
    proc: subprocess.Popen
    instance: Path               # its tracefs instance (gone once it ended)
    stdout: str = ""             # set when it ended


@contextlib.contextmanager
def capturing(dev: str, out: Path, *extra: str) -> Iterator[Capturing]:
    """`python -m pts capture DEV -o OUT ...` tracing before the block runs, ended by SIGINT
    after it (unless the block did: end_captures); the bound BOUND_S is never reached. An
    error in the block ends it with SIGTERM (its instance removed) and is raised."""
    proc = start_capture(dev, out, BOUND_S, *extra)
    try:
        cap = Capturing(proc, wait_for_instance(proc))
        yield cap
    except BaseException:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if proc.returncode is None:
        (cap.stdout,) = end_captures(proc)


def ran_inside(capture: Path, began: float, ended: float, what: str) -> None:
    """Fail, naming both windows, unless the workload ran inside the capture's window.

    `began`: time.time() just before the workload started; `ended`: time.time() once it was
    over (its process exited, and whatever the test compares was read: the file system
    synced, /sys/block stat read). The capture's window is its descriptor's: from
    `started_unix` (issue_ns 0) for `seconds` (tracing stops when the capture sees the
    SIGINT that ends it, or at its --seconds). The tests end their captures after the
    workload (capturing()), so this fails only when a capture ended on its own first (its
    bound reached, or it failed): a count would otherwise not match, or pass on a
    truncated capture; this says what happened instead. It costs no time."""
    info = open_capture(capture).info
    start, stop = info.started_unix, info.started_unix + info.seconds
    if began < start or ended > stop:
        raise AssertionError(
            f"{what} ran from {began - start:+.2f} s to {ended - start:+.2f} s of the capture "
            f"{capture.name}, whose window is 0 to {info.seconds:g} s: the workload did not "
            f"{'start' if began < start else 'end'} inside the capture (a slow or loaded "
            "machine?), so the capture is not of the whole workload and nothing measured "
            "from it can be compared")


def diskstats(dev: str) -> np.ndarray:
    """/sys/block/X/stat: reads completed, merged, sectors read, ms, writes completed,
    merged, sectors written, ... (Documentation/block/stat.rst)."""
    return np.array((Path("/sys/block") / Path(dev).name / "stat").read_text().split(),
                    dtype=np.int64)


def sync_fs(mnt: Path) -> None:
    """Write the file system's dirty pages and journal now (syncfs on the mount)."""
    fd = os.open(mnt, os.O_RDONLY)
    try:
        if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0:   # (no os.syncfs in Python)
            raise OSError(ctypes.get_errno(), f"syncfs {mnt}")
    finally:
        os.close(fd)
