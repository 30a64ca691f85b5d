"""Applying an Applied Test Workload (ATW) with fio (rwsw-digest §8): the fio job sections
of an ATW point, and what fio's per-stream results say about how well they reproduced it.

One job section per IO stream, all in one `flow_id`: fio keeps the sections' I/O counts in
proportion to their `flow` weights, weight = share x 10 (0.1 % resolution; fio 3.33 caps a
weight at 1000). A section ahead of its share sleeps `flow_sleep_us` before trying again:
with 0 fio spins and the whole point runs 20-50x slower (digest §8: 2.0k-7.8k IOs against
51.5k-54.9k at 10 µs). RND streams are randread/randwrite over the whole ActiveRange; SEQ
streams read/write each in its own region (ActiveRange / number of SEQ streams), so several
SEQ streams do not all start at offset 0 (norandommap and randrepeat=0 are global options).

The ATW's outstanding I/Os (OIO = TC x QD) are spread over the stream sections by
`oio_split` (spec [rwsw_fio], a choice): "share" gives section i one thread at iodepth
OIO x share_i apportioned by largest remainder, at least 1 (`share_depths`), so the nominal
OIO is exactly the ATW's (max(OIO, streams): a stream needs one I/O in flight) and each
stream's depth matches its part of the I/O, which `flow` then holds;
"every-stream" gives every section TC threads at QD (nominal OIO = streams x TC x QD, the
slower streams' threads waiting on `flow`). Measured on this machine (3 streams 60/30/10,
TC2/QD8, RAM and virtio loop devices, 2 s): both hold the shares to 0.1 point; the achieved
OIO (Little's law, IOPS x mean latency, recorded per point) was 3-6 with either, the loop
devices being CPU-bound; flow_sleep 1 and 10 µs gave 54k-64k IOPS, 100 µs 36k, 0 µs 2.8k.
"""

from __future__ import annotations

from pts.tools.fio import Job, JobSet
from pts.tools.fio_round import PointResult
from pts.workload.atw import Stream, Workload

MAX_WEIGHT = 1000                 # fio 3.33: flow=1001 is out of range (digest §8)
SPLITS = ("share", "every-stream")


class ApplyError(ValueError):
    """The ATW cannot be applied to this device as asked (e.g. a SEQ region smaller than
    its transfer size); the message names the fix."""


def weight(share_pct: float) -> int:
    """fio `flow` weight of a stream: its share x 10, at least 1."""
    return min(MAX_WEIGHT, max(1, round(share_pct * 10)))


def depths(w: Workload, split: str) -> list[tuple[int, int]]:
    """(numjobs, iodepth) of each stream's section."""
    if split == "every-stream":
        return [(w.thread_count, w.queue_depth) for _ in w.streams]
    if split == "share":
        return [(1, d) for d in share_depths(w.oio, [s.share_pct for s in w.streams])]
    raise ApplyError(f"oio_split {split!r}: one of {', '.join(SPLITS)}")


def share_depths(oio: int, shares: list[float]) -> list[int]:
    """Each stream's iodepth under the "share" split: its quota OIO x share apportioned by
    largest remainder, at least 1, so the depths sum to exactly max(OIO, streams): the OIO
    itself, unless there are more streams than outstanding I/Os (each stream needs one).
    Rounding each quota alone drifts (OIO 16 at 60/30/10 gave 10 + 5 + 2 = 17)."""
    total = sum(shares) or 1.0
    quota = [oio * s / total for s in shares]
    depth = [max(1, int(q)) for q in quota]
    # fill up (or, when the minimum of 1 overshot, give back) one at a time, the stream
    # furthest below (above) its quota first; ties (to 1e-9: 16 x 0.6 - 9 < 16 x 0.1 - 1 in
    # floating point): the stream listed first, the larger share
    while sum(depth) < oio:
        k = max(range(len(depth)), key=lambda i: (round(quota[i] - depth[i], 9), -i))
        depth[k] += 1
    while sum(depth) > max(oio, len(depth)):
        k = max((i for i in range(len(depth)) if depth[i] > 1),
                key=lambda i: (round(depth[i] - quota[i], 9), -i))
        depth[k] -= 1
    return depth


def nominal_oio(js: JobSet) -> int:
    """The outstanding I/Os a point's sections ask fio for: sum of threads x iodepth."""
    return sum(j.numjobs * j.iodepth for j in js.sections)


def iolog_section(point: str, log: str, runtime: int, oio: int,
                  streams: tuple[Stream, ...]) -> JobSet:
    """A replay step as ONE job section issuing the iolog `log` (pts.testdefs.rwsw.replay_log) in
    order at iodepth = the step's OIO (`replay_no_stall`: no timestamps; `runtime` stops it
    before the log ends; `read_iolog_chunked`: fio reads it as it goes, about a second
    ahead, as the log is streamed: pts.testdefs.rwsw.replay_feed); bs: the largest transfer, fio's
    buffers."""
    return JobSet(point, (Job(f"{point}.s0", "randrw", max(s.key.size for s in streams), oio,
                              runtime=runtime,
                              extra=(("read_iolog", log), ("read_iolog_chunked", "1"),
                                     ("replay_no_stall", "1"))),))


def _rw(stream: Stream) -> str:
    rnd = stream.key.access == "RND"
    return {("R", True): "randread", ("W", True): "randwrite", ("R", False): "read",
            ("W", False): "write"}[(stream.key.direction, rnd)]


# A SEQ stream's region starts on a MiB boundary (4 KiB when the ActiveRange is too small for
# that): an O_DIRECT offset must be a multiple of the logical sector, and 64 MiB / 6 regions
# is not (fio: EINVAL on the first I/O).
REGION_ALIGN, REGION_ALIGN_MIN = 1 << 20, 4096


def seq_region(ar_bytes: int, n_seq: int) -> int:
    """The size of each SEQ stream's region of the ActiveRange, aligned."""
    share = ar_bytes // max(1, n_seq)
    align = REGION_ALIGN if share >= REGION_ALIGN else REGION_ALIGN_MIN
    return share // align * align


def sections(w: Workload, point: str, *, flow_id: int, runtime: int, ar_bytes: int,
             split: str, flow_sleep_us: int, streams: tuple[Stream, ...] | None = None,
             oio: tuple[int, int] | None = None, flow: bool = True) -> JobSet:
    """The job sections of one point applying `streams` (default: all of the ATW's) at the
    ATW's OIO (or `oio` = (TC, QD)): named POINT.sK. One stream alone gets no flow options
    and the whole OIO (TC threads at QD: Individual Streams-WSAT). `flow` False: no flow
    options either, each section keeps its iodepth full and the shares follow from the
    depths and the streams' latencies (Little's law per stream; the replay's "oio" hold,
    pts.testdefs.rwsw.replay), where `flow` holds the shares and lets the OIO fall."""
    streams = w.streams if streams is None else streams
    tc, qd = oio or (w.thread_count, w.queue_depth)
    one = len(streams) == 1
    shape = [(tc, qd)] if one else depths(
        Workload(w.name, streams, tc, qd), split)
    seq = [s for s in streams if s.key.access == "SEQ"]
    region = seq_region(ar_bytes, len(seq))
    out = []
    for k, (stream, (numjobs, iodepth)) in enumerate(zip(streams, shape, strict=True)):
        offset, size, step = 0, ar_bytes, 0
        if stream.key.access == "SEQ":
            # its own region, and each of its threads its own slice, so it stays sequential
            per_thread = region // numjobs // stream.key.size * stream.key.size
            if per_thread < stream.key.size:
                raise ApplyError(
                    f"ATW {w.name}: the region of {stream.key.label} ({region:,} bytes for "
                    f"{numjobs} thread(s)) is smaller than its transfer size; use a larger "
                    "device or ActiveRange")
            offset, size = seq.index(stream) * region, per_thread
            step = per_thread if numjobs > 1 else 0
        flowed = {} if one or not flow else {
            "flow_id": flow_id, "flow": weight(stream.share_pct), "flow_sleep_us": flow_sleep_us}
        out.append(Job(f"{point}.s{k}", _rw(stream), stream.key.size, iodepth, numjobs,
                       offset=offset, size=size, runtime=runtime, offset_increment=step,
                       **flowed))
    return JobSet(point, tuple(out))


def achieved(streams: tuple[Stream, ...], result: PointResult, tolerance_pct: float,
             oio: int, nominal: int | None = None) -> dict:
    """A point's fields on how it reproduced the ATW, from fio's per-section results: each
    stream's target and achieved share of I/Os, the largest miss in percentage points, a
    warning when a stream is outside `tolerance_pct`, the OIO target, the nominal OIO its
    sections asked fio for (`nominal_oio`) and the OIO achieved (Little's law: the sum over
    sections and directions of IOPS x mean total latency)."""
    counts = [s.read.total_ios + s.write.total_ios for _, s in result.sections]
    total = sum(counts)
    rows = []
    for stream, (name, s), n in zip(streams, result.sections, counts, strict=True):
        share = 100 * n / total if total else 0.0
        rows.append({"stream": stream.key.label, "section": name,
                     "target_pct": stream.share_pct, "achieved_pct": share, "ios": n,
                     "iops": s.iops,
                     "lat_mean_us": None if s.lat_mean_ns is None else s.lat_mean_ns / 1e3})
    return _judged(rows, tolerance_pct, oio, nominal, _little(result))


def achieved_counts(streams: tuple[Stream, ...], counts: list[int], result: PointResult,
                    tolerance_pct: float, oio: int, nominal: int | None = None,
                    failing: list[str] = (), notes: list[str] = ()) -> dict:
    """`achieved` of a point run as one job (the replay's iolog, pts.testdefs.rwsw.replay_log):
    each stream's I/Os `counts` from what fio issued (the log's completed prefix), the OIO
    from fio's one section. `failing`: more warnings that fail the shares, `notes`: more
    that do not, both said after the tolerance's (one "mix_warning")."""
    total = sum(counts)
    name = result.sections[0][0] if result.sections else result.name
    rows = [{"stream": s.key.label, "section": name, "target_pct": s.share_pct,
             "achieved_pct": 100 * n / total if total else 0.0, "ios": n}
            for s, n in zip(streams, counts, strict=True)]
    return _judged(rows, tolerance_pct, oio, nominal, _little(result), failing, notes)


def _little(result: PointResult) -> float:
    """Little's law: the sum over sections and directions of IOPS x mean total latency."""
    return sum(d.iops * d.lat_mean_ns / 1e9 for _, s in result.sections
               for d in (s.read, s.write) if d.lat_mean_ns is not None)


def _judged(rows: list[dict], tolerance_pct: float, oio: int, nominal: int | None,
            little: float, failing: list[str] = (), notes: list[str] = ()) -> dict:
    miss = max(abs(r["achieved_pct"] - r["target_pct"]) for r in rows)
    outside = [r for r in rows if abs(r["achieved_pct"] - r["target_pct"]) > tolerance_pct]
    warning = None
    if outside:
        warning = "ATW share outside the tolerance of {:g} points: {}".format(
            tolerance_pct, "; ".join(f"{r['stream']} {r['achieved_pct']:.1f} % (target "
                                     f"{r['target_pct']:g} %)" for r in outside))
    warning = "; ".join(filter(None, [warning, *failing, *notes])) or None
    return {"streams": rows, "share_miss_pts": miss,
            "shares_within_tolerance": not outside and not failing,
            "mix_warning": warning, "oio_target": oio, "oio_nominal": nominal,
            "oio_achieved": little}
