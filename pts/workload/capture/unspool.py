"""A spool (pts/workload/capture/spool.py) -> the capture file: decode, merge the CPUs, pair, write.

Each CPU's pages are decoded `BATCH_PAGES` at a time (ringbuf.decode) and the CPUs merged
by time: a batch goes to the pairing (pairing.py) up to the earliest last event among the
CPUs that have more to read (the horizon: every event before it has been read, on every
CPU). Memory: a batch per CPU and the requests in flight, whatever the capture's length.
The parts of a spool are read as one stream, so a request issued in one part and completed
in the next pairs as any other.

`open_capture` reads either a capture file or a spool (`pts workload` takes both): a spool is
decoded once into `capture.parquet` inside it, again when its parts have changed since (a
capture still running, or one killed and read before).
"""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pts.workload.capture import local, ringbuf, writeback
from pts.workload.capture import spool as spooling
from pts.workload.capture.events import CaptureError, CaptureFile, CaptureInfo, CaptureWriter
from pts.workload.capture.events import open_capture as open_file
from pts.workload.capture.loop import process_filter
from pts.workload.capture.pairing import Counts, Pairing

BATCH_PAGES = 2048           # pages decoded per CPU at a time (8 MiB of 4 KiB pages)
END_OF_TIME = np.iinfo(np.int64).max
DECODED = "capture.parquet"  # a spool read as a capture is decoded to this file in it
BUFFER_KB = 8192             # the capture's default --buffer-kb (named in the notes)


def merged(sp: spooling.Spool, chunk_pages: int = BATCH_PAGES) \
        -> Iterator[tuple[dict[str, np.ndarray], int]]:
    """(events, horizon): every event up to the horizon has been yielded, on every CPU."""
    def decoded(cpu: int) -> Iterator[dict[str, np.ndarray]]:
        for chunk in spooling.pages(sp, cpu, chunk_pages):
            ev = ringbuf.decode(chunk, sp.layout)
            if len(ev["t"]):
                yield ev
    sources = [decoded(cpu) for cpu in range(len(sp.files))]
    held: list[dict | None] = [None] * len(sources)
    more = [True] * len(sources)
    while True:
        for cpu, src in enumerate(sources):
            if more[cpu] and held[cpu] is None:
                held[cpu] = next(src, None)
                more[cpu] = held[cpu] is not None
        live = [cpu for cpu in range(len(sources)) if held[cpu] is not None]
        if not live:
            return
        ends = [int(held[cpu]["t"][-1]) for cpu in live if more[cpu]]
        horizon = min(ends) if ends else END_OF_TIME
        out = []
        for cpu in live:
            ev = held[cpu]
            now = ev["t"] <= horizon
            out.append({k: v[now] for k, v in ev.items()})
            rest = {k: v[~now] for k, v in ev.items()}
            held[cpu] = rest if len(rest["t"]) else None
        yield {k: np.concatenate([o[k] for o in out]) for k in out[0]}, horizon


@dataclass(frozen=True)
class Decoded:
    counts: Counts
    last_ns: int                 # the last event's time (trace clock), 0 when none


def decode(sp: spooling.Spool, emit: Callable[[dict], None],
           keep: Callable[[str], bool] | None = None,
           chunk_pages: int = BATCH_PAGES) -> Decoded:
    """Pair the spool's events into rows, handed to `emit` in issue order."""
    if keep is None:
        keep = process_filter(_patterns(sp.meta))
    pairing = Pairing(int(sp.meta["start_ns"]), keep, emit, attribution_of(sp))
    last = 0
    for ev, horizon in merged(sp, chunk_pages):
        last = max(last, int(ev["t"].max()))
        pairing.feed(ev, now_ns=min(horizon, last), horizon_ns=horizon)
    pairing.finish()
    return Decoded(pairing.counts, last)


def attribution_of(sp: spooling.Spool) -> writeback.Attribution:
    """The writeback join for this spool: traced when its layouts hold the events the
    join needs; task names from its start snapshot (`comms`), then its task events."""
    def kernel(devno: str) -> int:       # "MAJ:MIN" -> the kernel's dev_t
        major, _, minor = str(devno).partition(":")
        return local.kernel_dev_t(int(major or 0), int(minor or 0))
    return writeback.Attribution(kernel(sp.meta.get("dev_t", "0:0")),
                                 writeback.NEEDED <= sp.layout.kinds, sp.meta.get("comms"),
                                 tuple(kernel(p) for p in sp.meta.get("partitions", ())))


def _patterns(meta: dict) -> tuple[str, ...]:
    return tuple(p for p in (meta.get("process_filter") or "").split(",") if p)


@contextlib.contextmanager
def idle_priority(idle: bool = True) -> Iterator[None]:
    """The calling thread at SCHED_IDLE (it runs only when no other task wants the CPU),
    its former policy restored after."""
    if not idle:
        yield
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    try:
        yield
    finally:
        with contextlib.suppress(PermissionError):     # unprivileged: stays idle
            os.sched_setscheduler(0, policy, param)


def to_capture(sp: spooling.Spool, out: Path, idle: bool = False) -> CaptureInfo:
    """Decode the spool into the capture file `out` (written whole or not at all)."""
    with CaptureWriter(out) as writer:
        with idle_priority(idle):
            got = decode(sp, writer.append)
        info = info_of(sp, got, writer.rows)
        writer.close(info)
    return info


def open_capture(path: Path) -> CaptureFile:
    """A capture file, or a spool read as one (also `CAPTURE` whose file was never written,
    the capture killed, when `CAPTURE.spool` is there)."""
    path = Path(path)
    if not path.exists() and spooling.is_spool(spooling.spool_of(path)):
        path = spooling.spool_of(path)
    if not path.is_dir():
        return open_file(path)
    sp = spooling.open_spool(path)
    decoded = path / DECODED
    files = [p for cpu in sp.files for p in cpu] + [path / spooling.LOST]
    newest = max((p.stat().st_mtime_ns for p in files if p.exists()), default=0)
    if not decoded.is_file() or decoded.stat().st_mtime_ns < newest:
        try:
            to_capture(sp, decoded)
        except OSError as exc:
            raise CaptureError(f"{path}: cannot write the decoded capture {decoded} "
                               f"({exc.strerror}): copy the spool to a writable "
                               "place and read it there") from None
    return open_file(decoded)


def info_of(sp: spooling.Spool, got: Decoded, rows: int) -> CaptureInfo:
    """The capture's descriptor from the spool's and the decoding's figures."""
    meta, end = sp.meta, sp.end
    start = int(meta["start_ns"])
    if end is not None:
        seconds, lost_by_step = float(end["seconds"]), tuple(end["lost_by_step"])
    else:           # killed, or the host lost power: the spool says how far it got
        last = max([got.last_ns] + [t for t, _, _ in sp.lost_marks])
        seconds = max(0.0, (last - start) / 1e9)
        totals = [0] + [n for _, n, step in sp.lost_marks if step]
        # the steps it ended, then the one it was in, as far as its last part's start
        lost_by_step = tuple(b - a for a, b in zip(totals, totals[1:], strict=False)) + \
            (max([0] + [n for _, n, _ in sp.lost_marks]) - totals[-1],)
    lost = sum(lost_by_step)
    requests = got.counts.seen
    size = sp.bytes()
    extra = {"buffer_kb": meta.get("buffer_kb"), "trace_clock": meta.get("trace_clock"),
             "requests_seen": got.counts.seen, "kworker_requests": got.counts.kworker,
             "unmatched_completions": got.counts.unmatched_completions,
             "incomplete": got.counts.incomplete, "unparsed_lines": 0,
             "ios_by_op": got.counts.by_op, "sectors_by_op": got.counts.sectors_by_op,
             "writeback": writeback_of(got.counts),
             "spool": {"parts": sp.parts, "bytes": size,
                       "bytes_per_request": round(size / requests, 1) if requests else None,
                       "cpu_s": (end or {}).get("spool_cpu_s"),
                       "maxrss_kb": (end or {}).get("spool_maxrss_kb"),
                       "ended": "cleanly" if end is not None else "not cleanly",
                       "stopped_by": (end or {}).get("stopped_by"),
                       "cut_bytes": sum(n for _, n in sp.cut)}}
    said = notes(sp, got.counts, lost, seconds)
    # what a reader must see first (the card prints them): how the spool ended, its cuts
    extra["spool"]["warnings"] = [n for n in said if n.startswith(SPOOL_NOTES)]
    return CaptureInfo(
        source="tracefs", device=meta["device"], started_unix=float(meta["started_unix"]),
        seconds=seconds, host=meta.get("host", ""), dev_t=meta.get("dev_t", ""),
        model=meta.get("model", ""), logical_sector=int(meta.get("logical_sector", 512)),
        capacity_bytes=meta.get("capacity_bytes"),
        process_filter=meta.get("process_filter"), events=rows, lost_events=lost,
        lost_by_step=lost_by_step, step_s=float(meta["step_s"]),
        kernel=meta.get("kernel", platform.release()), tool=meta.get("tool", ""),
        notes=said, extra=extra)


NOT_ENDED = "the capture did not end cleanly"
CUT = "bytes after the last whole page"
SPOOL_NOTES = (NOT_ENDED, "stopped by", "the spool's parts were cut")


def notes(sp: spooling.Spool, c: Counts, lost: int, seconds: float) -> tuple[str, ...]:
    meta, end = sp.meta, sp.end
    buffer_kb = meta.get("buffer_kb", BUFFER_KB)
    out = []
    if end is None:     # first: it qualifies every figure
        out.append(f"{NOT_ENDED} (killed, its host lost power or its disk filled) "
                   f"after {seconds:.1f} s of the {float(meta['seconds']):g} s asked; read "
                   f"from its spool's {sp.parts} parts: lost are the events still in the "
                   f"ring buffer (at most the last {spooling.FLUSH_S:g} s before it ended) "
                   "and, after a power loss, pages not yet on disk (at most the last part, "
                   f"{float(meta.get('part_s', spooling.PART_S)):g} s); lost events are "
                   "counted up to the start of its last part only")
    elif end.get("stopped_by"):
        out.append(f"stopped by {end['stopped_by']} after {seconds:.1f} s of the "
                   f"{float(meta['seconds']):g} s asked: everything traced until then kept")
    if sp.cut:
        out.append(f"the spool's parts were cut: {sum(n for _, n in sp.cut)} {CUT} of "
                   f"{len(sp.cut)} part files ignored (cut mid-page, e.g. by a power loss: "
                   f"{', '.join(name for name, _ in sp.cut)}); their events are lost")
    if lost:
        # it qualifies every other figure (the pairing's too: a lost issue leaves its
        # completion unmatched, a lost completion its request without a completion time)
        out.append(f"{lost} events lost (tracing ring buffer overruns: the reader fell "
                   f"behind a {buffer_kb} KiB per-CPU buffer): requests are missing and "
                   "every figure undercounts; capture again with a larger --buffer-kb "
                   f"(default {BUFFER_KB})")
    if c.incomplete:
        out.append(f"{c.incomplete} requests were still in flight at the end (or lost their "
                   "completion event): written without a completion time")
    if c.not_attributable.get(writeback.REASONS[writeback.NOT_TRACED]):
        why = "turned off by --no-writeback-attribution" \
            if meta.get("writeback_attribution") is False else \
            "made before them, or its kernel lacks block_bio_queue/writeback_dirty_folio/" \
            "writeback_single_inode"
        out.append("buffered writeback not attributed to its applications: the capture "
                   f"traced no writeback events ({why})")
    patterns = _patterns(meta)
    if patterns and c.kworker_dropped:
        out.append(f"--process dropped {c.kworker_dropped} requests issued by kworker "
                   "threads whose dirtier (if any) did not match (flushes, metadata, "
                   "others' writeback): see docs/capture.md")
    return tuple(out)


def writeback_of(c: Counts) -> dict:
    """The descriptor's writeback figures (extra.writeback)."""
    return {"requests": c.writeback, "attributed": sum(c.by_dirtier.values()),
            "by_dirtier": dict(sorted(c.by_dirtier.items(), key=lambda kv: -kv[1])),
            "not_attributable": dict(sorted(c.not_attributable.items(),
                                            key=lambda kv: -kv[1]))}


def writeback_line(wb: dict | None) -> str | None:
    """"N writeback requests, M attributed (dd 97 %, ...), K not attributable: journal K"
    (None when the source had no writeback figures)."""
    if not wb or not wb["requests"]:
        return None
    n, done = wb["requests"], wb["attributed"]
    shares = ", ".join(f"{name} {100 * k / done:.0f} %"
                       for name, k in list(wb["by_dirtier"].items())[:5])
    more = len(wb["by_dirtier"]) - 5
    line = f"{n} kworker/jbd2 write requests, {done} attributed to their dirtier" + \
        (f" ({shares}{f', {more} more' if more > 0 else ''})" if done else "")
    rest = sum(wb["not_attributable"].values())
    if rest:
        line += f", {rest} not attributable: " + ", ".join(
            f"{why} {k}" for why, k in wb["not_attributable"].items())
    return line
