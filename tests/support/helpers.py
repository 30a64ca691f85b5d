"""Helpers shared by the project's tests (tests/unit, tests/e2e, tests/report).

Test modules import what they share from here (never from conftest.py, never from another
test module); conftest.py keeps fixtures and hooks only. Two helpers have their own module:
tests/support/synthetic/runfactory.py (synthetic run folders) and tests/support/ptsrun.py (the
suite run
as a user runs it, `python -m pytest pts/ ...`).

- paths: REPO, DATA, RECORDED (ATA/SCSI tool outputs), QEMU_DATA (nvme-cli outputs)
- TOOLS: every tool the tests run -> its Debian package (the needs marker, the install test)
- loop devices: loop_device(), detach_if_ours(); scratch_file() names a /dev/shm file after
  its test process, sweep_scratch() removes those of dead test processes
- processes: alive() (there and not a zombie)
- reading a report: pdf_text(), pdf_pages()
- faking an external tool (hdparm, sg3_utils, sdparm, nvme-cli): RecordedRunner + Reply,
  fed with recorded outputs; FakeClock for code that polls
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pts.tools import commands, liveness

REPO = Path(__file__).resolve().parents[2]
# The report's Report Date is the date it is rendered; the project's tests (tests/conftest.py)
# and the page baselines (tests/data/make_reference_run.py) fix it with SOURCE_DATE_EPOCH
# (pts.stored.report_fields) so that a re-render gives the same bytes: 2026-11-22.
REPORT_EPOCH = "1795305600"
DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = DATA / "recorded"          # hdparm, sg3_utils, sdparm (README: provenance)
QEMU_DATA = DATA / "qemu-7.2"         # nvme-cli against QEMU 7.2's NVMe (README: provenance)

# tool -> the Debian package that ships it; README command 2 installs every one of these
# packages (tests/unit/test_install_command.py checks it, and the mapping against dpkg)
TOOLS = {"fio": "fio", "blkdiscard": "util-linux", "blockdev": "util-linux",
         "partx": "util-linux", "mkswap": "util-linux", "unshare": "util-linux",
         "losetup": "mount", "mount": "mount",
         "umount": "mount", "swapon": "mount", "swapoff": "mount",
         "pdftotext": "poppler-utils", "mkfs.ext4": "e2fsprogs", "fusermount3": "fuse3",
         "sfdisk": "fdisk", "pgrep": "procps", "pkill": "procps",
         "qemu-system-x86_64": "qemu-system-x86", "busybox": "busybox-static", "cpio": "cpio",
         "depmod": "kmod"}
TOOLS["pdftoppm"] = "poppler-utils"      # page snapshots (tests/support/snapshots.py)
TOOLS["pdfinfo"] = "poppler-utils"       # page counts (pdf_pages)
# sshd, ssh and keys of the loopback client/server test (tests/e2e/test_remote_loopback.py)
TOOLS |= {"ssh": "openssh-client", "ssh-keygen": "openssh-client", "sshd": "openssh-server"}
# the HTML report and the dashboard in a real browser (tests/e2e/test_browser_report.py)
TOOLS |= {"chromium": "chromium", "chromedriver": "chromium-driver"}
# DUT hosts in network namespaces of their own (tests/support/remote_hosts.py, test_lab_hosts.py)
TOOLS["ip"] = "iproute2"
# a real read of this machine's host adapters (tests/unit/test_system_facts.py)
TOOLS["lspci"] = "pciutils"
# the SATA and SCSI disks of the QEMU guest, driven for real (tests/e2e/test_qemu_sata_sas.py)
TOOLS |= {"hdparm": "hdparm", "sdparm": "sdparm", "sg_format": "sg3-utils",
          "sg_sanitize": "sg3-utils", "smartctl": "smartmontools"}
# real holders in the QEMU guest (tests/e2e/test_qemu_holders.py)
TOOLS |= {"mdadm": "mdadm", "lvm": "lvm2", "dmsetup": "dmsetup"}
# real applications captured for RWSW (tests/support/apps.py, tests/e2e/test_rwsw_apps.py)
TOOLS |= {"db_bench": "rocksdb-tools", "pgbench": "postgresql-15", "runuser": "util-linux"}
# a real IPMI BMC simulator and ipmitool against it (tests/support/bmc_simulators.py,
# tests/power/test_bmc.py)
TOOLS |= {"ipmi_sim": "openipmi", "ipmitool": "ipmitool"}
# Requirements met by files at these paths, not by a name on PATH: Debian's /usr/bin/pgbench
# is postgresql-client-common's pg_wrapper, there without postgresql-15 (no server at all);
# a test that needs pgbench runs postgresql-15's binaries by path (tests/support/postgres.py,
# apps.py: initdb, pg_ctl, postgres, pgbench). tests/conftest.py checks these.
PG15_BIN = Path("/usr/lib/postgresql/15/bin")
BINARIES = {"pgbench": ("pgbench", "initdb", "pg_ctl", "postgres")}
BINARY_DIRS = {"pgbench": PG15_BIN}


def unmet_binaries(requirement: str) -> str | None:
    """Why `requirement` (a key of BINARIES) is not met here, or None."""
    folder = BINARY_DIRS[requirement]
    missing = [n for n in BINARIES[requirement] if not os.access(folder / n, os.X_OK)]
    if not missing:
        return None
    return (f"needs {requirement} with its server: {', '.join(missing)} not in {folder} "
            f"(apt-get install {TOOLS[requirement]}; the {requirement} on PATH may be "
            "postgresql-client-common's wrapper alone)")


# ------------------------------------------------------------------------- loop devices

@contextlib.contextmanager
def loop_device(size: int = 64 << 20, sector: int = 512,
                partitioned: bool = False) -> Iterator[str]:
    """A loop device over a sparse file in /dev/shm; detaches only itself (see
    detach_if_ours) and removes its file."""
    backing = scratch_file("pts-test", size)
    argv = ["losetup", "--find", "--show", "--direct-io=on", f"--sector-size={sector}"]
    if partitioned:
        argv.append("--partscan")
    try:
        dev = subprocess.run(argv + [str(backing)], check=True, capture_output=True,
                             text=True).stdout.strip()
        try:
            yield dev
        finally:
            detach_if_ours(dev, backing)
    finally:
        backing.unlink(missing_ok=True)


SCRATCH = Path("/dev/shm")
# pts-test-<ns>-<pid>-<hex>.img (loop_device) and pts-guest-nvme-<ns>-<pid>-<hex>.img (the
# guest's disks): <ns> the pid namespace (pts.tools.liveness.namespace_mark), as a pid means
# something only in its own: a test session in a container beside ours has its own pids
SCRATCH_NAME = re.compile(r"^pts-(?:test|guest-nvme)-(\d+)-(\d+)-[0-9a-f]{8}\.img$")


def scratch_file(prefix: str, size: int, directory: Path = SCRATCH) -> Path:
    """A new sparse file of `size` bytes, named after this test process (its pid namespace
    and pid), so that sweep_scratch can tell a dead session's files (pytest killed, a CI job
    cut off while its QEMU guest ran: 64 MiB of RAM each in /dev/shm) from a live one's."""
    mark = liveness.namespace_mark()
    path = Path(directory) / f"{prefix}-{mark}-{os.getpid()}-{uuid.uuid4().hex[:8]}.img"
    with open(path, "xb") as fh:
        fh.truncate(size)
    return path


def sweep_scratch(directory: Path = SCRATCH, sys_block: Path = Path("/sys/block")) -> list[Path]:
    """Remove the scratch files of this pid namespace's test processes that are gone,
    detaching the loop devices still bound to them (only those: the binding names the file);
    a live process's files, and another namespace's, are never touched. The files removed."""
    removed = []
    mark = liveness.namespace_mark()
    for path in sorted(Path(directory).glob("pts-*.img")):
        m = SCRATCH_NAME.match(path.name)
        if m is None or m[1] != mark or Path(f"/proc/{m[2]}").exists():    # its process runs
            continue
        for bound in sys_block.glob("loop*/loop/backing_file"):
            with contextlib.suppress(OSError):
                if bound.read_text().strip().removesuffix(" (deleted)") == str(path):
                    detach_if_ours(f"/dev/{bound.parent.parent.name}", path)
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def detach_if_ours(dev: str, backing: Path) -> None:
    """Detach `dev` only while it is still bound to our backing file: a test may have
    detached it already, and the kernel may have given the number to someone else since."""
    bound = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
    try:
        if bound.read_text().strip() != str(backing):
            return
    except OSError:
        return
    with contextlib.suppress(subprocess.CalledProcessError):
        subprocess.run(["losetup", "-d", dev], check=True, capture_output=True)


# ------------------------------------------------------------------------- reports

def alive(pid: int) -> bool:
    """The process is there and not a zombie (a dead child its parent has not reaped yet):
    what a test that killed something, or had it killed, waits to see false."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def ledger_by_test(folder: Path) -> dict[str, list[dict]]:
    """The run folder's ledger.jsonl, its records as stored (dicts), by test (None: the
    run's own records)."""
    by_test: dict[str, list[dict]] = {}
    for line in (folder / "ledger.jsonl").read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            by_test.setdefault(rec.get("test"), []).append(rec)
    return by_test


def of(recs: list[dict], kind: str) -> list[dict]:
    """The records of one type."""
    return [r for r in recs if r["type"] == kind]


def pdf_text(path: Path | str, layout: bool = False) -> str:
    """The PDF's text (pdftotext, poppler-utils) with all whitespace runs made single spaces
    (paragraphs wrap); layout=True keeps table rows on one line (cells in page order)."""
    argv = ["pdftotext"] + (["-layout"] if layout else []) + [str(path), "-"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return re.sub(r"\s+", " ", out)


def pdf_page_texts(path: Path | str, layout: bool = False) -> list[str]:
    """Text of each page (pdftotext separates pages with a form feed), whitespace runs made
    single spaces unless layout."""
    argv = ["pdftotext"] + (["-layout"] if layout else []) + [str(path), "-"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    texts = out.split("\f")
    return texts if layout else [re.sub(r"\s+", " ", t) for t in texts]


def report_page_texts(folder: Path) -> list[str]:
    """The run folder's report built to folder/report.pdf, the text of each page in layout
    (table rows on one line)."""
    from pts.report.document import build_pdf
    from pts.stored.data import load_run
    pdf = folder / "report.pdf"
    pdf.write_bytes(build_pdf(load_run(folder)))
    return pdf_page_texts(pdf, layout=True)


def page_headed(pages: list[str], heading: str) -> str:
    """The first page with a line that is `heading` alone."""
    found = [p for p in pages if re.search(rf"^{re.escape(heading)}\s*$", p, re.M)]
    assert found, f"no page with the heading {heading!r}"
    return found[0]


def table_row(text: str, first: str) -> list[str]:
    """The cells (split at 2+ spaces) after the first cell of the first row whose first cell
    is `first` (a layout pdftotext page)."""
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] == first:
            return cells[1:]
    raise AssertionError(f"no row {first!r} in:\n{text}")


def pdf_pages(path: Path | str) -> int:
    """The PDF's page count, as pdfinfo (poppler-utils) reads it."""
    out = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True,
                         text=True).stdout
    (pages,) = re.findall(r"^Pages:\s+(\d+)$", out, re.M)
    return int(pages)


# ------------------------------------------------------------------------- external tools

@dataclass(frozen=True)
class Reply:
    """One answer of a faked tool. Output comes from recorded files (`out` for stdout, `err`
    for stderr, named relative to the runner's data folder) or, where the test builds it
    (JSON with one field changed), from `stdout`/`stderr` text. `raise_` raises instead
    (Ctrl-C, a timeout)."""
    out: str = ""
    err: str = ""
    rc: int = 0
    raise_: BaseException | None = None
    stdout: str = ""
    stderr: str = ""
    raw: bytes = b""       # what a command writing to a file (stdout_path) writes there


class RecordedRunner:
    """Stands in for pts.tools.commands.run: answers from recorded tool outputs, touches no
    device. `script` maps argv prefixes to replies; the longest matching prefix answers, its
    replies are consumed in order and the last one repeats. A command no prefix matches
    fails the test (it would have reached a real device). Every call is kept, as an argv
    tuple, in `calls` (and its timeout in `timeouts`); a non-zero exit raises ToolFailed as
    commands.run does, unless check=False.

    Pass it as `run=` where the code takes one (hdparm, sg3_utils, sdparm), or install() it
    in place of commands.run (nvme-cli)."""

    def __init__(self, script: Mapping[tuple[str, ...], Sequence[Reply]],
                 data: Path = RECORDED):
        self.script = {k: list(v) for k, v in script.items()}
        self.data = data
        self.calls: list[tuple[str, ...]] = []
        self.timeouts: list[float | None] = []

    def install(self, monkeypatch) -> RecordedRunner:
        """Replace commands.run (and the PATH check of commands.require) for the test."""
        monkeypatch.setattr(commands, "run", self)
        monkeypatch.setattr(commands, "require", lambda tool, package: tool)
        return self

    def _read(self, name: str) -> str:
        return (self.data / name).read_text() if name else ""

    def _replies(self, argv: tuple[str, ...]) -> list[Reply]:
        keys = [k for k in self.script if argv[:len(k)] == k]
        assert keys, f"unexpected command (would touch a device): {argv}"
        return self.script[max(keys, key=len)]

    def __call__(self, argv, *, log_file=None, timeout=None, check=True, stdout_path=None):
        argv = tuple(argv)
        self.calls.append(argv)
        assert len(self.calls) < 200, "runaway polling: the code under test never stops"
        self.timeouts.append(timeout)
        replies = self._replies(argv)
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if reply.raise_ is not None:
            raise reply.raise_
        if stdout_path is not None:      # nvme get-log --raw-binary: the bytes to the file
            Path(stdout_path).write_bytes(reply.raw or (
                (self.data / reply.out).read_bytes() if reply.out else b""))
            result = commands.CommandResult(argv, reply.rc, "", reply.stderr
                                            + self._read(reply.err), 0.1)
        else:
            result = commands.CommandResult(argv, reply.rc, reply.stdout + self._read(reply.out),
                                            reply.stderr + self._read(reply.err), 0.1)
        if check and reply.rc != 0:
            raise commands.ToolFailed(f"{argv[0]} exited with status {reply.rc}: "
                                      f"{' '.join(argv)}\n{result.excerpt()}", result)
        return result


class FakeClock:
    """A monotonic clock and its sleep, for code that polls: sleeping advances the time at
    once, and every sleep is kept."""

    def __init__(self, now: float = 0.0):
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now: only for a program that cannot
    take port 0 and say which it got (sshd, fio --server); another process may take it
    before that program binds it, which the caller must detect (it exits, or says so)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_url(line: str, proc: subprocess.Popen) -> str:
    """The base URL (no trailing /) `python -m pts serve` printed on `line`, its first."""
    m = re.match(r"snia-pts dashboard: (http://127\.0\.0\.1:\d+)/ ", line)
    assert m, f"not the dashboard's address: {line!r} (exit {proc.poll()})"
    return m[1]


def wait_serving(base: str, proc: subprocess.Popen, deadline: float = 30) -> None:
    """Until the dashboard at `base` answers (it listens before printing its address, and
    answers once uvicorn runs)."""
    import time
    import urllib.request
    end = time.monotonic() + deadline
    while True:
        try:
            with urllib.request.urlopen(base + "/metrics", timeout=5):
                return
        except OSError:
            assert time.monotonic() < end and proc.poll() is None, "the server did not start"
            time.sleep(0.1)


@contextlib.contextmanager
def serving(root: Path) -> Iterator[str]:
    """`python -m pts serve ROOT` started as a user starts it; yields its base URL once it
    answers, stops it at the end (within its 3 s grace, open event streams or not). On a
    port the kernel picks (--port 0, the URL read from its first line): a port probed free
    first could be taken by another test or program before the server binds it."""
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "pts", "serve", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = served_url(proc.stdout.readline(), proc)
        wait_serving(base, proc)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
