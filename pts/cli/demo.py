"""`python -m pts demo`: the IOPS test on an emulated SSD with short points, then the path
of its report.pdf as the last line. A demonstration, declared as such on the report.

`--rwsw`: RWSW from a real application instead (issue 32 §5): RocksDB's db_bench on ext4 on
a loop device the demo makes (in /dev/shm), captured (`python -m pts capture`), its Applied
Test Workload derived (`python -m pts workload`) and run as rwsw-wsat on the emulated SSD;
the capture and the ATW are kept beside the run folder (tests/data/rwsw/README.md: what
such a capture holds)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pts.config import option_table
from pts.emulate import system
from pts.tools import commands
from pts.workload.capture import local, tracefs
from pts.workload.capture import spool as spooling

REPO = Path(__file__).resolve().parents[2]
# Short points and a reduced matrix keep the demo to a few minutes; the tracking cells stay.
# 1 s points: 226 s here (2 s: about 270 s); the fall from the post-WIPC level and steady
# state by round 7 show all the same (tests/e2e/test_demo.py).
# --power emulated: the emulated SSD's power model, so the report has its Power page (issue 51)
DEMO_ARGS = ["--point-seconds", "1", "--max-rounds", "12", "--power", "emulated",
             "--iops-block-sizes", "1024KiB,64KiB,4KiB", "--iops-rw-mixes", "100/0,65/35,0/100"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Run the PTS IOPS test on an emulated SSD made for the purpose (short "
                     "points, reduced matrix: a demonstration, never a compliant run) and print "
                     "the path of report.pdf. With --rwsw: capture a real application "
                     "(RocksDB's db_bench), derive its workload and run it as the RWSW "
                     "Multi-WSAT (rwsw-wsat) on the emulated SSD instead.")
    # 512 MiB: its over-provisioned space lasts into the first round, so the fall from the
    # post-WIPC state to steady state shows in the convergence plot.
    p.add_argument("--rwsw", action="store_true",
                   help="RWSW instead of the IOPS test: capture RocksDB's db_bench (Debian "
                   "rocksdb-tools) for about 12 s on an ext4 loop device the demo makes in "
                   "/dev/shm (needs root and tracefs), derive its Applied Test Workload and "
                   "run it as rwsw-wsat (1 s rounds, 10 rounds) on the emulated SSD; the "
                   "capture and the ATW are kept in REPORTS_DIR/rwsw-demo-<time>/. A few "
                   "minutes")
    p.add_argument("--size", default="512M", help="emulated SSD size (default %(default)s)")
    p.add_argument("--profile", default="default", help="emulator profile (default %(default)s)")
    p.add_argument("--reports-dir", default=str(REPO / "reports"),
                   help="where the run folder goes (default %(default)s)")
    for flag, text in MIRRORED.items():
        p.add_argument(flag, metavar=option_table.BY_FLAG[flag].metavar, default=None,
                       help=text)


# The run's options the demo takes and passes to its pytest run as they are (their rows in
# pts.config.option_table: name, metavar), with the demo's help; the PTS-E 1.0 §5 report
# fields' help is pytest --help's
SERVE_FIELDS = ("--serve", "--serve-auth-file")
MIRRORED = {
    "--serve": "watch the run in a browser: the lab dashboard on this port while the demo "
               "runs (pytest --serve; a HOST beyond loopback needs --serve-auth-file)",
    "--serve-auth-file": "with --serve: the dashboard's user:password file, chmod 600 "
                         "(pytest --serve-auth-file; docs/dashboard-auth.md)",
    **{flag: f"passed to the run as {flag} (report page 1; pytest --help)"
       for flag in option_table.REPORT_FIELDS}}


def report_args(args: argparse.Namespace, flags=option_table.REPORT_FIELDS) -> list[str]:
    """The mirrored options given to the demo (the report fields by default), for its
    pytest run; a file is named by its absolute path (the run starts in the repository)."""
    out = []
    for flag in flags:
        row = option_table.BY_FLAG[flag]
        value = getattr(args, row.name)
        if value is not None:
            out += [flag, str(Path(value).resolve()) if row.metavar.startswith("FILE")
                    else value]
    return out


def run(args: argparse.Namespace) -> int:
    reports = Path(args.reports_dir).resolve()
    if args.rwsw:
        try:
            workload = rwsw_workload(reports)
        except (commands.ToolMissing, system.CommandError, tracefs.TracefsError,
                RuntimeError) as exc:
            print(f"demo --rwsw: {exc}", file=sys.stderr)
            return 2
        target, extra = "pts/suite/test_rwsw.py", ["-k", "rwsw_wsat", "--workload",
                                                   str(workload), *RWSW_ARGS]
    else:
        target, extra = "pts/suite/test_iops.py", DEMO_ARGS
    before = set(reports.glob("*/*/report.pdf"))
    argv = [sys.executable, "-m", "pytest", target, "-p", "no:cacheprovider",
            "--device", f"emulated:{args.size}:{args.profile}", "--destructive",
            "--purge", "auto", "--reports-dir", str(reports), *extra, *report_args(args),
            *report_args(args, SERVE_FIELDS)]
    print("running:", " ".join(argv), flush=True)
    proc = run_pts(argv)
    new = sorted(set(reports.glob("*/*/report.pdf")) - before, key=lambda p: p.stat().st_mtime)
    if not new:
        print(f"demo: no report was written (pytest exit status {proc.returncode})",
              file=sys.stderr)
        return proc.returncode or 1
    print(f"PDF report: {new[-1]}")
    return 0


# --rwsw: 1 s rounds, the time limit at round 10 (rwsw-wsat's stop rule; steady state is
# judged over the last 5 rounds and shown, not required)
RWSW_ARGS = ["--point-seconds", "1", "--wsat-hours", repr(10 / 3600)]
# The capture runs until db_bench has ended and its writes are synced, then SIGINT ends its
# tracing and it keeps everything traced (pts capture, docs/capture.md): no fixed window for a
# run whose length depends on the machine (a 12 s window caught 184 I/Os of db_bench on a
# loaded 2-core machine). CAPTURE_MAX_S only bounds it should db_bench hang.
CAPTURE_MAX_S = 600
# db_bench as tests/support/apps.py runs it (tests/data/rwsw/README.md): a 1 MiB block cache
# and O_DIRECT reads/flushes/compactions so its I/O reaches the device, no compression
DB_BENCH = ["--num=100000", "--value_size=400", "--cache_size=1048576",
            "--use_direct_reads=true", "--use_direct_io_for_flush_and_compaction=true",
            "--compression_type=none", "--threads=2"]


def rwsw_workload(reports: Path) -> Path:
    """Capture db_bench on an ext4 loop device made for it, derive the ATW; its path."""
    db_bench = commands.require("db_bench", "rocksdb-tools")
    commands.require("mkfs.ext4", "e2fsprogs")
    for tool in ("mount", "umount"):        # the ext4 the capture watches (package mount)
        commands.require(tool, "mount")
    if os.geteuid() != 0:
        raise RuntimeError("capturing needs root (loop devices, tracefs): run it as root")
    local.mounted_tracefs()                  # mounted for the demo when it is not
    work = reports / time.strftime("rwsw-demo-%Y%m%dT%H%M%S")
    work.mkdir(parents=True)
    capture, atw = work / "db_bench.parquet", work / "db_bench.toml"
    with ext4_loop() as (dev, mnt):
        cap = start_capture(dev, capture)
        try:
            run_db_bench(db_bench, cap, dev, mnt, capture)
        finally:
            if cap.poll() is None:       # ends the tracing; what was traced is decoded, kept
                cap.send_signal(signal.SIGINT)
            cap.wait(timeout=CAPTURE_MAX_S)
        if cap.returncode != 0:
            raise RuntimeError(f"the capture failed (exit status {cap.returncode})")
    done = run_pts([sys.executable, "-m", "pts", "workload", str(capture), "--step", "1",
                    "-o", str(atw)])
    if done.returncode != 0:
        raise RuntimeError(f"python -m pts workload {capture} failed")
    return atw


def run_pts(argv: list[str]) -> subprocess.CompletedProcess:
    """The demo's pytest run, or `pts workload`, to its end from the checkout; SIGTERM (the
    suite's interrupted path) when the demo dies, kill -9 too: it ran on without it."""
    return subprocess.run(argv, cwd=REPO, preexec_fn=commands.on_parent_death(signal.SIGTERM))


def start_capture(dev: str, capture: Path) -> subprocess.Popen:
    """`pts capture` of `dev` into `capture`, ending with this process: SIGTERM (its tracing
    ends, what it traced is kept, its instance removed) when the demo dies, kill -9 too; it
    used to run on to CAPTURE_MAX_S."""
    return subprocess.Popen([sys.executable, "-m", "pts", "capture", dev, "--seconds",
                             str(CAPTURE_MAX_S), "--step", "1", "-o", str(capture)], cwd=REPO,
                            preexec_fn=commands.on_parent_death(signal.SIGTERM))


def run_db_bench(db_bench: str, cap: subprocess.Popen, dev: str, mnt: Path,
                 capture: Path) -> None:
    """fillrandom then readrandomwriterandom (3 s), once the capture is tracing: its spool's
    meta file is written right after tracing_on (was: 0.3 s after its tracefs instance
    appeared, which a loaded host can outlast: db_bench's first I/O then went untraced)."""
    meta = spooling.spool_of(capture) / spooling.META
    while not meta.is_file():
        if cap.poll() is not None:
            raise RuntimeError(f"the capture ended early (exit status {cap.returncode})")
        time.sleep(0.05)
    print(f"capturing {dev} while db_bench runs on it", flush=True)
    for bench in ("fillrandom", "readrandomwriterandom --use_existing_db=1 --duration=3"):
        system.run([db_bench, f"--db={mnt / 'db'}", f"--benchmarks={bench.split()[0]}",
                    *bench.split()[1:], *DB_BENCH], timeout=120)
    system.run(["sync", "-f", str(mnt)])              # buffered writes reach the device


@contextlib.contextmanager
def ext4_loop(size: int = 512 << 20):
    """(device, mount point): a sparse file in /dev/shm, a loop device over it (ours, found
    free by losetup), ext4 on it mounted in a temporary folder; all removed at the end."""
    backing = Path("/dev/shm") / f"snia-pts-demo-rwsw-{os.getpid()}.img"
    with open(backing, "wb") as fh:
        fh.truncate(size)
    mnt = Path(tempfile.mkdtemp(prefix="snia-pts-demo-rwsw-"))
    try:
        dev = system.attach_loop(str(backing))
        try:
            system.run(["mkfs.ext4", "-q", "-F", "-E",
                        "lazy_itable_init=0,lazy_journal_init=0", dev], timeout=120)
            system.run(["mount", "-o", "noatime", dev, str(mnt)])
            try:
                yield dev, mnt
            finally:
                system.run(["umount", str(mnt)])
        finally:
            system.detach_loop(dev, str(backing))
    finally:
        mnt.rmdir()
        backing.unlink(missing_ok=True)
