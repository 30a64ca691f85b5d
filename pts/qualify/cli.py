"""`python -m pts qualify RUN_DIR --datasheet FILE.toml`: judge a stored run against a
datasheet (docs/datasheet.md) without a device. One line per requirement; exit 0 if every
requirement is met, 1 if one is not met or cannot be judged (its test did not run, its cell
is missing or N/A, ...), 2 if the run folder or the datasheet cannot be used.
"""

from __future__ import annotations

import argparse
import sys

from pts.config.datasheet import DatasheetError, load
from pts.qualify.judge import MET, judge_all
from pts.stored.data import load_run
from pts.stored.model import RunFolderError

EXIT_MET, EXIT_NOT_MET, EXIT_BAD_INPUT = 0, 1, 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Judge a run folder against a datasheet's requirements (TOML, "
                     "docs/datasheet.md) from its stored data; no device is touched. Exit 0 "
                     "all met, 1 some not met or not judgeable, 2 bad input.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run folder")
    p.add_argument("--datasheet", metavar="FILE.toml", required=True,
                   help="the requirements ([[require]] tables)")


def run(args: argparse.Namespace) -> int:
    try:
        requirements = load(args.datasheet)
        found = load_run(args.run_dir)
    except (DatasheetError, RunFolderError) as exc:
        print(f"qualify: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    judgements = judge_all(found, requirements)
    for j in judgements:
        print(f"{j.verdict.upper():8} {j.requirement.id}: {j.text} [{j.requirement.where}]")
    met = sum(j.verdict == MET for j in judgements)
    print(f"{met} of {len(judgements)} requirements met ({found.device.model} "
          f"{found.device.serial}, run {found.run_id})")
    return EXIT_MET if met == len(judgements) else EXIT_NOT_MET
