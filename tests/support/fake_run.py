"""A stand-in for pts.run.Run where the device counters are read (prepare.record_counters,
runner.health_verdict): an NVMe device that is not there, its commands.log and its ledger;
and the records of a constructed ledger (a stopped run's, for --resume)."""

from __future__ import annotations

from types import SimpleNamespace

from pts.device.identity import BlockDevice, Identity
from pts.results import records
from pts.results.ledger import Ledger, read_records

NVME = BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 9), 1 << 30, 512, 512,
                   "nvme", False, Identity("m", "s", "f", "nvme id-ctrl"))


class FakeRun:
    """What prepare.record_counters, runner.health_verdict and the host ceiling's record
    (its fio's CPUs) use of pts.run.Run."""

    def __init__(self, tmp_path):
        self.device = NVME
        self.fio = SimpleNamespace(cpus_allowed=None)
        self.commands_log = tmp_path / "commands.log"
        self.ledger = Ledger(tmp_path / "ledger.jsonl")
        self.lines: list[str] = []
        # what pts.conditioning.latency_monitor asks before it writes: no --destructive here
        self.settings = SimpleNamespace(destructive=False)

    def write(self, text):
        self.lines.append(text)

    def deviation(self, test, text):          # as pts.run.Run.deviation
        self.ledger.append(records.Deviation(test=test, text=text))


def ledger(run) -> list[records.Record]:
    """The records the run's ledger holds (every line readable)."""
    found, problems = read_records(run.ledger.path)
    assert not problems
    return found


def start(test):
    return records.TestStart(test=test, title=test, clause="x", parameters={})


def purge(test):
    return records.Purge(test=test, method="trim", command=None, ok=True, seconds=1.0,
                         deviation=True, steps=[], verification="")


def wipc(test):
    return records.Wipc(test=test, block_size=131072, bytes_expected=1, bytes_written=1,
                        seconds=1.0, thread_count=1, queue_depth=1, raw="r")


def round_(test, n, value=5.0):
    return records.Round(test=test, round=n, tracking={"v": value}, steady_state={},
                         steady=False)
