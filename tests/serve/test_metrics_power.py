"""/metrics' --power gauges (issue 51 §3): per device and test, the newest round's mean W and
IOPS/W (pts.stored.power.latest) of tests/support/powered_run.py's constructed run, worked
out by hand from its point records and the known W of each point's window (one with a gap of
2 s in round 4: its energy counts its covered seconds only); the tests recorded without a
power window have no such series."""

from __future__ import annotations

import json
import math

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from pts.serve.app import create_app
from tests.support import powered_run
from tests.support.powered_run import phase_watts, watts


def test_power_gauges_of_the_newest_round(tmp_path):
    folder = powered_run.build(tmp_path / "reports" / "powered" / "run")
    with TestClient(create_app([tmp_path / "reports"])) as client:
        text = client.get("/metrics").text
    found = {(s.name, s.labels.get("test")): (s.value, s.labels)
             for fam in text_string_to_metric_families(text) for s in fam.samples
             if s.name in ("pts_power_watts", "pts_iops_per_watt")}
    recs = [json.loads(x) for x in (folder / "ledger.jsonl").read_text().splitlines()]
    points = {(r["round"], r["index"]): r for r in recs if r["type"] == "point"
              and r["test"] == "iops" and not r["na"]}       # the last record of each
    newest = max(rnd for rnd, _ in points)
    mine = [(p, p["end"] - p["start"] - (2.0 if key == (4, 0) else 0.0))
            for key, p in points.items() if key[0] == newest]
    joules = math.fsum(watts(p["index"]) * covered for p, covered in mine)
    w = joules / math.fsum(covered for _, covered in mine)
    per_w = math.fsum(p["iops"] * covered for p, covered in mine) / joules
    assert {test for _, test in found} == {"iops"}, found     # no window, no series
    (w_got, labels), (per_got, _) = found["pts_power_watts", "iops"], \
        found["pts_iops_per_watt", "iops"]
    info = json.loads((folder / "run.json").read_text())["device"]
    assert (labels["model"], labels["serial"]) == (info["model"], info["serial"])
    assert w_got == pytest.approx(w) and per_got == pytest.approx(per_w)
    assert min(watts(p["index"]) for p, _ in mine) < w < max(watts(p["index"]) for p, _ in mine)


def test_wsat_and_xsr_go_by_their_newest_sample_and_group(tmp_path):
    """Tests without rounds of points (tests/support/powered_run.add_phases' windows of
    known W): WSAT's newest sample, XSR's newest group, each its IOPS over its W."""
    folder = powered_run.add_phases(powered_run.build(tmp_path / "reports" / "p" / "run"))
    with TestClient(create_app([tmp_path / "reports"])) as client:
        text = client.get("/metrics").text
    found = {(s.name, s.labels.get("test")): s.value
             for fam in text_string_to_metric_families(text) for s in fam.samples
             if s.name in ("pts_power_watts", "pts_iops_per_watt")}
    recs = [json.loads(x) for x in (folder / "ledger.jsonl").read_text().splitlines()]
    last = max((r for r in recs if r["type"] == "sample"), key=lambda r: r["sample"])
    w = phase_watts("sample", last["sample"])
    assert found["pts_power_watts", "wsat"] == pytest.approx(w)
    assert found["pts_iops_per_watt", "wsat"] == pytest.approx(last["iops"] / w)
    group = max(r["group"] for r in recs if r["type"] == "xsr_group")
    iops = {r["interval"]: r["iops"] for r in recs if r["type"] == "xsr_interval"
            and r["group"] == group}
    w = phase_watts("group", group)
    assert found["pts_power_watts", "xsr"] == pytest.approx(w)
    assert found["pts_iops_per_watt", "xsr"] == pytest.approx(sum(iops.values()) / len(iops) / w)
