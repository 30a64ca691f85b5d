"""--resume of the RWSW tests on constructed ledgers (a run killed with -9: no test_end),
without a device: the workload file must still be the one the run applied (its sha256 in
test_start), rwsw-wsat killed after the round that met its stop rule ends without another
round, rwsw-wsat's drive fills count only the rounds it goes on from, rwsw-replay goes on
after its preconditioning (and its one pass, once recorded, is not run again), rwsw-dirth
goes on to its operating points and histograms from the recorded rounds. fio never runs:
a round that would be measured raises."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pts.conditioning import write_cache
from pts.conditioning.write_cache import CacheState
from pts.procedure import runner
from pts.procedure.rounds import point_record
from pts.results import records
from pts.results.ledger import Ledger
from pts.results.resume import ResumeState
from pts.session.options import with_workload
from pts.testdefs.rwsw import dirth as rwsw_dirth
from pts.testdefs.rwsw import replay as rwsw_replay
from pts.testdefs.rwsw import wsat as rwsw_wsat
from pts.workload.atw import WorkloadError
from tests.support import fake_run
from tests.support.fake_run import purge
from tests.support.ptsrun import run_suite
from tests.support.rwsw import atw_text, settings_with

MIB = 1 << 20
ATW = atw_text("two", (("RND", "R", "4KiB", 70.0), ("RND", "W", "4KiB", 30.0))) + """
[[step]]
start_s = 0.0
seconds = 1.0
oio = 4
shares = { "RND 4K R" = 70.0, "RND 4K W" = 30.0 }

[[step]]
start_s = 1.0
seconds = 1.0
oio = 2
shares = { "RND 4K W" = 100.0 }
"""


class Measured(Exception):
    """fio would have run: the resumed test measured a round."""


class ResumedRun(fake_run.FakeRun):
    """A run resumed from `stopped` (the killed run's ledger, the same file it goes on
    writing, as pts.run.Run does on --resume)."""

    def __init__(self, folder: Path, settings, *stopped: records.Record):
        folder.mkdir(parents=True, exist_ok=True)
        super().__init__(folder)
        for n, r in enumerate(stopped):
            self.ledger.append(r.__class__(**{**r.__dict__, "time": 1000.0 + n}))
        (folder / "run.json").write_text("{}")
        self.resume = ResumeState.load(folder)
        self.folder, self.settings, self.spec = folder, settings, settings.spec

    def raw_dir(self, test, name):
        """Where a round's fio output goes: the round is being measured."""
        raise Measured(f"{test} {name}")

    def written(self) -> list[records.Record]:
        """The records the resumed run added."""
        return fake_run.ledger(self)[len(self.resume.records):]


@pytest.fixture(autouse=True)
def no_device(monkeypatch):
    """The write cache set again "on resume" (a fake device)."""
    monkeypatch.setattr(write_cache, "apply", lambda dev, required, log_file=None:
                        CacheState(required, "disabled", settable=True))


def settings(tmp_path: Path, rwsw: dict | None = None, **kw):
    """The ATW in tmp_path/w.toml (written unless a test wrote it)."""
    text = None if (tmp_path / "w.toml").exists() else ATW
    return settings_with(tmp_path, text, rwsw=rwsw, **kw)


def start(decl: runner.RoundTest) -> records.TestStart:
    return records.TestStart(test=decl.test, title=decl.title, clause=decl.clause,
                             parameters=decl.parameters)


def rounds(decl: runner.RoundTest, n: int, fields=lambda p, rnd: {}) -> list[records.Record]:
    """Rounds 1..n of `decl`: every point's record, then the round's."""
    out: list[records.Record] = []
    for rnd in range(1, n + 1):
        out += [point_record(records.Point, decl.test, rnd, p,
                             {"iops": 1000.0 + p.index} | fields(p, rnd)) for p in decl.points]
        out.append(records.Round(test=decl.test, round=rnd,
                                 tracking={k: 1000.0 + p.index
                                           for k, p in decl.tracking.items()},
                                 steady_state={}, steady=False))
    return out


def finished(decl: runner.RoundTest) -> list[records.Record]:
    """A preconditioning test that ended steady at round 5."""
    return [start(decl), purge(decl.test), *rounds(decl, 5),
            records.TestEnd(test=decl.test, status=records.STEADY, rounds=5, steady_round=5,
                            window=[1, 5], message="steady state reached at round 5")]


# --- the workload file of a resumed run -----------------------------------------------------

def test_a_resumed_run_refuses_a_changed_or_missing_workload_file(tmp_path):
    s = settings(tmp_path)
    path = Path(s.workload_path)
    recorded = hashlib.sha256(path.read_bytes()).hexdigest()
    decl = rwsw_wsat.declare(s, fake_run.NVME)
    assert decl.parameters["atw"]["sha256"] == recorded
    run = ResumedRun(tmp_path / "run", s, start(decl), purge(decl.test), *rounds(decl, 1))
    ledger = run.ledger.path.read_bytes()
    assert with_workload(s, str(path), run.resume).workload.sha256 == recorded   # unchanged
    path.write_text(ATW.replace("name = \"two\"", "name = \"edited\""))
    now = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(WorkloadError) as err:
        with_workload(s, str(path), run.resume)
    text = str(err.value)
    assert f"the workload file {path} has changed since the run started" in text
    assert f"applied the ATW with sha256 {recorded}, the file now has sha256 {now}" in text
    assert f"put the run's file (sha256 {recorded}) back at {path}" in text
    assert "start a new run without --resume. Nothing was written." in text
    path.unlink()
    with pytest.raises(WorkloadError, match=rf"{path} cannot be read \(No such file or "
                                            rf"directory\): the run's rwsw-wsat applied the "
                                            rf"ATW with sha256 {recorded}, the file now has "
                                            r"none\."):
        with_workload(s, str(path), run.resume)
    assert run.ledger.path.read_bytes() == ledger
    # a run whose RWSW tests had not started yet applied no workload: nothing to hold
    path.write_text(ATW)
    other = ResumedRun(tmp_path / "other", s, fake_run.start("iops"))
    assert with_workload(s, str(path), other.resume).workload_path == str(path)


def test_the_session_stops_with_a_usage_error_before_touching_the_device(tmp_path):
    """`pytest pts/ --resume RUN`: the run's own --workload (run.json), changed since; the
    refusal comes before the device is even looked up (it does not exist)."""
    path = tmp_path / "w.toml"
    path.write_text(ATW)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.append(records.TestStart(test="rwsw-wsat", title="t", clause="c",
                                    parameters={"atw": {"sha256": "0" * 64}}))
    ledger.close()
    (tmp_path / "run.json").write_text(json.dumps({
        "options": {"workload": str(path)}, "device": {"given": "/dev/pts-not-there"}}))
    before = (tmp_path / "ledger.jsonl").read_bytes()
    proc = run_suite("--resume", str(tmp_path), "-k", "rwsw")
    assert proc.returncode == 4, proc.stdout + proc.stderr        # pytest's usage error
    assert f"the workload file {path} has changed since the run started: the run's " \
           f"rwsw-wsat applied the ATW with sha256 {'0' * 64}" in proc.stderr
    assert "/dev/pts-not-there" not in proc.stderr
    assert (tmp_path / "ledger.jsonl").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.jsonl", "run.json",
                                                          "w.toml"]


# --- rwsw-wsat: its stop rule -----------------------------------------------------------------

def wsat_ledger(s, n: int) -> list[records.Record]:
    decl = rwsw_wsat.declare(s, fake_run.NVME)
    return [start(decl), purge(decl.test),
            *rounds(decl, n, lambda p, rnd: {"write_bytes": 400 * MIB, "read_bytes": 0})]


def test_rwsw_wsat_killed_after_its_stop_round_ends_without_measuring_another(tmp_path):
    """1 drive fill of the 1 GiB device: rounds of 400 MiB meet it at round 3."""
    s = settings(tmp_path, wsat_fills=1.0)
    run = ResumedRun(tmp_path / "run", s, *wsat_ledger(s, 3))
    written = rwsw_wsat.written_before(run, rwsw_wsat.TEST)
    assert written == 1200 * MIB
    out = runner.run_round_test(run, rwsw_wsat.declare(s, run.device, written))
    assert (out.status, out.rounds) == (records.COMPLETE, 3)
    assert out.message.startswith("stop rule: 1.17 drive fills written (1,258,291,200 bytes, "
                                  "rule 1) at round 3")
    new = run.written()
    assert not [r for r in new if isinstance(r, (records.Point, records.Round,
                                                 records.TestStart))]
    (end,) = [r for r in new if isinstance(r, records.TestEnd)]
    assert (end.status, end.rounds, end.message) == (records.COMPLETE, 3, out.message)
    assert [r.after_round for r in new if isinstance(r, records.Resume)] == [3]


def test_rwsw_wsat_killed_before_its_stop_round_measures_the_next(tmp_path):
    s = settings(tmp_path, wsat_fills=1.0)
    run = ResumedRun(tmp_path / "run", s, *wsat_ledger(s, 2))
    written = rwsw_wsat.written_before(run, rwsw_wsat.TEST)
    assert written == 800 * MIB
    with pytest.raises(Measured):
        runner.run_round_test(run, rwsw_wsat.declare(s, run.device, written))


def test_drive_fills_count_only_the_rounds_the_test_goes_on_from(tmp_path):
    s = settings(tmp_path, wsat_fills=1.0)
    first = wsat_ledger(s, 2)                        # 800 MiB, then restarted from purge
    again = ResumedRun(tmp_path / "again", s, *first, *wsat_ledger(s, 1))
    assert rwsw_wsat.written_before(again, rwsw_wsat.TEST) == 400 * MIB
    purged = ResumedRun(tmp_path / "purged", s, *first, fake_run.start("iops"),
                        purge("iops"))
    assert purged.resume.progress(rwsw_wsat.TEST, "round").restart_reason
    assert rwsw_wsat.written_before(purged, rwsw_wsat.TEST) == 0


# --- rwsw-replay ------------------------------------------------------------------------------

def test_rwsw_replay_killed_after_its_pass_ends_without_replaying_again(tmp_path):
    s = settings(tmp_path)
    pre, decl = (rwsw_replay.declare_precondition(s, fake_run.NVME),
                 rwsw_replay.declare(s, fake_run.NVME))
    run = ResumedRun(tmp_path / "run", s, *finished(pre), start(decl), *rounds(decl, 1))
    out = rwsw_replay.run_replay(run)
    assert (out.status, out.rounds) == (records.COMPLETE, 1)
    assert out.message == "replay complete: all 2 capture steps ran (2 s of capture in 2 s)"
    new = run.written()
    assert not [r for r in new if isinstance(r, (records.Point, records.Round,
                                                 records.TestStart))]
    assert [(r.test, r.status) for r in new if isinstance(r, records.TestEnd)] == [
        (rwsw_replay.TEST, records.COMPLETE)]
    assert f"[pts {pre.test}] already finished in this run: steady state reached at round " \
           "5" in run.lines


def test_rwsw_replay_killed_during_its_pass_replays_every_step_again(tmp_path):
    """The pass is one round: its steps are recorded together, so a pass cut short left
    none and is run again whole, after the preconditioning that stands."""
    s = settings(tmp_path)
    pre, decl = (rwsw_replay.declare_precondition(s, fake_run.NVME),
                 rwsw_replay.declare(s, fake_run.NVME))
    run = ResumedRun(tmp_path / "run", s, *finished(pre), start(decl))
    with pytest.raises(Measured):
        rwsw_replay.run_replay(run)
    new = run.written()
    assert [(r.test, r.after_round) for r in new if isinstance(r, records.Resume)] == [
        (rwsw_replay.TEST, 0)]
    assert not [r for r in new if isinstance(r, (records.TestStart, records.Purge))]


def test_rwsw_replay_killed_in_its_preconditioning_goes_on_after_its_last_round(tmp_path):
    s = settings(tmp_path)
    pre = rwsw_replay.declare_precondition(s, fake_run.NVME)
    run = ResumedRun(tmp_path / "run", s, start(pre), purge(pre.test), *rounds(pre, 3))
    with pytest.raises(Measured):
        rwsw_replay.run_replay(run)
    assert [(r.test, r.after_round) for r in run.written()
            if isinstance(r, records.Resume)] == [(pre.test, 3)]


# --- rwsw-dirth -------------------------------------------------------------------------------

def bins_doc(n: int) -> dict:
    """fio json+ of one point's two sections: reads at 100 µs, writes at 2 ms."""
    def d(ios, ns):
        return {"total_ios": ios, "iops": float(ios), "io_bytes": ios * 4096,
                "bw_bytes": ios * 4096.0, "runtime": 1000,
                "lat_ns": {"mean": float(ns), "max": float(ns), "bins": {str(ns): ios}}}
    return {"jobs": [{"jobname": "s0", "error": 0, "read": d(n, 100_000), "write": d(0, 1)},
                     {"jobname": "s1", "error": 0, "read": d(0, 1),
                      "write": d(n // 10, 2_000_000)}]}


def dirth_run(tmp_path: Path, *more: records.Record) -> tuple[ResumedRun, runner.RoundTest]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    s = settings(tmp_path, {"rwsw_dirth": {"demand_to_steady_state": False,
                                           "thread_counts": [2, 1], "queue_depths": [2, 1]}})
    pre, decl = (rwsw_dirth.declare_precondition(s, fake_run.NVME),
                 rwsw_dirth.declare(s, fake_run.NVME))
    folder = tmp_path / "run"
    (folder / "raw").mkdir(parents=True)
    for p in decl.points:
        (folder / "raw" / f"p{p.index}.json").write_text(json.dumps(bins_doc(100 * (4 - p.index))))
    done = rounds(decl, 1, lambda p, rnd: {
        "iops": 100.0 * (4 - p.index), "lat_mean_us": 100.0, "raw": f"raw/p{p.index}.json",
        "thread_count": p.thread_count, "queue_depth": p.queue_depth})
    return ResumedRun(folder, s, *finished(pre), start(decl), *done, *more), decl


def test_rwsw_dirth_killed_after_its_sweep_goes_on_to_its_operating_points(tmp_path):
    run, decl = dirth_run(tmp_path)
    out = rwsw_dirth.run_dirth(run)
    assert (out.status, out.rounds) == (records.COMPLETE, 1)
    new = run.written()
    assert not [r for r in new if isinstance(r, (records.Point, records.Round,
                                                 records.TestStart))]
    ops = {r.name: (r.thread_count, r.queue_depth) for r in new
           if isinstance(r, records.OperatingPoint)}
    # chosen from the recorded round as PTS DIRTH chooses (test_rwsw_dirth checks the rule)
    assert ops == {"MaxIOPS": (2, 2), "MidIOPS": (1, 2), "MinIOPS": (1, 1)}
    # each histogram the json+ bins of its point's recorded raw file: reads + writes
    hists = {r.name: (r.raw, r.ios) for r in new if isinstance(r, records.ResponseHistogram)}
    assert hists == {"MaxIOPS": ("raw/p0.json", 440), "MidIOPS": ("raw/p2.json", 220),
                     "MinIOPS": ("raw/p3.json", 110)}
    assert [(r.test, r.status) for r in new if isinstance(r, records.TestEnd)] == [
        (rwsw_dirth.TEST, records.COMPLETE)]


def test_rwsw_dirth_killed_during_its_histograms_records_only_the_missing_ones(tmp_path):
    run, _ = dirth_run(tmp_path / "first")
    rwsw_dirth.run_dirth(run)
    made = fake_run.ledger(run)
    # the killed run had chosen its operating points and recorded MaxIOPS's histogram
    upto = next(k for k, r in enumerate(made) if isinstance(r, records.ResponseHistogram))
    chosen = [r for r in made[:upto + 1] if isinstance(r, (records.OperatingPoint,
                                                           records.ResponseHistogram))]
    again, _ = dirth_run(tmp_path / "again", *chosen)
    rwsw_dirth.run_dirth(again)
    new = again.written()
    assert not [r for r in new if isinstance(r, records.OperatingPoint)]
    assert [r.name for r in new if isinstance(r, records.ResponseHistogram)] == [
        "MidIOPS", "MinIOPS"]
