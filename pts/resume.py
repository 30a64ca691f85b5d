"""`--resume RUN_DIR`: continue an interrupted run after its last completed round.

The run folder says what is done: a test with a test_end of steady/not_steady is finished;
a test with a `wipc` record and some `round` records goes on with the next round (the round
in flight when it stopped is redone); anything earlier starts the test again from purge.
Before anything is written, the device must be the same one (fingerprint from run.json);
the settings are the run's own (from run.json), not the command line's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from pts.device import BlockDevice, DeviceError
from pts.ledger import LedgerError, read_ledger

FINGERPRINT = ("model", "serial", "firmware", "capacity_bytes", "logical_sector")


class ResumeError(ValueError):
    """The run folder cannot be resumed; the message says why."""


@dataclass(frozen=True)
class TestProgress:
    finished: dict | None          # the test_end record of a finished test
    wipc_done: bool
    history: dict[str, list[float]]   # tracking values of the completed rounds
    last_round: int
    last_time: float | None        # time of the last record of this test


@dataclass(frozen=True)
class ResumeState:
    folder: Path
    run_json: dict
    records: tuple[dict, ...]

    @classmethod
    def load(cls, folder: str | Path) -> ResumeState:
        folder = Path(folder)
        try:
            run_json = json.loads((folder / "run.json").read_text(encoding="utf-8"))
            records, _ = read_ledger(folder / "ledger.jsonl")
        except FileNotFoundError as exc:
            raise ResumeError(f"--resume {folder}: not a run folder ({exc.filename} is "
                              "missing)") from None
        except (ValueError, LedgerError) as exc:
            raise ResumeError(f"--resume {folder}: {exc}") from None
        return cls(folder, run_json, tuple(r.data for r in records))

    @property
    def options(self) -> dict:
        return self.run_json.get("options", {})

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
        values = [int(r["counters"]["data_units_written"]) for r in self.records
                  if r.get("type") == "device_counters" and r.get("source") == "smart-log"
                  and r.get("counters", {}).get("data_units_written") is not None]
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

    def progress(self, test: str) -> TestProgress:
        recs = [r for r in self.records if r.get("test") == test]
        ends = [r for r in recs if r["type"] == "test_end"
                and r.get("status") in ("steady", "not_steady", "device_health_failure")]
        rounds: dict[int, dict] = {}
        for r in recs:
            if r["type"] == "round":
                rounds[r["round"]] = r      # a redone round: the later record wins
        done = sorted(rounds)
        if done != list(range(1, len(done) + 1)):
            raise ResumeError(f"{self.folder}: rounds {done} of {test} are not consecutive")
        history: dict[str, list[float]] = {}
        for n in done:
            for label, value in rounds[n]["tracking"].items():
                history.setdefault(label, []).append(value)
        return TestProgress(ends[-1] if ends else None,
                            any(r["type"] == "wipc" for r in recs), history,
                            done[-1] if done else 0, recs[-1]["time"] if recs else None)
