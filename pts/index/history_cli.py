"""`python -m pts history MODEL [--firmware A [--firmware B]] [--index FILE|URL|REPORTS_DIR]`:
a model's runs, its figures over time with their spread and change points, and firmware A
against B cell by cell (pts.index.history; docs/history.md); with --gate, the release gate's
one answer for the pair (pts.index.history_gate). Reads the results index only: no run folder
is read or written, no device touched. Exit 0 answered (--gate: passed), 1 --gate: a cell
regressed beyond its margin, 3 --gate: inconclusive, 2 bad input (no index, an unknown model
or firmware, a bad level, --gate without two firmwares, a bad margins file). --gate --ocptv:
the same answer as OCP Test & Validation lines (pts.index.gate_ocptv), the same exit status."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys

from pts.config import margins
from pts.index import db, gate_ocptv, history, history_gate, release_gate, target

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "A drive model's history from the results index (make it with `python -m pts index "
        "REPORTS_DIR`): every run of MODEL by firmware and sample (serial), oldest first; "
        "each headline figure the index holds (test, metric, cell: IOPS, MB/s, ART, 5 9s, "
        "MRT, WSAT, WAF, ...) over the runs with its spread per firmware (mean, sample std, "
        "n, min..max) and its change points: the runs that start a new level, found by "
        f"{history.CHANGE_METHOD}. With --firmware A --firmware B: A against B, cell by "
        "cell, each side's mean and run-to-run spread and a verdict: 'regressed', "
        "'improved', 'no change beyond noise' (by "
        f"{history.TEST_NAME}, at --level), or 'spread unknown' with one run on a side. "
        "Better is higher for IOPS and MB/s, lower for latencies and WAF. Only finished "
        "runs' figures count; --spec and --host keep the runs of one spec or host, and a "
        "history that mixes several says so (options are not matched; docs/history.md). "
        "With --gate: the firmware release gate instead of the per-cell verdicts: each "
        "figure against a practical margin (two one-sided tests; paired by drive when both "
        "firmwares ran on the same serials, else Welch), its class (regressed, improved, "
        "equivalent, not worse, inconclusive), the claims controlled over the whole pair "
        "(Holm) at --level, and one answer: exit 0 nothing regressed beyond its margin, 1 a "
        "cell did (named), 3 inconclusive (the cells and the runs a side to add named), 2 "
        "bad input.")
    p.add_argument("model", metavar="MODEL",
                   help="the drive model, exactly as the runs list shows it")
    p.add_argument("--firmware", action="append", default=[], metavar="FW",
                   help="once: that firmware's runs only; twice: A (the first) against B")
    p.add_argument("--index", metavar="FILE|URL|REPORTS_DIR", default=None,
                   help=f"the results index: an SQLite file, a report folder holding "
                        f"{db.FILE_NAME}, or postgresql://USER@HOST/DATABASE. Default: "
                        f"${target.ENV} if set, else reports/{db.FILE_NAME}")
    p.add_argument("--level", type=float, default=history.LEVEL, metavar="P",
                   help="significance level of the verdicts and the change points, per cell "
                        f"(default {history.LEVEL:g}: about one cell in twenty of two "
                        "identical firmwares is called changed by chance)")
    p.add_argument("--spec", default=None, metavar="NAME",
                   help="only the runs of this spec (its name, e.g. pts-2.0.2-enterprise, as "
                        "the runs list shows it)")
    p.add_argument("--host", default=None, help="only the runs made on this host")
    p.add_argument("--test", default=None, help="only the figures of this test (e.g. iops)")
    p.add_argument("--metric", default=None, help="only this metric (e.g. iops, lat_mean_us)")
    p.add_argument("--json", action="store_true", help="the answer as one JSON document")
    p.add_argument("--gate", action="store_true",
                   help="with --firmware A --firmware B: the release gate (docs/history.md "
                        "'The release gate'); exit 0 pass, 1 regressed, 3 "
                        "inconclusive, 2 bad input. --level is then the pair's (default "
                        f"{release_gate.LEVEL:g}: at most that chance of any false "
                        "'regressed' in the comparison, and of a false pass)")
    p.add_argument("--margins", metavar="FILE", default=None,
                   help="with --gate: a TOML file of margins in percent (default = N, "
                        "[metric] and [unit] tables) over the built-in ones "
                        "(pts/config/margins.py; docs/history.md)")
    p.add_argument("--ocptv", action="store_true",
                   help="with --gate: the answer as OCP Test & Validation output (OCPTV 2.0 "
                        "line-delimited JSON, as `export --ocptv` writes a run): one test "
                        "run 'release gate' whose result is the answer (PASS exit 0, FAIL "
                        "exit 1, NOT_APPLICABLE exit 3), a diagnosis per cell with its "
                        "figures, margin, p-values and runs to add (docs/history.md); the "
                        "exit status is --gate's")


def run(args: argparse.Namespace) -> int:
    gate_margins = None
    if args.gate or args.margins or args.ocptv:
        try:
            gate_margins = _gate_input(args)
        except (release_gate.GateInputError, margins.MarginsError) as exc:
            print(f"history: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        found = target.connect(target.find(args.index))
    except db.IndexUnusable as exc:
        print(f"history: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        h = history.history(found, args.model, args.firmware, args.level, spec=args.spec,
                            host=args.host)
    except history.HistoryError as exc:
        print(f"history: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        found.close()
    h = history.narrowed(h, args.test, args.metric)
    if args.gate:
        return _gate(h, gate_margins, args, target.shown(found.where))
    if args.json:
        print(json.dumps(dataclasses.asdict(h), indent=1))
    else:
        print("\n".join(text(h, target.shown(found.where))))
    return EXIT_OK


def _gate_input(args: argparse.Namespace) -> margins.Margins:
    if args.ocptv and not args.gate:
        raise release_gate.GateInputError("--ocptv writes the release gate's answer: add "
                                          "--gate (with --firmware A --firmware B)")
    if args.ocptv and args.json:
        raise release_gate.GateInputError("--ocptv and --json are two forms of the answer: "
                                          "give one")
    if not args.gate:
        raise release_gate.GateInputError("--margins is read by the release gate only: add "
                                          "--gate (with --firmware A --firmware B)")
    if len(args.firmware) != 2:
        raise release_gate.GateInputError(
            f"--gate compares two firmwares, {len(args.firmware)} given: give --firmware A "
            "--firmware B (A the released one, B the candidate)")
    return margins.load(args.margins) if args.margins else margins.defaults()


def _gate(h: history.History, gate_margins: margins.Margins, args: argparse.Namespace,
          source: str) -> int:
    try:
        answer = history_gate.pair_gate(h, gate_margins, args.level)
    except release_gate.GateInputError as exc:
        print(f"history: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.ocptv:
        sys.stdout.write(gate_ocptv.text(answer, h, command(args), source))
    elif args.json:
        print(json.dumps(answer.as_data(), indent=1))
    else:
        runs = {r.firmware: sum(1 for x in h.runs if x.firmware == r.firmware) for r in h.runs}
        print("\n".join([f"model {h.model}: firmware {h.a} ({runs.get(h.a, 0)} runs) against "
                         f"{h.b} ({runs.get(h.b, 0)} runs); index {source}"]
                        + [f"note: {n}" for n in h.notes] + history_gate.text(answer)))
    return answer.status


def command(args: argparse.Namespace) -> str:
    """The command that gives this answer, from its options (OCPTV's commandLine)."""
    words = ["python", "-m", "pts", "history", args.model]
    for fw in args.firmware:
        words += ["--firmware", fw]
    words += ["--gate", "--ocptv", "--level", f"{args.level:g}"]
    for option in ("margins", "index", "spec", "host", "test", "metric"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    return shlex.join(words)


def num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def spread(s: history.Spread | None) -> str:
    if s is None:
        return "-"
    std = "std unknown" if s.std is None else f"std {num(s.std)}"
    return f"mean {num(s.mean)}, {std}, n {s.n}, {num(s.low)}..{num(s.high)}"


def text(h: history.History, source: str) -> list[str]:
    samples = sorted({r.serial for r in h.runs})
    out = [f"model {h.model}: {len(h.runs)} runs, firmwares {', '.join(h.firmwares)}, "
           f"{len(samples)} samples ({', '.join(samples)}); index {source}"]
    out += [f"note: {n}" for n in h.notes]
    out += ["", "runs, oldest first (#: the run's number below):",
            "  #  started                    firmware  serial  host  state  verdict  run"]
    for r in h.runs:
        out.append(f"  {r.number or '-'}  {r.started or '(no start time)'}  {r.firmware}  "
                   f"{r.serial}  {r.host or '-'}  {r.state}  {r.verdict or '-'}  {r.run_id}")
        if r.ocp:
            out.append(f"     {r.ocp}")
    for fw in h.firmwares:
        mine = [r for r in h.runs if r.firmware == fw]
        serials = sorted({r.serial for r in mine})
        out.append(f"firmware {fw}: {len(mine)} runs on {len(serials)} samples "
                   f"({', '.join(serials)})")
    out += ["", f"figures over the runs (change points: {history.CHANGE_METHOD}, level "
                f"{h.level:g}):"]
    for f in h.figures:
        out.append(f"{f.label} ({f.unit})"
                   + (f"; host-bound in {f.host_bound} runs" if f.host_bound else ""))
        out.append("  values: " + "  ".join(f"#{n}: {num(v)}" for n, v in f.values))
        for fw, s in f.by_firmware:
            out.append(f"  {fw}: {spread(s)}")
        if not f.levels:
            out.append("  change points: none")
        for lv in f.levels:
            out.append(f"  change point: run #{lv.run} starts a new level: {num(lv.mean_before)}"
                       f" -> {num(lv.mean_after)} (p = {lv.p_value:.3g})")
    if h.a is not None:
        out += ["", f"firmware A {h.a} against B {h.b}, per cell: {history.TEST_NAME}, "
                    f"level {h.level:g}",
                "  cell  |  A: mean, std, n  |  B: mean, std, n  |  B vs A  |  p  |  verdict"]
        for v in h.verdicts:
            change = "-" if v.change_pct is None else f"{v.change_pct:+.2f} %"
            p = "-" if v.p_value is None else f"{v.p_value:.3g}"
            out.append(f"  {v.label} ({v.unit})  |  {spread(v.a)}  |  {spread(v.b)}  |  "
                       f"{change}  |  {p}  |  {v.verdict} ({v.why})")
    return out
