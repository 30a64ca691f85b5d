"""Datasheet requirements on --power's figures (issue 51 §3: `W <=`, `IOPS/W >=`, MB/s/W),
judged by the one datasheet mechanism (pts.qualify.judge) from the run's stored per-cell
power figures: tests/support/powered_run.py's constructed run (the reference run with a
point_power record of 5 W + 0.1 W x the point's index per IOPS point), each threshold just
met and just missed; the reference run itself (no --power) NOT CHECKED with the reason, in
`qualify` (exit 1: never passed by default) and on the Qualification page."""

from __future__ import annotations

import json
import shutil

import pytest

from pts.cli.main import main
from pts.config.datasheet import DatasheetError, parse
from pts.qualify.judge import MET, NOT_CHECKED, NOT_MET, judge
from pts.results import records
from pts.results.ledger import Ledger
from pts.stored.cells import cells
from pts.stored.data import load_run
from pts.stored.figures import datasheet_vocabulary
from tests.support import powered_run
from tests.support.helpers import pdf_text
from tests.support.powered_run import REFERENCE, watts

LABEL = "RND 4KiB 0/100"


@pytest.fixture(scope="module")
def powered(tmp_path_factory):
    return load_run(powered_run.build(tmp_path_factory.mktemp("powered") / "run"))


def iops_test(run):
    return next(t for t in run.tests if t.name == "iops")


def req(text: str):
    (r,) = parse("[[require]]\n" + text, datasheet_vocabulary(), "ds.toml")
    return r


def the_cell(run) -> dict:
    test = iops_test(run)
    cell = next(c for c in cells(test) if c["label"] == LABEL)
    index = next(p.index for p in test.points
                 if (p.rw_mix, p.block_size) == (cell["rw_mix"], cell["block_size"]))
    return cell | {"index": index}


@pytest.mark.parametrize("metric, bound", [("power_w", "at_most"), ("iops_per_w", "at_least"),
                                           ("mbps_per_w", "at_least")])
def test_both_sides_of_each_threshold(powered, metric, bound):
    cell = the_cell(powered)
    w = watts(cell["index"])                    # the first source's W, worked out by hand
    truth = {"power_w": w, "iops_per_w": cell["metrics"]["iops"] / w,
             "mbps_per_w": cell["metrics"]["mbps"] / w}[metric]
    inside, outside = (truth * 1.001, truth * 0.999) if bound == "at_most" \
        else (truth * 0.999, truth * 1.001)
    for limit, verdict in ((inside, MET), (outside, NOT_MET)):
        j = judge(powered, req(f'test="iops"\ncell="{LABEL}"\nmetric="{metric}"\n'
                               f'{bound}={limit!r}'))
        assert (j.verdict, j.measured) == (verdict, pytest.approx(truth)), j.text
        assert f"({LABEL}, iops, window rounds" in j.text


def test_a_power_requirement_names_its_cell():
    with pytest.raises(DatasheetError, match='"cell" missing: metric power_w is per cell'):
        req('test="iops"\nmetric="power_w"\nat_most=9')


def test_a_run_without_power_is_not_checked_with_the_reason(tmp_path, capsys):
    run = load_run(REFERENCE)
    j = judge(run, req(f'test="iops"\ncell="{LABEL}"\nmetric="power_w"\nat_most=1e9'))
    assert (j.verdict, j.measured, j.text) == (
        NOT_CHECKED, None, "no power source was recorded (--power)")
    # a figure of the same run that it did record is judged as ever
    assert judge(run, req(f'test="iops"\ncell="{LABEL}"\nmetric="iops"\nat_least=1'
                          )).verdict == MET
    ds = tmp_path / "ds.toml"
    ds.write_text(f'[[require]]\ntest="iops"\ncell="{LABEL}"\nmetric="iops_per_w"\n'
                  'at_least=1\n')
    assert main(["qualify", str(REFERENCE), "--datasheet", str(ds)]) == 1
    out = capsys.readouterr().out
    assert f"NOT CHECKED iops {LABEL} iops_per_w >= 1: no power source was recorded " \
           "(--power)" in out
    assert "0 of 1 requirements met" in out


def test_a_source_that_never_started_is_named(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(REFERENCE, folder)
    with open(folder / "ledger.jsonl", "a") as fh:
        fh.write(json.dumps({"type": "power_source", "time": 1.0, "test": None,
                             "name": "ipmi:10.0.0.5", "measures": "", "interval_s": 0.0,
                             "kind": "", "detail": "", "error": "no answer"}) + "\n")
    j = judge(load_run(folder), req(f'test="iops"\ncell="{LABEL}"\nmetric="power_w"\n'
                                    'at_most=1e9'))
    assert (j.verdict, j.text) == (NOT_CHECKED, "no power source was recorded (--power): "
                                   "ipmi:10.0.0.5 could not be started (no answer)")


def test_the_qualification_page_shows_not_checked(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(REFERENCE, folder)
    ledger = Ledger(folder / "ledger.jsonl")
    ledger.append(records.Requirement(
        test="iops", cell=LABEL, metric="power_w", bound="at_most", required=9.0, value=None,
        verdict=NOT_CHECKED, text="no power source was recorded (--power)",
        source="ds.toml line 1"))
    ledger.close()
    assert main(["report", str(folder)]) == 0
    text = pdf_text(folder / "report.pdf")
    assert "NOT CHECKED" in text and "is NOT CHECKED." in text
