"""pytest hooks and options of snia-pts (loaded by the root conftest.py).

Without --device every PTS test is skipped with a reason. With --device the options are
checked and the device resolved at start-up, so a bad value stops the session before
anything runs; writing additionally needs --destructive.
"""

from __future__ import annotations

import signal
import tempfile
from pathlib import Path

import pytest

from pts.cli.multi import session as multi
from pts.conditioning import health
from pts.config.settings import (
    PURGE_CHOICES,
    ROUND_MODES,
    Settings,
    SettingsError,
    make_settings,
)
from pts.config.spec import DEFAULT_SPEC, SpecError, available_specs, load_spec
from pts.device import safety
from pts.device.identity import BlockDevice, DeviceError, active_range_bytes, resolve
from pts.device.lock import DeviceLock
from pts.emulate import session as emulated
from pts.procedure.properties import junit_properties
from pts.procedure.runner import TestDefinitionError
from pts.results import records
from pts.results.ledger import LedgerError, read_records
from pts.results.resume import ResumeError, ResumeState
from pts.run import Run
from pts.testdefs import registry

SETTINGS = pytest.StashKey[Settings]()
DEVICE = pytest.StashKey[BlockDevice]()
REPORTS = pytest.StashKey[list]()
LOCK = pytest.StashKey[DeviceLock]()
RESUME = pytest.StashKey[ResumeState]()
SIGNATURES = pytest.StashKey[safety.Signatures]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("snia-pts", "SNIA PTS compliance tests (pytest pts/ --device DEV)")
    g.addoption("--device", metavar="PATH", action="append",
                help="(may be given several times: the devices run in parallel, one run "
                     "each, then compared; README 'Several devices in one session') "
                     "block device under test (whole device, e.g. /dev/nvme0n1; symlinks such "
                     "as /dev/disk/by-id/... are resolved), or 'emulated[:SIZE[:PROFILE]]' "
                     f"for an emulated SSD made for this session (default "
                     f"{emulated.DEFAULT_SIZE}, profile {emulated.DEFAULT_PROFILE}; a model, so "
                     "never a compliant run). Without --device every PTS test is skipped.")
    multi.add_options(g)
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
    g.addoption("--resume", metavar="RUN_DIR",
                help="continue the interrupted run in RUN_DIR after its last completed round "
                     "(the round in flight is redone), with that run's settings; the device "
                     "must be the same one (model, serial, firmware, capacity, sector size; "
                     "NVMe: data units written moved only by the round in flight). "
                     "Declared on the report.")
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
    g.addoption("--round-mode", choices=ROUND_MODES, default="pipelined",
                help="how the points of a round run: pipelined = one fio process per round, "
                     "points back to back (10 ms apart, each at an exact start time), each its "
                     "own fio job and result, "
                     "with its real start/end from fio's logs; a point whose I/O overlaps "
                     "the previous one by more than 1 %% of a point makes the test fall back "
                     "to stonewalled (recorded, on the report); stonewalled = one process, "
                     "each point starting when the one before has finished; per-point = one "
                     "fio process per point (~0.3 s idle device time each). Default "
                     "%(default)s.")
    g.addoption("--time-scale", metavar="F", type=float, default=1.0,
                help="0 < F <= 1: multiply the spec's fixed long durations (DIRTH/CBW "
                     "pre-writes and histogram captures, HIR preconditioning segments, XSR "
                     "access groups; each at least 1 s) by F, to screen a drive quickly. "
                     "Anything but 1 is a declared deviation. Default %(default)s.")
    g.addoption("--fob-sweep", action="store_true",
                help="IOPS: run one informative round of the IOPS matrix right after the "
                     "purge, before WIPC (the fresh-out-of-box figures; reported as "
                     "informative, not part of the test)")


def _settings(config: pytest.Config) -> Settings:
    opt = config.option
    try:
        spec = load_spec(opt.spec)
        return make_settings(spec, device=opt.device, destructive=opt.destructive,
                             point_seconds=opt.point_seconds, max_rounds=opt.max_rounds,
                             purge=opt.purge, reports_dir=opt.reports_dir,
                             iops_block_sizes=opt.iops_block_sizes,
                             iops_rw_mixes=opt.iops_rw_mixes,
                             wsat_fills=opt.wsat_fills, wsat_hours=opt.wsat_hours,
                             fob_sweep=opt.fob_sweep, round_mode=opt.round_mode,
                             time_scale=opt.time_scale)
    except (SpecError, SettingsError) as exc:
        raise pytest.UsageError(str(exc)) from None


def _resume_options(config: pytest.Config) -> None:
    """--resume: the run's own settings (run.json) replace the command line's, so that the
    rounds before and after the interruption are measured the same way."""
    try:
        state = ResumeState.load(config.option.resume)
    except ResumeError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[RESUME] = state
    for key, value in state.options.items():
        if key in ("device", "destructive", "reports_dir") or not hasattr(config.option, key):
            continue
        setattr(config.option, key, ",".join(value) if isinstance(value, list) else value)
    if not config.option.device:
        config.option.device = state.run_json.get("device", {}).get("given")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "pts(name): a PTS test of pts.testdefs.registry; its "
                            "pts_outcome fixture runs it")
    config.stash[REPORTS] = []
    if multi.configure(config, _settings, _check_capacity, _check_reports_dir):
        return          # several --device: pts.cli.multi.session runs one child per device
    if config.option.resume:
        _resume_options(config)
    if not config.option.device:
        return
    config.stash[SETTINGS] = _settings(config)
    try:
        if emulated.is_emulated(config.option.device):
            dev = emulated.start_for_session(config, config.option.device)
        else:
            dev = resolve(config.option.device)
        _check_capacity(dev, config.stash[SETTINGS])
        if RESUME in config.stash:
            config.stash[RESUME].check_device(dev)
            config.stash[RESUME].check_data_units(
                dev, health.resume_counters(dev, config.stash[RESUME]))
        if config.option.destructive:
            safety.check_writable(dev, destructive=True)
            config.stash[LOCK] = DeviceLock(dev).acquire()
    except (DeviceError, emulated.EmulatedDeviceError) as exc:
        emulated.stop_for_session(config)
        raise pytest.UsageError(str(exc)) from None
    config.stash[DEVICE] = dev
    if config.option.destructive and not config.option.dry_run:   # a run that will write
        # After the device checks: a refused device leaves no trace, not even a folder.
        _check_reports_dir(config.stash[SETTINGS].reports_dir)
    if config.option.destructive:
        config.stash[SIGNATURES] = safety.signatures(dev)
    # SIGTERM takes the Ctrl-C path: fio is stopped, the interruption is recorded and a
    # partial report is rendered. A second signal (or Ctrl-C) stops at once.
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _check_reports_dir(reports: Path) -> None:
    """Results must be storable before anything is written to the device."""
    try:
        reports.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=reports, prefix=".pts-write-check-"):
            pass
    except OSError as exc:
        raise pytest.UsageError(f"--reports-dir {reports}: cannot store results there "
                                f"({exc.strerror or exc}). Choose a writable directory.") \
            from None


def _check_capacity(dev: BlockDevice, settings: Settings) -> None:
    """Every thread needs room for at least one of the largest I/Os."""
    spec = settings.spec
    largest = max([*settings.block_sizes, spec.wipc.block_size])
    safety.check_capacity(
        dev, active_range_bytes(dev, spec.common.active_range_pct),
        spec.common.thread_count * largest,
        f"{spec.common.thread_count} threads of {largest // 1024} KiB I/O")


def pytest_unconfigure(config: pytest.Config) -> None:
    if LOCK in config.stash:
        config.stash[LOCK].release()
    emulated.stop_for_session(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if multi.ACTIVE in config.stash:
        return []       # its own header lines (pts.cli.multi.session)
    if DEVICE not in config.stash:
        return [f"snia-pts: no --device given; PTS tests will be skipped "
                f"(specs: {', '.join(available_specs())})"]
    dev, s = config.stash[DEVICE], config.stash[SETTINGS]
    ident = dev.identity
    return [
        f"snia-pts device: {dev.path} ({dev.given}) model={ident.model!r} "
        f"serial={ident.serial!r} firmware={ident.firmware!r} [{ident.source}]",
        f"snia-pts device: {dev.capacity_bytes:,} bytes, logical sector {dev.logical_sector} B, "
        f"physical sector {dev.physical_sector} B, transport {dev.transport}"
        + (f", EMULATED ({dev.profile})" if dev.emulated else ""),
        f"snia-pts settings: spec {s.spec.name}, point {s.point_seconds} s, max rounds "
        f"{s.max_rounds}, purge {s.purge}, destructive {s.destructive}, reports {s.reports_dir}",
        *[f"snia-pts deviation: {d}" for d in s.deviations()],
        *(config.stash[SIGNATURES].header_lines(dev.path) if SIGNATURES in config.stash
          else []),
    ]


def _writer(config: pytest.Config):
    """Progress lines go to the terminal even while pytest captures test output."""
    capman = config.pluginmanager.getplugin("capturemanager")
    reporter = config.pluginmanager.getplugin("terminalreporter")

    def write(line: str) -> None:
        if capman is None or reporter is None:
            print(line, flush=True)
            return
        with capman.global_and_fixture_disabled():
            reporter.write_line(line)
    return write


@pytest.fixture(scope="session")
def pts_run(request: pytest.FixtureRequest):
    """The run of this session: run folder, ledger, fio. Skips without --device or
    --destructive; renders report.pdf when the session's PTS tests are done."""
    config = request.config
    if DEVICE not in config.stash:
        pytest.skip("no --device given: PTS tests need a device under test, e.g. "
                    "pytest pts/ --device /dev/nvme0n1 --destructive")
    dev = config.stash[DEVICE]
    if not config.stash[SETTINGS].destructive:
        pytest.skip(f"PTS tests purge and overwrite {dev.given}: add --destructive to allow it")
    run = Run(config.stash[SETTINGS], dev, _writer(config), config.stash.get(RESUME, None))
    try:
        yield run
    finally:
        run.close()
        config.stash[REPORTS].append(_render(run.folder))
        if _stopped(run.folder):
            config.stash[REPORTS].append(
                f"PTS run stopped before it finished; to continue after the last completed "
                f"round: pytest pts/ --resume {run.folder} --destructive")


def _stopped(folder: Path) -> bool:
    """Did a test end interrupted or in error (so that --resume makes sense)?"""
    try:
        found, _ = read_records(folder / "ledger.jsonl")
    except (OSError, LedgerError):
        return True
    return any(isinstance(r, records.TestEnd) and r.status in (records.INTERRUPTED,
                                                               records.ERROR) for r in found)


def _render(folder: Path) -> str:
    try:
        from pts.report import render

        return f"PTS report: {render(folder)}"
    except Exception as exc:  # the data is safe on disk; say how to retry
        return (f"PTS report could not be rendered ({type(exc).__name__}: {exc}); data kept "
                f"in {folder}; retry with: python -m pts report {folder}")


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    for line in config.stash.get(REPORTS, []):
        terminalreporter.write_line(line)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A PTS test with variants (Throughput: one per block size of the run's --spec) gets
    one item per variant, named by its id (test_throughput[throughput-128k])."""
    marker = metafunc.definition.get_closest_marker("pts")
    if marker is None or "pts_variant" not in metafunc.fixturenames:
        return
    variants = registry.get(marker.args[0]).variants
    if variants is None:
        return
    try:
        found = variants(load_spec(metafunc.config.option.spec))
    except SpecError:
        found = []     # without --device a bad --spec is not an error; nothing to run
    metafunc.parametrize("pts_variant", [v for _, v in found], ids=[i for i, _ in found])


@pytest.fixture
def pts_variant():
    """The variant of a PTS test item (None for a test without variants)."""
    return None


@pytest.fixture
def pts_outcome(request: pytest.FixtureRequest, pts_run, pts_variant):
    """The measurement of the item's PTS test (purge, preconditioning, rounds). Whatever
    stops it — a tool, the device, the purge, Ctrl-C — is a pytest ERROR of the item, never
    a spec FAIL: only the test function's assertion on the outcome is the spec verdict."""
    marker = request.node.get_closest_marker("pts")
    if marker is None:
        raise pytest.UsageError(f"{request.node.nodeid} takes pts_outcome but has no "
                                "@pytest.mark.pts(name)")
    outcome = registry.get(marker.args[0]).run(pts_run, pts_variant)
    # junit properties (as record_property does): the key figures for CI systems
    request.node.user_properties.extend(junit_properties(outcome, pts_run.folder))
    return outcome


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session):
    """--dry-run: print the plans instead of running anything."""
    config = session.config
    if not config.option.dry_run:
        return None
    if DEVICE not in config.stash:
        raise pytest.UsageError("--dry-run needs --device (the plan depends on the device)")
    write = _writer(config)
    dev = config.stash[DEVICE]
    write(f"DRY RUN on {dev.path}: nothing is written, nothing is run.")
    reasons = safety.in_use_reasons(dev)
    write("safety: " + ("REFUSED whatever the flags: " + "; ".join(reasons) if reasons else
                        "not in use" + ("" if config.option.destructive else
                                        "; a real run needs --destructive")))
    for item in session.items:
        write(f"--- {item.nodeid}")
        marker = item.get_closest_marker("pts")
        if marker is None:
            write("(not a PTS test: no @pytest.mark.pts; nothing to plan)")
            continue
        variant = getattr(item, "callspec", None) and item.callspec.params.get("pts_variant")
        try:
            lines = registry.get(marker.args[0]).plan(config.stash[SETTINGS], dev, variant)
        except TestDefinitionError as exc:
            lines = [f"REFUSED at run time: {exc}"]
        for line in lines:
            write(line)
    return True
