"""The drive's form factor as a run fact (issue 49 §2): --form-factor, one row of the option
table (pytest's option, its check, Settings, run.json), read back by pts.stored.ocp_every_id
from the run's stored options, or given to `qualify --ocp` for a run recorded without one; and
the run's own facts (pts.stored.run_facts) the host rules receive under "run". On a run folder
holding QEMU 10's recorded controller facts (tests/support/qemu10_drive.recorded_facts)."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from pts.cli.main import main
from pts.config import option_table
from pts.config.ocp_id_classes import FORM_FACTOR_OF, FORM_FACTORS
from pts.config.settings import SettingsError, make_settings
from pts.config.spec import load_spec
from pts.results import records
from pts.session import options
from pts.stored import ocp_every_id as every
from pts.stored.data import load_run
from pts.stored.run_facts import run_facts
from pts.tools import nvme_facts
from tests.support.qemu10_drive import recorded_facts
from tests.support.synthetic.runfactory import build_run

ROW = option_table.BY_FLAG["--form-factor"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False)
    p.add_argument(ROW.flag, **options._argparse(ROW))
    return p


def test_the_option_row_its_help_and_its_refusals():
    assert ROW.setting and ROW.kept and ROW.choices == FORM_FACTORS
    assert set(FORM_FACTORS) == set(FORM_FACTOR_OF.values())     # every group's, typeable
    text = parser().format_help()
    assert "--form-factor {M.2,E1.S,E1.L,E3,U.2/U.3,E2}" in text
    assert "declared by the operator" in " ".join(text.split())
    assert parser().parse_args(["--form-factor", "U.2/U.3"]).form_factor == "U.2/U.3"
    assert parser().parse_args([]).form_factor is None
    with pytest.raises(argparse.ArgumentError, match=re.escape(
            "invalid choice: 'U.2' (choose from 'M.2', 'E1.S', 'E1.L', 'E3', 'U.2/U.3', 'E2')")):
        parser().parse_args(["--form-factor", "U.2"])
    # the row's check (make_settings, a resumed run's stored value) names the choices too
    with pytest.raises(SettingsError, match=re.escape(
            "--form-factor 2.5in: choose one of M.2, E1.S, E1.L, E3, U.2/U.3, E2")):
        make_settings(load_spec(), form_factor="2.5in")
    s = make_settings(load_spec(), form_factor="E1.S")
    assert s.form_factor == "E1.S" and s.as_dict()["form_factor"] == "E1.S"
    assert s.deviations() == [] and make_settings(load_spec()).as_dict()["form_factor"] is None


def qemu_run(tmp_path, form_factor: str | None = None, **platform):
    """A run folder with QEMU 10's recorded controller facts in its ledger."""
    path = build_run(tmp_path, "qemu")
    info = json.loads((path / "run.json").read_text())
    info["options"]["form_factor"] = form_factor
    info["platform"].update(platform)
    (path / "run.json").write_text(json.dumps(info))
    facts = nvme_facts.json_safe(recorded_facts(tmp_path / "reader"))
    with (path / "ledger.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "nvme_facts", "time": 1.8e9, "test": None,
                             "moment": "test start", "files": {}, "refused": {},
                             "facts": facts}) + "\n")
        fh.write(json.dumps({"type": "round_power", "time": 1.8e9, "test": "iops",
                             "round": 1, "source": "emulated", "start": 1.0, "end": 2.0,
                             "energy_j": 9.5, "covered_s": 1.0, "mean_w": 9.5, "samples": 4,
                             "gaps": []}) + "\n")
    return path


def test_other_form_factors_not_applicable_once_declared(tmp_path, capsys):
    path = qemu_run(tmp_path, "U.2/U.3")
    found = every.judge_every(load_run(path), "2.7")
    ff = [v for v in found.verdicts if v.entry.form_factor]
    others = [v for v in ff if v.entry.form_factor != "U.2/U.3"]
    own = [v for v in ff if v.entry.form_factor == "U.2/U.3"]
    # the 67 IDs of groups FFM2, FFE1S, FFE1L, FFE3, FFE2 and DP-CFG-5 (the M.2 top side)
    assert len(others) == 68 and own and {v.entry.group for v in others} == {
        "FFM2", "FFE1S", "FFE1L", "FFE3", "FFE2", "DP-CFG"}
    assert {v.verdict for v in others} == {every.NOT_APPLICABLE}
    e1s = next(v for v in others if v.entry.group == "FFE1S")
    assert e1s.reason == ("applies only to E1.S drives; this drive is U.2/U.3 (declared with "
                          "--form-factor)")
    assert {v.verdict for v in own} == {every.NOT_CHECKED}
    assert all("needs the drive in hand" in v.reason for v in own)
    assert found.form_factor_note == ("form factor U.2/U.3, declared with --form-factor: the "
                                      "other form factors' IDs are NOT APPLICABLE")
    # unknown: every form factor's IDs NOT CHECKED, as before; 68 fewer judged
    path = qemu_run(tmp_path / "unknown")
    bare = every.judge_every(load_run(path), "2.7")
    assert {v.verdict for v in bare.verdicts if v.entry.form_factor} == {every.NOT_CHECKED}
    assert "form factor not known" in bare.form_factor_note
    judged = (every.PASS, every.FAIL, every.NOT_APPLICABLE)
    assert len(found.of(*judged)) - len(bare.of(*judged)) == 68
    # given at qualify time for the run recorded without one: said on the output
    main(["qualify", str(path), "--ocp", "2.7", "--form-factor", "U.2/U.3"])
    out = capsys.readouterr().out
    assert "this drive is U.2/U.3 (declared with --form-factor at qualify time)" in out
    assert ("form factor U.2/U.3, declared with --form-factor at qualify time (the run "
            "recorded none)") in out.splitlines()[-1]
    assert out.splitlines()[-1].startswith(f"OCP DC NVMe SSD 2.7: {found.counts_text} of 1717 ")


def test_qualify_refuses_a_form_factor_the_run_contradicts(tmp_path, capsys):
    path = qemu_run(tmp_path, "E1.S")
    assert main(["qualify", str(path), "--ocp", "2.7", "--form-factor", "M.2"]) == 2
    assert "the run declared E1.S with --form-factor" in capsys.readouterr().err
    assert main(["qualify", str(path), "--form-factor", "M.2", "--datasheet", "x"]) == 2
    assert "add --ocp VERSION" in capsys.readouterr().err


def test_run_facts_of_a_stored_run(tmp_path):
    path = qemu_run(tmp_path, "E3", kernel="6.12.5-amd64", io_scheduler="none")
    run = load_run(path)
    facts = run_facts(run)
    power = facts.pop("power")
    assert facts == {"form_factor": "E3", "form_factor_from": "--form-factor",
                     "kernel": "6.12.5-amd64", "io_scheduler": "none", "ioengine": "libaio",
                     "io_poll": False, "devices": 1, "devices_recorded": False,
                     "latency_monitor": []}      # no Set Features C5h in this stored run
    assert power == {"rounds": [r.to_json() for r in run.records_of(records.RoundPower)],
                     "points": [], "sources": [
                         r.to_json() for r in run.records_of(records.PowerSourceInfo)]}
    assert (power["rounds"][0]["type"], power["rounds"][0]["energy_j"]) == ("round_power", 9.5)
    bare = run_facts(load_run(qemu_run(tmp_path / "b")), "M.2")
    assert (bare["form_factor"], bare["form_factor_from"], bare["io_scheduler"],
            bare["kernel"]) == ("M.2", "qualify --form-factor", None, "6.1.0")
    # the host rules receive them: META-PERF-7 / -10 judged from the stored run
    by_id = {v.id: v for v in every.judge_every(load_run(path), "2.7").verdicts}
    assert (by_id["META-PERF-7"].verdict, by_id["META-PERF-10"].verdict) == ("PASS", "PASS")
    by_id = {v.id: v for v in every.judge_every(load_run(qemu_run(tmp_path / "c")),
                                                "2.7").verdicts}
    assert by_id["META-PERF-10"].verdict == "FAIL" and "6.1.0 is older than 6.11.1" in \
        by_id["META-PERF-10"].reason
    assert by_id["META-PERF-7"].verdict == "NOT CHECKED"
    assert by_id["META-PERF-3"].reason.startswith("a target of Meta's own benchmarks")
