"""The host ceiling (issue 33 §1): before a test's purge, its heaviest points run on a
RAM-backed block device of the DUT's host (pts.device.ramdev), through the run's own fio
(same engine, same cpus_allowed, same fio server for an ssh:// drive); a point whose figure
reaches a share of that ceiling, or whose mean latency is within a margin of the host's
latency floor, is marked `host_bound` (its point record, WSAT's result).

Which points (`heaviest`): at the test's smallest and at its largest block size, the point of
highest OIO (TC x QD; among equals the tracking point, else the first in the spec's order),
and the QD 1 4 KiB point where the test has one (the latency floor). Each runs for
min(point seconds, MAX_SECONDS): a RAM device's figure settles within a second (its IOPS
at 1 s and 5 s agree within a few %, the noise of a loaded host), and the 5 s cap keeps the
spec's 60 s points from making the ceiling a minute per job. All jobs of a test run in ONE
fio process, stonewalled (one fio start, ~0.3 s, per test); a job shape already measured
in this run is not run again (several tests share shapes: Throughput's block sizes, DIRTH's
TC32/QD32). The RAM device is made once per run, at the first test, and removed when the
process ends (atexit); a killed run's leftovers are removed by the next run's
`ramdev.clean_leftovers`.

The judgement (`judge`) is pure: a point of block size b is judged against
    IOPS ceiling(b) = min(IOPS at the smallest measured size, MB/s at the largest x 1e6 / b)
The host's cost of one I/O grows with its size, so its IOPS at b is at most its IOPS at the
smallest size; its MB/s grows with the size, so its MB/s at b is at most its MB/s at the
largest: the min is an upper bound of what the host can drive at b, and a point reaching
`share` of it is host-bound for certain (a point between the sizes may be host-bound below
it; the mark errs towards saying nothing). The bound that is lower names the mark: "IOPS"
(per-I/O cost) or "MB/s" (per-byte cost). Latency: a point at OIO 1 whose mean latency is
at most (1 + margin) x the QD 1 job's mean latency on the RAM device.
"""

from __future__ import annotations

import atexit
import dataclasses
from dataclasses import dataclass

from pts.config.spec import format_size
from pts.device import ramdev
from pts.results import records
from pts.tools.fio import FioError, Job, JobSet
from pts.tools.fio_round import run_round, sections_of
from pts.tools.hosts import host_for

MAX_SECONDS = 5         # a ceiling job's runtime cap (docstring: why)
FLOOR_BLOCK = 4096      # the latency floor's block size (issue 33 §1: "QD 1 4 KiB")
NOT_MEASURED = "host ceiling not measured: "


@dataclass
class _State:
    """One run's RAM device and the job shapes measured on it."""
    run: object
    device: ramdev.RamDevice | None = None
    error: str | None = None            # why no device could be made
    shapes: dict = dataclasses.field(default_factory=dict)   # shape key -> point dict
    tests: dict = dataclasses.field(default_factory=dict)    # test -> HostCeiling
    warned: bool = False


_STATES: dict[int, _State] = {}


def _state(run) -> _State:
    found = _STATES.get(id(run))
    if found is None or found.run is not run:
        found = _STATES[id(run)] = _State(run)
    return found


@dataclass(frozen=True)
class Shape:
    """One ceiling job: the point's label, block size, OIO and its fio job (Job/JobSet)."""
    label: str
    block_size: int
    oio: int
    job: Job | JobSet


def _oio(decl, p) -> int:
    return (p.thread_count or decl.thread_count) * (p.queue_depth or decl.queue_depth)


def heaviest(decl) -> list[Shape]:
    """The ceiling jobs of a round-based test (module docstring: which and why)."""
    measured = [p for p in decl.points if not p.na_reason]
    if not measured:
        return []
    tracked = {p.index for p in decl.tracking.values()}

    def best(candidates):
        top = max(_oio(decl, p) for p in candidates)
        top_points = [p for p in candidates if _oio(decl, p) == top]
        return next((p for p in top_points if p.index in tracked), top_points[0])
    sizes = sorted({p.block_size for p in measured})
    chosen = [best([p for p in measured if p.block_size == bs]) for bs in (sizes[0], sizes[-1])]
    floor = [p for p in measured if p.block_size == FLOOR_BLOCK and _oio(decl, p) == 1]
    if floor:
        chosen.append(best(floor))
    unique = list({p.index: p for p in chosen}.values())
    return [Shape(p.label, p.block_size, _oio(decl, p), decl.job(p)) for p in unique]


def seconds_for(point_seconds: int) -> int:
    return max(1, min(point_seconds, MAX_SECONDS))


def fitted(job: Job | JobSet, size: int, seconds: int, name: str) -> Job | JobSet:
    """The point's job on the RAM device: its shape (rw, mix, block size, TC, QD, engine
    options) for `seconds`, time based, over the device (a SEQ job's threads each their own
    slice, as on the DUT); no logs, no schedule (fio_round adds its own)."""
    if isinstance(job, JobSet):
        return JobSet(name, tuple(fitted(s, size, seconds, f"{name}s{n}")
                                  for n, s in enumerate(job.sections)))
    per_thread = size // job.numjobs // job.block_size * job.block_size
    return dataclasses.replace(
        job, name=name, runtime=seconds, time_based=True, io_size=None, loops=1, logs=None,
        timing_log=None, startdelay_ms=None, new_group=False,
        stonewall=False, offset=0, size=per_thread if job.offset_increment else None,
        offset_increment=per_thread if job.offset_increment else 0)


def _key(job: Job | JobSet):
    return fitted(job, 1 << 30, 1, "x")     # the shape, whatever its name and DUT range


def engine_text(settings) -> str:
    return settings.ioengine + (" (hipri: polled completion)" if settings.io_poll else "")


def plan_lines(settings, decl) -> list[str]:
    """--dry-run: what the ceiling would run before a round-based test's purge."""
    return shapes_plan_lines(settings, heaviest(decl), decl.point_seconds)


def shapes_plan_lines(settings, shapes: list[Shape], point_seconds: int | None = None
                      ) -> list[str]:
    """--dry-run: what the ceiling would run (`shapes`) before the test's purge."""
    if settings.host_ceiling == "off":
        return ["host ceiling: off (--host-ceiling off): not measured; declared on the report"]
    secs = seconds_for(point_seconds or settings.point_seconds)
    where = "on the DUT's host" if settings.device and settings.device.startswith("ssh://") \
        else "on this host"
    return [f"host ceiling: before the purge, {len(shapes)} job(s) of {secs} s in one fio "
            f"process (stonewalled; shapes already measured in this run are not run again) on "
            f"a RAM-backed device {where} of up to {ramdev.SIZE >> 20} MiB (null_blk if "
            f"loaded, else a loop device over tmpfs; at most half the free memory; needs "
            f"root), engine {engine_text(settings)}:"] + [
        f"    [{s.label}] OIO {s.oio}, {format_size(s.block_size)}" for s in shapes]


def for_test(run, decl, going_on: bool = False) -> records.HostCeiling | None:
    """The ceiling of a round-based test, measured now (or the one this run recorded);
    `going_on`: the test goes on after --resume with its next round."""
    return measure(run, decl.test, heaviest(decl), decl.point_seconds, going_on)


# A test resumed between its rounds is not paused for a ceiling it did not record before
# the stop (a run of an older version): the drive would idle between two rounds.
RESUMED = "the test went on after --resume between its rounds without one recorded"


def measure(run, test: str, shapes: list[Shape], point_seconds: int | None = None,
            going_on: bool = False) -> records.HostCeiling | None:
    """Run `shapes` on the RAM device (each shape once per run) and record the test's
    host_ceiling; a test that has one already in this run (an earlier phase, a resumed run)
    keeps it. None when not measured (the record says why, a deviation too)."""
    state, settings = _state(run), run.settings
    known = state.tests.get(test) or _resumed(run, test)
    if known is not None:
        state.tests[test] = known
        return known if known.error is None else None
    seconds = seconds_for(point_seconds or settings.point_seconds)
    error = RESUMED if going_on else \
        _why_not(run, state) if shapes else "the test has no measured point"
    points = []
    if error is None:
        try:
            points = _points(run, state, test, shapes, seconds)
        except FioError as exc:
            error = f"fio failed on the RAM device: {exc}"
    found = records.HostCeiling(
        test=test, device=None if error else state.device.kind, engine=engine_text(settings),
        cpus=run.fio.cpus_allowed, seconds=None if error else seconds,
        points=[] if error else points, share=settings.host_bound_share,
        margin=settings.host_floor_margin, error=error)
    run.ledger.append(found)
    state.tests[test] = found
    if error:
        _declare(run, state, test, error)
        return None
    return found


def _resumed(run, test: str) -> records.HostCeiling | None:
    if run.resume is None:
        return None
    return next((r for r in reversed(run.resume.records)
                 if isinstance(r, records.HostCeiling) and r.test == test), None)


def _why_not(run, state: _State) -> str | None:
    if run.settings.host_ceiling == "off":
        return "--host-ceiling off"
    if state.device is None and state.error is None:
        host = host_for(run.device.remote)
        made = _MADE.get(host.name)
        if made is not None:          # one device per host and process: its file is named
            state.device = made       # after the process (ramdev.tag), never made twice
            return None
        try:
            ramdev.clean_leftovers(host, run.commands_log)
            state.device = _MADE[host.name] = ramdev.make(host, run.commands_log)
        except (ramdev.RamDeviceError, OSError) as exc:
            state.error = str(exc)
        else:
            atexit.register(ramdev.remove, host, state.device, run.commands_log)
            run.write(f"[pts] host ceiling: {ramdev.describe(state.device)} made for it")
    return state.error


_MADE: dict[str, ramdev.RamDevice] = {}      # host name -> the RAM device made for it


def _points(run, state: _State, test: str, shapes: list[Shape], seconds: int) -> list[dict]:
    dev = state.device
    new = [s for s in shapes if (_key(s.job), seconds) not in state.shapes]
    jobs = [fitted(s.job, dev.size, seconds, f"c{n:02d}") for n, s in enumerate(new)]
    if jobs:
        run.write(f"[pts {test}] host ceiling: {len(jobs)} job(s) of {seconds} s on "
                  f"{ramdev.describe(dev)}")
        out = run.raw_dir(test, "host-ceiling")
        results = run_round(run.fio, dev.path, jobs, out, "stonewalled",
                            timeout=len(jobs) * (seconds * 3 + 30) + 60)
        for s, job, r in zip(new, jobs, results, strict=True):
            first = sections_of(job)[0]
            state.shapes[(_key(s.job), seconds)] = {
                "rw": first.rw, "block_size": s.block_size, "numjobs": first.numjobs,
                "iodepth": first.iodepth, "iops": r.summary.iops, "mbps": r.summary.mbps,
                "lat_mean_us": None if r.summary.lat_mean_ns is None
                else r.summary.lat_mean_ns / 1e3, "raw": run.relative(r.json_path)}
    return [{"label": s.label} | state.shapes[(_key(s.job), seconds)] for s in shapes]


def _declare(run, state: _State, test: str, error: str) -> None:
    """Once per run: a deviation and a console warning."""
    if state.warned:
        return
    state.warned = True
    text = NOT_MEASURED + error + " (host-bound points cannot be marked)"
    run.write(f"[pts {test}] WARNING {text}")
    run.deviation(None, text)


def judge(fields: dict, ceiling_points: list[dict], share: float, margin: float,
          oio: int | None = None) -> dict | None:
    """A point's `host_bound` from its measured fields (iops, mbps, lat_mean_us,
    block_size) and the ceiling's points: None, or {by, figure, ceiling, limit,
    ceiling_label} (module docstring: the rule). `oio`: the point's TC x QD (the latency
    floor judges OIO-1 points only)."""
    measured = [c for c in ceiling_points if c.get("iops")]
    bs = fields.get("block_size")
    if measured and bs and fields.get("iops") is not None:
        small = min(measured, key=lambda c: (c["block_size"], -c["iops"]))
        large = max(measured, key=lambda c: (c["block_size"], c["mbps"]))
        by_iops = small["iops"]
        by_bytes = large["mbps"] * 1e6 / bs
        if by_iops <= by_bytes:
            mark = ("IOPS", fields["iops"], small["iops"], small["label"])
        else:
            mark = ("MB/s", fields.get("mbps"), large["mbps"], large["label"])
        if mark[1] is not None and mark[1] >= share * mark[2]:
            return {"by": mark[0], "figure": mark[1], "ceiling": mark[2],
                    "limit": share * mark[2], "ceiling_label": mark[3]}
    floors = [c for c in measured if c["numjobs"] * c["iodepth"] == 1 and c.get("lat_mean_us")]
    lat = fields.get("lat_mean_us")
    if floors and oio == 1 and lat is not None:
        floor = min(floors, key=lambda c: (abs(c["block_size"] - FLOOR_BLOCK), c["block_size"]))
        if lat <= (1 + margin) * floor["lat_mean_us"]:
            return {"by": "latency", "figure": lat, "ceiling": floor["lat_mean_us"],
                    "limit": (1 + margin) * floor["lat_mean_us"],
                    "ceiling_label": floor["label"]}
    return None


def mark(run, test: str, fields: dict, oio: int | None = None) -> dict | None:
    """`judge` against the ceiling this run recorded for `test` (None: none measured)."""
    state = _STATES.get(id(run))
    found = state.tests.get(test) if state is not None and state.run is run else None
    if found is None or found.error is not None:
        return None
    return judge(fields, found.points, found.share, found.margin, oio)


def point_mark(run, decl, point, summary) -> dict | None:
    """A round-based test's point (pts.procedure.runner.RoundMeasure) from its fio summary."""
    lat = summary.lat_mean_ns
    return mark(run, decl.test, {"iops": summary.iops, "mbps": summary.mbps,
                                 "lat_mean_us": None if lat is None else lat / 1e3,
                                 "block_size": point.block_size}, _oio(decl, point))
