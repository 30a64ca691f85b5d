"""`python -m pts workload CAPTURE [-o WORKLOAD.toml]`: characterise a capture, print its card,
write the Applied Test Workload (docs/workload.md). Exit 0 done, 2 bad input (nothing written).
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

from pts.config.spec import SpecError, load_rwsw
from pts.tools import atomic
from pts.workload import atw
from pts.workload.capture import unspool
from pts.workload.capture.events import CaptureError
from pts.workload.characterise import Characterisation, characterise
from pts.workload.derive import RULES, derive

EXIT_OK, EXIT_BAD_INPUT = 0, 2
MAP_STEPS = 12               # steps shown in the card's stream map


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Characterise a capture (python -m pts capture): IO streams (RND|SEQ, R|W, size) "
        "ranked by share of I/Os, top N and coverage, outstanding I/Os, in-situ IOPS and "
        "response times, idle time, footprint, the per-step stream map. With -o, write the "
        "Applied Test Workload the RWSW tests take (--workload FILE). Defaults are readings "
        "of the RWSW spec file (specs/rwsw-1.0.7.toml). No device is touched.")
    p.add_argument("capture", type=Path, help="a capture file, or a capture's spool "
                   "(CAPTURE.spool: a capture killed before it wrote its file; its parts "
                   "are read as one capture)")
    p.add_argument("-o", "--output", type=Path, help="write the ATW (TOML) here; with --pdf, "
                   "the PDF (default: CAPTURE's name with .pdf, in the current folder)")
    p.add_argument("--pdf", action="store_true",
                   help="write the capture's workload pages as a PDF (descriptor, cumulative "
                   "workload, stream map, OIO histogram, the ATW) instead of the ATW")
    p.add_argument("--top-n", type=int, help="streams in the ATW (default: rwsw_atw.top_n)")
    p.add_argument("--step", type=float, help="step length in seconds (default: the "
                   "capture's own step, `python -m pts capture --step`; for a capture "
                   "without one, rwsw_capture.step_seconds)")
    p.add_argument("--from", dest="from_s", type=float,
                   help="window start, seconds since the capture's start")
    p.add_argument("--to", dest="to_s", type=float,
                   help="window end, seconds since the capture's start")
    p.add_argument("--oio-rule", choices=RULES,
                   help="the ATW's OIO: fixed TC x QD of the spec, or the capture's median "
                   "or p95 outstanding I/Os (default: rwsw_atw.oio_rule)")


def run(args: argparse.Namespace) -> int:
    try:
        spec = load_rwsw()
        ch = characterise(args.capture, spec=spec, step_s=args.step, top_n=args.top_n,
                          from_s=args.from_s, to_s=args.to_s)
        workload = derive(ch, spec=spec, top_n=args.top_n, oio_rule=args.oio_rule)
        text = atw.dumps(workload)
        atw.parse(tomllib.loads(text), args.output or "the derived workload")   # as --workload will
    except (CaptureError, atw.WorkloadError, SpecError, ValueError) as exc:
        print(f"workload: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(card(ch, workload))
    if args.pdf:
        return _write_pdf(ch, workload, args.output or Path(args.capture.stem + ".pdf"))
    if args.output:
        try:
            atomic.write_text(args.output, text)
        except OSError as exc:
            print(f"workload: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"\nApplied Test Workload written: {args.output} "
              f"(use it with: pytest pts/ -k rwsw --workload {args.output})")
    return EXIT_OK


def _write_pdf(ch: Characterisation, w: atw.Workload, path: Path) -> int:
    # reportlab only when asked for
    from pts.report.workload_doc import build_pdf
    from pts.stored.workload_view import from_characterisation
    try:
        atomic.write_bytes(path, build_pdf(from_characterisation(ch, w)))
    except OSError as exc:
        print(f"workload: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"\nWorkload pages written: {path}")
    return EXIT_OK


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f} ms"


def _step_from(source: str) -> str:
    return {"given": "--step", "the capture's": "the capture's step; --step overrides"}.get(
        source, f"{source or 'rwsw_capture.step_seconds'}: the capture recorded none")


def card(ch: Characterisation, w: atw.Workload) -> str:
    """The readable card: descriptor, streams, OIO, performance, footprint, step map."""
    i = ch.info
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(i.started_unix))
    lost = ("unknown (the source cannot tell)" if i.lost_events is None
            else f"{i.lost_events}")
    out = [f"Capture  {ch.path}  (sha256 {ch.sha256[:16]}...)",
           f"  device {i.device}  host {i.host or '-'}  source {i.source}  started {started}",
           f"  window {ch.from_s:g}-{ch.to_s:g} s of {i.seconds:g} s, {len(ch.steps)} steps "
           f"of {ch.step_s:g} s ({_step_from(ch.step_from)}), process filter "
           f"{i.process_filter or '(none)'}",
           f"  events {ch.events}: I/Os {ch.ios}, flushes {ch.flushes}, discards "
           f"{ch.discards}, other {ch.other}, without completion {ch.incomplete}",
           f"  lost events: {lost}"]
    wb = unspool.writeback_line(i.extra.get("writeback"))
    if wb:
        out.append(f"  writeback: {wb}")
    out += [f"  warning: {n}" for n in (i.extra.get("spool") or {}).get("warnings", ())]
    if i.lost_events:
        out += [f"  !!! WARNING: {i.lost_events} EVENTS WERE LOST (tracing buffer overruns): "
                "every figure below undercounts !!!"]
    if ch.out_of_order:
        out += [f"  warning: {ch.out_of_order} rows out of issue order (OIO approximate)"]
    out += ["", f"IO streams (SEQ rule {ch.seq_rule_label}): "
            f"{len(ch.streams)} streams; top {ch.top_n} cover {ch.coverage_pct:.1f} % of I/Os",
            "  SEQ share of I/Os by rule: " + "; ".join(
                f"{s.label} {s.seq_pct:.2f} %" + (" (used)" if n == 0 else "")
                for n, s in enumerate(ch.seq_by_rule)),
            f"  {'#':>3} {'stream':<14} {'I/Os':>12} {'% I/Os':>8} {'% bytes':>8}"]
    for n, s in enumerate(ch.top, 1):
        out.append(f"  {n:>3} {s.key.label:<14} {s.ios:>12} {s.share_ios_pct:>8.2f} "
                   f"{s.share_bytes_pct:>8.2f}")
    fp = ch.footprint
    out += ["", f"Outstanding I/Os (time-weighted over busy time): median {ch.oio_median}, "
            f"p95 {ch.oio_p95}, max {ch.oio_max}; mean over the window {ch.oio_mean:.2f}",
            f"In situ: {ch.iops:.1f} IOPS, {ch.mbps:.2f} MB/s, response time mean "
            f"{_ms(ch.rt_mean_ms)}, max {_ms(ch.rt_max_ms)}",
            f"Idle: {ch.idle_s:.3f} s ({ch.idle_pct:.1f} % of the window)",
            f"Footprint: {fp.touched_pct:.3f} % of the {fp.basis}'s LBAs touched "
            f"({fp.touched_chunks} of {fp.chunks} chunks of {fp.chunk_bytes // 1024} KiB); "
            f"hottest 1 % of touched chunks get {fp.hottest_1pct_share_pct:.1f} % of I/Os",
            "", f"Steps (first {min(MAP_STEPS, len(ch.steps))} of {len(ch.steps)}): "
            "start, IOPS, OIO mean/max, busy, top streams' shares"]
    for st, shares in list(zip(ch.steps, ch.stream_map, strict=True))[:MAP_STEPS]:
        mix = ", ".join(f"{k.label} {v:.0f}%" for k, v in
                        sorted(shares.items(), key=lambda kv: -kv[1])[:3])
        out.append(f"  {st.start_s:>8g} s {st.iops:>10.1f} {st.oio_mean:>6.1f}/"
                   f"{st.oio_max:<4} {st.busy_pct:>5.1f} %  {mix or '(idle)'}")
    out += ["", f"Applied Test Workload: {len(w.streams)} streams, OIO {w.oio} "
            f"(TC {w.thread_count} x QD {w.queue_depth}, rule "
            f"{w.provenance.get('oio_rule')}), {len(w.steps)} replay steps"]
    out += [f"  {s.key.label:<14} {s.share_pct:>6.2f} %" for s in w.streams]
    return "\n".join(out)
