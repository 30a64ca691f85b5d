"""XSR --resume: kill -9 after the first access group, resume: the run goes on after it (no
second purge, nothing completed redone) and ends complete. On a 64 MiB 4Kn loop device (no
FTL: only the flow is checked). About a minute.

HIR's resume after a wait state goes through the same path (pts.procedure.resume.go_on);
its resume point (the baseline and the wait states done) is tests/unit/test_resume_path.py,
and HIR killed and resumed for real at ten moments is benchmarks/faults.py (docs/faults.md):
its e2e twin here was cut for CI time (issue 31 §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from tests.support.ptsrun import kill_and_resume

# pgrep: tests.support.ptsrun.kill_and_resume runs it
pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pgrep"),
              pytest.mark.slow]


XSR = "pts/suite/test_xsr.py"
XSR_ARGS = ["--point-seconds", "2", "--purge", "trim", "--time-scale", "0.0005"]


def recs(folder: Path, test: str = "xsr") -> list[dict]:
    return [r.data for r in read_ledger(folder / "ledger.jsonl")[0]
            if r.data.get("test") in (test, None)]


def kill_after_first(make_loop, tmp_path, target: str, args: list[str], kind: str):
    """kill -9 once the ledger holds one `kind` record, resume: the run folder and the
    resumed run's output. On a 4Kn loop device (issue 23 §4: every test type on 4096-byte
    sectors)."""
    folder, _, out = kill_and_resume(
        make_loop(64 << 20, sector=4096), tmp_path / "reports", args, target,   # 4Kn
        lambda run: (run / "ledger.jsonl").read_text().count(f'"type": "{kind}"') == 1,
        limit=240)
    assert json.loads((folder / "run.json").read_text())["device"]["logical_sector"] == 4096
    return folder, out


def test_xsr_resumes_after_the_last_completed_group(make_loop, tmp_path):
    folder, out = kill_after_first(make_loop, tmp_path, XSR, XSR_ARGS, "xsr_group")
    r = recs(folder, "xsr")
    assert [x["group"] for x in r if x["type"] == "xsr_group"] == [1, 2, 3]
    assert len([x for x in r if x["type"] == "purge"]) == 1
    resume = [x for x in r if x["type"] == "resume"]
    assert len(resume) == 1 and resume[0]["after_round"] == 1
    assert [x for x in r if x["type"] == "test_end"][-1]["status"] == "complete"
    assert "resume after access group 1" in out
