"""`python -m pts qualify RUN_DIR --datasheet FILE.toml` and/or `--ocp VERSION`: judge a stored
run without a device, against a datasheet (docs/datasheet.md; one line per requirement) and/or
the OCP Datacenter NVMe SSD Specification's requirements (pts.stored.ocp_every_id: one line per
requirement ID of the version's text, grouped by the text's groups with counts per verdict:
PASS, FAIL, NOT APPLICABLE or NOT CHECKED, with the reason and evidence); where the drive's
C5h page lists IDs it does not meet, each is marked "drive says unsupported (C5h)" and a last
line counts them (pts.stored.ocp_drive_list).
Exit 0 if every datasheet requirement is met and no OCP requirement FAILs (NOT CHECKED is
not a failure: most are outside what a host measures); 1 if one is not met, cannot be
judged, or FAILs; 2 if the run folder, the datasheet or the OCP version cannot be used.
The run may be chosen by a query on the results index instead of a folder: `--where KEY=VALUE
... [--index FILE|URL|REPORTS_DIR] [--latest 1]` (pts.index.select, docs/index.md): it must
match one run, or --latest 1 takes the newest.
"""

from __future__ import annotations

import argparse
import sys

from pts.config.datasheet import DatasheetError, load
from pts.config.ocp_all_ids import LOCATOR
from pts.config.ocp_id_classes import FORM_FACTORS
from pts.config.ocp_requirements import VERSIONS, UnknownVersion, requirements
from pts.index import select
from pts.qualify.judge import MET, judge_all
from pts.stored import ocp_verdicts as ocp
from pts.stored.data import load_run
from pts.stored.figures import datasheet_vocabulary
from pts.stored.model import RunFolderError
from pts.stored.ocp_drive_list import MARK, drive_list
from pts.stored.ocp_every_id import FormFactorError, IdVerdict, counts_text, judge_every

EXIT_MET, EXIT_NOT_MET, EXIT_BAD_INPUT = 0, 1, 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Judge a run folder from its stored data (no device is touched) against "
                     "a datasheet's requirements (TOML, docs/datasheet.md) and/or the OCP "
                     "Datacenter NVMe SSD Specification's requirements (--ocp). Exit 0 all met "
                     "and no OCP FAIL, 1 some not met, not judgeable or FAIL, 2 bad input.")
    p.add_argument("run_dir", metavar="RUN_DIR", nargs="?",
                   help="the run folder (or --where: the run chosen on the results index)")
    select.add_arguments(p, "run to judge (one run must match, or --latest 1)", None)
    p.add_argument("--datasheet", metavar="FILE.toml",
                   help="the requirements ([[require]] tables)")
    p.add_argument("--ocp", metavar="VERSION", choices=VERSIONS,
                   help="verdicts on the OCP Datacenter NVMe SSD Specification's requirements "
                        f"of this version ({', '.join(VERSIONS)}): every requirement ID of "
                        "its text, grouped by group with counts, PASS, FAIL, NOT APPLICABLE "
                        "or NOT CHECKED with the reason and the evidence (C0h and SMART "
                        "fields, purge timings, Identify and log facts, ...); docs/report.md")
    p.add_argument("--form-factor", metavar="FF", choices=FORM_FACTORS,
                   help="with --ocp: the drive's form factor for a run recorded without one "
                        f"(the run's --form-factor; {', '.join(FORM_FACTORS)}): the other form "
                        "factors' IDs NOT APPLICABLE, said on the output as declared at "
                        "qualify time. Refused where the run declared another")


def run(args: argparse.Namespace) -> int:
    if not args.datasheet and not args.ocp:
        print("qualify: give --datasheet FILE.toml, --ocp VERSION or both", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.form_factor and not args.ocp:
        print("qualify: --form-factor is for the OCP requirements: add --ocp VERSION",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if bool(args.run_dir) == bool(args.where):
        print("qualify: give the run: a RUN_DIR, or a query on the results index (--where "
              "KEY=VALUE ...), not both" if args.run_dir else "qualify: give the run: a "
              "RUN_DIR, or a query on the results index (--where KEY=VALUE ...)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.where:
        try:
            (args.run_dir,) = select.from_args(args, 1, "qualify judges one run")
        except select.SelectError as exc:
            print(f"qualify: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        requirements_ = load(args.datasheet, datasheet_vocabulary()) if args.datasheet \
            else None
        if args.ocp:
            requirements(args.ocp)
        found = load_run(args.run_dir)
        every = judge_every(found, args.ocp, args.form_factor) if args.ocp else None
    except (DatasheetError, RunFolderError, UnknownVersion, FormFactorError) as exc:
        print(f"qualify: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    code = EXIT_MET
    if requirements_ is not None:
        judgements = judge_all(found, requirements_)
        for j in judgements:
            print(f"{j.verdict.upper():8} {j.requirement.id}: {j.text} [{j.requirement.where}]")
        met = sum(j.verdict == MET for j in judgements)
        print(f"{met} of {len(judgements)} requirements met ({found.device.model} "
              f"{found.device.serial}, run {found.run_id})")
        code = EXIT_MET if met == len(judgements) else EXIT_NOT_MET
    if every is not None:
        said = drive_list(found, every)     # the drive's own C5h list, beside the verdicts
        for group, about, verdicts in every.groups:
            print(f"== {group} ({about}): {counts_text(verdicts)}")
            for v in verdicts:
                print(ocp_line(v) + (f" | {MARK}" if said and said.says(v.id) else ""))
        print(f"OCP DC NVMe SSD {args.ocp}: {every.counts_text} of {len(every.verdicts)} "
              f"requirement IDs in {len(every.groups)} groups ({found.device.model} "
              f"{found.device.serial}, run {found.run_id}); {every.form_factor_note}; spec "
              f"text: {every.spec_text}")
        for line in said.lines if said else ():
            print(line)
        if every.counts[ocp.FAIL]:
            code = EXIT_NOT_MET
    return code


def ocp_line(v: IdVerdict) -> str:
    e = v.entry
    text = f"{v.verdict:14} {e.id} {e.subject}: {v.reason}"
    if v.evidence:
        text += " | evidence: " + "; ".join(v.evidence)
    if v.readings:
        text += " | readings: " + "; ".join(v.readings)
    return f"{text} [{LOCATOR[e.version]} {e.at}]"
