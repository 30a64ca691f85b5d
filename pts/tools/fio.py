"""The one wrapper around fio: job files from typed job descriptions, runs, JSON parsing.

Test modules never write fio options; they describe jobs with `Job` and call `Fio.run`.
For every run the job file, the command line (argv as JSON) and fio's JSON output are kept
in the run folder, the first two written before fio starts.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from pts.tools import commands, fio_watch
from pts.tools.commands import ToolMissing
from pts.tools.fio_engine import (
    ENGINE_KEYS,
    engine_options,
    rounded_depth_error,
    rounded_depths,
)
from pts.tools.fio_errors import DeviceGone, FioError, FioFailed, FioOutputError
from pts.tools.fio_result import Direction, Summary, errors_text, summarize
from pts.tools.hosts import Remote, host_for

# Options every job gets, and why.
GLOBAL_OPTIONS = {
    "ioengine": "libaio",
    "direct": "1",                   # O_DIRECT: measure the device, not the page cache
    "group_reporting": "1",          # one result per point, however many threads
    "norandommap": "1",              # true random offsets (no once-each coverage map)
    "randrepeat": "0",               # a new random sequence every run
    "random_generator": "tausworthe64",  # PTS tool requirement: >= 48-bit generator (§6)
    "refill_buffers": "1",           # random, incompressible data on every write (§3.5)
    "thread": "0",
}

def timing_window_ms(runtime_s: int | None) -> int:
    """Window of a point's timing log: 0.1 % of the point (1 ms at 1 s points, 60 ms at the
    spec's 60 s), so that its start and end are known well within the 1 % overlap limit and
    the log stays at about 1000 lines per thread and point."""
    return max(1, (runtime_s or 1))


@dataclass(frozen=True)
class Logs:
    """Per-interval logs of a long job (fio writes them when the job ends): IOPS and total
    latency averaged over `avg_msec` windows, and completion-latency histograms over
    `hist_msec` windows. Files: PREFIX_iops.N.log, PREFIX_lat.N.log, PREFIX_clat_hist.N.log,
    one per thread N (see pts.tools.fio_logs)."""

    prefix: str                 # absolute path prefix of the log files
    avg_msec: int
    hist_msec: int | None = None


@dataclass(frozen=True)
class Job:
    """One fio job section. `runtime` set = time based (or, with time_based False, a time
    limit on `io_size` bytes per thread); else `size` x `loops` bytes."""

    name: str
    rw: str                     # read, write, randread, randwrite, randrw
    block_size: int             # bytes
    iodepth: int
    numjobs: int = 1
    rwmixread: int | None = None
    offset: int = 0
    size: int | None = None     # bytes; None = to the end of the device
    runtime: int | None = None  # seconds
    loops: int = 1
    time_based: bool = True
    io_size: int | None = None  # bytes per thread, then the thread stops
    offset_increment: int = 0   # thread k starts at offset + k x this (its own slice)
    lat_percentiles: tuple[float, ...] = ()   # total-latency percentiles (+ json+ bins)
    logs: Logs | None = None
    # Several points in one fio process (pts.tools.fio_round): each its own reporting group,
    # created `startdelay_ms` after fio starts, or after the one before it (`stonewall`);
    # `timing_log`: a mean-latency log with Unix-time stamps (windows: timing_window_ms),
    # from which the point's real I/O start and end are read.
    new_group: bool = False
    stonewall: bool = False
    startdelay_ms: int | None = None
    timing_log: str | None = None
    # CBW: mixed block sizes ("512/4:4k/96") and skew ("zoned:50/5:30/15:20/80")
    bssplit: str | None = None
    random_distribution: str | None = None
    # An ATW stream (pts.workload.applied): the sections of one `flow_id` keep their I/O
    # counts in proportion to their `flow` weights; one ahead sleeps `flow_sleep_us`
    flow_id: int | None = None
    flow: int | None = None
    flow_sleep_us: int | None = None
    extra: tuple[tuple[str, str], ...] = ()   # further fio options, written last, in order

    def options(self) -> dict[str, str]:
        opts = {"rw": self.rw, "bs": str(self.block_size), "iodepth": str(self.iodepth),
                "numjobs": str(self.numjobs), "offset": str(self.offset)}
        if self.offset_increment:
            opts["offset_increment"] = str(self.offset_increment)
        if self.rwmixread is not None:
            opts["rwmixread"] = str(self.rwmixread)
        if self.size is not None:
            opts["size"] = str(self.size)
        if self.io_size is not None:
            opts["io_size"] = str(self.io_size)
        if self.runtime is not None:
            opts.update(time_based="1" if self.time_based else "0", runtime=str(self.runtime))
        if self.loops != 1:
            opts["loops"] = str(self.loops)
        if self.lat_percentiles:
            # Total latency (slat + clat), the PTS response time; fio then also gives the
            # total-latency histogram ("lat_ns" bins) in json+ output.
            opts.update(lat_percentiles="1", percentile_list=":".join(
                f"{p:g}" for p in self.lat_percentiles))
        if self.logs is not None:
            opts.update(_log_options(self.logs))
        if self.new_group:
            opts["new_group"] = "1"
        if self.stonewall:
            opts["stonewall"] = "1"
        if self.startdelay_ms is not None:
            opts["startdelay"] = f"{self.startdelay_ms}ms"
        opts |= {k: v for k, v in (("bssplit", self.bssplit),
                                   ("random_distribution", self.random_distribution)) if v}
        if self.flow_id is not None:
            opts.update(flow_id=str(self.flow_id), flow=str(self.flow),
                        flow_sleep=str(self.flow_sleep_us))
        if self.timing_log is not None:
            opts.update(write_lat_log=self.timing_log,
                        log_avg_msec=str(timing_window_ms(self.runtime)), log_unix_epoch="1")
        opts.update(self.extra)
        return opts


@dataclass(frozen=True)
class JobSet:
    """One test point of several job sections run together (an ATW: one per IO stream);
    pts.tools.fio_round runs them as one point, each section its own reporting group."""

    name: str
    sections: tuple[Job, ...]


def _log_options(logs: Logs) -> dict[str, str]:
    opts = {"write_iops_log": logs.prefix, "write_lat_log": logs.prefix,
            "log_avg_msec": str(logs.avg_msec)}
    if logs.hist_msec:
        # fio's histogram log holds completion latency (clat) only, whatever lat_percentiles.
        opts.update(write_hist_log=logs.prefix, log_hist_msec=str(logs.hist_msec))
    return opts


def random_job(name: str, read_pct: int, block_size: int, iodepth: int, numjobs: int,
               runtime: int, size: int) -> Job:
    """RND I/O at a R/W mix over the first `size` bytes (the ActiveRange)."""
    if read_pct == 100:
        rw, mix = "randread", None
    elif read_pct == 0:
        rw, mix = "randwrite", None
    else:
        rw, mix = "randrw", read_pct
    return Job(name, rw, block_size, iodepth, numjobs, mix, size=size, runtime=runtime)


def sequential_job(name: str, read_pct: int, block_size: int, iodepth: int, numjobs: int,
                   runtime: int, size: int) -> Job:
    """SEQ reads (100/0) or writes (0/100) over the first `size` bytes (the ActiveRange);
    with several threads each streams through its own slice, so every stream stays
    sequential and no two threads touch the same blocks."""
    if read_pct not in (0, 100):
        raise ValueError(f"SEQ jobs are 100/0 or 0/100, not {read_pct}/{100 - read_pct}")
    rw = "read" if read_pct == 100 else "write"
    per_thread = size // numjobs // block_size * block_size
    if per_thread < block_size:
        raise ValueError(f"{size} bytes is too small for {numjobs} threads of "
                         f"{block_size}-byte SEQ I/O")
    return Job(name, rw, block_size, iodepth, numjobs, size=per_thread, runtime=runtime,
               offset_increment=per_thread if numjobs > 1 else 0)


def job_file(filename: str, jobs: list[Job], engine: dict[str, str] | None = None) -> str:
    """The text of a fio job file. Sections without `stonewall` run at the same time;
    `engine`: engine_options() in place of libaio (Fio.run_document puts its own in)."""
    lines = ["[global]", f"filename={filename}"]
    lines += [f"{k}={v}" for k, v in (GLOBAL_OPTIONS | (engine or {})).items()]
    for job in jobs:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", job.name):
            raise ValueError(f"bad fio job name {job.name!r}")
        lines += ["", f"[{job.name}]"] + [f"{k}={v}" for k, v in job.options().items()]
    return "\n".join(lines) + "\n"


ALL_CLIENTS = "All clients"      # fio --client's sum over every server, not a job


def parse_output(text: str) -> dict:
    """fio's JSON document; tolerates non-JSON lines fio sometimes prints before it. A
    `fio --client` document (results under "client_stats", one entry per job plus an
    "All clients" sum) gets its jobs as "jobs" too, as stand-alone fio gives them."""
    start = text.find("{")
    if start < 0:
        raise FioOutputError("fio printed no JSON document")
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise FioOutputError(f"fio output is not valid JSON: {exc}") from None
    if isinstance(doc, dict) and "jobs" not in doc and isinstance(doc.get("client_stats"), list):
        doc["jobs"] = [j for j in doc["client_stats"]
                       if isinstance(j, dict) and j.get("jobname") != ALL_CLIENTS]
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list) or not doc["jobs"]:
        raise FioOutputError("fio JSON has no 'jobs' list")
    return doc


# fio's own line for what failed ("fio: io_u error on file /dev/sdb: Input/output error:
# write offset=..., buflen=4096"), put first in the error so its one-line summary says it
FIO_ERROR = re.compile(r"^fio: (.*error.*)$", re.MULTILINE | re.IGNORECASE)

# less free space than this in the output folder: fio's JSON document cannot have fit
FULL_BYTES = 64 << 10


def full(folder: Path) -> bool:
    """The file system of `folder` has (next to) no space left for unprivileged writes."""
    try:
        s = os.statvfs(folder)
    except OSError:
        return False
    return s.f_bavail * s.f_frsize < FULL_BYTES


@dataclass(frozen=True)
class FioResult:
    json_path: Path
    summary: Summary
    seconds: float
    start: float       # Unix time fio was started / returned
    end: float


class Fio:
    """fio on this machine. Raises ToolMissing at construction if fio is not installed."""

    def __init__(self, log_file: Path | None = None, binary: str = "fio",
                 remote: Remote | None = None):
        self.binary = commands.require(binary, "fio")
        self.log_file = log_file
        # A DUT on another host: its I/O runs there under `fio --server`, driven from here
        # by `fio --client=HOST,PORT` (job files, JSON and logs stay on this host).
        self.remote = remote
        self.cpus_allowed: str | None = None    # a cpulist: every job file binds fio to it
        self.engine = engine_options()          # every job file runs with this engine
        self.version = commands.run([self.binary, "--version"], timeout=30).stdout.strip()
        # the fio whose engine runs the I/O: the DUT host's (fio --server) for an ssh://
        # drive, set by the run (pts.device.remote.fio_version)
        self.engine_version = self.version

    def argv(self, json_path: Path, job_path: Path, histograms: bool = False) -> list[str]:
        """fio's command line: stand-alone, or as the client of the DUT host's fio server
        (local options first, then --client=HOST,PORT and the job file it sends there)."""
        fmt = "json+" if histograms else "json"
        client = [f"--client={self.remote.fio_client()}"] if self.remote else []
        return [self.binary, f"--output-format={fmt}", f"--output={json_path}", *client,
                str(job_path)]

    def device_gone(self, filename: str) -> DeviceGone | None:
        """DeviceGone if the device explains a failure (a remote device is looked at on
        its host, over ssh)."""
        return DeviceGone.check(filename, host_for(self.remote))

    def run(self, filename: str, jobs: list[Job], out_dir: Path, name: str,
            timeout: float | None = None, histograms: bool = False) -> FioResult:
        """Write NAME.fio and NAME.cmd, run fio, keep NAME.json and NAME.stderr.
        `histograms`: json+ output, which adds the latency histograms ("bins")."""
        doc, json_path, start, end, excerpt = self.run_document(
            filename, job_file(filename, jobs), out_dir, name, timeout, histograms)
        summary = summarize(doc)
        if summary.errors:
            raise self.device_gone(filename) or FioFailed(
                f"fio reported I/O error(s) {errors_text(summary.errors)} in {json_path}: "
                f"{excerpt}")
        return FioResult(json_path, summary, end - start, start, end)

    def _failed(self, exc: commands.ToolFailed, json_path: Path) -> str:
        """Why fio failed. A client names its server: fio writes what the client saw (e.g.
        "client: host=H disconnected", "failed to connect to H:P") into --output, before
        any JSON, and nothing to stderr."""
        if self.remote is None:
            said = exc.result.stderr if exc.result else ""
            cause = next((m.group(1) for m in FIO_ERROR.finditer(said)), None)
            return f"{cause}; {exc}" if cause else str(exc)
        try:
            head = json_path.read_text(encoding="utf-8", errors="replace").split("\n{", 1)[0]
        except OSError:
            head = ""
        said = "; ".join(line.strip() for line in head.splitlines() if line.strip())[:400]
        return (f"fio on host {self.remote.host} (fio --client={self.remote.fio_client()}) "
                f"failed{': ' + said if said else ''}; is `fio --server` still running "
                f"there? {exc}")

    def placed(self, text: str) -> str:
        """The job file `text` as this Fio runs it: its [global] section (the first) bound
        to `cpus_allowed` and with `engine` in place of the ioengine line job_file wrote."""
        head, sep, rest = text.partition("\n\n")
        lines = [ln for ln in head.split("\n") if ln.split("=", 1)[0] not in ENGINE_KEYS]
        at = lines.index("[global]") + 1 if "[global]" in lines else 0
        # A replayed iolog (RWSW replay) adds and opens its files itself: fio 3.33 then
        # refuses registerfiles ("io_uring registered files require nr_files to be
        # identical to open_files", engine init failed), so such a job file goes without.
        engine = {k: v for k, v in self.engine.items()
                  if k != "registerfiles" or "\nread_iolog=" not in text}
        lines[at:at] = [f"cpus_allowed={self.cpus_allowed}"] * bool(self.cpus_allowed) + [
            f"{k}={v}" for k, v in engine.items()]
        return "\n".join(lines) + sep + rest

    def run_document(self, filename: str, text: str, out_dir: Path, name: str,
                     timeout: float | None, histograms: bool, cwd: Path | None = None):
        """Run the job file `text` (kept as NAME.fio, its command as NAME.cmd, written before
        fio starts): fio's JSON document, its path, start and end (Unix s) and an excerpt
        of fio's stderr for messages. `text` may be a function of the launch time in Unix
        ms, called just before fio starts (absolute start times in the job file); `cwd`:
        fio's working directory (where exec_prerun scripts and their output files live)."""
        out_dir = out_dir.absolute()
        out_dir.mkdir(parents=True, exist_ok=True)
        if callable(text):
            text = text(int(time.time() * 1000))
        job_path, json_path = out_dir / f"{name}.fio", out_dir / f"{name}.json"
        if depths := rounded_depths(text, self.engine, self.engine_version):   # before any I/O
            raise FioFailed(rounded_depth_error(depths, self.engine_version))
        job_path.write_text(self.placed(text), encoding="utf-8")
        argv = self.argv(json_path, job_path, histograms)
        (out_dir / f"{name}.cmd").write_text(json.dumps(argv) + "\n", encoding="utf-8")
        start = time.time()
        try:
            result = commands.run(argv, log_file=self.log_file, timeout=timeout, cwd=cwd,
                                  watch=fio_watch.watch)   # its jobs end with the suite
        except commands.ToolFailed as exc:
            raise self.device_gone(filename) or FioFailed(self._failed(exc, json_path)) \
                from None
        finally:
            end = time.time()
        if result.stderr:
            (out_dir / f"{name}.stderr").write_text(result.stderr, encoding="utf-8")
        try:
            doc = parse_output(json_path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, FioOutputError) as exc:
            if full(out_dir):
                raise FioOutputError(
                    f"fio could not write its output {json_path}: No space left on device "
                    f"(the file system of the reports folder is full; free space, then "
                    "--resume the run)") from None
            raise FioOutputError(f"{exc} ({json_path}); fio stderr: "
                                 f"{result.excerpt() or '(empty)'}") from None
        return doc, json_path, start, end, result.excerpt()


__all__ = ["DeviceGone", "Direction", "Fio", "FioError", "FioFailed", "FioOutputError", "Job",
           "JobSet", "Logs", "Summary", "ToolMissing", "engine_options", "job_file",
           "parse_output", "random_job", "sequential_job", "summarize"]
