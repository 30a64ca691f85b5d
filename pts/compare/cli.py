"""`python -m pts compare RUN_DIR RUN_DIR... [-o OUT_DIR] [--allow-mixed]`: compare.pdf and
compare.csv of several run folders, from their stored data only (never a device). The runs
may be chosen by a query on the results index instead of (or after) folders: `--where
KEY=VALUE ... [--index FILE|URL|REPORTS_DIR] [--latest N]` (pts.index.select, docs/index.md).

Runs with different specs or settings are refused (exit 2, naming every difference) unless
--allow-mixed, which lists the differences on the PDF's first page. Exit 0 on success, 2 if
a run folder cannot be used or the runs differ, 1 if the output cannot be written.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from pts.compare.data import Comparison, compare, fob_rows
from pts.index import select
from pts.stored import figures
from pts.stored.model import RunFolderError
from pts.tools import atomic

EXIT_OK, EXIT_WRITE_FAILED, EXIT_BAD_INPUT = 0, 1, 2
MAX_RUNS = 10        # a query's runs at most, unless --max-runs
COLUMNS = ("test", "cell", "rw_mix", "block_size", "metric", "unit", "run", "run_id",
           "model", "serial", "value", "diff_pct_vs_run1", "status")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Compare several run folders: compare.pdf (overlaid plots, side-by-side "
                     "tables with the difference to the first run in %, FOB vs steady state, "
                     "every run's header) and compare.csv. The runs: folders, or a query on the "
                     "results index (--where, docs/index.md). Reads stored data only; no "
                     "device is touched.")
    p.add_argument("run_dirs", metavar="RUN_DIR", nargs="*",
                   help="two or more run folders (or fewer, with --where); the first is the "
                        "reference for differences")
    select.add_arguments(p, "runs to compare", MAX_RUNS)
    p.add_argument("-o", "--output-dir", metavar="OUT_DIR", default=".",
                   help="where compare.pdf and compare.csv go (default: the current folder)")
    p.add_argument("--allow-mixed", action="store_true",
                   help="compare runs of different specs or settings (the differences are "
                        "listed on the first page)")


def to_csv(c: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    writer.writeheader()

    def run_fields(i: int) -> dict:
        run = c.runs[i]
        return {"run": i + 1, "run_id": run.run_id, "model": run.device.model,
                "serial": run.device.serial}

    for name in c.common:
        states = [t.state for t in c.tests(name)]
        for row in c.rows(name):
            for i, (v, d) in enumerate(zip(row.values, row.diffs, strict=True)):
                writer.writerow(run_fields(i) | {
                    "test": name, "cell": row.label, "rw_mix": row.rw_mix,
                    "block_size": row.block_size, "metric": row.metric, "unit": row.unit,
                    "value": "" if v is None else v,
                    "diff_pct_vs_run1": "" if d is None else f"{d:.3f}", "status": states[i]})
    for i, test, cell, fob, ss, ratio in fob_rows(c):
        for metric, value in (("fob_iops", fob), ("ss_iops", ss), ("fob_ss_ratio", ratio)):
            writer.writerow(run_fields(i) | {
                "test": test, "cell": cell, "metric": metric,
                "unit": "" if metric == "fob_ss_ratio" else "IOPS",
                "value": "" if value is None else value, "diff_pct_vs_run1": "",
                "status": next(t.state for t in c.runs[i].tests if t.name == test)})
    return buf.getvalue()


def run(args: argparse.Namespace) -> int:
    folders = list(args.run_dirs)
    if args.where:
        try:
            folders += select.from_args(args, args.max_runs, f"compare takes at most "
                                                             f"{args.max_runs} (--max-runs N)")
        except select.SelectError as exc:
            print(f"compare: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    elif args.latest is not None:
        print("compare: --latest chooses among the runs of a query: give --where KEY=VALUE",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if len(folders) < 2:
        print("compare: give at least two runs: run folders, or a query on the results index "
              f"(--where KEY=VALUE) that matches {'one more' if folders else 'two or more'}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        comparison = compare(folders)
    except (RunFolderError, figures.UnknownFamily) as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if comparison.differences and not args.allow_mixed:
        print("compare: the runs differ in spec or settings:\n  "
              + "\n  ".join(comparison.differences)
              + "\nrefused; compare them anyway with --allow-mixed (the differences are then "
              "listed on the first page)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not comparison.common:
        print("compare: no test is present in every run: nothing to compare ("
              + "; ".join(comparison.left_out) + ")", file=sys.stderr)
        return EXIT_BAD_INPUT
    from pts.compare.pdf import build  # reportlab + matplotlib only when needed

    out = Path(args.output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(out / "compare.pdf", build(comparison))
        atomic.write_bytes(out / "compare.csv", to_csv(comparison).encode("utf-8"))
    except OSError as exc:
        print(f"compare: cannot write to {out}: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    print((out / "compare.pdf").resolve())
    print((out / "compare.csv").resolve())
    return EXIT_OK
