"""A WIPC that wrote less than planned stops the test before its rounds (PTS 2.0.2 §3.3:
the drive was not preconditioned), and leaves no `wipc` record, so --resume starts the test
again from purge instead of measuring rounds on a half-preconditioned drive.

fio's answer is its recorded JSON of a 4-thread WIPC of 2 x 256 MiB (tests/data/
fio-3.33-wipc-4jobs.json, group_reporting: 536870912 bytes written), as it is (the amount
planned) and derived with `write.io_bytes` cut to 3/4 (fio stopped early)."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest

from pts.conditioning import prepare, wipc
from pts.device.identity import BlockDevice, Identity
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.results.resume import ResumeState
from pts.tools.fio import Fio
from tests.support.helpers import DATA

MIB = 1 << 20
RECORDED = json.loads((DATA / "fio-3.33-wipc-4jobs.json").read_text())
SHORT = copy.deepcopy(RECORDED)
SHORT["jobs"][0]["write"]["io_bytes"] = 402653184           # 3/4 of the planned bytes
LOOP = BlockDevice("/dev/loop9", "/dev/loop9", "loop9", (7, 9), 256 * MIB, 512, 512, "loop",
                   False, Identity("m", "s", "f", "sysfs"))


class RecordedFio(Fio):
    """fio answering with a recorded JSON document; the job files it was given are kept."""

    def __init__(self, doc: dict):              # no fio binary needed
        self.doc, self.jobs = doc, []
        self.log_file, self.remote, self.cpus_allowed = None, None, None

    def run_document(self, filename, text, out_dir, name, timeout, histograms, cwd=None):
        self.jobs.append(text)
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(self.doc))
        return self.doc, path, 0.0, 1.0, ""


def fake_run(tmp_path, doc: dict) -> SimpleNamespace:
    """What prepare.wipc_step uses of pts.run.Run (a loop device: no device counters)."""
    run = SimpleNamespace(
        device=LOOP, fio=RecordedFio(doc), commands_log=tmp_path / "commands.log",
        ledger=Ledger(tmp_path / "ledger.jsonl"), lines=[],
        spec=SimpleNamespace(wipc=SimpleNamespace(capacity_multiple=2), common=SimpleNamespace(
            thread_count=4, queue_depth=32, active_range_pct=100)),
        raw_dir=lambda test: tmp_path / "raw" / test,
        relative=lambda path: str(path.relative_to(tmp_path)))
    run.write = run.lines.append
    run.deviation = lambda test, text: run.ledger.append(records.Deviation(test=test, text=text))
    (tmp_path / "run.json").write_text("{}")
    return run


def test_the_planned_amount_is_recorded(tmp_path):
    run = fake_run(tmp_path, RECORDED)
    prepare.wipc_step(run, "iops", 256 * MIB, 128 << 10)
    (rec,) = read_records(run.ledger.path)[0]
    assert isinstance(rec, records.Wipc) and rec.bytes_written == rec.bytes_expected == 512 * MIB


def test_a_short_wipc_stops_the_test_and_resume_starts_it_from_purge(tmp_path):
    run = fake_run(tmp_path, SHORT)
    run.ledger.append(records.TestStart(test="iops", title="IOPS", clause="x", parameters={}))
    run.ledger.append(records.Purge(test="iops", method="trim", command=None, ok=True,
                                    seconds=1.0, deviation=True, steps=[], verification=""))
    with pytest.raises(wipc.PreconditioningError,
                       match=r"^WIPC wrote 402653184 bytes, planned 536870912 \(fio output "
                             r".*raw/iops/wipc\.json\): the drive was not preconditioned as "
                             r"PTS 2\.0\.2 §3\.3 requires, so the test stops before its "
                             r"rounds\. Look in fio's output for the error .* and re-run\.$"):
        prepare.wipc_step(run, "iops", 256 * MIB, 128 << 10)
    assert len(run.fio.jobs) == 1 and run.fio.jobs[0].count("[wipc") == 4
    found, problems = read_records(run.ledger.path)
    assert not problems and [type(r) for r in found] == [records.TestStart, records.Purge]
    progress = ResumeState.load(tmp_path).progress("iops")
    assert progress.restart_reason == "it had stopped before WIPC completed"
