"""`python -m pts COMMAND`: the command-line tools that do not need pytest.

Each command lives in its own module exposing `add_arguments(parser)` and `run(args) -> int`;
this file only wires them up, importing lazily so that `steady-state` does not pay for
matplotlib and reportlab.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command name -> (module, one-line help)
COMMANDS = {
    "steady-state": ("pts.cli.steady_state",
                     "judge round values against the PTS steady-state rule"),
    "report": ("pts.report.cli", "render report.pdf of a run folder from its stored data"),
    "emulate": ("pts.emulate.cli", "start/stop/list emulated SSDs (FUSE FTL model + loop device)"),
    "demo": ("pts.cli.demo", "run the IOPS test on an emulated SSD and print the report path"),
    "export": ("pts.export.cli",
               "results of a run folder: per cell as CSV (--csv) or every table as JSON (--json)"),
    "compare": ("pts.compare.cli",
                "compare several run folders: compare.pdf + compare.csv (no device)"),
    "qualify": ("pts.qualify.cli",
                "judge a run folder against a datasheet's requirements (no device)"),
    "index": ("pts.index.cli",
              "index the run folders under REPORTS_DIR in SQLite or PostgreSQL (no device)"),
    "history": ("pts.index.history_cli",
                "a drive model's runs and figures over time; firmware A against B (no device)"),
    "serve": ("pts.serve.cli",
              "the lab dashboard in a browser: runs, live state, HTML reports, /metrics"),
    "capture": ("pts.cli.capture",
                "record a device's block I/O in use (read-only, tracefs) or --import one"),
    "workload": ("pts.cli.workload",
                 "characterise a capture and write its Applied Test Workload (no device)"),
    "conformance": ("pts.cli.conformance",
                    "print (or --write) docs/conformance.md, the conformance matrix"),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pts",
        description="snia-pts command-line tools. The PTS tests themselves run under pytest: "
        "pytest pts/ --device /dev/DEVICE --destructive (see pytest --help, group 'snia-pts').",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = argv[0] if argv and argv[0] in COMMANDS else None
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        # Only the chosen command's module is imported (its options are only needed then).
        if name == wanted:
            importlib.import_module(module).add_arguments(p)
            p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv).parse_args(argv)
    return importlib.import_module(args._module).run(args)
