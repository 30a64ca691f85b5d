"""kill -9 of the suite at seeded random moments of ONE run, `--resume` after each, and what
its ledger then holds: every completed unit of work (a round, a WSAT sample, HIR's
preconditioning baseline and wait states, an XSR access group, a DIRTH/CBW operating point
and its histogram, a test's final test_end) must be there once, as it was recorded before
the kills that followed it. Used by tests/e2e/test_kill_resume.py (IOPS, in CI) and
benchmarks/faults.py (every test type)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pts.device import leftovers, openers
from pts.results import records
from pts.results.ledger import read_ledger
from pts.results.resume import stopped
from pts.tools import fio_gate
from tests.support.ptsrun import expected_outcomes, spec_rule, start_suite, stop_suite

# record type -> the fields that name one unit of it within its test (a unit is recorded
# once, when it is complete; records of a unit in flight, points and intervals, are redone
# on --resume and are not units)
UNIT_KEYS: dict[str, tuple[str, ...]] = {
    "round": ("round",), "sample": ("sample",), "wsat_result": (),
    "hir_baseline": (), "hir_state": ("state",), "xsr_group": ("group",),
    "operating_point": ("name",), "response_histogram": ("name",), "test_end": (),
}


# seconds to the kill of a finished run's --resume (it only starts, finds every test
# finished and renders the report again): within its start-up, as it usually is
RESUME_START = (0.3, 2.5)


def ledger_records(folder: Path) -> list[dict]:
    return [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]


def units(recs: list[dict]) -> dict[tuple, list[dict]]:
    """Completed units by (type, test, key...): each with every record of it (one, unless it
    was measured twice). A test_end counts only when it ends the test for good (not an
    error or an interruption, which a resumed run follows with the test's real end)."""
    out: dict[tuple, list[dict]] = {}
    for r in recs:
        keys = UNIT_KEYS.get(r["type"])
        if keys is None or (r["type"] == "test_end" and r["status"] not in records.FINISHED):
            continue
        out.setdefault((r["type"], r.get("test"), *(r[k] for k in keys)), []).append(r)
    return out


@dataclass
class Tally:
    """Units seen at each stop of a run against those of its final ledger."""
    seen: dict[tuple, dict] = field(default_factory=dict)

    def note(self, recs: list[dict]) -> None:
        for key, found in units(recs).items():
            self.seen.setdefault(key, found[0])

    def lost(self, final: list[dict]) -> list[tuple]:
        """Units recorded at a stop that the final ledger lacks or holds changed."""
        now = units(final)
        return [k for k, r in self.seen.items() if now.get(k, [None])[0] != r]

    @staticmethod
    def twice(final: list[dict]) -> list[tuple]:
        return [k for k, found in units(final).items() if len(found) > 1]


# A kill's phase (kill_phase): what the run was doing, from the last event before the kill
# of its ledger (records, appended when a step is done) and its commands.log (each external
# command, logged before it starts), by time.
PURGE, WIPC, MID_ROUND, BETWEEN, REPORT, START_UP = (
    "purge", "WIPC", "mid-round", "between rounds", "report", "start-up")
# Instants of a pipelined round (issue 38 §1), aimed at with `aim` and recorded as such when
# hit: a point's threads waiting at the gate for the point before (`pts-gate.sh wait`), and
# the postrun of a point (`pts-gate.sh done`: its first thread has noted its end).
GATE_WAIT, GATE_DONE = "gate wait", "gate done"
GATE_AIMS = (GATE_WAIT, GATE_DONE)
# "No process of the run left within 10 s of the kill" (issue 38's acceptance)
LEFT_LIMIT_S = 10.0
AFTER_RECORD = {"test_start": PURGE, "purge": PURGE, "purge_probe": PURGE,
                "wipc": BETWEEN,          # before round 1
                "point": BETWEEN, "round": BETWEEN, "resume": START_UP}


def _command_phase(argv: list[str]) -> str | None:
    """The phase an external command of the run belongs to: fio's output file names its
    step; blkdiscard and the NVMe / ATA / SCSI purge commands are the purge; other commands
    (identity, SMART reads) say nothing of the phase (None)."""
    tool, out = Path(argv[0]).name, next((a for a in argv if a.startswith("--output=")), "")
    if tool == "fio":
        return MID_ROUND if "/round-" in out else WIPC if out.endswith("/wipc.json") else \
            PURGE if "purge" in out else None
    purging = (tool in ("blkdiscard", "sg_sanitize", "sg_format")
               or tool == "nvme" and argv[1:2] in (["format"], ["sanitize"])
               or tool == "hdparm" and any(a.startswith("--security-erase") for a in argv))
    return PURGE if purging else None


def kill_phase(folder: Path | None) -> str:
    """What the run in `folder` was doing when it was killed (read after the kill: both
    files are as the dead process left them): the phase of its newest event. Ledger
    records of other kinds (deviation, write_cache, device counters, round_mode) say
    nothing of the phase and are skipped; a test's final test_end means its report."""
    if folder is None or not (folder / "ledger.jsonl").exists():
        return START_UP
    events = []
    for r in ledger_records(folder):
        if r["type"] == "test_end":
            events.append((r["time"], REPORT if r["status"] in records.FINISHED else START_UP))
        elif r["type"] in AFTER_RECORD:
            events.append((r["time"], AFTER_RECORD[r["type"]]))
        elif r["type"] in UNIT_KEYS:      # another test type's unit (benchmarks/faults.py)
            events.append((r["time"], f"after {r['type']}"))
    log = folder / "commands.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        try:
            c = json.loads(line)
        except json.JSONDecodeError:          # the line a live run is writing
            continue
        if (found := _command_phase(c["argv"])) is not None:
            events.append((c["time"], found))
    return max(events)[1] if events else START_UP


def fio_gone(folder: Path | str, seconds: float = 30) -> bool:
    """No process of the run is left: fio got SIGTERM from the kernel when the suite died
    (PR_SET_PDEATHSIG); it ends its jobs and exits, which takes a moment when loaded."""
    deadline = time.monotonic() + seconds
    while subprocess.run(["pgrep", "-f", str(folder)], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def gates_of(owner: int) -> list[openers.Opener]:
    """The gate scripts (and the shells running them) of the suite process `owner`: their
    command line names neither the run folder nor the device; their working directory
    names the owner (pts.tools.fio_gate: the gate folder pts-gates-PID-*, or the script in
    fio's working directory)."""
    found = []
    for pid in openers.pids(openers.PROC):
        o = openers.opener(pid, openers.PROC)
        if o is None or not leftovers.RUNS_GATE.search(o.command):
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd").removesuffix(" (deleted)"))
        except OSError:
            continue
        named = (fio_gate.owner_of(cwd) or (None,))[0]
        if named == owner or cwd.name.startswith(f"{fio_gate.GATES_PREFIX}{owner}-"):
            found.append(o)
    return found


def run_left(folder: Path | None, device: str, owner: int) -> list[str]:
    """What of the killed suite `owner` still runs: fio naming its run folder, its gate
    scripts, and any process holding the device."""
    found = []
    if folder is not None:
        out = subprocess.run(["pgrep", "-af", str(folder)], capture_output=True, text=True)
        found += out.stdout.splitlines()
    found += [str(o) for o in gates_of(owner)]
    rdev = os.stat(device).st_rdev
    found += [str(o) for o in openers.holding({(os.major(rdev), os.minor(rdev))},
                                              settle=0.05)]
    return found


def gone_after(folder: Path | None, device: str, owner: int, killed_at: float,
               seconds: float = 30) -> tuple[float, list[str]]:
    """Wait until nothing of the killed suite `owner` runs (run_left): (seconds from the
    kill, monotonic `killed_at`, to that; what was still there at the end, [] if nothing)."""
    deadline = time.monotonic() + seconds
    while (left := run_left(folder, device, owner)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return time.monotonic() - killed_at, left


def suites_tmp(reports: Path) -> Path:
    """The temporary directory of the campaign's suites (TMPDIR: their gate folders)."""
    return reports.with_name(f"{reports.name}-tmp")


def gate_folders(owners: Sequence[int], tmp: Path | None = None) -> list[Path]:
    """Gate folders of the suite processes `owners` in the temporary directory `tmp`."""
    tmp = Path(tmp or tempfile.gettempdir())
    return sorted(p for pid in owners for p in tmp.glob(f"{fio_gate.GATES_PREFIX}{pid}-*"))


def ceiling_devices(owners: Sequence[int]) -> list[Path]:
    """Host-ceiling RAM devices' files of the suite processes `owners` (pts.device.ramdev)."""
    return sorted(p for pid in owners for p in Path("/dev/shm").glob(f"pts-ceiling-*-{pid}.img"))


@dataclass
class Campaign:
    folder: Path
    kills: int
    resumes: int
    lost: list[tuple]
    twice: list[tuple]
    fio_left: int               # kills after which a process of the run (fio, a gate, a
                                # holder of the device) outlived the suite by LEFT_LIMIT_S
    rc: int
    expected_rc: int
    out: str
    units: int                  # completed units in the final ledger
    seen: int                   # of them, recorded before a kill (and kept through it)
    phases: list[str] = field(default_factory=list)   # each kill's phase (kill_phase)
    gone_s: list[float] = field(default_factory=list)  # per kill: s until nothing was left
    left: list[str] = field(default_factory=list)      # what outlived a kill by LEFT_LIMIT_S
    # at the end: gate folders and host-ceiling devices of the campaign's suites
    leftovers: list[Path] = field(default_factory=list)
    # per kill: the gate folders and host-ceiling devices the killed suite left, and what
    # the suite started after it printed (its sweep says what it removed)
    left_by_kill: list[list[Path]] = field(default_factory=list)
    said_next: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.twice or self.fio_left or self.leftovers) \
            and self.rc == self.expected_rc


def kill_campaign(device: str, reports: Path, args: list[str], target: str, kills: int,
                  seed: int, spread: tuple[float, float] = (0.3, 4.0),
                  timeout: float = 1800, unit_every: int = 0,
                  limit: float = 1800, aim: Sequence[str] = ()) -> Campaign:
    """Start the suite on `device`; `kills` times, at a seeded random moment `spread`
    seconds after the (re)started run has written its first new ledger record (so that a
    slow start-up on a loaded machine does not take every kill before any work), kill -9
    it and `--resume` it; then let it end. A run that ends before its moment is resumed
    again (a finished run's --resume runs nothing). `unit_every` N > 0: every Nth kill
    waits for the run's next completed unit first (tests whose first unit comes later than
    `spread` would otherwise be killed only before it). `aim`: the first kills are made as
    soon as the run is in these phases instead (kill_phase read while it runs; e.g. purge
    and WIPC, which only a run started afresh goes through, for a few seconds). Each kill's
    phase is recorded as the run's files give it after the kill (an aimed gate instant,
    GATE_AIMS, as aimed when it was met). After each stop, how long until nothing of the
    run was left (gone_after: fio, its gate scripts, any holder of the device; more than
    LEFT_LIMIT_S counts in fio_left); at the end, the gate folders and host-ceiling devices
    of every suite process it started that are still there (`leftovers`: the resumes'
    sweep must have removed them), and per kill what it left and what the next suite said
    (`left_by_kill`, `said_next`). The suites' temporary directory (their gate folders) is
    `reports`-tmp, so that only their own sweeps remove those. The suite is killed whatever
    stops the campaign (a deadline, an assertion). The kills must be done within `limit`
    seconds (AssertionError naming the step it was at), the last run within
    `timeout`."""
    rng, tally, phases = random.Random(seed), Tally(), []
    first = ["--device", device, "--destructive", "--reports-dir", str(reports), *args]
    tmp = suites_tmp(reports)
    tmp.mkdir(parents=True, exist_ok=True)
    env = {"TMPDIR": str(tmp)}
    left_by_kill: list[list[Path]] = []
    said_next: list[str] = []
    proc, folder, done, resumes, fio_left = start_suite(*first, target=target, env=env), \
        None, 0, 0, 0
    deadline, ended, owners, gone_s, left = time.monotonic() + limit, 0, [proc.pid], [], []

    def in_time(now_at: str) -> None:
        assert time.monotonic() < deadline, (
            f"kill campaign stuck {now_at}: {done} of {kills} kills, {resumes} resumes, "
            f"{ended} (re)starts ended before their kill moment, in {limit:.0f} s; "
            f"phases so far {phases}; run folder {folder}")

    try:
        while done < kills:
            in_time("waiting for the (re)started run's first new ledger record")
            folder = working(proc, reports, folder)
            done_already = folder is not None and not stopped(folder)
            hit = None
            if done < len(aim):
                in_time(f"waiting for the run's {aim[done]} phase")
                if aim[done] in GATE_AIMS:
                    folder, hit = at_gate(proc, reports, folder, aim[done], deadline)
                else:
                    folder = in_phase(proc, reports, folder, aim[done], deadline)
            else:
                if unit_every and done % unit_every == unit_every - 1 and folder \
                        and not done_already:
                    in_time("waiting for the run's next completed unit")
                    next_unit(proc, folder)     # (a finished run's --resume records no unit)
                time.sleep(rng.uniform(*(RESUME_START if done_already else spread)))
            in_time("at a kill moment")
            killed = proc.poll() is None
            if killed:
                proc.send_signal(signal.SIGKILL)
                done += 1
            else:
                ended += 1
            stopped_at = time.monotonic()
            said = proc.communicate(timeout=60)[0]
            if len(said_next) < len(left_by_kill):
                said_next.append(said)           # the suite started after the last kill
            if killed:
                left_by_kill.append(gate_folders([proc.pid], tmp)
                                    + ceiling_devices([proc.pid]))
            folder = folder or next((p.parent for p in reports.glob("*/*/ledger.jsonl")), None)
            if killed:
                phases.append(hit or kill_phase(folder))
            in_time("waiting for the killed run's fio and gates to exit")
            took, still = gone_after(folder, device, proc.pid, stopped_at)
            if killed:
                gone_s.append(round(took, 2))
            if still or took > LEFT_LIMIT_S:
                fio_left += 1
                left.append(f"{took:.1f} s after the stop of {proc.pid}: "
                            + ("; ".join(still) or "gone by then"))
            if folder is None:                     # killed before the run folder existed
                proc = start_suite(*first, target=target, env=env)
                owners.append(proc.pid)
                continue
            tally.note(ledger_records(folder))
            proc, resumes = start_suite("--resume", str(folder), "--destructive",
                                        target=target, env=env), resumes + 1
            owners.append(proc.pid)
        out, _ = proc.communicate(timeout=timeout)
        if len(said_next) < len(left_by_kill):
            said_next.append(out)
    finally:
        stop_suite(proc)        # a deadline or an assertion: the suite does not outlive it
    assert folder is not None, out[-3000:]
    final = ledger_records(folder)
    expected = 0 if all(e.passed for e in expected_outcomes(final, spec_rule(folder)).values()) \
        else 1
    return Campaign(folder, done, resumes, tally.lost(final), Tally.twice(final), fio_left,
                    proc.returncode, expected, out, len(units(final)), len(tally.seen), phases,
                    gone_s, left, gate_folders(owners, tmp) + ceiling_devices(owners),
                    left_by_kill, said_next)


def at_gate(proc, reports: Path, folder: Path | None, aim: str,
            deadline: float) -> tuple[Path | None, str | None]:
    """Wait until the run `proc` is at the gate instant `aim` of a pipelined round (or has
    ended): GATE_WAIT, a `pts-gate.sh wait` of it is waiting (the next point's threads, while
    the point before runs); GATE_DONE, a point's first thread has just run its postrun (a
    gate-K.done note appeared in its gate folder: seen within a few ms, while its other
    threads run theirs). (its run folder, `aim` if it was met, else None). AssertionError at
    `deadline` (monotonic)."""
    seen: set[Path] | None = None
    while proc.poll() is None:
        folder = folder or next((p.parent for p in reports.glob("*/*/ledger.jsonl")), None)
        if aim == GATE_DONE:
            notes = {n for g in gate_folders([proc.pid], suites_tmp(reports))
                     for n in g.glob("gate-*.done")}
            if seen is not None and notes - seen:
                return folder, aim
            seen = notes if seen is None else seen | notes
            time.sleep(0.002)
        else:
            # a later point's (`wait K`, K >= 1), not the first point's barrier (`wait 0`)
            if any(" wait 0 " not in o.command and " wait " in o.command
                   for o in gates_of(proc.pid)):
                return folder, aim
            time.sleep(0.01)
        assert time.monotonic() < deadline, f"the run never reached {aim}"
    return folder, None


def in_phase(proc, reports: Path, folder: Path | None, phase: str,
             deadline: float) -> Path | None:
    """Wait until the run `proc` is in `phase` (kill_phase of its files now) or has ended:
    its run folder. AssertionError at `deadline` (monotonic), naming the phase it was in."""
    now = START_UP
    while proc.poll() is None:
        folder = folder or next((p.parent for p in reports.glob("*/*/ledger.jsonl")), None)
        if (now := kill_phase(folder)) == phase:
            break
        assert time.monotonic() < deadline, f"the run never reached {phase}; it is in {now}"
        time.sleep(0.01)
    return folder


def next_unit(proc, folder: Path, limit: float = 600) -> None:
    """Wait until the run `proc` has recorded one more completed unit (or has ended)."""
    before, deadline = len(units(ledger_records(folder))), time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        if len(units(ledger_records(folder))) > before:
            return
        time.sleep(0.1)


def working(proc, reports: Path, folder: Path | None, limit: float = 120) -> Path | None:
    """Wait until the run `proc` has appended a record to its ledger (or has ended): its
    run folder. A finished run's --resume appends nothing (it renders the report again):
    its moment counts from its start."""
    if folder is not None and not stopped(folder):
        return folder
    def size(f: Path | None) -> int:
        try:
            return (f / "ledger.jsonl").stat().st_size if f else 0
        except FileNotFoundError:
            return 0
    before, deadline = size(folder), time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        folder = folder or next((p.parent for p in reports.glob("*/*/ledger.jsonl")), None)
        if size(folder) > before:
            return folder
        time.sleep(0.02)
    return folder
