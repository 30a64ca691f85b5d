"""`python -m pts steady-state [FILE]`: the suite's steady-state check on numbers you give it.

Input: a JSON list of numbers, or whitespace-separated numbers, from FILE or standard input.
Output: one JSON object with the evidence. Exit 0 steady, 1 not steady, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from pts.procedure import steady_state as ss

EXIT_STEADY, EXIT_NOT_STEADY, EXIT_BAD_INPUT = 0, 1, 2

KEYS = ("steady", "window_first", "window_last", "average", "minimum", "maximum",
        "data_excursion", "slope", "intercept", "slope_excursion",
        "max_data_excursion", "max_slope_excursion")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Judge per-round values of a tracking variable with the PTS steady-state rule "
        "(PTS 2.0.2 §2.1.24): over the last WINDOW rounds, max-min <= MAX_DATA_EXCURSION x average "
        "and |least-squares slope| x (WINDOW-1) <= MAX_SLOPE_EXCURSION x average. "
        "Exit 0 if steady, 1 if not, 2 on bad input.")
    p.add_argument("file", nargs="?", default="-",
                   help="file with a JSON list or whitespace-separated numbers (default: stdin)")
    p.add_argument("--window", type=int, default=ss.WINDOW_ROUNDS,
                   help="rounds in the measurement window (default %(default)s)")
    p.add_argument("--max-data-excursion", type=float, default=ss.MAX_DATA_EXCURSION,
                   help="allowed max-min as a fraction of the average (default %(default)s)")
    p.add_argument("--max-slope-excursion", type=float, default=ss.MAX_SLOPE_EXCURSION,
                   help="allowed fitted-line excursion as a fraction of the average "
                   "(default %(default)s)")


def parse_values(text: str) -> list[float]:
    """A JSON list of numbers, or whitespace-separated numbers."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ss.SteadyStateError(f"not valid JSON: {exc}") from None
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in data):
            raise ss.SteadyStateError("the JSON list must hold numbers only")
        return [float(v) for v in data]
    values = []
    for token in stripped.split():
        try:
            values.append(float(token))
        except ValueError:
            raise ss.SteadyStateError(f"not a number: {token!r}") from None
    return values


def run(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
        result = ss.check(parse_values(text), window=args.window,
                          max_data_excursion=args.max_data_excursion,
                          max_slope_excursion=args.max_slope_excursion)
    except (OSError, ss.SteadyStateError) as exc:
        print(f"steady-state: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    evidence = result.as_dict()
    print(json.dumps({k: evidence[k] for k in KEYS}))
    return EXIT_STEADY if result.steady else EXIT_NOT_STEADY
