"""Benchmark: the runs list of `python -m pts serve`, from the run folders and from the
results index (issue 41 §2).

Builds one small synthetic run folder with tests/support/synthetic/runfactory.py (IOPS, 3 x 3
matrix, 7 rounds; made-up figures) and copies it to N folders reports/Model_SN-DDD/<stamp>/
(DEVICES devices, so that /metrics, which reads the newest run of each device from its
folder, has a lab's few hundred), in a temporary folder; then asks the app
(pts.serve.app.create_app, in process through Starlette's TestClient: no network in the
figure) for `/`. Prints one JSON object of seconds. No device is touched.

    .venv/bin/python benchmarks/serve_index.py [--runs 1000] [--index [--bulk N]] [--keep DIR]

Without --index: the folders (every run read with the report's loader on the first request;
then a stat per folder; then one ledger grown: one run read again). Goal (issue 22): < 1 s
after the first scan.

With --index: the folders indexed first (pts.index.build.update, what `python -m pts index`
runs), then a server started cold (a new app: its first level pass starts in its watcher
thread as it would) and its first runs-list page timed, then a filtered page (model and
firmware), the last page, /metrics, and the watcher's first level pass. Goals (issue 41):
10,000 runs < 1 s, 100,000 runs < 2 s for the first page.

--bulk N (with --index): the first N folders are indexed as `pts index` does, one at a time
(pts.index.build.index_folder: the real indexing rate), and the rows of the rest are copied
from the first one's, each with its own folder, serial and file stats, in a few large
transactions: 100,000 folders through the reader would take about half an hour on 2 cores.
Checked: every copied folder's serial is its run.json's, and 5 copied folders' rows are
equal, column for column (indexed_at aside), to what build.read makes of them; the server's
first level pass then finds every folder unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # tests.support.synthetic, when run as a script from anywhere

from starlette.testclient import TestClient  # noqa: E402

from pts.index import build as index_build  # noqa: E402
from pts.index import db, rows  # noqa: E402
from pts.index.scan import scan  # noqa: E402
from pts.serve import listing  # noqa: E402
from pts.serve.app import create_app  # noqa: E402
from tests.support.synthetic.runfactory import build_run  # noqa: E402

DEVICES = 200


def build(reports: Path, n: int) -> None:
    model = build_run(reports / "template", "run")
    files = [p for p in model.iterdir() if p.is_file() and p.name != "run.json"]
    info = json.loads((model / "run.json").read_text())
    for i in range(n):
        stamp = f"20261121T{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}-{i}"
        serial = f"SN-{i % DEVICES:03d}"
        folder = reports / f"Model_{serial}" / stamp
        folder.mkdir(parents=True)
        for f in files:
            shutil.copy2(f, folder / f.name)
        info["device"]["serial"] = serial
        (folder / "run.json").write_text(json.dumps(info))
    shutil.rmtree(reports / "template")


def timed(client: TestClient, url: str, rows: int | None) -> float:
    t = time.perf_counter()
    r = client.get(url)
    took = time.perf_counter() - t
    assert r.status_code == 200, r.text[:300]
    if rows is not None:
        assert r.text.count('<tr class="run"') == rows, "runs missing"
    return round(took, 3)


def from_folders(reports: Path, n: int) -> dict:
    app = create_app([reports])
    shown = min(n, listing.PAGE_ROWS)
    with TestClient(app) as client:
        first, second = timed(client, "/", shown), timed(client, "/", shown)
        ledger = next(reports.glob("Model_SN-000/*/ledger.jsonl"))
        with ledger.open("a") as fh:
            fh.write('{"type": "deviation", "test": "iops", "text": "x", "time": 1}\n')
        after_one = timed(client, "/", shown)
    return {"first_request_s": first, "second_request_s": second,
            "after_one_ledger_grew_s": after_one, "folders_read": app.state.index.loads}


def bulk_index(reports: Path, sample: int) -> dict:
    """The first `sample` folders indexed one by one, the rows of the rest copied (above)."""
    conn = db.connect(reports / db.FILE_NAME)
    folders, root = scan(reports).runs, str(reports.resolve())
    t = time.perf_counter()
    summary = index_build.Summary()
    for folder in folders[:sample]:
        index_build.index_folder(conn, folder, root, summary)
    read_s = time.perf_counter() - t
    assert len(summary.added) == min(sample, len(folders)), summary.line()
    first = str(folders[0])
    run = conn.rows("SELECT * FROM runs WHERE folder = ?", (first,))[0]
    tests = conn.rows("SELECT * FROM tests WHERE folder = ?", (first,))
    figures = conn.rows("SELECT * FROM figures WHERE folder = ?", (first,))
    t = time.perf_counter()
    rest = folders[sample:]
    for k in range(0, len(rest), 5000):
        made = [(run | {"folder": str(f), "serial": f.parent.name.removeprefix("Model_"),
                        "indexed_at": time.time()} | index_build.file_stats(f), str(f))
                for f in rest[k:k + 5000]]
        with db.transaction(conn):
            index_build.insert(conn, "runs", rows.RUN_COLUMNS, [r for r, _ in made])
            index_build.insert(conn, "tests", rows.TEST_COLUMNS,
                               [x | {"folder": f} for _, f in made for x in tests])
            index_build.insert(conn, "figures", rows.FIGURE_COLUMNS,
                               [x | {"folder": f} for _, f in made for x in figures])
    copy_s = time.perf_counter() - t
    for f in rest[:: max(1, len(rest) // 5)][:5]:        # copied rows = the reader's rows
        want_run, want_tests, want_figures, _ = index_build.read(f, root,
                                                                 index_build.file_stats(f))
        got = conn.rows("SELECT * FROM runs WHERE folder = ?", (str(f),))[0]
        assert {k: v for k, v in got.items() if k != "indexed_at"} == \
            {k: v for k, v in want_run.items() if k != "indexed_at"}, f
        assert conn.rows("SELECT * FROM tests WHERE folder = ? ORDER BY position",
                         (str(f),)) == want_tests
        assert sorted(map(_key, conn.rows("SELECT * FROM figures WHERE folder = ?",
                                          (str(f),)))) == sorted(map(_key, want_figures))
    conn.close()
    return {"indexed_one_by_one": len(summary.added), "one_by_one_s": round(read_s, 3),
            "one_by_one_per_run_s": round(read_s / max(1, len(summary.added)), 4),
            "copied_rows_runs": len(rest), "copied_s": round(copy_s, 3)}


def _key(row: dict) -> tuple:
    """A row comparable across readers (SQLite gives booleans back as 0/1)."""
    return tuple(sorted((k, repr(int(v) if isinstance(v, bool) else v))
                        for k, v in row.items()))


def from_index(reports: Path, n: int, bulk: int | None = None) -> dict:
    t = time.perf_counter()
    if bulk is not None:
        how = bulk_index(reports, bulk)
    else:
        conn = db.connect(reports / db.FILE_NAME)
        summary = index_build.update(conn, [reports])
        conn.close()
        assert len(summary.added) == n, summary.line()
        how = {}
    indexed = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    app = create_app([reports])
    made = time.perf_counter() - t
    last = -(-n // listing.PAGE_ROWS)
    with TestClient(app) as client:          # its watcher starts its first level pass here
        t = time.perf_counter()
        first = timed(client, "/", min(n, listing.PAGE_ROWS))
        cold = round(made + time.perf_counter() - t, 3)
        filtered = timed(client, "/?model=model&firmware=FW1&host=test", None)
        last_page = timed(client, f"/?page={last}", n - (last - 1) * listing.PAGE_ROWS)
        metrics_first = timed(client, "/metrics", None)
        metrics_again = timed(client, "/metrics", None)
        assert app.state.indexed.wait(1, timeout=3600)
        level = app.state.indexed.last
    size_mb = round((reports / db.FILE_NAME).stat().st_size / 1e6, 1)
    return how | {
        "index_s": indexed, "index_mb": size_mb,
        "cold_first_page_s": cold, "first_page_request_s": first,
        "filtered_page_s": filtered, "last_page_s": last_page,
        "metrics_first_s": metrics_first, "metrics_again_s": metrics_again,
        "first_level_pass_s": round(level["seconds"], 3), "level_pass": level["line"],
        "folders_read": app.state.index.loads}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--index", action="store_true",
                   help="index the folders, then time the list served from the index")
    p.add_argument("--bulk", type=int, metavar="N",
                   help="with --index: index the first N folders one by one, copy the rows of "
                        "the rest (checked against the reader's rows)")
    p.add_argument("--keep", metavar="DIR", help="build the folders here and keep them")
    args = p.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="serve-bench-"))
    try:
        reports = base / "reports"
        load_before = os.getloadavg()[0]
        t = time.perf_counter()
        build(reports, args.runs)
        built = round(time.perf_counter() - t, 3)
        found = from_index(reports, args.runs, args.bulk) if args.index else from_folders(reports,
                                                                              args.runs)
        print(json.dumps({"runs": args.runs, "source": "index" if args.index else "folders",
                          "build_s": built} | found | {"load_average_1min_before_after": [
                              round(load_before, 1), round(os.getloadavg()[0], 1)]}))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
