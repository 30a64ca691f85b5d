"""`python -m pts emulate start|stop|list|stats|profiles`: emulated SSDs for trying the suite.

    python -m pts emulate start --size 256M [--profile default] [--owner-pid PID]
    python -m pts emulate stop /dev/loopN
    python -m pts emulate list
    python -m pts emulate stats /dev/loopN
    python -m pts emulate profiles

Every command prints JSON on stdout (start: one object with "device"); errors go to stderr.
Exit 0 on success, 1 if the host could not do it, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from pts.emulate import lifecycle
from pts.emulate.profiles import PROFILES

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Emulated SSDs: a loop device over a FUSE file whose speed follows a "
                     "flash translation layer model (fast fresh-out-of-box, slower once full, "
                     "fast again after a whole-device discard). Needs root, fuse3 and mfusepy.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = sub.add_parser("start", help="create one; prints a JSON object with its /dev/loopN")
    s.add_argument("--size", required=True,
                   help="user capacity, e.g. 256M, 1G, 512MiB (K/M/G are binary units)")
    s.add_argument("--profile", default="default",
                   help=f"timing/geometry profile: {', '.join(PROFILES)} (default %(default)s)")
    s.add_argument("--owner-pid", type=int, default=None,
                   help="tear it down once this process exits (e.g. --owner-pid $$ in a CI "
                   "script); default: it lives until `stop`")
    t = sub.add_parser("stop", help="tear one down (only emulated SSDs this tool started)")
    t.add_argument("device", help="/dev/loopN (or the serial) printed by `start`")
    sub.add_parser("list", help="JSON list of the emulated SSDs on this host")
    st = sub.add_parser("stats", help="the FTL counters of one (JSON)")
    st.add_argument("device", help="/dev/loopN or serial")
    sub.add_parser("profiles", help="the available profiles and their parameters (JSON)")


def run(args: argparse.Namespace) -> int:
    try:
        return ACTIONS[args.action](args)
    except lifecycle.EmulateError as exc:
        return _fail(exc, EXIT_FAILED)
    except OSError as exc:
        return _fail(exc, EXIT_FAILED)


def _fail(exc: BaseException, code: int) -> int:
    print(f"emulate: {exc}", file=sys.stderr)
    return code


def _print(data) -> None:
    print(json.dumps(data))         # one line: easy to read from scripts


def _start(args: argparse.Namespace) -> int:
    try:
        size = lifecycle.parse_size(args.size)
        lifecycle.check_size(size)
    except lifecycle.EmulateError as exc:
        return _fail(exc, EXIT_BAD_INPUT)
    if args.profile not in PROFILES:
        return _fail(f"unknown profile {args.profile!r}: use one of {', '.join(PROFILES)} "
                     "(see `python -m pts emulate profiles`)", EXIT_BAD_INPUT)
    owner = args.owner_pid if args.owner_pid else None
    _print(lifecycle.start(size, args.profile, owner_pid=owner).as_dict())
    return EXIT_OK


def _stop(args: argparse.Namespace) -> int:
    if lifecycle.find(args.device) is None:
        return _fail(f"{args.device} is not an emulated SSD started by snia-pts, so it is left "
                     "alone; `python -m pts emulate list` shows the ones that are",
                     EXIT_BAD_INPUT)
    _print(lifecycle.stop(args.device).as_dict())
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    _print([dict(i.as_dict(), stale=lifecycle.is_stale(i)) for i in lifecycle.list_instances()])
    return EXIT_OK


def _stats(args: argparse.Namespace) -> int:
    if lifecycle.find(args.device) is None:
        return _fail(f"{args.device} is not an emulated SSD started by snia-pts",
                     EXIT_BAD_INPUT)
    _print(lifecycle.read_stats(args.device))
    return EXIT_OK


def _profiles(args: argparse.Namespace) -> int:
    _print({name: p.as_dict() for name, p in PROFILES.items()})
    return EXIT_OK


ACTIONS = {"start": _start, "stop": _stop, "list": _list, "stats": _stats,
           "profiles": _profiles}
