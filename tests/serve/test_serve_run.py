"""`python -m pts serve`: one run's page, its HTML report and its downloads (issue 22).
Read-only: nothing in the run folder changes; a drive's strings are text."""

from __future__ import annotations

import csv
import io
import json

import pytest
from starlette.testclient import TestClient

import pts.serve.app as serve_app
from pts.export.cli import to_csv
from pts.export.json_doc import document
from pts.report.document import build_pdf
from pts.serve.app import create_app
from pts.stored.data import load_run
from tests.support.helpers import pdf_text
from tests.support.serve_runs import make, unfinished
from tests.support.synthetic.synthrun_more import build_reference

RID = "Alpha_SN-A/20261101T000000"


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "reports"
    make(root, RID, model="Alpha", serial="SN-A", counters={
        "after round 7": {"temperature_c": 44, "critical_warning": 0}},
        counters_source="smart-log")
    return root


def files_of(folder):
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_size, p.read_bytes())
            for p in folder.rglob("*") if p.is_file()}


def test_the_run_page_shows_state_tests_deviations_from_the_run_view(root):
    make(root, "Dev_SN/20261102T000000", ledger_deviations=["a ledger deviation"],
         run_deviations=["Test point duration 1 s instead of 60 s"])
    with TestClient(create_app([root])) as client:
        page = client.get("/runs/Dev_SN/20261102T000000").text
    view = load_run(root / "Dev_SN/20261102T000000")
    test = view.tests[0]
    assert '<td id="state" class="state-finished">finished</td>' in page
    assert f'<td id="verdict">{view.verdict.text}</td>' in page
    assert f"<td class=\"t-status\">{test.status}</td>" in page and \
        test.status.startswith("Steady state")
    assert "<td class=\"t-rounds\">7 of 7</td>" in page and "<td>3..7</td>" in page
    for d in view.deviations:
        assert f"<li>{d.text}" in page
    assert "Deviations (2)" in page
    assert '<div id="live" hidden>' in page and "<script" not in page


def test_a_torn_last_ledger_line_shows_what_is_complete(root):
    folder = unfinished(root, "Torn_SN/20261103T000000", age=None)
    with (folder / "ledger.jsonl").open("a") as fh:
        fh.write('{"type": "round", "test": "iops", "round": 5, "trac')
    with TestClient(create_app([root])) as client:
        listing, page = client.get("/"), client.get("/runs/Torn_SN/20261103T000000")
    assert listing.status_code == page.status_code == 200
    assert "torn last record skipped" in page.text
    assert "<td class=\"t-rounds\">4 of 25</td>" in page.text     # the 4 complete rounds
    assert '<td data-live="phase">round 5</td>' in page.text
    assert '<td class="state-running">running</td>' in listing.text


@pytest.mark.needs("pdftotext")
def test_the_report_is_the_html_report_with_the_pdfs_verdict_and_identity(root, monkeypatch):
    built = []
    real = serve_app.build_html
    monkeypatch.setattr(serve_app, "build_html", lambda run: built.append(1) or real(run))
    before = files_of(root / RID)
    with TestClient(create_app([root])) as client:
        first = client.get(f"/runs/{RID}/report")
        again = client.get(f"/runs/{RID}/report")
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/html")
    assert again.text == first.text and built == [1]           # cached
    view = load_run(root / RID)
    pdf = root.parent / "report.pdf"
    pdf.write_bytes(build_pdf(view))
    pdf_words = pdf_text(pdf)
    for text in (view.verdict.text, view.device.model, view.device.serial,
                 view.device.firmware):
        assert text in first.text and text in pdf_words, text
    assert files_of(root / RID) == before                      # nothing written there


@pytest.mark.parametrize("name", ["report.pdf", "run.json", "ledger.jsonl"])
def test_stored_files_download_byte_for_byte(root, name):
    with TestClient(create_app([root])) as client:
        r = client.get(f"/runs/{RID}/files/{name}")
    assert r.status_code == 200 and r.content == (root / RID / name).read_bytes()


def test_exports_are_made_on_the_fly_as_the_export_command_makes_them(root):
    before = files_of(root / RID)
    with TestClient(create_app([root])) as client:
        js, cs = client.get(f"/runs/{RID}/files/export.json"), \
            client.get(f"/runs/{RID}/files/export.csv")
    assert js.json() == json.loads(json.dumps(document(root / RID)))
    assert cs.text == to_csv(root / RID)
    assert len(list(csv.DictReader(io.StringIO(cs.text)))) == 9      # 3 mixes x 3 sizes
    assert files_of(root / RID) == before


def test_a_drives_strings_are_text(root):
    make(root, "X_SN/20261104T000000", model="<script>alert(1)</script>",
         serial='"><img src=x onerror=alert(2)>')
    with TestClient(create_app([root])) as client:
        pages = [client.get("/").text, client.get("/runs/X_SN/20261104T000000").text]
    for page in pages:
        assert "<script>alert(1)</script>" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in page


def test_a_stopped_runs_page_says_so_without_live_part(root):
    unfinished(root, "Stop_SN/20261105T000000")
    with TestClient(create_app([root])) as client:
        page = client.get("/runs/Stop_SN/20261105T000000").text
    assert '<td id="state" class="state-resumable">resumable</td>' in page
    assert '<td id="verdict">(not final: resumable)</td>' in page


def test_a_test_without_a_round_limit_has_no_of_none(root):
    # The reference run ends with XSR, which records no max_rounds: the live part says
    # "round N", never "of None".
    build_reference(root / "Ref_SN" / "20261106T000000")
    with TestClient(create_app([root])) as client:
        page = client.get("/runs/Ref_SN/20261106T000000").text
    assert '<span id="max-rounds"></span>' in page and "of None" not in page
    unfinished(root, "Max_SN/20261107T000000")
    with TestClient(create_app([root])) as client:
        page = client.get("/runs/Max_SN/20261107T000000").text
    assert '<span id="max-rounds"> of 25</span>' in page
