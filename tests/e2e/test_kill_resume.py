"""kill -9 of the suite 10 times in ONE run, `--resume` after each: the first kill in its
purge, the second in its WIPC, the third while a pipelined point's threads wait at the gate
for the point before (`pts-gate.sh wait`), the fourth in a point's postrun (`pts-gate.sh
done`, issue 38 §1), the others at seeded random moments (mid-round — a round is one fio
process —, between rounds, report); the phase each kill hit is read from the run's files
(the gate's instants: as aimed) and at least three must differ. After each kill no process
of the run (fio, a gate script, anything holding the drive) is left 10 s later; at the end
no gate folder or host-ceiling RAM device of the killed suites is left (the next suite's
leftovers sweep removed it, and said so: at least one RAM device was left by a kill), the
ledger is readable, no completed round was lost or measured twice, the verdict is the one the
recorded rounds give, a kill in WIPC restarted the test from its purge, every resume after a
round set the write cache again, and the report declares the resume. (It replaced the three
single kills of tests/e2e/test_resume.py, whose checks are here.)"""

from __future__ import annotations

import pytest

from tests.support.campaign import (
    GATE_DONE,
    GATE_WAIT,
    LEFT_LIMIT_S,
    WIPC,
    kill_campaign,
    ledger_records,
)
from tests.support.helpers import pdf_text
from tests.support.ptsrun import IOPS, check_outcomes

# the host ceiling on: a suite killed after it made its RAM device leaves it (its atexit
# never runs), and the next suite's sweep must remove it and say so
ARGS = ["--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "9", "--purge", "trim",
        "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB", "--host-ceiling", "auto"]
KILLS, SEED = 10, 20261123
# the first kill as soon as the run purges, the next (the test restarted from its purge) in
# its WIPC: only a run started afresh goes through them, in ~4 s here, so random moments
# seldom hit them (a campaign of random kills alone hit mid-round 7 times and report 3);
# then the two instants of a pipelined round between its points (issue 38 §1)
AIM = ("purge", "WIPC", GATE_WAIT, GATE_DONE)
# seconds from a (re)started run's first new record to the other kills
SPREAD = (0.5, 8.0)

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pgrep", "pdftotext"),
              pytest.mark.slow, pytest.mark.timeout(1200)]


def test_kill9_at_random_moments_then_resume(make_loop, tmp_path):
    c = kill_campaign(make_loop(256 << 20), tmp_path / "reports", ARGS, IOPS, KILLS, SEED,
                      SPREAD, limit=900, aim=AIM)
    # the kills hit the run in different steps, as read from its ledger and commands.log
    # at each kill (tests.support.campaign.kill_phase), not only one of them
    assert len(c.phases) == KILLS and len(set(c.phases)) >= 3, c.phases
    assert c.seen >= 1, "no completed round before a kill: the kills tested only start-up"
    assert GATE_WAIT in c.phases and GATE_DONE in c.phases, c.phases
    assert c.fio_left == 0, f"a process of the killed run outlived it by {LEFT_LIMIT_S} s: {c.left}"
    assert c.leftovers == [], "a gate folder or host-ceiling device of a killed suite was left"
    # what each kill left, the next suite's sweep removed and said so: gate folders always
    # (in the campaign's own temporary directory, which only its suites sweep); RAM devices
    # are named for this host's pid namespace, so another suite's sweep (the other worker's)
    # may remove one first: at least one removal said by the campaign's own suites
    left = [p for kill in c.left_by_kill for p in kill]
    ceiling = [p for p in left if p.name.startswith("pts-ceiling-")]
    assert ceiling, f"no kill left a host-ceiling RAM device (vacuous): {c.left_by_kill}"
    assert len(c.said_next) == len(c.left_by_kill)
    for kill, said in zip(c.left_by_kill, c.said_next, strict=True):
        for gates in (p for p in kill if p.name.startswith("pts-gates-")):
            assert f"removed {gates}: the gate folder of a stopped run" in said, said[-3000:]
    assert any(f"removed {p}: the host-ceiling RAM device of a stopped run" in said
               for kill, said in zip(c.left_by_kill, c.said_next, strict=True) for p in kill
               if p in ceiling), c.said_next
    assert c.twice == [], "a completed unit was measured twice"
    assert c.lost == [], "a completed unit was lost or changed"
    # the verdict the recorded rounds give: in the ledger, the report and the exit status
    expected = check_outcomes(c.folder)["iops"]
    assert c.rc == (0 if expected.passed else 1), c.out[-3000:]
    recs = ledger_records(c.folder)
    rounds = [r["round"] for r in recs if r["type"] == "round"]
    assert rounds == list(range(1, len(rounds) + 1))
    # a kill in WIPC leaves a purge recorded and no WIPC: the test restarts from its purge
    assert WIPC in c.phases and len([r for r in recs if r["type"] == "purge"]) >= 2
    # a resume after completed rounds goes on from them, and a power cycle between stop and
    # resume can reset the write cache: it is set, read back and recorded again first
    went_on = [i for i, r in enumerate(recs) if r["type"] == "resume" and r.get("after_round")]
    assert went_on, "no resume went on after a completed round"
    for i in went_on:
        cache = next(r for r in recs[i:] if r["type"] == "write_cache")
        assert cache["when"] == "on resume", (i, cache)
    assert "Resumed run" in pdf_text(c.folder / "report.pdf")
    print(f"{c.kills} kills, {c.resumes} resumes, {c.seen} units seen at a kill, {c.units} "
          f"units, {len(rounds)} rounds; kills in {c.phases}; nothing of the run left "
          f"{max(c.gone_s):.2f} s after a kill at most ({c.gone_s})")
