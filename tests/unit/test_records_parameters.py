"""test_start `parameters`: one name per option. --point-seconds is `point_seconds` in every
test that records it (WSAT's sample and XSR's interval included); a run stored before that
(WSAT `sample_seconds`, XSR `interval_seconds`) reads with the one name
(pts.results.parameters, through records.parse), and the summary page says what a test's
point is from the test, not from which name its parameters hold."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.report.pages import summary
from pts.results import records
from pts.results.ledger import read_records
from pts.stored.data import load_run
from pts.testdefs import dirth_cbw_jobs, hir, iops, latency, throughput, wsat, xsr
from tests.support.helpers import DATA
from tests.support.synthetic.synthrun import CAPACITY

REFERENCE = DATA / "reference-run"


def settings(point_seconds=7):
    return make_settings(load_spec("pts-2.0.2-enterprise"), device="/dev/x", destructive=True,
                         point_seconds=point_seconds, max_rounds=None, purge="auto",
                         reports_dir="/tmp")


def written(s) -> dict[str, dict]:
    """Every test type's test_start parameters, as its testdef writes them."""
    device = SimpleNamespace(capacity_bytes=CAPACITY, logical_sector=512)
    ar = CAPACITY
    w = dirth_cbw_jobs.workload(dirth_cbw_jobs.section(s, "cbw"), 512)
    return {"iops": iops.parameters(s, ar), "latency": latency.parameters(s, ar),
            "throughput": throughput.parameters(s, 1 << 20, ar, "SEQ 1024KiB"),
            "wsat": wsat.parameters(SimpleNamespace(spec=s.spec), wsat.wsat_plan(s, device)),
            "hir": hir.parameters(s, ar), "xsr": xsr.parameters(s, ar),
            "cbw": dirth_cbw_jobs.parameters(s, "cbw", ar, w, [], dirth_cbw_jobs.WRITES)}


def test_every_test_records_point_seconds_under_the_one_name():
    for test, p in written(settings(7)).items():
        assert p["point_seconds"] == 7, test
        assert not {"sample_seconds", "interval_seconds"} & set(p), test


@pytest.mark.parametrize("old", ["sample_seconds", "interval_seconds"])
def test_an_older_name_reads_as_the_one_name(old):
    rec = records.parse({"type": "test_start", "test": "t", "title": "T", "clause": "c",
                         "parameters": {old: 60, "thread_count": 4}})
    assert rec.parameters == {"point_seconds": 60, "thread_count": 4}
    both = records.parse({"type": "test_start", "test": "t", "title": "T", "clause": "c",
                          "parameters": {old: 60, "point_seconds": 2}})
    assert both.parameters == {"point_seconds": 2}          # the current name wins
    odd = records.parse({"type": "test_start", "test": "t", "title": "T", "clause": "c",
                         "parameters": [1]})
    assert odd.parameters == [1]               # not an object: the reader says so


def test_the_stored_reference_run_reads_with_the_one_name():
    raw = [json.loads(line) for line in
           (REFERENCE / "ledger.jsonl").read_text(encoding="utf-8").splitlines()]
    stored = next(r["parameters"] for r in raw
                  if r.get("type") == "test_start" and r["test"] == "wsat")
    assert "sample_seconds" in stored and "point_seconds" not in stored   # written before
    found, problems = read_records(REFERENCE / "ledger.jsonl")
    assert not problems
    (start,) = [r for r in found if isinstance(r, records.TestStart) and r.test == "wsat"]
    assert start.parameters["point_seconds"] == stored["sample_seconds"]
    assert "sample_seconds" not in start.parameters


def setup_rows(run, name: str) -> dict[str, str]:
    test = next(t for t in run.tests if t.name == name)
    return dict(summary.test_setup_rows(run, test))


def test_the_summary_names_a_point_by_its_test(tmp_path):
    """WSAT: a sample interval, whether its run stored `sample_seconds` (the reference run)
    or `point_seconds`; a round-based test: a point duration and rounds."""
    old = load_run(REFERENCE)
    rows = setup_rows(old, "wsat")
    assert rows["Sample interval"].startswith(f"{old_wsat_seconds()} s, steady-state window")
    assert "Test point duration" not in rows and "Parameter sample seconds" not in rows
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("run.json", "ledger.jsonl"):
        (folder / name).write_text((REFERENCE / name).read_text(encoding="utf-8")
                                   .replace('"sample_seconds"', '"point_seconds"'))
    rows = setup_rows(load_run(folder), "wsat")
    assert rows["Sample interval"].startswith(f"{old_wsat_seconds()} s, steady-state window")
    assert "Test point duration" not in rows and "Rounds" not in rows
    iops_rows = setup_rows(old, "iops")
    assert iops_rows["Test point duration"] == "60 s" and "Sample interval" not in iops_rows


def old_wsat_seconds():
    found, _ = read_records(REFERENCE / "ledger.jsonl")
    return next(r.parameters["point_seconds"] for r in found
                if isinstance(r, records.TestStart) and r.test == "wsat")
