"""A run indexing itself as its ledger grows (pts.index.live, the suite's hook in
pts.session.plugin): a run folder written record by record while the live index keeps its rows
level; an index that cannot be reached said once, the records written on regardless, and the
rows level again when it comes back; a hung index never holding the run's end; which index a
run keeps (PTS_INDEX, else the file beside the reports, else none); and a real PostgreSQL 15
server stopped mid-run."""

import queue
import threading
import time

import pytest

from pts.index import db, live, rows, target
from pts.results.ledger import Ledger
from pts.results.records import Deviation
from tests.support.helpers import DATA
from tests.support.postgres import NEEDS_POSTGRESQL
from tests.support.synthetic.runfactory import build_run

FAST = 0.05        # the live index's interval here (the suite's: live.INTERVAL_S)


def growing(tmp_path, source=None):
    """(an empty run folder under tmp/reports with run.json, the ledger lines to write)."""
    source = source or build_run(tmp_path / "made", "run")
    folder = tmp_path / "reports" / "M_S" / "run"
    folder.mkdir(parents=True)
    (folder / "run.json").write_bytes((source / "run.json").read_bytes())
    if (source / "raw").is_dir():
        (folder / "raw").symlink_to(source / "raw")
    (folder / "ledger.jsonl").touch()
    return folder, (source / "ledger.jsonl").read_bytes().splitlines(keepends=True)


def append(folder, lines):
    with (folder / "ledger.jsonl").open("ab") as fh:
        fh.writelines(lines)


def level(where, folder, timeout=20.0) -> dict:
    """The run's row once the index holds the ledger's current size (fails after timeout)."""
    size = (folder / "ledger.jsonl").stat().st_size
    end = time.monotonic() + timeout
    while True:
        conn = target.connect(where)
        try:
            found = conn.rows("SELECT * FROM runs WHERE folder = ?", (str(folder.resolve()),))
        finally:
            conn.close()
        if found and found[0]["ledger_size"] == size:
            return found[0]
        if time.monotonic() >= end:
            break
        time.sleep(FAST)
    raise AssertionError(f"the index did not reach the ledger's {size} bytes in {timeout} s")


def test_rows_follow_the_ledger_as_it_grows(tmp_path):
    folder, lines = growing(tmp_path, DATA / "reference-run")
    where, said = str(tmp_path / "reports" / db.FILE_NAME), []
    live_ = live.LiveIndex(folder, tmp_path / "reports", where, said.append, FAST).start()
    cut = next(n for n, x in enumerate(lines) if b'"test": "latency"' in x) + 5
    append(folder, lines[:cut])                     # IOPS, Throughput; Latency under way
    row = level(where, folder)
    assert (row["state"], row["test_count"]) == ("unfinished", 4)
    append(folder, lines[cut:])
    assert live_.stop() == [f"PTS index: this run's rows are level in {where}"]
    row = level(where, folder, timeout=0)
    assert (row["state"], row["test_count"], row["reader"]) == ("finished", 11, rows.READER)
    conn = db.connect(where)
    assert conn.execute("SELECT COUNT(*) FROM figures").fetchone() == (151,)
    conn.close()
    assert said == [] and live_.passes >= 2 and live_.failed == 0


def until(condition, what: str, timeout: float = 20.0) -> None:
    """Wait for condition() (fails naming `what` after timeout)."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"{what}: not within {timeout} s"
        time.sleep(FAST / 5)


def test_an_unreachable_index_is_said_once_and_caught_up(tmp_path):
    """The index down: each pass's connect is held by the test until it has written a record
    through the run's ledger (so the run writes while a pass is under way: it never waits
    on the index), then refused. Said once; level again once it is back."""
    folder, lines = growing(tmp_path)
    where, said, down = str(tmp_path / "reports" / db.FILE_NAME), [], threading.Event()
    held: queue.Queue[threading.Event] = queue.Queue()     # each refused pass, waiting
    down.set()

    def connect(at):
        if down.is_set():
            go = threading.Event()
            held.put(go)
            if down.is_set():        # (again: the test's last release runs after a clear)
                go.wait(60)
            raise db.IndexUnusable("cannot reach the PostgreSQL index (Connection refused)")
        return target.connect(at)

    live_ = live.LiveIndex(folder, tmp_path / "reports", where, said.append, FAST,
                           connect).start()
    ledger = Ledger(folder / "ledger.jsonl")
    refused = 0
    for n, line in enumerate(lines):                  # the run goes on, record by record
        append(folder, [line])
        if n % 20 == 0:
            go = held.get(timeout=20)                 # a pass is under way, at its connect
            ledger.append(Deviation(test="iops", text=f"note {n}"))   # never waits on it
            go.set()
            refused += 1
    ledger.close()
    until(lambda: live_.failed >= refused, f"{refused} refused passes counted")
    assert refused >= 3 and live_.passes == 0
    assert len(said) == 1 and "cannot keep" in said[0] and "Connection refused" in said[0]
    assert f"`python -m pts index {tmp_path / 'reports'}`" in said[0]
    assert not (tmp_path / "reports" / db.FILE_NAME).exists()
    down.clear()                                      # back: the next pass catches up
    while not held.empty():
        held.get().set()
    row = level(where, folder)
    assert row["state"] == "finished"
    # the pass commits the rows before it says so: the line may follow level() by a moment
    until(lambda: len(said) > 1, "the index said reachable again")
    assert said[1] == f"snia-pts index: {where} reachable again: this run's rows are level"
    assert live_.stop() == [f"PTS index: this run's rows are level in {where}"]


def test_an_index_down_at_the_end_says_how_to_level_it(tmp_path):
    folder, lines = growing(tmp_path)
    append(folder, lines)
    said = []

    def refused(at):
        raise db.IndexUnusable("password authentication failed")

    live_ = live.LiveIndex(folder, tmp_path / "reports", "postgresql://pts:s3cret@db/pts",
                           said.append, FAST, refused).start()
    (end,) = live_.stop()
    assert end.startswith("PTS index: postgresql://pts:***@db/pts is not level with this "
                          "run (password authentication failed); the run folder is whole")
    assert "s3cret" not in end + "".join(said) and len(said) == 1


@pytest.mark.timeout(60)        # a stop() that waits for the hung pass hangs: fail in 60 s
def test_a_hung_index_never_holds_the_runs_end(tmp_path):
    """stop(timeout) returns while the last pass still hangs (it ends only when the test
    lets it), saying that the index did not answer: no elapsed time is asserted."""
    folder, lines = growing(tmp_path)
    append(folder, lines)
    entered, hang, ended = threading.Event(), threading.Event(), threading.Event()

    def stuck(at):
        entered.set()
        hang.wait(120)
        ended.set()
        raise db.IndexUnusable("gone")

    live_ = live.LiveIndex(folder, tmp_path / "reports", "x.sqlite", [].append, FAST,
                           stuck).start()
    assert entered.wait(20)                      # its pass is under way, hung
    (end,) = live_.stop(timeout=0.3)
    assert not ended.is_set()                    # returned while the pass hangs
    assert "did not answer within 0.3 s; the run folder is whole" in end
    hang.set()
    assert ended.wait(20)


def test_which_index_a_run_keeps(tmp_path, monkeypatch):
    reports = tmp_path / "reports"
    reports.mkdir()
    assert live.target_for(reports, {}) is None
    assert live.start(reports / "run", reports, print, {}) is None
    assert not (reports / db.FILE_NAME).exists()         # never made by the suite
    (reports / db.FILE_NAME).touch()
    assert live.target_for(reports, {}) == str(reports / db.FILE_NAME)
    lab = "postgresql://pts@db.lab/pts"
    assert live.target_for(reports, {"PTS_INDEX": lab}) == lab


@NEEDS_POSTGRESQL
def test_postgresql_stopped_mid_run(tmp_path, pg_server):
    """A real server stopped while the run writes: said once with libpq's reason, the run's
    records all written; started again, the rows come level."""
    url = pg_server.database()
    folder, lines = growing(tmp_path)
    said = []
    live_ = live.LiveIndex(folder, tmp_path / "reports", url, said.append, FAST).start()
    half = len(lines) // 2
    append(folder, lines[:half])
    assert level(url, folder)["state"] == "unfinished"
    pg_server.stop()
    try:
        append(folder, lines[half:])
        until(lambda: said, "the index's loss said")
        assert len(said) == 1 and "cannot keep" in said[0], said
        assert (folder / "ledger.jsonl").read_bytes() == b"".join(lines)   # folder whole
    finally:
        pg_server.start()
    assert level(url, folder)["state"] == "finished"
    assert live_.stop() == [f"PTS index: this run's rows are level in {target.shown(url)}"]
    assert len(said) == 2 and "reachable again" in said[1]
