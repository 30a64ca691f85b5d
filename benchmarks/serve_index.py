"""Benchmark: the runs list of `python -m pts serve` over 1,000 run folders, first request
(every run read with the report's loader) and second (the index: a stat per folder, nothing
re-read), then the request after one ledger grew (one run re-read). Goal (issue 22): < 1 s
after the first scan.

Builds one small synthetic run folder with tests/support/synthetic/runfactory.py (IOPS, 3 x 3
matrix, 7
rounds; made-up figures) and copies it to 1,000 folders reports/Model_SN-NNNN/<stamp>/ in a
temporary folder, then asks the app (pts.serve.app.create_app, in process through
Starlette's TestClient: no network in the figure) for `/`. Prints one JSON object of
seconds. No device is touched.

    .venv/bin/python benchmarks/serve_index.py [--runs 1000] [--keep DIR]
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

from pts.serve.app import create_app  # noqa: E402
from tests.support.synthetic.runfactory import build_run  # noqa: E402


def build(reports: Path, n: int) -> None:
    model = build_run(reports / "template", "run")
    for i in range(n):
        stamp = f"20261121T{i // 60:02d}{i % 60:02d}00"
        shutil.copytree(model, reports / f"Model_SN-{i:04d}" / stamp)
    shutil.rmtree(reports / "template")


def timed(client: TestClient, n: int) -> float:
    t = time.perf_counter()
    r = client.get("/")
    took = time.perf_counter() - t
    assert r.status_code == 200 and r.text.count('<tr class="run"') == n, "runs missing"
    return round(took, 3)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--keep", metavar="DIR", help="build the folders here and keep them")
    args = p.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="serve-bench-"))
    try:
        reports = base / "reports"
        t = time.perf_counter()
        build(reports, args.runs)
        built = round(time.perf_counter() - t, 3)
        app = create_app([reports])
        with TestClient(app) as client:
            first, second = timed(client, args.runs), timed(client, args.runs)
            ledger = next(reports.glob("Model_SN-0000/*/ledger.jsonl"))
            with ledger.open("a") as fh:
                fh.write('{"type": "deviation", "test": "iops", "text": "x", "time": 1}\n')
            after_one = timed(client, args.runs)
        print(json.dumps({"runs": args.runs, "build_s": built, "first_request_s": first,
                          "second_request_s": second, "after_one_ledger_grew_s": after_one,
                          "folders_read": app.state.index.loads}))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
