"""`--resume RUN_DIR`: continue an interrupted run after its last completed round.

The run folder says what is done: a test with a test_end of steady, not_steady, complete or
device_health_failure is finished; a test with a `wipc` record and some `round` records goes
on with the next round (the round in flight when it stopped is redone, the write cache is
set again); a test that stopped before WIPC, or whose drive a later test purged since,
starts again from purge.
Before anything is written, the device must be the same one (fingerprint from run.json);
the settings are the run's own (from run.json), not the command line's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from pts.device.identity import BlockDevice, DeviceError
from pts.results import records
from pts.results.ledger import LedgerError, read_ledger, read_records

FINGERPRINT = ("model", "serial", "firmware", "capacity_bytes", "logical_sector")
# run.json options a resumed run does not take back: where it runs and writes is this
# invocation's (pts.session.plugin._resume_options, pts.session.resumed)
NOT_TAKEN = ("device", "destructive", "reports_dir")
# what a test must have completed for --resume to go on with it (ResumeState.progress)
WIPC, ROUND = "wipc", "round"


class ResumeError(ValueError):
    """The run folder cannot be resumed; the message says why."""


@dataclass(frozen=True)
class TestProgress:
    finished: records.TestEnd | None   # the test_end of a finished test
    restart_reason: str | None     # why it starts from purge ("": not started; None: goes on)
    history: dict[str, list[float]]   # tracking values of the completed rounds
    last_round: int
    last_time: float | None        # time of the last record of this test


@dataclass(frozen=True)
class ResumeState:
    folder: Path
    run_json: dict
    records: tuple[records.Record, ...]

    @classmethod
    def load(cls, folder: str | Path) -> ResumeState:
        folder = Path(folder)
        try:
            run_json = json.loads((folder / "run.json").read_text(encoding="utf-8"))
            found, _ = read_ledger(folder / "ledger.jsonl")
        except FileNotFoundError as exc:
            raise ResumeError(f"--resume {folder}: not a run folder ({exc.filename} is "
                              "missing)") from None
        except (ValueError, LedgerError) as exc:
            raise ResumeError(f"--resume {folder}: {exc}") from None
        return cls(folder, run_json, tuple(r.record for r in found))

    @property
    def options(self) -> dict:
        """The run's options (run.json), with how it reached a drive on another host: its
        --ssh-config and --fio-port, which run.json keeps with the device (device.remote)."""
        out = dict(self.run_json.get("options", {}))
        remote = self.run_json.get("device", {}).get("remote") or {}
        for key in ("ssh_config", "fio_port"):
            if remote.get(key) is not None and out.get(key) is None:
                out[key] = remote[key]
        return out

    def check_device(self, dev: BlockDevice) -> None:
        """Refuse a device that is not the one the run started on."""
        saved = self.run_json.get("device", {})
        now = dev.as_dict()
        diffs = [f"{k} was {saved.get(k)!r}, now {now.get(k)!r}" for k in FINGERPRINT
                 if saved.get(k) != now.get(k)]
        if dev.emulated:
            diffs.append("an emulated SSD does not outlive its session")
        if diffs:
            raise DeviceError(f"--resume {self.folder}: {dev.given} is not the device this "
                              f"run started on: {'; '.join(diffs)}. Nothing was written.")

    def check_data_units(self, dev: BlockDevice, smart_now: dict | None) -> None:
        """NVMe: data units written may have moved since the run's last smart-log record by
        what the round in flight wrote (at most about twice the largest step recorded, plus
        1 % of the capacity); more, or a counter that went backwards, means someone else
        wrote to the drive or it is another one, and the completed rounds no longer hold."""
        values = [int(r.counters["data_units_written"]) for r in self.records
                  if isinstance(r, records.DeviceCounters) and r.source == "smart-log"
                  and (r.counters or {}).get("data_units_written") is not None]
        if not values or smart_now is None:
            return
        now, last = int(smart_now["data_units_written"]), values[-1]
        unit = int(smart_now.get("page_size") or 512000)
        step = max((b - a for a, b in pairwise(values)), default=0)
        allowed = 2 * step + dev.capacity_bytes // 100 // unit
        if now < last:
            why = (f"its SMART data units written went backwards ({last:,} recorded, {now:,} "
                   "now): another drive, or a controller that resets its counters at power-on")
        elif now - last > allowed:
            why = (f"{(now - last) * unit / 1e9:,.1f} GB were written to it since the run's "
                   f"last step (at most {allowed * unit / 1e9:,.1f} GB expected from the round "
                   "in flight): something else wrote to the drive")
        else:
            return
        raise DeviceError(f"--resume {self.folder}: {dev.given} cannot continue this run: "
                          f"{why}. Nothing was written; start a new run.")

    def progress(self, test: str, gate: str | None = WIPC) -> TestProgress:
        """Where `test` stands: finished, going on after its last completed round, or to be
        restarted from purge (it stopped before passing its `gate`, or a later test of the
        run purged and rewrote the drive since its last record). Gates: WIPC (a test with
        purge and WIPC of its own); ROUND (a test whose rounds are its preconditioning,
        with no WIPC: HIR's, DIRTH's and CBW's preconditioning: on after its first
        completed round); None (DIRTH/CBW demand variation, after their preconditioning
        test: on from its last completed round, or its start). Only the records since the
        test's last test_start count: a restart from purge begins the test anew."""
        mine = [(n, r) for n, r in enumerate(self.records) if r.test == test]
        starts = [k for k, (_, r) in enumerate(mine) if isinstance(r, records.TestStart)]
        ends = [r for _, r in mine if isinstance(r, records.TestEnd) and r.finished]
        recs = [r for _, r in mine[starts[-1] if starts else 0:]]
        rounds: dict[int, records.Round] = {}
        for r in recs:
            if isinstance(r, records.Round):
                rounds[r.round] = r      # a redone round: the later record wins
        done = sorted(rounds)
        if done != list(range(1, len(done) + 1)):
            raise ResumeError(f"{self.folder}: rounds {done} of {test} are not consecutive "
                              "(the ledger lacks a round record: edited or damaged), so "
                              f"{test} cannot go on from its last round: start a new run "
                              "(without --resume).")
        history: dict[str, list[float]] = {}
        for n in done:
            for label, value in rounds[n].tracking.items():
                history.setdefault(label, []).append(value)
        last = mine[-1][0] if mine else -1
        purged_since = sorted({r.test for r in self.records[last + 1:]
                               if isinstance(r, records.Purge) and r.test != test})
        if not recs:
            reason = ""
        elif gate == WIPC and not any(isinstance(r, records.Wipc) for r in recs):
            reason = "it had stopped before WIPC completed"
        elif gate == ROUND and not done:
            reason = "it had stopped before its first round completed"
        elif purged_since:
            reason = (f"the drive was purged and rewritten since by {', '.join(purged_since)}, "
                      "so its completed rounds no longer describe the drive")
        else:
            reason = None
        return TestProgress(ends[-1] if ends else None, reason, history,
                            done[-1] if done else 0, recs[-1].time if recs else None)


def stopped(folder: Path) -> bool:
    """Did a test of the run in `folder` end interrupted or in error, or start and not end
    (its end could not be written: a full disk), so that --resume makes sense? An
    unreadable ledger counts as stopped: --resume then says what is wrong."""
    try:
        found, _ = read_records(Path(folder) / "ledger.jsonl")
    except (OSError, LedgerError):
        return True
    last: dict[str | None, records.Record] = {}
    for r in found:
        if isinstance(r, (records.TestStart, records.TestEnd)):
            last[r.test] = r
    return any(not isinstance(r, records.TestEnd) or r.status in (records.INTERRUPTED,
                                                                  records.ERROR)
               for r in last.values())
