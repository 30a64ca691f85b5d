"""`python -m pts index [REPORTS_DIR ...] [--index FILE|URL] [--full]`: bring the results index
(docs/index.md: an SQLite file, or a PostgreSQL database for a lab) level with the run folders
under REPORTS_DIR. Exit 0 when the index is level
(folders refused or skipped are named on stderr, with the reason, and do not change the exit
code: the index is only a view of the folders); 2 when a REPORTS_DIR or the index cannot be
used (a PostgreSQL server down or lost mid-way included: the next run carries on)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pts.index import build, db, target
from pts.index.schema import VERSION

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Index the run folders under REPORTS_DIR in an SQLite file (default "
        f"REPORTS_DIR/{db.FILE_NAME}) or, for a lab, a PostgreSQL database (--index "
        f"postgresql://USER@HOST/DATABASE, or the environment variable {target.ENV}): one row "
        "per run (device model, serial, firmware, "
        "capacity, host, spec, options, deviations, verdict, state, times), per test "
        "(state, steady or not, rounds, measurement window) and the headline figures per "
        "test and cell as the report shows them (IOPS, Throughput MB/s, Latency ART / 5 9s / "
        "MRT, WSAT IOPS, WAF, DIRTH/CBW operating points, HIR and XSR tables, RWSW shares "
        "achieved, Latency QoS levels; docs/index.md). New folders are added, changed ones "
        "(run.json or ledger.jsonl size or mtime) read again, gone ones dropped; a second run "
        "changes nothing. One transaction per run folder: interrupted, it is simply run again. The "
        "folders stay the truth: nothing is written into them, and the index can always be "
        "rebuilt from them. A run in progress is indexed as far as its ledger goes; a folder "
        "whose ledger cannot be read is indexed from its run.json with the reason; one that "
        "is not a run is skipped with the reason. No device is touched.")
    p.add_argument("reports_dirs", metavar="REPORTS_DIR", nargs="*", default=["reports"],
                   help="folders holding run folders (default: reports); only rows of folders "
                        "under these are added or dropped")
    p.add_argument("--index", metavar="FILE|URL", default=None,
                   help=f"the index: an SQLite file, or a PostgreSQL database as "
                        f"postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (psycopg 3: pip "
                        f"install -e '.[postgresql]'). Default: ${target.ENV} if set, else "
                        f"REPORTS_DIR/{db.FILE_NAME} (one of them is required with several "
                        "REPORTS_DIR). Created, or migrated to this version's schema (version "
                        f"{VERSION}); an index from a newer snia-pts is refused")
    p.add_argument("--full", action="store_true",
                   help="read every run folder again, changed or not (after a hand edit that "
                        "kept a file's size and mtime)")


def run(args: argparse.Namespace) -> int:
    missing = [d for d in args.reports_dirs if not Path(d).is_dir()]
    if missing:
        print(f"index: not a folder: {', '.join(missing)} (give the --reports-dir of your "
              "runs, default reports)", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        where = target.resolve(args.reports_dirs, args.index)
        conn = target.connect(where)
    except db.IndexUnusable as exc:
        print(f"index: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        summary = build.update(conn, args.reports_dirs, full=args.full)
        total = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except db.IndexUnusable as exc:           # the server lost mid-way
        print(f"index: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        conn.close()
    for kind, found in (("refused", summary.refused), ("skipped", summary.skipped),
                        ("indexed from run.json only", summary.unreadable)):
        for folder, why in found:
            print(f"index: {kind}: {folder}: {why}", file=sys.stderr)
    print(f"index {target.shown(where)}: {summary.line()}; {total} runs indexed")
    return EXIT_OK
