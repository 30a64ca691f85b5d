"""tests.support.ptsrun.check_outcomes, the e2e tests' verdict check, on stored runs: each test's
outcome recomputed from its round records agrees with its test_end and the report's status
lines, and a test_end that says something else is caught."""

from __future__ import annotations

import json
import shutil

import pytest

from pts.report import render
from tests.support import snapshots
from tests.support.ptsrun import check_outcomes, expected_outcomes
from tests.support.synthetic.runfactory import FALLING_CURVE, build_run

pytestmark = pytest.mark.needs("pdftotext")


def rendered(folder):
    render(folder, folder / "report.pdf")
    return folder


def test_reference_run_every_round_based_test(tmp_path, reference_pdf):
    folder = shutil.copytree(snapshots.REFERENCE_RUN, tmp_path / "run")
    shutil.copy(reference_pdf, folder / "report.pdf")
    found = check_outcomes(folder)
    assert {k: (e.status, e.steady_round, e.window) for k, e in found.items()} == {
        **{k: ("steady", 7, [3, 7]) for k in (
            "iops", "throughput-1024k", "throughput-128k", "latency", "dirth-precondition",
            "dirth", "cbw-precondition", "cbw")},
        "hir": ("complete", 7, [3, 7])}


def test_not_steady_after_max_rounds(tmp_path):
    (exp,) = check_outcomes(rendered(build_run(tmp_path, curve=FALLING_CURVE))).values()
    assert (exp.status, exp.rounds, exp.steady_round, exp.window) == ("not_steady", 7, None,
                                                                      [3, 7])


def test_a_test_end_the_rounds_do_not_give_is_caught(tmp_path):
    folder = build_run(tmp_path, curve=FALLING_CURVE)
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    end = json.loads(lines[-1])
    assert end["type"] == "test_end"
    end |= {"status": "steady", "steady_round": 7}        # the falling rounds are not steady
    (folder / "ledger.jsonl").write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    with pytest.raises(AssertionError, match="not_steady"):
        check_outcomes(rendered(folder))


def test_steady_at_the_first_steady_window_not_a_later_one():
    """Rounds 1..7 of a test steady from round 5 on: the run should have stopped at 5."""
    start = {"type": "test_start", "test": "iops", "title": "IOPS", "parameters": {
        "window_rounds": 5, "max_data_excursion": 0.2, "max_slope_excursion": 0.1,
        "max_rounds": 9}}
    rounds = [{"type": "round", "test": "iops", "round": n, "tracking": {"x": 100.0}}
              for n in range(1, 8)]
    (exp,) = expected_outcomes([start, *rounds]).values()
    assert (exp.status, exp.rounds, exp.steady_round, exp.window) == ("steady", 5, 5, [1, 5])
