"""The run page's convergence chart (issue 22): /runs/<id>/convergence.svg is the report's
convergence chart of the test in flight, as SVG, with the window its last round was judged
on; it follows the ledger (a new round, a new chart); none before the first round."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from pts.results.ledger import read_ledger
from pts.serve.app import create_app
from pts.stored.data import load_run
from tests.support.serve_runs import append, make, round_record, unfinished

RUNNING = "Live_SN-L/20261103T000000"


def chart(client, rid: str):
    return client.get(f"/runs/{rid}/convergence.svg")


def texts(svg: str) -> list[str]:
    return [" ".join(t.split()) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_a_running_test_plots_its_rounds_and_the_judged_window(tmp_path):
    folder = unfinished(tmp_path, RUNNING, rounds=6, age=None)
    with TestClient(create_app([tmp_path])) as client:
        r = chart(client, RUNNING)
        assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
        shown = texts(r.text)
        assert "IOPS: tracking variables per round" in shown
        assert "last window: not steady (rounds 2..6)" in shown, shown
        tracked = [t.label for t in load_run(folder).tests[0].tracking]
        assert [t for t in shown if t in tracked] == tracked and len(tracked) >= 2
        append(folder, **round_record(7, {"RND 4KiB 0/100": 41234.5}))
        assert "last window: not steady (rounds 3..7)" in texts(chart(client, RUNNING).text)


def test_a_finished_test_shows_its_measurement_window(tmp_path):
    folder = make(tmp_path, "Done_SN-D/20261101T000000")
    with TestClient(create_app([tmp_path])) as client:
        shown = texts(chart(client, "Done_SN-D/20261101T000000").text)
        page = client.get("/runs/Done_SN-D/20261101T000000").text
    shown_window = [int(n) for n in
                    re.search(r"measurement window \(rounds (\d+)\.\.(\d+)\)",
                              " ".join(shown)).groups()]
    # the window the run's test_end records, which is the synthetic run's first steady one
    # (tests/support/synthetic/runfactory.py: rounds 1..7, window 3..7), not any 5 rounds
    (end,) = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]
              if r.data["type"] == "test_end"]
    assert end["window"] == [3, 7]
    assert shown_window == end["window"], (shown_window, end["window"])
    assert 'src="/runs/Done_SN-D/20261101T000000/convergence.svg?r=' in page
    assert folder.is_dir()


def test_no_chart_before_the_first_round(tmp_path):
    unfinished(tmp_path, RUNNING, rounds=0, age=None)
    with TestClient(create_app([tmp_path])) as client:
        assert chart(client, RUNNING).status_code == 404
        page = client.get(f"/runs/{RUNNING}").text
    assert '<div id="convergence-part" hidden>' in page
    assert 'data-rounds="0">' in page         # no src: the page's script sets it later
