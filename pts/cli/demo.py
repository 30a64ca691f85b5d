"""`python -m pts demo`: the IOPS test on an emulated SSD with short points, then the path
of its report.pdf as the last line. A demonstration, declared as such on the report."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Short points and a reduced matrix keep the demo to a few minutes; the tracking cells stay.
# 1 s points: 226 s here (2 s: about 270 s); the fall from the post-WIPC level and steady
# state by round 7 show all the same (tests/e2e/test_demo.py).
DEMO_ARGS = ["--point-seconds", "1", "--max-rounds", "12",
             "--iops-block-sizes", "1024KiB,64KiB,4KiB", "--iops-rw-mixes", "100/0,65/35,0/100"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Run the PTS IOPS test on an emulated SSD made for the purpose (short "
                     "points, reduced matrix: a demonstration, never a compliant run) and print "
                     "the path of report.pdf.")
    # 512 MiB: its over-provisioned space lasts into the first round, so the fall from the
    # post-WIPC state to steady state shows in the convergence plot.
    p.add_argument("--size", default="512M", help="emulated SSD size (default %(default)s)")
    p.add_argument("--profile", default="default", help="emulator profile (default %(default)s)")
    p.add_argument("--reports-dir", default=str(REPO / "reports"),
                   help="where the run folder goes (default %(default)s)")
    p.add_argument("--serve", metavar="[HOST:]PORT", default=None,
                   help="watch the run in a browser: the lab dashboard on this port while "
                        "the demo runs (pytest --serve; a HOST beyond loopback needs "
                        "--serve-auth-file)")
    p.add_argument("--serve-auth-file", metavar="FILE", default=None,
                   help="with --serve: the dashboard's user:password file, chmod 600 "
                        "(pytest --serve-auth-file; docs/dashboard-auth.md)")
    # PTS-E 1.0 §5 report fields, passed to the run as they are (pytest --help explains them)
    for option, metavar in REPORT_OPTIONS:
        p.add_argument(option, metavar=metavar, default=None,
                       help=f"passed to the run as {option} (report page 1; pytest --help)")


REPORT_OPTIONS = (("--operator", "NAME"), ("--auditor", "NAME"), ("--sponsor", "NAME"),
                  ("--report-info", "FILE.toml"))


def report_args(args: argparse.Namespace) -> list[str]:
    """The report-field options given to the demo, for its pytest run."""
    out = []
    for option, _ in REPORT_OPTIONS:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            out += [option, str(Path(value).resolve()) if option == "--report-info" else value]
    return out


def run(args: argparse.Namespace) -> int:
    reports = Path(args.reports_dir).resolve()
    before = set(reports.glob("*/*/report.pdf"))
    argv = [sys.executable, "-m", "pytest", "pts/suite/test_iops.py", "-p", "no:cacheprovider",
            "--device", f"emulated:{args.size}:{args.profile}", "--destructive",
            "--purge", "auto", "--reports-dir", str(reports), *DEMO_ARGS, *report_args(args),
            *(["--serve", args.serve] if args.serve else []),
            *(["--serve-auth-file", str(Path(args.serve_auth_file).resolve())]
              if args.serve_auth_file else [])]
    print("running:", " ".join(argv), flush=True)
    proc = subprocess.run(argv, cwd=REPO)
    new = sorted(set(reports.glob("*/*/report.pdf")) - before, key=lambda p: p.stat().st_mtime)
    if not new:
        print(f"demo: no report was written (pytest exit status {proc.returncode})",
              file=sys.stderr)
        return proc.returncode or 1
    print(f"PDF report: {new[-1]}")
    return 0
