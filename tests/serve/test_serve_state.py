"""Where a run stands (pts.serve.state), from the run view and its files' times: each rule
once, on synthetic run folders."""

from __future__ import annotations

import json

import pytest

from pts.procedure.plan import hms
from pts.serve.index import RunIndex
from pts.serve.state import eta, live, run_state
from tests.support.serve_runs import OLD, append, make, set_age, unfinished


def state_of(folder, stale_after=600.0) -> str:
    index = RunIndex([folder.parent])
    entry = next(e for e in index.refresh() if e.folder == folder)
    return run_state(entry, stale_after)


def test_finished_when_every_test_ended_finished(tmp_path):
    assert state_of(make(tmp_path, "a", age=None, report=False)) == "finished"


def test_running_while_an_open_test_writes(tmp_path):
    folder = unfinished(tmp_path, "a", age=None)
    assert state_of(folder) == "running"
    set_age(folder, 601)
    assert state_of(folder) == "resumable"               # nothing written for too long


def test_commands_log_is_a_sign_of_life(tmp_path):
    folder = unfinished(tmp_path, "a", age=601)
    (folder / "commands.log").write_text('["fio", "round.fio"]\n')
    assert state_of(folder) == "running"


def test_a_report_written_after_the_ledger_ends_the_session(tmp_path):
    folder = unfinished(tmp_path, "a", age=None)
    (folder / "report.pdf").write_bytes(b"%PDF")
    assert state_of(folder) == "resumable"


@pytest.mark.parametrize("status", ["interrupted", "error"])
def test_an_interrupted_test_end_last_is_stopping_and_a_resume_runs_on(tmp_path, status):
    folder = unfinished(tmp_path, "a", age=None, rounds=3)
    append(folder, type="test_end", test="iops", status=status, rounds=None,
           steady_round=None, window=None, message="interrupted")
    assert state_of(folder) == "resumable"
    append(folder, type="resume", test="iops", after_round=3, idle_minutes=1.0)
    append(folder, type="round", test="iops", round=4, tracking={}, steady_state={},
           steady=False)
    assert state_of(folder) == "running"


@pytest.mark.parametrize("device, expected", [
    ({"emulated": True}, "interrupted"),                 # an emulated SSD is gone
    ({"emulated": None}, "interrupted"),                 # run.json does not say
    ({"given": "ssh://lab@host/dev/nvme0n1"}, "resumable"),     # --resume over ssh too
    ({}, "resumable"),
])
def test_resumable_only_where_resume_would_take_it(tmp_path, device, expected):
    folder = unfinished(tmp_path, "a", rounds=3)
    info = json.loads((folder / "run.json").read_text())
    info["device"].update(device)
    (folder / "run.json").write_text(json.dumps(info))
    set_age(folder, OLD)
    assert state_of(folder) == expected


def entry_of(folder):
    return next(e for e in RunIndex([folder.parent]).refresh() if e.folder == folder)


def test_eta_as_the_console_gives_it(tmp_path):
    """4 of 25 rounds done, window 5: best = one more round, worst = 21 more; a round lasts
    its first point's start to its last point's end; time since the last round ended counts
    against both."""
    test = entry_of(unfinished(tmp_path, "a", age=None)).view.tests[0]
    first = [p for p in test.points if p.round == 1]
    per = max(p.end for p in first) - min(p.start for p in first)
    assert per == 60 * len(first) > 0
    ended = max(p.end for p in test.points)
    assert eta(test, now=ended) == (per, 21 * per)
    assert eta(test, now=ended + 100) == (per - 100, 21 * per - 100)
    assert eta(test, now=ended + 99999) == (0.0, 0.0)


def test_no_eta_before_a_round_or_after_the_end(tmp_path):
    assert eta(entry_of(make(tmp_path, "done", age=None)).view.tests[0]) is None
    assert eta(entry_of(unfinished(tmp_path, "new", rounds=0, age=None)).view.tests[0]) \
        is None


def test_the_live_state_carries_the_eta(tmp_path):
    entry = entry_of(unfinished(tmp_path, "a", age=None))
    ended = max(p.end for p in entry.view.tests[0].points)
    shown = live(entry, stale_after=1e12, now=ended + 30)
    best, worst = eta(entry.view.tests[0], now=ended + 30)
    assert (shown["eta_best_s"], shown["eta_worst_s"]) == (round(best), round(worst))
    assert shown["eta"] == f"{hms(best)}..{hms(worst)}" and best > 0
