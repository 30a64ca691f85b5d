"""`python -m pts export RUN_DIR --csv|--json|--ocptv [-o PATH]`: the run's results per cell
as CSV, every table of the report as one JSON document (pts.export.json_doc), or the run as
OCP Test & Validation line-delimited JSON (pts.export.ocptv), from its stored data only
(run.json + ledger.jsonl; no device).

One row per test cell: the steady-state (measurement window) value, and where the run has a
fresh-out-of-box figure for the cell (IOPS cells with --fob-sweep; WSAT's first sample) that
FOB value and the FOB / steady-state ratio. --json --ocp VERSION: the document's `ocp` judges
every requirement ID of that OCP text (default: the newest, for a run on an NVMe drive). Exit 0
on success, 2 if the run folder cannot be used or --ocp is given without --json, 1 if the
output cannot be written.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from pts.config.ocp_requirements import VERSIONS as OCP_VERSIONS
from pts.export import ocptv
from pts.export.json_doc import document
from pts.stored import figures
from pts.stored.cells import fob_vs_window, window_cells
from pts.stored.data import load_run
from pts.stored.model import RunFolderError, RunView, TestResult

COLUMNS = ("test", "cell", "rw_mix", "block_size", "metric", "unit", "fob", "steady_state",
           "fob_ss_ratio", "window", "status")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Export a run folder's results from its stored data: per cell as CSV "
                     "(steady state, and FOB and the FOB / steady-state ratio where the run "
                     "has them), every table of the report as one JSON document, or the run "
                     "as OCP Test & Validation (OCPTV) line-delimited JSON.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run folder")
    fmt = p.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--csv", action="store_true", help="one CSV row per test cell")
    fmt.add_argument("--json", action="store_true",
                     help="one JSON document: per test its cells (window means of every "
                          "metric), steady-state evidence, FOB figures, WSAT samples; every "
                          "OCP requirement ID judged, with counts per verdict and group "
                          "(docs/results-format.md)")
    fmt.add_argument("--ocptv", action="store_true",
                     help="OCP Test & Validation output (spec 2.0), one JSON object per line: "
                          "the run a testRun (dutInfo: the drive; the spec and settings its "
                          "parameters), each PTS test a testStep with its headline figures as "
                          "measurements (steady-state excursions with their limits as "
                          "validators), steady-state evidence as diagnoses, deviations as "
                          "logs; testRunEnd COMPLETE/PASS for a compliant run, COMPLETE/FAIL "
                          "for a not compliant one, ERROR/NOT_APPLICABLE for an incomplete "
                          "one; times from the stored records (docs/results-format.md)")
    p.add_argument("--ocp", metavar="VERSION", choices=OCP_VERSIONS,
                   help="with --json: judge every requirement ID of this OCP Datacenter NVMe "
                        f"SSD text ({', '.join(OCP_VERSIONS)}), as `qualify --ocp VERSION`, "
                        "for any run (default: the newest, for a run on an NVMe drive only)")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (default: stdout)")


def rows(test: TestResult) -> list[dict]:
    """The test's CSV rows: per figure of its family the CSV shows (pts.stored.figures), one
    row per cell; WSAT's (read from its wsat_result) one row with its FOB figures."""
    shown = figures.of(test, figures.CSV)
    figures.check_readers((f.read for f in shown), (figures.CELL, figures.WSAT_RESULT),
                          "pts/export/cli.py rows")
    return [row for f in shown for row in _rows(test, f)]


def _rows(test: TestResult, figure: figures.Figure) -> list[dict]:
    metric, unit = figure.metric, figure.unit
    window = "" if test.window is None else f"{test.window[0]}-{test.window[1]}"
    base = {"test": test.name, "metric": metric, "unit": unit, "status": test.state}
    if figure.read == figures.WSAT_RESULT:
        if not test.samples:           # no sample recorded: no point either, no row
            return []
        r = test.result
        return [base | {"cell": "RND 4KiB 0/100", "rw_mix": "0/100",
                        "block_size": (test.parameters.get("block_sizes") or [""])[0],
                        "fob": r.get("fob_iops"), "steady_state": r.get(figure.field),
                        "fob_ss_ratio": r.get("fob_ss_ratio"),
                        "window": "-".join(map(str, r.get("ss_window") or []))}]
    fob = {(mix, bs): (first, ratio)
           for mix, bs, first, _, ratio in fob_vs_window(test, figure.field)}
    out = []
    for cell in window_cells(test, figure.field):
        first, ratio = fob.get((cell.rw_mix, cell.block_size), (None, None))
        access = test.parameters.get("access") or "RND"
        out.append(base | {"cell": f"{access} {cell.block_size / 1024:g}KiB {cell.rw_mix}",
                           "rw_mix": cell.rw_mix, "block_size": cell.block_size,
                           "fob": first, "steady_state": "N/A" if cell.na else cell.mean,
                           "fob_ss_ratio": ratio, "window": window})
    return out


def to_csv(run_dir: str | Path) -> str:
    return csv_text(load_run(run_dir))


def csv_text(run: RunView) -> str:
    """The CSV of a loaded run (python -m pts serve keeps runs loaded)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for test in run.tests:
        writer.writerows({k: "" if v is None else v for k, v in row.items()}
                         for row in rows(test))
    return buf.getvalue()


def run(args: argparse.Namespace) -> int:
    if args.ocp and not args.json:
        print("export: --ocp chooses the OCP text of the JSON document's `ocp`; give it with "
              "--json (the OCPTV export carries the newest text's IDs)", file=sys.stderr)
        return 2
    try:
        if args.json:
            text = json.dumps(document(args.run_dir, args.ocp), indent=1) + "\n"
        else:
            text = ocptv.text(args.run_dir) if args.ocptv else to_csv(args.run_dir)
    except (RunFolderError, figures.UnknownFamily) as exc:
        print(f"export: {exc}", file=sys.stderr)
        return 2
    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"export: cannot write {args.output}: {exc}", file=sys.stderr)
        return 1
    print(Path(args.output).resolve())
    return 0
