"""kill -9 of the suite at seeded random moments of ONE run, `--resume` after each, and what
its ledger then holds: every completed unit of work (a round, a WSAT sample, HIR's
preconditioning baseline and wait states, an XSR access group, a DIRTH/CBW operating point
and its histogram, a test's final test_end) must be there once, as it was recorded before
the kills that followed it. Used by tests/e2e/test_kill_resume.py (IOPS, in CI) and
benchmarks/faults.py (every test type)."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from pts.results import records
from pts.results.ledger import read_ledger
from pts.results.resume import stopped
from tests.ptsrun import expected_outcomes, start_suite

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


def fio_gone(folder: Path | str, seconds: float = 30) -> bool:
    """No process of the run is left: fio got SIGTERM from the kernel when the suite died
    (PR_SET_PDEATHSIG); it ends its jobs and exits, which takes a moment when loaded."""
    deadline = time.monotonic() + seconds
    while subprocess.run(["pgrep", "-f", str(folder)], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@dataclass
class Campaign:
    folder: Path
    kills: int
    resumes: int
    lost: list[tuple]
    twice: list[tuple]
    fio_left: int               # stops after which a fio of the run outlived the suite
    rc: int
    expected_rc: int
    out: str
    units: int                  # completed units in the final ledger
    seen: int                   # of them, recorded before a kill (and kept through it)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.twice or self.fio_left) and self.rc == self.expected_rc


def kill_campaign(device: str, reports: Path, args: list[str], target: str, kills: int,
                  seed: int, spread: tuple[float, float] = (0.3, 4.0),
                  timeout: float = 1800, unit_every: int = 0) -> Campaign:
    """Start the suite on `device`; `kills` times, at a seeded random moment `spread`
    seconds after the (re)started run has written its first new ledger record (so that a
    slow start-up on a loaded machine does not take every kill before any work), kill -9
    it and `--resume` it; then let it end. A run that ends before its moment is resumed
    again (a finished run's --resume runs nothing). `unit_every` N > 0: every Nth kill
    waits for the run's next completed unit first (tests whose first unit comes later than
    `spread` would otherwise be killed only before it)."""
    rng, tally = random.Random(seed), Tally()
    first = ["--device", device, "--destructive", "--reports-dir", str(reports), *args]
    proc, folder, done, resumes, fio_left = start_suite(*first, target=target), None, 0, 0, 0
    while done < kills:
        folder = working(proc, reports, folder)
        done_already = folder is not None and not stopped(folder)
        if unit_every and done % unit_every == unit_every - 1 and folder and not done_already:
            next_unit(proc, folder)     # (a finished run's --resume records no unit)
        time.sleep(rng.uniform(*(RESUME_START if done_already else spread)))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            done += 1
        proc.communicate(timeout=60)
        folder = folder or next((p.parent for p in reports.glob("*/*/ledger.jsonl")), None)
        if not fio_gone(folder or device):
            fio_left += 1
        if folder is None:                     # killed before the run folder existed
            proc = start_suite(*first, target=target)
            continue
        tally.note(ledger_records(folder))
        proc, resumes = start_suite("--resume", str(folder), "--destructive", target=target), \
            resumes + 1
    out, _ = proc.communicate(timeout=timeout)
    assert folder is not None, out[-3000:]
    final = ledger_records(folder)
    expected = 0 if all(e.passed for e in expected_outcomes(final).values()) else 1
    return Campaign(folder, done, resumes, tally.lost(final), Tally.twice(final), fio_left,
                    proc.returncode, expected, out, len(units(final)), len(tally.seen))


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
