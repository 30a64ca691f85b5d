"""`python -m pts serve`: the live state of a run in flight over server-sent events, and
/metrics (issue 22). The SSE test appends a ledger record and reads the stream until the new
round shows (bounded by a timeout, no sleeps as assertions); /metrics is read back with
prometheus_client's own parser."""

from __future__ import annotations

import json
import queue
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from pts.serve.app import create_app
from pts.stored.data import load_run
from tests.support.serve_runs import append, make, round_record, unfinished

RUNNING = "Live_SN-L/20261103T000000"
DONE = "Done_SN-D/20261101T000000"
HEALTH = {"after round 4": {"temperature_c": 47, "critical_warning": 2}}


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "reports"
    make(root, DONE, model="Done", serial="SN-D")
    unfinished(root, RUNNING, model="Live", serial="SN-L", age=None, counters=HEALTH,
               counters_source="smart-log")
    return root


def samples(client) -> dict[tuple, float]:
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(r.text) for s in fam.samples}


def value(found, name, **labels):
    return found.get((name, tuple(sorted(labels.items()))))


def test_metrics_of_a_finished_and_a_running_run(root):
    with TestClient(create_app([root])) as client:
        found = samples(client)
    done = {"model": "Done", "serial": "SN-D"}
    live = {"model": "Live", "serial": "SN-L"}
    assert value(found, "pts_run_state", **done, state="finished") == 1
    assert value(found, "pts_run_state", **done, state="running") == 0
    assert value(found, "pts_run_state", **live, state="running") == 1
    assert value(found, "pts_round", **done, test="iops") == 7
    assert value(found, "pts_round", **live, test="iops") == 5           # in flight
    assert value(found, "pts_max_rounds", **live, test="iops") == 25
    assert value(found, "pts_steady_state_reached", **done, test="iops") == 1
    assert value(found, "pts_steady_state_reached", **live, test="iops") == 0
    for rid, labels in ((DONE, done), (RUNNING, live)):
        last = load_run(root / rid).tests[0].rounds[-1]
        for variable, v in last.tracking.items():
            assert value(found, "pts_tracking_value", **labels, test="iops",
                         variable=variable) == v
    best, worst = (value(found, "pts_eta_seconds", **live, test="iops", bound=b)
                   for b in ("best", "worst"))           # pts.serve.state.eta, tested there
    assert 0 <= best <= worst
    assert value(found, "pts_eta_seconds", **done, test="iops", bound="best") is None
    assert value(found, "pts_device_temperature_celsius", **live) == 47
    assert value(found, "pts_device_critical_warning", **live) == 2
    assert value(found, "pts_device_temperature_celsius", **done) is None   # not recorded
    assert value(found, "pts_run_folders", state="running") == 1
    assert value(found, "pts_run_folders", state="finished") == 1


def test_metrics_show_only_the_newest_run_of_a_device(root):
    make(root, "Done_SN-D/20261105T000000", model="Done", serial="SN-D", curve=[1.0] * 5,
         max_rounds=5)
    with TestClient(create_app([root])) as client:
        found = samples(client)
    rounds = [v for (name, labels), v in found.items()
              if name == "pts_round" and ("serial", "SN-D") in labels]
    assert rounds == [5]


def events(client, url, out: queue.Queue) -> None:
    with client.stream("GET", url) as r:
        out.put(("status", r.status_code))
        for line in r.iter_lines():
            if line.startswith("data: "):
                out.put(("data", json.loads(line[6:])))
            elif line.startswith("event: "):
                out.put(("event", line[7:]))
    out.put(("closed", None))


def until(out: queue.Queue, wanted, timeout: float = 30.0):
    """The first item of the stream for which wanted(item) holds (AssertionError when it
    has not come within `timeout` seconds, however many other items came: the stream never
    said it)."""
    seen, deadline = [], time.monotonic() + timeout
    while True:
        try:
            item = out.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"not seen within {timeout} s; got {seen}") from None
        seen.append(item)
        if wanted(item):
            return item


def test_a_new_round_reaches_the_event_stream(root):
    app = create_app([root], poll_seconds=0.05)
    folder = root / RUNNING
    streams = [queue.Queue(), queue.Queue()]
    with TestClient(app) as client:
        readers = [threading.Thread(target=events, daemon=True,
                                    args=(client, f"/runs/{RUNNING}/events", q))
                   for q in streams]
        try:
            readers[0].start()
            first = until(streams[0], lambda i: i[0] == "data")[1]
            assert (first["state"], first["round"], first["rounds_done"]) == ("running", 5, 4)
            assert (first["temperature_c"], first["critical_warning"]) == (47, 2)
            readers[1].start()
            assert until(streams[1], lambda i: i[0] == "data")[1] == first
            assert list(app.state.feeds.watches) == [RUNNING]      # one poll, two pages
            assert len(app.state.feeds.watches[RUNNING].queues) == 2
            append(folder, **round_record(5, {"RND 4KiB 0/100": 41234.5}))
            for q in streams:
                new = until(q, lambda i: i[0] == "data" and i[1]["rounds_done"] == 5)[1]
                assert new["round"] == 6 and new["tracking"] == {"RND 4KiB 0/100": 41234.5}
        finally:                                    # the run ends: so does every stream
            append(folder, type="test_end", test="iops", status="not_steady", rounds=5,
                   steady_round=None, window=[1, 5], message="stopped")
        for q in streams:
            last = until(q, lambda i: i[0] == "data" and i[1]["state"] != "running")[1]
            assert last["state"] == "finished" and last["verdict"] == "NOT A COMPLIANT RUN"
            assert until(q, lambda i: i[0] != "data") == ("event", "end")
        for t in readers:
            t.join(timeout=10)
            assert not t.is_alive()
    assert app.state.feeds.watches == {}                # the poll stopped with its pages


def test_a_torn_record_being_written_is_not_an_event_until_whole(root):
    app = create_app([root], poll_seconds=0.05)
    folder = root / RUNNING
    out: queue.Queue = queue.Queue()
    line = json.dumps(round_record(5, {"RND 4KiB 0/100": 40000.0}))
    with TestClient(app) as client:
        reader = threading.Thread(target=events, daemon=True,
                                  args=(client, f"/runs/{RUNNING}/events", out))
        reader.start()
        try:
            until(out, lambda i: i[0] == "data")
            with (folder / "ledger.jsonl").open("a") as fh:
                fh.write(line[:25])                 # half a record: the writer is at it
            polls, deadline = app.state.feeds.polls, time.monotonic() + 30
            while app.state.feeds.polls < polls + 3:    # the poll has seen it (3 rounds)
                assert out.empty(), out.get()       # ... and sent nothing new
                assert time.monotonic() < deadline, "the poll stopped with a torn record"
                reader.join(timeout=0.05)
            with (folder / "ledger.jsonl").open("a") as fh:
                fh.write(line[25:] + "\n")
            new = until(out, lambda i: i[0] == "data")[1]
            assert new["rounds_done"] == 5
        finally:
            append(folder, type="test_end", test="iops", status="interrupted", rounds=None,
                   steady_round=None, window=None, message="stopped")
        until(out, lambda i: i[0] == "closed")


def test_a_page_that_goes_away_stops_its_poll(root):
    app = create_app([root], poll_seconds=0.05)
    with TestClient(app) as client:
        with client.stream("GET", f"/runs/{RUNNING}/events") as r:
            line = next(r.iter_lines())
            assert line.startswith("data: ") and json.loads(line[6:])["state"] == "running"
            assert list(app.state.feeds.watches) == [RUNNING]
            poll = app.state.feeds.watches[RUNNING].task
        # the run is still running: only the page's going away can end its poll (however
        # long the server takes to notice it on a loaded machine)
        deadline = time.monotonic() + 30
        while not (poll.done() and app.state.feeds.watches == {}):
            assert time.monotonic() < deadline, "the poll went on after its page went away"
            threading.Event().wait(0.05)
        assert poll.cancelled()
