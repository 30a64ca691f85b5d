"""Where a run stands (pts.serve.state), from the run view and its files' times: each rule
once, on synthetic run folders."""

from __future__ import annotations

import json

import pytest

from pts.serve.index import RunIndex
from pts.serve.state import run_state
from tests.serve.runs import OLD, append, make, set_age, unfinished


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
    ({"given": "ssh://lab@host/dev/nvme0n1"}, "interrupted"),   # --resume: not over ssh
    ({}, "resumable"),
])
def test_resumable_only_where_resume_would_take_it(tmp_path, device, expected):
    folder = unfinished(tmp_path, "a", rounds=3)
    info = json.loads((folder / "run.json").read_text())
    info["device"].update(device)
    (folder / "run.json").write_text(json.dumps(info))
    set_age(folder, OLD)
    assert state_of(folder) == expected
