"""Every option of a run as one row: its flag, type, default, help, check, the sentence that
declares it as a deviation, where Settings keeps it, how run.json stores it and its section
of docs/running.md. pytest's options (pts.session.options.add), the checks and Settings
(pts.config.settings.make_settings), run.json's `options` (Settings.as_dict), the --resume
replay (pts.session.options.replayed), Settings.deviations() and the demo's mirrored report
options (pts.cli.demo) all come from ROWS; a new option is one row here (as pytest-benchmark's
one list of fields, pytest-timeout's get_params). Their order is --help's, run.json's and the
report's order of deviations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pts.config import option_rows as rows
from pts.config.report_info import KEYS as REPORT_KEYS
from pts.config.spec import DEFAULT_SPEC, Spec, format_size


@dataclass(frozen=True)
class Option:
    flag: str                          # "--point-seconds"
    help: str                          # pytest --help's text ("{name}": pts.session.options)
    metavar: str | None = None
    type: type | None = None           # int, float; None: text (or a flag's bool)
    default: Any = None                # as pytest holds it when the option is not given
    action: str = "store"              # store, store_true, store_false, append
    choices: tuple[str, ...] | None = None
    dest: str | None = None            # pytest's attribute, when not the flag's words
    setting: bool = False              # a make_settings input and Settings field of `name`
    # the value the run uses when the option is not given ("default: the spec's")
    unset: Callable[[Spec], Any] | None = None
    # (flag, value, spec, the values checked before it) -> the value the run uses
    check: Callable[[str, Any, Spec, dict], Any] | None = None
    # run.json options[name] (None where the option is not stored, `name`'s value by default)
    stored: Callable[[Any], Any] | None = None
    deviation: Callable[[Any], str | None] | None = None   # Settings -> sentence or None
    anchor: str = ""                   # docs/running.md#anchor

    @property
    def name(self) -> str:
        """pytest's attribute, Settings' field and run.json's key."""
        return self.dest or self.flag[2:].replace("-", "_")

    @property
    def kept(self) -> bool:
        """Stored in run.json's options (and set back by --resume)."""
        return self.setting or self.stored is not None

    @property
    def absent(self) -> Any:
        """pytest's value when the option is not given (a flag's: argparse's)."""
        if self.default is None and self.action in ("store_true", "store_false"):
            return self.action == "store_false"
        return self.default

    def store(self, settings) -> Any:
        return self.stored(settings) if self.stored else getattr(settings, self.name)


ROWS: tuple[Option, ...] = (
    Option("--device", setting=True, anchor="options", metavar="PATH", action="append",
           help="(may be given several times: the devices run in parallel, one run "
                "each, then compared; README 'Several devices in one session') "
                "block device under test (whole device, e.g. /dev/nvme0n1; symlinks such "
                "as /dev/disk/by-id/... are resolved), or 'emulated[:SIZE[:PROFILE]]' "
                "or 'ssh://[USER@]HOST[:SSHPORT]/dev/NAME' for a drive on another host "
                "(fio client/server; README 'Drives on other hosts'), "
                "for an emulated SSD made for this session (default "
                "{emulated_size}, profile {emulated_profile}; a model, so "
                "never a compliant run). Without --device every PTS test is skipped."),
    # the several-device session's (pts.session.parent); pts.cli.remote's follow them
    Option("--skip-refused-devices", anchor="options", action="store_true",
           help="with several --device: leave out a device the safety checks refuse "
                "(reported per device) and test the others; without it one refused "
                "device refuses the whole session, nothing written anywhere"),
    Option("--inventory", anchor="options", metavar="FILE.toml", default=None,
           help="the drives of a lab in one file instead of --device options: hosts "
                "(ssh user/port/config, fio port, their own --purge/--round-mode), "
                "their drives (path or by_id, label, --datasheet, --spec) and groups "
                "(docs/inventory.md; example docs/inventory-example.toml). Each "
                "drive is one --device of the session, with its own options"),
    Option("--render-jobs", anchor="options", metavar="N", type=int, default=None,
           help="with several drives: at most N of their reports render at once "
                "(each render takes a core and ~170 MiB for a minute or more at "
                "full size); the others wait for a slot, saying so. Default: the "
                "machine's cores. A one-drive session ignores it"),
    Option("--only", anchor="options", metavar="NAMES", default=None,
           help="with --inventory: only the drives whose label, host or group is "
                "one of these comma-separated names (e.g. --only jbof1,dut3)"),
    # ssh:// devices: run.json keeps both with the device (device.remote), not in `options`
    Option("--fio-port", anchor="options", metavar="N", type=int, default=rows.FIO_PORT,
           help="ssh:// devices: the TCP port of `fio --server` on the DUT host "
                "(fio --client=HOST,N; default %(default)s, fio's own)"),
    Option("--ssh-config", anchor="options", metavar="FILE", default=None,
           help="ssh:// devices: an OpenSSH client configuration for every ssh "
                "command (ssh -F FILE): keys, known hosts, jump hosts"),
    Option("--destructive", setting=True, anchor="the-safety-gate", action="store_true",
           help="allow the tests to purge and overwrite ALL data on --device (and, on an "
                "NVMe drive, to configure its OCP latency monitor: Set Features C5h at each "
                "test's start). Devices that are mounted, hold mounted partitions, have "
                "holders (LVM/MD/dm-crypt), are active swap or back the root filesystem are "
                "refused whatever the flags."),
    Option("--spec", stored=lambda s: s.spec.name, anchor="options", metavar="NAME",
           default=DEFAULT_SPEC,
           help="PTS version/segment to run: a name from specs/ (e.g. "
                "pts-2.0.2-enterprise, pts-2.0.2-client, pts-e-1.1) or a .toml path "
                "(default %(default)s)"),
    Option("--point-seconds", setting=True, unset=lambda spec: spec.common.point_seconds,
           check=rows.point_seconds, deviation=rows.point_seconds_deviation,
           anchor="deviations-and-the-verdict", metavar="N", type=int, default=None,
           help="duration of every test point in seconds (default: the spec's, 60). "
                "Anything else is declared as a deviation."),
    Option("--max-rounds", setting=True, unset=lambda spec: spec.steady_state.max_rounds,
           check=rows.max_rounds, deviation=rows.max_rounds_deviation,
           anchor="deviations-and-the-verdict", metavar="N", type=int, default=None,
           help="stop after N rounds if not steady (default: the spec's, 25; at least "
                "the 5-round window). Fewer than the spec is declared as a deviation."),
    Option("--purge", setting=True, check=rows.one_of(rows.PURGE_CHOICES),
           deviation=rows.purge_deviation, anchor="purge-write-cache-and-health",
           choices=rows.PURGE_CHOICES, default="auto",
           help="purge before each test (PTS 2.0.2 §3.2): auto = the best spec method "
                "the device supports (NVMe: Sanitize by SANICAP, else Format with "
                "SES=1/2; SATA: Sanitize, else Security Erase; SCSI: Sanitize, else "
                "Format Unit; refuses if none); sanitize / format (NVMe, SCSI) / "
                "security-erase (ATA) = only that method (fails closed if unsupported); "
                "trim = blkdiscard of the whole device "
                "(deviation); none = no purge (deviation). Default %(default)s."),
    Option("--reports-dir", setting=True, stored=lambda s: str(s.reports_dir), anchor="options",
           metavar="DIR", default="reports",
           help="where run folders go: DIR/<model>_<serial>/<run-id>/ "
                "(default %(default)s)"),
    Option("--no-report", anchor="options", action="store_true", default=False,
           help="store the run (run.json, ledger, fio's output) but do not render its "
                "report at the end: the report is a function of those files alone, so "
                "it can be made later, on any host, with python -m pts report RUN_DIR "
                "(a drive's host with little CPU to spare, e.g. an emulated or "
                "embedded one, where rendering takes longer than the run)"),
    Option("--resume", anchor="interrupting-and-resuming", metavar="RUN_DIR", action="append",
           help="continue the interrupted run in RUN_DIR after its last completed round "
                "(the round in flight is redone), with that run's settings, on its own "
                "device (local or ssh://), which must be the same one (model, serial, "
                "firmware, capacity, sector size; NVMe: data units written moved only "
                "by the round in flight). Declared on the report. May be given several "
                "times (no --device then): the runs go on in parallel, one child each, "
                "as a several-device session"),
    Option("--serve", anchor="options", metavar="[HOST:]PORT", default=None,
           help="serve the lab dashboard (python -m pts serve) over --reports-dir "
                "beside this run, from a thread of this pytest process, until it ends: "
                "the run's state, round, tracking values and health live, finished "
                "reports as HTML, /metrics for Prometheus. Binds 127.0.0.1 unless "
                "HOST is given; PORT 0: a free one, named in the header's dashboard "
                "line; a port in use stops the session before any device is touched. "
                "Read-only (not with --dry-run). A HOST other than "
                "127.0.0.0/8, ::1 or localhost needs --serve-auth-file"),
    Option("--serve-auth-file", anchor="options", metavar="FILE", default=None,
           help="with --serve: HTTP basic auth for every page, download and /metrics "
                "of the dashboard (python -m pts serve --auth-file): FILE holds "
                "user:password lines, readable by its owner only (chmod 600, else the "
                "session stops before any device is touched). Required when --serve's "
                "HOST is beyond loopback; enforced on loopback too when given. Refused "
                "requests are written to the terminal (client, path). "
                "docs/dashboard-auth.md"),
    Option("--dry-run", anchor="options", action="store_true",
           help="print each selected PTS test's plan (purge method and command, WIPC "
                "bytes, rounds x points, fio job files, write cache, estimated duration) "
                "and exit without touching the device"),
    Option("--iops-block-sizes", setting=True, check=rows.iops_block_sizes,
           stored=lambda s: [format_size(b) for b in s.iops_block_sizes],
           deviation=rows.iops_matrix_deviation, anchor="options", metavar="LIST", default=None,
           help="run only these IOPS block sizes, e.g. 1024KiB,64KiB,4KiB "
                "(a declared deviation; the tracking variables' cells must stay)"),
    Option("--iops-rw-mixes", setting=True, check=rows.iops_rw_mixes,
           stored=lambda s: [str(m) for m in s.iops_rw_mixes], anchor="options", metavar="LIST",
           default=None,
           help="run only these IOPS R/W mixes, e.g. 100/0,65/35,0/100 (deviation)"),
    Option("--wsat-fills", setting=True, check=rows.above_zero, stored=lambda s: s.wsat_stop[0],
           deviation=rows.wsat_fills_deviation, anchor="options", metavar="F", type=float,
           default=None,
           help="WSAT: stop after F x user capacity written (default: the spec's, 4), "
                "or at --wsat-hours, whichever comes first. Another value is a "
                "declared deviation."),
    Option("--wsat-hours", setting=True, check=rows.above_zero, stored=lambda s: s.wsat_stop[1],
           deviation=rows.wsat_hours_deviation, anchor="options", metavar="H", type=float,
           default=None,
           help="WSAT: time limit in hours (default: the spec's, 24). Another value is "
                "a declared deviation."),
    Option("--fob-sweep", setting=True, deviation=rows.fob_sweep_deviation, anchor="options",
           action="store_true",
           help="IOPS: run one informative round of the IOPS matrix right after the "
                "purge, before WIPC (the fresh-out-of-box figures; reported as "
                "informative, not part of the test)"),
    # not given: stonewalled for an ssh:// device (the session's pts.cli.remote), else this
    Option("--round-mode", setting=True, unset=lambda spec: "pipelined",
           check=rows.one_of(rows.ROUND_MODES), anchor="options",
           choices=rows.ROUND_MODES, default=None,
           help="how the points of a round run: pipelined = one fio process per "
                "round, the first point starting when all its fio threads are set up "
                "(its IO streams together), each later point when every fio thread of the "
                "one before has "
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
                "README, Performance): compare drives in one mode."),
    Option("--time-scale", setting=True, check=rows.time_scale, deviation=rows.time_scale_deviation,
           anchor="options", metavar="F", type=float, default=1.0,
           help="0 < F <= 1: multiply the spec's fixed long durations (DIRTH/CBW "
                "pre-writes and histogram captures, HIR write and idle lengths, XSR "
                "access groups; each at least 1 s) by F, to screen a drive quickly; "
                "also rwsw-replay's capture steps: each step's seconds x [rwsw_replay] "
                "time_scale x F, at least min_step_seconds (1 s). "
                "Anything but 1 is a declared deviation. Default %(default)s."),
    Option("--dirth-thread-counts", setting=True, check=rows.grid,
           stored=lambda s: rows.listed(s.dirth_thread_counts),
           deviation=rows.grid_deviation("dirth_thread_counts", "thread counts"),
           anchor="options", metavar="LIST", default=None,
           help="DIRTH and CBW: run only these thread counts of the demand-variation "
                "grid, e.g. 32,4,1 (spec: 32,16,8,6,4,2,1; 32 and 1 must stay: the "
                "tracking point TC32/QD32 and MinIOPS TC1/QD1). A declared deviation."),
    Option("--dirth-queue-depths", setting=True, check=rows.grid,
           stored=lambda s: rows.listed(s.dirth_queue_depths),
           deviation=rows.grid_deviation("dirth_queue_depths", "queue depths"),
           anchor="options", metavar="LIST", default=None,
           help="DIRTH and CBW: run only these queue depths, e.g. 32,4,1 (spec: "
                "32,16,8,6,4,2,1; 32 and 1 must stay). A declared deviation."),
    Option("--hir-repetitions", setting=True, check=rows.hir_repetitions,
           deviation=rows.hir_repetitions_deviation, anchor="options", metavar="N", type=int,
           default=None,
           help="HIR: repetitions of each wait state (5 s write + idle) and of each "
                "return-to-baseline segment (default: the spec's, 360). Another value "
                "is a declared deviation."),
    Option("--no-purge-probe", setting=True, anchor="options", dest="purge_probe",
           action="store_false", default=True,
           help="do not run the purge probe (IOPS: a few seconds of RND 4 KiB writes "
                "right after the purge, before WIPC; WSAT: its first sample), compared "
                "at the end with the steady state to warn when the purge did not "
                "return the drive to FOB; an addition to the PTS flow, shown on the "
                "report"),
    Option("--workload", stored=lambda s: s.workload_path,
           anchor="the-rwsw-tests--k-rwsw---workload-file", metavar="FILE.toml", default=None,
           help="the Applied Test Workload of the four RWSW tests (rwsw-wsat, "
                "rwsw-streams, rwsw-replay, rwsw-dirth; select them with -k rwsw; "
                "rwsw-replay needs the file's [[step]] tables): a TOML file written by "
                "`python -m pts workload CAPTURE -o FILE` or by hand (docs/workload.md). "
                "Loaded and checked when the session starts: a bad file stops it, "
                "naming file and key, before any device is touched; --resume refuses "
                "a file whose sha256 is not the run's. Without it the RWSW tests are "
                "skipped."),
    Option("--ioengine", setting=True, check=rows.one_of(rows.IO_ENGINES),
           anchor="engine-and-placement", choices=rows.IO_ENGINES, default="libaio",
           help="fio's I/O engine for every job: libaio (default: the engine of the PTS "
                "readings and of the reference tools, so figures compare) or io_uring "
                "(with fixed buffers and registered files), for fast drives whose "
                "libaio figure is the host's. Recorded in run.json and on every page's "
                "header; compare says when two runs used different engines. io_uring "
                "under a fio before 3.39 runs a non-power-of-two queue depth higher: a "
                "selection with one (the full DIRTH/CBW grids' QD 6) is refused at the "
                "start, --dry-run too."),
    Option("--io-poll", setting=True, check=rows.io_poll, anchor="engine-and-placement",
           action="store_true",
           help="with --ioengine io_uring: polled completion (fio hipri), for a drive "
                "with poll queues (/sys/block/DEV/queue/io_poll = 1; NVMe: the nvme "
                "module's poll_queues); refused before anything is written where the "
                "device has none."),
    Option("--host-ceiling", setting=True, check=rows.one_of(rows.HOST_CEILING_CHOICES),
           anchor="host-ceiling", choices=rows.HOST_CEILING_CHOICES, default="auto",
           help="auto (default): before each test, run its heaviest points on a "
                "RAM-backed block device of this host (null_blk where the kernel has "
                "it, else a loop device over tmpfs; needs root), same engine and CPUs: "
                "the host's ceiling (IOPS, MB/s) and latency floor. Points that reach "
                "--host-bound-share of it are marked host-bound on the report. off: not "
                "measured (said on the report)."),
    Option("--host-bound-share", setting=True, check=rows.host_bound_share, anchor="host-ceiling",
           metavar="S", type=float, default=rows.HOST_BOUND_SHARE,
           help="0 < S <= 1: a point whose IOPS or MB/s reaches S x the host's ceiling "
                "is host-bound. Default %(default)s."),
    Option("--host-floor-margin", setting=True, check=rows.host_floor_margin,
           anchor="host-ceiling", metavar="M", type=float, default=rows.HOST_FLOOR_MARGIN,
           help="M >= 0: a point whose mean latency is within (1 + M) x the host's "
                "latency floor is host-bound. Default %(default)s."),
    Option("--form-factor", setting=True, check=rows.form_factor, anchor="options",
           choices=rows.FORM_FACTOR_CHOICES, default=None,
           help="the drive's form factor, as the OCP Datacenter NVMe SSD Specification "
                "names them (its form factor sections): declared by the operator, as no "
                "read of the drive gives it; stored in run.json. qualify --ocp and the "
                "report's OCP page then judge the other form factors' requirement IDs NOT "
                "APPLICABLE, 'declared with --form-factor' (the drive's own need the drive "
                "in hand: NOT CHECKED). Default: not given, unknown (every form factor's IDs "
                "NOT CHECKED). A run recorded without it: python -m pts qualify RUN --ocp "
                "VERSION --form-factor FF."),
    # not a setting (run.json's options stay as they were): the sources, each named with what
    # it measures and its interval, are the ledger's power_source records (issue 51)
    Option("--power", anchor="power-sources", metavar="SOURCE[,SOURCE...]", default=None,
           check=rows.power,
           help="power sources read during the run (issue 51): energy and mean W over each "
                "point, IOPS/W and MB/s/W on the report's Power page, the index, the "
                "exports and compare. emulated (the emulated SSD's power model), "
                "ipmi:HOST[:PORT] (user=, password-file=, sensor=NAME, cipher=N), "
                "redfish:URL (user=, password-file=, insecure=yes), rapl[:ZONE], "
                "meter:COMMAND (measures=WHAT), each with interval=SECONDS; e.g. "
                "--power ipmi:10.0.0.5,user=admin,password-file=/root/bmc.pw,rapl. Each "
                "source is asked for a reading when the session starts (--dry-run too): "
                "one that does not answer stops it, named. A source failing mid-run is "
                "said once and leaves a gap; the run goes on. drive: the drive's own "
                "report (OCP C0h's current average power, else the NVMe Power Measurement; "
                "its power state's maximum said as an upper bound). Default: the drive's "
                "own where it reports it, else none, said at start (docs/running.md "
                "'Power sources')."),
    Option("--operator", anchor="options", metavar="NAME", default=None,
           help="Test Operator, the person running the test: shown on page 1 of the "
                "report (PTS-E 1.0 §5 requires it; a run without one declares a "
                "deviation). Overrides operator in --report-info."),
    Option("--auditor", anchor="options", metavar="NAME", default=None,
           help="Auditor, where there is one (PTS-E 1.0 §5): shown on page 1. "
                "Overrides auditor in --report-info."),
    Option("--sponsor", anchor="options", metavar="NAME", default=None,
           help="Test Sponsor / tested by (the organisation): shown on page 1. "
                "Overrides sponsor in --report-info."),
    Option("--report-info", anchor="options", metavar="FILE.toml", default=None,
           help="report fields as TOML, one key = \"text\" a line; keys: "
                + "; ".join(f"{k}: {v}" for k, v in REPORT_KEYS.items())
                + ". --operator/--auditor/--sponsor win over the file; a value the "
                "system reports (DMI, PCI tree, PCIe link) is shown with the given one "
                "beside it. A bad file stops the session before any device is touched. "
                "--resume keeps the fields of the run's start."),
    # read by the datasheet plugin (pts.suite.datasheet): its requirements become test items
    Option("--datasheet", anchor="options", metavar="FILE.toml", default=None,
           help="judge the run against a datasheet: each [[require]] of the file "
                "(docs/datasheet.md) is its own test item, run right after the PTS "
                "test it depends on; results on the report's Qualification page"),
)
BY_NAME = {o.name: o for o in ROWS}
BY_FLAG = {o.flag: o for o in ROWS}
# PTS-E 1.0 §5 report fields a person gives (pts.config.report_info; run.json report_info)
REPORT_FIELDS = ("--operator", "--auditor", "--sponsor", "--report-info")
