"""The dashboard shows an RWSW run (synthetic): its run page with the convergence chart of the
rwsw tests' tracking variables, and its HTML report with the RWSW pages."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from pts.serve import convergence
from pts.serve.app import create_app
from pts.stored.data import load_run
from tests.support.synthetic import rwsw_run


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "reports"
    rwsw_run.build(root / "Synthetic_SN-RWSW-1", "20261121T120000")
    return root


def test_run_page_and_its_report(root):
    rid = "Synthetic_SN-RWSW-1/20261121T120000"
    with TestClient(create_app([root])) as client:
        page = client.get(f"/runs/{rid}")
        report = client.get(f"/runs/{rid}/report")
    assert page.status_code == 200 and report.status_code == 200
    view = load_run(root / rid)
    for test in view.tests:
        assert f"<td class=\"t-status\">{test.status}</td>" in page.text
    assert "ATW Target vs Achieved" in report.text and "Per-Stream Results" in report.text


def test_convergence_chart_of_the_rwsw_test(root):
    view = load_run(root / "Synthetic_SN-RWSW-1/20261121T120000")
    svg = convergence.svg(view)
    assert svg is not None
    assert "RWSW Individual Streams-WSAT: tracking variables per round" in svg
    for name, _, _, _ in rwsw_run.STREAMS:
        assert f"{name} IOPS" in svg
