"""Characterise a capture (issue 32 §2): one pass over its batches, memory flat.

Every figure (docs/workload.md defines each):
- the cumulative workload: every IO stream (pts.workload.streams) with its I/Os and bytes and
  its share of all I/Os by count and by bytes, ranked by I/Os (ties: by stream label);
- top N (`top_n`, a reading) and their coverage: the share of all I/Os they carry;
- the IO stream map: per step, each top stream's share of the step's I/Os;
- outstanding I/Os (OIO): the distribution over the capture's *busy* time (time with >= 1
  outstanding I/O), time-weighted: the median is the count the device held for at least half
  of its busy time, p95 likewise, max the highest count held for a positive time; the mean
  over the whole window is given too (idle time counted as 0);
- in-situ IOPS and MB/s (over the window), response times (mean, max; completed I/Os);
- idle time: the window's time with no outstanding I/O;
- footprint (pts.workload.footprint): share of LBAs touched and the hottest 1 % share;
- lost events (CaptureInfo.lost_events: None when the source cannot tell), flushes, discards
  and other operations, counted apart from the streams;
- the SEQ share of the I/Os under each sequential rule (pts.workload.streams: recent-ends
  with the spec's N and previous-end, in the scope used), classified in the same pass, so a
  user sees how much the choice of rule matters for this capture.
"I/Os" are reads and writes of > 0 bytes. A window (`from_s`, `to_s`, seconds since the
capture's start) keeps the I/Os issued inside it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pts.config.spec import load_rwsw
from pts.config.spec_rwsw import RwswSpec
from pts.workload.atw import StreamKey
from pts.workload.capture.events import CaptureFile, CaptureInfo, Op
from pts.workload.capture.unspool import open_capture
from pts.workload.footprint import Footprint, FootprintCounter
from pts.workload.steps import NS, StepFigures, Timeline
from pts.workload.streams import RULES, Classifier, describe, key

BATCH = 1 << 18        # rows per batch: peak memory ~170 MiB whatever the capture's size


@dataclass(frozen=True)
class StreamShare:
    key: StreamKey
    ios: int
    bytes: int
    share_ios_pct: float
    share_bytes_pct: float


@dataclass(frozen=True)
class SeqShare:
    """What one sequential rule makes of the capture window's I/Os."""
    rule: str
    scope: str
    window: int
    seq_ios: int
    ios: int

    @property
    def label(self) -> str:
        return describe(self.rule, self.scope, self.window)

    @property
    def seq_pct(self) -> float:
        return 100 * self.seq_ios / self.ios if self.ios else 0.0


@dataclass(frozen=True)
class Characterisation:
    path: Path
    sha256: str                       # of the capture file
    info: CaptureInfo
    from_s: float                     # the window, seconds since the capture's start
    to_s: float
    step_s: float                     # settings used (readings: specs/rwsw-*.toml)
    seq_rule: str
    seq_scope: str
    seq_window: int                   # N of "recent-ends" (1 for "previous-end")
    top_n: int
    rwsw_spec: str
    events: int                       # rows in the window (every operation)
    ios: int                          # reads + writes
    bytes: int
    flushes: int
    discards: int
    other: int                        # other operations, and reads/writes of 0 bytes
    incomplete: int                   # I/Os whose completion was not seen
    out_of_order: int                 # rows issued before an earlier batch's last issue
    streams: tuple[StreamShare, ...]  # the cumulative workload, ranked
    steps: tuple[StepFigures, ...]
    stream_map: tuple[dict[StreamKey, float], ...]   # per step: top stream -> % of its I/Os
    oio_median: int                   # time-weighted over busy time
    oio_p95: int
    oio_max: int
    oio_mean: float                   # time-averaged over the window (idle = 0)
    oio_seconds: tuple[float, ...]    # seconds held at 0, 1, 2, ... outstanding I/Os
    iops: float
    mbps: float
    rt_mean_ms: float | None
    rt_max_ms: float | None
    idle_s: float
    footprint: Footprint
    processes: dict[str, int]         # I/Os per comm
    seq_by_rule: tuple[SeqShare, ...] = ()   # the rule used first, then the others
    step_from: str = ""               # "given", "the capture's", "rwsw_capture.step_seconds"

    @property
    def seq_rule_label(self) -> str:
        return describe(self.seq_rule, self.seq_scope, self.seq_window)

    @property
    def seconds(self) -> float:
        return self.to_s - self.from_s

    @property
    def idle_pct(self) -> float:
        return 100 * self.idle_s / self.seconds if self.seconds else 0.0

    @property
    def top(self) -> tuple[StreamShare, ...]:
        return self.streams[:self.top_n]

    @property
    def coverage_pct(self) -> float:
        return sum(s.share_ios_pct for s in self.top)

    @property
    def lost_events(self) -> int | None:
        return self.info.lost_events


def characterise(capture: CaptureFile | Path, *, spec: RwswSpec | None = None,
                 step_s: float | None = None, top_n: int | None = None,
                 seq_scope: str | None = None, seq_rule: str | None = None,
                 seq_window: int | None = None, from_s: float | None = None,
                 to_s: float | None = None, batch_rows: int = BATCH) -> Characterisation:
    """Reads the capture once. Settings not given come from `spec` (default: the RWSW spec,
    pts.config.spec.load_rwsw()), except the step: the capture's own (CaptureInfo.step_s,
    `python -m pts capture --step`) when it recorded one, else the spec's. Raises CaptureError
    for a bad capture file and ValueError for bad settings (an empty window, a step <= 0)."""
    cap = capture if isinstance(capture, CaptureFile) else open_capture(capture)
    spec = spec or load_rwsw()
    cs, atw = spec["rwsw_capture"], spec["rwsw_atw"]
    if step_s is not None:
        step_from = "given"
    elif cap.info.step_s:
        step_s, step_from = cap.info.step_s, "the capture's"
    else:
        step_s, step_from = cs["step_seconds"], "rwsw_capture.step_seconds"
    step_s = float(step_s)
    top_n = int(top_n if top_n is not None else atw["top_n"])
    scope = seq_scope or str(cs["seq_scope"])
    if step_s <= 0 or top_n < 1:
        raise ValueError(f"the step must be > 0 s and top N >= 1 (got {step_s:g}, {top_n})")
    start = int(round((from_s or 0.0) * NS))
    stop = None if to_s is None else int(round(to_s * NS))
    if start < 0 or (stop is not None and stop <= start):
        raise ValueError(f"the window --from {from_s} --to {to_s} is empty: --to must be "
                         "later than --from, both seconds since the capture's start")
    rule = seq_rule or str(cs["seq_rule"])
    window = int(seq_window if seq_window is not None else cs["seq_window"])
    # a recent-ends pass answers previous-end too (Classifier.seq_ios): one pass when the
    # rule is recent-ends, else a second one (the comparison), in the same scope
    classifier = Classifier(rule, scope, window)
    probe = classifier if rule == "recent-ends" else Classifier("recent-ends", scope, window)
    timeline = Timeline(start, int(round(step_s * NS)), stop)
    feet = FootprintCounter(cap.info.capacity_bytes)
    ops = np.zeros(len(Op) + 1, np.int64)
    stream_n: dict[int, int] = {}
    comm_n: dict[str, int] = {}
    columns = ("issue_ns", "complete_ns", "sector", "bytes", "op", "comm", "pid")
    for b in cap.batches(columns, batch_rows, comm_codes=True):
        issue = b["issue_ns"]
        keep = issue >= start if stop is None else (issue >= start) & (issue < stop)
        if not keep.all():
            b = {k: (v[keep] if isinstance(v, np.ndarray) else v) for k, v in b.items()}
        op = b["op"].astype(np.int64)
        ops += np.bincount(np.minimum(op, len(Op)), minlength=len(ops))
        mask, codes = classifier.classify(op, b["sector"], b["bytes"], b["pid"])
        if probe is not classifier:
            probe.classify(op, b["sector"], b["bytes"], b["pid"])
        if not mask.any():
            continue
        sector, nbytes = b["sector"][mask], b["bytes"][mask]
        comm = b["comm"][mask]
        timeline.add(b["issue_ns"][mask], b["complete_ns"][mask], nbytes, codes, comm,
                     b["comm_names"])
        feet.add(sector, nbytes)
    end = timeline.finish(int(round(cap.info.seconds * NS)))
    for (_, c), n in timeline.by_stream.items():      # the totals: the steps' counts summed
        stream_n[c] = stream_n.get(c, 0) + n
    for (_, name), n in timeline.by_comm.items():
        comm_n[name] = comm_n.get(name, 0) + n
    steps = timeline.figures()
    streams = _ranked(stream_n)
    top = {s.key for s in streams[:top_n]}
    ios = sum(s.ios for s in streams)
    hist = timeline.hist
    median, p95 = _percentile(hist, 50), _percentile(hist, 95)
    held = np.flatnonzero(hist > 0)
    a = timeline.a
    rt_n = int(a["rt_n"].sum())
    seconds = (end - start) / NS
    ios_stream = ops[Op.READ] + ops[Op.WRITE]
    return Characterisation(
        path=cap.path, sha256=_sha256(cap.path), info=cap.info, from_s=start / NS,
        to_s=end / NS, step_s=step_s, seq_rule=classifier.rule, seq_scope=scope,
        seq_window=classifier.window, top_n=top_n,
        rwsw_spec=spec.name, events=int(ops.sum()), ios=ios,
        bytes=sum(s.bytes for s in streams), flushes=int(ops[Op.FLUSH]),
        discards=int(ops[Op.DISCARD]), other=int(ops[Op.OTHER] + ops[-1] + ios_stream - ios),
        incomplete=timeline.incomplete, out_of_order=timeline.out_of_order, streams=streams,
        steps=steps, stream_map=tuple(_shares(st, top) for st in steps),
        oio_median=median, oio_p95=p95, oio_max=int(held[-1]) if len(held) else 0,
        oio_mean=float(np.dot(np.arange(len(hist)), hist) / (end - start)) if end > start
        else 0.0,
        oio_seconds=tuple(float(x) / NS for x in hist),
        iops=ios / seconds if seconds else 0.0,
        mbps=sum(s.bytes for s in streams) / seconds / 1e6 if seconds else 0.0,
        rt_mean_ms=float(a["rt_sum"].sum()) / rt_n / 1e6 if rt_n else None,
        rt_max_ms=float(a["rt_max"].max()) / 1e6 if rt_n else None,
        idle_s=max(0.0, seconds - float(a["busy_ns"].sum()) / NS),
        footprint=feet.result(),
        processes=dict(sorted(comm_n.items(), key=lambda kv: (-kv[1], kv[0]))),
        seq_by_rule=_seq_by_rule(classifier, probe, window, ios), step_from=step_from)


def _seq_by_rule(used: Classifier, probe: Classifier, window: int,
                 ios: int) -> tuple[SeqShare, ...]:
    """The SEQ share under every rule in the scope used, the rule used first (the other
    scope is a second pass over every I/O: `seq_scope` compares it)."""
    seen = used.seq_ios | probe.seq_ios
    rules = [used.rule] + [r for r in RULES if r != used.rule]
    return tuple(SeqShare(r, used.scope, w, seen[describe(r, used.scope, w)], ios)
                 for r in rules for w in [1 if r == "previous-end" else window])


def _ranked(counts: dict[int, int]) -> tuple[StreamShare, ...]:
    total = sum(counts.values())
    sizes = {c: key(c).size * n for c, n in counts.items()}
    total_bytes = sum(sizes.values())
    rows = sorted(counts.items(), key=lambda cn: (-cn[1], key(cn[0]).label))
    return tuple(StreamShare(key(c), n, sizes[c], 100 * n / total,
                             100 * sizes[c] / total_bytes) for c, n in rows)


def _percentile(hist: np.ndarray, pct: float) -> int:
    """The smallest outstanding count held, with all lower ones, for >= pct % of the busy
    time (hist[k]: time at k outstanding; k = 0 is idle and left out)."""
    busy = hist[1:]
    if not busy.sum():
        return 0
    cum = np.cumsum(busy) / busy.sum()
    return int(np.searchsorted(cum, pct / 100 - 1e-12) + 1)


def _shares(step: StepFigures, top: set[StreamKey]) -> dict[StreamKey, float]:
    return {k: 100 * n / step.ios for k, n in step.streams.items() if k in top} \
        if step.ios else {}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()
