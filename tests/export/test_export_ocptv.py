"""`python -m pts export RUN_DIR --ocptv` (pts/export/ocptv.py): every line checked against
the OCP Test & Validation output schema 2.0 as published (tests/data/ocptv-schema/, from
opencomputeproject/ocp-diag-core json_spec/output/), on the reference run and on synthetic
runs (tests/support/synthetic/runfactory.py)."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from pts.cli.main import main
from pts.stored import ocp_every_id, waf
from pts.stored.data import load_run
from tests.support.helpers import REPO
from tests.support.ocptv_schema import (
    check_lines,
    run_artifacts,
    schema_validator,
    step_artifacts,
)
from tests.support.synthetic.runfactory import (
    FALLING_CURVE,
    SERIAL,
    STEADY_CURVE,
    T0,
    build_run,
)

REFERENCE = REPO / "tests" / "data" / "reference-run"
COUNTERS_PAGE = 4096


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    return schema_validator()


def export(folder: Path, capsys) -> list[dict]:
    assert main(["export", str(folder), "--ocptv"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n")
    return [json.loads(line) for line in out.splitlines()]


def stamp(lines, kind, step="1") -> float:
    (line,) = [ln for ln in lines if kind in ln.get("testStepArtifact", {})
               and ln["testStepArtifact"]["testStepId"] == step]
    return datetime.fromisoformat(line["timestamp"]).timestamp()


def ledger_time(folder: Path, type_: str) -> float:
    recs = [json.loads(t) for t in (folder / "ledger.jsonl").read_text().splitlines()]
    return next(r["time"] for r in recs if r["type"] == type_)


def measurements(lines, step="1") -> dict[str, dict]:
    return {m["name"]: m for m in step_artifacts(lines, "measurement", step)}


def test_reference_run_every_line_valid_and_every_test_a_step(validator, capsys):
    lines = export(REFERENCE, capsys)
    check_lines(lines, validator)
    run = load_run(REFERENCE)
    assert "testRunStart" in lines[1]["testRunArtifact"]
    assert lines[-1]["testRunArtifact"]["testRunEnd"] == {"status": "COMPLETE",
                                                         "result": "FAIL"}
    starts = [ln["testStepArtifact"] for ln in lines
              if "testStepStart" in ln.get("testStepArtifact", {})]
    assert [s["testStepStart"]["name"] for s in starts] == [t.name for t in run.tests] + [
        "ocp-requirements-2.7"]             # the OCP requirements: the run is on an NVMe drive
    for n, test in enumerate(run.tests, 1):
        (end,) = step_artifacts(lines, "testStepEnd", str(n))
        assert end == {"status": "COMPLETE"}
        assert stamp(lines, "testStepStart", str(n)) == test.started
        assert stamp(lines, "testStepEnd", str(n)) == test.end.time
    # WSAT's headline figures, as its wsat_result record holds them
    wsat = next(n for n, t in enumerate(run.tests, 1) if t.name == "wsat")
    got = measurements(lines, str(wsat))
    result = run.tests[wsat - 1].result
    assert got["wsat fob_iops"]["value"] == result["fob_iops"]
    assert got["wsat ss_average"]["value"] == result["ss_average"]
    # the Latency test's ART and MRT per cell
    lat = next(n for n, t in enumerate(run.tests, 1) if t.name == "latency")
    names = measurements(lines, str(lat))
    assert "RND 4KiB 0/100 lat_mean_us" in names and "RND 4KiB 0/100 lat_max_us" in names
    assert names["RND 4KiB 0/100 lat_mean_us"]["unit"] == "us"


def test_a_diagnosis_per_ocp_requirement_id(validator, capsys):
    """The run on an NVMe drive: a last step holds one diagnosis per requirement ID of the
    v2.7 text, each what `qualify --ocp 2.7` says of it (PASS / FAIL; NOT APPLICABLE and NOT
    CHECKED typed UNKNOWN, the word in the verdict), and the counts."""
    lines = export(REFERENCE, capsys)
    check_lines(lines, validator)
    sid = str(len(load_run(REFERENCE).tests) + 1)
    found = step_artifacts(lines, "diagnosis", sid)
    every = ocp_every_id.judge_every(load_run(REFERENCE), "2.7")
    assert len(found) == len(every.verdicts) == 1717
    for d, v in zip(found, every.verdicts, strict=True):
        assert d["verdict"] == f"ocp-2.7 {v.id} {v.verdict}"
        assert d["type"] == (v.verdict if v.verdict in ("PASS", "FAIL") else "UNKNOWN")
        assert v.reason in d["message"] and f"line {v.entry.at}]" in d["message"]
    assert [d["type"] for d in found].count("PASS") == 1        # CTO-8, as qualify says
    (note,) = step_artifacts(lines, "log", sid)
    assert note["message"].startswith("OCP DC NVMe SSD 2.7: 1 PASS, 0 FAIL, 59 NOT "
                                      "APPLICABLE, 1657 NOT CHECKED of 1717 requirement IDs")
    assert step_artifacts(lines, "testStepEnd", sid) == [{"status": "COMPLETE"}]


def test_reference_run_operating_points_hir_and_xsr_figures(capsys):
    """The tests without a cell matrix: their figures as their ledger records hold them."""
    lines = export(REFERENCE, capsys)
    recs = [json.loads(t) for t in (REFERENCE / "ledger.jsonl").read_text().splitlines()]
    steps = {s["testStepStart"]["name"]: s["testStepId"] for s in
             (ln.get("testStepArtifact", {}) for ln in lines) if "testStepStart" in s}
    for test in ("dirth", "cbw"):
        got = measurements(lines, steps[test])
        ops = [r for r in recs if r["type"] == "operating_point" and r["test"] == test]
        assert len(ops) == 3
        for op in ops:
            m = got[f"{op['name']} iops"]
            assert m["value"] == op["iops"] and m["unit"] == "IOPS"
            assert (m["metadata"]["thread_count"], m["metadata"]["queue_depth"]) == (
                op["thread_count"], op["queue_depth"])
            assert got[f"{op['name']} lat_mean_us"]["value"] == op["lat_mean_us"]
    hir = measurements(lines, steps["hir"])
    states = [r for r in recs if r["type"] == "hir_state"]
    assert len(states) == 5
    for st in states:
        name = f"hir state {st['state']} ({st['idle_s']} s idle)"
        assert hir[f"{name} wait_ratio"]["value"] == st["ratio"]   # the index's name
        assert hir[f"{name} wait_iops"]["value"] == st["wait_iops"]
    (base,) = [r for r in recs if r["type"] == "hir_baseline"]
    assert hir["hir baseline_iops"]["value"] == base["ss_iops"]
    xsr = measurements(lines, steps["xsr"])
    groups = [r for r in recs if r["type"] == "xsr_group"]
    finals = {n: m["value"] for n, m in xsr.items() if n.endswith("final_level_mbps")}
    assert sorted(finals.values()) == sorted(g["final_level_mbps"] for g in groups)
    assert sum(n.endswith("recovery_s") for n in xsr) == sum(
        g["recovery_s"] is not None for g in groups if g["group"] > 1)
    # group 1 has no switch before it: no recovery figure, not even a "not given" line
    assert not [lg for lg in step_artifacts(lines, "log", steps["xsr"])
                if "group 1" in lg["message"] and "recovery" in lg["message"]]


def test_compliant_run_is_pass_with_the_drive_and_the_window_figures(tmp_path, validator,
                                                                      capsys):
    folder = build_run(tmp_path)
    lines = export(folder, capsys)
    check_lines(lines, validator)
    (start,) = run_artifacts(lines, "testRunStart")
    dut = start["dutInfo"]
    assert dut["hardwareInfos"] == [{"hardwareInfoId": "dut", "name": "Synthetic NVMe SSD",
                                     "serialNumber": SERIAL, "location": "/dev/nvme9n1"}]
    firmware = next(s for s in dut["softwareInfos"] if s["softwareType"] == "FIRMWARE")
    assert firmware["version"] == "FW1.2.3"
    assert dut["metadata"]["capacity_bytes"] == 960197124096
    assert {"info": "hostname: testhost"} in dut["platformInfos"]
    assert start["parameters"]["spec"]["name"] == "pts-2.0.2-enterprise"
    assert start["parameters"]["options"]["max_rounds"] == 25
    assert lines[1]["timestamp"] == "2026-11-21T12:00:00Z"     # run.json "started"
    assert run_artifacts(lines, "testRunEnd") == [{"status": "COMPLETE", "result": "PASS"}]

    got = measurements(lines)
    window_mean = math.fsum(STEADY_CURVE[2:7]) / 5
    assert math.isclose(got["RND 4KiB 0/100 iops"]["value"], 40000 * window_mean)
    assert got["RND 4KiB 0/100 iops"]["unit"] == "IOPS"
    assert got["RND 4KiB 0/100 iops"]["metadata"] == {"window_rounds": [3, 4, 5, 6, 7]}
    assert math.isclose(got["RND 1024KiB 65/35 iops"]["value"], 2000 * window_mean)
    # the N/A 0.5 KiB cells: a log each, no measurement (never a 0)
    assert not [n for n in got if "0.5KiB" in n]
    logs = [lg["message"] for lg in step_artifacts(lines, "log")]
    assert sum("0.5KiB" in m and "N/A" in m for m in logs) == 3
    average = got["RND 4KiB 0/100 window average"]["value"]
    assert math.isclose(average, 40000 * window_mean)
    for what, fraction in (("data excursion", 0.2), ("slope excursion", 0.1)):
        m = got[f"RND 4KiB 0/100 {what}"]
        (check,) = m["validators"]
        assert check["type"] == "LESS_THAN_OR_EQUAL"
        assert math.isclose(check["value"], fraction * average)
        assert m["value"] <= check["value"]           # steady: within its limit
    diagnoses = step_artifacts(lines, "diagnosis")
    assert [(d["verdict"], d["type"]) for d in diagnoses] == [
        ("steady-state", "PASS"), ("steady-state", "PASS"), ("pts-steady", "PASS")]
    assert "rounds 3..7" in diagnoses[0]["message"]
    assert step_artifacts(lines, "testStepEnd") == [{"status": "COMPLETE"}]
    assert stamp(lines, "testStepStart") == ledger_time(folder, "test_start")
    assert stamp(lines, "testStepEnd") == ledger_time(folder, "test_end")
    assert stamp(lines, "testStepStart") > T0


def test_not_steady_run_is_fail_with_the_excursion_over_its_limit(tmp_path, validator,
                                                                  capsys):
    lines = export(build_run(tmp_path, curve=FALLING_CURVE), capsys)
    check_lines(lines, validator)
    assert run_artifacts(lines, "testRunEnd") == [{"status": "COMPLETE", "result": "FAIL"}]
    slope = measurements(lines)["RND 4KiB 0/100 slope excursion"]
    assert slope["value"] > slope["validators"][0]["value"]
    diagnoses = step_artifacts(lines, "diagnosis")
    assert ("steady-state-not-reached", "FAIL") in [(d["verdict"], d["type"])
                                                    for d in diagnoses]
    assert (diagnoses[-1]["verdict"], diagnoses[-1]["type"]) == ("pts-not-steady", "FAIL")
    verdict = run_artifacts(lines, "log")[-1]
    assert verdict["severity"] == "WARNING"
    assert verdict["message"].startswith("verdict: NOT A COMPLIANT RUN; IOPS: STEADY STATE "
                                         "NOT ACHIEVED")


def test_incomplete_run_is_error_not_applicable(tmp_path, validator, capsys):
    lines = export(build_run(tmp_path, finished=False), capsys)
    check_lines(lines, validator)
    assert run_artifacts(lines, "testRunEnd") == [{"status": "ERROR",
                                                   "result": "NOT_APPLICABLE"}]
    assert step_artifacts(lines, "testStepEnd") == [{"status": "ERROR"}]
    (error,) = step_artifacts(lines, "error")
    assert error["symptom"] == "test-incomplete"
    assert "has no test_end record" in error["message"]


def test_deviations_are_logged_once_where_they_belong(tmp_path, validator, capsys):
    folder = build_run(tmp_path, run_deviations=["At most 7 rounds instead of 25."],
                       ledger_deviations=["write cache could not be set"])
    lines = export(folder, capsys)
    check_lines(lines, validator)
    run_logs = [lg["message"] for lg in run_artifacts(lines, "log")]
    step_logs = [lg["message"] for lg in step_artifacts(lines, "log")]
    assert "deviation from the specification (run.json): At most 7 rounds instead of 25." \
        in run_logs
    assert not any("write cache could not be set" in m for m in run_logs)
    assert step_logs.count("deviation from the specification: write cache could not be "
                           "set") == 1
    assert run_artifacts(lines, "testRunEnd") == [{"status": "COMPLETE", "result": "FAIL"}]


def test_write_amplification_from_the_drives_counters(tmp_path, validator, capsys):
    def counters(host, nand):
        return {"host_writes": host, "nand_writes": nand, "page_size": COUNTERS_PAGE}
    steps = {"after WIPC": counters(500_000, 510_000)}
    steps |= {f"after round {r}": counters(500_000 + 100_000 * r, 510_000 + 300_000 * r)
              for r in range(1, 8)}
    folder = build_run(tmp_path, counters=steps)
    lines = export(folder, capsys)
    check_lines(lines, validator)
    run = load_run(folder)
    expected = waf.of_test(run, run.tests[0]).value
    assert expected is not None and math.isclose(expected, 3.0)
    assert measurements(lines)["write amplification"]["value"] == expected


def test_a_wrong_field_fails_the_schema(tmp_path, validator, capsys):
    """The schema check can fail: a validator type OCPTV does not have, a result outside
    its enum, a step artifact without its step id."""
    lines = export(build_run(tmp_path), capsys)
    line = next(ln for ln in lines if "validators" in
                ln.get("testStepArtifact", {}).get("measurement", {}))
    bad = json.loads(json.dumps(line))
    bad["testStepArtifact"]["measurement"]["validators"][0]["type"] = "AT_MOST"
    with pytest.raises(ValidationError):
        validator.validate(bad)
    end = json.loads(json.dumps(lines[-1]))
    end["testRunArtifact"]["testRunEnd"]["result"] = "COMPLIANT"
    with pytest.raises(ValidationError):
        validator.validate(end)
    step = json.loads(json.dumps(line))
    del step["testStepArtifact"]["testStepId"]
    with pytest.raises(ValidationError):
        validator.validate(step)


def test_output_file_help_and_bad_folder(tmp_path, capsys):
    out = tmp_path / "run.ocptv.jsonl"
    assert main(["export", str(build_run(tmp_path)), "--ocptv", "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out.resolve())
    assert json.loads(out.read_text().splitlines()[0])["schemaVersion"]["major"] == 2
    assert main(["export", str(tmp_path / "nope"), "--ocptv"]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    assert "--ocptv" in capsys.readouterr().out
