"""The dashboard's run page shows the run's verdicts on the OCP Datacenter NVMe SSD
requirements (pts.stored.ocp_verdicts.summary: the same verdicts as `qualify --ocp` and the
report's page), one row per requirement, every cell from the run's stored data; none for a
run on the emulated SSD."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from pts.config import ocp_requirements as table
from pts.serve.app import create_app
from pts.stored import ocp_verdicts
from pts.stored.data import load_run
from tests.support import ocp_spec_ids
from tests.support.serve_runs import Rows, make, unfinished
from tests.support.synthetic.drive_logs import growing, recorded_counters

RID = "KIOXIA_CD8/20261110T000000"
COLUMNS = ("id", "requirement", "verdict", "reason", "evidence", "readings", "line")


@pytest.fixture
def root(monkeypatch, tmp_path):
    root = tmp_path / "reports"
    make(root, RID, counters=growing(recorded_counters(monkeypatch, tmp_path, "kioxia-cd8")),
         counters_source="smart-log")
    return root


def shown(page: str) -> dict[str, dict[str, str]]:
    """The OCP rows of a run page: {ID: {column: text}}, judged and not checked."""
    return {rid: dict(zip(COLUMNS, cells, strict=True)) for rid, cells in Rows(page).rows.items()}


def text(s: str) -> str:
    return " ".join(s.split())


def test_each_shown_cell_is_the_runs_verdict(root):
    with TestClient(create_app([root])) as client:
        page = client.get(f"/runs/{RID}").text
    rows = shown(page)
    verdicts = ocp_verdicts.judge_all(load_run(root / RID), "2.7")
    assert len(rows) == len(verdicts) == len(table.requirements("2.7")) == 135
    assert sorted(rows) == sorted(ocp_spec_ids.ids("2.7"))     # the spec text's IDs, each once
    for v in verdicts:
        r = v.requirement
        assert rows[r.id] == {"id": r.id, "requirement": r.subject, "verdict": v.verdict,
                              "reason": text(v.reason), "evidence": text("; ".join(v.evidence)),
                              "readings": text("; ".join(v.readings)), "line": str(r.line)}, r.id
    # the same count as the report's page of these logs (tests/report/test_ocp_page.py)
    assert "<b>29 PASS, 25 FAIL, 81 NOT CHECKED</b> of the 135 requirements" in page
    judged, unchecked = page.split('<details id="ocp-not-checked">')
    assert {c["verdict"] for c in shown(judged).values()} == {"PASS", "FAIL"}
    assert {c["verdict"] for c in shown(unchecked).values()} == {"NOT CHECKED"}
    assert "(not final" not in page


def test_the_cells_carry_the_ledgers_figures(root):
    """Read from the ledger itself, not through the verdicts: the C0h counter and the
    purge's time stand in their rows."""
    ledger = [json.loads(line) for line in (root / RID / "ledger.jsonl").open()]
    first = next(r for r in ledger if r["type"] == "device_counters")
    purge = next(r for r in ledger if r["type"] == "purge")
    written = first["counters"]["ocp_c0"]["fields"]["physical_media_units_written"]
    with TestClient(create_app([root])) as client:
        rows = shown(client.get(f"/runs/{RID}").text)
    assert f"physical_media_units_written = {written:,}" in rows["SMART-1"]["evidence"]
    assert rows["SMART-1"]["verdict"] == "PASS"
    assert f"took {purge['seconds']:.1f} s: FAIL" in rows["CTO-8"]["evidence"]
    assert rows["SMART-27"]["reason"] == "log page version 3, not 6"
    assert rows["NUSE-1"]["readings"].startswith("reading: NUSE read from C0h's Total NUSE")


def test_a_running_run_says_its_verdicts_are_not_final(tmp_path):
    root = tmp_path / "reports"
    unfinished(root, "Live_SN/20261111T000000", age=None)
    with TestClient(create_app([root])) as client:
        page = client.get("/runs/Live_SN/20261111T000000").text
    assert "(not final: running)" in page
    assert len(shown(page)) == 135


def test_no_ocp_verdicts_for_the_emulated_ssd(tmp_path):
    root = tmp_path / "reports"
    make(root, "Emu_SN/20261112T000000", emulated=True)
    with TestClient(create_app([root])) as client:
        page = client.get("/runs/Emu_SN/20261112T000000").text
    assert 'id="ocp-counts"' not in page and "OCP requirements" not in page
    assert shown(page) == {}
