"""The runs list and /metrics from the results index (issue 41 §2): `pts serve REPORTS_DIR`
finds REPORTS_DIR/index.sqlite itself (made here by `python -m pts index`, as a user makes it),
lists the same rows in the same order with the same cells as it lists from the folders, each
filter narrows to exactly the runs a query over the stored runs (pts.stored.data.load_run)
picks, a folder added while it serves appears (its watcher brings the index level), and
without an index file it reads the folders as before and says how to make one."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pts.cli.main import main
from pts.index import build
from pts.index.db import FILE_NAME
from pts.serve import listing
from pts.serve.app import create_app
from pts.stored.data import load_run
from tests.support.helpers import served_url
from tests.support.serve_runs import Rows, make, unfinished
from tests.support.synthetic.runfactory import FALLING_CURVE

# id: (model, serial, firmware, host, started) — started None: no start time in run.json
RUNS = {
    "Alpha_SN-A/20261101T000000": ("Alpha", "SN-A", "FW1", "lab-a", "2026-11-01T08:00:00+00:00"),
    "Beta_SN-B/20261102T000000": ("Beta", "SN-B", "FW2", "lab-b", "2026-11-02T23:30:00+00:00"),
    "Alpha_SN-A2/20261103T000000": ("Alpha", "SN-A2", "FW2", "lab-b",
                                    "2026-11-03T00:00:00+00:00"),
    "Gamma_SN-C/20261104T000000": ("Gamma", "SN-C", "FW1", "lab-a", None),
    "Delta_SN-D/20261105T000000": ("Delta", "SN-D", "FW3", "lab-c", "2026-11-05T10:00:00+00:00"),
    "Emu_SN-E/20261106T000000": ("Emu", "SN-E", "FW1", "lab-a", "2026-11-06T10:00:00+00:00"),
    "Tied_SN-T/20261106T000000": ("Tied", "SN-T", "FW1", "lab-a", "2026-11-06T10:00:00+00:00"),
    "Bad_SN-X/20261107T000000": ("Bad", "SN-X", "FW9", "lab-z", "2026-11-07T10:00:00+00:00"),
}
UNREADABLE = "Bad_SN-X/20261107T000000"          # a corrupt record in its ledger's middle
REFUSED = "Broken_SN-Y/20261108T000000"          # run.json cannot be read
SESSION = "sessions/20261104T120000"


def _identity(folder: Path, firmware: str, host: str, started: str | None) -> None:
    info = json.loads((folder / "run.json").read_text())
    info["device"]["firmware"] = firmware
    info["platform"]["hostname"] = host
    if started is None:
        del info["started"]
    else:
        info["started"] = started
    (folder / "run.json").write_text(json.dumps(info, indent=2))


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "reports"
    for rid, (model, serial, firmware, host, started) in RUNS.items():
        kw = {"model": model, "serial": serial}
        if model == "Beta":
            folder = make(root, rid, curve=FALLING_CURVE, **kw)
        elif model == "Gamma":
            folder = unfinished(root, rid, age=None, **kw)              # running
        elif model == "Delta":
            folder = unfinished(root, rid, **kw)                        # resumable
        elif model == "Emu":
            folder = unfinished(root, rid, emulated=True, **kw)         # interrupted
        else:
            folder = make(root, rid, **kw)
        _identity(folder, firmware, host, started)
        if model in ("Gamma",):
            (folder / "ledger.jsonl").touch()                           # written just now
    lines = (root / UNREADABLE / "ledger.jsonl").read_text().splitlines()
    lines[3] = "\x00garbage"
    (root / UNREADABLE / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    (make(root, REFUSED) / "run.json").write_text("{not json")
    session = root / SESSION
    session.mkdir(parents=True)
    (session / "session.json").write_text(json.dumps({"devices": [
        {"label": "nvme0n1", "given": "/dev/nvme0n1", "refused": None, "exit_status": 0,
         "run_folder": str(root / "Alpha_SN-A/20261101T000000")}]}))
    return root


def index(root: Path) -> None:
    assert main(["index", str(root)]) == 0


def rows(client, query: str = "") -> list[tuple[str, list[str]]]:
    r = client.get("/" + query)
    assert r.status_code == 200, r.text
    return list(Rows(r.text).rows.items())


def indexed_app(root: Path, **kw):
    app = create_app([root], watch_seconds=0.2, **kw)
    assert app.state.indexed is not None, app.state.folder_note
    return app


QUERIES = ["", "?model=alp", "?model=ALPHA&firmware=fw2", "?serial=SN-A", "?firmware=FW1",
           "?host=LAB-B", "?test=iops", "?test=wsat", "?verdict=compliant",
           "?verdict=not+compliant", "?state=running", "?state=resumable",
           "?state=interrupted", "?state=finished", "?state=error", "?from=2026-11-03",
           "?to=2026-11-02", "?from=2026-11-02&to=2026-11-05", "?model=x_%"]


def test_the_index_lists_what_the_folders_list(root):
    with TestClient(create_app([root])) as client:           # no index yet: the folders
        from_folders = {q: rows(client, q) for q in QUERIES}
    index(root)
    app = indexed_app(root)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        from_index = {q: rows(client, q) for q in QUERIES}
    assert len(from_folders[""]) == len(RUNS) + 2          # + the refused run, the session
    for q in QUERIES:
        assert from_index[q] == from_folders[q], q           # rows, order, every cell


def test_pages_are_the_same_from_both(root, monkeypatch):
    monkeypatch.setattr(listing, "PAGE_ROWS", 3)
    with TestClient(create_app([root])) as client:
        folders = [rows(client, f"?page={n}") for n in (1, 2, 3, 4)]
    index(root)
    app = indexed_app(root)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        page = client.get("/?page=2&host=lab").text          # 8 runs: 3 pages
        assert 'href="?host=lab&amp;page=3"' in page and 'href="?host=lab&amp;page=1"' in page
        assert "8 of 10 folders, newest first; page 2 of 3" in " ".join(page.split())
        assert [rows(client, f"?page={n}") for n in (1, 2, 3, 4)] == folders
    assert [len(p) for p in folders] == [3, 3, 3, 1]


def stored(root: Path) -> dict[str, dict]:
    """Every run folder read by the report's loader (run.json alone where its ledger does not
    read), as plain fields: the query below runs over these."""
    out = {}
    for rid in RUNS:
        try:
            run = load_run(root / rid)
        except Exception:
            info = json.loads((root / rid / "run.json").read_text())
            out[rid] = {"model": info["device"]["model"], "serial": info["device"]["serial"],
                        "firmware": info["device"]["firmware"],
                        "host": info["platform"]["hostname"], "tests": [], "compliant": None,
                        "started": info.get("started")}
            continue
        out[rid] = {"model": run.device.model, "serial": run.device.serial,
                    "firmware": run.device.firmware, "host": run.platform["hostname"],
                    "tests": [t.name for t in run.tests], "compliant": run.verdict.compliant,
                    "started": run.started}
    return out


def day(text: str) -> float:
    return datetime.fromisoformat(text + "T00:00:00+00:00").timestamp()


def when(r: dict) -> float | None:
    return datetime.fromisoformat(r["started"]).timestamp() if r["started"] else None


FILTERS = {
    "?model=alp": lambda r: "alp" in r["model"].lower(),
    "?serial=sn-a2": lambda r: r["serial"] == "SN-A2",
    "?firmware=fw2": lambda r: r["firmware"] == "FW2",
    "?host=lab-a": lambda r: r["host"] == "lab-a",
    "?test=iops": lambda r: "iops" in r["tests"],
    "?verdict=compliant": lambda r: r["compliant"] is True,
    "?verdict=not+compliant": lambda r: r["compliant"] is False,
    "?from=2026-11-05": lambda r: when(r) is not None and when(r) >= day("2026-11-05"),
    "?to=2026-11-02": lambda r: when(r) is not None and when(r) < day("2026-11-03"),
    "?from=2026-11-02&to=2026-11-03":
        lambda r: when(r) is not None and day("2026-11-02") <= when(r) < day("2026-11-04"),
    "?model=alpha&host=lab-b": lambda r: r["model"] == "Alpha" and r["host"] == "lab-b",
}


@pytest.mark.parametrize("query", list(FILTERS))
def test_each_filter_narrows_to_exactly_the_stored_runs_it_names(root, query):
    expected = {rid for rid, r in stored(root).items() if FILTERS[query](r)}
    assert expected and expected != set(RUNS)            # each one narrows, to something
    index(root)
    app = indexed_app(root)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        got = {rid for rid, _ in rows(client, query)}
    assert got == expected, query


def test_a_bad_filter_value_is_named_and_not_applied(root):
    index(root)
    app = indexed_app(root)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)     # the refused and unreadable folders' rows
        r = client.get("/?from=yesterday&verdict=maybe")
    assert r.status_code == 400
    assert "from &#39;yesterday&#39;: give a day as YYYY-MM-DD" in r.text
    assert "verdict &#39;maybe&#39;: give compliant or not compliant" in r.text
    assert len(Rows(r.text).rows) == len(RUNS) + 2


def test_a_folder_added_while_serving_appears(root):
    index(root)
    app = indexed_app(root)
    new = "Late_SN-L/20261110T000000"
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        assert new not in dict(rows(client))
        before = client.get("/metrics").text
        make(root, new, model="Late", serial="SN-L")
        _identity(root / new, "FW7", "lab-l", "2026-11-10T00:00:00+00:00")
        passes = app.state.indexed.passes
        assert app.state.indexed.wait(passes + 2)
        listed = dict(rows(client))
        page = client.get("/").text
        after = client.get("/metrics").text
    assert rows_first(listed) == new and listed[new][2:4] == ["Late", "SN-L"]
    assert 'pts_run_folders{state="finished"} 4.0' in before
    assert 'pts_run_folders{state="finished"} 5.0' in after
    assert 'pts_run_state{model="Late",serial="SN-L",state="finished"} 1.0' in after
    assert "level with the run folders as of" in page, page


def test_the_list_is_level_as_of_its_pass_start_not_its_end(root, monkeypatch):
    """A pass reads the folders from its start: the page's "level with the run folders as
    of" is that start. A folder made after the pass read the folders, before it ended, is not
    in the list, and the page must not claim a time after it (it did, the pass's end: early
    by as long as the pass took, seconds to minutes in a large lab)."""
    index(root)
    real, made = build.update, []
    new = "Late_SN-L/20261110T000000"

    def update(conn, roots, **kw):        # the real pass; a run folder made as it ends
        summary = real(conn, roots, **kw)
        if not made:
            make(root, new, model="Late", serial="SN-L")
            made.append(time.time())
        return summary
    monkeypatch.setattr(build, "update", update)
    app = create_app([root], watch_seconds=600)           # one pass in this test
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        listed, page = dict(rows(client)), client.get("/").text
        at = app.state.indexed.last["at"]
    assert made and new not in listed                     # the pass had not read it
    assert "level with the run folders as of" in page, page
    assert at <= made[0], f"as of {at - made[0]:.6f} s after a folder it did not read"


def rows_first(listed: dict) -> str:
    return next(iter(listed))


def test_metrics_from_the_index_are_those_from_the_folders(root):
    with TestClient(create_app([root])) as client:
        from_folders = client.get("/metrics").text
    index(root)
    app = indexed_app(root)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        from_index = client.get("/metrics").text
    # the release gate's series need the history, so the index (pts.serve.metrics): Alpha
    # ran FW1 and FW2, one run each on two drives: inconclusive (3)
    gate = [x for x in from_index.splitlines() if "pts_release_gate" in x]
    assert 'pts_release_gate_status{firmware_a="FW1",firmware_b="FW2",model="Alpha"} 3.0' \
        in gate and not [x for x in from_folders.splitlines() if "pts_release_gate" in x]
    assert sorted(set(from_index.splitlines()) - set(gate)) == sorted(from_folders.splitlines())
    assert 'pts_run_folders{state="error"} 2.0' in from_index      # unreadable + refused
    assert 'pts_run_folders{state="running"} 1.0' in from_index


def test_without_an_index_file_the_folders_are_read_and_the_page_says_how_to_index(root):
    app = create_app([root])
    with TestClient(app) as client:
        page = client.get("/").text
    assert app.state.indexed is None
    assert len(Rows(page).rows) == len(RUNS) + 2
    assert f"no results index {root.resolve() / FILE_NAME}" in page
    assert f"python -m pts index {root.resolve()}" in page
    assert not (root / FILE_NAME).exists()                   # the folders' list makes none


def test_an_unusable_index_file_is_named_and_the_folders_are_read(root):
    (root / FILE_NAME).write_text("not a database\n")
    app = create_app([root])
    with TestClient(app) as client:
        page = client.get("/").text
    assert app.state.indexed is None and len(Rows(page).rows) == len(RUNS) + 2
    assert f"the results index {root.resolve() / FILE_NAME} cannot be used" in page
    assert "not a usable SQLite database" in page


def test_the_command_says_once_how_to_make_an_index(tmp_path):
    root = tmp_path / "reports"
    make(root, "Alpha_SN-A/20261101T000000", model="Alpha")
    proc = subprocess.Popen([sys.executable, "-m", "pts", "serve", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        served_url(proc.stdout.readline(), proc)
        line = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert line.startswith("snia-pts dashboard: Runs read from their folders (no results "
                           "index") and f"`python -m pts index {root.resolve()}`" in line
    assert proc.stderr.read().count("python -m pts index") == 0


def test_a_run_page_is_found_through_the_index_without_reading_every_folder(root):
    index(root)
    app = indexed_app(root)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        loads = app.state.index.loads
        assert client.get("/runs/Beta_SN-B/20261102T000000").status_code == 200
        assert client.get(f"/runs/{SESSION}").status_code == 200
        assert client.get("/runs/Nope_SN/20261102T000000").status_code == 404
    assert app.state.index.loads - loads <= 2                # those two folders at most
    find = app.state.indexed.find          # an id is a key, never a path walked
    assert find("Beta_SN-B/20261102T000000") == (root.resolve() / "Beta_SN-B/20261102T000000",
                                                 "run")
    for odd in ("Beta_SN-B/../Beta_SN-B/20261102T000000", f"../{root.name}/Beta_SN-B/"
                "20261102T000000", str(root.resolve() / "Beta_SN-B/20261102T000000"), REFUSED
                + "/..", ""):
        assert find(odd) is None, odd


def test_the_watcher_stops_with_the_server(root):
    """The watcher's thread has ended once the server has stopped (not: no pass was seen for
    a while, which a loaded machine also gives while the watcher still runs)."""
    index(root)
    app = indexed_app(root)
    before = set(threading.enumerate())
    with TestClient(app):
        assert app.state.indexed.wait(1)
        watchers = [t for t in threading.enumerate()
                    if t.name == "pts-index-watch" and t not in before]
        assert len(watchers) == 1 and watchers[0].is_alive()
    # stopped and joined with the server: no pass touches the index after the stop
    assert not watchers[0].is_alive()


@pytest.mark.needs("pgbench")        # tests/support/postgres.NEEDS_POSTGRESQL: postgresql-15
def test_on_a_labs_postgresql_the_list_is_the_one_from_the_folders(root, pg_server):
    """`serve --index postgresql://...` (issue 41 §3): the runs list from a real PostgreSQL
    15 database that `pts index --index URL` filled is, query by query, the list read from
    the folders; the page names the database without its password; a folder added while
    serving reaches the database through the watcher."""
    with TestClient(create_app([root])) as client:
        from_folders = {q: rows(client, q) for q in QUERIES}
    url = pg_server.database()                 # a fresh database's URL
    assert main(["index", str(root), "--index", url]) == 0
    assert not (root / FILE_NAME).exists()
    app = indexed_app(root, index_at=url)
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        for q in QUERIES:
            assert rows(client, q) == from_folders[q], q
        page = client.get("/").text
        assert "Runs from the results index postgresql://" in page
        assert "lab-secret" not in page and postgres_password() == "lab-secret"
        make(root, "Zeta_SN-Z/20261109T000000", model="Zeta")
        n = app.state.indexed.passes
        assert app.state.indexed.wait(n + 2, timeout=30)
        found = rows(client, "?model=zeta")
        assert [rid for rid, _ in found] == ["Zeta_SN-Z/20261109T000000"], found
        assert "Zeta" in found[0][1], found


def postgres_password() -> str:
    from tests.support import postgres
    return postgres.LAB_PASSWORD


def test_the_index_named_by_option_or_environment_is_used(root, tmp_path, monkeypatch):
    """--index FILE (or a folder holding index.sqlite), else $PTS_INDEX, before
    REPORTS_DIR/index.sqlite; one that is not there is named and the folders are read."""
    elsewhere = tmp_path / "lab"
    elsewhere.mkdir()
    assert main(["index", str(root), "--index", str(elsewhere / FILE_NAME)]) == 0
    for kw, env in (({"index_at": str(elsewhere)}, None), ({}, str(elsewhere / FILE_NAME))):
        if env:
            monkeypatch.setenv("PTS_INDEX", env)
        app = indexed_app(root, **kw)
        with TestClient(app) as client:
            assert app.state.indexed.wait(1)
            page = client.get("/").text
        assert f"Runs from the results index {elsewhere / FILE_NAME}" in page
        assert len(Rows(page).rows) == len(RUNS) + 2
    monkeypatch.setenv("PTS_INDEX", str(tmp_path / "none.sqlite"))
    app = create_app([root])
    with TestClient(app) as client:
        page = client.get("/").text
    assert app.state.indexed is None and len(Rows(page).rows) == len(RUNS) + 2
    assert f"no results index at {tmp_path / 'none.sqlite'} (PTS_INDEX)" in page
    assert not (tmp_path / "none.sqlite").exists()


@pytest.mark.needs("pgbench")
def test_wrong_credentials_are_named_without_the_password_and_the_folders_read(root, pg_server):
    from tests.support import postgres
    url = pg_server.url("postgres", postgres.LAB_USER, "not-the-password")
    app = create_app([root], index_at=url)
    with TestClient(app) as client:
        page = client.get("/").text
    assert app.state.indexed is None and len(Rows(page).rows) == len(RUNS) + 2
    assert "cannot be used" in page and "not-the-password" not in page
