"""The snia-pts command-line options and the Settings made from them (pts.session.plugin)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from pts.cli import remote
from pts.config.report_info import KEYS as REPORT_KEYS
from pts.config.report_info import ReportInfoError, make_report_info
from pts.config.settings import (
    HOST_BOUND_SHARE,
    HOST_CEILING_CHOICES,
    HOST_FLOOR_MARGIN,
    IO_ENGINES,
    PURGE_CHOICES,
    ROUND_MODES,
    Settings,
    SettingsError,
    make_settings,
)
from pts.config.spec import DEFAULT_SPEC, SpecError, load_spec
from pts.emulate import session as emulated
from pts.results import records
from pts.results.resume import ResumeError, ResumeState
from pts.session import parent as multi
from pts.workload import atw


def add(parser: pytest.Parser) -> None:
    """The snia-pts command-line options (their help is the reference; README lists them)."""
    g = parser.getgroup("snia-pts", "SNIA PTS compliance tests (pytest pts/ --device DEV)")
    g.addoption("--device", metavar="PATH", action="append",
                help="(may be given several times: the devices run in parallel, one run "
                     "each, then compared; README 'Several devices in one session') "
                     "block device under test (whole device, e.g. /dev/nvme0n1; symlinks such "
                     "as /dev/disk/by-id/... are resolved), or 'emulated[:SIZE[:PROFILE]]' "
                     "or 'ssh://[USER@]HOST[:SSHPORT]/dev/NAME' for a drive on another host "
                     "(fio client/server; README 'Drives on other hosts'), "
                     f"for an emulated SSD made for this session (default "
                     f"{emulated.DEFAULT_SIZE}, profile {emulated.DEFAULT_PROFILE}; a model, so "
                     "never a compliant run). Without --device every PTS test is skipped.")
    multi.add_options(g)
    remote.add_options(g)
    g.addoption("--destructive", action="store_true",
                help="allow the tests to purge and overwrite ALL data on --device. Devices "
                     "that are mounted, hold mounted partitions, have holders (LVM/MD/"
                     "dm-crypt), are active swap or back the root filesystem are refused "
                     "whatever the flags.")
    g.addoption("--spec", metavar="NAME", default=DEFAULT_SPEC,
                help="PTS version/segment to run: a name from specs/ (e.g. "
                     "pts-2.0.2-enterprise, pts-2.0.2-client, pts-e-1.1) or a .toml path "
                     "(default %(default)s)")
    g.addoption("--point-seconds", metavar="N", type=int, default=None,
                help="duration of every test point in seconds (default: the spec's, 60). "
                     "Anything else is declared as a deviation.")
    g.addoption("--max-rounds", metavar="N", type=int, default=None,
                help="stop after N rounds if not steady (default: the spec's, 25; at least "
                     "the 5-round window). Fewer than the spec is declared as a deviation.")
    g.addoption("--purge", choices=PURGE_CHOICES, default="auto",
                help="purge before each test (PTS 2.0.2 §3.2): auto = the best spec method "
                     "the device supports (NVMe: Sanitize by SANICAP, else Format with "
                     "SES=1/2; SATA: Sanitize, else Security Erase; SCSI: Sanitize, else "
                     "Format Unit; refuses if none); sanitize / format (NVMe, SCSI) / "
                     "security-erase (ATA) = only that method (fails closed if unsupported); "
                     "trim = blkdiscard of the whole device "
                     "(deviation); none = no purge (deviation). Default %(default)s.")
    g.addoption("--reports-dir", metavar="DIR", default="reports",
                help="where run folders go: DIR/<model>_<serial>/<run-id>/ "
                     "(default %(default)s)")
    g.addoption("--no-report", action="store_true", default=False,
                help="store the run (run.json, ledger, fio's output) but do not render its "
                     "report at the end: the report is a function of those files alone, so "
                     "it can be made later, on any host, with python -m pts report RUN_DIR "
                     "(a drive's host with little CPU to spare, e.g. an emulated or "
                     "embedded one, where rendering takes longer than the run)")
    g.addoption("--resume", metavar="RUN_DIR", action="append",
                help="continue the interrupted run in RUN_DIR after its last completed round "
                     "(the round in flight is redone), with that run's settings, on its own "
                     "device (local or ssh://), which must be the same one (model, serial, "
                     "firmware, capacity, sector size; NVMe: data units written moved only "
                     "by the round in flight). Declared on the report. May be given several "
                     "times (no --device then): the runs go on in parallel, one child each, "
                     "as a several-device session")
    g.addoption("--serve", metavar="[HOST:]PORT", default=None,
                help="serve the lab dashboard (python -m pts serve) over --reports-dir "
                     "beside this run, from a thread of this pytest process, until it ends: "
                     "the run's state, round, tracking values and health live, finished "
                     "reports as HTML, /metrics for Prometheus. Binds 127.0.0.1 unless "
                     "HOST is given; PORT 0: a free one, named in the header's dashboard "
                     "line; a port in use stops the session before any device is touched. "
                     "Read-only (not with --dry-run). A HOST other than "
                     "127.0.0.0/8, ::1 or localhost needs --serve-auth-file")
    g.addoption("--serve-auth-file", metavar="FILE", default=None,
                help="with --serve: HTTP basic auth for every page, download and /metrics "
                     "of the dashboard (python -m pts serve --auth-file): FILE holds "
                     "user:password lines, readable by its owner only (chmod 600, else the "
                     "session stops before any device is touched). Required when --serve's "
                     "HOST is beyond loopback; enforced on loopback too when given. Refused "
                     "requests are written to the terminal (client, path). "
                     "docs/dashboard-auth.md")
    g.addoption("--dry-run", action="store_true",
                help="print each selected PTS test's plan (purge method and command, WIPC "
                     "bytes, rounds x points, fio job files, write cache, estimated duration) "
                     "and exit without touching the device")
    g.addoption("--iops-block-sizes", metavar="LIST", default=None,
                help="run only these IOPS block sizes, e.g. 1024KiB,64KiB,4KiB "
                     "(a declared deviation; the tracking variables' cells must stay)")
    g.addoption("--iops-rw-mixes", metavar="LIST", default=None,
                help="run only these IOPS R/W mixes, e.g. 100/0,65/35,0/100 (deviation)")
    g.addoption("--wsat-fills", metavar="F", type=float, default=None,
                help="WSAT: stop after F x user capacity written (default: the spec's, 4), "
                     "or at --wsat-hours, whichever comes first. Another value is a "
                     "declared deviation.")
    g.addoption("--wsat-hours", metavar="H", type=float, default=None,
                help="WSAT: time limit in hours (default: the spec's, 24). Another value is "
                     "a declared deviation.")
    g.addoption("--round-mode", choices=ROUND_MODES, default=None,
                help="how the points of a round run: pipelined = one fio process per "
                     "round, each point starting when every fio thread of the one before has "
                     "completed its I/O (exec_postrun/exec_prerun), each its own fio job and "
                     "result with its real start/end from fio's logs; a point whose I/O "
                     "overlaps the previous one by more than 1 %% of a point anyway is "
                     "measured again stonewalled after the round "
                     "(3 such rounds in a row: the rest of the test stonewalled; "
                     "recorded, on the report); stonewalled = one process, "
                     "each point starting when the one before has finished; per-point = one "
                     "fio process per point (~0.3 s idle device time each). Default "
                     "pipelined; stonewalled for an ssh:// device (pipelined is not "
                     "supported there). On a CPU-bound device pipelined points read a few "
                     "%% lower (the next point is set up while the one before runs; "
                     "README, Performance): compare drives in one mode.")
    g.addoption("--ioengine", choices=IO_ENGINES, default="libaio",
                help="fio's I/O engine for every job: libaio (default: the engine of the PTS "
                     "readings and of the reference tools, so figures compare) or io_uring "
                     "(with fixed buffers and registered files), for fast drives whose "
                     "libaio figure is the host's. Recorded in run.json and on every page's "
                     "header; compare says when two runs used different engines. io_uring "
                     "under a fio before 3.39 runs a non-power-of-two queue depth higher: a "
                     "selection with one (the full DIRTH/CBW grids' QD 6) is refused at the "
                     "start, --dry-run too.")
    g.addoption("--io-poll", action="store_true",
                help="with --ioengine io_uring: polled completion (fio hipri), for a drive "
                     "with poll queues (/sys/block/DEV/queue/io_poll = 1; NVMe: the nvme "
                     "module's poll_queues); refused before anything is written where the "
                     "device has none.")
    g.addoption("--host-ceiling", choices=HOST_CEILING_CHOICES, default="auto",
                help="auto (default): before each test, run its heaviest points on a "
                     "RAM-backed block device of this host (null_blk where the kernel has "
                     "it, else a loop device over tmpfs; needs root), same engine and CPUs: "
                     "the host's ceiling (IOPS, MB/s) and latency floor. Points that reach "
                     "--host-bound-share of it are marked host-bound on the report. off: not "
                     "measured (said on the report).")
    g.addoption("--host-bound-share", metavar="S", type=float, default=HOST_BOUND_SHARE,
                help="0 < S <= 1: a point whose IOPS or MB/s reaches S x the host's ceiling "
                     "is host-bound. Default %(default)s.")
    g.addoption("--host-floor-margin", metavar="M", type=float, default=HOST_FLOOR_MARGIN,
                help="M >= 0: a point whose mean latency is within (1 + M) x the host's "
                     "latency floor is host-bound. Default %(default)s.")
    g.addoption("--time-scale", metavar="F", type=float, default=1.0,
                help="0 < F <= 1: multiply the spec's fixed long durations (DIRTH/CBW "
                     "pre-writes and histogram captures, HIR write and idle lengths, XSR "
                     "access groups; each at least 1 s) by F, to screen a drive quickly; "
                     "also rwsw-replay's capture steps: each step's seconds x [rwsw_replay] "
                     "time_scale x F, at least min_step_seconds (1 s). "
                     "Anything but 1 is a declared deviation. Default %(default)s.")
    g.addoption("--dirth-thread-counts", metavar="LIST", default=None,
                help="DIRTH and CBW: run only these thread counts of the demand-variation "
                     "grid, e.g. 32,4,1 (spec: 32,16,8,6,4,2,1; 32 and 1 must stay: the "
                     "tracking point TC32/QD32 and MinIOPS TC1/QD1). A declared deviation.")
    g.addoption("--dirth-queue-depths", metavar="LIST", default=None,
                help="DIRTH and CBW: run only these queue depths, e.g. 32,4,1 (spec: "
                     "32,16,8,6,4,2,1; 32 and 1 must stay). A declared deviation.")
    g.addoption("--hir-repetitions", metavar="N", type=int, default=None,
                help="HIR: repetitions of each wait state (5 s write + idle) and of each "
                     "return-to-baseline segment (default: the spec's, 360). Another value "
                     "is a declared deviation.")
    g.addoption("--fob-sweep", action="store_true",
                help="IOPS: run one informative round of the IOPS matrix right after the "
                     "purge, before WIPC (the fresh-out-of-box figures; reported as "
                     "informative, not part of the test)")
    g.addoption("--no-purge-probe", dest="purge_probe", action="store_false", default=True,
                help="do not run the purge probe (IOPS: a few seconds of RND 4 KiB writes "
                     "right after the purge, before WIPC; WSAT: its first sample), compared "
                     "at the end with the steady state to warn when the purge did not "
                     "return the drive to FOB; an addition to the PTS flow, shown on the "
                     "report")
    g.addoption("--workload", metavar="FILE.toml", default=None,
                help="the Applied Test Workload of the four RWSW tests (rwsw-wsat, "
                     "rwsw-streams, rwsw-replay, rwsw-dirth; select them with -k rwsw; "
                     "rwsw-replay needs the file's [[step]] tables): a TOML file written by "
                     "`python -m pts workload CAPTURE -o FILE` or by hand (docs/workload.md). "
                     "Loaded and checked when the session starts: a bad file stops it, "
                     "naming file and key, before any device is touched; --resume refuses "
                     "a file whose sha256 is not the run's. Without it the RWSW tests are "
                     "skipped.")
    add_report_fields(g)


def add_report_fields(g) -> None:
    """The report fields of PTS-E 1.0 §5 a person gives (pts.config.report_info)."""
    g.addoption("--operator", metavar="NAME", default=None,
                help="Test Operator, the person running the test: shown on page 1 of the "
                     "report (PTS-E 1.0 §5 requires it; a run without one declares a "
                     "deviation). Overrides operator in --report-info.")
    g.addoption("--auditor", metavar="NAME", default=None,
                help="Auditor, where there is one (PTS-E 1.0 §5): shown on page 1. "
                     "Overrides auditor in --report-info.")
    g.addoption("--sponsor", metavar="NAME", default=None,
                help="Test Sponsor / tested by (the organisation): shown on page 1. "
                     "Overrides sponsor in --report-info.")
    g.addoption("--report-info", metavar="FILE.toml", default=None,
                help="report fields as TOML, one key = \"text\" a line; keys: "
                     + "; ".join(f"{k}: {v}" for k, v in REPORT_KEYS.items())
                     + ". --operator/--auditor/--sponsor win over the file; a value the "
                     "system reports (DMI, PCI tree, PCIe link) is shown with the given one "
                     "beside it. A bad file stops the session before any device is touched. "
                     "--resume keeps the fields of the run's start.")


def settings(config: pytest.Config) -> Settings:
    """Settings from the options; a bad value is a usage error naming it."""
    opt = config.option
    try:
        spec = load_spec(opt.spec)
        settings = make_settings(spec, device=opt.device, destructive=opt.destructive,
                             point_seconds=opt.point_seconds, max_rounds=opt.max_rounds,
                             purge=opt.purge, reports_dir=opt.reports_dir,
                             iops_block_sizes=opt.iops_block_sizes,
                             iops_rw_mixes=opt.iops_rw_mixes,
                             wsat_fills=opt.wsat_fills, wsat_hours=opt.wsat_hours,
                             fob_sweep=opt.fob_sweep,
                             round_mode=opt.round_mode or remote.default_round_mode(opt.device),
                             time_scale=opt.time_scale,
                             dirth_thread_counts=opt.dirth_thread_counts,
                             dirth_queue_depths=opt.dirth_queue_depths,
                             hir_repetitions=opt.hir_repetitions,
                             purge_probe=opt.purge_probe,
                             ioengine=opt.ioengine, io_poll=opt.io_poll,
                             host_ceiling=opt.host_ceiling,
                             host_bound_share=opt.host_bound_share,
                             host_floor_margin=opt.host_floor_margin,
                             report_info=make_report_info(
                                 operator=opt.operator, auditor=opt.auditor,
                                 sponsor=opt.sponsor, file=opt.report_info))
        return with_workload(settings, opt.workload,
                             ResumeState.load(opt.resume) if opt.resume else None)
    except (SpecError, SettingsError, ReportInfoError, atw.WorkloadError, ResumeError) as exc:
        raise pytest.UsageError(str(exc)) from None


def check_workload(path: str | None) -> None:
    """A bad --workload file is a usage error naming file and key, device or not."""
    try:
        if path:
            atw.load(Path(path))
    except atw.WorkloadError as exc:
        raise pytest.UsageError(str(exc)) from None


def with_workload(settings: Settings, path: str | None,
                  resumed: ResumeState | None = None) -> Settings:
    """`settings` with the --workload file loaded and checked (WorkloadError names the file
    and the key); its absolute path is kept in run.json, so --resume loads the same file,
    and a resumed run (`resumed`) must find it unchanged (check_resumed_workload)."""
    if not path:
        return settings
    found = Path(path).absolute()
    if resumed is not None:
        check_resumed_workload(resumed, found)
    return dataclasses.replace(settings, workload=atw.load(found), workload_path=str(found))


def recorded_workload(state: ResumeState) -> tuple[str, str] | None:
    """(sha256, test) of the ATW the stopped run's last RWSW test_start recorded, if any."""
    for r in reversed(state.records):
        if isinstance(r, records.TestStart) and (r.parameters or {}).get("atw"):
            return r.parameters["atw"].get("sha256"), r.test
    return None


def check_resumed_workload(state: ResumeState, path: Path) -> None:
    """A resumed run's rounds must apply the workload its rounds before the stop applied:
    a workload file that changed or went missing since is refused, naming both sha256 and
    the fix, before anything is written."""
    recorded = recorded_workload(state)
    if recorded is None or not recorded[0]:
        return                     # no RWSW test had started: nothing applied it yet
    sha, test = recorded
    try:
        now = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        now, what = None, f"cannot be read ({exc.strerror})"
    else:
        what = "has changed since the run started"
    if now == sha:
        return
    raise atw.WorkloadError(
        f"--resume {state.folder}: the workload file {path} {what}: the run's {test} "
        f"applied the ATW with sha256 {sha}, the file now has "
        f"{'none' if now is None else 'sha256 ' + now}. The rounds after the stop must apply "
        f"the same workload as those before: put the run's file (sha256 {sha}) back at "
        f"{path}, or start a new run without --resume. Nothing was written.")
