"""Faults, measured (issue 23 §3): `python benchmarks/faults.py`.

    python benchmarks/faults.py [--only NAME[,NAME...]] [--kills 10] [--seed N]

Each fault is injected into a real run of the suite (`python -m pytest pts/ ...`, as a user
runs it) on a device made for the purpose: a loop device over a file in /dev/shm, an
emulated SSD (`emulated:64M`), or a loop device behind a DUT host of this machine (its own
sshd and `fio --server` on 127.0.0.1, tests/support/remote_hosts.py). Then what a user does
next is done (the device re-attached, space freed, the server restarted) and the run is
`--resume`d. Per fault one row:

- injected: what was done, and when (the run's state at that moment);
- detected: the first line of the run's error as the user sees it (exit status, message);
- lost: completed units (rounds, WSAT samples, HIR wait states, XSR access groups, DIRTH/CBW
  operating points and histograms, test ends; tests/support/campaign.py) recorded before the fault
  and missing or changed in the run folder afterwards: must be 0;
- twice: completed units recorded more than once: must be 0;
- fio left: stops after which a fio of the run outlived the suite (the kill rows: any
  process of the run, fio, a gate script or a holder of the drive, 10 s after the kill;
  and, for kill-gate, a gate folder or ceiling device left at the end): must be 0;
- resumed: how `--resume` ended (the verdict the recorded rounds give, or its refusal when
  the device cannot come back: an emulated SSD does not outlive its session).

kill-gate kills the suite between two pipelined points (issue 38 §1: while a point's
threads wait at the gate, and in a point's postrun), with the host ceiling on, and says how
long after each kill nothing of the run was left. The kill -9 rows stop ONE run of each
test type at --kills seeded random moments (tests/support/campaign.py), resuming after each.
Needs root, fio, losetup, blkdiscard, fuse3 and mfusepy (emulated SSD), ssh/sshd (remote
rows). Prints one JSON line per fault, then a Markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from pts.emulate import lifecycle  # noqa: E402
from tests.support import remote_hosts  # noqa: E402
from tests.support.campaign import (  # noqa: E402
    GATE_DONE,
    GATE_WAIT,
    Tally,
    fio_gone,
    kill_campaign,
    ledger_records,
)
from tests.support.helpers import loop_device  # noqa: E402
from tests.support.ptsrun import expected_outcomes, spec_variant, start_suite  # noqa: E402

LOGS = Path(os.environ["FAULT_LOGS"]) if os.environ.get("FAULT_LOGS") else None
SUITE = "pts/suite"
IOPS = f"{SUITE}/test_iops.py"
SHORT = ["--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "6", "--purge", "trim",
         "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB"]


@dataclass
class Row:
    fault: str
    injected: str
    detected: str
    lost: int
    twice: int
    fio_left: int
    resumed: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.lost == self.twice == self.fio_left == 0


class Run:
    """One run of the suite, started, watched, stopped by a fault, and resumed."""

    def __init__(self, reports: Path, args: list[str], target: str = IOPS):
        self.reports, self.target, self.tally = reports, target, Tally()
        self.proc = start_suite("--destructive", "--reports-dir", str(reports), *args,
                                target=target)
        self.folder: Path | None = None
        self.out = ""

    def wait_for(self, ready: Callable[[Path, list[dict]], bool], limit: float = 300) -> str:
        """Until the ledger satisfies `ready`: what it then holds, in words."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            found = list(self.reports.glob("*/*/ledger.jsonl"))
            if found:
                self.folder = found[0].parent
                recs = ledger_records(self.folder)
                if ready(self.folder, recs):
                    self.tally.note(recs)
                    return state(recs)
            if self.proc.poll() is not None:
                raise RuntimeError("the run ended before the fault: "
                                   + self.proc.communicate()[0][-2000:])
            time.sleep(0.02)
        raise RuntimeError(f"the moment of the fault did not come within {limit:.0f} s")

    def end(self, timeout: float = 300) -> tuple[int, str]:
        """Wait for the run to end: (exit status, the error as the user sees it)."""
        self.out, _ = self.proc.communicate(timeout=timeout)
        if LOGS:
            (LOGS / f"{self.reports.parent.name}.log").write_text(self.out)
        assert self.folder is not None
        self.tally.note(ledger_records(self.folder))
        if self.proc.returncode in (0, 1) and "ERROR at " not in self.out:
            verdict = "passed" if self.proc.returncode == 0 else "its verdict: not steady"
            return self.proc.returncode, f"none needed: the run went on to its end ({verdict})"
        return self.proc.returncode, first_error(self.out)

    def resume(self, *args: str, timeout: float = 900) -> str:
        """`--resume` the run folder: how it ended, in words."""
        assert self.folder is not None
        proc = start_suite("--resume", str(self.folder), "--destructive", *args,
                           target=self.target)
        out, _ = proc.communicate(timeout=timeout)
        if proc.returncode in (0, 1):
            final = ledger_records(self.folder)
            want = 0 if all(e.passed for e in expected_outcomes(final).values()) else 1
            verdict = "passed" if proc.returncode == 0 else "not steady"
            return (f"ok: rc {proc.returncode} ({verdict}), as the records give"
                    if proc.returncode == want else f"WRONG: rc {proc.returncode}, want {want}")
        return f"rc {proc.returncode}: {first_error(out)}"

    def row(self, fault: str, injected: str, detected: str, resumed: str,
            started: float) -> Row:
        assert self.folder is not None
        final = ledger_records(self.folder)
        return Row(fault, injected, detected, len(self.tally.lost(final)),
                   len(Tally.twice(final)), 0 if fio_gone(self.folder) else 1, resumed,
                   round(time.monotonic() - started, 1))


def state(recs: list[dict]) -> str:
    """Where a run is, from its ledger: its last completed round and points."""
    rounds = sum(1 for r in recs if r["type"] == "round")
    points = sum(1 for r in recs if r["type"] == "point")
    return f"after {rounds} round(s), {points} point(s)"


ERROR_LINE = re.compile(r"^(E\s+(\w+\.)*\w+(Error|Gone|Failed|Refused)\b: |ERROR: )")


def first_error(out: str) -> str:
    """The line of the suite's output that names the error: pytest's exception line or
    usage error, else the last line."""
    found = [line for line in out.splitlines() if ERROR_LINE.match(line)]
    line = found[0] if found else (out.strip().splitlines() or [""])[-1]
    line = LONG_PATH.sub(lambda m: ".../" + m.group(0).rsplit("/", 1)[-1], line)
    return " ".join(line.split()).removeprefix("E ")[:300]


LONG_PATH = re.compile(r"/[^\s:;,()']{40,}")     # shown by its last part in the table


def mid_round(folder: Path, recs: list[dict]) -> bool:
    """Round 2 or later of the IOPS test is in flight: its fio is running (a round is one
    fio process; its points are recorded when it ends)."""
    n = sum(1 for r in recs if r["type"] == "round") + 1
    if n < 2 or not (folder / f"raw/iops/round-{n:02d}/round.cmd").exists():
        return False
    time.sleep(0.5)
    return True


def started(folder: Path, recs: list[dict]) -> bool:
    return bool(recs)


def wipc_done(folder: Path, recs: list[dict]) -> bool:
    return any(r["type"] == "wipc" for r in recs)


# ------------------------------------------------------------------------- faults

def loop_detached(tmp: Path) -> Row:
    """The drive is pulled: its loop device detached mid-round, then attached again."""
    t0, backing = time.monotonic(), Path("/dev/shm") / f"pts-fault-{os.getpid()}.img"
    with open(backing, "wb") as fh:
        fh.truncate(256 << 20)
    dev = attach(backing)
    try:
        run = Run(tmp / "reports", ["--device", dev, *SHORT])
        at = run.wait_for(mid_round)
        subprocess.run(["losetup", "-d", dev], check=True)
        rc, detected = run.end()
        dev = attach(backing)             # the drive is back (perhaps under another name)
        resumed = run.resume("--device", dev)
        return run.row("device vanishes: loop device detached mid-round",
                       f"losetup -d during a round's fio (the kernel detaches it when fio "
                       f"closes it) {at}", f"rc {rc}: {detected}", resumed, t0)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        backing.unlink(missing_ok=True)


def attach(backing: Path) -> str:
    return subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                          check=True, capture_output=True, text=True).stdout.strip()


def emulator_killed(tmp: Path) -> Row:
    """The emulated SSD's FUSE daemon killed -9 mid-round."""
    t0 = time.monotonic()
    run = Run(tmp / "reports", ["--device", "emulated:64M", "--no-purge-probe", *SHORT])
    at = run.wait_for(mid_round)
    dev = json.loads((run.folder / "run.json").read_text())["device"]["path"]
    inst = lifecycle.find(dev)
    os.kill(inst.pid, signal.SIGKILL)
    rc, detected = run.end()
    resumed = run.resume()
    return run.row("device vanishes: emulated SSD's daemon killed -9 mid-round",
                   f"kill -9 of its daemon {at}", f"rc {rc}: {detected}", resumed, t0)


def write_errors(tmp: Path) -> Row:
    """The drive fails writes: the emulated SSD's 'eio' profile (EIO on 1 write in 50 once
    3 x its capacity has been written from FOB)."""
    t0 = time.monotonic()
    run = Run(tmp / "reports", ["--device", "emulated:64M:eio", "--no-purge-probe", *SHORT])
    run.wait_for(wipc_done)
    rc, detected = run.end()
    recs = ledger_records(run.folder)
    rounds = [r["round"] for r in recs if r["type"] == "round"]
    partial = [r for r in recs if r["type"] == "point" and r["round"] not in rounds]
    figure = "no figure from the failed round" if not partial else \
        f"WRONG: {len(partial)} point(s) of the failed round recorded"
    return run.row("I/O errors: EIO on 1 write in 50 (emulated SSD 'eio')",
                   f"EIO from 3 x capacity written, after {len(rounds)} round(s)",
                   f"rc {rc}: {detected}", f"not resumed (a failing drive); {figure}", t0)


def reports_full(tmp: Path) -> Row:
    """The reports folder's file system (a 64 MiB tmpfs) fills up mid-round (a file written
    until ENOSPC); the file is removed and the run resumed."""
    t0 = time.monotonic()
    small = tmp / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(small)], check=True)
    try:
        with loop_device(256 << 20) as dev:
            run = Run(small / "reports", ["--device", dev, *SHORT])
            at = run.wait_for(mid_round)
            subprocess.run(["dd", "if=/dev/zero", f"of={small / 'filler'}", "bs=1M"],
                           capture_output=True)
            rc, detected = run.end()
            (small / "filler").unlink()
            resumed = run.resume()
            return run.row("reports folder full: its file system filled mid-round",
                           f"a file written until ENOSPC {at}, removed before --resume",
                           f"rc {rc}: {detected}", resumed, t0)
    finally:
        subprocess.run(["umount", str(small)], check=True)


@contextlib.contextmanager
def dut_host(size: int = 256 << 20):
    """A DUT host of this machine (its sshd and fio --server on 127.0.0.1) with one loop
    device: (host, its ssh:// device, its ssh config)."""
    with remote_hosts.keys() as k, remote_hosts.host(k) as h, loop_device(size) as dev:
        yield h, h.url(dev), k.ssh_config


def remote_fault(tmp: Path, fault: str, ssh: bool, fio: bool) -> Row:
    """On a DUT host's drive, mid-round: kill -9 of its sshd (with its sessions) and/or its
    fio --server; both back before --resume."""
    t0 = time.monotonic()
    with dut_host() as (h, url, ssh_config):
        run = Run(tmp / "reports", ["--device", url, "--ssh-config", str(ssh_config),
                                    "--fio-port", str(h.fio_port), *SHORT])
        at = run.wait_for(mid_round)
        killed = [f"its sshd and {kill_sshd(h) - 1} session(s)"] if ssh else []
        if fio:
            h.fio.kill()
            killed.append("fio --server")
        rc, detected = run.end()
        if ssh:
            h.start_sshd()
        if fio:
            h.start_fio()
        return run.row(fault, f"kill -9 of {' and '.join(killed)} {at}", f"rc {rc}: {detected}",
                       run.resume(), t0)


def tree(pid: int) -> list[int]:
    """`pid` and every descendant of it."""
    kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [pid, *(p for k in kids.split() for p in tree(int(k)))]


def kill_sshd(h: remote_hosts.Host) -> int:
    """kill -9 of the host's sshd and of its sessions (the suite's shared connection):
    how many processes."""
    pids = tree(h.sshd.pid)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    h.sshd.wait()
    return len(pids)


def fio_server_dies(tmp: Path) -> Row:
    return remote_fault(tmp, "remote: the DUT host's fio --server killed mid-round",
                        ssh=False, fio=True)


def ssh_drops(tmp: Path) -> Row:
    """The ssh connection drops mid-round and stays down until the run has ended."""
    return remote_fault(tmp, "remote: the ssh connection drops mid-round (sshd killed)",
                        ssh=True, fio=False)


def host_down(tmp: Path) -> Row:
    return remote_fault(tmp, "remote: the DUT host goes down mid-round (sshd and fio "
                        "--server)", ssh=True, fio=True)


# ------------------------------------------------------------------ kill -9 campaigns

def kill_args(tmp: Path) -> dict[str, tuple[str, list[str], tuple[float, float]]]:
    """Per test type: (pytest target, arguments, seconds between kills), short runs as the
    e2e tests have them."""
    hir_spec = spec_variant(tmp / "spec", {"precondition_round_intervals = 30":
                                           "precondition_round_intervals = 2"})
    qos = ["--point-seconds", "1", "--max-rounds", "6", "--purge", "trim", "--time-scale",
           "0.001", "--dirth-thread-counts", "32,1", "--dirth-queue-depths", "32,1"]
    return {
        "IOPS": (IOPS, [*SHORT, "--max-rounds", "9"], (0.5, 8.0)),
        "TP": (f"{SUITE}/test_throughput.py",
               ["--point-seconds", "1", "--purge", "trim", "--max-rounds", "6"], (0.5, 6.0)),
        "LAT": (f"{SUITE}/test_latency.py",
                ["--point-seconds", "1", "--purge", "trim", "--max-rounds", "5"], (0.5, 8.0)),
        "WSAT": (f"{SUITE}/test_write_saturation.py",
                 ["--point-seconds", "1", "--purge", "trim", "--wsat-hours", "0.003",
                  "--wsat-fills", "1000"], (1.0, 8.0)),
        "HIR": (f"{SUITE}/test_hir.py",
                ["--spec", str(hir_spec), "--point-seconds", "1", "--max-rounds", "5",
                 "--purge", "trim", "--hir-repetitions", "1", "--time-scale", "0.2"],
                (1.0, 10.0)),
        "XSR": (f"{SUITE}/test_xsr.py",
                ["--point-seconds", "2", "--purge", "trim", "--time-scale", "0.0005"],
                (1.0, 8.0)),
        "DIRTH": (f"{SUITE}/test_dirth.py", qos, (1.0, 8.0)),
        "CBW": (f"{SUITE}/test_cbw.py", qos, (1.0, 8.0)),
    }


def kill_between_points(tmp: Path, kills: int = 6, seed: int = 20261127) -> Row:
    """kill -9 of the suite between two pipelined points (issue 38 §1), alternately while a
    point's threads wait at the gate for the one before (`pts-gate.sh wait`) and in a
    point's postrun (`pts-gate.sh done`), the host ceiling on (its RAM device made at the
    start): how long after each kill fio, the gate scripts and every holder of the drive
    were gone; then the run resumed, and no gate folder or ceiling device left."""
    t0 = time.monotonic()
    aims = tuple((GATE_WAIT, GATE_DONE)[k % 2] for k in range(kills))
    with loop_device(256 << 20) as dev:
        c = kill_campaign(dev, tmp / "kill-gate", [*SHORT, "--max-rounds", "9",
                                                   "--host-ceiling", "auto"],
                          IOPS, kills, seed, (0.5, 4.0), aim=aims)
    hit = {a: c.phases.count(a) for a in (GATE_WAIT, GATE_DONE)}
    gone = sorted(c.gone_s)
    verdict = (f"ok: rc {c.rc}, as the records give" if c.rc == c.expected_rc
               else f"WRONG: rc {c.rc}, want {c.expected_rc}")
    left = f"; left: {', '.join(str(p) for p in c.leftovers)}" if c.leftovers else \
        "; no gate folder or ceiling device left"
    print(json.dumps({"gone_s": c.gone_s, "phases": c.phases, "left": c.left,
                      "leftovers": [str(p) for p in c.leftovers]}), flush=True)
    return Row("kill -9 of the suite between pipelined points (IOPS, host ceiling on)",
               f"{c.kills} kills: {hit[GATE_WAIT]} while a gate's wait waited, "
               f"{hit[GATE_DONE]} in a point's postrun (done); {c.resumes} resumes",
               f"fio, gates and holders of the drive gone {gone[0]:.1f}-{gone[-1]:.1f} s "
               f"after the kill (median {gone[len(gone) // 2]:.1f} s)",
               len(c.lost), len(c.twice), c.fio_left + len(c.leftovers), verdict + left,
               round(time.monotonic() - t0, 1))


# every 2nd kill waits for the run's next completed unit (a round, sample, wait state ...):
# without it, the kills of WSAT, HIR and XSR at these settings all fell before their first
UNIT_EVERY = 2


def kill_rows(tmp: Path, kills: int, seed: int, sector: int, only: set[str]) -> list[Row]:
    """Each test type on a loop device of `sector`-byte logical sectors (4096 by default: a
    4Kn drive, issue 23 §4; CBW declares its sub-4 KiB sizes N/A there)."""
    rows = []
    for n, (name, (target, args, spread)) in enumerate(kill_args(tmp).items()):
        if only and f"kill-{name.lower()}" not in only:
            continue
        t0 = time.monotonic()
        with loop_device(256 << 20, sector=sector) as dev:
            c = kill_campaign(dev, tmp / f"kill-{name}", args, target, kills, seed + n,
                              spread, unit_every=UNIT_EVERY)
        sectors = json.loads((c.folder / "run.json").read_text())["device"]["logical_sector"]
        assert sectors == sector, sectors
        if name == "CBW" and sector > 512:      # its sub-4 KiB sizes: N/A, declared, not run
            said = [r["text"] for r in ledger_records(c.folder) if r["type"] == "deviation"]
            assert any("smaller than the logical sector size: N/A" in s for s in said), said
            jobs = "".join(j.read_text() for j in (c.folder / "raw").glob("cbw*/**/*.fio"))
            assert "bssplit=4k/" in jobs and "512/" not in jobs
        verdict = (f"ok: rc {c.rc}, as the records give" if c.rc == c.expected_rc
                   else f"WRONG: rc {c.rc}, want {c.expected_rc}")
        rows.append(Row(f"kill -9 of the suite: {name}",
                        f"{c.kills} kills at seeded moments, {c.resumes} resumes; "
                        f"{sector} B sectors",
                        f"{c.seen} units recorded before a kill; {c.units} at the end",
                        len(c.lost), len(c.twice),
                        c.fio_left, verdict, round(time.monotonic() - t0, 1)))
        print(json.dumps({**asdict(rows[-1]), "lost_units": c.lost, "twice_units": c.twice,
                          "folder": str(c.folder)}), flush=True)
    return rows


FAULTS = {"detach": loop_detached, "emulator": emulator_killed, "eio": write_errors,
          "full": reports_full, "fio-server": fio_server_dies, "ssh": ssh_drops,
          "host-down": host_down, "kill-gate": kill_between_points}


def table(rows: list[Row]) -> str:
    lines = ["| fault | injected | detected | data lost | measured twice | fio left | "
             "resumed | s |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [r.fault, r.injected, r.detected.replace("|", "/"), r.lost, r.twice,
                 r.fio_left, r.resumed, f"{r.seconds:.0f}"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated: " + ", ".join(
        [*FAULTS, *(f"kill-{n.lower()}" for n in
                    ("IOPS", "TP", "LAT", "WSAT", "HIR", "XSR", "DIRTH", "CBW"))]))
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--sector", type=int, default=4096, choices=(512, 4096),
                    help="logical sector size of the kill rows' loop devices")
    args = ap.parse_args()
    only = {s for s in args.only.split(",") if s}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fault in FAULTS.items():
            if only and name not in only:
                continue
            where = Path(tmp) / name
            where.mkdir()
            rows.append(fault(where))
            print(json.dumps(asdict(rows[-1])), flush=True)
        rows += kill_rows(Path(tmp), args.kills, args.seed, args.sector, only)
    print(f"\n{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n")
    print(table(rows))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
