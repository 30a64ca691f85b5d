"""`python -m pts serve`: the runs list (issue 22) over synthetic run folders and a copy of
the stored reference run: every folder with its state and verdict, filters, a corrupt folder
listed with its error, the index re-reading only what changed."""

from __future__ import annotations

import json
import shutil

import pytest
from starlette.testclient import TestClient

from pts.serve.app import create_app
from pts.stored.data import load_run
from tests.support import snapshots
from tests.support.serve_runs import append, make, table, unfinished
from tests.support.synthetic.runfactory import FALLING_CURVE


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "reports"
    make(root, "Alpha_SN-A/20261101T000000", model="Alpha", serial="SN-A")
    make(root, "Beta_SN-B/20261102T000000", model="Beta", serial="SN-B", curve=FALLING_CURVE)
    unfinished(root, "Gamma_SN-C/20261103T000000", model="Gamma", serial="SN-C", age=None)
    unfinished(root, "Delta_SN-D/20261104T000000", model="Delta", serial="SN-D")
    unfinished(root, "Emu_SN-E/20261105T000000", model="Emu", serial="SN-E", emulated=True)
    return root


def listed(client, query: str = "") -> dict[str, dict[str, str]]:
    r = client.get("/" + query)
    assert r.status_code == 200
    return table(r.text)


def test_every_run_with_its_device_state_and_verdict(root):
    with TestClient(create_app([root])) as client:
        rows = listed(client)
    assert {rid: (r["device"], r["serial"], r["state"], r["verdict"], r["tests"])
            for rid, r in rows.items()} == {
        "Alpha_SN-A/20261101T000000": ("Alpha", "SN-A", "finished", "COMPLIANT RUN", "iops"),
        "Beta_SN-B/20261102T000000": ("Beta", "SN-B", "finished", "NOT A COMPLIANT RUN",
                                      "iops"),
        "Gamma_SN-C/20261103T000000": ("Gamma", "SN-C", "running", "NOT A COMPLIANT RUN",
                                       "iops"),
        "Delta_SN-D/20261104T000000": ("Delta", "SN-D", "resumable", "NOT A COMPLIANT RUN",
                                       "iops"),
        "Emu_SN-E/20261105T000000": ("Emu", "SN-E", "interrupted", "NOT A COMPLIANT RUN",
                                     "iops"),
    }
    # each verdict and count is the run view's
    for rid, r in rows.items():
        view = load_run(root / rid)
        assert r["verdict"] == view.verdict.text
        assert r["deviations"] == str(len(view.deviations))
        assert r["spec"] == view.spec_title == "SNIA SSS PTS 2.0.2 Enterprise"


def test_newest_first(root):
    for n, rel in enumerate(["Alpha_SN-A/20261101T000000", "Emu_SN-E/20261105T000000"]):
        info = json.loads((root / rel / "run.json").read_text())
        info["started"] = f"2026-12-0{n + 1}T00:00:00+00:00"
        (root / rel / "run.json").write_text(json.dumps(info))
    with TestClient(create_app([root])) as client:
        order = list(listed(client))
    assert order[:2] == ["Emu_SN-E/20261105T000000", "Alpha_SN-A/20261101T000000"]


@pytest.mark.parametrize("query, expected", [
    ("?model=alp", {"Alpha"}),
    ("?serial=SN-B", {"Beta"}),
    ("?verdict=compliant", {"Alpha"}),
    ("?verdict=not+compliant", {"Beta", "Gamma", "Delta", "Emu"}),
    ("?state=running", {"Gamma"}),
    ("?state=resumable&model=delta", {"Delta"}),
    ("?test=iops", {"Alpha", "Beta", "Gamma", "Delta", "Emu"}),
    ("?test=wsat", set()),
])
def test_filters(root, query, expected):
    with TestClient(create_app([root])) as client:
        assert {r["device"] for r in listed(client, query).values()} == expected


def test_a_corrupt_folder_is_listed_with_its_error_and_the_others_show(root):
    bad_json = make(root, "Bad_SN-X/20261106T000000")
    (bad_json / "run.json").write_text("{not json")
    garbage = make(root, "Bad_SN-Y/20261107T000000")
    lines = (garbage / "ledger.jsonl").read_text().splitlines()
    lines[3] = "\x00garbage"
    (garbage / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    with TestClient(create_app([root])) as client:
        rows = listed(client)
    assert len(rows) == 7
    assert rows["Bad_SN-X/20261106T000000"]["state"] == "error"
    assert "cannot read" in rows["Bad_SN-X/20261106T000000"]["verdict"]
    assert "run.json" in rows["Bad_SN-X/20261106T000000"]["verdict"]
    assert "line 4: corrupt ledger record" in rows["Bad_SN-Y/20261107T000000"]["verdict"]
    assert rows["Alpha_SN-A/20261101T000000"]["verdict"] == "COMPLIANT RUN"


def test_the_reference_run_and_a_session_folder(tmp_path):
    root = tmp_path / "reports"
    ref = root / "Ref_SN/20261121T120000"
    shutil.copytree(snapshots.REFERENCE_RUN, ref)
    session = root / "sessions" / "20261122T000000"
    session.mkdir(parents=True)
    (session / "session.json").write_text(json.dumps({"devices": [
        {"label": "nvme0n1", "given": "/dev/nvme0n1", "path": "/dev/nvme0n1", "refused": None,
         "exit_status": 0, "run_folder": str(ref)}]}))
    (session / "compare.csv").write_text("test,cell\niops,RND 4KiB 0/100\n")
    with TestClient(create_app([root])) as client:
        rows = listed(client)
        page = client.get("/runs/sessions/20261122T000000")
        got = client.get("/runs/sessions/20261122T000000/files/compare.csv")
        assert client.get("/runs/sessions/20261122T000000/files/run.json").status_code == 404
        run_page = client.get("/runs/Ref_SN/20261121T120000")
    assert got.content == (session / "compare.csv").read_bytes()
    view = load_run(ref)
    assert run_page.status_code == 200
    assert all(f"<td class=\"t-status\">{t.status}</td>" in run_page.text for t in view.tests)
    assert rows["Ref_SN/20261121T120000"]["verdict"] == view.verdict.text
    assert rows["Ref_SN/20261121T120000"]["tests"] == ", ".join(t.name for t in view.tests)
    assert rows["sessions/20261122T000000"]["device"] == "nvme0n1"
    assert page.status_code == 200 and 'href="/runs/Ref_SN/20261121T120000"' in page.text


def test_the_index_rereads_only_changed_runs(root):
    app = create_app([root])
    index = app.state.index
    with TestClient(app) as client:
        listed(client)
        assert index.loads == 5
        listed(client)
        assert index.loads == 5                      # nothing changed: nothing read
        append(root / "Gamma_SN-C/20261103T000000", type="deviation", test="iops",
               text="an extra deviation")
        rows = listed(client)
        assert index.loads == 6                      # only the run that changed
    assert rows["Gamma_SN-C/20261103T000000"]["deviations"] == "1"


def test_several_folders_prefix_their_ids(root, tmp_path):
    other = tmp_path / "other"
    make(other, "Zeta_SN-Z/20261108T000000", model="Zeta")
    with TestClient(create_app([root, other])) as client:
        rows = listed(client)
        assert client.get("/runs/1/Zeta_SN-Z/20261108T000000").status_code == 200
    assert "1/Zeta_SN-Z/20261108T000000" in rows and "0/Alpha_SN-A/20261101T000000" in rows
