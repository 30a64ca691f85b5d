"""`python -m pts report RUN_DIR [--output PATH] [--html]`: render report.pdf (and with
--html report.html, the same pages as one self-contained HTML file) from a run folder.

Reads run.json + ledger.jsonl only (never a device), writes each file atomically and prints
its absolute path. Exit 0 on success, 2 if the run folder cannot be used (missing, no
run.json, corrupt ledger), 1 if a file cannot be written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pts.stored.data import load_run
from pts.stored.model import RunFolderError
from pts.tools import atomic

EXIT_OK, EXIT_WRITE_FAILED, EXIT_BAD_RUN = 0, 1, 2
REPORT_NAME = "report.pdf"
HTML_NAME = "report.html"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Render the SNIA PTS conformance report (PDF) of a run folder from its "
                     "stored data (run.json, ledger.jsonl). No device is touched.")
    p.add_argument("run_dir", metavar="RUN_DIR",
                   help="the run folder (reports/<model>_<serial>/<run-id>)")
    p.add_argument("-o", "--output", metavar="PATH",
                   help=f"where to write the PDF (default: RUN_DIR/{REPORT_NAME})")
    p.add_argument("--html", action="store_true",
                   help=f"also write the same pages as one self-contained HTML file beside "
                        f"the PDF ({HTML_NAME}: tables as HTML tables, charts as SVG, no "
                        "script, nothing fetched; for CI artifact viewers and browsers)")


def render(run_dir: str | os.PathLike, output: str | os.PathLike | None = None) -> Path:
    """Render the report of `run_dir` to `output` (default RUN_DIR/report.pdf) and return its
    absolute path. Raises RunFolderError if the run folder cannot be used, OSError if the
    PDF cannot be written."""
    from pts.report.document import build_pdf  # reportlab: only to render (matplotlib: a chart)

    run = load_run(run_dir)
    target = Path(output) if output is not None else run.folder / REPORT_NAME
    atomic.write_bytes(target, build_pdf(run))
    return target.resolve()


def render_both(run_dir: str | os.PathLike,
                output: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """The PDF as render() writes it, and beside it report.html: the same story with its
    charts as SVG, laid out as the PDF's (a chart takes the same room either way), so the HTML
    names the PDF's pages."""
    from pts.report import document
    from pts.report.renderers import html

    run = load_run(run_dir)
    target = Path(output) if output is not None else run.folder / REPORT_NAME
    atomic.write_bytes(target, document.build_pdf(run))
    laid, story = document.layout_with_svg(run)
    page = target.with_name(HTML_NAME)
    atomic.write_bytes(page, html.render(laid, story).encode("utf-8"))
    return target.resolve(), page.resolve()


def run(args: argparse.Namespace) -> int:
    try:
        paths = (render_both(args.run_dir, args.output) if args.html else
                 (render(args.run_dir, args.output),))
    except RunFolderError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return EXIT_BAD_RUN
    except OSError as exc:
        print(f"report: cannot write the report: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    for path in paths:
        print(path)
    return EXIT_OK
