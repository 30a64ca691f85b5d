"""pts.stored.data: reading a run folder, measurement window, cell means, verdict."""

from __future__ import annotations

import json

import pytest

from pts.results import records
from pts.stored.data import load_run
from pts.stored.model import INCOMPLETE, NOT_STEADY, STEADY, RunFolderError
from tests.support.synthetic.runfactory import (
    FALLING_CURVE,
    NA_REASON,
    STEADY_CURVE,
    RunFolder,
    build_run,
    run_json,
    write_iops_test,
)


def cell(test, mix, bs):
    return next(c for c in test.cells if (c.rw_mix, c.block_size) == (mix, bs))


def test_compliant_steady_run(tmp_path):
    run = load_run(build_run(tmp_path))
    (test,) = run.tests
    assert test.state == STEADY
    assert test.window == (3, 7)
    assert test.status == "Steady state reached at round 7 (window 3..7)"
    assert run.verdict.compliant and run.verdict.text == "COMPLIANT RUN"
    assert run.deviations == () and run.notes == ()


def test_cell_means_over_window_and_na(tmp_path):
    test = load_run(build_run(tmp_path)).tests[0]
    # Window rounds 3..7 multiply the base by 1.08, 1.04, 1, 1, 1: mean factor 1.024.
    assert cell(test, "65/35", 4096).mean == pytest.approx(60000 * 1.024)
    assert cell(test, "100/0", 1048576).mean == pytest.approx(3072.0)
    assert cell(test, "100/0", 1048576).rounds == 5
    na = cell(test, "0/100", 512)
    assert na.na and na.mean is None and na.reason == NA_REASON
    # Loop order of the test_start parameters: mixes outer, block sizes inner.
    assert [(c.rw_mix, c.block_size) for c in test.cells][:3] == [
        ("100/0", 1048576), ("100/0", 4096), ("100/0", 512)]


def test_window_evidence_comes_from_the_closing_round(tmp_path):
    test = load_run(build_run(tmp_path)).tests[0]
    ev = test.window_evidence["RND 4KiB 0/100"]
    assert (ev.window_first, ev.window_last, ev.steady) == (3, 7, True)
    assert ev.average == pytest.approx(40000 * 1.024)
    assert ev.slope == pytest.approx(-800.0)


def test_never_steady(tmp_path):
    run = load_run(build_run(tmp_path, curve=FALLING_CURVE))
    test = run.tests[0]
    assert test.state == NOT_STEADY
    assert test.status.startswith("STEADY STATE NOT ACHIEVED after 7 rounds")
    assert run.verdict.text == "NOT A COMPLIANT RUN"
    assert any("STEADY STATE NOT ACHIEVED" in r for r in run.verdict.reasons)


def test_every_kind_of_deviation_is_listed(tmp_path):
    folder = build_run(tmp_path, run_deviations=["Test point duration 1 s instead of 60 s."],
                       ledger_deviations=["Run resumed at round 4."], purge_method="trim",
                       purge_deviation=True, write_cache_actual="write back",
                       write_cache_settable=False)
    run = load_run(folder)
    texts = [(d.source, d.text) for d in run.deviations]
    assert texts[:2] == [("run.json", "Test point duration 1 s instead of 60 s."),
                         ("ledger", "Run resumed at round 4.")]
    assert len(texts) == 2     # one source: the report adds none of its own
    assert not run.verdict.compliant


@pytest.mark.parametrize("options", [
    {"run_deviations": ["Purge not performed (--purge none)."]},
    {"ledger_deviations": ["Write cache: could not be set."]},
])
def test_one_deviation_makes_the_run_not_compliant(tmp_path, options):
    run = load_run(build_run(tmp_path, **options))
    assert run.verdict.text == "NOT A COMPLIANT RUN"
    assert len(run.deviations) == 1


def test_emulated_device_is_not_compliant(tmp_path):
    run = load_run(build_run(tmp_path, emulated=True))
    assert run.verdict.text == "NOT A COMPLIANT RUN"
    assert any("emulated" in r for r in run.verdict.reasons)


def test_run_cut_short_is_incomplete_with_last_rounds_as_window(tmp_path):
    run = load_run(build_run(tmp_path, curve=STEADY_CURVE[:6], finished=False))
    test = run.tests[0]
    assert test.state == INCOMPLETE and test.end is None
    assert test.window == (2, 6)
    assert test.status.startswith("INCOMPLETE")
    assert not run.verdict.compliant


def test_short_window_evidence_is_recomputed(tmp_path):
    test = load_run(build_run(tmp_path, curve=STEADY_CURVE[:3], finished=False)).tests[0]
    assert test.window == (1, 3)
    assert test.window_evidence["RND 4KiB 0/100"].rounds == (1, 2, 3)


def test_torn_last_line_is_a_note(tmp_path):
    folder = build_run(tmp_path)
    with (folder / "ledger.jsonl").open("a") as fh:
        fh.write('{"type": "point", "test": "iops", "rou')
    run = load_run(folder)
    assert run.tests[0].state == STEADY
    assert len(run.notes) == 1 and "torn last record" in run.notes[0]


def test_corrupt_middle_line_names_file_and_line(tmp_path):
    folder = build_run(tmp_path)
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    lines[2] = lines[2][:20]
    (folder / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunFolderError, match=r"ledger\.jsonl line 3: corrupt"):
        load_run(folder)


def test_record_missing_a_required_field_names_the_line(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    run.record("point", test="iops", rw_mix="100/0", block_size=4096, iops=1.0)
    with pytest.raises(RunFolderError, match=r"line 1: point record has no \"round\""):
        load_run(run.path)


def test_unknown_record_types_are_skipped(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    run.record("session_note", text="from a newer writer")
    write_iops_test(run, STEADY_CURVE)
    run.record("test_annotation", test="iops", whatever=[1, 2])
    assert load_run(run.path).tests[0].state == STEADY


def test_point_written_again_after_resume_replaces_the_first(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    write_iops_test(run, STEADY_CURVE)
    lines = run.ledger.read_text().splitlines()
    first = next(json.loads(x) for x in lines if '"point"' in x and '"round": 7' in x)
    run.record("point", **{**{k: v for k, v in first.items() if k not in ("type", "time")},
                           "iops": first["iops"] + 500})
    mean = cell(load_run(run.path).tests[0], first["rw_mix"], first["block_size"]).mean
    assert mean == pytest.approx(3072.0 + 100)   # +500 in one of the 5 window rounds


def test_error_end_status(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    write_iops_test(run, STEADY_CURVE[:2], finished=False)
    run.record("test_end", test="iops", status="error", rounds=None, steady_round=None,
               window=None, message="FioError: fio exited 1")
    test = load_run(run.path).tests[0]
    assert test.status == "ERROR after 2 rounds (error): FioError: fio exited 1"


def test_missing_ledger_means_no_results(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    run.ledger.unlink()
    loaded = load_run(run.path)
    assert loaded.tests == () and "missing" in loaded.notes[0]
    assert loaded.verdict.text == "NOT A COMPLIANT RUN"


def test_missing_folder_and_run_json(tmp_path):
    with pytest.raises(RunFolderError, match="does not exist"):
        load_run(tmp_path / "nope")
    with pytest.raises(RunFolderError, match="no run.json"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(RunFolderError, match="run.json"):
        load_run(tmp_path)


def test_unrecorded_emulation_flag_is_not_compliant(tmp_path):
    folder = build_run(tmp_path)
    info = json.loads((folder / "run.json").read_text())
    del info["device"]["emulated"]
    (folder / "run.json").write_text(json.dumps(info))
    run = load_run(folder)
    assert run.device.emulated is None
    assert run.verdict.text == "NOT A COMPLIANT RUN"


def test_the_run_keeps_the_records_it_read(tmp_path):
    """RunView.records / TestResult.records: every ledger record the load parsed, typed, in
    ledger order (a type this version does not know and a record of no test included, a
    torn last line not), so no reader opens ledger.jsonl again."""
    run = RunFolder(tmp_path / "r", run_json())
    run.record("session_note", text="from a newer writer")
    write_iops_test(run, STEADY_CURVE)
    run.record("test_annotation", test="iops", whatever=[1, 2])
    run.raw_line('{"type": "point", "test": "iops", "rou', newline=False)
    lines = [json.loads(x) for x in run.ledger.read_text().splitlines()[:-1]]
    loaded = load_run(run.path)

    def key(found):
        return [(r.to_json()["type"], r.time, r.test) for r in found]

    assert key(loaded.records) == [(x["type"], x["time"], x.get("test")) for x in lines]
    assert isinstance(loaded.records[0], records.Unknown) and loaded.records[0].test is None
    (test,) = loaded.tests
    assert key(test.records) == [(x["type"], x["time"], "iops") for x in lines
                                 if x.get("test") == "iops"]
    assert test.records[3].to_json() == lines[4]     # a known type, every field as written
    assert test.records[-1].extra == {"whatever": [1, 2]}
    points = test.records_of(records.Point)
    assert len(points) == sum(x["type"] == "point" for x in lines) > 0
    assert loaded.records_of(records.TestEnd) == test.records_of(records.TestEnd) != ()
