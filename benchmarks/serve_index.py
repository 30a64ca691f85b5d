"""Benchmark: the runs list of `python -m pts serve`, from the run folders and from the
results index (issue 41 §2).

Builds one small synthetic run folder with tests/support/synthetic/runfactory.py (IOPS, 3 x 3
matrix, 7 rounds; made-up figures) and copies it to N folders reports/Model_SN-DDD/<stamp>/
(DEVICES devices, so that /metrics, which reads the newest run of each device from its
folder, has a lab's few hundred), in a temporary folder; then asks the app
(pts.serve.app.create_app, in process through Starlette's TestClient: no network in the
figure) for `/`. Prints one JSON object of seconds. No device is touched.

    .venv/bin/python benchmarks/serve_index.py [--runs 1000] [--index] [--keep DIR]

Without --index: the folders (every run read with the report's loader on the first request;
then a stat per folder; then one ledger grown: one run read again). Goal (issue 22): < 1 s
after the first scan.

With --index: the folders indexed first (pts.index.build.update, what `python -m pts index`
runs), then a server started cold (a new app: its first level pass starts in its watcher
thread as it would) and its first runs-list page timed, then a filtered page (model and
firmware), the last page, /metrics, and the watcher's first level pass. Goals (issue 41):
10,000 runs < 1 s, 100,000 runs < 2 s for the first page.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # tests.support.synthetic, when run as a script from anywhere

from starlette.testclient import TestClient  # noqa: E402

from pts.index import build as index_build  # noqa: E402
from pts.index import db  # noqa: E402
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


def from_index(reports: Path, n: int) -> dict:
    t = time.perf_counter()
    conn = db.connect(reports / db.FILE_NAME)
    summary = index_build.update(conn, [reports])
    conn.close()
    indexed = round(time.perf_counter() - t, 3)
    assert len(summary.added) == n, summary.line()
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
    return {"index_s": indexed, "index_mb": round((reports / db.FILE_NAME).stat().st_size / 1e6,
                                                  1),
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
    p.add_argument("--keep", metavar="DIR", help="build the folders here and keep them")
    args = p.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="serve-bench-"))
    try:
        reports = base / "reports"
        t = time.perf_counter()
        build(reports, args.runs)
        built = round(time.perf_counter() - t, 3)
        found = from_index(reports, args.runs) if args.index else from_folders(reports,
                                                                              args.runs)
        print(json.dumps({"runs": args.runs, "source": "index" if args.index else "folders",
                          "build_s": built} | found))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
